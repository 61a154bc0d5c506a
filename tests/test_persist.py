"""GameStore: write-ahead, fsync'd journal, atomic checkpoints, and restoring after a power cut (issue 5).

Times are injected (every call takes its timestamp); boot ids are injected so a reboot can be
simulated. Real files in tmp_path, real fsync.
"""

from __future__ import annotations

import errno
import json
import logging
import os

import pytest

from rackside.firmware import persist
from rackside.firmware.checkpoint import make_checkpoint, parse_checkpoint
from rackside.game.clock import (
    Adjust,
    End,
    LateStart,
    Neutralise,
    Phase,
    Press,
    Resume,
    Rules,
    apply,
    new_clock,
    settle,
    view,
)
from rackside.game.journal import read_journal
from rackside.firmware.persist import GameStore, StoreError
from rackside.game.replay import fold
from support.disk import Disk

S = 1_000_000_000
MS = 1_000_000
GAME = 25 * 60 * S
DATA = __import__("pathlib").Path(__file__).resolve().parent / "data" / "journals"


def play(store: GameStore, clock, events):
    """Record (write and fsync) each input, then apply it."""
    for event in events:
        store.record(event)
        clock = apply(clock, event)
    return clock


def remaining(clock, t):
    return tuple(p.remaining_ns for p in view(clock, t).players)


def crash(store: GameStore):
    """Power off: nothing more is written (closing only releases the descriptors and the lock,
    which the kernel does for a killed process too)."""
    store.close()


@pytest.fixture
def game(tmp_path):
    """A game with player 2's time running since 40 s (player 1 has used 30 s). Its card is
    `store.disk` (support.disk.Disk: faults on cue)."""
    store = GameStore(tmp_path, Rules(), boot_id="boot-A", disk=Disk())
    clock = store.start(0)
    clock = play(store, clock, [Press(10 * S, 2), Press(40 * S, 1)])
    return store, clock


# --- A new game -----------------------------------------------------------------------------------


def test_start_in_an_empty_directory_begins_a_journal(tmp_path):
    store = GameStore(tmp_path, Rules(game_time_ms=20 * 60_000), config={"buzzer": False}, boot_id="boot-A")
    clock = store.start(123)
    assert clock == new_clock(Rules(game_time_ms=20 * 60_000))
    assert store.restore_info is None
    assert store.journal_path == tmp_path / "journals" / "game-000001.jsonl"
    header = json.loads(store.journal_path.read_text().splitlines()[0])
    assert header["rackside_clock_journal"] == 1
    assert header["config"]["game_time_s"] == 1200
    assert header["boot_id"] == "boot-A" and header["started_ns"] == 123
    assert header["settings"] == {"buzzer": False}
    store.close()


def fsyncs(disk: Disk, path) -> int:
    """How many fsyncs `path` has had through `disk`."""
    return disk.calls.count(("fsync", path))


def test_record_appends_one_line_and_fsyncs_before_returning(tmp_path):
    disk = Disk()
    store = GameStore(tmp_path, Rules(), boot_id="b", disk=disk)
    store.start(0)
    before = fsyncs(disk, store.journal_path)
    seq = store.record(Press(5, 2))
    assert seq == 1 and fsyncs(disk, store.journal_path) == before + 1  # written and fsync'd before record returned; its seq, not its line number
    assert store.journal_path.read_text().splitlines()[1] == '{"t_ns":5,"input":"press","player":2,"seq":1}'
    store.close()


def test_record_without_sync_writes_at_once_and_sync_fsyncs_it(tmp_path):
    disk = Disk()
    store = GameStore(tmp_path, Rules(), boot_id="b", disk=disk)
    store.start(0)
    path, before = store.journal_path, fsyncs(disk, store.journal_path)
    assert store.record(Press(5, 2), sync=False) == 1
    assert store.record(Press(9, 1), sync=False) == 2
    assert fsyncs(disk, path) == before  # not fsync'd yet ...
    # ... but written: in the page cache, which a crash of the process does not lose
    assert store.journal_path.read_text().splitlines()[1:] == [
        '{"t_ns":5,"input":"press","player":2,"seq":1}',
        '{"t_ns":9,"input":"press","player":1,"seq":2}',
    ]
    store.sync()
    assert fsyncs(disk, path) == before + 1  # one fsync for both lines
    store.sync()
    assert fsyncs(disk, path) == before + 1  # nothing pending: nothing to do
    store.close()


