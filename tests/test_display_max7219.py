"""The MAX7219 driver (`hardware/drivers/max7219.py`, issue 37: a new display driver is one file):
both displays of a clock on one SPI bus, sharing SCLK and MOSI, each on its own chip select.

The bus is gpiozero's own on MockFactory pins (the bit-banged SPI a Pi without `dtparam=spi=on`
uses too), and the chips are gpiozero's `MockSPIDevice`, one per CE, both listening on the shared
clock: each latches the last 16 bits it was clocked when its CS rises, as the datasheet says, into
registers; the test reads those back into text with its own idea of the segments (the MAX7219's bit
order from the datasheet, then `support.segments`' words, not `hardware.sevenseg`).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest
from gpiozero.pins.mock import MockFactory, MockPin, MockSPIDevice

from rackside.hardware.display import DeviceDisplay
from rackside.hardware.drivers import check_display_spec, open_display
from rackside.hardware.pinmap import PinMapError, parse_pinmap

from support.clock import FakeClock
from support.segments import segments_to_text

SCLK, MOSI, CE0, CE1 = 11, 10, 8, 7
BUTTONS = {"left": 17, "right": 27, "neutralise": 22}


class FakeMAX7219(MockSPIDevice):
    """A MAX7219 as its datasheet describes the serial side: 16 bits clocked in MSB first while CS
    is low (SPI mode 0), latched into register `bits 11-8` when CS rises; data `bits 7-0`. Powered
    up: in shutdown, display test off, digits unknown (None)."""

    def __init__(self, cs: int, factory: MockFactory) -> None:
        self.registers: dict[int, int | None] = {0x0C: 0, 0x0F: 0, **{d: None for d in range(1, 9)}}
        self.words: list[int] = []
        super().__init__(SCLK, MOSI, None, cs, pin_factory=factory)

    def on_select(self) -> None:
        super().on_select()  # CS low: a new word starts
        if self.select_pin.state != self.select_high and len(self.rx_buf) >= 16:  # CS rose: latch
            word = sum(bool(bit) << (15 - i) for i, bit in enumerate(self.rx_buf[-16:]))
            self.words.append(word)
            if word >> 8 & 0x0F:  # register 0 is no-op
                self.registers[word >> 8 & 0x0F] = word & 0xFF

    def text(self) -> str:
        """What a player reads: blank in shutdown, else the scanned digits, leftmost first."""
        r = self.registers
        if not r[0x0C]:
            return "(shut down)"
        assert r[0x0F] == 0 and r[0x09] == 0, "display test off, no BCD decode: raw segments"
        cells, colon = [], None
        for digit in range(r[0x0B], -1, -1):  # digit 0 is the rightmost on the modules
            byte = r[digit + 1]
            assert byte is not None, f"digit {digit} was never written"
            # datasheet table 6: D7 = DP, D6..D0 = segments a..g -> bit n = 'abcdefg'[n]
            cells.append(sum(1 << n for n in range(7) if byte >> (6 - n) & 1))
            if byte & 0x80:
                colon = len(cells) - 1  # the decimal point stands for the colon
        return segments_to_text(cells, colon)


def plug_in(factory: MockFactory, clock) -> tuple[dict, dict]:
    """A chip on CE0 and one on CE1, and a display for each: ({side: chip}, {side: display})."""
    chips = {"left": FakeMAX7219(CE0, factory), "right": FakeMAX7219(CE1, factory)}
    displays = {side: open_display({"driver": "max7219", "cs": cs}, name=f"{side} display", pin_factory=factory, clock_ns=clock)
                for side, cs in (("left", CE0), ("right", CE1))}
    return chips, displays


def unplug(chips: dict, displays) -> None:
    for d in displays:
        d.close()  # gpiozero's shared software bus outlives a factory otherwise (keyed by pins alone)
    for c in chips.values():
        c.close()


def pin_map(left: dict, right: dict, buttons: dict | None = None) -> dict:
    return {"buttons": {**BUTTONS, **(buttons or {})}, "displays": {"left": left, "right": right}}


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def bus(clock):
    """A MockFactory with a MAX7219 on CE0 and one on CE1, and both displays opened from a pin map."""
    factory = MockFactory()
    chips = {"left": FakeMAX7219(CE0, factory), "right": FakeMAX7219(CE1, factory)}
    pm = parse_pinmap(pin_map({"driver": "max7219", "cs": CE0}, {"driver": "max7219", "cs": CE1}))
    displays = {side: open_display(pm.displays[side], name=f"{side} display", pin_factory=factory, clock_ns=clock)
                for side in ("left", "right")}
    yield factory, chips, displays
    unplug(chips, displays.values())


def read(told: str) -> str:
    """What a player reads for `told`: on seven segments an O is a 0."""
    return told.replace("O", "0")


def test_two_displays_share_one_bus_each_on_its_own_chip_select(bus):
    factory, chips, displays = bus
    left, right = displays["left"], displays["right"]
    game = [("left", "25:00"), ("right", "25:00"), ("left", "24:59"), ("right", "-1:05"),
            ("left", "HOLd"), ("right", "-10:00"), ("left", "0:07"), ("right", "End")]
    told = {}
    for side, text in game:
        displays[side].show(text)
        told[side] = text
        for s, chip in chips.items():  # each chip shows what its own display was told, and only that
            assert chip.text() == read(told.get(s, "(shut down)")), (s, chip.words)
    assert left.ok and right.ok and left.spi is not None and right.spi is not None  # open at once
    assert chips["left"].registers[0x0B] == 3 and chips["left"].registers[0x0A] == 7  # 4 digits, brightness 7
    # one bus: both interfaces drive the same SCLK and MOSI pins, each its own CS
    assert factory.pin(SCLK).function == factory.pin(MOSI).function == "output"
    assert {factory.pin(CE0).state, factory.pin(CE1).state} == {True}  # both idle (deselected)


def test_a_game_on_two_max7219s_shows_each_chip_what_the_clock_tells_its_display(monkeypatch, tmp_path):
    """The runner and its display output (the clock's own, on the firmware rig's mock pins and fake
    clock) drive both displays through a countdown, overtime and a neutralised clock's HOLd; each
    chip always reads what its display was last told."""
    from rackside.game.clock import Rules

    from support.firmware_rig import make_rig

    chips = {}

    def open_displays(factory, clock):
        plugged, displays = plug_in(factory, clock)
        chips.update(plugged)
        return list(displays.values())

    rig = make_rig(monkeypatch, tmp_path, rules=Rules(game_time_ms=5_000), open_displays=open_displays)
    read_back = set()
    try:
        def check():
            for chip, display in zip(chips.values(), rig.displays):
                assert chip.text() == read(display.text), (chip.words[-9:], display.text)
                read_back.add(chip.text())

        check()
        rig.tap("right")  # the left player's time runs
        for _ in range(70):  # five seconds, then 1:05 over
            rig.advance_ms(1_000)
            check()
        assert rig.texts() == ("-1:05", "0:05")
        rig.tap("neutralise")
        for _ in range(8):
            rig.advance_ms(250)
            check()
        assert {"0:04", "0:00", "-0:01", "-1:05", "0:05", "H0Ld"} <= read_back, read_back
    finally:
        rig.close()
        unplug(chips, rig.displays)


@pytest.mark.parametrize("text", ["25:00", "9:59", "0:01", "0:00", "-0:01", "-1:05", "-9:59", "-10:00", "HOLd", "End", "5:00"])
def test_every_kind_of_reading_reaches_the_chip(bus, text):
    _, chips, displays = bus
    displays["right"].show(text)
    assert chips["right"].text() == read(text)
    assert chips["left"].text() == "(shut down)"


def test_a_third_claim_of_a_chip_select_is_refused_with_one_line(bus, clock, caplog):
    factory, chips, displays = bus
    with pytest.raises(PinMapError) as refused:  # the pin map refuses it before anything is opened
        parse_pinmap(pin_map({"driver": "max7219", "cs": CE0}, {"driver": "max7219", "cs": CE0}))
    assert str(refused.value) == "pin map: BCM 8 is used twice: displays.left.cs and displays.right.cs"
    with pytest.raises(PinMapError, match=r"^pin map: BCM 11 is used twice: buttons.left and displays.left.sclk$"):
        parse_pinmap(pin_map({"driver": "max7219", "cs": CE0}, {"driver": "max7219", "cs": CE1}, {"left": SCLK}))
    with pytest.raises(PinMapError, match=r"BCM 11 is used twice: displays.left.sclk and displays.right.sclk"):  # another bus
        parse_pinmap(pin_map({"driver": "max7219", "cs": CE0}, {"driver": "max7219", "cs": CE1, "mosi": 20}))

    displays["left"].show("1:00")
    displays["right"].show("2:00")
    caplog.set_level(logging.DEBUG, logger="rackside.hardware.display")
    third = open_display({"driver": "max7219", "cs": CE0}, name="third display", pin_factory=factory, clock_ns=clock)
    for _ in range(20):  # gpiozero refuses CE0 (GPIOPinInUse); show() never raises, retries quietly
        third.show("3:00")
        clock.advance(0.5)
    problems = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(problems) == 1 and "\n" not in problems[0], problems
    assert problems[0].startswith("third display: display not working (ChipSelectInUse: pin GPIO8 is already in use")
    assert "this display's CS is BCM 8: each display on a bus needs its own CE" in problems[0]
    assert not third.ok
    displays["left"].show("0:59")  # the two on the bus carry on
    displays["right"].show("1:59")
    assert (chips["left"].text(), chips["right"].text()) == ("0:59", "1:59")

    displays["left"].close()  # CE0 is free again: the third display takes it at its next retry
    clock.advance(DeviceDisplay.RETRY_MAX_S)
    third.show("3:00")
    assert third.ok and chips["left"].text() == "3:00" and chips["right"].text() == "1:59"
    third.close()


def test_closing_one_display_leaves_the_other_working(bus):
    from gpiozero import DigitalOutputDevice

    factory, chips, displays = bus
    displays["left"].show("4:00")
    displays["right"].show("4:00")
    displays["left"].close()
    displays["left"].show("3:59")  # after close: ignored, no error
    displays["right"].show("3:59")
    assert chips["right"].text() == "3:59" and chips["left"].text() == "4:00"
    DigitalOutputDevice(CE0, pin_factory=factory).close()  # CE0 released (GPIOPinInUse if held)
    with pytest.raises(Exception, match="GPIO11 is already in use"):
        DigitalOutputDevice(SCLK, pin_factory=factory)  # the bus is still the right display's
    displays["right"].close()
    DigitalOutputDevice(SCLK, pin_factory=factory).close()  # the last one out releases the bus
    DigitalOutputDevice(MOSI, pin_factory=factory).close()


def test_an_unplugged_module_never_raises_and_comes_back_at_the_refresh(bus, clock):
    factory, chips, displays = bus
    displays["left"].show("7:00")
    displays["right"].show("7:00")
    chips["right"].close()  # unplugged: nothing listens on CE1 (a MAX7219 answers nothing either way)
    for second in range(59, 49, -1):
        clock.advance(1)
        displays["right"].show(f"6:{second}")
        displays["left"].show(f"6:{second}")
    assert chips["left"].text() == "6:50"
    chips["right"] = FakeMAX7219(CE1, factory)  # plugged back in: powered up blank, in shutdown
    assert chips["right"].text() == "(shut down)"
    displays["right"].show("6:50")  # the same text: not re-sent yet
    assert chips["right"].text() == "(shut down)"
    clock.advance(5)  # refresh_s: every frame carries the whole set-up
    displays["right"].show("6:50")
    assert chips["right"].text() == "6:50" and chips["right"].registers[0x0C] == 1


class FlakyPin(MockPin):
    """A GPIO whose writes fail while `broken` (as lgpio raises for a line it lost)."""

    broken = False

    def _set_state(self, value):
        if self.broken:
            raise OSError("GPIO write failed")
        super()._set_state(value)


@pytest.fixture
def flaky_bus(clock):
    """The two displays on a bus whose MOSI can fail (`mosi.broken`)."""
    factory = MockFactory()
    mosi = factory.pin(MOSI, pin_class=FlakyPin)  # before the chips, which take the factory's pin
    chips, displays = plug_in(factory, clock)
    yield mosi, chips, displays
    unplug(chips, displays.values())


# Reopening the bus on gpiozero's mock pins tries hardware SPI first and falls back to software SPI
# with a warning (mock pins have no SPI block; the fallback here names the broken line): expected.
@pytest.mark.filterwarnings("ignore::gpiozero.SPISoftwareFallback")
def test_a_failing_bus_is_logged_once_per_display_and_retried(flaky_bus, clock, caplog):
    mosi, chips, displays = flaky_bus
    for d in displays.values():
        d.show("9:00")
    caplog.set_level(logging.DEBUG, logger="rackside.hardware.display")
    mosi.broken = True
    for second in range(59, 29, -1):  # 30 s of the clock counting, both displays failing
        clock.advance(1)
        for d in displays.values():
            d.show(f"8:{second}")
    problems = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sorted(p.split(":")[0] for p in problems) == ["left display", "right display"], problems
    assert all("OSError: GPIO write failed" in p for p in problems)
    mosi.broken = False
    clock.advance(DeviceDisplay.RETRY_MAX_S)
    for d in displays.values():
        d.show("8:30")
    assert all(d.ok for d in displays.values())
    assert chips["left"].text() == chips["right"].text() == "8:30"


def test_both_displays_failing_at_once_share_the_bus_again_when_they_come_back(flaky_bus, clock):
    """Both drop the bus (a shared line failed), so its last holder closes it; they reopen one at
    a time, and gpiozero's closed bus is collected in between (what Python's collector does at any
    moment): the second still finds the first's bus and shares it."""
    import gc

    mosi, chips, displays = flaky_bus
    for d in displays.values():
        d.show("5:00")
    mosi.broken = True
    clock.advance(1)
    for d in displays.values():
        d.show("4:59")
    assert not any(d.ok for d in displays.values()) and not any(d.spi for d in displays.values())
    mosi.broken = False
    clock.advance(DeviceDisplay.RETRY_MAX_S)
    displays["left"].show("4:50")
    gc.collect()
    displays["right"].show("4:50")
    assert displays["right"].ok
    assert chips["left"].text() == chips["right"].text() == "4:50"


