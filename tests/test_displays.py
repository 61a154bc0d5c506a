"""Display drivers tested at the wire.

The TM1637 driver runs on gpiozero MockFactory pins whose every write, read and direction change
is recorded as the kernel's gpio tracepoints record them; a fake chip answers the acknowledgement
clock; hardware.tm1637_decode, the one decoder (tools/arm64-gpio/check.py reads the VM's real
kernel trace with it), turns the record back into frames: the digit bytes, the brightness, the
acknowledgements and finally the text a player would read. The serial driver is read back from a
pty (and loop://) and decoded the same way.
"""

from __future__ import annotations

import logging
import os
import select
import subprocess
import sys
from dataclasses import dataclass, field

import pytest
from gpiozero.pins.mock import MockFactory, MockPin
from hypothesis import given, settings, strategies as st

from rackside.hardware import sevenseg, tm1637_decode
from rackside.hardware.display import DeviceDisplay, Display, NullDisplay, RecordingDisplay
from rackside.hardware.drivers import open_display
from rackside.hardware.pinmap import PinMapError

from support.clock import FakeClock
from support.segments import SEGMENT_WORDS

# --- the TM1637 wire ------------------------------------------------------------------------------
class Wire:
    """Every level change on the mock pins, in order, plus a fake TM1637 that acknowledges bytes."""

    def __init__(self, clk: int, dio: int) -> None:
        self.clk, self.dio = clk, dio
        # the driver's every set, read and direction change, as the kernel's trace has them (in order;
        # each a microsecond after the last): what hardware.tm1637_decode reads
        self.events: list[tm1637_decode.Event] = []
        self.present = True  # False: the module is unplugged, nothing pulls DIO low
        self.pins: dict[int, MockPin] = {}
        self._bits = 0
        self._clk_level = True
        self._acking = False

    def record(self, pin: "WirePin", kind: str, value: int = 0) -> None:
        self.events.append(tm1637_decode.Event(len(self.events) * 1000, pin.bcm, kind, value))

    def on_change(self, pin: "WirePin", level: bool) -> None:
        if pin.bcm == self.clk:
            self._on_clk(level)
        elif pin.bcm == self.dio and self._clk_level:
            self._bits = 0  # START or STOP: a new byte begins

    def _on_clk(self, level: bool) -> None:
        self._clk_level = level
        if level:
            self._bits += 1
        elif self._bits == 8 and self.present:  # falling edge of the 8th clock: acknowledge
            self._acking = True
            self._drive_dio(False)
        elif self._bits == 9:  # falling edge of the 9th clock: release
            self._bits = 0
            if self._acking:
                self._acking = False
                self._drive_dio(True)

    def on_function(self, pin: "WirePin", function: str) -> None:
        if pin.bcm == self.dio and function == "input" and self._acking:
            self._drive_dio(False)

    def _drive_dio(self, level: bool) -> None:
        pin = self.pins.get(self.dio)
        if pin is not None and pin.function == "input":
            pin.drive_high() if level else pin.drive_low()


class WirePin(MockPin):
    def __init__(self, factory, info):
        super().__init__(factory, info)
        self.bcm = int(info.name[4:])
        factory.wire.pins[self.bcm] = self

    def _change_state(self, value):
        changed = super()._change_state(value)
        if changed:
            self._factory.wire.on_change(self, value)
        return changed

    def _set_state(self, value):  # the driver sets the line (the chip's own drive is not a set)
        super()._set_state(value)
        self._factory.wire.record(self, "set", int(bool(value)))

    def _get_state(self):
        state = super()._get_state()
        self._factory.wire.record(self, "get", int(bool(state)))
        return state

    def _set_function(self, value):
        super()._set_function(value)
        self._factory.wire.record(self, "in" if value == "input" else "out")
        self._factory.wire.on_function(self, value)

    def _set_pull(self, value):  # a pull-up is weak: the chip's open drain still holds DIO low
        super()._set_pull(value)
        self._factory.wire.on_function(self, self.function)


