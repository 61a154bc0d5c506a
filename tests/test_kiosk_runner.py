"""Runner mode (3.10.7) and the docket printer: the exact docket, printed on the printer's own
thread, and every way a printer can fail without holding up a verdict.

The real pygame event queue under SDL's dummy driver, a fake clock, and small compiled lexicons
in a temporary folder (the rig and its shared helpers: tests/support/kiosk_rig.py)."""

from __future__ import annotations

import os
import threading

import pygame

from rackside.kiosk.docket import Docket, encode_docket
from rackside.kiosk.flow import Screen

from support.kiosk_rig import (
    judge_keep,
    make_app,
    post_finger,
    post_finger_tap,
    records,
    runner_judge,
    texts_drawn,
    wait_for_dockets,
)
from support.wait import until


def test_runner_mode_prints_the_exact_docket(tmp_path, monkeypatch):
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url="loop://", printer_status_check=False)
    try:
        runner_judge(app, "12", "qi za")
        st = app.station
        assert st.screen == Screen.RESULT and st.verdict.kind == "runner" and st.docket == "printing"
        wait_for_dockets(app)
        assert st.docket == "printed"
        rec = records(tmp_path)[0]
        assert rec.table == "12" and rec.kind == "runner" and st.verdict.challenge_id == rec.id
        port = app.effects.dockets.printer._port
        got = port.read(port.in_waiting)
        from rackside.kiosk.effects import _docket_time
        assert got == encode_docket(Docket(rec.id, _docket_time(rec.time), "12", st.verdict.lexicon, ("QI", "ZA"), True,
                                           rec.short_id))
        assert b"Short id  " + rec.short_id.encode() + b"\n" in got and st.verdict.short_id == rec.short_id
        assert b"Table     12\n" in got and b"\xfb ACCEPTABLE" in got and got.endswith(b"\x1dV\x42\x00")
    finally:
        app.shutdown()


class HeldPrinter:
    """Each docket's answer held until the test lets one go (`release`; a printer slowly timing
    out): what the station does meanwhile is the point. `print_docket` runs on the printer's own
    thread; the answers are given in turn."""

    def __init__(self, app, *answers) -> None:
        self.answers = list(answers) or [(False, "the printer did not answer (off or unplugged?)")]
        self.printing, self._go = threading.Event(), threading.Semaphore(0)
        self.ids: list[str] = []
        app.effects.dockets.printer.print_docket = self.print_docket

    def release(self, n: int = 1) -> None:
        for _ in range(n):
            self._go.release()

    def print_docket(self, docket):
        self.ids.append(docket.challenge_id)
        self.printing.set()
        assert self._go.acquire(timeout=10), "the test never released the printer"
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def test_a_tap_made_while_a_slow_docket_prints_does_not_dismiss_the_result(tmp_path, monkeypatch):
    # Issue 4: the result ignores touches for its first 0.5 s, and a printer never hides the
    # verdict. A switched-off printer takes a write timeout to fail; a tap made in that time (the
    # adjudicator's second tap on JUDGE) is stamped when it is made, in the touch-ignore.
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url="loop://")
    printer = HeldPrinter(app)
    try:
        runner_judge(app, "4", "qi")
        assert printer.printing.wait(5)
        clock.advance(0.1)
        post_finger(pygame.FINGERDOWN)  # a tap 0.1 s into the result, while the port times out
        post_finger(pygame.FINGERUP)
        app.step()
        clock.advance(0.5)
        printer.release()
        wait_for_dockets(app)
        assert app.station.screen == Screen.RESULT
        assert app.station.docket.startswith("failed")
    finally:
        printer.release(5)
        app.shutdown()