def test_the_driver_is_known_by_name_wherever_drivers_are_listed():
    with pytest.raises(PinMapError, match=r"\(allowed: tm1637, serial, max7219, none\) or, simulated, recording"):
        check_display_spec({"driver": "max7291"}, "displays.left")  # the registry's list, not a second one
    with pytest.raises(PinMapError, match=r"displays.left.brightness: 16 \(allowed: a whole number 0-15\)"):
        check_display_spec({"driver": "max7219", "cs": 8, "brightness": 16}, "displays.left")
    with pytest.raises(PinMapError, match=r"displays.left: sclk and cs are both BCM 11; they need a pin each"):
        check_display_spec({"driver": "max7219", "cs": 11}, "displays.left")
    with pytest.raises(PinMapError, match=r"displays.left.cs: missing \(driver 'max7219' needs cs\)"):
        check_display_spec({"driver": "max7219"}, "displays.left")
    code = ("import sys, rackside.hardware.drivers.max7219 as m, rackside.hardware.drivers as d; d.find('max7219'); "
            "sys.exit('gpiozero' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0  # gpiozero only when a display opens


CONFIG = """
[buttons]
left = 17
right = 27
neutralise = 22
[displays.left]
driver = "{driver}"
cs = 8
[displays.right]
driver = "max7219"
cs = 7
"""


def selftest(tmp_path, driver: str) -> subprocess.CompletedProcess:
    config = tmp_path / "clock.toml"
    config.write_text(CONFIG.format(driver=driver))
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "XDG_STATE_HOME": str(tmp_path / "state")}
    return subprocess.run([sys.executable, "-m", "rackside", "clock", "selftest", "--config", str(config), "--timeout", "0.1"],
                          capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)


