"""The simulated board in a terminal, for machines without a display (or `--terminal`).

Draws what the display drivers were told to show as large 7-segment digits (through the same
encoder the real drivers use, `hardware.sevenseg`), redrawing in place with ANSI escapes only when
a text changes. Reads keys in cbreak mode (Ctrl-C still interrupts).

A terminal reports key presses but not key releases, and not Shift on its own, so the keys are:
z = left player's button, m = right player's, Space = the centre (neutralise); each key press
closes the mock pin's contact and opens it again `TAP_S` later. Every character is one press (a
held key repeats it, as a terminal repeats keys), and a press that comes while the last one's
contact is still closed is tapped right after it, never merged into it (issue 35 item 6: 25
presses 0.1 s apart are 25 presses): `Taps`. Long presses cannot be held in a terminal: d opens
the director's menu, e ends the game and c calls the director instead; q quits. The turn LEDs are
drawn beside the players' keys, `(*)` lit and `( )` dark, as the runner set the board's LED pins.
With a keypad (`[keypad] enabled = true`) the keys 0-9, `*` and `#` (or `[` and `]`) tap its
contacts the same way, and it is drawn on the right, a key held shown `[5]`.
"""

from __future__ import annotations

import os
import select
import sys
import time
from typing import Any, Callable, Sequence

from rackside.game.messages import BUTTONS, KEYPAD_KEYS
from rackside.hardware import sevenseg
from rackside.hardware.wake import Waker

KEYS = {"z": "left", "Z": "left", "m": "right", "M": "right", " ": "neutralise"}
KEYPAD = {**{k: k for k in KEYPAD_KEYS}, "[": "*", "]": "#"}  # characters -> keypad keys
# c: the director's call (issue 27), which a keypad makes with # held and the buttons with both
# player buttons held and the centre: neither can be held in a terminal
COMMANDS = {"d": "menu", "D": "menu", "e": "end", "E": "end", "c": "call", "C": "call"}
QUIT = {"q", "Q", "\x1b", "\x03", "\x04"}
TAP_S = 0.12
# A press kept while the contact was closed: the contact stays closed at least MIN_DOWN_S, then open
# GAP_S, both twice the debouncer's settle time (firmware.debounce, 15 ms), so it is a press of its own
MIN_DOWN_S = GAP_S = 0.03
MAX_QUEUED = 4  # presses kept per key: a held key's repeat (about 30 a second) builds no backlog
STOPPED_CHECK_S = 1.0  # an otherwise idle terminal checks `stopped()` this often
POLL_S = 0.05  # when a display cannot announce its changes

RED = "\x1b[1;31m"
GREEN = "\x1b[1;32m"
DIM = "\x1b[2m"
RESET = "\x1b[0m"
HOME_CLEAR = "\x1b[H\x1b[2J"
HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"


def big_digits(text: "str | sevenseg.Frame") -> list[str]:
    """Three rows of ASCII 7-segment art for what a 4-digit module shows for `text` (or a frame of
    raw segments, as the self-test lights them)."""
    try:
        frame = sevenseg.frame_of(text)
    except ValueError:
        frame = sevenseg.Frame(cells=(sevenseg.GLYPHS["-"],) * sevenseg.DIGITS, colon=False)
    rows = ["", "", ""]
    for i, bits in enumerate(frame.cells):
        a, b, c, d, e, f, g = ((bits >> s) & 1 for s in range(7))
        rows[0] += " " + ("_" if a else " ") + "  "
        rows[1] += ("|" if f else " ") + ("_" if g else " ") + ("|" if b else " ") + " "
        rows[2] += ("|" if e else " ") + ("_" if d else " ") + ("|" if c else " ") + " "
        if i == sevenseg.COLON_AFTER:
            dot = "o" if frame.colon else " "
            rows[0] += "  "
            rows[1] += dot + " "
            rows[2] += dot + " "
    return rows


KEY_NAMES = {"left": "z", "neutralise": "space", "right": "m"}
KEY_LINE = "z: left  m: right  space: neutralise  d: director menu  e: end game  q: quit"
# After the end "e: end game" does nothing: say how the next game starts instead (the menu's rSEt/LEn)
KEY_LINE_ENDED = "game over   d: director menu (rSEt or LEn: a new game)  q: quit"


def key_line(help_: dict[str, str] | None, ended: bool = False) -> str:
    """The key line: what each key does in the director's menu (`help_`), else the usual one, or
    after the game's end the one that says how a new game starts."""
    if not help_:
        return KEY_LINE_ENDED if ended else KEY_LINE
    return "director's menu   " + "   ".join(f"{KEY_NAMES[b]}: {help_[b]}" for b in ("left", "neutralise", "right"))


