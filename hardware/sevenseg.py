"""Text to 7-segment cells: the one encoder every 7-segment driver shares.

A cell is a byte with one bit per segment, the order both the TM1637 and the SparkFun Serial
7-Segment Display use::

      a            bit 0 = a, 1 = b, 2 = c, 3 = d, 4 = e, 5 = f, 6 = g
    f   b          (bit 7 is the decimal point or colon: the drivers set it, see `Frame.colon`)
      g
    e   c
      d

The reference build's displays have 4 digits and a colon between the 2nd and 3rd digit (the
common "clock" modules). Clock texts are right-aligned so the colon always falls there: "24:59",
" 5:00", "-1:05", "-9:59". The one text with five glyphs a clock needs is "-10:00", the moment of
forfeit (10 minutes overtime, WESPA 5.3.3): as on a 3½-digit meter, the leading "-1" shares the
first digit (segments g, b and c), so it fits without a wider module.
"""

from __future__ import annotations

from dataclasses import dataclass

A, B, C, D, E, F, G = (1 << i for i in range(7))

# Every glyph a clock, its menus and its messages need. Letters that a 7-segment display cannot
# draw legibly (k, m, v, w, x, z) are deliberately absent: asking for them is a programming error.
GLYPHS: dict[str, int] = {
    " ": 0,
    "0": A | B | C | D | E | F,
    "1": B | C,
    "2": A | B | D | E | G,
    "3": A | B | C | D | G,
    "4": B | C | F | G,
    "5": A | C | D | F | G,
    "6": A | C | D | E | F | G,
    "7": A | B | C,
    "8": A | B | C | D | E | F | G,
    "9": A | B | C | D | F | G,
    "-": G,
    "_": D,
    "A": A | B | C | E | F | G,
    "b": C | D | E | F | G,
    "C": A | D | E | F,
    "c": D | E | G,
    "d": B | C | D | E | G,
    "E": A | D | E | F | G,
    "F": A | E | F | G,
    "G": A | C | D | E | F,
    "H": B | C | E | F | G,
    "h": C | E | F | G,
    "I": E | F,
    "i": C,
    "J": B | C | D | E,
    "L": D | E | F,
    "n": C | E | G,
    "O": A | B | C | D | E | F,
    "o": C | D | E | G,
    "P": A | B | E | F | G,
    "q": A | B | C | F | G,
    "r": E | G,
    "S": A | C | D | F | G,
    "t": D | E | F | G,
    "U": B | C | D | E | F,
    "u": C | D | E,
    "y": B | C | D | F | G,
}
# The 3½-digit "-1": a minus and a one drawn in a single digit.
MINUS_ONE = G | B | C

DIGITS = 4  # cells on the reference build's modules
COLON_AFTER = 1  # the colon sits after cell 1 (0-based), between the 2nd and 3rd digit


@dataclass(frozen=True)
class Frame:
    """What the display should light: `cells` left to right (bits 0-6), and the colon."""

    cells: tuple[int, ...]
    colon: bool


def encode(text: str, digits: int = DIGITS, colon_after: int = COLON_AFTER) -> Frame:
    """Encode `text` for a `digits`-cell module whose colon follows cell `colon_after`.

    Raises ValueError, naming the problem, for a character the display cannot draw, a text too
    long for the module, or a colon that would not fall where the module has one.
    """
    glyphs: list[int] = []
    colon_glyph: int | None = None  # index of the glyph the colon follows
    for ch in text:
        if ch == ":":
            if not glyphs or colon_glyph is not None:
                raise ValueError(f"{text!r}: a colon must follow a digit, and only one is allowed")
            colon_glyph = len(glyphs) - 1
            continue
        bits = GLYPHS.get(ch)
        if bits is None:
            bits = GLYPHS.get(ch.upper() if ch.islower() else ch.lower())
        if bits is None:
            drawable = "".join(sorted(GLYPHS)).strip()
            raise ValueError(f"{text!r}: a 7-segment display cannot draw {ch!r} (it can draw {drawable!r} and ':')")
        glyphs.append(bits)
    if len(glyphs) == digits + 1 and text.startswith("-1"):
        glyphs[0:2] = [MINUS_ONE]
        if colon_glyph is not None:
            colon_glyph -= 1
    if len(glyphs) > digits:
        raise ValueError(f"{text!r} is too long for a {digits}-digit display")
    pad = digits - len(glyphs)
    if colon_glyph is not None and pad + colon_glyph != colon_after:
        raise ValueError(
            f"{text!r}: the colon would fall after digit {pad + colon_glyph + 1}, but the display's "
            f"colon is after digit {colon_after + 1}"
        )
    return Frame(cells=(0,) * pad + tuple(glyphs), colon=colon_glyph is not None)


def frame_of(shown: "str | Frame", digits: int = DIGITS, colon_after: int = COLON_AFTER) -> Frame:
    """What a display lights for `shown`: a text (`encode`), or a `Frame` of raw segments as the
    self-test (`firmware.selftest`) lights them one at a time, which no text can ask for."""
    if isinstance(shown, Frame):
        if len(shown.cells) != digits or any(not 0 <= c <= 0x7F for c in shown.cells):
            raise ValueError(f"{shown!r}: a frame needs {digits} cells of segments a-g (bits 0-6)")
        return shown
    return encode(shown, digits, colon_after)
