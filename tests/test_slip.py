"""The signed result slip's rules (game.slip, issue 27 item 4), each clause cited: pure values, no runner."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rackside.game import slip as slips
from rackside.game.clock import (
    NS_PER_S,
    OVERTIME_FORFEIT_POINTS,
    Arrive,
    End,
    Forfeit,
    LateStart,
    Press,
    Rules,
    run,
    view,
)
from rackside.game.messages import KEYPAD_KEYS
from rackside.game.slip import SlipKey, SlipOutcome, SlipSign, Step
from rackside.game.slip import SCORE_BOUND
from rackside.hardware.sevenseg import encode

GAME_S = 25 * 60


def ended(overtime_s: int = 0, *, end: bool = True):
    """A game where player 1 pressed first (2.2: player 2's time runs), player 2 took the whole game
    time and `overtime_s` more, then it ended: player 2's penalty is 10 a started minute (5.3)."""
    t = (GAME_S + overtime_s) * NS_PER_S
    inputs = [Press(0, 1), Press(t, 2)]
    if end:
        inputs.append(End(t + NS_PER_S))
    c = run(inputs)
    return view(c, c.since_ns)


def keys(s, text: str, t0: int = 10):
    for i, k in enumerate(text):
        s = slips.apply(s, SlipKey(t0 + i, k))
    return s


def typed(a: int, b: int, overtime_s: int = 0):
    return keys(slips.begin(ended(overtime_s)), f"{a}#{b}#")


def test_no_slip_before_the_end():
    c = run([Press(0, 1)])
    assert slips.begin(view(c, NS_PER_S)) is None


def test_a_lateness_forfeit_needs_no_slip_2_3_6a():
    """2.3.5, 2.3.6(a): a player whose assigned time ran out while absent loses by 75; the absent
    player is not there to sign, and the clock's own result is the result: no slip."""
    rules = Rules()
    c = run([LateStart(0, (2,)), Arrive(NS_PER_S, 1)], rules)
    v = view(c, rules.game_time_ms * 1_000_000 + 2 * NS_PER_S)
    assert v.ending is not None and v.ending.value == "lateness forfeit"
    assert slips.begin(v) is None


def test_an_optional_forfeit_needs_no_slip_2_3_4():
    c = run([LateStart(0, (1,)), Arrive(11 * 60 * NS_PER_S, 1), Forfeit(11 * 60 * NS_PER_S + 1, 1)])
    v = view(c, c.since_ns)
    assert v.ending.value == "optional forfeit" and slips.begin(v) is None


def test_the_winner_types_both_scores_then_sees_penalties_and_the_result_5_4_2_5_3():
    """5.4.2: the scores as typed; 5.3: player 2's 61 s of overtime cost 20 points off their score."""
    s = slips.begin(ended(61))
    assert s.penalties == (0, 20) and s.step is Step.UNTYPED
    s = keys(s, "4")  # any key begins the slip: a digit is the first of side 1's score
    assert s.step is Step.TYPING and s.scores == (4, None) and s.side == 1
    s = keys(s, "12#")
    assert s.scores == (412, None) and s.side == 2
    s = keys(s, "350#")
    assert s.step is Step.SIGNING and s.final == (412, 330) and s.margin == 82


def test_star_clears_the_score_then_goes_back_a_side_then_leaves_the_slip():
    s = keys(slips.begin(ended()), "412#39")
    s = keys(s, "*")
    assert s.scores == (412, None) and s.side == 2
    s = keys(s, "*")
    assert s.side == 1 and s.scores == (412, None)
    s = keys(s, "*")
    assert s.scores == (None, None) and s.step is Step.TYPING
    s = keys(s, "*")
    assert s.step is Step.UNTYPED


def test_hash_needs_a_score_and_no_leading_zeros_and_no_more_than_a_display_shows():
    s = keys(slips.begin(ended()), "#")
    assert s.step is Step.TYPING and s.side == 1  # nothing typed: # does not move on
    before = keys(s, "0")
    assert keys(before, "5").scores == (0, None)  # "05" is no score: 0 stays 0
    s = keys(s, "99999")
    assert s.scores[0] == slips.MOST_SHOWN <= SCORE_BOUND


def test_a_margin_of_20_or_less_offers_a_recount_first_5_5_1():
    s = typed(400, 380)
    assert s.step is Step.RECOUNT and s.margin == 20
    assert slips.apply(s, SlipSign(99, 1)) is s  # no signing before the recount is declined
    assert typed(400, 379).step is Step.SIGNING  # 21: no recount


def test_the_margin_after_penalties_decides_the_recount_5_3_5_5_1():
    s = typed(400, 360, overtime_s=1)  # 400 - 0 against 360 - 10 would be 50; the other way round:
    assert s.step is Step.SIGNING
    s = typed(360, 400, overtime_s=121)  # 400 - 30 = 370 against 360: margin 10
    assert s.final == (360, 370) and s.step is Step.RECOUNT


def test_hash_declines_the_recount_and_star_recounts_once_5_5_2():
    s = typed(400, 390)
    assert keys(s, "#").step is Step.SIGNING
    r = keys(s, "*")  # recount: the scores stay to be corrected, side 1 first
    assert r.step is Step.TYPING and r.recounted and r.scores == (400, 390)
    r = keys(r, "*402#*391#")  # corrected after the recount
    assert r.scores == (402, 391) and r.step is Step.SIGNING  # not offered again


def test_both_signatures_make_it_final_5_4_1():
    s = keys(typed(412, 350), "")
    s = slips.apply(s, SlipSign(100, 2))
    assert s.signed == (False, True) and s.step is Step.SIGNING
    assert slips.apply(s, SlipSign(101, 2)) is s  # signing twice changes nothing
    s = slips.apply(s, SlipSign(102, 1))
    assert s.step is Step.FINAL and s.since_ns == 102
    for k in KEYPAD_KEYS:  # 5.4.1: final; only the director changes it (on the console, 5.4.1(b))
        assert slips.apply(s, SlipKey(103, k)) is s
    assert slips.apply(s, SlipSign(104, 1)) is s


def test_either_may_clear_it_until_both_have_signed_5_4_1a():
    s = slips.apply(typed(412, 350), SlipSign(100, 1))
    s = keys(s, "*", 101)
    assert s.step is Step.TYPING and s.scores == (None, None) and s.signed == (False, False)
    s = keys(s, "350#412#", 110)  # typed again, reversed
    assert s.step is Step.SIGNING and s.final == (350, 412)


def test_an_overtime_forfeit_costs_the_forfeiter_at_least_100_5_3_3():
    v = ended(600, end=False)  # 10 minutes over: the clock ended it (5.3.3)
    assert v.ending.value == "overtime forfeit" and v.forfeits == (2,)
    s = slips.begin(v)
    assert s.forfeits == (2,) and s.charged == (0, OVERTIME_FORFEIT_POINTS)
    s = keys(s, "300#450#")
    assert s.final == (300, 350)  # still ahead after 100 off: the console holds it for the director
    assert slips.texts(s, 2 * NS_PER_S)[1] == slips.FORFEIT


def test_the_console_answer_comes_only_after_the_slip_is_final():
    s = typed(412, 350)
    assert slips.apply(s, SlipOutcome(100, "recorded")) is s
    s = slips.apply(slips.apply(s, SlipSign(101, 1)), SlipSign(102, 2))
    s = slips.apply(s, SlipOutcome(103, "held", "the scorekeeper checks it"))
    assert s.outcome == "held" and slips.texts(s, NS_PER_S) == ("HELd", "HELd")
    assert slips.apply(s, SlipOutcome(104, "recorded")).outcome == "recorded"  # the scorekeeper's click
    with pytest.raises(slips.SlipInputError):
        slips.apply(s, SlipOutcome(105, "maybe"))


def test_impossible_inputs_are_refused():
    s = slips.begin(ended())
    with pytest.raises(slips.SlipInputError):
        slips.apply(s, SlipKey(1, "A"))
    with pytest.raises(slips.SlipInputError):
        slips.apply(s, SlipSign(1, 3))


def test_what_the_displays_show_at_each_step():
    s = keys(slips.begin(ended(61)), "412")
    assert slips.texts(s, 0) == (" 412", "----")
    assert slips.texts(s, slips.BLINK_NS) == ("", "----")  # the score being typed blinks
    s = keys(s, "#350#")
    frames = [slips.texts(s, i * NS_PER_S) for i in range(5)]
    assert frames == [(" 412", " 350"), ("P  0", "P 20"), ("FInL", "FInL"), (" 412", " 330"), ("SIGn", "SIGn")]
    s = slips.apply(s, SlipSign(50, 1))
    assert slips.texts(s, 4 * NS_PER_S) == ("donE", "SIGn")
    s = slips.apply(s, SlipSign(51, 2))
    assert [slips.texts(s, i * NS_PER_S) for i in range(2)] == [(" 412", " 330"), ("SEnt", "SEnt")]
    assert slips.texts(typed(400, 390), NS_PER_S) == ("rCnt", "  10")


SLIP_INPUTS = st.one_of(
    st.builds(SlipKey, st.just(0), st.sampled_from(KEYPAD_KEYS)),
    st.builds(SlipSign, st.just(0), st.sampled_from((1, 2))),
    st.builds(SlipOutcome, st.just(0), st.sampled_from(slips.OUTCOMES)),
)


@settings(max_examples=300, deadline=None)
@given(overtime=st.sampled_from((0, 1, 61, 600)), inputs=st.lists(SLIP_INPUTS, max_size=40))
def test_any_inputs_keep_the_slips_rules(overtime, inputs):
    """Any sequence of keys, presses and answers: scores stay within what a display shows (0 to
    MOST_SHOWN), nobody signs an unfinished slip or one under a recount offer (5.5.1), the slip is
    final only with both signatures and then never changes but for the console's answer (5.4.1),
    and every text can be drawn on seven segments."""
    s = slips.begin(ended(overtime, end=overtime < 600))
    for i, event in enumerate(inputs):
        event = type(event)(*((i,) + tuple(vars(event).values())[1:]))
        before = s
        s = slips.apply(s, event)
        assert all(x is None or 0 <= x <= slips.MOST_SHOWN for x in s.scores)
        if before.step is Step.FINAL:
            assert (s.step, s.scores, s.signed) == (Step.FINAL, before.scores, before.signed)
        if s.step is Step.FINAL:
            assert s.signed == (True, True) and None not in s.scores
        if any(s.signed):
            assert s.step in (Step.SIGNING, Step.FINAL)
        if s.step is Step.SIGNING and before.step is Step.TYPING:
            assert s.margin > slips.RECOUNT_MARGIN or s.recounted  # 5.5.1: the offer comes first
        if isinstance(event, SlipSign) and s is not before:
            assert before.step is Step.SIGNING
        for t in range(0, 6 * NS_PER_S, slips.BLINK_NS):
            shown = slips.texts(s, t)
            if shown is not None:
                for text in shown:
                    encode(text)  # raises for a glyph seven segments cannot draw


def test_an_ended_game_with_an_open_slip_is_resumed_after_a_restart():
    """firmware.restore: an ended game starts a new journal, unless its slip was begun and the console
    has not answered it (a power cut mid-typing or mid-signing comes back to the same step)."""
    from types import SimpleNamespace

    from rackside.firmware import restore

    c = run([Press(0, 1), End(NS_PER_S)])
    fold = SimpleNamespace(applied=2, states=0, lines_read=2, clock=c)
    kind = lambda open_: restore.start_kind(fold, journal_rules=Rules(), configured_rules=Rules(),  # noqa: E731
                                           chosen_by_director=False, torn=False, slip_open=open_)
    assert kind(False) is restore.Start.NEW and kind(True) is restore.Start.RESUME
    s = slips.begin(view(c, c.since_ns))
    assert not slips.slip_open(None) and not slips.slip_open(s)  # nothing typed: a new game, as before
    assert slips.slip_open(keys(s, "4"))
    final = slips.apply(slips.apply(keys(s, "412#350#"), SlipSign(50, 1)), SlipSign(51, 2))
    assert slips.slip_open(final) and not slips.slip_open(slips.apply(final, SlipOutcome(52, "recorded")))