def test_touches_made_while_a_docket_prints_are_not_lost(tmp_path, monkeypatch):
    """Issue 16 item 5: the docket prints on its own thread. The station used to print on the UI
    thread and then clear every touch and key queued meanwhile; now each is handled as it comes,
    and the printer's late answer goes to the result it was printed for, never a later one."""
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url="loop://")
    printer = HeldPrinter(app, (False, "the printer did not answer (off or unplugged?)"), (True, ""))
    try:
        runner_judge(app, "4", "qi")
        first = app.station.verdict.challenge_id
        assert printer.printing.wait(5) and app.station.docket == "printing"
        clock.advance(1.0)  # past the result's touch-ignore; the printer still has the docket
        post_finger_tap(app, pos=(400, 240))  # the adjudicator is done: a tap while it prints counts
        app.step()
        assert app.station.screen == Screen.IDLE
        runner_judge(app, "5", "za")  # the next challenge, keys and taps, while the first still prints
        st = app.station
        assert st.screen == Screen.RESULT and st.verdict.challenge_id != first and st.docket == "printing"
        assert [r.table for r in records(tmp_path)] == ["4", "5"]
        printer.release()  # the first docket fails: said nowhere, its result is gone
        until(lambda: app.step() or app.effects.dockets.pending != 2, 5, poll=0.002)  # the app is stepped on this thread
        assert app.effects.dockets.pending == 1
        assert st.docket == "printing"
        printer.release()
        wait_for_dockets(app)
        assert printer.ids == [first, st.verdict.challenge_id]
        assert st.docket == "printed"  # its own docket's answer
    finally:
        printer.release(5)
        app.shutdown()


def test_runner_result_speaks_to_the_adjudicator(tmp_path, monkeypatch):
    """Issue 10 item 9: in runner mode the players are not at the station."""
    app, clock = make_app(tmp_path, monkeypatch, mode="runner")
    try:
        runner_judge(app, "5", "qi")
        shown = " ".join(texts_drawn(app))
        assert "both" not in shown and "slip" in shown
    finally:
        app.shutdown()
    app, clock = make_app(tmp_path / "self", monkeypatch)
    try:
        judge_keep(app, "qi")
        assert "both seen" in " ".join(texts_drawn(app))
    finally:
        app.shutdown()


def test_loop_printer_is_a_dry_run(tmp_path, monkeypatch):
    """Issue 10 item 9: `url = "loop://"` with the status check on (the default) prints."""
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url="loop://")
    try:
        for table in ("1", "2"):
            runner_judge(app, table, "qi")
            wait_for_dockets(app)
            assert app.station.docket == "printed"
            clock.advance(11)
            app.step()
    finally:
        app.shutdown()


def test_unplugged_printer_never_blocks_the_verdict(tmp_path, monkeypatch):
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url=str(tmp_path / "no-such-tty"))
    try:
        import time as _t
        t0 = _t.perf_counter()
        runner_judge(app, "3", "qi zzq")
        assert _t.perf_counter() - t0 < 1.0
        wait_for_dockets(app)
        st = app.station
        assert st.screen == Screen.RESULT and not st.verdict.acceptable
        assert st.docket.startswith("failed") and "no printer" in st.docket
        assert records(tmp_path)[0].table == "3"  # logged all the same
    finally:
        app.shutdown()


def test_switched_off_printer_on_a_pty_is_reported(tmp_path, monkeypatch):
    master, slave = os.openpty()
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url=os.ttyname(slave),
                          printer_write_timeout=0.1)
    try:
        runner_judge(app, "", "cat")
        wait_for_dockets(app)
        assert app.station.docket.startswith("failed") and "did not answer" in app.station.docket
        assert app.station.verdict.acceptable
    finally:
        app.shutdown()
        os.close(master)
        os.close(slave)


def test_printer_on_a_pty_answers_status_then_gets_the_docket(tmp_path, monkeypatch):
    master, slave = os.openpty()
    import tty
    tty.setraw(slave)
    received = bytearray()

    def printer():  # a minimal ESC/POS printer: answers DLE EOT 1 "online", keeps the rest
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            received.extend(chunk)
            if b"\x10\x04\x01" in chunk:
                os.write(master, b"\x12")
            if received.endswith(b"\x1dV\x42\x00"):
                return

    thread = threading.Thread(target=printer, daemon=True)
    thread.start()
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url=os.ttyname(slave))
    try:
        runner_judge(app, "7", "dog")
        thread.join(5)
        wait_for_dockets(app)
        assert app.station.docket == "printed"
        assert received.startswith(b"\x10\x04\x01\x1b@") and b"Words     DOG\n" in received
    finally:
        app.shutdown()
        os.close(master)
        os.close(slave)
