"""TM1637 frames decoded from a record of the CLK and DIO lines: pure, no I/O.

Reads what the kernel's GPIO tracepoints record (`gpio:gpio_value`: a line set or read, with its
value; `gpio:gpio_direction`: a line made an input or an output) as tracefs prints them, and decodes
the TM1637 two-wire protocol the driver (`hardware.drivers.tm1637`) bit-bangs on them:

- START: DIO falls while CLK is high; STOP: DIO rises while CLK is high;
- a byte: 8 clocks, least significant bit first, DIO sampled as CLK rises;
- the 9th clock: DIO is released (an input) and read; a 0 read is the chip's acknowledgement;
- a frame: [0x40] (write, auto-increment), [0xC0 | address, digit bytes...], [0x88 | brightness]
  (display on) or [0x80] (off).

`decode(events, clk, dio)` returns the transactions; `frames(transactions)` the frames, each with
the four digit bytes the module was sent, its text (`text_of`) and the time it took. Used by
tools/arm64-gpio/check.py on the trace of the VM's gpio-sim chip; its unit tests decode a synthetic
trace (tests/test_tm1637_decode.py). Memory: the caller's event list plus the transactions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from rackside.hardware import sevenseg

CMD_DATA = 0x40  # data command: write display registers, auto-increment (bits 0-1: 00)
CMD_ADDRESS = 0xC0  # address command, bits 0-2 the start register
CMD_CONTROL = 0x80  # display control: bit 3 display on, bits 0-2 brightness
COLON_BIT = 0x80

# tracefs' text lines: "<task>-<pid> [cpu] <flags> <seconds>.<micro>: gpio_value: 480 set 1" (with the
# record-tgid option, "(<tgid>)" before [cpu])
_LINE = re.compile(r"^\s*.*?-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[\d+\]\s.*?\s(\d+)\.(\d{6,9}):\s+gpio_(value|direction):\s+(\d+)\s+(set|get|in|out)\s+\(?(-?\d+)\)?")


@dataclass(frozen=True)
class Event:
    """One record: `kind` "set"/"get" (value 0/1) or "in"/"out" (a direction change); `pid`: the
    thread that made it (the kernel's edge thread of a line reads it too, besides its consumer)."""

    t_ns: int
    gpio: int
    kind: str
    value: int = 0
    pid: int = 0


def parse_trace(lines: Iterable[str]) -> Iterator[Event]:
    """The gpio events of tracefs' text output (other lines are skipped). Timestamps are the trace
    clock's (`mono`: CLOCK_MONOTONIC), at the precision printed (microseconds by default)."""
    for line in lines:
        m = _LINE.search(line)
        if m is None:
            continue
        pid, sec, frac, _, gpio, kind, value = m.groups()
        t_ns = int(sec) * 1_000_000_000 + int(frac.ljust(9, "0"))
        yield Event(t_ns, int(gpio), kind, int(value) if kind in ("set", "get") else 0, int(pid))


@dataclass
class Transaction:
    """START ... STOP: the bytes sent, each byte's acknowledgement (True: the chip pulled DIO low)."""

    start_ns: int
    stop_ns: int = 0
    data: list[int] = field(default_factory=list)
    acks: list[bool] = field(default_factory=list)
    clock_rises: list[int] = field(default_factory=list)  # ns of each CLK rise
    errors: list[str] = field(default_factory=list)


def decode(events: Iterable[Event], clk: int, dio: int) -> list[Transaction]:
    """The transactions on one display's CLK and DIO lines (gpio numbers as the trace names them)."""
    out: list[Transaction] = []
    clk_level, dio_level, dio_input = 1, 1, False
    cur: Transaction | None = None
    bits: list[int] = []
    rise_dio = 1
    ack_read: int | None = None
    for ev in events:
        if ev.gpio == dio:
            if ev.kind in ("in", "out"):
                dio_input = ev.kind == "in"
                continue
            if ev.kind == "get":
                if dio_input and clk_level == 1:
                    ack_read = ev.value
                continue
            # a set: a START or STOP when CLK is high and DIO changes
            if clk_level == 1 and ev.value != dio_level:
                if ev.value == 0:
                    if cur is not None:
                        cur.errors.append("START inside a transaction")
                        out.append(cur)
                    cur, bits = Transaction(start_ns=ev.t_ns), []
                elif cur is not None:
                    if bits:
                        cur.errors.append(f"STOP after {len(bits)} bits of a byte")
                    cur.stop_ns = ev.t_ns
                    out.append(cur)
                    cur = None
            dio_level = ev.value
        elif ev.gpio == clk and ev.kind == "set":
            if ev.value == clk_level:
                continue
            clk_level = ev.value
            if cur is None:
                continue
            if clk_level == 1:
                rise_dio, ack_read = dio_level, None
                cur.clock_rises.append(ev.t_ns)
            elif cur.clock_rises:
                # the clock falls after a rise inside the transaction (not START's own fall): the bit
                # (or the acknowledgement) is complete
                if len(bits) == 8:
                    cur.data.append(sum(b << i for i, b in enumerate(bits)))
                    cur.acks.append(ack_read == 0)
                    if not dio_input:
                        cur.errors.append(f"byte 0x{cur.data[-1]:02X}: DIO still driven at the 9th clock")
                    bits = []
                else:
                    bits.append(rise_dio)
    return out


@dataclass(frozen=True)
class Frame:
    """One display update: the digit bytes written from register 0, the brightness, the timing."""

    start_ns: int
    end_ns: int
    digits: bytes
    brightness: int | None  # 0-7, None: display switched off
    acked: bool  # every byte acknowledged
    errors: tuple[str, ...]

    @property
    def text(self) -> str:
        return text_of(self.digits)


def frames(transactions: list[Transaction]) -> list[Frame]:
    """Data command, address command with the digits, display control: one Frame each."""
    out: list[Frame] = []
    pending: list[Transaction] = []
    for tr in transactions:
        pending.append(tr)
        if tr.data and tr.data[0] & 0xC0 == CMD_CONTROL:
            errors: list[str] = [e for p in pending for e in p.errors]
            digits = b""
            for p in pending:
                if p.data and p.data[0] & 0xC0 == CMD_ADDRESS:
                    if p.data[0] & 0x07:
                        errors.append(f"address command 0x{p.data[0]:02X}: not register 0")
                    digits = bytes(p.data[1:])
            if not any(p.data[:1] == [CMD_DATA] for p in pending):
                errors.append("no data command (0x40) before the digits")
            on = bool(tr.data[0] & 0x08)
            out.append(Frame(
                start_ns=pending[0].start_ns, end_ns=tr.stop_ns, digits=digits,
                brightness=tr.data[0] & 0x07 if on else None,
                acked=all(all(p.acks) for p in pending), errors=tuple(errors),
            ))
            pending = []
    return out


_GLYPH_OF = {bits: ch for ch, bits in reversed(list(sevenseg.GLYPHS.items())) if ch != " "}
_GLYPH_OF[sevenseg.MINUS_ONE] = "-1"
_GLYPH_OF[0] = " "


def text_of(digits: bytes) -> str:
    """A readable text of four digit bytes ("12:34", " -0:05"): a character per cell, the colon
    after cell 1 when bit 7 of cell 1 is set; a cell no glyph draws is shown as "?"."""
    out = []
    for i, cell in enumerate(digits):
        out.append(_GLYPH_OF.get(cell & 0x7F, "?"))
        if i == sevenseg.COLON_AFTER and cell & COLON_BIT:
            out.append(":")
    return "".join(out)


@dataclass(frozen=True)
class Timing:
    """The bus timing seen: clock periods (rise to rise within a byte), frame durations (ns)."""

    clock_periods_ns: tuple[int, ...]
    frame_ns: tuple[int, ...]

    @staticmethod
    def of(transactions: list[Transaction], decoded: list[Frame]) -> "Timing":
        periods = [b - a for tr in transactions for a, b in zip(tr.clock_rises, tr.clock_rises[1:])]
        return Timing(tuple(periods), tuple(f.end_ns - f.start_ns for f in decoded))


def percentile(values: tuple[int, ...] | list[int], q: float) -> int:
    """The q-quantile (0-1) of `values`, nearest rank; 0 for none."""
    if not values:
        return 0
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]
