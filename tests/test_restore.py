"""The restore decision (firmware/restore.py), on values: what a restart does with the latest
journal and a checkpoint, without a file. tests/test_persist.py runs the same cases through the
store's real files; these pin each rule on its own."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rackside.firmware import restore
from rackside.firmware.checkpoint import Checkpoint
from rackside.game.clock import End, Press, Rules, apply, new_clock, settle
from rackside.firmware.restore import Start, Verdict

S = 1_000_000_000
RULES = Rules()
PLAYING = apply(apply(new_clock(RULES), Press(10 * S, 2)), Press(40 * S, 1))  # player 2's time runs since 40 s


def folded(clock=PLAYING, **facts):
    """What game.replay.fold reports (the attributes the decision reads)."""
    base = dict(clock=clock, applied=2, states=0, lines_read=2, last_t_ns=40 * S, last_resume_line=None,
                last_resume_data=None, at_line_clock=clock, at_line_seq=2, lost=[])
    return SimpleNamespace(**{**base, **facts})


def checkpoint(position=PLAYING, t_ns=52 * S, **facts):
    """A checkpoint of `position` settled at `t_ns` (`clock=` gives another state)."""
    state = settle(position, t_ns) if t_ns >= position.since_ns else position
    base = dict(journal="game-000001.jsonl", lines=3, size=200, t_ns=t_ns, boot_id="boot-A",
                clock=state, seq=2, complete=True, position=position)
    return Checkpoint(**{**base, **facts})


def verdict(cp, fold=None, *, size=200, segment="boot-A"):
    return restore.checkpoint_verdict(cp, fold or folded(), journal_name="game-000001.jsonl", journal_size=size, segment=segment)


# --- Whether the game goes on --------------------------------------------------------------------


def kind(fold, *, rules=RULES, chosen=False, torn=False, **kw):
    return restore.start_kind(fold, journal_rules=rules, configured_rules=RULES, chosen_by_director=chosen, torn=torn, **kw)


def test_a_journal_with_nothing_in_it_is_reused_while_its_rules_are_wanted():
    empty = folded(new_clock(RULES), applied=0, lines_read=0)
    other = Rules(game_time_ms=20 * 60_000)
    assert kind(empty) is Start.REUSE
    assert kind(empty, rules=other) is Start.NEW  # the configuration changed since
    assert kind(empty, rules=other, chosen=True) is Start.REUSE  # the director chose them for this game
    assert kind(empty, torn=True) is Start.NEW
    assert kind(folded(new_clock(RULES), applied=0, lines_read=1)) is Start.NEW  # a line, none usable


def test_an_unfinished_game_resumes_and_an_ended_one_does_not():
    assert kind(folded()) is Start.RESUME
    assert kind(folded(apply(PLAYING, End(50 * S)))) is Start.NEW
    assert kind(folded(applied=0, states=1)) is Start.RESUME  # only a state line: still a game


def test_after_a_vouching_checkpoint_nothing_more_is_still_a_game():
    assert kind(folded(applied=0, lines_read=0), from_checkpoint_position=True) is Start.RESUME
    assert kind(folded(apply(PLAYING, End(50 * S)), applied=0), from_checkpoint_position=True) is Start.NEW


def test_the_boot_of_the_latest_stretch_and_whether_the_machine_rebooted():
    assert restore.segment_boot("boot-A", None) == "boot-A"
    assert restore.segment_boot("boot-A", {"input": "resume", "boot_id": "boot-B"}) == "boot-B"
    assert restore.segment_boot("boot-A", {"input": "resume"}) == "boot-A"
    assert restore.rebooted("boot-B", "boot-A") is True
    assert restore.rebooted("boot-A", "boot-A") is False
    assert restore.rebooted(None, "boot-A") is None and restore.rebooted("boot-A", None) is None


# --- What a checkpoint is worth ---------------------------------------------------------------------


def test_a_checkpoint_that_agrees_with_its_journal_is_trusted():
    assert verdict(checkpoint()) == Verdict(None)


@pytest.mark.parametrize("cp, fold, size, segment, why", [
    (checkpoint(journal="game-000002.jsonl"), None, 200, "boot-A", "it is for game-000002.jsonl"),
    (checkpoint(), None, 150, "boot-A", "covers 200 bytes but the journal has 150"),
    (checkpoint(lines=3), folded(last_resume_line=5), 200, "boot-A", "predates the last restore"),
    (checkpoint(), None, 200, "boot-B", "another boot"),
    (checkpoint(t_ns=30 * S), None, 200, "boot-A", "before the inputs it covers"),
    (checkpoint(clock=settle(apply(PLAYING, Press(45 * S, 2)), 52 * S)), None, 200, "boot-A",
     "disagrees with the journal it covers"),
], ids=["another journal", "longer than the journal", "before a restore", "another boot", "dated too early",
        "disagrees, says complete"])
def test_a_checkpoint_that_cannot_vouch_is_ignored_with_its_reason(cp, fold, size, segment, why):
    found = verdict(cp, fold, size=size, segment=segment)
    assert found.ignored and why in found.ignored and not found.adopt


def test_a_checkpoint_of_inputs_the_journal_lost_is_adopted():
    truth = settle(apply(PLAYING, Press(45 * S, 2)), 52 * S)  # acted on, never journalled
    assert verdict(checkpoint(clock=truth, complete=False)) == Verdict(None, adopt=True)
    assert verdict(checkpoint(clock=truth, seq=3)) == Verdict(None, adopt=True)  # numbered past the journal


# --- Which moment the clock comes back at -----------------------------------------------------------------


def test_the_later_of_the_last_input_and_a_trusted_checkpoint():
    fold = folded(last_t_ns=40 * S)
    assert restore.last_moment(fold, None, from_checkpoint_position=False) == (40 * S, False)
    assert restore.last_moment(fold, 52 * S, from_checkpoint_position=False) == (52 * S, True)
    assert restore.last_moment(fold, 39 * S, from_checkpoint_position=False) == (40 * S, False)
    # a whole-journal fold: the verdict already refused a checkpoint from before the last restore
    assert restore.last_moment(folded(last_resume_line=2), 52 * S, from_checkpoint_position=False) == (52 * S, True)


def test_a_restore_after_the_checkpoint_puts_its_time_on_an_older_clock():
    assert restore.last_moment(folded(last_resume_line=None), 52 * S, from_checkpoint_position=True) == (52 * S, True)
    assert restore.last_moment(folded(last_resume_line=7), 52 * S, from_checkpoint_position=True) == (40 * S, False)


def test_the_inputs_a_state_line_reports_lost():
    assert restore.lost_inputs(folded(lost=[(3, 5)]), checkpoint(seq=9), verified=False) == [[3, 5]]
    assert restore.lost_inputs(folded(at_line_seq=2), checkpoint(seq=6), verified=False) == [[3, 6]]
    assert restore.lost_inputs(folded(at_line_seq=2), checkpoint(seq=2), verified=False) == []
    assert restore.lost_inputs(folded(at_line_seq=2), checkpoint(seq=6), verified=True) == []  # the fold knows
