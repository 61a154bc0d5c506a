"""The one small interface every time display sits behind, the recording and null displays, the
retry machinery the real drivers share, and `Driver`, the declaration each display driver makes.

A display is told a short text and shows it; it never asks the clock anything. Texts are what a
4-digit 7-segment clock module can show: digits, ':' (the colon segment), '-', ' ' and the
letters 7-segment displays can draw (for example "24:59", "-1:05", "-10:00", "HOLd", "End"); see
`hardware.sevenseg`. The one exception is the builder's self-test (`rackside clock selftest`),
which shows a `sevenseg.Frame` of raw segments to light one segment at a time; a 7-segment
driver takes either (`sevenseg.frame_of`).

Drivers are found by name (`hardware.drivers`: one module per driver). Each imports its hardware
library only when a display is opened, so importing this module, or a driver's, never touches
gpiozero's back-ends or pyserial.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

from rackside.hardware.bcm import PinMapError
from rackside.outage import Outage

log = logging.getLogger(__name__)


@runtime_checkable
class Display(Protocol):
    def show(self, text: str) -> None:
        """Show `text`. Must not raise because the device is unplugged: log, and retry later."""

    def close(self) -> None:
        """Release the device."""


class RecordingDisplay:
    """A display that remembers everything it was told: the fake for tests and the source the
    simulated board reads back from. `watchers` are called (on the caller's thread, after each
    `show`) so a simulator window can sleep until there is something new to draw."""

    def __init__(self, name: str = "display") -> None:
        self.name = name
        self.shown: list[str] = []
        self.closed = False
        self.watchers: list[Callable[[], None]] = []

    @property
    def text(self) -> str:
        return self.shown[-1] if self.shown else ""

    def show(self, text: str) -> None:
        self.shown.append(text)
        for watcher in self.watchers:
            watcher()

    def close(self) -> None:
        self.closed = True


class NullDisplay:
    """`driver = "none"`: a clock built without this display. Keeps only the latest text."""

    def __init__(self, name: str = "display") -> None:
        self.name = name
        self.text = ""

    def show(self, text: str) -> None:
        self.text = text

    def close(self) -> None:
        """Nothing to release."""


class DeviceDisplay:
    """Base of the real drivers: what they share about skipping, faults and retries.

    `show(text)` never raises. It skips a text identical to the one last written, unless
    `refresh_s` has passed since (a module that lost power and came back shows nothing until it
    is written again). When the device fails (the open fails, a write raises, the module does not
    acknowledge), the fault is logged once for the whole outage, the device is closed, and the
    next `show` after a back-off (doubling from `RETRY_MIN_S` to `RETRY_MAX_S`, measured on the
    injected `clock_ns`) reopens it and writes the latest text. No thread and no sleep: calling
    `show` again with the same text, as often as the main loop likes, costs nothing and is what
    carries the retries and refreshes.

    Subclasses implement `_open()`, `_write(frame)` and `_release()`; `_encode(text)` turns text
    into whatever `_write` takes, raising ValueError for text the device cannot show.
    """

    RETRY_MIN_S = 0.5
    RETRY_MAX_S = 8.0

    def __init__(self, name: str, *, clock_ns: Callable[[], int] = time.monotonic_ns, refresh_s: float = 5.0) -> None:
        self.name = name
        self.text = ""  # the latest text asked for, shown or not
        self._clock_ns = clock_ns
        self._refresh_ns = int(refresh_s * 1e9)
        self._is_open = False
        self._written: str | None = None  # the text the device is known to show
        self._written_at_ns = 0
        self._fault_since_ns: int | None = None
        self._retry_at_ns = 0
        self._backoff_s = self.RETRY_MIN_S
        self._bad_texts: set[str] = set()
        self._closed = False
        self.outage = Outage(
            log,
            name,
            failed_msg="%(what)s: display not working (%(reason)s); the clock keeps running and the display is retried",
            recovered_msg="%(what)s: working again after %(seconds).1f s (%(failures)d failed tries); showing %(text)r",
        )

    @property
    def ok(self) -> bool:
        """False during an outage (the device failed and has not been written since)."""
        return self._fault_since_ns is None

    @property
    def due_ns(self) -> int | None:
        """When (on `clock_ns`) calling `show(self.text)` again would do something: retry after a
        fault, or refresh unchanged text. A main loop that sleeps until its next event can wake
        then too. None before anything was shown and after `close()`."""
        if self._closed or (self._written is None and self._fault_since_ns is None):
            return None
        if self._fault_since_ns is not None:
            return self._retry_at_ns
        return self._written_at_ns + self._refresh_ns

    def show(self, text: str) -> None:
        now = self._clock_ns()
        self.text = text
        if self._closed:
            return
        try:
            frame = self._encode(text)
        except ValueError as exc:
            if text not in self._bad_texts:  # a programming error: say so once per text
                self._bad_texts.add(text)
                log.error("%s: cannot show %r: %s", self.name, text, exc)
            return
        if self._fault_since_ns is None:
            if text == self._written and now - self._written_at_ns < self._refresh_ns:
                return
        elif now < self._retry_at_ns:
            return
        try:
            if not self._is_open:
                self._open()
                self._is_open = True
            self._write(frame)
        except Exception as exc:  # noqa: BLE001 - whatever the device does, the clock keeps counting
            self._fail(now, exc)
            return
        self._written, self._written_at_ns = text, now
        if self._fault_since_ns is not None:
            self.outage.recovered(seconds=(now - self._fault_since_ns) / 1e9, text=text)
            self._fault_since_ns = None
            self._backoff_s = self.RETRY_MIN_S

    def close(self) -> None:
        self._closed = True
        self._drop()

    def _fail(self, now: int, exc: BaseException) -> None:
        if self._fault_since_ns is None:
            self._fault_since_ns = now
        self.outage.failed(f"{type(exc).__name__}: {exc}")  # logged once per outage
        self._written = None
        self._retry_at_ns = now + int(self._backoff_s * 1e9)
        self._backoff_s = min(self._backoff_s * 2, self.RETRY_MAX_S)
        self._drop()

    def _drop(self) -> None:
        if self._is_open:
            self._is_open = False
            try:
                self._release()
            except Exception as exc:  # noqa: BLE001 - releasing a dead device may fail too
                log.debug("%s: error while releasing: %s", self.name, exc)

    # --- for subclasses -------------------------------------------------------------------------
    def _encode(self, text: str) -> Any:
        raise NotImplementedError

    def _open(self) -> None:
        raise NotImplementedError

    def _write(self, frame: Any) -> None:
        raise NotImplementedError

    def _release(self) -> None:
        raise NotImplementedError


# --- what a driver declares ---------------------------------------------------------------------

REQUIRED = object()  # a `Key` default meaning the key must be given


@dataclass(frozen=True)
class Key:
    """One config key of a driver: its default (or REQUIRED) and `check(value, where)`, which
    returns the value to use or raises PinMapError naming `where` and the allowed values."""

    default: Any
    check: Callable[[Any, str], Any]


@dataclass(frozen=True)
class Driver:
    """A display driver, as the registry (`hardware.drivers`) finds it by `name`.

    - `keys`: the config keys beside `driver`, each with its default and check.
    - `open(settings, name=, pin_factory=, clock_ns=)`: the display (settings checked, defaults in).
    - `check(settings, where)`: a check across keys (two pins that must differ), or None.
    - `claims(settings)`: what it uses that nothing else may, as (key, resource): a BCM pin (int)
      or a device in words (str, e.g. "serial port '/dev/ttyUSB0'"); the pin map refuses doubles.
      A pin on a shared bus is (key, bcm, bus): other claims naming the same `bus` (a str, e.g.
      "the SPI bus SCLK=BCM11 MOSI=BCM10") may share it, nothing else may (drivers/max7219.py).
    - `wiring(settings, title)`: for the diagram, (subtitle, [(label, bcm or None, kind, note)])
      with kind "signal", "GND", "3V3" or "5V" (bcm None: any pin of that kind), or a note (str)
      for a display that is not on the header.
    - `advice`: the diagram's legend line for this kind of display (how to power and connect it).
    - `simulated`: it drives no hardware (the simulator's); listed apart in messages.
    - `order`: where it is listed among the allowed drivers.
    """

    name: str
    summary: str
    keys: Mapping[str, Key]
    open: Callable[..., Display]
    check: Callable[[dict, str], None] | None = None
    claims: Callable[[dict], list[tuple[str, int | str]]] = field(default=lambda settings: [])
    wiring: Callable[[dict, str], Any] = field(default=lambda settings, title: f"{title}: none fitted.")
    advice: str = ""
    simulated: bool = False
    order: int = 50


# Checks the drivers share, worded the same everywhere.
def whole(low: int, high: int, unit: str = "") -> Callable[[Any, str], int]:
    def check(value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise PinMapError(f"{where}: {value!r} (allowed: a whole number{unit} {low}-{high})")
        return value

    return check


def seconds(low: float, high: float) -> Callable[[Any, str], float]:
    def check(value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise PinMapError(f"{where}: {value!r} (allowed: seconds, {low:g}-{high:g})")
        return float(value)

    return check


def one_of(values: tuple) -> Callable[[Any, str], Any]:
    def check(value: Any, where: str) -> Any:
        if isinstance(value, bool) or value not in values:
            raise PinMapError(f"{where}: {value!r} (allowed: {', '.join(map(str, values))})")
        return value

    return check