def test_sync_before_start_or_with_nothing_written_does_nothing(tmp_path):
    disk = Disk()
    GameStore(tmp_path, Rules(), disk=disk).sync()
    assert "fsync" not in disk.names()
    store = GameStore(tmp_path, Rules(), boot_id="b", disk=disk)
    store.start(0)
    disk.calls.clear()
    store.sync()
    assert disk.calls == []
    store.close()


def test_a_failed_fsync_is_raised_and_the_next_sync_tries_again(tmp_path):
    disk = Disk()
    store = GameStore(tmp_path, Rules(), boot_id="b", disk=disk)
    store.start(0)
    path = store.journal_path
    disk.fail("fsync", lambda fd: disk.path_of(fd) == path)
    with pytest.raises(OSError):
        store.record(Press(5, 2))  # sync=True: the caller hears the line is not durable
    with pytest.raises(OSError):
        store.sync()
    disk.heal()
    disk.calls.clear()
    store.sync()
    assert fsyncs(disk, path) == 1
    store.sync()
    assert fsyncs(disk, path) == 1
    store.close()


def test_a_checkpoint_fsyncs_the_journal_it_vouches_for_first(game, tmp_path):
    store, clock = game
    disk = store.disk
    event = Press(45 * S, 2)
    store.record(event, sync=False)
    clock = apply(clock, event)
    disk.calls.clear()
    assert store.checkpoint(clock, 46 * S)
    # the checkpoint's writes (its temporary file, then the rename) all come after the journal's fsync
    order = [("journal" if p == store.journal_path else "checkpoint" if "checkpoint.json" in p.name else "other")
             for name, p in disk.calls if name in ("fsync", "write", "replace")]
    assert order[0] == "journal" and "checkpoint" in order and set(order[1:]) <= {"checkpoint", "other"}
    store.close()


def test_closing_fsyncs_pending_appends(tmp_path):
    disk = Disk()
    store = GameStore(tmp_path, Rules(), boot_id="b", disk=disk)
    store.start(0)
    store.record(Press(5, 2), sync=False)
    path, before = store.journal_path, fsyncs(disk, store.journal_path)
    store.close()
    assert fsyncs(disk, path) == before + 1


def test_record_before_start_is_refused(tmp_path):
    with pytest.raises(StoreError):
        GameStore(tmp_path, Rules()).record(Press(0, 1))


def test_two_clocks_cannot_share_a_directory(tmp_path):
    first = GameStore(tmp_path, Rules())
    first.start(0)
    with pytest.raises(StoreError, match="another clock"):
        GameStore(tmp_path, Rules()).start(0)
    first.close()
    second = GameStore(tmp_path, Rules())
    second.start(0)  # the lock went with the first
    second.close()


def test_start_twice_is_refused(tmp_path):
    store = GameStore(tmp_path, Rules())
    store.start(0)
    with pytest.raises(StoreError):
        store.start(1)
    store.close()


# --- Restore after a power cut ---------------------------------------------------------------------------


def test_restore_from_the_checkpoint_comes_back_neutralised_with_the_last_records_times(game, tmp_path):
    store, clock = game
    assert store.checkpoint(clock, 52 * S)  # player 2 seen running at 52 s
    crash(store)  # power lost at ~52.6 s

    again = GameStore(tmp_path, Rules(), boot_id="boot-B")  # rebooted: a new monotonic clock
    restored = again.start(7 * S)
    v = view(restored, 3600 * S)  # however long it sits there: downtime is never charged
    assert v.phase is Phase.NEUTRALISED and v.restored
    assert remaining(restored, 3600 * S) == (GAME - 30 * S, GAME - 12 * S)
    info = again.restore_info
    assert info.at_ns == 52 * S and info.from_checkpoint and info.rebooted is True
    assert info.downtime_ns is None  # unknowable across a reboot
    last = json.loads(again.journal_path.read_text().splitlines()[-1])
    assert last["input"] == "resume" and last["t_ns"] == 7 * S and last["at_ns"] == 52 * S
    assert last["boot_id"] == "boot-B" and last["rebooted"] is True and last["from_checkpoint"] is True
    # the replay reproduces the restore exactly
    assert fold(read_journal(again.journal_path)).clock == restored
    # and play carries on from the restored times: the centre button restarts player 2
    clock = play(again, restored, [Neutralise(10 * S)])
    assert remaining(clock, 15 * S) == (GAME - 30 * S, GAME - 17 * S)
    again.close()


