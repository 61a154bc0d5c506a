"""Where every touch target is, for each screen: pure geometry shared by hit-testing and drawing.

Everything is laid out in an 800x480 design box (the official 7" Pi display), scaled uniformly to
the window and centred, so the station looks the same from 800x480 to 1920x1080. Touch targets
must be at least 9 mm on the real glass: `check_touch_targets` measures every target of every
screen with the configured physical size and refuses a display on which they would be smaller.
"""

from __future__ import annotations

import math

from rackside.kiosk.director import LEXICONS_PER_PAGE, LOG_ROWS_PER_PAGE, RULES_PER_PAGE
from rackside.kiosk.flow import MAX_WORDS, Screen, Station
from rackside.values import Record

DESIGN_W, DESIGN_H = 800, 480
MIN_TARGET_MM = 9.0

KEY_ROWS = ("QWERTYUIOP", "ASDFGHJKL", "ZXCVBNM")
ID_ROWS = ("1234567890", "QWERTYUIOP", "ASDFGHJKL-", "ZXCVBNM.")


class LayoutError(ValueError):
    """A screen too small for the touch targets (9 mm), worded for the director."""


class Rect(Record):
    __slots__ = ("x", "y", "w", "h")
    x: int
    y: int
    w: int
    h: int

    def contains(self, px: float, py: float) -> bool:
        return self.x <= px < self.x + self.w and self.y <= py < self.y + self.h

    @property
    def center(self) -> tuple[int, int]:
        return self.x + self.w // 2, self.y + self.h // 2


class Button(Record):
    __slots__ = ("target", "rect", "label", "style")
    _defaults = {"style": "key"}
    target: str
    rect: Rect
    label: str
    style: str  # key, action, primary, danger, selected, ghost


class Geometry(Record):
    __slots__ = ("width", "height", "px_per_mm")
    width: int
    height: int
    px_per_mm: float

    @classmethod
    def for_display(cls, width: int, height: int, width_mm: float, height_mm: float) -> "Geometry":
        return cls(width, height, min(width / width_mm, height / height_mm))

    @property
    def scale(self) -> float:
        return min(self.width / DESIGN_W, self.height / DESIGN_H)

    @property
    def origin(self) -> tuple[float, float]:
        s = self.scale
        return (self.width - DESIGN_W * s) / 2, (self.height - DESIGN_H * s) / 2

    def rect(self, x: float, y: float, w: float, h: float) -> Rect:
        s = self.scale
        ox, oy = self.origin
        x0, y0 = round(ox + x * s), round(oy + y * s)
        return Rect(x0, y0, round(ox + (x + w) * s) - x0, round(oy + (y + h) * s) - y0)

    def px(self, design_px: float) -> int:
        return max(1, round(design_px * self.scale))

    @property
    def min_target_px(self) -> int:
        return math.ceil(MIN_TARGET_MM * self.px_per_mm)


def _keypad(geo: Geometry, last: tuple[str, str]) -> list[Button]:
    """A 3x4 numeric keypad on the right: 1-9, DEL, 0, and `last` (target, label)."""
    out = []
    labels = ["1", "2", "3", "4", "5", "6", "7", "8", "9"]
    for i, d in enumerate(labels):
        r, c = divmod(i, 3)
        out.append(Button(f"digit:{d}", geo.rect(452 + c * 114, 64 + r * 86, 104, 76), d))
    out.append(Button("backspace", geo.rect(452, 64 + 3 * 86, 104, 76), "DEL", "action"))
    out.append(Button("digit:0", geo.rect(566, 64 + 3 * 86, 104, 76), "0"))
    out.append(Button(last[0], geo.rect(680, 64 + 3 * 86, 104, 76), last[1], "primary"))
    return out


def _keyboard(geo: Geometry, rows: tuple[str, ...], top: float, row_h: float, gap: float = 6) -> list[Button]:
    out = []
    key_w = (DESIGN_W - 24 - 9 * gap) / 10
    for r, row in enumerate(rows):
        x0 = 12 if len(row) == 10 else 12 + (key_w + gap) / 2
        y = top + r * (row_h + gap)
        for c, ch in enumerate(row):
            kind = "char" if ch in "-." else "digit" if ch.isdigit() else "letter"
            out.append(Button(f"{kind}:{ch}", geo.rect(x0 + c * (key_w + gap), y, key_w, row_h), ch))
        if r == len(rows) - 1:
            x = x0 + len(row) * (key_w + gap)
            out.append(Button("backspace", geo.rect(x, y, DESIGN_W - 12 - x, row_h), "DEL", "action"))
    return out


