"""The one small interface every time display sits behind, a recording fake of it, the retry
machinery the real drivers share, and `open_display`, which builds a driver from a config table.

A display is told a short text and shows it; it never asks the clock anything. Texts are what a
4-digit 7-segment clock module can show: digits, ':' (the colon segment), '-', ' ' and the
letters 7-segment displays can draw (for example "24:59", "-1:05", "-10:00", "HOLd", "End"); see
`hardware.sevenseg`.

Drivers (`hardware.tm1637`, `hardware.serial_display`) import their hardware libraries only when a
display is opened, so importing this module never touches gpiozero's back-ends or pyserial.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Protocol, runtime_checkable

from rackside.hardware.pinmap import PinMapError, check_bcm

log = logging.getLogger(__name__)


@runtime_checkable
class Display(Protocol):
    def show(self, text: str) -> None:
        """Show `text`. Must not raise because the device is unplugged: log, and retry later."""

    def close(self) -> None:
        """Release the device."""


class RecordingDisplay:
    """A display that remembers everything it was told: the fake for tests and the source the
    simulated board reads back from."""

    def __init__(self, name: str = "display") -> None:
        self.name = name
        self.shown: list[str] = []
        self.closed = False

    @property
    def text(self) -> str:
        return self.shown[-1] if self.shown else ""

    def show(self, text: str) -> None:
        self.shown.append(text)

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
            log.warning("%s: working again after %.1f s; showing %r", self.name, (now - self._fault_since_ns) / 1e9, text)
            self._fault_since_ns = None
            self._backoff_s = self.RETRY_MIN_S

    def close(self) -> None:
        self._closed = True
        self._drop()

    def _fail(self, now: int, exc: BaseException) -> None:
        if self._fault_since_ns is None:
            self._fault_since_ns = now
            log.warning(
                "%s: display not working (%s: %s); the clock keeps running and the display is retried",
                self.name, type(exc).__name__, exc,
            )
        else:
            log.debug("%s: still not working (%s: %s)", self.name, type(exc).__name__, exc)
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


# --- configuration ------------------------------------------------------------------------------

# For each driver: its keys, and the defaults of the optional ones (None marks a required key).
DRIVER_KEYS: dict[str, dict[str, Any]] = {
    "tm1637": {"clk": None, "dio": None, "brightness": 7, "half_period_us": 0, "refresh_s": 5.0},
    "serial": {"url": None, "baudrate": 9600, "brightness": 100, "refresh_s": 5.0},
    "none": {},
}
BAUDRATES = (2400, 4800, 9600, 14400, 19200, 38400, 57600, 76800, 115200)


def check_display_spec(spec: Any, where: str = "display") -> dict[str, Any]:
    """Validate a display table and return it complete with defaults.

    Raises PinMapError (a ValueError) naming the key (`where.key`) and the allowed values.
    """
    if not isinstance(spec, dict):
        raise PinMapError(f"{where}: must be a table such as {{driver = \"tm1637\", clk = 23, dio = 24}}")
    allowed_drivers = ", ".join(DRIVER_KEYS)
    driver = spec.get("driver")
    if driver not in DRIVER_KEYS:
        got = "missing" if driver is None else repr(driver)
        raise PinMapError(f"{where}.driver: {got} (allowed: {allowed_drivers})")
    keys = DRIVER_KEYS[driver]
    for key in spec:
        if key != "driver" and key not in keys:
            raise PinMapError(
                f"{where}.{key}: unknown key for driver {driver!r} (allowed: {', '.join(['driver', *keys])})"
            )
    out: dict[str, Any] = {"driver": driver}
    for key, default in keys.items():
        if key not in spec:
            if default is None:
                raise PinMapError(f"{where}.{key}: missing (driver {driver!r} needs {', '.join(k for k, d in keys.items() if d is None)})")
            out[key] = default
            continue
        value = spec[key]
        name = f"{where}.{key}"
        if key in ("clk", "dio"):
            out[key] = check_bcm(value, name)
        elif key == "brightness":
            top = 7 if driver == "tm1637" else 100
            if not _is_int(value) or not 0 <= value <= top:
                raise PinMapError(f"{name}: {value!r} (allowed: a whole number 0-{top})")
            out[key] = value
        elif key == "half_period_us":
            if not _is_int(value) or not 0 <= value <= 1000:
                raise PinMapError(f"{name}: {value!r} (allowed: a whole number of microseconds 0-1000)")
            out[key] = value
        elif key == "refresh_s":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.5 <= value <= 3600:
                raise PinMapError(f"{name}: {value!r} (allowed: seconds, 0.5-3600)")
            out[key] = float(value)
        elif key == "url":
            if not isinstance(value, str) or not value:
                raise PinMapError(f"{name}: {value!r} (allowed: a port such as \"/dev/ttyUSB0\" or a pyserial URL such as \"loop://\")")
            out[key] = value
        elif key == "baudrate":
            if value not in BAUDRATES or isinstance(value, bool):
                raise PinMapError(f"{name}: {value!r} (allowed: {', '.join(map(str, BAUDRATES))})")
            out[key] = value
    if driver == "tm1637" and out["clk"] == out["dio"]:
        raise PinMapError(f"{where}: clk and dio are both BCM {out['clk']}; they need a pin each")
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def open_display(
    spec: dict, *, name: str = "display", pin_factory: Any = None, clock_ns: Callable[[], int] = time.monotonic_ns
) -> Display:
    """Build the display a config table describes, e.g. ``{driver = "tm1637", clk = 23, dio = 24}``,
    ``{driver = "serial", url = "/dev/ttyUSB0", baudrate = 9600}`` or ``{driver = "none"}``.

    A bad table raises ValueError naming the key and the allowed values. A device that is absent or
    unplugged does not: the driver logs it and keeps retrying (see `DeviceDisplay`).
    `pin_factory` is gpiozero's (None: gpiozero's default, which honours GPIOZERO_PIN_FACTORY).
    """
    spec = check_display_spec(spec, name)
    driver = spec.pop("driver")
    if driver == "none":
        return NullDisplay(name)
    if driver == "tm1637":
        from rackside.hardware.tm1637 import TM1637Display

        return TM1637Display(name=name, pin_factory=pin_factory, clock_ns=clock_ns, **spec)
    from rackside.hardware.serial_display import SerialDisplay

    return SerialDisplay(name=name, clock_ns=clock_ns, **spec)