def test_restore_without_a_checkpoint_uses_the_last_input(game, tmp_path):
    store, clock = game
    crash(store)
    again = GameStore(tmp_path, Rules(), boot_id="boot-A")
    restored = again.start(100 * S)
    assert again.restore_info.at_ns == 40 * S and not again.restore_info.from_checkpoint
    assert again.restore_info.rebooted is False and again.restore_info.downtime_ns == 60 * S
    assert remaining(restored, 100 * S) == (GAME - 30 * S, GAME)
    again.close()


def test_an_input_after_the_last_checkpoint_wins(game, tmp_path):
    store, clock = game
    store.checkpoint(clock, 41 * S)
    clock = play(store, clock, [Press(45 * S, 2)])
    crash(store)
    again = GameStore(tmp_path, Rules(), boot_id="boot-A")
    restored = again.start(100 * S)
    assert again.restore_info.at_ns == 45 * S
    assert remaining(restored, 100 * S) == (GAME - 30 * S, GAME - 5 * S)
    again.close()


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # cut short (should not happen with rename, but disks lie)
        lambda b: b.replace(b'"t_ns": 52', b'"t_ns": 99'),  # tampered: checksum mismatch
        lambda b: b"\x00" * len(b),  # zeroed block
        lambda b: b"",
        lambda b: b'{"rackside_clock_checkpoint": 7}',
    ],
    ids=["truncated", "checksum", "zeroed", "empty", "other-version"],
)
def test_a_corrupt_checkpoint_is_ignored_in_favour_of_the_journal(game, tmp_path, damage):
    store, clock = game
    store.checkpoint(clock, 52 * S)
    crash(store)
    path = tmp_path / "checkpoint.json"
    path.write_bytes(damage(path.read_bytes()))
    again = GameStore(tmp_path, Rules(), boot_id="boot-A")
    restored = again.start(100 * S)
    assert again.restore_info.at_ns == 40 * S and not again.restore_info.from_checkpoint
    assert remaining(restored, 100 * S) == (GAME - 30 * S, GAME)
    again.close()


def test_a_checkpoint_that_disagrees_with_a_journal_it_calls_complete_is_ignored(game, tmp_path):
    store, clock = game
    crash(store)
    # a checkpoint file whose state no input explains, yet which says its journal is complete
    wrong = settle(apply(clock, Adjust(41 * S, 1, 60_000)), 52 * S)
    (tmp_path / "checkpoint.json").write_bytes(
        make_checkpoint("game-000001.jsonl", 3, (tmp_path / "journals" / "game-000001.jsonl").stat().st_size,
                                52 * S, "boot-A", wrong, seq=2, complete=True))
    again = GameStore(tmp_path, Rules(), boot_id="boot-A")
    again.start(100 * S)
    assert again.restore_info.at_ns == 40 * S
    again.close()


def test_a_checkpoint_of_an_input_the_journal_lost_journals_the_state_and_is_trusted(game, tmp_path):
    store, clock = game
    truth = apply(clock, Adjust(41 * S, 1, 60_000))  # acted on, never journalled
    assert store.checkpoint(truth, 52 * S)
    crash(store)
    again = GameStore(tmp_path, Rules(), boot_id="boot-A")
    restored = again.start(100 * S)
    assert again.restore_info.at_ns == 52 * S and restored == apply(truth, Resume(100 * S, at_ns=52 * S))
    again.close()


def test_a_checkpoint_from_another_boot_is_ignored(game, tmp_path):
    store, clock = game
    store.checkpoint(clock, 52 * S)
    crash(store)
    path = tmp_path / "checkpoint.json"
    cp = parse_checkpoint(path.read_bytes())
    path.write_bytes(make_checkpoint(cp.journal, cp.lines, cp.size, cp.t_ns, "boot-Z", cp.clock))
    again = GameStore(tmp_path, Rules(), boot_id="boot-A")
    again.start(100 * S)
    assert again.restore_info.at_ns == 40 * S
    again.close()


