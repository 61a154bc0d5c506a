"""The optional text display (issue 40): a character LCD or a small OLED on the Pi's I2C bus.

`[text_display]` in clock.toml chooses one (docs/clock.md); none is fitted when the section is absent:

- `driver = "hd44780"`: a 16x2 or 20x4 HD44780 character LCD with a PCF8574 I2C backpack (address
  0x27, some 0x3F), through RPLCD (requirements-pi.txt). Chosen as the reference: RPLCD is pure
  Python with one small dependency (smbus2), writes text as text (no images, no Pillow on the Pi),
  and a 20x4 backlit LCD reads across a table;
- `driver = "ssd1306"`: a 128x64 SSD1306 OLED (address 0x3C) through luma.oled, the maintained
  library for it; it draws text into an image (Pillow), so it is not in requirements-pi.txt: install
  it with `pip install luma.oled==3.16.0` on a clock that has one;
- `driver = "sim"`: keeps the lines in memory; the simulator's window and terminal draw them
  (`rackside clock --simulate` uses it whatever the driver named, as it records the 4-digit displays).

Both hardware libraries are imported when the display is opened, never at import: a laptop or CI
needs neither. A display's `show(lines)` may block for the bus (an HD44780 takes a few ms a row): the
clock calls it only from the text display output's own thread (firmware.text_output). It never
raises: a write that fails is logged once per outage and tried again with the next text, reopening
the device.
"""

from __future__ import annotations

import logging
from typing import Any

from rackside.outage import Outage

log = logging.getLogger(__name__)

