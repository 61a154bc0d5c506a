"""ESC/POS dockets (3.10.7(c)): exact bytes, and a printer that fails never hangs the station."""

from __future__ import annotations

import os
import time

import serial

from rackside.kiosk.docket import Docket, DocketPrinter, encode_docket, valid_status

DOCKET = Docket("hall-a-20261129-120003-0a1b2c", "2026-11-29 12:00:03 UTC", "12", "ENABLE (1a2b3c4d)",
                ("QI", "ZA"), True)


def test_exact_bytes_acceptable():
    assert encode_docket(DOCKET) == (
        b"\x1b@"  # initialise
        b"\x1bt\x00"  # code page PC437
        b"\x1ba\x01\x1bE\x01\x1d!\x11"  # centre, bold, double size
        b"\xfb ACCEPTABLE\n"  # the tick
        b"\x1d!\x00\x1bE\x00\n"
        b"\x1ba\x00"
        b"Challenge hall-a-20261129-120003-0a1b2c\n"
        b"Time      2026-11-29 12:00:03 UTC\n"
        b"Table     12\n"
        b"Lexicon   ENABLE (1a2b3c4d)\n"
        b"Words     QI\n"
        b"          ZA\n"
        b"\x1bd\x04\x1dV\x42\x00"  # feed, partial cut
    )


def test_cross_and_no_table():
    d = Docket("x-1", "t", None, "L", ("ZZZ",), False)
    out = encode_docket(d)
    assert b"X UNACCEPTABLE\n" in out and b"\xfb" not in out
    assert b"Table     -\n" in out


def test_non_ascii_lexicon_name_cannot_break_the_docket():
    out = encode_docket(Docket("x-1", "t", None, "Łódź ✓", ("QI",), True))
    assert b"Lexicon   ?\xa2d? ?\n" in out


def test_loop_printer_receives_the_docket():
    p = DocketPrinter("loop://", 19200, 0.2, status_check=False)
    assert p.print_docket(DOCKET) == (True, "")
    port = p._port
    assert port.read(port.in_waiting) == encode_docket(DOCKET)
    p.close()


def test_status_byte_meaning():
    assert valid_status(0x12) and valid_status(0x1A)
    assert not valid_status(0x10) and not valid_status(0x00) and not valid_status(0xFF)


def test_loop_url_is_a_dry_run_even_with_the_status_check():
    # loop:// echoes DLE EOT 1 back (0x10), which is no printer's answer: a dry run skips the
    # check instead of reporting "no printer" at every challenge (issue 10 item 9), and keeps
    # only the latest docket so a day of dry runs does not grow in memory.
    p = DocketPrinter("loop://", 19200, 0.1, status_check=True)
    assert p.dry_run
    for _ in range(3):
        assert p.print_docket(DOCKET) == (True, "")
    port = p._port
    assert port.read(port.in_waiting) == encode_docket(DOCKET)
    p.close()
    assert not DocketPrinter("/dev/ttyUSB0").dry_run


class PtyPrinter:
    """A serial ESC/POS printer on a pty: answers DLE EOT 1 with `status`, records every byte."""

    def __init__(self, status: bytes | None):
        import threading
        import tty

        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.status, self.received = status, bytearray()
        self.cut = threading.Event()  # set when a whole docket (ending in the cut) has arrived
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return os.ttyname(self.slave)

    def _serve(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return
            if not chunk:
                return
            self.received.extend(chunk)
            if b"\x10\x04\x01" in chunk and self.status:
                os.write(self.master, self.status)
            if self.received.endswith(b"\x1dV\x42\x00"):
                self.cut.set()

    def close(self) -> None:
        os.close(self.slave)
        os.close(self.master)
        self.thread.join(2)


def test_online_printer_on_a_pty_gets_status_request_then_the_docket():
    printer = PtyPrinter(b"\x12")
    try:
        p = DocketPrinter(printer.url, 19200, 0.5)
        assert p.print_docket(DOCKET) == (True, "")
        assert printer.cut.wait(5)
        p.close()
    finally:
        printer.close()
    assert bytes(printer.received) == b"\x10\x04\x01" + encode_docket(DOCKET)


def test_offline_printer_is_reported_and_gets_no_docket():
    printer = PtyPrinter(b"\x1a")  # bit 3: offline (cover open, paper out)
    try:
        p = DocketPrinter(printer.url, 19200, 0.5)
        ok, why = p.print_docket(DOCKET)
        assert not ok and "offline" in why
    finally:
        printer.close()
    assert bytes(printer.received) == b"\x10\x04\x01"


def test_silent_printer_is_reported_within_the_timeout():
    printer = PtyPrinter(None)  # switched off: nothing answers
    try:
        p = DocketPrinter(printer.url, 19200, 0.1)
        t0 = time.perf_counter()
        ok, why = p.print_docket(DOCKET)
        assert not ok and "did not answer" in why and time.perf_counter() - t0 < 1.0
    finally:
        printer.close()


def test_missing_device_fails_fast_and_retries_next_time(tmp_path):
    p = DocketPrinter(str(tmp_path / "ttyUSB9"), 19200, 0.2)
    t0 = time.perf_counter()
    ok, why = p.print_docket(DOCKET)
    assert not ok and "no printer" in why and time.perf_counter() - t0 < 0.5
    assert p._port is None  # reopened on the next docket


def test_stalled_printer_write_is_bounded(monkeypatch):
    p = DocketPrinter("loop://", 19200, 0.1, status_check=False)
    port = p._open()

    def stalled(data):
        raise serial.SerialTimeoutException("Write timeout")

    monkeypatch.setattr(port, "write", stalled)
    ok, why = p.print_docket(DOCKET)
    assert not ok and "did not take the docket in time" in why and p._port is None