def test_a_checkpoint_older_than_the_last_restore_is_ignored(game, tmp_path):
    """Crash again before the restored clock wrote a checkpoint: the old checkpoint's time is on
    the previous boot's clock and must not be compared with the new boot's times."""
    store, clock = game
    store.checkpoint(clock, 900 * S)  # boot A's clock read 900 s
    crash(store)
    second = GameStore(tmp_path, Rules(), boot_id="boot-B")
    restored = second.start(5 * S)  # boot B's clock reads 5 s
    expected = remaining(restored, 5 * S)
    crash(second)  # before any checkpoint on boot B
    # restart on boot B again: the checkpoint (written for boot A) is stale
    third = GameStore(tmp_path, Rules(), boot_id="boot-B")
    again = third.start(20 * S)
    assert third.restore_info.at_ns == 5 * S and not third.restore_info.from_checkpoint
    assert remaining(again, 20 * S) == expected
    assert fold(read_journal(third.journal_path)).clock == again
    third.close()


def test_restore_twice_in_a_row_loses_nothing(game, tmp_path):
    store, clock = game
    store.checkpoint(clock, 52 * S)
    crash(store)
    for boot, now in (("boot-B", 3 * S), ("boot-C", 4 * S), ("boot-C", 9 * S)):
        again = GameStore(tmp_path, Rules(), boot_id=boot)
        restored = again.start(now)
        assert remaining(restored, now) == (GAME - 30 * S, GAME - 12 * S)
        again.checkpoint(restored, now + S)  # neutralised: nothing is lost while it sits
        crash(again)


# --- Torn and corrupt journals -----------------------------------------------------------------------------


def test_a_torn_journal_tail_is_detected_and_the_last_good_state_used(game, tmp_path):
    store, clock = game
    path = store.journal_path
    crash(store)
    with open(path, "ab") as f:
        f.write(b'{"t_ns":45000000000,"input":"pre')  # the power went mid-append
    again = GameStore(tmp_path, Rules(), boot_id="boot-A")
    restored = again.start(100 * S)
    assert remaining(restored, 100 * S) == (GAME - 30 * S, GAME)
    assert again.restore_info.problems and again.restore_info.problems[0][0] == 4
    lines = path.read_text().splitlines()
    assert lines[3] == '{"t_ns":45000000000,"input":"pre'  # kept as evidence, on its own line
    resume = json.loads(lines[4])
    assert resume["input"] == "resume" and resume["skipped_lines"] == [4]
    replayed = fold(read_journal(path))
    assert replayed.clock == restored and [n for n, _ in replayed.problems] == [4]
    clock = play(again, restored, [Neutralise(101 * S), Press(110 * S, 2)])
    crash(again)
    final = fold(read_journal(path))
    assert final.clock == clock and [n for n, _ in final.problems] == [4]


def test_a_corrupt_line_mid_journal_is_skipped_alike_by_restore_and_replay(game, tmp_path):
    store, clock = game
    path = store.journal_path
    play(store, clock, [Press(50 * S, 2)])
    crash(store)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"\x00\x00\x00 bit rot"
    path.write_bytes(b"\n".join(lines))
    again = GameStore(tmp_path, Rules(), boot_id="boot-A")
    restored = again.start(100 * S)
    assert fold(read_journal(path)).clock == restored
    again.close()


def test_a_crash_at_any_byte_of_the_journal_restores_the_complete_lines_before_it(tmp_path):
    """Cut the journal at every byte: the restore equals the game of the lines that were whole."""
    source = tmp_path / "source"
    store = GameStore(source, Rules(), boot_id="boot-A")
    clock = store.start(0)
    events = [LateStart(1 * S, (2,)), Adjust(2 * S, 2, 20 * 60_000), Press(3 * S, 1)]
    play(store, clock, events)
    full = store.journal_path.read_bytes()
    crash(store)
    header_end = full.index(b"\n") + 1
    for cut in range(header_end, len(full) + 1):
        d = tmp_path / f"cut{cut}"
        (d / "journals").mkdir(parents=True)
        (d / "journals" / "game-000001.jsonl").write_bytes(full[:cut])
        whole = full[:cut].count(b"\n") - 1  # complete input lines
        expected = new_clock(Rules())
        for event in events[:whole]:
            expected = apply(expected, event)
        if full[:cut].endswith(b"}") and whole < len(events):  # a line missing only its newline
            expected = apply(expected, events[whole])
        again = GameStore(d, Rules(), boot_id="boot-A")
        restored = again.start(10 * S)
        if expected.since_ns is None:
            assert not view(restored, 10 * S).restored
        else:
            assert remaining(restored, 10 * S) == remaining(apply(expected, Resume(10 * S, expected.since_ns)), 10 * S)
            assert fold(read_journal(again.journal_path)).clock == restored
        again.close()


