"""The runner and its journal: write-ahead, then apply, then the displays, then one fsync per batch;
and a journal that cannot be written (a full or failing card) never stops the clock.

A fake clock drives gpiozero's mock pins (tests/support/firmware_rig.py); the journal is a real
file. Faults are injected through the store's card (`rig.disk`, tests/support/disk.py) for the
journal's file only.
"""

from __future__ import annotations

import errno
import json
import logging

import pytest

from rackside.firmware import persist
from rackside.firmware.checkpoint import parse_checkpoint
from rackside.game.clock import NS_PER_MS, NS_PER_S, Phase, run, settle
from rackside.game.journal import StateRecord, read_journal
from rackside.game.replay import fold


GAME_NS = 25 * 60 * NS_PER_S


def start_left(rig) -> int:
    """The right player presses to start the left player's time (2.2); returns the edge time."""
    rig.after_ms(10)
    t = rig.tap("right")
    assert rig.view().players[0].running
    return t


def spy_calls(rig, calls: list) -> None:
    """Log, in order, the journal's writes and fsyncs and what the displays were told, each with
    the input the clock had acted on last (`since_ns`) at that moment."""
    path = rig.store.journal_path

    def listen(name, at):
        if at == path and name in ("write", "fsync"):
            calls.append((name, rig.runner.clock.since_ns))

    rig.disk.listeners.append(listen)
    for display in rig.displays:
        show = display.show
        display.show = lambda text, show=show: (calls.append(("show", rig.runner.clock.since_ns)), show(text))


def kinds(calls: list) -> list[str]:
    return [kind for kind, _ in calls]


def test_each_batch_is_written_then_applied_then_shown_then_fsynced_once(rig, monkeypatch):
    t_start = start_left(rig)
    calls: list = []
    spy_calls(rig, calls)
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
    spy_calls(rig, calls)
    checkpoint = rig.store.checkpoint
    monkeypatch.setattr(rig.store, "checkpoint", lambda c, t: (calls.append(("checkpoint", t)), checkpoint(c, t))[1])
    rig.at(t_start + 950 * NS_PER_MS).down("left").pump()  # a checkpoint is due (0.9 s) in this batch
    assert "checkpoint" in kinds(calls)
    assert kinds(calls).index("fsync") < kinds(calls).index("checkpoint")


def test_a_batch_with_no_input_does_not_fsync(rig, monkeypatch):
    start_left(rig)
    calls: list = []
    spy_calls(rig, calls)
    rig.advance_ms(3_000)  # the display counts down; nothing is journalled
    assert set(kinds(calls)) == {"show"}


def test_closing_fsyncs_a_press_written_at_shutdown(rig, monkeypatch):
    t = rig.after_ms(10).now
    rig.down("right").pump()  # before the game: held back until release
    calls: list = []
    spy_calls(rig, calls)
    rig.runner.close()
    assert calls == [("write", None), ("fsync", t)]
    assert [e["input"] for e in rig.journal_inputs()] == ["press"]


class FailingCard:
    """The journal's writes (and, with `fsync`, its fsyncs) fail while `failing`; with `partial`,
    the first failing write gets 10 bytes of the line onto the card first (a short write, then an
    error)."""

    def __init__(self, rig, *, write: bool = True, fsync: bool = False, partial: bool = False) -> None:
        self.failing = False
        disk, path = rig.disk, rig.store.journal_path
        if write:
            disk.fail("write", lambda fd, data: self.failing and disk.path_of(fd) == path, errno.ENOSPC, partial=10 if partial else 0)
        if fsync:
            disk.fail("fsync", lambda fd: self.failing and disk.path_of(fd) == path, errno.EIO)


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
    return [r.getMessage() for r in caplog.records if r.name == "rackside.firmware.runner" and r.levelno == logging.ERROR]


