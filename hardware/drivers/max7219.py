"""`driver = "max7219"`: a MAX7219 7-segment module (the common 8-digit one, or a 4-digit one) on
the Pi's SPI bus, four digits used. Both displays of a clock share one bus: the same SCLK (BCM 11)
and MOSI (BCM 10), each its own chip select, CE0 (BCM 8) and CE1 (BCM 7)::

    [displays.left]
    driver = "max7219"
    cs = 8             # CE0; sclk = 11 and mosi = 10 are the defaults
    [displays.right]
    driver = "max7219"
    cs = 7             # CE1

The bus is gpiozero's (`pin_factory.spi(clock_pin=, mosi_pin=, miso_pin=None, select_pin=)`), so
real or simulated is the pin factory's choice, as for every other part: on a Pi with SPI enabled
(`dtparam=spi=on`) lgpio's hardware SPI (/dev/spidev0.0 and 0.1), else gpiozero bit-bangs the same
pins (it warns `SPISoftwareFallback`); on MockFactory the bit-banged bus on mock pins, where the
tests attach gpiozero's `MockSPIDevice` as the chips.

How two displays share the bus, gpiozero's way (gpiozero 2.0.1, github.com/gpiozero/gpiozero):
- `Factory.reserve_pins(requester, *pins)` (gpiozero/pins/__init__.py) refuses a pin only if the
  new requester `_conflicts_with` a holder. lgpio's `LGPIOHardwareSPI._conflicts_with`
  (gpiozero/pins/lgpio.py) answers False to another hardware SPI interface of the same port on a
  different device, so CE0's and CE1's interfaces both reserve SCLK and MOSI; the same CE twice
  conflicts and raises GPIOPinInUse. (gpiozero issue #1015, "Can't use two spi devices with
  hardware spi", is this check on the RPi.GPIO interface; its workaround is the form lgpio's has.)
- The software bus: `SPISoftware` "will happily share their clock, mosi, and miso pins with other
  instances provided each has a distinct select pin" (gpiozero/pins/spi.py): its `SPISoftwareBus` is a
  `SharedMixin` device keyed by (clock, mosi, miso), one instance with a reference count, and each
  interface holds only its select pin, an `OutputDevice`, which a second claim refuses.
- `close()` releases this display's interface (`release_all`, or the select pin and one reference
  to the bus): the other display keeps the bus, and the freed CE can be claimed again.
The pin map does the same before anything is opened: SCLK, MOSI (and MISO, which the kernel's SPI0
holds though a MAX7219 sends nothing back) are claimed as shared by "the SPI bus SCLK=.., MOSI=..",
which another claim of the same bus may share and nothing else may (hardware.pinmap); CS is this
display's alone, so a second display on the same CE is refused there, naming both.

The chip (MAX7219 datasheet): 16-bit words, MSB first, SPI mode 0, up to 10 MHz, latched when CS
rises: the register address in the high byte, the data in the low. Each write is one word in its
own transaction. Registers: 0x01-0x08 digits 0-7 (digit 0 is the rightmost on the common modules),
0x09 decode mode (0: raw segments), 0x0A intensity (0-15), 0x0B scan limit (3: digits 0-3),
0x0C shutdown (1: normal operation), 0x0F display test (0: off). In raw mode a digit's byte is
DP a b c d e f g from bit 7 down to bit 0; the modules have no colon, so the decimal point after
the second digit stands for it ("24.59"). Segments come from the one table, `hardware.sevenseg`.

A MAX7219 answers nothing (its DOUT feeds the next chip of a chain, at 5 V), so an unplugged module
cannot be noticed: what fails is what gpiozero raises (a pin or CE held by another device, the SPI
device that cannot be opened, a transfer error), handled by `DeviceDisplay` like any driver's fault.
A module that lost power comes back blank, in shutdown mode: every frame sends the whole set-up
before its digits, so the next write (a new text, or the `refresh_s` rewrite) brings it back.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from rackside.hardware import sevenseg
from rackside.hardware.bcm import PinMapError, check_bcm
from rackside.hardware.display import DeviceDisplay, Driver, Key, REQUIRED, seconds, whole

# Registers (datasheet table 2).
DIGIT_0 = 0x01
DECODE_MODE = 0x09
INTENSITY = 0x0A
SCAN_LIMIT = 0x0B
SHUTDOWN = 0x0C
DISPLAY_TEST = 0x0F
DP = 0x80  # the decimal point, which stands for the colon
SPI0 = {"sclk": 11, "mosi": 10, "miso": 9, "ce": (8, 7)}  # the Pi's SPI0 (BCM)


def segments(cell: int) -> int:
    """A `hardware.sevenseg` cell (bit 0 = a ... bit 6 = g) as the MAX7219's raw byte (bit 6 = a ...
    bit 0 = g)."""
    return sum(1 << (6 - n) for n in range(7) if cell >> n & 1)


def encode(shown, brightness: int) -> list[tuple[int, int]]:
    """The (register, value) words of one frame for `shown` (a text, or the self-test's raw
    segments): the set-up, the four digits (leftmost cell to digit 3), then out of shutdown, so a
    module that was off shows no stale digits."""
    frame = sevenseg.frame_of(shown)
    n = len(frame.cells)
    digits = [
        (DIGIT_0 + n - 1 - i, segments(cell) | (DP if frame.colon and i == sevenseg.COLON_AFTER else 0))
        for i, cell in enumerate(frame.cells)
    ]
    setup = [(DISPLAY_TEST, 0), (DECODE_MODE, 0), (SCAN_LIMIT, n - 1), (INTENSITY, brightness)]
    return [*setup, *digits, (SHUTDOWN, 1)]


class ChipSelectInUse(OSError):
    """This display's CE (or a bus line) is held by another device."""