def test_a_newest_journal_with_a_bad_header_is_kept_and_a_new_game_starts(tmp_path):
    (tmp_path / "journals").mkdir()
    bad = tmp_path / "journals" / "game-000004.jsonl"
    bad.write_bytes(b"not a header\n")
    store = GameStore(tmp_path, Rules())
    assert store.start(0) == new_clock(Rules())
    assert store.journal_path.name == "game-000005.jsonl" and bad.read_bytes() == b"not a header\n"
    store.close()


def test_a_journal_whose_creation_was_cut_short_is_cleaned_up(tmp_path):
    (tmp_path / "journals").mkdir()
    (tmp_path / "journals" / "game-000001.jsonl.tmp").write_bytes(b'{"rackside_clock')
    store = GameStore(tmp_path, Rules())
    store.start(0)
    assert [p.name for p in (tmp_path / "journals").iterdir()] == ["game-000001.jsonl"]
    store.close()


# --- Which journal is restored ------------------------------------------------------------------------------


def test_a_finished_game_is_not_restored(game, tmp_path):
    store, clock = game
    play(store, clock, [End(60 * S)])
    crash(store)
    again = GameStore(tmp_path, Rules())
    assert again.start(0) == new_clock(Rules()) and again.restore_info is None
    assert again.journal_path.name == "game-000002.jsonl"
    again.close()


def test_a_journal_with_no_inputs_yet_is_reused(tmp_path):
    store = GameStore(tmp_path, Rules())
    store.start(0)
    crash(store)
    again = GameStore(tmp_path, Rules())
    again.start(5)
    assert again.journal_path.name == "game-000001.jsonl" and again.restore_info is None
    again.close()
    other_rules = GameStore(tmp_path, Rules(game_time_ms=60_000))
    other_rules.start(6)  # the configuration changed before play: a new journal with the new rules
    assert other_rules.journal_path.name == "game-000002.jsonl" and other_rules.rules.game_time_ms == 60_000
    other_rules.close()


def test_a_restored_game_keeps_the_rules_it_was_started_under(game, tmp_path):
    store, clock = game
    crash(store)
    again = GameStore(tmp_path, Rules(game_time_ms=30 * 60_000))
    restored = again.start(100 * S)
    assert again.rules == Rules() and restored.rules == Rules()
    again.close()


def test_new_game_archives_the_journal_and_starts_another(game, tmp_path):
    store, clock = game
    store.checkpoint(clock, 50 * S)
    old = store.journal_path
    clock = store.new_game(Rules(game_time_ms=20 * 60_000), 60 * S)
    assert clock == new_clock(Rules(game_time_ms=20 * 60_000))
    assert store.journal_path.name == "game-000002.jsonl" and old.exists()
    assert not (tmp_path / "checkpoint.json").exists()
    assert len(read_journal(old).lines) == 2  # the archived game is as it was
    crash(store)
    again = GameStore(tmp_path, Rules())
    # nothing played yet, but the director chose 20:00 for this game: that survives a power cut
    assert again.start(0) == new_clock(Rules(game_time_ms=20 * 60_000))
    assert again.journal_path.name == "game-000002.jsonl" and again.rules.game_time_ms == 20 * 60_000
    again.close()


# --- Checkpoints ------------------------------------------------------------------------------------------


def test_checkpoint_is_atomic_and_describes_the_journal_position(game, tmp_path):
    store, clock = game
    assert store.checkpoint(clock, 52 * S)
    cp = parse_checkpoint((tmp_path / "checkpoint.json").read_bytes())
    assert cp.journal == "game-000001.jsonl" and cp.lines == 3 and cp.size == store.journal_path.stat().st_size
    assert cp.t_ns == 52 * S and cp.boot_id == "boot-A"
    assert remaining(cp.clock, 52 * S) == (GAME - 30 * S, GAME - 12 * S)
    assert not list(tmp_path.glob("*.tmp"))
    store.close()


