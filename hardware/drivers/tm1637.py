"""`driver = "tm1637"`: TM1637 4-digit clock modules, bit-banged on two gpiozero pins (CLK and DIO).

Why our own ~80 lines rather than a library: the TM1637 libraries on PyPI (raspberrypi-tm1637,
rpi-tm1637) drive RPi.GPIO directly, which does not work on a Pi 5 and must never be installed
beside rpi-lgpio; the newer ones (python-tm1637, gpiod-tm1637, tm1637-rpi5-gpiod) go straight to
libgpiod. None goes through gpiozero's pin factories, so none would share gpiozero's pin
reservations or run on its MockFactory, where our tests read the wire. The protocol is small.

The protocol (TM1637 datasheet): a transaction is START (DIO falls while CLK is high), bytes sent
least significant bit first (DIO is set while CLK is low and read by the chip on CLK's rising
edge), each followed by a 9th clock during which the chip pulls DIO low to acknowledge, then STOP
(DIO rises while CLK is high). A frame is three transactions: 0x40 (write display registers,
address auto-increment), 0xC0 then the four digit bytes (from address 0), and 0x88|brightness
(display on). On these modules the colon is bit 7 of the second digit.

The missing acknowledgement is how an unplugged module is noticed: GPIO writes themselves never
fail. Python's own speed (a few microseconds per pin change through lgpio) is well within the
chip's limits; `half_period_us` slows the clock for modules with large filter capacitors.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from rackside.hardware import sevenseg
from rackside.hardware.bcm import PinMapError, check_bcm
from rackside.hardware.display import DeviceDisplay, Driver, Key, REQUIRED, one_of, seconds, whole
from rackside.hardware.tm1637_decode import CMD_ADDRESS, CMD_CONTROL, CMD_DATA, COLON_BIT  # the wire's bytes, once

log = logging.getLogger(__name__)

CMD_DISPLAY_ON = CMD_CONTROL | 0x08
DIO_PULLS = {"up": "up", "off": "floating"}  # the dio_pull setting -> gpiozero's pull


def encode(shown) -> bytes:
    """The four digit bytes a TM1637 is sent for `shown` (a text, or the self-test's raw segments):
    segments in bits 0-6, the colon in bit 7 of the second digit. hardware.tm1637_decode compares
    a decoded wire with it."""
    frame = sevenseg.frame_of(shown)
    return bytes(
        cell | (COLON_BIT if frame.colon and i == sevenseg.COLON_AFTER else 0) for i, cell in enumerate(frame.cells)
    )


class DisplayNotAnswering(OSError):
    """The module did not acknowledge a byte: unplugged, unpowered or mis-wired."""


class TM1637Display(DeviceDisplay):
    def __init__(
        self,
        *,
        clk: int,
        dio: int,
        brightness: int = 7,
        half_period_us: int = 0,
        dio_pull: str = "up",
        refresh_s: float = 5.0,
        name: str = "display",
        pin_factory: Any = None,
        clock_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        super().__init__(name, clock_ns=clock_ns, refresh_s=refresh_s)
        if not 0 <= brightness <= 7:
            raise ValueError(f"brightness: {brightness!r} (allowed: 0-7)")
        self.clk_bcm, self.dio_bcm = clk, dio
        self._brightness = brightness
        self._half_period_s = half_period_us / 1e6
        self._dio_pull = DIO_PULLS[dio_pull]
        self._pin_factory = pin_factory
        self._clk: Any = None
        self._dio: Any = None

    def __repr__(self) -> str:
        return f"<TM1637Display {self.name} CLK=BCM{self.clk_bcm} DIO=BCM{self.dio_bcm}>"

    def _encode(self, text: str) -> bytes:
        return encode(text)

    def _open(self) -> None:
        from gpiozero import GPIODevice  # imported here: importing this module must not load GPIO back-ends

        try:
            self._clk = GPIODevice(self.clk_bcm, pin_factory=self._pin_factory)
            self._dio = GPIODevice(self.dio_bcm, pin_factory=self._pin_factory)
            clk, dio = self._clk.pin, self._dio.pin
            dio.function = "input"
            dio.pull = self._dio_pull  # the acknowledgement is read with the pull-up holding DIO high
            for pin in (clk, dio):
                pin.function = "output"
                pin.state = 1  # idle bus: both high
        except Exception:
            self._release()
            raise

    def _release(self) -> None:
        for dev in (self._clk, self._dio):
            if dev is not None:
                dev.close()
        self._clk = self._dio = None

    def _write(self, data: bytes) -> None:
        self._transaction([CMD_DATA])
        self._transaction([CMD_ADDRESS, *data])
        self._transaction([CMD_DISPLAY_ON | self._brightness])

    # --- the wire -------------------------------------------------------------------------------
    def _wait(self) -> None:
        if self._half_period_s:
            time.sleep(self._half_period_s)

    def _transaction(self, data: list[int]) -> None:
        clk, dio = self._clk.pin, self._dio.pin
        # START: DIO falls while CLK is high.
        dio.state = 1
        clk.state = 1
        self._wait()
        dio.state = 0
        self._wait()
        clk.state = 0
        missing = None
        for byte in data:
            for bit in range(8):
                dio.state = (byte >> bit) & 1
                self._wait()
                clk.state = 1
                self._wait()
                clk.state = 0
            # 9th clock: release DIO and read the chip's acknowledgement (low). The pull-up is set
            # again each time because lgpio claims an input without one; without it an unplugged
            # module's DIO would float and might read as an acknowledgement.
            dio.function = "input"
            dio.pull = self._dio_pull
            self._wait()
            clk.state = 1
            self._wait()
            acked = not dio.state
            clk.state = 0
            dio.function = "output"
            dio.state = 0
            if not acked and missing is None:
                missing = byte
        # STOP: DIO rises while CLK is high.
        self._wait()
        clk.state = 1
        self._wait()
        dio.state = 1
        if missing is not None:
            raise DisplayNotAnswering(
                f"no acknowledgement from the TM1637 on CLK=BCM{self.clk_bcm} DIO=BCM{self.dio_bcm} "
                f"(byte 0x{missing:02X}): unplugged or mis-wired?"
            )


# --- the driver's declaration (hardware.drivers finds it by this module's name) -------------------


def _open(settings: dict, *, name: str, pin_factory: Any = None, clock_ns: Callable[[], int] = time.monotonic_ns) -> TM1637Display:
    return TM1637Display(name=name, pin_factory=pin_factory, clock_ns=clock_ns, **settings)


def _check(settings: dict, where: str) -> None:
    if settings["clk"] == settings["dio"]:
        raise PinMapError(f"{where}: clk and dio are both BCM {settings['clk']}; they need a pin each")


DRIVER = Driver(
    name="tm1637",
    summary="TM1637 4-digit clock module",
    keys={
        "clk": Key(REQUIRED, check_bcm),
        "dio": Key(REQUIRED, check_bcm),
        "brightness": Key(7, whole(0, 7)),
        "half_period_us": Key(0, whole(0, 1000, " of microseconds")),
        # "off": the Pi's pull-up is not used on DIO while the chip acknowledges; the module's own
        # pull-up holds the line. The default "up" notices an unplugged module on any build; "off" is
        # for a line that models the chip's own drive (the VM's gpio-sim line, tools/arm64-gpio).
        "dio_pull": Key("up", one_of(tuple(DIO_PULLS))),
        "refresh_s": Key(5.0, seconds(0.5, 3600)),
    },
    open=_open,
    check=_check,
    claims=lambda s: [("clk", s["clk"]), ("dio", s["dio"])],
    wiring=lambda s, title: ("TM1637 4-digit clock module", [
        ("CLK", s["clk"], "signal", ""),
        ("DIO", s["dio"], "signal", "module's own pull-up"),
        ("VCC", None, "3V3", "3.3 V only"),
        ("GND", None, "GND", ""),
    ]),
    advice="Displays: power TM1637 modules from 3.3 V, never 5 V: their on-board pull-ups would put 5 V on the GPIO.",
    order=10,
)