def test_rackside_clock_selftest_takes_a_config_with_two_max7219s(tmp_path):
    """Through the command a builder runs: the config's drivers are checked by the registry and
    opened on the pin factory (gpiozero's mock here: nobody presses, so the walk fails its buttons)."""
    out = selftest(tmp_path, "max7219")
    assert out.returncode == 1, out.stdout + out.stderr  # parts failed (no presses), the config was good
    assert "FAIL  left button (BCM 17): no press in 0.1 s" in out.stdout
    assert "left display segment a: not checked" in out.stdout and "right display" in out.stdout
    assert "not answering" not in out.stdout and "not fitted" not in out.stdout.split("text display")[0]
    bad = selftest(tmp_path, "max7291")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    assert "displays.left.driver: 'max7291' (allowed: tm1637, serial, max7219, none)" in bad.stderr


def test_the_readme_wiring_table_is_the_drivers_own():
    """hardware/README.md's MAX7219 table: the rows the wiring module draws from the driver's declaration."""
    import tomllib
    from pathlib import Path

    from rackside.hardware import wiring

    repo = Path(__file__).resolve().parents[1]
    raw = tomllib.loads((repo / "hardware" / "pins.toml").read_text())
    raw["displays"] = {"left": {"driver": "max7219", "cs": CE0}, "right": {"driver": "max7219", "cs": CE1}}
    rows = [r for r in wiring.render_table(parse_pinmap(raw)).splitlines() if r.startswith(("| Left display", "| Right display"))]
    readme = (repo / "hardware" / "README.md").read_text()
    assert len(rows) == 10 and all(row in readme for row in rows), rows
    assert "| Left display | CLK | 23 (GPIO11) | 11 | SCLK, shared by both displays |" in rows



