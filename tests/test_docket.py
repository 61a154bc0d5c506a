"""ESC/POS dockets (3.10.7(c)): exact bytes, and a printer that fails never hangs the station."""

from __future__ import annotations

import os
import time

import serial

from kiosk.docket import Docket, DocketPrinter, encode_docket, valid_status

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


def test_loop_port_echo_is_not_mistaken_for_a_printer():
    # loop:// echoes DLE EOT 1 back (0x10): not a valid status byte, so "did not answer".
    p = DocketPrinter("loop://", 19200, 0.1, status_check=True)
    ok, why = p.print_docket(DOCKET)
    assert not ok and "did not answer" in why


def test_offline_status_is_reported():
    master, slave = os.openpty()
    try:
        import tty

        tty.setraw(slave)
        os.write(master, b"")  # nothing pending
        p = DocketPrinter(os.ttyname(slave), 19200, 0.3)
        # Answer "offline" (bit 3) before the request: the printer drops it after reset, so write
        # the answer from the read side right after the request arrives.
        port = p._open()
        port.reset_input_buffer = lambda: None  # keep the pre-queued answer for this test
        os.write(master, b"\x1a")
        ok, why = p.print_docket(DOCKET)
        assert not ok and "offline" in why
        assert os.read(master, 64) == b"\x10\x04\x01"  # the request; no docket followed
    finally:
        os.close(master)
        os.close(slave)


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
