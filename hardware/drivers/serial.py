"""`driver = "serial"`: a SparkFun Serial 7-Segment Display (COM-11441 family, 4 digits with a
colon) on a serial port.

Opened with pyserial's `serial_for_url`, so the port is a setting: "/dev/ttyUSB0" (a USB-serial
adapter), "/dev/serial0" (the Pi's own UART on BCM 14/15), a pty, or "loop://" in tests.

The protocol is the display's documented UART command set (8N1, 9600 baud by factory default),
of which we use:

    0x76              clear display (sent when the port is opened)
    0x7A n            brightness, n = 0-100
    0x7B..0x7E s      digit 1..4 segments: s bit 0 = a ... bit 6 = g (hardware.sevenseg's order)
    0x77 m            decimal points, colon and apostrophe: bit 4 (0x10) = colon

Each frame sets all four digits by their segments and then the colon, 10 bytes in all, so the
display needs no cursor state and draws glyphs its ASCII mode lacks (such as the 3½-digit "-1").
"""

from __future__ import annotations

import time
from typing import Any, Callable

from rackside.hardware import sevenseg
from rackside.hardware.bcm import PI_UART_PORTS, UART_PINS, PinMapError
from rackside.hardware.display import DeviceDisplay, Driver, Key, REQUIRED, one_of, seconds, whole

CLEAR = 0x76
BRIGHTNESS = 0x7A
DIGIT_1 = 0x7B
DECIMALS = 0x77
COLON = 0x10
WRITE_TIMEOUT_S = 0.25  # a wedged port costs the main loop at most this, once per back-off
BAUDRATES = (2400, 4800, 9600, 14400, 19200, 38400, 57600, 76800, 115200)


class SerialDisplay(DeviceDisplay):
    def __init__(
        self,
        *,
        url: str,
        baudrate: int = 9600,
        brightness: int = 100,
        refresh_s: float = 5.0,
        name: str = "display",
        clock_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        super().__init__(name, clock_ns=clock_ns, refresh_s=refresh_s)
        if not 0 <= brightness <= 100:
            raise ValueError(f"brightness: {brightness!r} (allowed: 0-100)")
        self.url = url
        self._baudrate = baudrate
        self._brightness = brightness
        self.port: Any = None  # the open pyserial port, or None

    def __repr__(self) -> str:
        return f"<SerialDisplay {self.name} {self.url}>"

    def _encode(self, text: str) -> bytes:
        frame = sevenseg.frame_of(text)  # a text, or the self-test's raw segments
        out = bytearray()
        for i, cell in enumerate(frame.cells):
            out += bytes((DIGIT_1 + i, cell))
        out += bytes((DECIMALS, COLON if frame.colon else 0))
        return bytes(out)

    def _open(self) -> None:
        import serial  # imported here: importing this module must not load pyserial

        self.port = serial.serial_for_url(self.url, baudrate=self._baudrate, timeout=0, write_timeout=WRITE_TIMEOUT_S)
        self._send(bytes((CLEAR, BRIGHTNESS, self._brightness)))

    def _write(self, data: bytes) -> None:
        self._send(data)

    def _send(self, data: bytes) -> None:
        written = self.port.write(data)
        if written is not None and written != len(data):
            raise OSError(f"{self.url}: wrote {written} of {len(data)} bytes")

    def _release(self) -> None:
        port, self.port = self.port, None
        if port is not None:
            port.close()


# --- the driver's declaration (hardware.drivers finds it by this module's name) -------------------


def _open(settings: dict, *, name: str, pin_factory: Any = None, clock_ns: Callable[[], int] = time.monotonic_ns) -> SerialDisplay:
    return SerialDisplay(name=name, clock_ns=clock_ns, **settings)


def _url(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise PinMapError(f"{where}: {value!r} (allowed: a port such as \"/dev/ttyUSB0\" or a pyserial URL such as \"loop://\")")
    return value


def _claims(s: dict) -> list[tuple[str, int | str]]:
    """The port; on the Pi's own UART, its two pins too."""
    pins = [(f"url ({s['url']} {sig})", bcm) for sig, bcm in UART_PINS.items()] if s["url"] in PI_UART_PORTS else []
    return [*pins, ("url", f"serial port {s['url']!r}")]


def _wiring(s: dict, title: str):
    if s["url"] not in PI_UART_PORTS:
        return f"{title}: SparkFun Serial 7-Segment on {s['url']} ({s['baudrate']} baud), not on the header."
    return (f"SparkFun Serial 7-Segment, {s['baudrate']} baud", [
        ("RX", UART_PINS["TXD"], "signal", f"Pi TXD ({s['url']})"),
        ("VCC", None, "3V3", ""),
        ("GND", None, "GND", ""),
    ])


DRIVER = Driver(
    name="serial",
    summary="SparkFun Serial 7-Segment Display on a serial port",
    keys={
        "url": Key(REQUIRED, _url),
        "baudrate": Key(9600, one_of(BAUDRATES)),
        "brightness": Key(100, whole(0, 100)),
        "refresh_s": Key(5.0, seconds(0.5, 3600)),
    },
    open=_open,
    claims=_claims,
    wiring=_wiring,
    order=20,
)