DRIVERS = ("hd44780", "ssd1306", "sim")
I2C_PINS = {"sda": 2, "scl": 3}  # BCM: the Pi's I2C bus 1 (physical pins 3 and 5), kept free in hardware/pins.toml
DEFAULTS: dict[str, dict[str, Any]] = {
    "hd44780": {"cols": 20, "rows": 4, "address": 0x27, "port": 1},
    "ssd1306": {"cols": 21, "rows": 5, "address": 0x3C, "port": 1},  # Pillow's default font: 6x12 px cells
    "sim": {"cols": 20, "rows": 4, "address": 0x27, "port": 1},
}
RANGES = {"cols": (8, 40), "rows": (1, 8), "address": (0x03, 0x77), "port": (0, 20)}
ROW_PX = 12  # an OLED row's height in pixels (Pillow's default bitmap font)
# What a driver's panel shows at most, (columns, rows, characters): an HD44780's 80 characters of
# display memory in at most 4 rows (RPLCD's row offsets: 20x4, 16x2, 40x2), an SSD1306's 128x64
# pixels in 6x12 cells. A bigger size would page messages through rows nobody sees.
PANELS = {"hd44780": (40, 4, 80), "ssd1306": (128 // 6, 64 // ROW_PX, (128 // 6) * (64 // ROW_PX))}


class TextDisplayError(ValueError):
    """A `[text_display]` table that cannot be used; the message names the key and what is allowed."""


def check_spec(raw: Any, where: str = "text_display") -> dict[str, Any] | None:
    """The `[text_display]` table complete with its driver's defaults; None: no display fitted
    (the section absent, or `driver = "none"`)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise TextDisplayError(f"{where}: must be a table such as {{driver = \"hd44780\", cols = 20, rows = 4}}")
    driver = raw.get("driver")
    if driver == "none":
        return None
    if driver not in DRIVERS:
        raise TextDisplayError(f"{where}.driver: {driver!r} (allowed: {', '.join(DRIVERS)}, none)")
    spec = {"driver": driver, **DEFAULTS[driver]}
    for key, value in raw.items():
        if key == "driver":
            continue
        if key not in RANGES:
            raise TextDisplayError(f"{where}.{key}: unknown key (allowed: driver, {', '.join(RANGES)})")
        lo, hi = RANGES[key]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise TextDisplayError(f"{where}.{key} = {value!r}: allowed is a whole number from {lo} to {hi}")
        spec[key] = value
    if driver in PANELS:
        most = dict(zip(("cols", "rows"), PANELS[driver]))
        for key, word in (("cols", "columns"), ("rows", "rows")):
            if spec[key] > most[key]:
                raise TextDisplayError(f"{where}.{key} = {spec[key]}: an {driver} shows at most {most[key]} {word}")
        if spec["cols"] * spec["rows"] > PANELS[driver][2]:
            raise TextDisplayError(f"{where}: {spec['cols']}x{spec['rows']} is {spec['cols'] * spec['rows']} characters: "
                                   f"an {driver} shows at most {PANELS[driver][2]}")
    return spec


class SimTextDisplay:
    """The simulator's text display: the last lines shown (any thread may read `lines`); its
    `watchers` are called at each change, as the recording 4-digit displays' are (hardware.wake)."""

    def __init__(self, cols: int = 20, rows: int = 4) -> None:
        self.cols, self.rows = cols, rows
        self.lines: tuple[str, ...] = tuple(" " * cols for _ in range(rows))
        self.shown = 0  # how many screens it was given
        self.watchers: list = []

    @property
    def text(self) -> str:
        """The screen as one text, rows joined by newlines (trailing spaces dropped)."""
        return "\n".join(line.rstrip() for line in self.lines)

    def show(self, lines: tuple[str, ...]) -> None:
        self.lines = tuple(lines)
        self.shown += 1
        for watcher in list(self.watchers):
            watcher()

    def close(self) -> None:
        pass


class _Device:
    """A text display on the I2C bus: opened when first shown, reopened after a failure."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.cols, self.rows = spec["cols"], spec["rows"]
        self.device: Any = None
        self.outage = Outage(log, f"text display ({spec['driver']} at {spec['address']:#04x})")

    def show(self, lines: tuple[str, ...]) -> None:
        try:
            if self.device is None:
                self.device = self._open()
            self._write(lines)
        except Exception as exc:  # noqa: BLE001 - a display's fault never reaches the clock
            self.outage.failed(repr(exc))
            self._drop()
            return
        self.outage.recovered()

    def close(self) -> None:
        self._drop()

    def _drop(self) -> None:
        device, self.device = self.device, None
        if device is not None:
            try:
                self._release(device)
            except Exception as exc:  # noqa: BLE001 - releasing a device that failed
                log.debug("text display: release: %s", exc)

    def _open(self) -> Any:
        raise NotImplementedError

    def _write(self, lines: tuple[str, ...]) -> None:
        raise NotImplementedError

    def _release(self, device: Any) -> None:
        pass


class Hd44780(_Device):
    """An HD44780 through a PCF8574 backpack, with RPLCD (imported here, on first use)."""

    def _open(self) -> Any:
        from RPLCD.i2c import CharLCD  # requirements-pi.txt

        return CharLCD("PCF8574", self.spec["address"], port=self.spec["port"], cols=self.cols, rows=self.rows,
                       charmap="A00", auto_linebreaks=False)

    def _write(self, lines: tuple[str, ...]) -> None:
        for row, text in enumerate(lines[: self.rows]):
            self.device.cursor_pos = (row, 0)
            self.device.write_string(text[: self.cols].ljust(self.cols))

    def _release(self, device: Any) -> None:
        device.close(clear=True)


class Ssd1306(_Device):
    """A 128x64 SSD1306 OLED, with luma.oled (imported here, on first use)."""

    def _open(self) -> Any:
        from luma.core.interface.serial import i2c
        from luma.oled.device import ssd1306

        return ssd1306(i2c(port=self.spec["port"], address=self.spec["address"]))

    def _write(self, lines: tuple[str, ...]) -> None:
        from luma.core.render import canvas

        with canvas(self.device) as draw:
            for row, text in enumerate(lines[: self.rows]):
                draw.text((0, row * ROW_PX), text[: self.cols], fill="white")

    def _release(self, device: Any) -> None:
        device.cleanup()


def open_text_display(spec: dict[str, Any] | None, *, simulated: bool = False) -> Any:
    """The display `spec` (check_spec's) names, or None. With `simulated` always the simulator's, of
    the same size (a setting, like the mock pins: the rest of the clock is the same)."""
    if spec is None:
        return None
    if simulated or spec["driver"] == "sim":
        return SimTextDisplay(spec["cols"], spec["rows"])
    return (Hd44780 if spec["driver"] == "hd44780" else Ssd1306)(spec)