def wire_factory(clk: int = 5, dio: int = 6) -> MockFactory:
    factory = MockFactory(pin_class=WirePin)
    factory.wire = Wire(clk, dio)
    return factory


@dataclass
class ChipState:
    """What the module shows: the frames decoded from the wire, the last one on its digits."""

    frames: list[tm1637_decode.Frame]

    @property
    def last(self) -> tm1637_decode.Frame:
        assert self.frames, "no frame on the wire"
        return self.frames[-1]

    @property
    def grids(self) -> list[int]:
        return list(self.last.digits)

    @property
    def on(self) -> bool:
        return self.last.brightness is not None

    @property
    def brightness(self) -> int:
        return self.last.brightness or 0

    @property
    def unacked(self) -> int:
        return sum(not f.acked for f in self.frames)

    def text(self) -> str:
        assert self.on, "display is switched off"
        return cells_text(self.last.digits)


def cells_text(cells: bytes) -> str:
    """Digit bytes (bit n lights segment 'abcdefg'[n], bit 7 of cell 1 the colon) as the text a player
    reads, blank leading cells dropped (tm1637_decode.text_of); every cell must be a glyph."""
    shown = tm1637_decode.text_of(cells)
    assert "?" not in shown, f"{cells.hex()} lights a cell that is no glyph: {shown!r}"
    return shown.lstrip(" ")


def on_the_wire(factory: MockFactory) -> ChipState:
    wire = factory.wire
    transactions = tm1637_decode.decode(wire.events, wire.clk, wire.dio)
    decoded = tm1637_decode.frames(transactions)
    # every transaction closed by a STOP and whole, every frame the data command, register 0, four digits
    assert not [e for f in decoded for e in f.errors], [f.errors for f in decoded]
    assert all(len(f.digits) == 4 for f in decoded), [f.digits.hex() for f in decoded]
    return ChipState(decoded)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def tm(clock):
    factory = wire_factory()
    display = open_display({"driver": "tm1637", "clk": 5, "dio": 6}, name="left display", pin_factory=factory, clock_ns=clock)
    yield display, factory
    display.close()


# --- TM1637 ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["24:59", "-1:05", "-10:00", "5:00", "0:01", "-9:59", "HoLd", "End", "25:00", "PEn"])
def test_tm1637_shows_text_at_the_wire(tm, text):
    display, factory = tm
    display.show(text)
    state = on_the_wire(factory)
    assert state.text() == text
    assert state.unacked == 0 and state.on and state.brightness == 7
    assert display.ok


def test_tm1637_colon_and_minus_one_bits_on_the_wire(tm):
    display, factory = tm
    display.show("-10:00")
    grids = on_the_wire(factory).grids[:4]
    # "-1" shares digit 1 (segments b, c, g); the colon is bit 7 of digit 2.
    assert grids == [0b0100_0110, 0b1011_1111, 0b0011_1111, 0b0011_1111]


def test_tm1637_brightness_from_the_table(clock):
    factory = wire_factory(23, 24)
    display = open_display({"driver": "tm1637", "clk": 23, "dio": 24, "brightness": 2}, pin_factory=factory, clock_ns=clock)
    display.show("1:00")
    assert on_the_wire(factory).brightness == 2
    display.close()


def test_tm1637_skips_identical_text_until_refresh(tm, clock):
    display, factory = tm
    display.show("24:59")
    sent = len(factory.wire.events)
    clock.advance(1)
    display.show("24:59")
    assert len(factory.wire.events) == sent  # nothing re-sent
    display.show("24:58")
    assert len(factory.wire.events) > sent
    assert on_the_wire(factory).text() == "24:58"
    sent = len(factory.wire.events)
    clock.advance(5)  # refresh_s: a module that lost power would be blank until written again
    display.show("24:58")
    assert len(factory.wire.events) > sent