def test_a_still_clock_is_checkpointed_only_when_the_journal_grew(game):
    store, clock = game
    clock = play(store, clock, [Neutralise(45 * S)])
    assert store.checkpoint(clock, 46 * S)
    assert not store.checkpoint(clock, 47 * S)  # nothing moves: spare the SD card
    clock = play(store, clock, [Neutralise(48 * S)])
    assert store.checkpoint(clock, 49 * S) and store.checkpoint(clock, 50 * S)  # running again
    store.close()


def test_a_checkpoint_dated_before_the_last_input_is_refused(game):
    store, clock = game
    assert not store.checkpoint(clock, 39 * S)
    store.close()


def test_a_checkpoint_write_failure_does_not_stop_the_clock(game, tmp_path):
    store, clock = game
    disk = store.disk
    disk.fail("write", lambda fd, data: ".checkpoint.json." in str(disk.path_of(fd)), errno.ENOSPC)
    assert store.checkpoint(clock, 50 * S) is False
    assert not list(tmp_path.glob(".checkpoint.json.*"))  # its temporary file is gone
    store.close()


def test_boot_id_is_read_from_proc_when_there_is_one(tmp_path):
    path = tmp_path / "boot_id"
    path.write_text("1234-abcd\n")
    assert persist.read_boot_id(path) == "1234-abcd"
    assert persist.read_boot_id(tmp_path / "missing") is None


def fill_the_card(disk: Disk, store: GameStore) -> None:
    """From now on the card is full for the journal, after the first write got 10 bytes of its line
    onto it. `disk.heal()` gives it room again."""
    path = store.journal_path
    disk.fail("write", lambda fd, data: disk.path_of(fd) == path, errno.ENOSPC, partial=10)


def test_a_failed_append_does_not_glue_the_next_line_to_its_remains(tmp_path):
    disk = Disk()
    store = GameStore(tmp_path, Rules(), disk=disk)
    store.start(0)
    fill_the_card(disk, store)
    with pytest.raises(OSError):
        store.record(Press(1 * S, 2))
    disk.heal()
    store.record(Press(2 * S, 2))  # the card has room again
    path = store.journal_path
    store.close()
    journal = read_journal(path)
    assert [line.event for line in journal.lines] == [None, Press(2 * S, 2)]
    assert journal.problems[0][0] == 2


def test_a_torn_line_stays_one_bad_line_through_several_failed_appends(tmp_path):
    disk = Disk()
    store = GameStore(tmp_path, Rules(), disk=disk)
    store.start(0)
    fill_the_card(disk, store)
    for t in (1, 2, 3):  # the card stays full for three inputs, the first partly written
        with pytest.raises(OSError):
            store.record(Press(t * S, 2), sync=False)
    disk.heal()
    assert store.record(Press(4 * S, 2)) == 4  # seq 1-3 were numbered and lost; the torn line stays one bad line
    path = store.journal_path
    store.close()
    journal = read_journal(path)
    assert [line.event for line in journal.lines] == [None, Press(4 * S, 2)]
    assert [n for n, _ in journal.problems] == [2]


# --- A card that cannot take a new game's journal ----------------------------------------------------


def fail_the_new_journal(disk: Disk, step: str) -> None:
    """Make creating a new journal fail at one step: `open` (the temp file cannot be created),
    `write` (the card is full), `replace` (the rename), or `fsync_dir` (the rename is not made
    durable). Only the new journal's files are affected; the open journal and the checkpoint work
    normally. `disk.heal()` ends it."""

    def is_new_journal(path) -> bool:
        # rackside.atomic's temp file beside the new journal: .game-000002.jsonl.<pid>.tmp
        return path is not None and str(path).endswith(".tmp") and ".jsonl." in str(path)

    when = {
        "open": lambda path: is_new_journal(path),
        "write": lambda fd, data: is_new_journal(disk.path_of(fd)),
        "replace": lambda src, dst: is_new_journal(src),
        "fsync_dir": lambda fd: disk.path_of(fd).name == "journals",
    }[step]
    disk.fail(step, when, {"open": errno.EROFS, "write": errno.ENOSPC}.get(step, errno.EIO))


