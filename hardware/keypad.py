"""The optional 3x4 membrane keypad (digits, `*`, `#`), scanned through gpiozero's pins.

gpiozero has no keypad class, so this is hand-written, on gpiozero's pins (the pin factory the
board uses: lgpio on a Pi, MockFactory in tests and the simulator, which `MockMatrix` wires up).

Wiring (hardware/pins.toml `[keypad]`): the keypad's 4 row lines and 3 column lines go straight to
7 GPIOs, no other parts. The columns are inputs with the Pi's internal pull-ups, each an
`EdgeButton` like the clock's buttons (`hardware.board`), so their edges are dated the same way;
the rows are plain gpiozero `GPIODevice`s whose pins we switch between driving low and letting go.

Waiting (no key touched): every row is driven low and the thread sleeps on an event. A key joins
its row to its column, pulling the column low; that falling edge's callback (the pin back-end's
thread) notes its time and sets the event. Nothing wakes while nobody touches a key, so the idle
targets of docs/performance.md hold (bench/idle.py measures it).

Scanning (after an edge): every row is let go (an input, high impedance), then each row alone is
driven low and the columns read: a low column is a closed key in that row; then every row is
driven low again. Rows are let go rather than driven high, so two keys of one column pressed
together never join a high output to a low one. While any key is down (or its release is not yet
final) the scanner scans again every `SCAN_INTERVAL_NS`: a second key in the column of a held one
makes no edge (the column is low already), so only a scan can find it. Once every key is released
and settled it goes back to waiting.

Debounce: one `firmware.debounce.Debouncer` a key, fed what the scans see, so keys follow the
buttons' rules: a press is accepted at its first closing edge if the key had been open `settle_ns`;
a held key never repeats; a release is final after `settle_ns` open.

Timestamps (every input carries its own): a key found closed is dated at its column's first
falling edge since the previous scan (the edge that woke the scanner, dated from the back-end's
ticks like the buttons' edges); a key whose column made no edge (another key of that column was
held) is dated at the scan that found it, at most `SCAN_INTERVAL_NS` late. A release is dated at
the scan that found the key open. The edges our own scanning causes (a row driven low against a
held key) are not a key's: they happen during a scan, and are told apart by that.

Two keys at once: both are reported, each press when it is found, in the order of their times
(the same time: keypad order). That is 2-key rollover: fast typing (the next digit down before the
last one is up) loses nothing. Three keys down on a matrix without diodes can make a fourth look
pressed (ghosting), so a scan that sees more than `MAX_KEYS_DOWN` keys down takes no new key from it.

A key released during a scan (before its row was read) is simply not found: nothing is reported,
and the scanner goes back to waiting. A contact that bounces open at the moment of a scan shows as a
short release, which the debouncer ignores.

What it delivers: `Key(t_ns, key, down)` (`game.messages`) on the board's one queue: a press
accepted (`down`), and its release once final. No gpiozero import happens at module import time.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Sequence

from rackside.firmware.debounce import DEFAULT_SETTLE_NS, Debouncer
from rackside.game.messages import KEYPAD_KEYS, Key
from rackside.hardware.board import edge_button_class

log = logging.getLogger(__name__)

COLUMNS = 3
LAYOUT = tuple(tuple(KEYPAD_KEYS[i : i + COLUMNS]) for i in range(0, len(KEYPAD_KEYS), COLUMNS))  # rows of keys
ROWS = len(LAYOUT)
POSITION = {key: (r, c) for r, keys in enumerate(LAYOUT) for c, key in enumerate(keys)}
SCAN_INTERVAL_NS = 10_000_000  # while a key is down: a scan every 10 ms (well inside the 15 ms settle time)
MAX_KEYS_DOWN = 2  # more down at once could be a ghost (see the module docstring)
CLOSE_TIMEOUT_S = 2.0


class Keypad:
    """The keypad's scanner: `rows` (4) and `columns` (3) are BCM numbers, top row and left column
    first. `board` is the clock's `hardware.board.Board`: its pin factory, its queue and its way of
    dating an edge. `start()` starts the scanner's thread; without it (tests) call `service()` after
    each change, as the thread would."""

    def __init__(
        self,
        rows: Sequence[int],
        columns: Sequence[int],
        *,
        board: Any,
        settle_ns: int = DEFAULT_SETTLE_NS,
        scan_interval_ns: int = SCAN_INTERVAL_NS,
    ) -> None:
        if len(rows) != ROWS or len(columns) != COLUMNS:
            raise ValueError(f"a 3x4 keypad has {ROWS} rows and {COLUMNS} columns, got {len(rows)} and {len(columns)}")
        from gpiozero import GPIODevice

        self.events = board.events
        self._clock_ns = board.clock_ns
        self._edge_ns = board.edge_ns
        self.factory = board.factory
        self.scan_interval_s = scan_interval_ns / 1e9
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._fell: list[int | None] = [None] * COLUMNS  # each column's first real falling edge since the last scan
        self._scanning = False
        self._scan_from_ns: int | None = None  # the last scan's window: edges inside it are the scan's own
        self._scan_to_ns: int | None = None
        self.debouncers = {key: Debouncer(settle_ns) for key in KEYPAD_KEYS}
        self.scans = 0  # how many scans were made (tests and bench/idle.py read it)
        self.matrix: MockMatrix | None = None
        self.columns: list[Any] = []
        self.rows: list[Any] = []
        EdgeButton = edge_button_class()
        try:
            if _is_mock(self.factory):  # the simulated board: the keypad's contacts between mock pins
                self.matrix = MockMatrix.of(self.factory, rows)
            for c, bcm in enumerate(columns):
                self.columns.append(
                    EdgeButton(bcm, pull_up=True, bounce_time=None, pin_factory=self.factory, on_edge=self._column_edge(c))
                )
            for bcm in rows:
                row = GPIODevice(bcm, pin_factory=self.factory)
                self.rows.append(row)
                row.pin.output_with_state(0)  # waiting: every row low
            if self.matrix is not None:
                self.matrix.attach([c.pin for c in self.columns])
            t = self._clock_ns()
            for key in self._scan():  # a key held at start-up is not a press: it must be released first
                self.debouncers[key] = Debouncer(settle_ns, raw_down=True, raw_since_ns=t)
        except Exception:
            self.close()
            raise

    # --- the pin back-end's thread ---------------------------------------------------------------

    def _column_edge(self, c: int):
        def on_edge(ticks: float, low: bool) -> None:
            t = self._edge_ns(ticks)
            with self._lock:
                since, until = self._scan_from_ns, self._scan_to_ns
                if self._scanning or (since is not None and until is not None and since <= t <= until):
                    return  # a row we drove during a scan, not a key
                if low and self._fell[c] is None:
                    self._fell[c] = t
            self._wake.set()

        return on_edge

    # --- the scanner's thread ------------------------------------------------------------------

    def start(self) -> None:
        """Start the scanner's thread (it waits for an edge first)."""
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name="keypad", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        delay: float | None = None  # None: wait for an edge, however long
        while True:
            self._wake.wait(delay)
            if self._closed:
                return
            self._wake.clear()  # before the scan: an edge during it wakes the next round at once
            try:
                delay = self.service()
            except Exception as exc:  # noqa: BLE001 - a failing keypad never stops the clock
                log.error("keypad: %s; the keypad is off until the clock restarts", exc)
                return

    def service(self) -> float | None:
        """One round of the scanner: scan, hand over the keys that changed, and say when to scan
        again (seconds), or None to wait for an edge."""
        if self._closed:
            return None
        t = self._clock_ns()
        down = self._scan()
        with self._lock:
            fell, self._fell = self._fell, [None] * COLUMNS
        out: list[Key] = []
        crowded = len(down) > MAX_KEYS_DOWN  # a possible ghost: no new key from this scan
        for key in KEYPAD_KEYS:
            d = self.debouncers[key]
            if key in down and not d.raw_down and not crowded:
                edge = fell[POSITION[key][1]]
                if d.edge(edge if edge is not None and edge <= t else t, True):
                    out.append(Key(d.down_since_ns, key, True))
            elif key not in down and d.raw_down:
                d.edge(t, False)
            released = d.poll(t)
            if released is not None:
                out.append(Key(released, key, False))
        out.sort(key=lambda k: (k.t_ns, KEYPAD_KEYS.index(k.key)))
        for k in out:
            self.events.put(k)
        if down or any(d.raw_down or d.down for d in self.debouncers.values()):
            return self.scan_interval_s
        if any(not c.pin.state for c in self.columns):  # closed since the scan: its edge may be the scan's
            return self.scan_interval_s
        return None

    def _scan(self) -> set[str]:
        """The keys closed now. Leaves every row driven low (waiting)."""
        with self._lock:
            self._scanning, self._scan_from_ns, self._scan_to_ns = True, self._clock_ns(), None
        down: set[str] = set()
        try:
            for row in self.rows:
                row.pin.input_with_pull("floating")  # let every row go
            for r, row in enumerate(self.rows):
                # No settling delay: a column falls through a closed key at once, and rises again
                # through its ~50 kOhm pull-up in about a microsecond, well before the next row's read
                # (each gpiozero pin call on lgpio takes several microseconds).
                row.pin.output_with_state(0)
                for c, column in enumerate(self.columns):
                    if not column.pin.state:
                        down.add(LAYOUT[r][c])
                row.pin.input_with_pull("floating")
        finally:
            for row in self.rows:
                row.pin.output_with_state(0)
            with self._lock:
                self._scanning, self._scan_to_ns = False, self._clock_ns()
            self.scans += 1
        return down

    # --- the simulated board ---------------------------------------------------------------------

    def drive(self, key: str, down: bool) -> None:
        """Close (`down`) or open a key's contact. Only on gpiozero's MockFactory pins."""
        if self.matrix is None:
            raise RuntimeError("only a keypad on gpiozero's MockFactory pins can be pressed in software")
        self.matrix.set(key, down)

    def is_down(self, key: str) -> bool:
        """Is the key's contact closed (the simulated board's), for drawing it."""
        return self.matrix is not None and key in self.matrix.closed

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=CLOSE_TIMEOUT_S)
        for device in [*self.columns, *self.rows]:
            try:
                device.close()
            except Exception as exc:  # noqa: BLE001 - closing must release the rest
                log.debug("closing %r: %s", device, exc)
        self.columns, self.rows = [], []


