"""hardware.tm1637_decode on a synthetic trace: the real TM1637 driver on gpiozero's mock pins, every
pin write, read and direction change recorded as the kernel's gpio tracepoints print them.

tools/arm64-gpio/check.py decodes the VM's real trace with the same module; these tests need no VM.
"""

from __future__ import annotations

import itertools

import pytest
from gpiozero.pins.mock import MockFactory, MockPin

from rackside.hardware import tm1637_decode as dec
from rackside.hardware.drivers.tm1637 import TM1637Display, encode

CLK, DIO = 5, 6
BASE = 512  # the chip's first global gpio number, as the trace names lines


def recording_factory(lines: list[str], *, ack: bool = True):
    """A MockFactory whose pins print tracefs lines for every set, read and direction change; DIO
    reads 0 while it is an input when `ack` (a chip acknowledging), else its pull-up's 1."""
    tick = itertools.count(1_000_000_000, 3_000)  # 3 us between records

    def out(text: str) -> None:
        t = next(tick)
        lines.append(f"   python3-812  [001] .....  {t // 10**9}.{t % 10**9 // 1000:06d}: {text}")

    class TracePin(MockPin):
        def _set_function(self, value):
            super()._set_function(value)
            out(f"gpio_direction: {BASE + self._number} {'in' if value == 'input' else 'out'} (0)")

        def _set_state(self, value):
            super()._set_state(value)
            out(f"gpio_value: {BASE + self._number} set {int(bool(value))}")

        def _get_state(self):
            state = super()._get_state()
            if self._number == DIO and self._function == "input":
                state = 0 if ack else 1
                out(f"gpio_value: {BASE + self._number} get {state}")
            return state

    return MockFactory(pin_class=TracePin)


def run_driver(texts, *, ack=True, brightness=7):
    lines: list[str] = []
    factory = recording_factory(lines, ack=ack)
    d = TM1637Display(clk=CLK, dio=DIO, brightness=brightness, pin_factory=factory)
    d._open()
    for text in texts:
        try:
            d._write(encode(text))
        except OSError:
            pass  # no acknowledgement: the wire was still written
    d._release()
    factory.close()
    return lines


def decoded(lines):
    events = list(dec.parse_trace(lines))
    transactions = dec.decode(events, BASE + CLK, BASE + DIO)
    return transactions, dec.frames(transactions)


def test_the_drivers_frames_decode_to_the_digits_and_colon_sent():
    texts = ["1:00", "0:59", "-0:05", "HOLd", "-1:05"]
    transactions, frames = decoded(run_driver(texts))
    assert len(transactions) == 3 * len(texts)
    assert [t.data[0] for t in transactions[:3]] == [0x40, 0xC0, 0x8F]
    assert [f.digits for f in frames] == [encode(t) for t in texts]
    # O and 0 light the same segments: a decoded text reads digits first
    assert [f.text for f in frames] == [" 1:00", " 0:59", "-0:05", "H0Ld", "-1:05"]
    assert all(f.acked and f.brightness == 7 and not f.errors for f in frames)
    assert all(t.stop_ns > t.start_ns for t in transactions)


def test_the_colon_is_bit_7_of_the_second_digit():
    _, frames = decoded(run_driver(["1:00", "100"]))
    assert frames[0].digits[1] & 0x80 and not frames[1].digits[1] & 0x80
    assert frames[1].text == " 100"


def test_a_missing_acknowledgement_is_seen_and_the_brightness_read():
    transactions, frames = decoded(run_driver(["1:00"], ack=False))
    # the driver stops at the first byte not acknowledged (DisplayNotAnswering): no frame
    assert [(t.data, t.acks) for t in transactions] == [([0x40], [False])] and frames == []
    _, frames = decoded(run_driver(["1:00"], brightness=2))
    assert frames[0].acked and frames[0].brightness == 2


def test_a_wrong_digit_on_the_wire_differs_from_the_renderers():
    lines = run_driver(["1:00"])
    events = list(dec.parse_trace(lines))
    # flip one data bit of the last digit: the first DIO set after the 5th byte's start
    transactions = dec.decode(events, BASE + CLK, BASE + DIO)
    assert dec.frames(transactions)[0].digits == encode("1:00")
    rises = transactions[1].clock_rises
    target = rises[4 * 9]  # the 5th byte's first clock rise (0xC0, then three digits of 9 clocks)
    i = max(k for k, e in enumerate(events) if e.t_ns < target and e.gpio == BASE + DIO and e.kind == "set")
    events[i] = dec.Event(events[i].t_ns, events[i].gpio, "set", 1 - events[i].value)
    wrong = dec.frames(dec.decode(events, BASE + CLK, BASE + DIO))[0]
    assert wrong.digits[:3] == encode("1:00")[:3] and wrong.digits[3] != encode("1:00")[3]


def test_timing_and_trace_text():
    transactions, frames = decoded(run_driver(["1:00"]))
    timing = dec.Timing.of(transactions, frames)
    assert timing.clock_periods_ns and all(p > 0 for p in timing.clock_periods_ns)
    assert timing.frame_ns[0] == frames[0].end_ns - frames[0].start_ns > 0
    assert dec.percentile([5, 1, 3], 0.5) == 3 and dec.percentile([], 0.5) == 0
    # tracefs' own line, nanosecond clock digits accepted too; other lines skipped
    ev = list(dec.parse_trace([
        "  rackside-612  [000] d..1.   51.123456: gpio_value: 476 set 1",
        "  rackside-612  [000] .....   51.123457123: gpio_direction: 482  in (0)",
        "   irq/30-lg-480     [001] .....   51.123458: gpio_value: 497 get 0",  # the edge thread: its own pid
        "  rackside-612  (  600) [000] .....   51.123459: gpio_value: 476 set 0",  # tracefs' record-tgid option
        "# tracer: nop",
    ]))
    assert ev == [dec.Event(51_123_456_000, 476, "set", 1, 612), dec.Event(51_123_457_123, 482, "in", 0, 612),
                  dec.Event(51_123_458_000, 497, "get", 0, 480), dec.Event(51_123_459_000, 476, "set", 0, 612)]


@pytest.mark.parametrize("garbage", ["", "gpio_value: x set 1", "  1.5: gpio_value: 3 set"])
def test_lines_that_are_not_gpio_records_are_skipped(garbage):
    assert list(dec.parse_trace([garbage])) == []


@pytest.mark.parametrize("setting, pull", [("up", "up"), ("off", "floating")])
def test_dio_pull_chooses_the_pis_pull_up_on_dio_while_the_chip_acknowledges(setting, pull):
    pulls = []

    class PullPin(MockPin):
        def _set_pull(self, value):
            super()._set_pull(value)
            pulls.append((self._number, value))

    factory = MockFactory(pin_class=PullPin)
    d = TM1637Display(clk=CLK, dio=DIO, dio_pull=setting, pin_factory=factory)
    d._open()
    try:
        del pulls[:]
        try:
            d._write(encode("1:00"))
        except OSError:
            pass
        assert pulls and set(pulls) == {(DIO, pull)}
    finally:
        d._release()
        factory.close()


def test_no_chip_setting_leaves_gpiozero_its_default_factory():
    from rackside.hardware.board import gpio_factory

    assert gpio_factory(None) is None
