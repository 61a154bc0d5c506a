"""The simulated board in a pygame window: two 7-segment displays and three buttons.

The window draws what the display drivers were TOLD to show (the `RecordingDisplay`s standing in
for them), segment by segment through the same encoder the real drivers use (`hardware.sevenseg`),
so it shows exactly what a reference-build clock would light, and never asks the clock anything.
Keys close and open the contacts of gpiozero's mock pins (`Board.drive`), so every press goes
through the same queue, debounce and runner as on a Pi.

Keys: Left Shift (or z) = left player's button, Right Shift (or m) = right player's, Space = the
centre (neutralise). Holding works as on the real buttons. d = the director's menu, e = end the
game (the same as the long presses), q or Esc = quit. Beside each player's button is its turn LED,
read from the board's (mock) LED pins as the runner set them. With a keypad (`[keypad] enabled =
true`) the window is wider and draws it on the right: the number keys (top row or numeric keypad)
close its contacts, and `*` is the numeric keypad's `*` or `[`, `#` is `]` (or a `#` key that needs no
Shift: Shift is a player's button), held as long as the key is.

An idle window sleeps. pygame's `event.wait` wakes about 900 times a second whatever its timeout,
so the window does not use it: it sleeps in `select` on the X server's connection (so a key wakes
it at once) and on a pipe the displays and the board write to when the runner changes what they
show, with a timeout only for what nothing announces (a buzz that ends, the runner's thread
ending). Without an X connection (SDL's dummy or Wayland drivers) it polls the keys every `POLL_S`.

pygame (pygame-ce) is imported when a window is opened, never at module import time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import select
from typing import Any, Callable, Sequence

from rackside.game.messages import BUTTONS, KEYPAD_KEYS
from rackside.hardware import sevenseg
from rackside.hardware.wake import Waker

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
LED_LIT = (70, 235, 110)
LED_UNLIT = (24, 48, 30)

POLL_S = 0.04  # without an X connection to sleep on: poll keys 25 times a second
STOPPED_CHECK_S = 1.0  # how often an otherwise idle window checks `stopped()`
BUZZ_POLL_S = 0.05  # while the buzzer sounds (its beeps end on gpiozero's own thread, unannounced)
SETTLE_S = 0.002  # after an announced change, for the rest of the runner's batch
KEYPAD_W = 240  # the keypad's column on the right of the window, when one is fitted
KEY_SIZE, KEY_GAP = 52, 10
TEXT_ROW_H, TEXT_PAD = 32, 12  # the text display's rows (issue 40), under the buttons
LCD_BACK = (40, 70, 150)  # a blue-backlit character LCD
LCD_TEXT = (230, 236, 255)


def x_connection_fd(pygame: Any) -> int | None:
    """The X server connection's file descriptor of pygame's window, or None (not X11, or no
    libX11): what the window sleeps on instead of polling."""
    try:
        if pygame.display.get_driver() != "x11":
            return None
        capsule = pygame.display.get_wm_info().get("display")
        if capsule is None:
            return None
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        display = get_pointer(capsule, get_name(capsule))
        libx11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
        libx11.XConnectionNumber.restype, libx11.XConnectionNumber.argtypes = ctypes.c_int, [ctypes.c_void_p]
        fd = libx11.XConnectionNumber(display)
        return fd if fd >= 0 else None
    except Exception as exc:  # noqa: BLE001 - no fd: the window polls instead
        log.debug("no X connection to sleep on (%s); polling keys", exc)
        return None


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
    COMMANDS = {"K_d": "menu", "K_e": "end", "K_c": "call"}  # c: the director's call (issue 27), as # held
    QUIT_KEYS = ("K_ESCAPE", "K_q")

    # pygame key names -> keypad keys (digits: the top row and the numeric keypad)
    KEYPAD = {
        **{f"K_{d}": d for d in "0123456789"},
        **{f"K_KP{d}": d for d in "0123456789"},
        **{f"K_KP_{d}": d for d in "0123456789"},  # pygame 2's other spelling
        "K_KP_MULTIPLY": "*", "K_LEFTBRACKET": "*", "K_RIGHTBRACKET": "#", "K_HASH": "#",
    }

    KEY_NAMES = {"left": "Left Shift / z", "neutralise": "Space", "right": "Right Shift / m"}
    KEY_LINE = "Left Shift / z: left    Right Shift / m: right    Space: neutralise    d: director menu    e: end game    q: quit"
    KEYPAD_LINE = "    0-9 * # ([ ]): keypad (# held: call the director)"
    KEY_LINE_ENDED = "game over    d: director menu (rSEt or LEn: a new game)    q: quit"

    def __init__(
        self,
        board: Any,
        displays: Sequence[Any],
        *,
        size: tuple[int, int] = (1000, 470),
        title: str = "Rackside table clock (simulated)",
        key_help: Callable[[], dict | None] | None = None,
        keypad: Any = None,
        ended: Callable[[], bool] | None = None,
        text_display: Any = None,
    ) -> None:
        import pygame

        self.key_help = key_help or (lambda: None)  # the runner's menu_help: the menu's key line
        self.ended = ended or (lambda: False)  # after the end, the key line says how a new game starts
        self.pg = pygame
        # SDL would otherwise put the window's pixels through OpenGL; without a GPU (Xvfb, many
        # laptops' remote sessions) that is Mesa's llvmpipe, whose threads cost ~4x the CPU and ~10x
        # the wake-ups of a redraw. A plain shared-memory framebuffer is plenty for this window.
        os.environ.setdefault("SDL_FRAMEBUFFER_ACCELERATION", "0")
        pygame.display.init()
        pygame.font.init()
        self.board = board
        self.displays = list(displays)
        self.keypad = keypad  # hardware.keypad.Keypad on mock pins, or None: none fitted
        if keypad is not None:
            size = (size[0] + KEYPAD_W, size[1])
        self.text_display = text_display  # hardware.textdisplay.SimTextDisplay, or None: none fitted (issue 40)
        if text_display is not None:
            size = (size[0], size[1] + self._text_h())
        self.screen = pygame.display.set_mode(size)
        pygame.display.set_caption(title)
        self.keys = {getattr(pygame, k): v for k, v in self.KEYS.items()}
        self.commands = {getattr(pygame, k): v for k, v in self.COMMANDS.items()}
        self.quit_keys = {getattr(pygame, k) for k in self.QUIT_KEYS}
        self.keypad_keys = {getattr(pygame, k): v for k, v in self.KEYPAD.items() if hasattr(pygame, k)} if keypad is not None else {}
        self.keypad_held: dict[str, set[int]] = {k: set() for k in KEYPAD_KEYS}
        self.font = pygame.font.Font(None, 34)
        self.mono = pygame.font.SysFont("dejavusansmono,liberationmono,monospace", 26) if text_display is not None else None
        self.small = pygame.font.Font(None, 24)
        self.held: dict[str, set[int]] = {b: set() for b in BUTTONS}
        self.drawn: tuple[str, ...] | None = None  # the texts last drawn, read from the displays
        self._last_state: tuple | None = None
        self.wakeups = 0  # times the loop woke (the idle bench reads /proc; tests read this)
        self.draws = 0
        # Woken by whoever changes what is drawn (the runner, on its thread): a byte on a pipe.
        self.waker = Waker()
        self.waker.watch([*self.displays, *([text_display] if text_display is not None else [])], board)
        self.x_fd = x_connection_fd(pygame)
        self._expose = {getattr(pygame, name) for name in ("VIDEOEXPOSE", "WINDOWEXPOSED", "WINDOWSHOWN", "WINDOWRESTORED") if hasattr(pygame, name)}
        self._redraw = True

    def wake(self) -> None:
        """Make the loop look again (any thread; never blocks)."""
        self.waker.wake()

    # --- input ---------------------------------------------------------------------------------

    def handle(self, event: Any) -> bool:
        """Handle one pygame event; False when the user asked to quit."""
        pg = self.pg
        if event.type == pg.QUIT:
            return False
        if event.type in self._expose:
            self._redraw = True
        if event.type == pg.KEYDOWN:
            if event.key in self.quit_keys:
                return False
            if event.key in self.keys:
                self._key(self.keys[event.key], event.key, True)
            elif event.key in self.keypad_keys:
                self._keypad_key(self.keypad_keys[event.key], event.key, True)
            elif event.key in self.commands:
                self.board.command(self.commands[event.key])
        elif event.type == pg.KEYUP and event.key in self.keys:
            self._key(self.keys[event.key], event.key, False)
        elif event.type == pg.KEYUP and event.key in self.keypad_keys:
            self._keypad_key(self.keypad_keys[event.key], event.key, False)
        return True

    def _keypad_key(self, name: str, key: int, down: bool) -> None:
        keys = self.keypad_held[name]  # "1" and numpad 1: the contact is closed while either is held
        was = bool(keys)
        keys.add(key) if down else keys.discard(key)
        if bool(keys) != was:
            self.keypad.drive(name, bool(keys))

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
        board_w = width - (KEYPAD_W if self.keypad is not None else 0)  # the clock's own part of the window
        panel_w, panel_h = 420, 210
        gap = board_w - 2 * panel_w
        for i, text in enumerate(texts[:2]):
            px = gap / 3 + i * (panel_w + gap / 3)
            py = 78
            label = ("LEFT PLAYER", "RIGHT PLAYER")[i]
            surf = self.font.render(label, True, TEXT)
            screen.blit(surf, (px + (panel_w - surf.get_width()) / 2, py - 44))
            pg.draw.rect(screen, BEZEL, (px - 8, py - 8, panel_w + 16, panel_h + 16), border_radius=18)
            pg.draw.rect(screen, PANEL, (px, py, panel_w, panel_h), border_radius=12)
            self._draw_digits(text, px + 26, py + 30, panel_w - 52, panel_h - 60)
        base_h = height - (self._text_h() if self.text_display is not None else 0)
        self._draw_buttons(board_w, base_h)
        if self.text_display is not None:
            self._draw_text_display(board_w, base_h)
        if self.keypad is not None:
            self._draw_keypad(board_w)
        surf = self.small.render(self.key_line(), True, DIM_TEXT)
        screen.blit(surf, ((width - surf.get_width()) / 2, height - 34))
        if getattr(self.board, "buzzing", False):
            surf = self.font.render("BUZZ", True, BUTTON_DOWN)
            screen.blit(surf, (width - surf.get_width() - 20, 16))
        pg.display.flip()
        self.drawn = texts

    def _text_h(self) -> int:
        return TEXT_ROW_H * self.text_display.rows + 2 * TEXT_PAD + 40

    def _draw_text_display(self, board_w: int, top: int) -> None:
        """The text display's rows on a backlit panel under the buttons, each character as the LCD has it."""
        pg = self.pg
        lines = self.text_display.lines
        cell_w = self.mono.size("M")[0]
        w = cell_w * self.text_display.cols + 2 * TEXT_PAD
        h = TEXT_ROW_H * self.text_display.rows + 2 * TEXT_PAD
        x = (board_w - w) / 2
        y = top - 45
        pg.draw.rect(self.screen, BEZEL, (x - 6, y - 6, w + 12, h + 12), border_radius=8)
        pg.draw.rect(self.screen, LCD_BACK, (x, y, w, h), border_radius=4)
        for row, text in enumerate(lines):
            surf = self.mono.render(text, True, LCD_TEXT)
            self.screen.blit(surf, (x + TEXT_PAD, y + TEXT_PAD + row * TEXT_ROW_H))

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
        down = {name: self._is_down(name) for name in BUTTONS}
        for name, x, radius in (("left", width * 0.25, 44), ("neutralise", width * 0.5, 26), ("right", width * 0.75, 44)):
            if name == "neutralise":
                colour = CENTRE_DOWN if down[name] else CENTRE
            else:
                colour = BUTTON_DOWN if down[name] else BUTTON
            pg.draw.circle(self.screen, BEZEL, (x, y), radius + 6)
            pg.draw.circle(self.screen, colour, (x, y), radius)
        # The turn LEDs, beside each player's button on the side towards the centre.
        for side, x in (("left", width * 0.25 + 84), ("right", width * 0.75 - 84)):
            lit = self._led_lit(side)
            if lit:
                pg.draw.circle(self.screen, (LED_LIT[0] // 3, LED_LIT[1] // 3, LED_LIT[2] // 3), (x, y), 19)
            pg.draw.circle(self.screen, BEZEL, (x, y), 14)
            pg.draw.circle(self.screen, LED_LIT if lit else LED_UNLIT, (x, y), 11)

    def _draw_keypad(self, x0: float) -> None:
        """The keypad's 12 keys in its column on the right, a closed contact lit."""
        pg = self.pg
        grid_w = 3 * KEY_SIZE + 2 * KEY_GAP
        left, top = x0 + (KEYPAD_W - grid_w) / 2, 78
        surf = self.font.render("KEYPAD", True, TEXT)
        self.screen.blit(surf, (left + (grid_w - surf.get_width()) / 2, top - 44))
        for i, key in enumerate(KEYPAD_KEYS):
            r, c = divmod(i, 3)
            rect = (left + c * (KEY_SIZE + KEY_GAP), top + r * (KEY_SIZE + KEY_GAP), KEY_SIZE, KEY_SIZE)
            pg.draw.rect(self.screen, BUTTON_DOWN if self._key_down(key) else BUTTON, rect, border_radius=8)
            label = self.font.render(key, True, PANEL)
            self.screen.blit(label, (rect[0] + (KEY_SIZE - label.get_width()) / 2, rect[1] + (KEY_SIZE - label.get_height()) / 2))

    def _key_down(self, key: str) -> bool:
        try:
            return bool(self.keypad.is_down(key))
        except Exception:  # noqa: BLE001 - a closed keypad: draw the key up
            return False

    def _led_lit(self, side: str) -> bool:
        try:
            return bool(self.board.led_lit(side))
        except Exception:  # noqa: BLE001 - a board without LEDs (or closed): drawn unlit
            return False

    def _is_down(self, name: str) -> bool:
        try:
            return bool(self.board.is_down(name))
        except Exception:  # noqa: BLE001 - a closed board: draw the button up
            return False

    def key_line(self) -> str:
        """What each key does: in the director's menu, what it does there (issue 10)."""
        help_ = self.key_help()
        if not help_:
            return (self.KEY_LINE_ENDED if self.ended() else self.KEY_LINE) + (self.KEYPAD_LINE if self.keypad is not None else "")
        return "director's menu   " + "   ".join(f"{self.KEY_NAMES[b]}: {help_[b]}" for b in ("left", "neutralise", "right"))

    def _state(self) -> tuple:
        return (
            self.texts(),
            self.text_display.lines if self.text_display is not None else (),
            tuple(self._is_down(n) for n in BUTTONS),
            getattr(self.board, "buzzing", False),
            (self._led_lit("left"), self._led_lit("right")),
            self.key_line(),
            tuple(self._key_down(k) for k in KEYPAD_KEYS) if self.keypad is not None else (),
        )

    # --- main loop -----------------------------------------------------------------------------

    def run(self, stopped: Callable[[], bool] = lambda: False) -> None:
        """Until the user quits (or `stopped()`): handle keys, redraw when anything shown changed,
        and otherwise sleep (see the module docstring)."""
        try:
            while not stopped():
                if not self.step():
                    return
                self.sleep(self.timeout_s())
        finally:
            self.close()

    def step(self) -> bool:
        """Handle every pending event and redraw if anything shown changed; False to quit."""
        if not self.poll():
            return False
        state = self._state()
        if state != self._last_state or self._redraw:
            self._last_state, self._redraw = state, False
            self.draw()
            self.draws += 1
        return True

    def timeout_s(self) -> float:
        """How long the loop may sleep when nothing wakes it."""
        timeout = STOPPED_CHECK_S
        if self.x_fd is None or not self.waker.announced:
            timeout = POLL_S
        if getattr(self.board, "buzzing", False):
            timeout = min(timeout, BUZZ_POLL_S)
        return timeout

    def sleep(self, timeout_s: float) -> None:
        """Until a key (the X connection is readable), an announced change (the pipe), or the timeout."""
        waker = self.waker.fileno()
        fds = [waker] + ([self.x_fd] if self.x_fd is not None else [])
        ready, _, _ = select.select(fds, [], [], timeout_s)
        self.wakeups += 1
        if waker in ready:
            self.waker.drain()
            # The runner tells both displays and the LEDs in one go: give it a moment to finish,
            # so one change is drawn once, never half-told.
            if select.select([waker], [], [], SETTLE_S)[0]:
                self.waker.drain()

    def save(self, path: str) -> None:
        self.draw()
        self.pg.image.save(self.screen, str(path))

    def close(self) -> None:
        self.waker.close()
        self.pg.display.quit()
