"""The simulated board in a pygame window: two 7-segment displays and three buttons.

The window draws what the display drivers were TOLD to show (the `RecordingDisplay`s standing in
for them), segment by segment through the same encoder the real drivers use (`hardware.sevenseg`),
so it shows exactly what a reference-build clock would light, and never asks the clock anything.
Keys close and open the contacts of gpiozero's mock pins (`Board.drive`), so every press goes
through the same queue, debounce and runner as on a Pi.

Keys: Left Shift (or z) = left player's button, Right Shift (or m) = right player's, Space = the
centre (neutralise). Holding works as on the real buttons. d = the director's menu, e = end the
game (the same as the long presses), q or Esc = quit.

pygame (pygame-ce) is imported when a window is opened, never at module import time.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Sequence

from rackside.hardware import sevenseg

log = logging.getLogger(__name__)

BACKGROUND = (18, 20, 24)
PANEL = (6, 6, 8)
BEZEL = (46, 50, 58)
LIT = (255, 62, 38)
UNLIT = (38, 13, 12)
TEXT = (200, 204, 212)
DIM_TEXT = (120, 126, 138)
BUTTON = (70, 76, 88)
BUTTON_DOWN = (236, 180, 64)
CENTRE = (150, 40, 36)
CENTRE_DOWN = (250, 90, 70)


def segment_polygons(x: float, y: float, w: float, h: float, t: float) -> list[list[tuple[float, float]]]:
    """Polygons of segments a-g of one digit whose box is (x, y, w, h), segments `t` thick."""
    half = t / 2
    mid = y + h / 2

    def horizontal(cy: float) -> list[tuple[float, float]]:
        x0, x1 = x + half + 1, x + w - half - 1
        return [(x0, cy), (x0 + half, cy - half), (x1 - half, cy - half), (x1, cy), (x1 - half, cy + half), (x0 + half, cy + half)]

    def vertical(cx: float, y0: float, y1: float) -> list[tuple[float, float]]:
        y0, y1 = y0 + half + 1, y1 - half - 1
        return [(cx, y0), (cx + half, y0 + half), (cx + half, y1 - half), (cx, y1), (cx - half, y1 - half), (cx - half, y0 + half)]

    left, right = x + half, x + w - half
    top, bottom = y + half, y + h - half
    return [
        horizontal(top),  # a
        vertical(right, top, mid),  # b
        vertical(right, mid, bottom),  # c
        horizontal(bottom),  # d
        vertical(left, mid, bottom),  # e
        vertical(left, top, mid),  # f
        horizontal(mid),  # g
    ]


class SimWindow:
    KEYS = {"K_LSHIFT": "left", "K_z": "left", "K_RSHIFT": "right", "K_m": "right", "K_SPACE": "neutralise"}
    COMMANDS = {"K_d": "menu", "K_e": "end"}
    QUIT_KEYS = ("K_ESCAPE", "K_q")

    KEY_NAMES = {"left": "Left Shift / z", "neutralise": "Space", "right": "Right Shift / m"}
    KEY_LINE = "Left Shift / z: left    Right Shift / m: right    Space: neutralise    d: director menu    e: end game    q: quit"

    def __init__(
        self,
        board: Any,
        displays: Sequence[Any],
        *,
        size: tuple[int, int] = (1000, 470),
        title: str = "Rackside table clock (simulated)",
        key_help: Callable[[], dict | None] | None = None,
    ) -> None:
        import pygame

        self.key_help = key_help or (lambda: None)  # the runner's menu_help: the menu's key line
        self.pg = pygame
        pygame.display.init()
        pygame.font.init()
        self.board = board
        self.displays = list(displays)
        self.screen = pygame.display.set_mode(size)
        pygame.display.set_caption(title)
        self.keys = {getattr(pygame, k): v for k, v in self.KEYS.items()}
        self.commands = {getattr(pygame, k): v for k, v in self.COMMANDS.items()}
        self.quit_keys = {getattr(pygame, k) for k in self.QUIT_KEYS}
        self.font = pygame.font.Font(None, 34)
        self.small = pygame.font.Font(None, 24)
        self.held: dict[str, set[int]] = {"left": set(), "right": set(), "neutralise": set()}
        self.drawn: tuple[str, ...] | None = None  # the texts last drawn, read from the displays
        self._last_state: tuple | None = None

    # --- input ---------------------------------------------------------------------------------

    def handle(self, event: Any) -> bool:
        """Handle one pygame event; False when the user asked to quit."""
        pg = self.pg
        if event.type == pg.QUIT:
            return False
        if event.type == pg.KEYDOWN:
            if event.key in self.quit_keys:
                return False
            if event.key in self.keys:
                self._key(self.keys[event.key], event.key, True)
            elif event.key in self.commands:
                self.board.command(self.commands[event.key])
        elif event.type == pg.KEYUP and event.key in self.keys:
            self._key(self.keys[event.key], event.key, False)
        return True

    def _key(self, button: str, key: int, down: bool) -> None:
        # Two keys may stand for one button (Left Shift and z): the contact is closed while either is held.
        keys = self.held[button]
        was = bool(keys)
        keys.add(key) if down else keys.discard(key)
        if bool(keys) != was:
            self.board.drive(button, bool(keys))

    def poll(self) -> bool:
        return all([self.handle(e) for e in self.pg.event.get()])

    # --- drawing -------------------------------------------------------------------------------

    def texts(self) -> tuple[str, ...]:
        return tuple(d.text for d in self.displays)

    def draw(self) -> None:
        pg = self.pg
        screen = self.screen
        width, height = screen.get_size()
        screen.fill(BACKGROUND)
        texts = self.texts()
        panel_w, panel_h = 420, 210
        gap = width - 2 * panel_w
        for i, text in enumerate(texts[:2]):
            px = gap / 3 + i * (panel_w + gap / 3)
            py = 78
            label = ("LEFT PLAYER", "RIGHT PLAYER")[i]
            surf = self.font.render(label, True, TEXT)
            screen.blit(surf, (px + (panel_w - surf.get_width()) / 2, py - 44))
            pg.draw.rect(screen, BEZEL, (px - 8, py - 8, panel_w + 16, panel_h + 16), border_radius=18)
            pg.draw.rect(screen, PANEL, (px, py, panel_w, panel_h), border_radius=12)
            self._draw_digits(text, px + 26, py + 30, panel_w - 52, panel_h - 60)
        self._draw_buttons(width, height)
        surf = self.small.render(self.key_line(), True, DIM_TEXT)
        screen.blit(surf, ((width - surf.get_width()) / 2, height - 34))
        if getattr(self.board, "buzzing", False):
            surf = self.font.render("BUZZ", True, BUTTON_DOWN)
            screen.blit(surf, (width - surf.get_width() - 20, 16))
        pg.display.flip()
        self.drawn = texts

    def _draw_digits(self, text: str, x: float, y: float, w: float, h: float) -> None:
        pg = self.pg
        try:
            frame = sevenseg.encode(text)
        except ValueError as exc:  # a text no module could show: show it as a fault, as dashes
            log.error("display told %r: %s", text, exc)
            frame = sevenseg.Frame(cells=(sevenseg.GLYPHS["-"],) * sevenseg.DIGITS, colon=False)
        n = len(frame.cells)
        colon_w = w * 0.08
        digit_w = (w - colon_w) / n
        thickness = digit_w * 0.16
        cx = x
        for i, bits in enumerate(frame.cells):
            slant_box = (cx + digit_w * 0.1, y, digit_w * 0.8, h)
            for s, poly in enumerate(segment_polygons(*slant_box, thickness)):
                pg.draw.polygon(self.screen, LIT if bits >> s & 1 else UNLIT, poly)
            cx += digit_w
            if i == sevenseg.COLON_AFTER:
                colour = LIT if frame.colon else UNLIT
                r = thickness * 0.55
                pg.draw.circle(self.screen, colour, (cx + colon_w / 2, y + h * 0.3), r)
                pg.draw.circle(self.screen, colour, (cx + colon_w / 2, y + h * 0.7), r)
                cx += colon_w

    def _draw_buttons(self, width: int, height: int) -> None:
        pg = self.pg
        y = height - 110
        down = {name: self._is_down(name) for name in ("left", "right", "neutralise")}
        for name, x, radius in (("left", width * 0.25, 44), ("neutralise", width * 0.5, 26), ("right", width * 0.75, 44)):
            if name == "neutralise":
                colour = CENTRE_DOWN if down[name] else CENTRE
            else:
                colour = BUTTON_DOWN if down[name] else BUTTON
            pg.draw.circle(self.screen, BEZEL, (x, y), radius + 6)
            pg.draw.circle(self.screen, colour, (x, y), radius)

    def _is_down(self, name: str) -> bool:
        try:
            return bool(self.board.is_down(name))
        except Exception:  # noqa: BLE001 - a closed board: draw the button up
            return False

    def key_line(self) -> str:
        """What each key does: in the director's menu, what it does there (issue 10)."""
        help_ = self.key_help()
        if not help_:
            return self.KEY_LINE
        return "director's menu   " + "   ".join(f"{self.KEY_NAMES[b]}: {help_[b]}" for b in ("left", "neutralise", "right"))

    def _state(self) -> tuple:
        return (
            self.texts(),
            tuple(self._is_down(n) for n in ("left", "right", "neutralise")),
            getattr(self.board, "buzzing", False),
            self.key_line(),
        )

    # --- main loop -----------------------------------------------------------------------------

    def run(self, stopped: Callable[[], bool] = lambda: False) -> None:
        """Until the user quits (or `stopped()`): handle keys, redraw when anything shown changed.
        Waits on pygame's event queue with a short timeout, so an idle window costs next to nothing."""
        try:
            while not stopped():
                event = self.pg.event.wait(20)
                if event.type != self.pg.NOEVENT and not self.handle(event):
                    return
                if not self.poll():
                    return
                state = self._state()
                if state != self._last_state:
                    self._last_state = state
                    self.draw()
        finally:
            self.close()

    def save(self, path: str) -> None:
        self.draw()
        self.pg.image.save(self.screen, str(path))

    def close(self) -> None:
        self.pg.display.quit()
