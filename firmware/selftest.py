"""`rackside clock selftest`: the builder's pre-event walk through every part of one clock.

    rackside clock selftest              on the pins of the pin map (a Pi), with its displays
    rackside clock selftest --simulate   on gpiozero's mock pins, drawn in this terminal

It asks for each button in turn (left, right, centre) and waits for that press, up to `--timeout`
seconds; then, with the left button as "yes" and the right as "no", it lights each segment of each
display (on all four digits at once), the colon and each digit in turn, each turn LED and the
buzzer, and asks whether the builder sees (or hears) it; a text display ([text_display], issue 40)
shows a numbered pattern on every row. One line per part, PASS or FAIL with the
reason (no press, the other button answered: wires swapped?, a display that does not acknowledge,
"no" answered), then a total; exit status 0 only when every fitted part passed. A part the pin map
has not fitted (`driver = "none"`, `[buzzer] enabled = false`) is a SKIP line.

The walk uses the clock's own adapters, on the same pin map as `rackside clock`: the buttons'
edges arrive on `hardware.board.Board`'s queue (dated, as for the clock), the displays are opened
by their drivers (`hardware.drivers`), the LEDs and buzzer are the board's gpiozero devices. With
`--simulate` the keys z (left), m (right) and Space (centre) close and open the mock pins' contacts,
exactly as the simulated clock's terminal does, and the simulated board is drawn after every change.

It is not part of the clock: it writes no journal and never runs while a clock runs on the same
pins (gpiozero refuses a pin that is in use, which is reported in one line).
"""

from __future__ import annotations

import argparse
import os
import queue
import select
import string
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from rackside.game.messages import BUTTONS, Edge
from rackside.hardware import sevenseg
from rackside.hardware.display import NullDisplay

DEFAULT_TIMEOUT_S = 30.0
SETTLE_S = 0.05  # a contact's bounce after a press: edges closer than this belong to the same press
BUTTON_WORDS = {"left": "LEFT", "right": "RIGHT", "neutralise": "CENTRE (neutralise)"}
SEGMENT_NAMES = {"a": "top", "b": "upper right", "c": "lower right", "d": "bottom", "e": "lower left", "f": "upper left", "g": "middle"}
EIGHT = sevenseg.GLYPHS["8"]
PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"


@dataclass(frozen=True)
class Result:
    part: str
    status: str  # PASS, FAIL or SKIP
    detail: str = ""

    def line(self) -> str:
        return f"{self.status}  {self.part}" + (f": {self.detail}" if self.detail else "")


def display_steps() -> list[tuple[str, sevenseg.Frame, str]]:
    """(part, frame, question) for one display: each segment on all digits, the colon, each digit."""
    steps = []
    for i, (name, where) in enumerate(SEGMENT_NAMES.items()):
        steps.append((f"segment {name}", sevenseg.Frame(cells=(1 << i,) * sevenseg.DIGITS, colon=False),
                      f"the {where} segment ({name}) alone, on all {sevenseg.DIGITS} digits?"))
    steps.append(("colon", sevenseg.Frame(cells=(0,) * sevenseg.DIGITS, colon=True), "the colon alone?"))
    for d in range(sevenseg.DIGITS):
        cells = tuple(EIGHT if j == d else 0 for j in range(sevenseg.DIGITS))
        steps.append((f"digit {d + 1}", sevenseg.Frame(cells=cells, colon=False), f"an 8 on digit {d + 1} (from the left) alone?"))
    return steps


