"""The runner and its journal: write-ahead, then apply, then the displays, then one fsync per batch;
and a journal that cannot be written (a full or failing card) never stops the clock.

A fake clock drives gpiozero's mock pins (tests/test_firmware_support.py); the journal is a real
file. Faults are injected by replacing os.write / os.fsync for the journal's descriptor only.
"""

from __future__ import annotations

import errno
import logging
import os

import pytest

import firmware.runner as runner_module
from firmware import persist
from firmware.clock import NS_PER_MS, NS_PER_S, Phase, run
from firmware.journal import read_journal

from test_firmware_support import rig  # noqa: F401 - rig is a fixture

GAME_NS = 25 * 60 * NS_PER_S


def start_left(rig) -> int:
    """The right player presses to start the left player's time (2.2); returns the edge time."""
    rig.after_ms(10)
    t = rig.tap("right")
    assert rig.view().players[0].running
    return t


def journal_fd(rig) -> int:
    return rig.store._writer._fd


def spy_calls(rig, monkeypatch, calls: list) -> None:
    """Log, in order, the journal's writes and fsyncs and what the displays were told, each with
    the input the clock had acted on last (`since_ns`) at that moment."""
    fd = journal_fd(rig)
    real_write, real_fsync = os.write, os.fsync

    def write(f, data):
        if f == fd:
            calls.append(("write", rig.runner.clock.since_ns))
        return real_write(f, data)

    def fsync(f):
        if f == fd:
            calls.append(("fsync", rig.runner.clock.since_ns))
        return real_fsync(f)

    monkeypatch.setattr(persist.os, "write", write)
    monkeypatch.setattr(persist.os, "fsync", fsync)
    for display in rig.displays:
        show = display.show
        monkeypatch.setattr(display, "show", lambda text, show=show: (calls.append(("show", rig.runner.clock.since_ns)), show(text)))


def kinds(calls: list) -> list[str]:
    return [kind for kind, _ in calls]


def test_each_batch_is_written_then_applied_then_shown_then_fsynced_once(rig, monkeypatch):
    t_start = start_left(rig)
    calls: list = []
    spy_calls(rig, monkeypatch, calls)
    # one batch: the left player's press switches the clock, then the centre neutralises it
    t_press = t_start + 2_900 * NS_PER_MS
    t_centre = t_press + 300 * NS_PER_MS
    rig.at(t_press).down("left")
    rig.at(t_press + 50 * NS_PER_MS).up("left")
    rig.at(t_centre).down("neutralise")
    rig.pump()
    assert rig.view().phase is Phase.NEUTRALISED
    assert rig.remaining_ns(1) == GAME_NS - (t_press - t_start)
    assert rig.remaining_ns(2) == GAME_NS - 300 * NS_PER_MS
    shown = kinds(calls).index("show")
    # each input is written before the clock acts on it (write-ahead) ...
    assert calls[:shown] == [("write", t_start), ("write", t_press)]
    # ... the displays are told once the batch is applied, and only then one fsync
    assert set(calls[shown:-1]) == {("show", t_centre)} and calls[-1] == ("fsync", t_centre)
    assert [(e["input"], e["t_ns"]) for e in rig.journal_inputs()][-2:] == [("press", t_press), ("neutralise", t_centre)]


def test_the_fsync_comes_before_the_checkpoint(rig, monkeypatch):
    t_start = start_left(rig)
    rig.advance_to(t_start + 600 * NS_PER_MS)
    calls: list = []
    spy_calls(rig, monkeypatch, calls)
    checkpoint = rig.store.checkpoint
    monkeypatch.setattr(rig.store, "checkpoint", lambda c, t: (calls.append(("checkpoint", t)), checkpoint(c, t))[1])
    rig.at(t_start + 950 * NS_PER_MS).down("left").pump()  # a checkpoint is due (0.9 s) in this batch
    assert "checkpoint" in kinds(calls)
    assert kinds(calls).index("fsync") < kinds(calls).index("checkpoint")


def test_a_batch_with_no_input_does_not_fsync(rig, monkeypatch):
    start_left(rig)
    calls: list = []
    spy_calls(rig, monkeypatch, calls)
    rig.advance_ms(3_000)  # the display counts down; nothing is journalled
    assert set(kinds(calls)) == {"show"}


def test_closing_fsyncs_a_press_written_at_shutdown(rig, monkeypatch):
    t = rig.after_ms(10).now
    rig.down("right").pump()  # before the game: held back until release
    calls: list = []
    spy_calls(rig, monkeypatch, calls)
    rig.runner.close()
    assert calls == [("write", None), ("fsync", t)]
    assert [e["input"] for e in rig.journal_inputs()] == ["press"]