def test_tm1637_unplugged_module_is_logged_once_and_retried(tm, clock, caplog):
    display, factory = tm
    display.show("24:59")
    factory.wire.present = False
    caplog.set_level(logging.DEBUG, logger="rackside.hardware.display")
    for second in range(58, 40, -1):  # the clock keeps counting; show() never raises
        clock.advance(1)
        display.show(f"24:{second}")
    assert not display.ok
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "DisplayNotAnswering" in warnings[0].getMessage()
    assert "left display" in warnings[0].getMessage()

    factory.wire.present = True
    tries_before = len(factory.wire.events)
    display.show("24:40")  # within the back-off: not tried yet
    assert len(factory.wire.events) == tries_before
    clock.advance(DeviceDisplay.RETRY_MAX_S)
    display.show("24:40")
    assert display.ok
    assert on_the_wire(factory).text() == "24:40"
    assert any("working again" in r.getMessage() for r in caplog.records)


def test_due_ns_says_when_a_retry_or_refresh_is_due(tm, clock):
    display, factory = tm
    assert display.due_ns is None
    display.show("1:00")
    assert display.due_ns == clock.ns + 5_000_000_000  # refresh_s
    factory.wire.present = False
    clock.advance(5)
    display.show("1:00")  # the refresh finds the module gone
    assert not display.ok and display.due_ns == clock.ns + 500_000_000
    factory.wire.present = True
    clock.ns = display.due_ns
    display.show(display.text)
    assert display.ok and on_the_wire(factory).text() == "1:00"
    display.close()
    assert display.due_ns is None


def test_tm1637_backoff_doubles_and_is_capped(tm, clock):
    display, factory = tm
    factory.wire.present = False
    tries = []
    for _ in range(200):  # 20 s of a 10 Hz main loop
        before = len(factory.wire.events)
        display.show("1:00")
        if len(factory.wire.events) > before:
            tries.append(clock.ns)
        clock.advance(0.1)
    gaps = [round((b - a) / 1e9, 1) for a, b in zip(tries, tries[1:])]
    assert gaps[:5] == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert max(gaps) == DeviceDisplay.RETRY_MAX_S


def test_tm1637_pin_held_by_another_device_is_retried(clock, caplog):
    from gpiozero import DigitalOutputDevice

    factory = wire_factory()
    squatter = DigitalOutputDevice(6, pin_factory=factory)  # gpiozero raises GPIOPinInUse on open
    display = open_display({"driver": "tm1637", "clk": 5, "dio": 6}, pin_factory=factory, clock_ns=clock)
    display.show("3:00")
    assert not display.ok
    assert "GPIOPinInUse" in caplog.text
    squatter.close()
    clock.advance(1)
    display.show("2:59")
    assert display.ok and on_the_wire(factory).text() == "2:59"
    display.close()


def test_tm1637_releases_its_pins_on_close(tm):
    from gpiozero import DigitalOutputDevice

    display, factory = tm
    display.show("1:00")
    display.close()
    DigitalOutputDevice(5, pin_factory=factory).close()  # would raise GPIOPinInUse if still held
    display.show("0:59")  # after close: ignored, no error


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=-600, max_value=99 * 60 + 59))
def test_tm1637_every_clock_reading_round_trips(seconds):
    sign, s = ("-", -seconds) if seconds < 0 else ("", seconds)
    text = f"{sign}{s // 60}:{s % 60:02d}"
    factory = wire_factory()
    display = open_display({"driver": "tm1637", "clk": 5, "dio": 6}, pin_factory=factory, clock_ns=FakeClock())
    display.show(text)
    assert on_the_wire(factory).text() == text
    display.close()


def test_bad_text_is_logged_once_and_never_raises(tm, caplog):
    display, factory = tm
    display.show("1:00")
    for _ in range(3):
        display.show("WXYZ")
        display.show("123:45")
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 2
    assert "cannot draw 'W'" in errors[0] and "too long" in errors[1]
    assert on_the_wire(factory).text() == "1:00"  # the last good text stays up


# --- the shared encoder ----------------------------------------------------------------------------
# The segments a person sees lit for each character the clock shows (support.segments.SEGMENT_WORDS):
# independent of hardware.sevenseg's bit table, which the decoder above reads with (tm1637_decode.text_of).


