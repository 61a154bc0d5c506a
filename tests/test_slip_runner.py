"""The signed result slip through the runner (issue 27 items 4 and 5): the keypad on gpiozero's
MockFactory pins, the players' buttons, the journal, `rackside clock replay`, the console's answer,
and a power cut at every step of typing and signing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rackside.game import slip as slips
from rackside.game.clock import Phase
from rackside.game.messages import Key, Request
from rackside.game.slip import Step

from support.firmware_rig import Rig
from support.keypad_scan import KeypadRig

ROOT = Path(__file__).resolve().parent.parent


def end_a_game(rig) -> None:
    """Player 1 starts player 2's time (2.2), 2 s later the centre is held 3 s: the game ends."""
    rig.after_ms(10)
    rig.tap("left")
    rig.advance_ms(2000)
    rig.down("neutralise").advance_ms(3200)
    rig.up("neutralise").advance_ms(50)
    assert rig.view().phase is Phase.ENDED


@pytest.fixture
def keypad(rig):
    k = KeypadRig(rig)
    yield k
    k.close()


def inputs(rig, *names):
    return [d for d in rig.journal_inputs() if d["input"] in names]


def slip(rig):
    return rig.runner.slip_session.slip


def frames(rig, seconds: int) -> list[tuple[str, str]]:
    """What the displays show at each of the next `seconds` whole seconds (the cycles' grid)."""
    out = []
    for _ in range(seconds):
        rig.advance_to((rig.now // 10**9 + 1) * 10**9)
        out.append(rig.texts())
    return out


def test_a_slip_typed_on_the_keypad_and_signed_at_each_players_button(rig, keypad):
    """5.4.2 the winner types, 5.3 the penalties and result are shown, 5.4.1 both sign: final."""
    end_a_game(rig)
    keypad.type("412#")
    assert slip(rig).scores == (412, None) and slip(rig).side == 2
    keypad.type("350")
    rig.at((rig.now // 10**9 + 1) * 10**9).pump()  # on the blink grid: the typed score is lit
    assert rig.texts() == (" 412", " 350")
    keypad.type("#")
    assert slip(rig).step is Step.SIGNING
    typed = inputs(rig, "slip_key")
    assert [d["key"] for d in typed] == list("412#350#")  # the keys the slip applied; releases are not inputs
    rig.tap("right")  # player 2 signs first
    assert slip(rig).signed == (False, True)
    rig.tap("left")
    assert slip(rig).step is Step.FINAL
    signs = inputs(rig, "slip_sign")
    assert [d["player"] for d in signs] == [2, 1]
    assert signs[-1]["slip"] == {"scores": [412, 350], "penalties": [0, 0], "final": [412, 350], "numbers": [None, None],
                                 "ending": "end", "forfeits": [], "recounted": False}
    presses_after_end = [d for d in inputs(rig, "press") if d["t_ns"] > inputs(rig, "end")[0]["t_ns"]]
    assert presses_after_end == []  # the signatures were the slip's, not presses
    keypad.type("9*#")  # 5.4.1: final
    assert len(inputs(rig, "slip_key")) == 8
    assert ("SEnt", "SEnt") in frames(rig, 2)


def test_without_a_keypad_the_end_is_as_today(rig):
    """No key, no slip: a press after the end is journalled as a press and the displays show the
    clock's own end (render.texts)."""
    end_a_game(rig)
    rig.tap("left")
    assert inputs(rig, "press")[-1]["player"] == 1
    assert slip(rig) is None and rig.runner.slip_session.texts(rig.now) is None
    assert not inputs(rig, "slip_key", "slip_sign")


def test_a_key_before_the_end_is_no_slips(rig, keypad):
    rig.after_ms(10)
    rig.tap("left")
    keypad.type("4#")
    assert slip(rig) is None and not inputs(rig, "slip_key")
    assert rig.runner.keys_unused == 3  # 4 pressed and released, # released: used by nothing (# pressed may begin a call)


def test_either_player_clears_it_before_both_signed_and_it_is_retyped_5_4_1a(rig, keypad):
    end_a_game(rig)
    keypad.type("412#350#")
    rig.tap("left")
    keypad.type("*")
    assert slip(rig).step is Step.TYPING and slip(rig).signed == (False, False) and slip(rig).scores == (None, None)
    rig.tap("right")  # not a signature while typing: the clock's own press, as before
    assert inputs(rig, "press")[-1]["player"] == 2
    keypad.type("350#412#")
    rig.tap("left")
    rig.tap("right")
    assert slip(rig).step is Step.FINAL and inputs(rig, "slip_sign")[-1]["slip"]["final"] == [350, 412]


def test_a_close_game_offers_a_recount_and_the_clock_stays_ended_5_5(rig, keypad):
    end_a_game(rig)
    keypad.type("400#390#")
    assert slip(rig).step is Step.RECOUNT
    rig.tap("left")  # no signature under the offer
    assert slip(rig).signed == (False, False)
    keypad.type("*")  # recount (5.5.2): the scores stay to be corrected
    keypad.type("*401#*389#")
    assert slip(rig).step is Step.SIGNING and slip(rig).recounted
    assert rig.view().phase is Phase.ENDED  # 5.5: the timers stay off


def answer(rig, args):
    got = []
    rig.runner.submit(Request(rig.now, "slip_outcome", args, source="hall", reply=lambda ok, why: got.append((ok, why))))
    rig.pump()
    return got[0]


def test_the_consoles_answer_is_shown_and_journalled(rig, keypad):
    end_a_game(rig)
    game = rig.runner.journal.game
    ok, why = answer(rig, {"game": game, "outcome": "recorded", "why": None})
    assert not ok and "no signed slip" in why
    keypad.type("412#350#")
    rig.tap("left")
    rig.tap("right")
    assert answer(rig, {"game": "game-000099", "outcome": "recorded", "why": None})[0] is False
    assert answer(rig, {"game": game, "outcome": "maybe", "why": None})[0] is False
    assert answer(rig, {"game": game, "outcome": "held", "why": "scorekeeper", "by": "console"}) == (True, "")
    line = inputs(rig, "slip_outcome")[-1]
    assert (line["outcome"], line["why"], line["source"], line["by"]) == ("held", "scorekeeper", "hall", "console")
    assert ("HELd", "HELd") in frames(rig, 2)
    assert answer(rig, {"game": game, "outcome": "held", "why": "scorekeeper"}) == (True, "")  # again: once
    assert len(inputs(rig, "slip_outcome")) == 1


def test_the_replay_shows_the_slips_steps(rig, keypad):
    end_a_game(rig)
    keypad.type("412#350#")
    rig.tap("right")
    rig.tap("left")
    path = rig.store.journal_path
    out = subprocess.run([sys.executable, "-m", "rackside", "clock", "replay", str(path)], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any("slip key 4" in line and line.endswith("slip typing side 1: 4-?") for line in lines)
    assert "slip signed by 2" in out.stdout and "signed by both (final, 5.4.1)" in out.stdout
    assert "result slip: slip 412-350, penalties 0-0, after penalties 412-350, signed by both" in out.stdout
    js = subprocess.run([sys.executable, "-m", "rackside", "clock", "replay", str(path), "--json"], capture_output=True,
                        text=True, timeout=60, cwd=ROOT)
    assert json.loads(js.stdout)["slip"]["step"] == "final"


# --- power loss at each step ---------------------------------------------------------------------


def test_a_power_cut_at_every_step_of_the_slip_comes_back_to_that_step(monkeypatch, tmp_path):
    """The card as it stood after each input of the slip (every line fsync'd, as the runner's batch
    leaves it) is restored by a new clock: the same slip, the same step, shown at once; and a cut
    mid-append (a torn last line) comes back to the step before it."""
    rig = Rig(monkeypatch, tmp_path / "live")
    keypad = KeypadRig(rig)
    end_a_game(rig)
    cards = []  # (copy of the state directory, the slip then)

    def cut(i):
        where = tmp_path / f"cut-{i:02d}"
        shutil.copytree(rig.state_dir, where)
        cards.append((where, slip(rig)))

    steps = ["4", "1", "2", "#", "3", "5", "0", "#", "left", "*", "350#412#", "right", "left"]
    for i, step in enumerate(steps):
        if step in ("left", "right"):
            rig.tap(step)
        else:
            keypad.type(step)
        cut(i)
    rig.runner.submit(Request(rig.now, "slip_outcome", {"game": rig.runner.journal.game, "outcome": "recorded", "why": None}))
    rig.pump()
    cut(len(steps))
    keypad.close()
    rig.close()

    for i, (card, expected) in enumerate(cards):
        torn = i == 5
        if torn:  # the power went in the middle of writing the last input's line
            journal = sorted((card / "journals").glob("game-*.jsonl"))[-1]
            data = journal.read_bytes()
            journal.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1 + 12])
            expected = cards[i - 1][1]
        back = Rig(monkeypatch, card)
        try:
            got = back.runner.slip_session.slip
            if i == len(cards) - 1:  # answered by the console: over, a new game starts (as today)
                assert got is None and back.view().phase is Phase.SETUP, i
                continue
            assert back.view().phase is Phase.ENDED, i
            assert (got.step, got.scores, got.side, got.signed, got.recounted) == \
                   (expected.step, expected.scores, expected.side, expected.signed, expected.recounted), (i, got, expected)
            now = back.now
            assert back.texts() == back.runner._texts(back.view(), now)
            assert back.texts() == slips.texts(got, now) or got.step is Step.UNTYPED
        finally:
            back.close()


def test_a_game_ended_with_nothing_typed_starts_a_new_game_after_a_power_cut_as_today(monkeypatch, tmp_path):
    rig = Rig(monkeypatch, tmp_path / "live")
    end_a_game(rig)
    rig.runner.submit(Key(rig.now, "5", False))  # a release alone begins nothing
    rig.pump()
    rig.close()
    back = Rig(monkeypatch, tmp_path / "live")
    try:
        assert back.view().phase is Phase.SETUP and back.runner.slip_session.slip is None
    finally:
        back.close()


def test_both_players_signing_together_are_two_signatures_not_the_menu(rig, keypad):
    """Both buttons down together and let go: two signatures (only holding both 3 s opens the menu)."""
    end_a_game(rig)
    keypad.type("412#350#")
    rig.down("left").pump()
    rig.after_ms(30).down("right").pump()
    rig.after_ms(80).up("left").up("right").pump()
    rig.advance_ms(500)
    assert slip(rig).step is Step.FINAL and rig.runner.menu is None


def test_an_overtime_forfeits_slip_costs_the_forfeiter_100_5_3_3(monkeypatch, tmp_path):
    from rackside.game.clock import Rules

    rig = Rig(monkeypatch, tmp_path / "state", rules=Rules(game_time_ms=60_000, forfeit_overtime_ms=60_000))
    keypad = KeypadRig(rig)
    try:
        rig.after_ms(10)
        rig.tap("left")  # player 2's time runs (2.2) past the minute's game time and the minute's forfeit line
        rig.advance_ms(121_000)
        assert rig.view().ending.value == "overtime forfeit"
        keypad.type("300#450#")
        rig.tap("left")
        rig.tap("right")
        record = inputs(rig, "slip_sign")[-1]["slip"]
        assert record["forfeits"] == [2] and record["penalties"] == [0, 10] and record["final"] == [300, 350]
        assert record["ending"] == "overtime forfeit"
    finally:
        keypad.close()
        rig.close()


def test_the_slip_names_the_players_by_the_numbers_they_checked_in_with(rig, keypad):
    """Check-in (game.checkin, 1.4.5: who sits where) then the game and its slip: the slip
    carries each side's TSH number, so the console can check it against the round's pairing."""
    rig.after_ms(10)
    keypad.type("31")
    rig.tap("right")  # player 31 sits on the right (2.3.1(b): their arrival)
    keypad.type("12")
    rig.tap("left")
    assert [d["number"] for d in inputs(rig, "checkin")] == [31, 12]
    end_a_game(rig)
    keypad.type("412#350#")
    rig.tap("left")
    rig.tap("right")
    final = inputs(rig, "slip_sign")[-1]["slip"]
    assert final["numbers"] == [12, 31] and final["scores"] == [412, 350]


def test_a_refused_slip_is_disputed_at_a_players_own_button_which_calls_the_director(rig, keypad):
    """Issue 36: the console refused the slip signed here (a result of this game is recorded that is
    not this one: a copied card's). The clock shows what was recorded (rEC, its scores) and dISP; a player's own button calls the director
    (1.4.3, game.call: journalled, published), and the displays say CALL."""
    end_a_game(rig)
    game = rig.runner.journal.game
    keypad.type("412#350#")
    rig.tap("left")
    rig.tap("right")
    assert slip(rig).step is Step.FINAL
    rig.tap("left")  # signed, not refused: the press changes nothing
    assert inputs(rig, "call") == []
    assert answer(rig, {"game": game, "outcome": "refused", "why": "already recorded 10-990 (5.4.1)", "recorded": [10, 990]}) == (True, "")
    shown = frames(rig, 6)
    assert ("rEC", "rEC") in shown and ("  10", " 990") in shown and ("dISP", "dISP") in shown, shown
    assert inputs(rig, "slip_outcome")[-1]["recorded"] == [10, 990]  # journalled, so a restart shows it again
    rig.tap("right")
    calls = inputs(rig, "call")
    assert [(c["player"], c["how"]) for c in calls] == [(2, "side")], calls
    shown = frames(rig, 6)  # a whole cycle of the ended clock's frames
    assert any("CALL" in f for f in shown), shown  # the call, not the slip
    rig.tap("left")  # one call open at a time
    assert len(inputs(rig, "call")) == 1
