"""The Raspberry Pi's GPIO numbers as a pin map may use them, and the error a bad one raises.

A leaf module (imports nothing of Rackside), so the pin map, the display drivers and the wiring
diagram can all check pins without importing each other.
"""

from __future__ import annotations

from typing import Any

# BCM 0 and 1 are the HAT ID EEPROM's I2C bus (ID_SD/ID_SC), which the firmware reserves; 28 and up
# are not on the 40-pin header.
BCM_MIN, BCM_MAX = 2, 27
# Device names of the Pi's own UART on GPIO 14 (TXD) and 15 (RXD).
PI_UART_PORTS = ("/dev/serial0", "/dev/ttyAMA0", "/dev/ttyS0")
UART_PINS = {"TXD": 14, "RXD": 15}


class PinMapError(ValueError):
    """A pin map (or a display table in it) that cannot be used; the message names the key."""


def check_bcm(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not BCM_MIN <= value <= BCM_MAX:
        raise PinMapError(f"{where}: {value!r} is not a usable pin (allowed: BCM GPIO numbers {BCM_MIN}-{BCM_MAX})")
    return value