class FailingCard:
    """os.write / os.fsync that fail for one descriptor while `failing`; with `partial`, the first
    failing write gets 10 bytes of the line onto the card first (a short write, then an error)."""

    def __init__(self, monkeypatch, fd: int, *, write: bool = True, fsync: bool = False, partial: bool = False) -> None:
        self.fd, self.failing, self.partial = fd, False, partial
        self.real_write, self.real_fsync = os.write, os.fsync
        if write:
            monkeypatch.setattr(persist.os, "write", self.write)
        if fsync:
            monkeypatch.setattr(persist.os, "fsync", self.fsync)

    def write(self, fd, data):
        if fd == self.fd and self.failing:
            if self.partial:
                self.partial = False
                return self.real_write(fd, bytes(data[:10]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.real_write(fd, data)

    def fsync(self, fd):
        if fd == self.fd and self.failing:
            raise OSError(errno.EIO, "Input/output error")
        return self.real_fsync(fd)


def recorded(rig, monkeypatch) -> list:
    """(event, written) for every input the runner tried to journal."""
    attempts = []
    record = rig.store.record

    def spy(event, **kwargs):
        try:
            number = record(event, **kwargs)
        except OSError:
            attempts.append((event, False))
            raise
        attempts.append((event, True))
        return number

    monkeypatch.setattr(rig.store, "record", spy)
    return attempts


def journal_errors(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "firmware.runner" and r.levelno == logging.ERROR]


@pytest.mark.parametrize("partial", [False, True], ids=["nothing written", "part of a line written"])
def test_a_full_card_never_stops_the_clock_and_writes_resume_when_it_has_room(rig, monkeypatch, caplog, partial):
    caplog.set_level(logging.INFO)
    t_start = start_left(rig)
    attempts = recorded(rig, monkeypatch)
    card = FailingCard(monkeypatch, journal_fd(rig), partial=partial)
    before = rig.runner.clock

    card.failing = True
    presses = [("left", 2), ("right", 3), ("left", 4)]  # at 2 s, 3 s, 4 s after the start
    for button, s in presses:
        rig.at(t_start + s * NS_PER_S)
        rig.down(button).pump()
        rig.after_ms(50).up(button)
        rig.advance_ms(100)
    # the clock switched every time and charged exact time, edge to edge
    assert rig.view().players[1].running
    assert rig.runner.clock.played_ns == (3 * NS_PER_S, 1 * NS_PER_S)  # left: 0-2 s, 3-4 s; right: 2-3 s
    assert rig.runner.clock.switched_ns == t_start + 4 * NS_PER_S
    # logged once for the whole outage, at error level
    assert len(journal_errors(caplog)) == 1 and "No space left" in journal_errors(caplog)[0]
    assert rig.runner.journal_outage is not None and rig.runner.unjournalled == 3

    card.failing = False  # the card has room again: the next input is journalled
    rig.at(t_start + 6 * NS_PER_S).down("right").pump()
    assert rig.view().players[0].running
    assert rig.runner.clock.played_ns == (3 * NS_PER_S, 3 * NS_PER_S)  # right: 2-3 s, 4-6 s
    assert rig.runner.journal_outage is None
    recovered = [r for r in caplog.records if "work again" in r.getMessage()]
    assert len(recovered) == 1 and "3 input(s)" in recovered[0].getMessage()
    assert len(journal_errors(caplog)) == 1

    lost = [e.t_ns for e, ok in attempts if not ok]
    assert lost == [t_start + s * NS_PER_S for _, s in presses]
    journal = read_journal(rig.store.journal_path)
    events = [line.event for line in journal.lines if line.event is not None]
    # every complete line is readable; a part-written line is one reported bad line, never glued
    # to the next one; the journal holds exactly the inputs that were written, in order
    assert [n for n, _ in journal.problems] == ([3] if partial else [])
    assert [e.t_ns for e in events] == [t_start, t_start + 6 * NS_PER_S]
    assert events[1:] == [e for e, ok in attempts if ok]
    # the replay agrees with the clock up to the outage and diverges only from the lost inputs
    assert run(events[:1], rig.rules) == before
    assert run(events, rig.rules).played_ns != rig.runner.clock.played_ns


def test_a_failing_fsync_never_stops_the_clock_and_the_next_one_catches_up(rig, monkeypatch, caplog):
    caplog.set_level(logging.INFO)
    t_start = start_left(rig)
    card = FailingCard(monkeypatch, journal_fd(rig), write=False, fsync=True)
    card.failing = True
    rig.at(t_start + 2 * NS_PER_S).down("left").pump()
    assert rig.view().players[1].running and rig.runner.clock.played_ns == (2 * NS_PER_S, 0)
    assert len(journal_errors(caplog)) == 1 and "fsync" in journal_errors(caplog)[0]
    assert rig.store.checkpoint(rig.runner.clock, rig.now) is False  # cannot vouch for the journal
    card.failing = False
    rig.after_ms(50).up("left").advance_ms(100)
    rig.at(t_start + 5 * NS_PER_S).down("right").pump()
    assert rig.runner.journal_outage is None
    assert any("work again" in r.getMessage() for r in caplog.records)
    assert rig.store._writer.unsynced is False  # both lines fsync'd now
    assert [e["t_ns"] for e in rig.journal_inputs()] == [t_start, t_start + 2 * NS_PER_S, t_start + 5 * NS_PER_S]
    assert rig.runner.clock.played_ns == (2 * NS_PER_S, 3 * NS_PER_S)