def _is_mock(factory: Any) -> bool:
    from gpiozero.pins.mock import MockFactory

    return isinstance(factory, MockFactory)


_row_pin_class = None


def _matrix_row_pin_class():
    """A MockPin that tells its matrix whenever it is driven or let go."""
    global _row_pin_class
    if _row_pin_class is None:
        from gpiozero.pins.mock import MockPin

        class MatrixRowPin(MockPin):
            def __init__(self, factory: Any, info: Any, matrix: "MockMatrix | None" = None) -> None:
                self.matrix = None  # none while MockPin sets itself up
                super().__init__(factory, info)
                self.matrix = matrix

            def _set_function(self, value):  # noqa: ANN001 - gpiozero's signature
                super()._set_function(value)
                if self.matrix is not None:
                    self.matrix.update()

            def _change_state(self, value):  # noqa: ANN001
                changed = super()._change_state(value)
                if self.matrix is not None:
                    self.matrix.update()
                return changed

            @property
            def driving_low(self) -> bool:
                return self._function == "output" and not self._state

        _row_pin_class = MatrixRowPin
    return _row_pin_class


class MockMatrix:
    """The keypad's contacts between gpiozero mock pins, as the wires behave: every column line that
    a closed key joins (through any chain of closed keys and rows) to a row driven low reads low;
    any other reads high through its pull-up. So ghosting is simulated too.

    The row pins must be made by this class (a MockPin that reports its changes), before anything
    else opens them. `on_select(row)` (tests) is called whenever exactly one row is driven low, i.e.
    when a scan reads that row: a test can open a contact in the middle of a scan.
    """

    @classmethod
    def of(cls, factory: Any, rows: Sequence[int]) -> "MockMatrix":
        """The matrix already on these mock row pins (a keypad opened again finds its contacts as
        they were: a key held at start-up), else a new one."""
        RowPin = _matrix_row_pin_class()
        existing = [factory.pins.get(info) for bcm in rows for _, info in factory.board_info.find_pin(bcm)]
        matrices = {id(p.matrix): p.matrix for p in existing if isinstance(p, RowPin) and p.matrix is not None}
        if len(matrices) == 1 and len(existing) == len(rows):
            return next(iter(matrices.values()))
        return cls(factory, rows)

    def __init__(self, factory: Any, rows: Sequence[int]) -> None:
        RowPin = _matrix_row_pin_class()
        self.rows = []
        for bcm in rows:
            pin = factory.pin(bcm, pin_class=RowPin, matrix=self)
            if not isinstance(pin, RowPin):
                raise RuntimeError(f"BCM {bcm}: the mock pin was opened before the keypad's matrix")
            self.rows.append(pin)
        self.column_pins: list[Any] = []
        self.closed: set[str] = set()
        self.on_select = None
        self._selecting = False
        # The simulator's window presses keys on its thread while the scanner drives rows on its
        # own: one recompute at a time, so the last one always sees the latest rows and contacts.
        self._lock = threading.RLock()

    def attach(self, column_pins: Sequence[Any]) -> None:
        self.column_pins = list(column_pins)
        self.update()

    def set(self, key: str, closed: bool) -> None:
        if key not in POSITION:
            raise ValueError(f"{key!r} is not a keypad key (allowed: {' '.join(KEYPAD_KEYS)})")
        (self.closed.add if closed else self.closed.discard)(key)
        self.update()

    def update(self) -> None:
        with self._lock:
            self._update()

    def _update(self) -> None:
        if not self.column_pins:
            return
        low_rows = {r for r, pin in enumerate(self.rows) if pin.driving_low}
        reached_rows, low_columns = set(low_rows), set()
        changed = True
        while changed:  # spread "low" through the closed keys until nothing more is reached
            changed = False
            for key in self.closed:
                r, c = POSITION[key]
                if (r in reached_rows) != (c in low_columns):
                    reached_rows.add(r)
                    low_columns.add(c)
                    changed = True
        for c, pin in enumerate(self.column_pins):
            if pin.function != "input":
                continue
            pin.drive_low() if c in low_columns else pin.drive_high()
        if len(low_rows) == 1 and self.on_select is not None and not self._selecting:
            self._selecting = True
            try:
                self.on_select(next(iter(low_rows)))
            finally:
                self._selecting = False