def cancel_button(geo: Geometry) -> Button:
    return Button("cancel", geo.rect(16, 404, 200, 64), "CANCEL", "danger")


def buttons(st: Station, geo: Geometry) -> list[Button]:
    """Every touch target on the station's current screen."""
    s = st.screen
    if s == Screen.IDLE:
        label = "Touch to adjudicate a slip" if st.mode == "runner" else "Touch to challenge"
        return [
            Button("start", geo.rect(40, 150, 720, 220), label, "primary"),
            Button("director", geo.rect(600, 408, 188, 62), "Director", "ghost"),
        ]
    if s == Screen.TABLE:
        return _keypad(geo, ("next", "NEXT")) + [cancel_button(geo)]
    if s == Screen.PIN:
        return _keypad(geo, ("ok", "OK")) + [cancel_button(geo)]
    if s == Screen.COUNT:
        out = []
        for n in range(1, min(st.max_words, MAX_WORDS) + 1):
            r, c = divmod(n - 1, 4)
            out.append(Button(f"count:{n}", geo.rect(16 + c * 194, 120 + r * 136, 180, 122), str(n)))
        return out + [cancel_button(geo)]
    if s == Screen.ENTRY:
        out = _keyboard(geo, KEY_ROWS, top=232, row_h=54)
        y = 232 + 3 * 60
        out += [
            Button("cancel", geo.rect(12, y, 130, 60), "CANCEL", "danger"),
            Button("count", geo.rect(150, y, 150, 60), f"COUNT {st.count}", "action"),
            Button("space", geo.rect(308, y, 250, 60), "NEXT WORD", "action"),
            Button("judge", geo.rect(566, y, 222, 60), "JUDGE", "primary" if st.ready_to_judge else "disabled"),
        ]
        return out
    if s == Screen.RESULT:
        return []
    if s == Screen.LOCKED:
        return [Button("ok", geo.rect(300, 380, 200, 72), "OK", "action")]
    if s == Screen.DIRECTOR:
        items = [("lexicons", "Lexicon"), ("rules", "Challenge rule"), ("log", "Challenge log"),
                 ("readj", "Re-adjudicate by id"), ("resume", "Back to station"), ("quit", "Quit station")]
        out = []
        for i, (target, label) in enumerate(items):
            r, c = divmod(i, 2)
            style = "danger" if target == "quit" else "primary" if target == "resume" else "action"
            out.append(Button(target, geo.rect(16 + c * 392, 70 + r * 104, 376, 92), label, style))
        return out
    if s == Screen.LEXICONS:
        out = []
        start = st.director.page * LEXICONS_PER_PAGE
        for i, choice in enumerate(st.director.lexicon_choices[start:start + LEXICONS_PER_PAGE]):
            style = "disabled" if choice.error else "selected" if st.lexicon and choice.label.startswith(st.lexicon.name + " ") else "key"
            out.append(Button(f"pick:{start + i}", geo.rect(16, 62 + i * 84, 768, 76), choice.label, style))
        return out + _pager(geo, len(st.director.lexicon_choices), LEXICONS_PER_PAGE, st.director.page) + [
            Button("usb", geo.rect(224, 404, 208, 64), "USB STICK", "action")]
    if s == Screen.IMPORT:
        out = []
        start = st.imports.page * LEXICONS_PER_PAGE
        for i, choice in enumerate(st.imports.choices[start:start + LEXICONS_PER_PAGE]):
            out.append(Button(f"pick:{start + i}", geo.rect(16, 62 + i * 84, 768, 76), choice.label, "key"))
        return out + _pager(geo, len(st.imports.choices), LEXICONS_PER_PAGE, st.imports.page) + [
            Button("usb", geo.rect(224, 404, 208, 64), "LOOK AGAIN", "action")]
    if s == Screen.IMPORTING:
        if st.imports.view is not None and st.imports.view.done:
            return [Button("done", geo.rect(584, 404, 200, 64), "DONE", "primary")]
        return []
    if s == Screen.RULES:
        out = []
        start = st.director.page * RULES_PER_PAGE
        for i, (value, label) in enumerate(st.rules[start:start + RULES_PER_PAGE]):
            r, c = divmod(i, 3)
            style = "selected" if value == st.rule_value else "key"
            out.append(Button(f"rule:{value}", geo.rect(16 + c * 258, 62 + r * 110, 250, 100), label, style))
        return out + _pager(geo, len(st.rules), RULES_PER_PAGE, st.director.page)
    if s == Screen.LOG:
        out = []
        start = st.director.page * LOG_ROWS_PER_PAGE
        for i, row in enumerate(st.director.log_rows[start:start + LOG_ROWS_PER_PAGE]):
            style = "selected" if row.challenge_id == st.director.selected else "row"
            out.append(Button(f"row:{row.challenge_id}", geo.rect(16, 56 + i * 65, 768, 60), row.challenge_id, style))
        out += _pager(geo, len(st.director.log_rows), LOG_ROWS_PER_PAGE, st.director.page, wide=False)
        out.append(Button("export", geo.rect(440, 404, 164, 64), "EXPORT CSV", "action"))
        out.append(Button("readj", geo.rect(612, 404, 172, 64), "RE-ADJUDICATE", "primary" if st.director.selected else "disabled"))
        return out
    if s == Screen.READJ_ENTRY:
        out = _keyboard(geo, ID_ROWS, top=150, row_h=54)
        y = 150 + 4 * 60
        out += [Button("back", geo.rect(12, y, 200, 62), "BACK", "action"),
                Button("find", geo.rect(588, y, 200, 62), "FIND", "primary" if st.readjudication.typed else "disabled")]
        return out
    if s == Screen.READJ_RESULT:
        return [Button("back", geo.rect(16, 404, 200, 64), "BACK", "action")]
    raise AssertionError(s)