class SelfTest:
    """The walk over one board and its two displays.

    `say(text)` prints a prompt or a result line. `keys(timeout_s)`, on the simulated board, waits
    up to `timeout_s` for the builder's keys and drives the mock pins (None on real pins: the
    builder presses the real buttons). `on_change()` is called after every display, LED or buzzer
    change, before its question (the simulator draws the board then). `timeout_s` bounds each wait.
    """

    def __init__(
        self,
        board: Any,
        displays: dict[str, Any],
        *,
        say: Callable[[str], None],
        pin_names: dict[str, int] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        keys: Callable[[float], None] | None = None,
        on_change: Callable[[], None] = lambda: None,
        monotonic: Callable[[], float] = time.monotonic,
        text_display: Any = None,
    ) -> None:
        self.board = board
        self.text_display = text_display  # hardware.textdisplay's, or None: none fitted
        self.displays = displays
        self.say = say
        self.pins = pin_names or {}
        self.timeout_s = timeout_s
        self.keys = keys
        self.on_change = on_change
        self.monotonic = monotonic
        self.results: list[Result] = []

    # --- waiting for a press --------------------------------------------------------------------
    def _next_edge(self, timeout_s: float) -> Any:
        if self.keys is not None:
            try:
                return self.board.events.get_nowait()
            except queue.Empty:
                self.keys(timeout_s)  # returns after a key (the mock pins' edges are queued) or the timeout
                try:
                    return self.board.events.get_nowait()
                except queue.Empty:
                    return None
        try:
            return self.board.events.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def press(self) -> str | None:
        """The next button pressed (after its release and bounce), or None after `timeout_s`."""
        deadline = self.monotonic() + self.timeout_s
        while (left := deadline - self.monotonic()) > 0:
            edge = self._next_edge(left)
            if isinstance(edge, Edge) and edge.down:
                self._settle(edge.button, deadline)
                return edge.button
        return None

    def _settle(self, button: str, deadline: float) -> None:
        # Wait for the release (up to the step's deadline), then until the contact is quiet.
        while self.board.is_down(button) and (left := deadline - self.monotonic()) > 0:
            self._next_edge(min(left, SETTLE_S))
        while True:
            try:
                self.board.events.get(timeout=SETTLE_S)
            except queue.Empty:
                return

    def _record(self, part: str, status: str, detail: str = "") -> Result:
        result = Result(part, status, detail)
        self.results.append(result)
        self.say(result.line())
        return result

    # --- the parts ------------------------------------------------------------------------------
    def buttons(self) -> None:
        held = [name for name, down in self.board.initially_down().items() if down]
        for name in BUTTONS:
            part = f"{name} button" + (f" (BCM {self.pins[name]})" if name in self.pins else "")
            if name in held:
                self._record(part, FAIL, "closed before it was pressed (shorted to ground, or held?)")
                continue
            self.say(f"  Press the {BUTTON_WORDS[name]} button (waiting {self.timeout_s:g} s)")
            got = self.press()
            if got is None:
                self._record(part, FAIL, f"no press in {self.timeout_s:g} s")
            elif got != name:
                self._record(part, FAIL, f"the {got} button answered instead (wires swapped?)")
            else:
                self._record(part, PASS)

    def can_ask(self) -> bool:
        """Questions are answered with the left (yes) and right (no) buttons: both must work."""
        return all(r.status == PASS for r in self.results if r.part.startswith(("left button", "right button")))

    def ask(self, part: str, question: str) -> Result:
        if not self.can_ask():
            return self._record(part, FAIL, "not checked: the left and right buttons answer the questions, and one failed")
        self.on_change()  # the simulator draws the board as the builder is asked about it
        self.say(f"  {question}  [LEFT = yes, RIGHT = no; {self.timeout_s:g} s]")
        while True:
            got = self.press()
            if got == "left":
                return self._record(part, PASS)
            if got == "right":
                return self._record(part, FAIL, "the builder answered no")
            if got is None:
                return self._record(part, FAIL, f"no answer in {self.timeout_s:g} s")

    def display(self, side: str) -> None:
        display = self.displays[side]
        title = f"{side} display"
        if isinstance(display, NullDisplay):
            self._record(title, SKIP, 'not fitted (driver = "none")')
            return
        for part, frame, question in display_steps():
            display.show(frame)
            if not getattr(display, "ok", True):  # a real module that does not acknowledge
                self._record(title, FAIL, f"not answering ({display.outage.reason})")
                break
            self.ask(f"{title} {part}", f"{title.capitalize()}: {question}")
        display.show(" ")

    def text(self) -> None:
        """The text display: each row numbered and filled, so a dead row or a wrong size shows."""
        d = self.text_display
        if d is None:
            self._record("text display", SKIP, "not fitted (no [text_display])")
            return
        d.show(text_pattern(d.cols, d.rows))
        outage = getattr(d, "outage", None)
        if outage is not None and outage.active:  # a device that did not answer on the bus
            self._record("text display", FAIL, f"not answering ({outage.reason})")
            return
        self.ask("text display", f"Text display: {d.rows} rows, each 'Row n' and letters to its last ({d.cols}th) column?")
        d.show(tuple(" " * d.cols for _ in range(d.rows)))

    def leds(self) -> None:
        if not self.board.leds:
            self._record("turn LEDs", SKIP, "not fitted ([leds] enabled = false)")
            return
        for side in ("left", "right"):
            pin = self.pins.get(f"led {side}")
            self.board.set_led(side, True)
            self.ask(f"{side} turn LED" + (f" (BCM {pin})" if pin else ""), f"LEDs: the {side.upper()} turn LED lit, the other dark?")
            self.board.set_led(side, False)

    def buzzer(self) -> None:
        buzzer = self.board.buzzer
        if buzzer is None:
            self._record("buzzer", SKIP, "not fitted ([buzzer] enabled = false)")
            return
        buzzer.on()
        try:
            self.ask("buzzer" + (f" (BCM {self.pins['buzzer']})" if "buzzer" in self.pins else ""), "Buzzer: sounding?")
        finally:
            buzzer.off()

    def run(self) -> list[Result]:
        self.buttons()
        for side in ("left", "right"):
            self.display(side)
        self.text()
        self.leds()
        self.buzzer()
        counts = {s: sum(r.status == s for r in self.results) for s in (PASS, FAIL, SKIP)}
        self.say(f"self-test: {counts[PASS]} passed, {counts[FAIL]} failed, {counts[SKIP]} not fitted")
        return self.results


