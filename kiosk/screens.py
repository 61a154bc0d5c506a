"""Draws the station's screens with pygame: large type, high contrast, colour AND words.

The geometry comes from kiosk.layout (the same rectangles the touch hit-test uses); this module
only paints. pygame is imported by the Renderer, never at module import.
"""

from __future__ import annotations

import os

from rackside.kiosk.director import LOG_ROWS_PER_PAGE, RULES_PER_PAGE
from rackside.kiosk.flow import NS, Station
from rackside.kiosk.layout import Button, Geometry, Rect, buttons

BG = (14, 18, 24)
PANEL = (28, 34, 42)
TEXT = (245, 247, 250)
MUTED = (170, 180, 192)
AMBER = (255, 196, 0)
GREEN = (18, 122, 54)
GREEN_TEXT = (92, 214, 128)
RED = (178, 28, 28)
RED_TEXT = (255, 112, 112)
SIZE_LADDER = (10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 34, 40, 46, 54, 64, 76, 92)
STYLES = {  # fill, text, border
    "key": ((52, 62, 76), TEXT, None),
    "action": ((70, 84, 104), TEXT, None),
    "primary": ((21, 101, 192), TEXT, None),
    "danger": ((140, 34, 34), TEXT, None),
    "selected": (AMBER, (0, 0, 0), None),
    "disabled": ((34, 39, 46), (110, 118, 128), None),
    "ghost": (BG, MUTED, (90, 100, 114)),
    "row": (PANEL, TEXT, None),
}