@pytest.mark.parametrize("step", ["open", "write", "replace", "fsync_dir"])
def test_a_new_game_whose_journal_cannot_be_created_keeps_the_old_journal_open(game, tmp_path, step):
    store, clock = game
    assert store.checkpoint(clock, 50 * S)
    old = store.journal_path
    fail_the_new_journal(store.disk, step)
    with pytest.raises(StoreError, match="cannot create the new game's journal .*game-000002.jsonl"):
        store.new_game(Rules(game_time_ms=20 * 60_000), 60 * S)
    # nothing changed: the old journal is still the one written, its checkpoint still stands, and
    # no half-made journal is left to be taken for the live game at the next start-up
    assert store.journal_path == old and store.rules == Rules()
    assert sorted(p.name for p in (tmp_path / "journals").iterdir()) == ["game-000001.jsonl"]
    assert (tmp_path / "checkpoint.json").exists()
    clock = play(store, clock, [Press(70 * S, 2)])
    assert [line.event for line in read_journal(old).lines][-1] == Press(70 * S, 2)
    assert store.checkpoint(clock, 71 * S)

    store.disk.heal()  # the card recovers: the same call now works
    assert store.new_game(Rules(game_time_ms=20 * 60_000), 80 * S) == new_clock(Rules(game_time_ms=20 * 60_000))
    assert store.journal_path.name == "game-000002.jsonl"
    play(store, new_clock(Rules(game_time_ms=20 * 60_000)), [Press(81 * S, 1)])
    assert len(read_journal(old).lines) == 3 and len(read_journal(store.journal_path).lines) == 1
    crash(store)
    # the first game, unfinished when the new one could not be started, is in the archive as it was
    assert fold(read_journal(old)).clock.phase is Phase.RUNNING


# --- Checkpoint outages ------------------------------------------------------------------------------


def test_checkpoint_failures_are_logged_once_per_outage(game, tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="rackside.firmware.persist")
    store, clock = game
    failing = {"on": True}
    store.disk.fail("write", lambda fd, data: failing["on"] and ".checkpoint.json." in str(store.disk.path_of(fd)), errno.ENOSPC)

    def errors():
        return [r.getMessage() for r in caplog.records if r.name == "rackside.firmware.persist" and r.levelno >= logging.ERROR]

    def recovered():
        return [r.getMessage() for r in caplog.records if "checkpoints work again" in r.getMessage()]

    for i in range(10):  # ten tries, 0.9 s apart: one error
        assert store.checkpoint(clock, 41 * S + i * 900 * MS) is False
    assert len(errors()) == 1 and "No space left" in errors()[0] and store.checkpoint_outage.active
    failing["on"] = False
    assert store.checkpoint(clock, 51 * S) and store.checkpoint(clock, 52 * S)
    assert len(recovered()) == 1 and "after 10 failed" in recovered()[0] and not store.checkpoint_outage.active
    failing["on"] = True  # a second outage is logged again, once
    assert not store.checkpoint(clock, 53 * S) and not store.checkpoint(clock, 54 * S)
    assert len(errors()) == 2 and len(recovered()) == 1
    store.close()


# --- Issue 9, item 6: a full card never rewrites a game -----------------------------------------------


def _press_times(start_s: float, count: int, step_ms: int = 1_300):
    """Alternate players' presses, player 2 pressing first (player 1's time starts)."""
    t = int(start_s * S)
    for i in range(count):
        yield Press(t, 2 if i % 2 == 0 else 1)
        t += step_ms * MS + (i % 7) * 137 * MS  # uneven turns: every lost press matters


def _play_through_a_full_card(store, clock, card_full, card_free, *, lost_wanted=52):
    """What the runner does: write each input, act on it whether or not the write worked. The card
    fills after 10 presses and stays full until `lost_wanted` presses were lost, then has room again
    and a checkpoint is written. Returns (the true clock, checkpoint time, presses lost)."""
    presses = _press_times(1, 10_000)
    for _ in range(10):
        event = next(presses)
        store.record(event)
        clock = apply(clock, event)
    card_full()
    lost = 0
    while lost < lost_wanted:
        event = next(presses)
        try:
            store.record(event, sync=False)
            store.sync()
        except OSError:
            lost += 1
        clock = apply(clock, event)
    card_free()
    t_cp = clock.since_ns + 700 * MS
    assert store.checkpoint(clock, t_cp)
    return clock, t_cp, lost