def text_pattern(cols: int, rows: int) -> tuple[str, ...]:
    """Row n: "Row n " then letters up to the last column, which shows a '|'."""
    filler = string.ascii_uppercase * 2
    return tuple((f"Row {n + 1} " + filler)[: cols - 1] + "|" for n in range(rows))


# --- the simulated board in the terminal ---------------------------------------------------------

SIM_KEYS = {"z": "left", "m": "right", " ": "neutralise"}


class TerminalKeys:
    """The simulated board's buttons from this terminal's keys (cbreak mode, as the clock's
    terminal simulator reads them); q or Esc stops the walk."""

    def __init__(self, board: Any, stdin: Any) -> None:
        self.board = board
        self.fd = stdin.fileno()

    def __call__(self, timeout_s: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout_s))
        if not ready:
            return
        for ch in os.read(self.fd, 64).decode("utf-8", "replace"):
            if ch in ("q", "Q", "\x1b", "\x03", "\x04"):
                raise KeyboardInterrupt
            button = SIM_KEYS.get(ch.lower())
            if button is not None:
                self.board.drive(button, True)
                self.board.drive(button, False)


def sim_drawing(board: Any, displays: dict[str, Any], out: Any, text_display: Any = None) -> Callable[[], None]:
    """Draw the simulated board (both displays as 7-segment art, the LEDs, the buzzer) after a change."""
    from rackside.hardware.terminal import big_digits

    def draw() -> None:
        rows = [big_digits(getattr(displays[s], "text", "") or " ") for s in ("left", "right")]
        leds = ["(*)" if board.led_lit(s) else "( )" for s in ("left", "right")]
        sound = "BZZZ" if board.buzzing else "    "
        lines = ["    simulated board:  LEFT                  RIGHT"]
        lines += [f"                      {l_row:<22}{r_row}" for l_row, r_row in zip(*rows)]
        lines.append(f"    turn LEDs  {leds[0]} left   {leds[1]} right    buzzer {sound}")
        if text_display is not None:
            lines += [f"    text display  |{row}|" for row in text_display.lines]
        out.write("\r\n".join(lines) + "\r\n")
        out.flush()

    return draw


def run(args: argparse.Namespace, *, config_file: Any, display_spec: Callable[[Any, str, bool], dict], exit_config: int) -> int:
    """The command: load the pin map as `rackside clock` would (`firmware.cli` gives its config
    file, its display tables and its exit status for a bad config), open everything, walk, report."""
    from gpiozero.exc import GPIOZeroError

    from rackside.firmware.config import ConfigError, load_config
    from rackside.hardware.board import Board
    from rackside.hardware.drivers import open_display

    out = sys.stdout
    try:
        config = load_config(config_file)
    except ConfigError as exc:
        print(f"rackside clock selftest: {exc}", file=sys.stderr)
        return exit_config
    pins, simulated = config.pins, bool(args.simulate)
    factory = None
    if simulated:
        from gpiozero.pins.mock import MockFactory

        factory = MockFactory()
    try:
        if factory is None:
            from rackside.hardware.board import gpio_factory

            factory = gpio_factory(pins.chip)  # the clock's own back-end and chip ([pins] chip)
        board = Board(pins.buttons, buzzer_pin=pins.buzzer, pin_factory=factory, led_pins=pins.leds)
    except GPIOZeroError as exc:
        print(f"rackside clock selftest: cannot use the GPIO pins ({exc}); stop the clock first "
              "(systemctl stop rackside-clock), or try the walk on `--simulate`", file=sys.stderr)
        return 1
    displays = {
        side: open_display(display_spec(pins, side, simulated), name=f"{side} display", pin_factory=board.factory)
        for side in ("left", "right")
    }
    from rackside.hardware.textdisplay import open_text_display

    text_display = open_text_display(config.text_display, simulated=simulated)
    names = {**pins.buttons, **{f"led {s}": b for s, b in pins.leds.items()}}
    if pins.buzzer is not None:
        names["buzzer"] = pins.buzzer
    saved = None
    keys = on_change = None
    if simulated:
        keys = TerminalKeys(board, sys.stdin)
        on_change = sim_drawing(board, displays, out, text_display)
        if os.isatty(keys.fd):
            import termios
            import tty

            saved = termios.tcgetattr(keys.fd)
            tty.setcbreak(keys.fd)
    say = (lambda text: (out.write(text + "\r\n"), out.flush())) if simulated else (lambda text: print(text, flush=True))
    say(f"Rackside clock self-test ({'simulated board: z = left, m = right, space = centre, q = quit' if simulated else 'the pins of ' + str(config.path)})")
    test = SelfTest(board, displays, say=say, pin_names=names, timeout_s=args.timeout, keys=keys,
                    on_change=on_change or (lambda: None), text_display=text_display)
    try:
        results = test.run()
    except KeyboardInterrupt:
        say("self-test stopped before the end")
        return 1
    finally:
        if saved is not None:
            import termios

            termios.tcsetattr(keys.fd, termios.TCSADRAIN, saved)
        for display in displays.values():
            display.close()
        if text_display is not None:
            text_display.close()
        board.close()
    return 0 if all(r.status != FAIL for r in results) else 1