def _pager(geo: Geometry, total: int, per_page: int, page: int, wide: bool = True) -> list[Button]:
    pages = max(1, -(-total // per_page))
    out = [Button("back", geo.rect(16, 404, 130 if not wide else 200, 64), "BACK", "action")]
    x = 154 if not wide else 440
    out.append(Button("prev", geo.rect(x, 404, 130 if not wide else 164, 64), "PREV", "action" if page > 0 else "disabled"))
    out.append(Button("next", geo.rect(x + (138 if not wide else 172), 404, 130 if not wide else 172, 64), "NEXT",
                      "action" if page < pages - 1 else "disabled"))
    return out


def hit(btns: list[Button], x: float, y: float) -> str | None:
    """The target under (x, y) in window pixels; disabled targets still take the tap (and say why)."""
    for b in btns:
        if b.rect.contains(x, y):
            return b.target
    return None


# Geometries already found fit: `rackside kiosk` checks the configured display before opening
# the window, then the window's real size (usually the same), and each check lays out every
# screen (~1 ms of start-up, issue 11). The answer depends only on the geometry, so it is kept.
_FITS: set = set()


def check_touch_targets(geo: Geometry) -> None:
    """Refuse a display on which any target of any screen would be under 9 mm (LayoutError)."""
    if geo in _FITS:
        return
    from rackside.kiosk.director import LexiconChoice, LogRow
    from rackside.kiosk.wordlists import ImportView, WordListImport

    probe = Station(mode="self", rules=tuple((f"r{i}", f"Rule {i}") for i in range(RULES_PER_PAGE + 1)))
    probe.show_lexicons(tuple(LexiconChoice(f"/x/{i}", f"L{i}") for i in range(LEXICONS_PER_PAGE + 1)))
    probe.imports = WordListImport(probe.director.lexicon_choices, view=ImportView("x.txt", done=True))
    probe.show_log(tuple(LogRow(f"id{i}", "", "self", None, "L", ("QI",), True, (True,))
                         for i in range(LOG_ROWS_PER_PAGE + 1)))
    smallest = None
    for screen in Screen:
        probe.screen = screen
        for b in buttons(probe, geo):
            side = min(b.rect.w, b.rect.h)
            if smallest is None or side < smallest[0]:
                smallest = (side, screen, b)
    need = geo.min_target_px
    if smallest and smallest[0] < need:
        side, screen, b = smallest
        raise LayoutError(
            f"a {geo.width}x{geo.height} picture on {geo.width / geo.px_per_mm:.0f} mm x "
            f"{geo.height / geo.px_per_mm:.0f} mm makes the '{b.label}' key on the {screen.value} screen "
            f"{side / geo.px_per_mm:.1f} mm; touch targets must be at least {MIN_TARGET_MM:g} mm "
            f"(use a larger display, or check display.width_mm and display.height_mm)"
        )
    _FITS.add(geo)
