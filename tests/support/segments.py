"""Segments back into text, the tests' own way: what a person reads from the lit segments a-g,
independent of `hardware.sevenseg`'s bit table, so a display driver's wire is checked against an
oracle that is not its own encoder (tests/test_displays.py: TM1637 and serial; tests/test_display_max7219.py)."""

from __future__ import annotations

# Written as the segment letters a person sees lit; independent of hardware.sevenseg's bit table.
_SEGMENT_WORDS = {
    "": " ", "abcdef": "0", "bc": "1", "abdeg": "2", "abcdg": "3", "bcfg": "4", "acdfg": "5",
    "acdefg": "6", "abc": "7", "abcdefg": "8", "abcdfg": "9", "g": "-", "bcg": "-1",
    "abcefg": "A", "cdefg": "b", "adef": "C", "bcdeg": "d", "adefg": "E", "aefg": "F",
    "bcefg": "H", "def": "L", "ceg": "n", "cdeg": "o", "abefg": "P", "eg": "r", "defg": "t",
    "bcdef": "U", "cde": "u", "bcdfg": "y",
}


def segments_to_text(cells: list[int], colon_after: int | None) -> str:
    """Cells (bit n = segment 'abcdefg'[n]) to text; blank leading cells dropped."""
    out = ""
    for i, cell in enumerate(cells):
        word = "".join(letter for n, letter in enumerate("abcdefg") if cell >> n & 1)
        assert word in _SEGMENT_WORDS, f"cell {i} lights {word!r}, which is no glyph"
        out += _SEGMENT_WORDS[word]
        if colon_after == i:
            out += ":"
    return out.lstrip(" ")