@pytest.mark.parametrize("char, word", SEGMENT_WORDS.items())
def test_each_glyph_lights_the_segments_a_person_reads_as_it(char, word):
    bits = sevenseg.MINUS_ONE if char == "-1" else sevenseg.GLYPHS[char]
    assert "".join(letter for n, letter in enumerate("abcdefg") if bits >> n & 1) == word
    assert tm1637_decode.text_of(bytes([bits])) == char


@pytest.mark.parametrize(
    "text, message",
    [("1:2:3", "only one"), (":12", "colon must follow"), ("12345", "too long"), ("1:234", "colon would fall"),
     ("Wait", "cannot draw 'W'")],
)
def test_encoder_refuses_what_the_module_cannot_show(text, message):
    with pytest.raises(ValueError, match=message):
        sevenseg.encode(text)


# --- serial (SparkFun Serial 7-Segment Display) ----------------------------------------------------
def decode_s7s(data: bytes, digits: list[int] | None = None) -> tuple[str, dict]:
    """Replay the S7S command bytes (per SparkFun's command table) and read the digits back."""
    digits = digits if digits is not None else [0, 0, 0, 0]
    info = {"clears": 0, "brightness": None, "decimals": 0}
    i = 0
    while i < len(data):
        cmd = data[i]
        if cmd == 0x76:
            digits[:] = [0, 0, 0, 0]
            info["clears"] += 1
            i += 1
            continue
        assert i + 1 < len(data), f"command 0x{cmd:02X} without its data byte"
        arg = data[i + 1]
        if 0x7B <= cmd <= 0x7E:
            digits[cmd - 0x7B] = arg & 0x7F
        elif cmd == 0x77:
            info["decimals"] = arg
        elif cmd == 0x7A:
            info["brightness"] = arg
        else:
            raise AssertionError(f"unexpected byte 0x{cmd:02X} (ASCII mode is not used)")
        i += 2
    colon = tm1637_decode.COLON_BIT if info["decimals"] & 0x10 else 0  # the S7S's colon is its decimal bit 4
    return cells_text(bytes(d | (colon if i == sevenseg.COLON_AFTER else 0) for i, d in enumerate(digits))), info


INIT, FRAME = 3, 10  # bytes: clear + brightness when opened; 4 digits + colon per text


class Pty:
    """A pty standing in for a USB-serial adapter, reached through a symlink that can vanish."""

    def __init__(self, tmp_path) -> None:
        self.link = tmp_path / "ttyUSB0"
        self.master = None
        self.plug()

    def plug(self) -> None:
        self.master, slave = os.openpty()
        name = os.ttyname(slave)
        os.close(slave)
        if self.link.is_symlink():
            self.link.unlink()
        self.link.symlink_to(name)

    def unplug(self) -> None:
        os.close(self.master)
        self.master = None
        self.link.unlink()

    def read(self, expect: int) -> bytes:
        """Read `expect` bytes: the tty layer hands written bytes to the master asynchronously, so
        wait for them to arrive (select, up to 5 s), then check nothing more is pending."""
        data = b""
        while len(data) < expect:
            ready, _, _ = select.select([self.master], [], [], 5)
            assert ready, f"only {len(data)} of {expect} bytes arrived"
            data += os.read(self.master, 4096)
        assert not select.select([self.master], [], [], 0)[0], "more bytes than expected"
        return data

    def close(self) -> None:
        if self.master is not None:
            os.close(self.master)


@pytest.fixture
def pty(tmp_path):
    p = Pty(tmp_path)
    yield p
    p.close()


@pytest.mark.parametrize("text", ["24:59", "-1:05", "-10:00", "5:00", "HoLd"])
def test_serial_shows_text_at_the_wire(pty, clock, text):
    display = open_display({"driver": "serial", "url": str(pty.link), "brightness": 60}, pin_factory=None, clock_ns=clock)
    display.show(text)
    shown, info = decode_s7s(pty.read(INIT + FRAME))
    assert shown == text
    assert info["clears"] == 1 and info["brightness"] == 60
    display.close()


