"""Segments back into text, the tests' own way: what a person reads from the lit segments a-g,
independent of `hardware.sevenseg`'s bit table, so a display driver's wire is checked against an
oracle that is not its own encoder (tests/test_displays.py: TM1637 and serial; tests/test_display_max7219.py)."""

from __future__ import annotations

# The segments a person sees lit for each character the clock shows, written as segment letters:
# independent of hardware.sevenseg's bit table (tests/test_displays.py checks that table against it).
SEGMENT_WORDS = {
    " ": "", "0": "abcdef", "1": "bc", "2": "abdeg", "3": "abcdg", "4": "bcfg", "5": "acdfg",
    "6": "acdefg", "7": "abc", "8": "abcdefg", "9": "abcdfg", "-": "g", "-1": "bcg",
    "A": "abcefg", "b": "cdefg", "C": "adef", "d": "bcdeg", "E": "adefg", "F": "aefg",
    "H": "bcefg", "L": "def", "n": "ceg", "o": "cdeg", "P": "abefg", "r": "eg", "t": "defg",
    "U": "bcdef", "u": "cde", "y": "bcdfg",
}
_SEGMENT_WORDS = {word: char for char, word in SEGMENT_WORDS.items()}  # what is lit -> what a person reads


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