class Renderer:
    def __init__(self, surface, geo: Geometry):
        import pygame

        self.pg = pygame
        # The font bundled with pygame, by path: Font(None) looks it up through importlib.resources
        # on every call, which costs a few ms at start-up.
        bundled = os.path.join(os.path.dirname(pygame.__file__), pygame.font.get_default_font())
        self._font_file = bundled if os.path.exists(bundled) else None
        self.surface = surface
        self.geo = geo
        self._fonts: dict[int, object] = {}
        self._ops: list[tuple] = []  # what this frame drew, and where (see changed_areas)
        self._previous: list[tuple] | None = None
        self._text: dict[tuple, object] = {}

    # -- text helpers -------------------------------------------------------------------------

    def font(self, design_px: float):
        """The bundled sans (no system fonts needed) at a height of about design_px, snapped to a
        short ladder of sizes so screens share a few loaded fonts (each load costs ~1 ms)."""
        design_px = next((s for s in reversed(SIZE_LADDER) if s <= design_px), SIZE_LADDER[0])
        # pygame draws Font(None, n) at 0.6875 n; by path, n is the size itself.
        size = max(8, round(self.geo.px(design_px) / (1.0 if self._font_file else 0.6875)))
        f = self._fonts.get(size)
        if f is None:
            f = self._fonts[size] = self.pg.font.Font(self._font_file, size)
        return f

    def text_surface(self, text: str, design_px: float, colour):
        key = (text, design_px, colour, self.geo.scale)
        surf = self._text.get(key)
        if surf is None:
            if len(self._text) > 600:
                self._text.clear()
            surf = self._text[key] = self.font(design_px).render(text, True, colour)
        return surf

    def fit(self, text: str, design_px: float, max_w: int) -> float:
        """The largest size up to design_px at which text fits max_w window pixels. Text width
        grows about linearly with size, so one measurement usually finds it (each size tried
        loads a font and its glyphs, which is what a first frame pays for)."""
        width = self.font(design_px).size(text)[0]
        if width <= max_w:
            return design_px
        size = design_px * max_w / width
        while size > 10 and self.font(size).size(text)[0] > max_w:
            size *= 0.95
        return size

    def draw_text(self, text: str, x: int, y: int, design_px: float, colour=TEXT, *, align: str = "left",
                  max_w: int | None = None) -> Rect:
        if max_w is not None:
            design_px = self.fit(text, design_px, max_w)
        surf = self.text_surface(text, design_px, colour)
        w, h = surf.get_size()
        if align == "center":
            x -= w // 2
        elif align == "right":
            x -= w
        self._mark(("text", text, design_px, colour), self.surface.blit(surf, (x, y)))
        return Rect(x, y, w, h)

    def wrap(self, text: str, design_px: float, max_w: int) -> list[str]:
        f = self.font(design_px)
        lines, line = [], ""
        for word in text.split():
            trial = f"{line} {word}".strip()
            if f.size(trial)[0] <= max_w or not line:
                line = trial
            else:
                lines.append(line)
                line = word
        if line:
            lines.append(line)
        return lines

    def draw_paragraph(self, text: str, rect: Rect, design_px: float, colour=TEXT, align: str = "left") -> int:
        """Wrap text into rect, shrinking until it fits; returns the bottom y."""
        size = design_px
        while True:
            lines = self.wrap(text, size, rect.w)
            line_h = self.font(size).get_linesize()
            if len(lines) * line_h <= rect.h or size < 12:
                break
            size *= 0.9
        y = rect.y
        for line in lines:
            x = rect.x + rect.w // 2 if align == "center" else rect.x
            self.draw_text(line, x, y, size, colour, align=align, max_w=rect.w)
            y += line_h
        return y

    # -- shapes -------------------------------------------------------------------------------

    def box(self, r: Rect, fill, border=None, radius: float = 10, width: float = 2) -> None:
        pg = self.pg
        rr = pg.Rect(r.x, r.y, r.w, r.h)
        self._mark(("box", fill, border, radius, width), pg.draw.rect(self.surface, fill, rr, border_radius=self.geo.px(radius)))
        if border:
            pg.draw.rect(self.surface, border, rr, self.geo.px(width), border_radius=self.geo.px(radius))

    def tick(self, cx: int, cy: int, size: int, colour) -> None:
        pts = [(cx - size * 0.45, cy), (cx - size * 0.12, cy + size * 0.33), (cx + size * 0.48, cy - size * 0.38)]
        self._mark(("tick", colour), self.pg.draw.lines(self.surface, colour, False, pts, max(3, size // 7)))

    def cross(self, cx: int, cy: int, size: int, colour) -> None:
        d, w = size * 0.38, max(3, size // 7)
        self._mark(("cross", colour), self.pg.draw.line(self.surface, colour, (cx - d, cy - d), (cx + d, cy + d), w))
        self.pg.draw.line(self.surface, colour, (cx - d, cy + d), (cx + d, cy - d), w)

    def button(self, b: Button, pressed: bool) -> None:
        fill, colour, border = STYLES.get(b.style, STYLES["key"])
        if pressed and b.style != "disabled":
            fill = tuple(min(255, c + 50) for c in fill)
        self.box(b.rect, fill, border)
        pad = self.geo.px(10)
        inner = b.rect.w - 2 * pad
        size = min(40.0, b.rect.h / self.geo.scale * 0.42)
        lines = [b.label] if self.font(size).size(b.label)[0] <= inner else self.wrap(b.label, size * 0.8, inner)
        if len(lines) > 1:
            size *= 0.8
        line_h = self.font(size).get_linesize()
        y = b.rect.y + (b.rect.h - line_h * len(lines)) // 2
        for line in lines[:3]:
            self.draw_text(line, b.rect.x + b.rect.w // 2, y, size, colour, align="center", max_w=inner)
            y += line_h

    def header(self, title: str, right: str = "") -> None:
        g = self.geo
        self.draw_text(title, g.rect(16, 12, 0, 0).x, g.rect(16, 12, 0, 0).y, 30, TEXT, max_w=g.px(560 if right else 768))
        if right:
            r = g.rect(784, 18, 0, 0)
            self.draw_text(right, r.x, r.y, 20, MUTED, align="right", max_w=g.px(200))

    # -- screens ------------------------------------------------------------------------------

    def _mark(self, what: tuple, area) -> None:
        """Note one thing drawn and the pygame.Rect it covered (see `changed_areas`)."""
        self._ops.append((what, (area.x, area.y, area.w, area.h)))

    def invalidate(self) -> None:
        """The window's contents were lost (exposed, resized): the next frame goes out whole."""
        self._previous = None

    def changed_areas(self) -> list | None:
        """Where this frame differs from the last one drawn: the areas of everything drawn in one
        frame and not the other (a key's highlight, a typed letter, a countdown's digit), or None
        for the whole window (the first frame, another screen or background). The whole frame is
        still drawn into the surface (2-4 ms at 1920x1080); only these areas are sent to the
        display, which on X is most of a frame's cost (issue 11)."""
        previous, current = self._previous, self._ops
        self._previous = current
        if previous is None or previous[0] != current[0]:
            return None
        return [area for _, area in set(previous).symmetric_difference(current)]

    def draw(self, st: Station, now_ns: int, pressed: str | None = None) -> None:
        self._ops = [(("screen", st.screen), (0, 0, *self.surface.get_size()))]
        self.surface.fill(BG)
        getattr(self, f"_draw_{st.screen.name.lower()}")(st, now_ns)
        for b in buttons(st, self.geo):
            if b.target.startswith("row:"):
                self._log_row(st, b, pressed == b.target)
            else:
                self.button(b, pressed == b.target)

    def _draw_idle(self, st: Station, now_ns: int) -> None:
        g = self.geo
        title = "Challenge station · runner mode" if st.mode == "runner" else "Challenge station"
        self.header(title)
        if st.lexicon is not None:
            self.draw_text(f"Lexicon: {st.lexicon.label}", g.rect(40, 62, 0, 0).x, g.rect(0, 62, 0, 0).y, 24, TEXT,
                           max_w=g.px(720))
        else:
            self.draw_paragraph(f"No lexicon: {st.lexicon_error or 'none loaded'}. Call the director.",
                                g.rect(40, 60, 720, 40), 22, RED_TEXT)
        if st.rule_label:
            self.draw_text(f"Challenge rule: {st.rule_label}", g.rect(40, 104, 0, 0).x, g.rect(0, 104, 0, 0).y, 24,
                           MUTED, max_w=g.px(720))
        if st.lexicon is not None and st.lexicon_notice:  # e.g. the bundled demonstration list
            self.draw_text(st.lexicon_notice, g.rect(40, 132, 0, 0).x, g.rect(0, 132, 0, 0).y, 18, AMBER,
                           max_w=g.px(720))
        hint = "Or type the table number on the keyboard" if st.mode == "runner" else "Or press 1–8 on the keyboard"
        self.draw_text(hint, g.rect(40, 392, 0, 0).x, g.rect(0, 392, 0, 0).y, 22, MUTED, max_w=g.px(540))
        if st.hall_notice:  # the director reads the code off the screen to number the station (issue 19)
            waiting = "waiting" in st.hall_notice
            self.draw_text(st.hall_notice, g.rect(40, 432, 0, 0).x, g.rect(0, 432, 0, 0).y, 22,
                           AMBER if waiting else MUTED, max_w=g.px(540))

    def _draw_table(self, st: Station, now_ns: int) -> None:
        g = self.geo
        self.header("Table number", "runner mode")
        self.draw_text("From the challenge slip", g.rect(16, 64, 0, 0).x, g.rect(0, 64, 0, 0).y, 22, MUTED)
        field = g.rect(16, 110, 420, 110)
        self.box(field, PANEL, (90, 100, 114))
        self.draw_text(st.table or "–", field.x + field.w // 2, field.y + g.px(22), 64, TEXT, align="center")
        self.draw_paragraph("NEXT with no number: the docket shows no table.", g.rect(16, 240, 420, 60), 20, MUTED)

    def _draw_count(self, st: Station, now_ns: int) -> None:
        g = self.geo
        self.header("How many words are challenged?")
        secs = st.countdown_s(now_ns)
        self.draw_text(self.countdown_text(secs) if secs is not None
                       else f"Touch a number, or press 1–{min(st.max_words, 8)} on the keyboard",
                       g.rect(16, 64, 0, 0).x, g.rect(0, 64, 0, 0).y, 22, MUTED if secs is None else AMBER,
                       max_w=g.px(768))

    @staticmethod
    def countdown_text(secs: int) -> str:
        return f"No input: the words are cleared in {secs} s. Touch the screen to keep them"

    def _draw_entry(self, st: Station, now_ns: int) -> None:
        g = self.geo
        n = st.count
        typed = len(st.typed_words)
        secs = st.countdown_s(now_ns)
        if secs is not None:
            prompt, colour = self.countdown_text(secs), AMBER
        elif st.message:
            prompt, colour = st.message, AMBER
        elif st.ready_to_judge:
            prompt, colour = "Opponent: check the spelling, then press JUDGE", GREEN_TEXT
        else:
            prompt, colour = f"Challenger: type the {n} word{'s' if n != 1 else ''} · {typed} of {n} typed", TEXT
        self.draw_text(prompt, g.rect(16, 10, 0, 0).x, g.rect(0, 10, 0, 0).y, 26, colour, max_w=g.px(768))
        # The words, large, one per line (two columns for more than four).
        area = g.rect(16, 46, 768, 178)
        cols = 1 if n <= 4 else 2
        rows = n if cols == 1 else 4
        slot_h = area.h / max(rows, 1)
        size = min(44.0, slot_h / g.scale * 0.78)
        col_w = area.w // cols
        for i in range(n):
            c, r = (0, i) if cols == 1 else divmod(i, 4)
            x, y = area.x + c * col_w, int(area.y + r * slot_h)
            word = st.words[i] if i < len(st.words) else ""
            current = i == len(st.words) - 1
            self.draw_text(f"{i + 1}.", x, y + g.px(size * 0.22), size * 0.6, MUTED)
            wx = x + g.px(44)
            if word:
                r_ = self.draw_text(word, wx, y - g.px(2), size, TEXT, max_w=col_w - g.px(60))
                end = r_.x + r_.w
            else:
                end = wx
                if not current:
                    self.draw_text("…", wx, y, size * 0.7, MUTED)
            if current:
                self._mark(("cursor",), self.pg.draw.rect(self.surface, AMBER,
                                                          self.pg.Rect(end + g.px(3), y, g.px(4), int(slot_h * 0.8))))

    def _draw_result(self, st: Station, now_ns: int) -> None:
        g = self.geo
        v = st.verdict
        if v is None:
            return
        ok = v.acceptable
        self._mark(("fill", ok), self.surface.fill(GREEN if ok else RED))
        word = "ACCEPTABLE" if ok else "UNACCEPTABLE"
        icon = g.rect(28, 20, 110, 110)
        (self.tick if ok else self.cross)(icon.center[0], icon.center[1], icon.w, TEXT)
        self.draw_text(word, g.rect(150, 26, 0, 0).x, g.rect(0, 26, 0, 0).y, 92, TEXT, max_w=g.px(630))
        y = 150
        if v.kind == "runner":
            self.draw_text(f"Challenge {v.short_id or v.challenge_id}", g.rect(32, y, 0, 0).x, g.rect(0, y, 0, 0).y, 30, TEXT,
                           max_w=g.px(740))
            y += 44
        words = "  ".join(v.words)
        self.draw_text(words, g.rect(32, y, 0, 0).x, g.rect(0, y, 0, 0).y, 40, TEXT, max_w=g.px(740))
        y += 56
        bottom = self.draw_paragraph(v.guidance, g.rect(32, y, 740, 90), 26, TEXT)
        y = max(y + 60, round((bottom - g.origin[1]) / g.scale) + 8)
        self.draw_text(f"Lexicon: {v.lexicon}", g.rect(32, min(y, 392), 0, 0).x, g.rect(0, min(y, 392), 0, 0).y, 20,
                       TEXT, max_w=g.px(740))
        docket = {"": "", "printing": "Printing the docket…", "printed": "Docket printed. Touch the screen for the next slip"}.get(st.docket)
        if docket is None:
            docket = f"The docket did not print ({st.docket[8:] or 'printer error'}): mark the slip by hand."
        if docket:
            strip = g.rect(0, 416, 800, 64)
            self.box(strip, (0, 0, 0), radius=0)
            self.draw_paragraph(docket, g.rect(16, 422, 768, 54), 24,
                                AMBER if st.docket.startswith("failed") else TEXT, align="center")
        else:
            # Runner mode: the adjudicator is at the station, the players are at their table.
            line = ("Mark the slip, then touch the screen" if v.kind == "runner"
                    else "Touch the screen when you have both seen the result")
            self.draw_text(line, g.rect(400, 440, 0, 0).x, g.rect(0, 440, 0, 0).y, 18, TEXT, align="center",
                           max_w=g.px(760))

    def _draw_pin(self, st: Station, now_ns: int) -> None:
        g = self.geo
        self.header("Director PIN")
        field = g.rect(16, 110, 420, 110)
        self.box(field, PANEL, (90, 100, 114))
        dots = "●" * len(st.pin_pad.digits)
        if dots:
            d = g.px(22)
            for i in range(len(st.pin_pad.digits)):
                cx = field.x + field.w // 2 + int((i - (len(st.pin_pad.digits) - 1) / 2) * d * 2)
                self._mark(("dot",), self.pg.draw.circle(self.surface, TEXT, (cx, field.y + field.h // 2), d // 2 + 2))
        if st.pin_pad.message:
            self.draw_paragraph(st.pin_pad.message, g.rect(16, 236, 420, 60), 24, AMBER)
        self.draw_paragraph("Director mode only. Players: press CANCEL.", g.rect(16, 310, 420, 60), 20, MUTED)

    def _draw_locked(self, st: Station, now_ns: int) -> None:
        g = self.geo
        self.header("Director mode is locked")
        secs = max(0, -(-(st.pin_pad.lock_until_ns - now_ns) // NS))
        self.draw_text("Too many wrong PINs.", g.rect(400, 130, 0, 0).x, g.rect(0, 130, 0, 0).y, 34, TEXT,
                       align="center")
        self.draw_text(f"Try again in {secs} s", g.rect(400, 200, 0, 0).x, g.rect(0, 200, 0, 0).y, 54, AMBER,
                       align="center")

    def _draw_director(self, st: Station, now_ns: int) -> None:
        g = self.geo
        self.header("Director", "WESPA 3.10.11")
        lex = st.lexicon.label if st.lexicon else f"none ({st.lexicon_error})"
        self.draw_text(f"Lexicon: {lex}", g.rect(16, 384, 0, 0).x, g.rect(0, 384, 0, 0).y, 20, TEXT, max_w=g.px(768))
        self.draw_text(f"Rule: {st.rule_label}", g.rect(16, 410, 0, 0).x, g.rect(0, 410, 0, 0).y, 20, MUTED,
                       max_w=g.px(768))
        if st.director.note:
            self.draw_paragraph(st.director.note, g.rect(16, 436, 768, 40), 18, AMBER)

    def _draw_lexicons(self, st: Station, now_ns: int) -> None:
        g = self.geo
        self.header("Choose the lexicon", f"{len(st.director.lexicon_choices)} found")
        if not st.director.lexicon_choices:
            self.draw_paragraph("No compiled lexicons in the lexicon folder. Import a word list with USB STICK, or "
                                "compile one with `rackside lexicon compile`.", g.rect(16, 80, 768, 100), 24, AMBER)
        if st.director.note:
            self.draw_paragraph(st.director.note, g.rect(16, 380, 420, 22), 16, AMBER)

    def _draw_import(self, st: Station, now_ns: int) -> None:
        g = self.geo
        self.header("Import a word list from a USB stick", f"{len(st.imports.choices)} found")
        if not st.imports.choices:
            self.draw_paragraph("No word lists (.txt files) found on removable media. Plug in the stick, wait a few "
                                "seconds, then press LOOK AGAIN.", g.rect(16, 80, 768, 100), 24, AMBER)
        if st.director.note:
            self.draw_paragraph(st.director.note, g.rect(16, 380, 420, 22), 16, AMBER)

    def _draw_importing(self, st: Station, now_ns: int) -> None:
        g = self.geo
        v = st.imports.view
        if v is None:
            return
        self.header(f"{'Importing' if not v.done else 'Not imported:' if v.error else 'Imported'} {v.source}")
        bar = g.rect(16, 64, 768, 44)
        self.box(bar, PANEL, (90, 100, 114), radius=6)
        if v.fraction > 0:
            fill = Rect(bar.x, bar.y, max(g.px(12), round(bar.w * min(1.0, v.fraction))), bar.h)
            self.box(fill, AMBER if v.error else (21, 101, 192), radius=6)
        if not v.done:
            self.draw_text(f"{v.stage}… {round(v.fraction * 100)} %", g.rect(16, 120, 0, 0).x, g.rect(0, 120, 0, 0).y,
                           26, TEXT)
            self.draw_paragraph("Leave the stick in until this finishes.", g.rect(16, 160, 768, 40), 22, MUTED)
            return
        if v.error:
            self.draw_paragraph(f"Not imported: {v.error}", g.rect(16, 120, 768, 150), 24, AMBER)
            self.draw_paragraph("The station still judges with the lexicon it had.", g.rect(16, 280, 768, 40), 22,
                                MUTED)
            return
        self.draw_text(f"{v.name} · {v.word_count:,} words · checksum {v.checksum}", g.rect(16, 120, 0, 0).x,
                       g.rect(0, 120, 0, 0).y, 30, GREEN_TEXT, max_w=g.px(768))
        y = 166
        for line in v.skipped[:5]:
            self.draw_text(line, g.rect(16, y, 0, 0).x, g.rect(0, y, 0, 0).y, 20, TEXT if y == 166 else MUTED,
                           max_w=g.px(768))
            y += 28
        if st.director.note:
            self.draw_paragraph(st.director.note, g.rect(16, 330, 560, 60), 24, AMBER)

    def _draw_rules(self, st: Station, now_ns: int) -> None:
        pages = max(1, -(-len(st.rules) // RULES_PER_PAGE))
        self.header("Challenge rule (3.10.15)",
                    "WESPA norm: 5 per word" + (f" · page {st.director.page + 1} of {pages}" if pages > 1 else ""))

    def _draw_log(self, st: Station, now_ns: int) -> None:
        g = self.geo
        pages = max(1, -(-len(st.director.log_rows) // LOG_ROWS_PER_PAGE))
        self.header(f"Challenge log · {len(st.director.log_rows)} challenges", f"page {st.director.page + 1} of {pages}")
        if not st.director.log_rows:
            self.draw_text("No challenges yet.", g.rect(16, 80, 0, 0).x, g.rect(0, 80, 0, 0).y, 26, MUTED)
        if st.director.note:
            self.draw_paragraph(st.director.note, g.rect(16, 378, 768, 24), 18, AMBER)

    def _log_row(self, st: Station, b: Button, pressed: bool) -> None:
        g = self.geo
        row = next((r for r in st.director.log_rows if f"row:{r.challenge_id}" == b.target), None)
        selected = row is not None and row.challenge_id == st.director.selected
        self.box(b.rect, (70, 84, 104) if pressed or selected else PANEL, AMBER if selected else None)
        if row is None:
            return
        pad = g.px(10)
        verdict = "ACCEPTABLE" if row.acceptable else "UNACCEPTABLE"
        self.draw_text(verdict, b.rect.x + b.rect.w - pad, b.rect.y + g.px(6), 20,
                       GREEN_TEXT if row.acceptable else RED_TEXT, align="right")
        table = f" · table {row.table}" if row.table else ""
        self.draw_text(f"{row.challenge_id} · {row.kind}{table}", b.rect.x + pad, b.rect.y + g.px(6), 18, MUTED,
                       max_w=b.rect.w - g.px(190))
        # Per-word results: the only place they appear (3.10.7(b)). Colour and a mark for each word.
        x, y = b.rect.x + pad, b.rect.y + g.px(30)
        for word, ok in zip(row.words, row.per_word):
            r = self.draw_text(word, x, y, 24, GREEN_TEXT if ok else RED_TEXT)
            mark = g.px(20)
            (self.tick if ok else self.cross)(r.x + r.w + mark // 2 + g.px(4), r.y + r.h // 2, mark,
                                              GREEN_TEXT if ok else RED_TEXT)
            x = r.x + r.w + mark + g.px(18)
            if x > b.rect.x + b.rect.w - g.px(60):
                break

    def _draw_readj_entry(self, st: Station, now_ns: int) -> None:
        g = self.geo
        self.header("Re-adjudicate a challenge (3.10.11)")
        field = g.rect(16, 56, 768, 70)
        self.box(field, PANEL, (90, 100, 114))
        self.draw_text(st.readjudication.typed or "Type the challenge id from the docket or log", field.x + g.px(12),
                       field.y + g.px(18), 30 if st.readjudication.typed else 22, TEXT if st.readjudication.typed else MUTED,
                       max_w=field.w - g.px(24))
        if st.director.note:
            self.draw_paragraph(st.director.note, g.rect(16, 128, 768, 20), 16, AMBER)

    def _draw_readj_result(self, st: Station, now_ns: int) -> None:
        g = self.geo
        v = st.readjudication.view
        if v is None:
            return
        self.header("Re-adjudication (3.10.11)")
        self.draw_text(f"Challenge {v.row.challenge_id} · {v.row.time}", g.rect(16, 52, 0, 0).x,
                       g.rect(0, 52, 0, 0).y, 20, MUTED, max_w=g.px(768))
        was = "ACCEPTABLE" if v.row.acceptable else "UNACCEPTABLE"
        now = "ACCEPTABLE" if v.now_acceptable else "UNACCEPTABLE"
        self.draw_text(f"Original: {was} with {v.row.lexicon}", g.rect(16, 84, 0, 0).x, g.rect(0, 84, 0, 0).y, 24,
                       GREEN_TEXT if v.row.acceptable else RED_TEXT, max_w=g.px(768))
        self.draw_text(f"Now: {now} with {v.lexicon}", g.rect(16, 118, 0, 0).x, g.rect(0, 118, 0, 0).y, 30,
                       GREEN_TEXT if v.now_acceptable else RED_TEXT, max_w=g.px(768))
        # The words without per-word results: a re-adjudication is often watched by the players,
        # and the log view is the only place those appear (3.10.7(b)).
        left, y = g.rect(16, 166, 0, 0).x, g.rect(0, 166, 0, 0).y
        x, right = left, g.rect(784, 0, 0, 0).x
        for word in v.row.words:
            if x > left and x + self.font(30).size(word)[0] + g.px(30) > right:
                x, y = left, y + g.px(36)  # eight long words take two lines
            r = self.draw_text(word, x, y, 30, TEXT)
            x = r.x + r.w + g.px(24)
        top = max(222, round((y - g.origin[1]) / g.scale) + 50)
        self.draw_paragraph(v.message, g.rect(16, top, 768, 392 - top), 26, AMBER if v.differs else TEXT)