def test_serial_over_loop_url(clock):
    display = open_display({"driver": "serial", "url": "loop://", "baudrate": 115200}, clock_ns=clock)
    display.show("-1:05")
    assert decode_s7s(display.port.read(100))[0] == "-1:05"
    display.show("-1:05")
    assert display.port.read(100) == b""  # identical text is not re-sent
    display.close()


def test_serial_port_that_fails_then_comes_back(pty, clock, caplog):
    display = open_display({"driver": "serial", "url": str(pty.link)}, name="right display", clock_ns=clock)
    display.show("24:59")
    screen = [0, 0, 0, 0]
    assert decode_s7s(pty.read(INIT + FRAME), screen)[0] == "24:59"

    pty.unplug()  # write fails (EIO), then the device node is gone, so opening fails too
    for second in range(58, 30, -1):
        clock.advance(1)
        display.show(f"24:{second}")
    assert not display.ok
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("right display: display not working")

    pty.plug()
    clock.advance(DeviceDisplay.RETRY_MAX_S)
    display.show("24:30")
    assert display.ok
    shown, info = decode_s7s(pty.read(INIT + FRAME), [0, 0, 0, 0])
    assert shown == "24:30" and info["clears"] == 1  # reopened and re-initialised
    display.close()


def test_serial_port_absent_at_start(tmp_path, clock, caplog):
    display = open_display({"driver": "serial", "url": str(tmp_path / "nothing")}, clock_ns=clock)
    display.show("25:00")
    assert not display.ok and "display not working" in caplog.text
    display.close()


# --- the factory and the interface ----------------------------------------------------------------
def test_open_display_none_and_fakes_satisfy_the_protocol(clock):
    none = open_display({"driver": "none"}, clock_ns=clock)
    none.show("1:00")
    assert isinstance(none, NullDisplay) and none.text == "1:00"
    rec = RecordingDisplay("left")
    rec.show("1:00")
    rec.show("0:59")
    assert rec.text == "0:59" and rec.shown == ["1:00", "0:59"]
    for d in (none, rec, open_display({"driver": "serial", "url": "loop://"})):
        assert isinstance(d, Display)


@pytest.mark.parametrize(
    "spec, message",
    [
        ({}, r"display.driver: missing \(allowed: tm1637, serial, max7219, none\)"),
        ({"driver": "ht16k33"}, r"display.driver: 'ht16k33' \(allowed: tm1637, serial, max7219, none\)"),
        ({"driver": "tm1637", "clk": 5}, r"display.dio: missing"),
        ({"driver": "tm1637", "clk": 5, "dio": 40}, r"display.dio: 40 is not a usable pin \(allowed: BCM GPIO numbers 2-27\)"),
        ({"driver": "tm1637", "clk": 5, "dio": 5}, r"both BCM 5"),
        ({"driver": "tm1637", "clk": 5, "dio": 6, "brightness": 9}, r"display.brightness: 9 \(allowed: a whole number 0-7\)"),
        ({"driver": "tm1637", "clk": 5, "dio": 6, "url": "x"}, r"display.url: unknown key for driver 'tm1637' \(allowed: driver, clk, dio"),
        ({"driver": "serial"}, r"display.url: missing"),
        ({"driver": "serial", "url": "loop://", "baudrate": 1234}, r"display.baudrate: 1234 \(allowed: 2400, 4800, 9600"),
        ("tm1637", r"display: must be a table"),
    ],
)
def test_open_display_bad_table_names_key_and_allowed_values(spec, message):
    with pytest.raises(ValueError, match=message):
        open_display(spec)
    with pytest.raises(PinMapError):
        open_display(spec)


def test_importing_the_hardware_layer_loads_no_hardware_module():
    code = (
        "import sys, hardware.display, hardware.sevenseg, hardware.drivers.tm1637, hardware.drivers.serial, "
        "rackside.hardware.pinmap, rackside.hardware.wiring, rackside.hardware.sdnotify\n"
        "bad = [m for m in ('gpiozero', 'serial', 'lgpio', 'RPi', 'pygame', 'luma', 'spidev') if m in sys.modules]\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