def test_the_diagram_draws_two_displays_on_one_bus_as_one_box_with_no_box_over_another():
    """The SVG of a two-MAX7219 map: one box for both displays (their shared lines drawn once, each
    chip select named), no two boxes over each other, and the MAX7219's legend line, not the TM1637's."""
    import tomllib
    import xml.etree.ElementTree as ET
    from pathlib import Path

    from rackside.hardware import wiring

    repo = Path(__file__).resolve().parents[1]
    raw = tomllib.loads((repo / "hardware" / "pins.toml").read_text())
    raw["displays"] = {"left": {"driver": "max7219", "cs": CE0}, "right": {"driver": "max7219", "cs": CE1}}
    root = ET.fromstring(wiring.render_svg(parse_pinmap(raw)))
    ns = "{http://www.w3.org/2000/svg}"
    texts = [el.text or "" for el in root.iter(f"{ns}text")]
    assert texts.count("MAX7219 7-segment module (SPI)") == 1 and "Left + right displays" in texts
    assert any(t.startswith("CS (left) → pin 24") for t in texts) and any(t.startswith("CS (right) → pin 26") for t in texts), texts
    assert sum(t.startswith("DIN (MOSI") for t in texts) == 1
    legend = " ".join(texts)
    assert "MAX7219 modules from 5 V" in legend and "TM1637" not in legend
    boxes = [tuple(float(r.get(k)) for k in ("x", "y", "width", "height")) for r in root.iter(f"{ns}rect") if r.get("rx") == "8"]
    for i, (x, y, w, h) in enumerate(boxes):
        for (x2, y2, w2, h2) in boxes[i + 1:]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y, f"boxes overlap: {boxes}"