class MAX7219Display(DeviceDisplay):
    def __init__(
        self,
        *,
        cs: int,
        sclk: int = SPI0["sclk"],
        mosi: int = SPI0["mosi"],
        brightness: int = 7,
        refresh_s: float = 5.0,
        name: str = "display",
        pin_factory: Any = None,
        clock_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        super().__init__(name, clock_ns=clock_ns, refresh_s=refresh_s)
        if not 0 <= brightness <= 15:
            raise ValueError(f"brightness: {brightness!r} (allowed: 0-15)")
        self.cs_bcm, self.sclk_bcm, self.mosi_bcm = cs, sclk, mosi
        self._brightness = brightness
        self._pin_factory = pin_factory
        self.spi: Any = None  # gpiozero's SPI interface while open

    def __repr__(self) -> str:
        return f"<MAX7219Display {self.name} SCLK=BCM{self.sclk_bcm} MOSI=BCM{self.mosi_bcm} CS=BCM{self.cs_bcm}>"

    def _encode(self, text: str) -> list[tuple[int, int]]:
        return encode(text, self._brightness)

    def _open(self) -> None:
        from gpiozero import Device  # imported here: importing this module must not load GPIO back-ends
        from gpiozero.exc import GPIOPinInUse

        factory = self._pin_factory
        if factory is None:
            Device.ensure_pin_factory()  # gpiozero's default (GPIOZERO_PIN_FACTORY), as its devices do
            factory = Device.pin_factory
        try:
            # miso_pin=None: nothing is read back; gpiozero then reserves only SCLK, MOSI and CS
            self.spi = factory.spi(clock_pin=self.sclk_bcm, mosi_pin=self.mosi_bcm, miso_pin=None, select_pin=self.cs_bcm)
        except GPIOPinInUse as exc:
            raise ChipSelectInUse(f"{exc} (this display's CS is BCM {self.cs_bcm}: each display on a bus needs its own CE)") from None
        # SPI mode 0, MSB first, 8-bit words: gpiozero's defaults, which the MAX7219 wants
        # (its own interface is the one place to set them, so they are not set here)

    def _write(self, words: list[tuple[int, int]]) -> None:
        for register, value in words:
            # one transaction each (CS rising latches the word); transfer, as gpiozero's own SPI
            # devices (MCP3xxx) use it on every back-end; what comes back (MISO unwired) is ignored
            if len(self.spi.transfer([register, value])) != 2:
                raise OSError(f"SPI transfer to the MAX7219 on CS BCM {self.cs_bcm} was cut short")

    def _release(self) -> None:
        spi, self.spi = self.spi, None
        if spi is None:
            return
        bus = getattr(spi, "_bus", None)  # gpiozero's shared software bus; hardware SPI has none
        spi.close()  # this CE only: the bus stays the other display's (see the module's docstring)
        if bus is not None and bus.closed:
            # This display held the bus last, so it closed. gpiozero 2.0.1 runs a shared device's
            # close again when the closed object is collected (GPIOBase.__del__), and that close
            # unregisters whichever bus then has its key (SharedMixin keys the bus by its pins
            # alone): the display that reopens the bus first would be left alone on it, and the
            # other refused its SCLK (GPIOPinInUse) until both dropped again. So it closes no more.
            bus.close = _closed


def _closed() -> None:
    """The close of a gpiozero bus that is closed already (see `MAX7219Display._release`)."""


# --- the driver's declaration (hardware.drivers finds it by this module's name) -------------------


def _open(settings: dict, *, name: str, pin_factory: Any = None, clock_ns: Callable[[], int] = time.monotonic_ns) -> MAX7219Display:
    return MAX7219Display(name=name, pin_factory=pin_factory, clock_ns=clock_ns, **settings)


def _check(settings: dict, where: str) -> None:
    lines = [(key, settings[key]) for key in ("sclk", "mosi", "cs")]
    for i, (key, bcm) in enumerate(lines):
        for other, bcm2 in lines[i + 1:]:
            if bcm == bcm2:
                raise PinMapError(f"{where}: {key} and {other} are both BCM {bcm}; they need a pin each")


def _bus(s: dict) -> str:
    return f"the SPI bus SCLK=BCM{s['sclk']} MOSI=BCM{s['mosi']}"


def _claims(s: dict) -> list[tuple]:
    """CS alone; SCLK and MOSI shared with any display on the same bus (and MISO, held by the
    kernel's SPI0 when the bus is SPI0's)."""
    bus = _bus(s)
    shared = [("sclk", s["sclk"], bus), ("mosi", s["mosi"], bus)]
    if (s["sclk"], s["mosi"]) == (SPI0["sclk"], SPI0["mosi"]):
        shared.append(("miso (SPI0's, unused)", SPI0["miso"], bus))
    return [*shared, ("cs", s["cs"])]


def _wiring(s: dict, title: str):
    ce = f"CE{SPI0['ce'].index(s['cs'])}, " if s["cs"] in SPI0["ce"] else ""
    return ("MAX7219 7-segment module (SPI)", [
        ("DIN", s["mosi"], "signal", "MOSI, shared by both displays"),
        ("CLK", s["sclk"], "signal", "SCLK, shared by both displays"),
        ("CS", s["cs"], "signal", f"{ce}this display's own"),
        ("VCC", None, "5V", "5 V: its supply is 4.0-5.5 V"),
        ("GND", None, "GND", ""),
    ])


DRIVER = Driver(
    name="max7219",
    summary="MAX7219 7-segment module on the SPI bus (two share it, a chip select each)",
    keys={
        "cs": Key(REQUIRED, check_bcm),
        "sclk": Key(SPI0["sclk"], check_bcm),
        "mosi": Key(SPI0["mosi"], check_bcm),
        "brightness": Key(7, whole(0, 15)),
        "refresh_s": Key(5.0, seconds(0.5, 3600)),
    },
    open=_open,
    check=_check,
    claims=_claims,
    wiring=_wiring,
    advice="Displays: MAX7219 modules from 5 V, on one SPI bus (DIN, CLK shared; a CE each); DOUT to nothing.",
    order=30,
)