def _check_full_card_restore(state, clock, t_cp):
    again = GameStore(state, Rules(), boot_id="boot-A")
    restored = again.start(t_cp + 30 * S)
    truth = apply(clock, Resume(t_cp + 30 * S, at_ns=t_cp))
    error_ms = [abs(a - b) / MS for a, b in zip(remaining(restored, t_cp + 30 * S), remaining(truth, t_cp + 30 * S))]
    assert error_ms == [0, 0], f"restore error {error_ms} ms"
    assert restored == truth
    path = again.journal_path
    again.close()
    replayed = fold(read_journal(path))
    assert replayed.clock == truth  # the audit agrees with the clock
    assert any("not journalled" in p for _, p in replayed.problems), replayed.problems  # and shows the gap
    return replayed


def test_a_full_card_never_rewrites_a_game_with_injected_enospc(tmp_path):
    disk = Disk()
    store = GameStore(tmp_path, Rules(), boot_id="boot-A", disk=disk)
    clock = store.start(0)
    # the first failing append gets part of its line onto the card
    clock, t_cp, lost = _play_through_a_full_card(store, clock, lambda: fill_the_card(disk, store), disk.heal)
    crash(store)
    replayed = _check_full_card_restore(tmp_path, clock, t_cp)
    assert lost == 52 and any("incomplete" in p or "not valid JSON" in p for _, p in replayed.problems)


@pytest.fixture
def small_tmpfs(tmp_path):
    """A real 256 KiB tmpfs (as root, where the machine allows mounting); skipped otherwise."""
    import subprocess

    mount = tmp_path / "card"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_card_never_rewrites_a_game_on_a_real_256k_tmpfs(small_tmpfs):
    state = small_tmpfs / "state"
    store = GameStore(state, Rules(), boot_id="boot-A")
    clock = store.start(0)
    filler = small_tmpfs / "filler"

    def fill():
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 1024):
                pass
        except OSError:  # ENOSPC: the card is full
            pass
        finally:
            os.close(fd)

    clock, t_cp, lost = _play_through_a_full_card(store, clock, fill, filler.unlink)
    crash(store)
    _check_full_card_restore(state, clock, t_cp)


def test_journal_lines_carry_a_sequence_number_and_old_journals_without_one_still_read(game, tmp_path):
    store, clock = game
    lines = [json.loads(x) for x in store.journal_path.read_text().splitlines()[1:]]
    assert [d["seq"] for d in lines] == [1, 2]
    store.close()
    old = (DATA / "full_game.jsonl").read_bytes()
    assert b'"seq"' not in old
    assert fold(read_journal(DATA / "full_game.jsonl")).problems == []


@pytest.mark.parametrize("digest", [True, False], ids=["checkpoint vouches for the journal's bytes", "no digest: full fold"])
def test_a_checkpoint_whose_state_line_could_not_be_written_is_trusted_over_the_journal(tmp_path, digest):
    """The card is still full for the journal when the checkpoint is written (its own file fits):
    the checkpoint says its journal is incomplete, and the restore takes its state, journals it as
    a state line, and the replay agrees."""
    disk = Disk()
    store = GameStore(tmp_path, Rules(), boot_id="boot-A", disk=disk)
    clock = store.start(0)
    path = store.journal_path

    def full():  # the journal's writes fail from now on; the checkpoint's own file still fits
        disk.fail("write", lambda fd, data: disk.path_of(fd) == path, errno.ENOSPC)

    clock, t_cp, lost = _play_through_a_full_card(store, clock, full, lambda: None, lost_wanted=5)
    cp = parse_checkpoint((tmp_path / "checkpoint.json").read_bytes())
    assert not cp.complete and cp.seq == 15
    if not digest:
        (tmp_path / "checkpoint.json").write_bytes(make_checkpoint(
            cp.journal, cp.lines, cp.size, cp.t_ns, cp.boot_id, cp.clock, seq=cp.seq, complete=False, position=cp.position))
    crash(store)
    _check_full_card_restore(tmp_path, clock, t_cp)


def test_a_checkpoint_of_a_game_not_yet_started_restores_to_it(tmp_path):
    """Found by bench/power_loss.py --driver store: a checkpoint written before the first input
    (the driver checkpoints on a timer) vouches for a journal with no input; restoring from it
    raised (a resume at no moment), at every start, so the clock never came up again."""
    store = GameStore(tmp_path, Rules(), boot_id="boot-A")
    clock = store.start(0)
    store.checkpoint(clock, 5 * S)
    crash(store)
    again = GameStore(tmp_path, Rules(), boot_id="boot-A")
    restored = again.start(100 * S)
    assert restored == clock and again.journal_path.name == "game-000001.jsonl"
    again.close()