@pytest.mark.parametrize("partial", [False, True], ids=["nothing written", "part of a line written"])
def test_a_full_card_never_stops_the_clock_and_writes_resume_when_it_has_room(rig, monkeypatch, caplog, partial):
    caplog.set_level(logging.INFO)
    t_start = start_left(rig)
    attempts = recorded(rig, monkeypatch)
    card = FailingCard(rig, partial=partial)
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
    states = [line.event for line in journal.lines if isinstance(line.event, StateRecord)]
    events = [line.event for line in journal.lines if line.event is not None and line.event not in states]
    # every complete line is readable; a part-written line is one reported bad line, never glued
    # to the next one; the journal holds exactly the inputs that were written, in order
    assert [n for n, _ in journal.problems] == ([3] if partial else [])
    assert [e.t_ns for e in events] == [t_start, t_start + 6 * NS_PER_S]
    assert events[1:] == [e for e, ok in attempts if ok]
    # the inputs alone agree with the clock up to the outage and diverge from the lost inputs ...
    assert run(events[:1], rig.rules) == before
    assert run(events, rig.rules).played_ns != rig.runner.clock.played_ns
    # ... so once the card had room, the next checkpoint journalled the clock's own state, with the
    # numbers of the inputs lost (issue 9): the replay shows the gap and agrees with the clock
    assert len(states) == 1 and states[0].lost == ((2, 4),) and states[0].seq == 5
    replayed = fold(journal)
    assert replayed.clock == settle(rig.runner.clock, states[0].t_ns) and replayed.lost == [(2, 4)]


def test_a_failing_fsync_never_stops_the_clock_and_the_next_one_catches_up(rig, monkeypatch, caplog):
    caplog.set_level(logging.INFO)
    t_start = start_left(rig)
    card = FailingCard(rig, write=False, fsync=True)
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


# --- "New game" on a card that cannot take the new journal -----------------------------------------


def choose_new_game_from_the_menu(rig) -> None:
    """The director's menu, as a director uses it: game length 26:00, then yES."""
    rig.board.command("menu")
    rig.pump()
    while rig.texts()[0] != "LEn":
        rig.after_ms(50).tap("right")
    rig.after_ms(50).tap("neutralise")
    rig.after_ms(50).tap("right")  # 26 minutes
    rig.after_ms(50).tap("neutralise")  # seconds
    rig.after_ms(50).tap("neutralise")  # done: yES/no
    rig.after_ms(50).tap("left")
    assert rig.texts() == ("LEn", "yES")
    rig.after_ms(50).tap("neutralise")


def test_a_new_game_whose_journal_cannot_be_created_still_starts_and_is_journalled_once_it_can(rig, monkeypatch, caplog):
    caplog.set_level(logging.INFO)
    t_start = start_left(rig)
    rig.at(t_start + 3 * NS_PER_S)
    rig.tap("neutralise")
    old = rig.store.journal_path
    old_bytes = old.read_bytes()
    real_begin = persist.GameStore._begin
    card = {"full": True}

    def begin(store, *args, **kwargs):  # the card cannot take the new journal's temp file
        if card["full"]:
            raise persist.StoreError(f"cannot create the new game's journal {store.journal_dir}/game-000002.jsonl: No space left on device")
        return real_begin(store, *args, **kwargs)

    monkeypatch.setattr(persist.GameStore, "_begin", begin)
    checkpoints = []
    real_checkpoint = rig.store.checkpoint
    monkeypatch.setattr(rig.store, "checkpoint", lambda c, t: (checkpoints.append(t), real_checkpoint(c, t))[1])

    choose_new_game_from_the_menu(rig)  # no exception escapes the loop
    assert rig.runner.menu is None and rig.runner.pending_new_game
    checkpoints.clear()  # (the previous game's, while the menu was open)
    assert rig.texts() == ("26:00", "26:00") and rig.view().phase is Phase.SETUP
    # the new game is played: the clock counts as usual
    t_new = rig.after_ms(500).tap("right")
    rig.at(t_new + 4 * NS_PER_S)
    rig.down("left").pump()
    assert rig.view().players[1].running
    assert rig.runner.clock.played_ns == (4 * NS_PER_S, 0)
    rig.after_ms(50).up("left").advance_ms(2_000)
    # logged once; the previous game's journal is untouched by this game; no checkpoint meanwhile
    assert len(journal_errors(caplog)) == 1 and "No space left" in journal_errors(caplog)[0]
    assert old.read_bytes() == old_bytes and rig.store.journal_path == old
    assert checkpoints == [] and rig.runner.unjournalled == 2

    card["full"] = False  # room again: the next input first creates the journal, then is written
    t_back = rig.now
    rig.down("right").pump()
    assert not rig.runner.pending_new_game and rig.runner.journal_outage is None
    assert rig.store.journal_path.name == "game-000002.jsonl" and old.read_bytes() == old_bytes
    journal = read_journal(rig.store.journal_path)
    assert journal.rules.game_time_ms == 26 * 60_000 and journal.header["source"] == "new_game"
    assert [(line.data["input"], line.data["t_ns"]) for line in journal.lines] == [("press", t_back)]
    recovered = [r.getMessage() for r in caplog.records if "work again" in r.getMessage()]
    assert len(recovered) == 1 and "2 input(s)" in recovered[0]
    rig.advance_ms(1_000)
    assert checkpoints  # checkpointing again, for the new journal
    assert parse_checkpoint((rig.state_dir / "checkpoint.json").read_bytes()).journal == "game-000002.jsonl"