KEYPAD_LINE = "  0-9 * # ([ ]): keypad  c: call the director"


def keypad_rows(held: Sequence[str] = ()) -> list[str]:
    """The keypad drawn in four rows, a held key in brackets: ' 1  [2]  3 '."""
    cells = [f"[{k}]" if k in held else f" {k} " for k in KEYPAD_KEYS]
    return ["KEYPAD"] + [" ".join(cells[i : i + 3]) for i in range(0, len(cells), 3)]


def screen(
    texts: Sequence[str], down: dict[str, bool] | None = None, keys: str = KEY_LINE, leds: Sequence[bool] = (False, False),
    keypad: Sequence[str] | None = None, text: Sequence[str] | None = None,
) -> str:
    """The whole screen for the displays' `texts` (left, right), which buttons are held, the key
    line, which turn LEDs (left, right) are lit, and the keypad's held keys (None: no keypad)."""
    down = down or {}
    led = [f"{GREEN}(*){RESET}" if lit else "( )" for lit in leds]
    left, right = big_digits(texts[0]), big_digits(texts[1]) if len(texts) > 1 else big_digits("")
    lines = [
        HOME_CLEAR + "  Rackside table clock (simulated board)",
        "",
        "   LEFT PLAYER             RIGHT PLAYER",
    ]
    for l_row, r_row in zip(left, right):
        lines.append(f"   {RED}{l_row:<22}{RESET}  {RED}{r_row}{RESET}")
    if text is not None:  # the optional text display (issue 40), framed under the 4-digit displays
        width = max((len(row) for row in text), default=0)
        lines += ["", "   +" + "-" * (width + 2) + "+"] + [f"   | {GREEN}{row:<{width}}{RESET} |" for row in text]
        lines.append("   +" + "-" * (width + 2) + "+")
    marks = {name: ("[#]" if down.get(name) else "[ ]") for name in ("left", "neutralise", "right")}
    lines += [
        "",
        f"   {marks['left']} z {led[0]}           {marks['neutralise']} space      {led[1]} {marks['right']} m",
        "",
        f"   {DIM}{keys}{RESET}",
    ]
    if keypad is not None:  # on the right of the displays and buttons
        width = 52
        for i, row in enumerate(keypad_rows(keypad)):
            at = 2 + i
            lines[at] = lines[at] + " " * max(0, width - _visible(lines[at])) + "   " + row
    return "\r\n".join(lines) + "\r\n"


def _visible(line: str) -> int:
    """The length of `line` on the screen (without its escapes)."""
    import re

    return len(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", line))


class Taps:
    """The contacts a terminal's keys tap, one `Taps` for the buttons and one for the keypad.

    A terminal reports each key press (a held key as the terminal's key repeat) and no release, so
    every character is one press: the contact closes at once and opens `TAP_S` later. A press that
    comes while the contact is still closed, or while it is open between two presses, is kept (at
    most `MAX_QUEUED` of them, so a held key's repeat builds no backlog) and tapped as soon as the
    debouncer can see it as a press of its own: the contact closed at least `MIN_DOWN_S`, open
    `GAP_S`, then closed again. So no press a person can make (presses 0.1 s apart) merges into the
    one before (issue 35 item 6)."""

    def __init__(self, drive: Callable[[str, bool], None]) -> None:
        self.drive = drive  # the mock pin's contact: drive(name, closed)
        self.closed: dict[str, float] = {}  # name -> when its contact closed
        self.release_at: dict[str, float] = {}  # name -> when its closed contact opens
        self.press_at: dict[str, float] = {}  # name -> when its open contact closes for a kept press
        self.queued: dict[str, int] = {}  # name -> presses kept, not yet tapped

    def press(self, name: str, now: float) -> None:
        if name not in self.closed and name not in self.press_at:
            self._close(name, now)
            return
        self.queued[name] = min(self.queued.get(name, 0) + 1, MAX_QUEUED)
        if name in self.closed:  # cut the tap short, as soon as the debouncer sees a press
            self.release_at[name] = min(self.release_at[name], self.closed[name] + MIN_DOWN_S)

    def _close(self, name: str, now: float) -> None:
        self.drive(name, True)
        self.closed[name] = now
        self.release_at[name] = now + (MIN_DOWN_S if self.queued.get(name) else TAP_S)

    def due(self, now: float) -> None:
        """Open and close the contacts whose moment has come."""
        for name, at in list(self.release_at.items()):
            if now >= at:
                del self.release_at[name]
                del self.closed[name]
                self.drive(name, False)
                if self.queued.get(name):
                    self.press_at[name] = now + GAP_S
        for name, at in list(self.press_at.items()):
            if now >= at:
                del self.press_at[name]
                self.queued[name] -= 1
                self._close(name, now)

    def next_at(self) -> float | None:
        """The next moment `due` has something to do, or None."""
        return min([*self.release_at.values(), *self.press_at.values()], default=None)

    def down(self) -> tuple[str, ...]:
        return tuple(sorted(self.closed))

    def open_all(self) -> None:
        for name in list(self.closed):
            self.drive(name, False)
        self.closed.clear()
        self.release_at.clear()
        self.press_at.clear()
        self.queued.clear()


class TerminalSim:
    def __init__(self, board: Any, displays: Sequence[Any], *, stdin: Any = None, stdout: Any = None, key_help: Callable[[], dict | None] | None = None,
                 keypad: Any = None, ended: Callable[[], bool] | None = None, text_display: Any = None) -> None:
        self.board = board
        self.text_display = text_display  # hardware.textdisplay.SimTextDisplay, or None: none fitted
        self.keypad = keypad  # hardware.keypad.Keypad on mock pins, or None: none fitted
        self.key_help = key_help or (lambda: None)  # the runner's menu_help: the menu's key line
        self.ended = ended or (lambda: False)  # whether the game has ended: the key line after the end
        self.displays = list(displays)
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.buttons = Taps(board.drive)
        self.keys = Taps(keypad.drive) if keypad is not None else None
        self.drawn: tuple | None = None

    def key(self, ch: str) -> bool:
        """Handle one key; False to quit."""
        if ch in QUIT:
            return False
        if ch in KEYS:
            self.buttons.press(KEYS[ch], time.monotonic())
        elif ch in KEYPAD and self.keys is not None:
            self.keys.press(KEYPAD[ch], time.monotonic())
        elif ch in COMMANDS:
            self.board.command(COMMANDS[ch])
        return True

    def release_due(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        for taps in self._taps():
            taps.due(now)

    def _taps(self) -> list[Taps]:
        return [self.buttons] if self.keys is None else [self.buttons, self.keys]

    def draw(self) -> None:
        texts = tuple(d.text for d in self.displays)
        down = {n: n in self.buttons.closed for n in BUTTONS}
        keys = key_line(self.key_help(), self.ended()) + (KEYPAD_LINE if self.keypad is not None else "")
        leds = tuple(self._led_lit(side) for side in ("left", "right"))
        held = self.keys.down() if self.keys is not None else None
        text = tuple(self.text_display.lines) if self.text_display is not None else None
        state = (texts, tuple(sorted(down.items())), keys, leds, held, text)
        if state != self.drawn:
            self.drawn = state
            self.stdout.write(screen(texts, down, keys, leds, held, text))
            self.stdout.flush()

    def _led_lit(self, side: str) -> bool:
        try:
            return bool(self.board.led_lit(side))
        except Exception:  # noqa: BLE001 - a board without LEDs (or closed): drawn dark
            return False

    def run(self, stopped: Callable[[], bool] = lambda: False) -> None:
        fd = self.stdin.fileno()
        is_tty = os.isatty(fd)
        saved = None
        if is_tty:
            import termios
            import tty

            saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)
        self.stdout.write(HIDE_CURSOR)
        # Sleep until a key, a change the runner announces (hardware.wake), or a tap's release:
        # never on a poll timer when nothing happens.
        waker = Waker()
        waker.watch([*self.displays, *([self.text_display] if self.text_display is not None else [])], self.board)
        try:
            while not stopped():
                self.release_due()
                self.draw()
                timeout = STOPPED_CHECK_S if waker.announced else POLL_S
                pending = [at for taps in self._taps() if (at := taps.next_at()) is not None]
                if pending:
                    timeout = min(timeout, max(0.0, min(pending) - time.monotonic()))
                ready, _, _ = select.select([fd, waker.fileno()], [], [], timeout)
                if waker.fileno() in ready:
                    waker.drain()
                if fd in ready:
                    data = os.read(fd, 64).decode("utf-8", "replace")
                    if not data:
                        return
                    if not all([self.key(ch) for ch in data]):
                        return
        finally:
            waker.close()
            for taps in self._taps():
                taps.open_all()
            self.stdout.write(SHOW_CURSOR + RESET + "\r\n")
            self.stdout.flush()
            if saved is not None:
                import termios

                termios.tcsetattr(fd, termios.TCSADRAIN, saved)