def test_a_new_game_with_a_failing_card_is_safe_at_the_real_file_calls(rig, monkeypatch, caplog):
    """The same through the real store: the card refuses the writes of the new journal's temp file."""
    caplog.set_level(logging.INFO)
    start_left(rig)
    rig.after_ms(1_000).tap("neutralise")
    # the new journal's temporary file (rackside.atomic's .game-000002.jsonl.<pid>.tmp) cannot be written
    rig.disk.fail("write", lambda fd, data: str(rig.disk.path_of(fd)).endswith(".tmp") and ".jsonl." in str(rig.disk.path_of(fd)),
                  errno.ENOSPC)
    rig.runner.new_game(20 * 60_000, rig.now)
    rig.pump()
    assert rig.runner.pending_new_game and rig.texts() == ("20:00", "20:00")
    rig.after_ms(100).tap("left")  # player 1 starts player 2's time (2.2)
    rig.advance_ms(3_000)
    assert rig.view().players[1].running and rig.remaining_ns(2) <= (20 * 60 - 3) * NS_PER_S
    assert len(journal_errors(caplog)) == 1
    assert sorted(p.name for p in (rig.state_dir / "journals").iterdir()) == ["game-000001.jsonl"]
    rig.runner.close()  # a stop while the journal is missing: no checkpoint, nothing raised
    assert parse_checkpoint((rig.state_dir / "checkpoint.json").read_bytes()).journal == "game-000001.jsonl"


# --- Checkpoint outages ------------------------------------------------------------------------------


def test_checkpoint_failures_are_logged_once_per_outage_while_the_clock_runs(rig, monkeypatch, caplog):
    caplog.set_level(logging.INFO)
    start_left(rig)
    card = {"failing": True}
    rig.disk.fail("replace", lambda src, dst: card["failing"] and dst.name == "checkpoint.json", errno.EIO)

    def errors():
        return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and "checkpoint" in r.getMessage()]

    def recovered():
        return [r.getMessage() for r in caplog.records if "checkpoints work again" in r.getMessage()]

    rig.advance_ms(10_000)  # eleven checkpoints due: one error
    assert len(errors()) == 1 and "Input/output error" in errors()[0]
    card["failing"] = False
    rig.advance_ms(3_000)
    assert len(recovered()) == 1 and len(errors()) == 1
    card["failing"] = True
    rig.advance_ms(3_000)
    assert len(errors()) == 2 and len(recovered()) == 1
    assert rig.view().players[0].running  # the clock never stopped


def test_an_unexpected_checkpoint_exception_is_logged_once_too(rig, monkeypatch, caplog):
    caplog.set_level(logging.INFO)
    start_left(rig)
    broken = {"on": True}
    real_checkpoint = rig.store.checkpoint

    def checkpoint(clock, t):
        if broken["on"]:
            raise RuntimeError("store bug")
        return real_checkpoint(clock, t)

    monkeypatch.setattr(rig.store, "checkpoint", checkpoint)
    rig.advance_ms(5_000)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        "checkpoint failed: RuntimeError('store bug'); the clock keeps counting and retries every checkpoint"
    ]
    broken["on"] = False
    rig.advance_ms(1_000)
    assert sum("checkpoints work again" in r.getMessage() for r in caplog.records) == 1


def test_the_core_runs_once_per_input_the_store_keeps_the_runners_result(rig, monkeypatch):
    """Issue 16 item 2: the store once re-applied every input to a shadow clock of its own (to know
    when the journal fell behind the clock). It is now handed the runner's result: the core runs
    once per input, and a journal in step still needs no state line."""
    from rackside.firmware import persist

    calls = []
    real = persist.apply
    monkeypatch.setattr(persist, "apply", lambda clock, event: calls.append(event) or real(clock, event))
    rig.tap("right")
    rig.tap("left")
    rig.tap("neutralise")
    rig.after_ms(2000).pump()  # a checkpoint is due
    assert calls == []
    lines = rig.store.journal_path.read_text().splitlines()[1:]
    assert [json.loads(x)["input"] for x in lines] == ["press", "press", "neutralise"]  # no state line: in step
