"""The pure clock core, one test (or a few) per WESPA clause it implements.

Times are injected: every input carries its timestamp, nothing sleeps. `S`/`MS` are nanoseconds.
Clause numbers are WESPA Game Rules v2.0 (parts 1-3) and the v5.1 summary (parts 4-6).
"""

from __future__ import annotations

import pytest

from rackside.game.clock import (
    Adjust,
    Arrive,
    ClockInputError,
    End,
    Ending,
    Forfeit,
    LateStart,
    Neutralise,
    Phase,
    Press,
    Resume,
    Rules,
    apply,
    display_text,
    new_clock,
    overtime_seconds,
    penalty_points,
    run,
    settle,
    view,
)

S = 1_000_000_000
MS = 1_000_000
GAME = 25 * 60 * S


def remaining(c, t):
    return tuple(p.remaining_ns for p in view(c, t).players)


def texts(c, t):
    return tuple(p.text for p in view(c, t).players)


def started(t=0, starter=1):
    """A game whose starter's time began at `t` (2.2: the non-starter pressed)."""
    return run([Press(t, 3 - starter)])


# --- 1.4.2(a): count down to 0:00, then count overtime up -----------------------------------------


def test_1_4_2_a_counts_down_from_game_time_then_overtime_counts_up():
    c = started()
    assert texts(c, 0) == ("25:00", "25:00")
    assert texts(c, 1 * S) == ("24:59", "25:00")
    assert texts(c, GAME - 1 * S) == ("0:01", "25:00")
    assert texts(c, GAME) == ("0:00", "25:00")
    assert texts(c, GAME + 1 * S) == ("-0:01", "25:00")
    assert texts(c, GAME + 65 * S) == ("-1:05", "25:00")
    assert texts(c, GAME + 599 * S) == ("-9:59", "25:00")


def test_1_4_2_a_game_time_is_configuration():
    c = run([Press(0, 2)], Rules(game_time_ms=30 * 60_000))
    assert texts(c, 0) == ("30:00", "30:00")


# --- 5.3: the display never shows 0:00 while time remains; overtime in whole seconds ---------------


@pytest.mark.parametrize(
    "remaining_ns, shown",
    [
        (GAME, "25:00"),
        (GAME - 1, "25:00"),  # rounded up: a started second still shows
        (1 * S + 1, "0:02"),
        (1 * S, "0:01"),
        (999 * MS, "0:01"),
        (1, "0:01"),  # 1 ns left is not 0:00
        (0, "0:00"),
        (-1, "0:00"),  # no whole second of overtime yet: 0:00, penalty 0
        (-999 * MS, "0:00"),
        (-1 * S, "-0:01"),
        (-61 * S - 999 * MS, "-1:01"),  # fractions ignored
        (-600 * S, "-10:00"),
    ],
)
def test_5_3_display_never_shows_0_00_while_time_remains(remaining_ns, shown):
    assert display_text(remaining_ns) == shown


@pytest.mark.parametrize(
    "over_ns, overtime_s, penalty",
    [
        (0, 0, 0),
        (900 * MS, 0, 0),  # 0.9 s -> 0 points (whole seconds only)
        (1 * S, 1, 10),  # 1 s -> 10
        (59 * S + 999 * MS, 59, 10),
        (60 * S, 60, 10),  # 60 s -> 10
        (60 * S + 999 * MS, 60, 10),
        (61 * S, 61, 20),  # 61 s -> 20
        (120 * S, 120, 20),
        (121 * S, 121, 30),
        (599 * S + 999 * MS, 599, 100),
    ],
)
def test_5_3_penalty_10_per_minute_or_part_thereof_in_whole_seconds(over_ns, overtime_s, penalty):
    c = started()
    p1 = view(c, GAME + over_ns).players[0]
    assert (p1.overtime_s, p1.penalty) == (overtime_s, penalty)
    assert overtime_seconds(-over_ns) == overtime_s
    assert penalty_points(overtime_s) == penalty


def test_5_3_penalty_per_minute_is_configuration():
    """Another body's rules are a config change (issue: 'for example NASPA's')."""
    c = run([Press(0, 2)], Rules(penalty_per_minute=5))
    assert view(c, GAME + 61 * S).players[0].penalty == 10


def test_5_3_the_waiting_player_is_not_charged():
    c = started()
    assert view(c, GAME + 61 * S).players[1].penalty == 0
    assert view(c, GAME + 61 * S).players[1].remaining_ns == GAME


# --- 5.3.3: ten minutes of overtime is an immediate forfeit, 100 penalty points ---------------------


def test_5_3_3_overtime_reaching_ten_minutes_forfeits_immediately():
    c = started()
    before = view(c, GAME + 600 * S - 1)
    assert before.phase is Phase.RUNNING and before.forfeits == ()
    v = view(c, GAME + 600 * S)  # no input needed: time alone forfeits
    assert v.phase is Phase.ENDED
    assert v.ending is Ending.OVERTIME_FORFEIT
    assert v.forfeits == (1,)
    assert v.players[0].forfeit and not v.players[1].forfeit
    assert v.players[0].penalty == 100
    assert v.players[0].text == "-10:00"
    assert v.winner_by_forfeit() == 2
    assert v.lateness_margin is None  # not a lateness forfeit (2.3.6 does not apply)


def test_5_3_3_the_clock_stops_at_the_forfeit():
    c = started()
    later = view(c, GAME + 3600 * S)
    assert later.players[0].remaining_ns == -600 * S  # stopped at exactly 10:00 over
    assert later.players[0].penalty == 100
    # an input long afterwards finds the clock stopped and changes nothing
    after = apply(c, Press(GAME + 3600 * S, 1))
    assert view(after, GAME + 3601 * S).players == later.players


def test_5_3_3_forfeit_line_is_configuration():
    c = run([Press(0, 2)], Rules(forfeit_overtime_ms=5 * 60_000))
    v = view(c, GAME + 300 * S)
    assert v.ending is Ending.OVERTIME_FORFEIT and v.players[0].penalty == 50


# --- 2.2: the non-starter starts the starter's time -----------------------------------------------


def test_2_2_non_starter_press_starts_the_starters_time():
    c = run([Press(5 * S, 2)])
    v = view(c, 5 * S)
    assert v.phase is Phase.RUNNING
    assert v.players[0].running and not v.players[1].running


def test_2_2_time_before_the_start_is_charged_to_nobody():
    c = run([Adjust(0, 1, 20 * 60_000), Press(30 * S, 1)])  # setup: a director check, then the start
    assert remaining(c, 31 * S) == (20 * 60 * S, GAME - 1 * S)


# --- 3.1.1(c), 3.4.1: pressing your own button ends your turn and starts the opponent's -----------


def test_3_4_1_pressing_own_button_switches_to_the_opponent():
    c = run([Press(0, 2), Press(10 * S, 1), Press(25 * S, 2), Press(26 * S, 1)])
    v = view(c, 30 * S)
    assert v.players[1].running
    assert remaining(c, 30 * S) == (GAME - 11 * S, GAME - 19 * S)


def test_3_4_1_the_button_of_the_side_not_running_does_nothing():
    c = started()  # player 1 running
    pressed = apply(c, Press(10 * S, 2))
    assert pressed == settle(c, 10 * S)
    assert view(pressed, 20 * S).players[0].running


# --- 1.4.3, 4.1, 3.10.3(c): neutralise, and restart the side that was stopped ----------------------


def test_1_4_3_neutralise_stops_both_times_and_remembers_the_side():
    c = run([Press(0, 2), Press(10 * S, 1), Neutralise(15 * S)])  # player 2 running, then stopped
    v = view(c, 100 * S)
    assert v.phase is Phase.NEUTRALISED and v.neutralised
    assert not any(p.running for p in v.players)
    assert remaining(c, 100 * S) == (GAME - 10 * S, GAME - 5 * S)
    restarted = apply(c, Neutralise(100 * S))
    assert view(restarted, 100 * S).players[1].running
    assert remaining(restarted, 103 * S) == (GAME - 10 * S, GAME - 8 * S)


def test_3_10_3_c_challenge_neutralises_then_the_timer_restarts():
    # player 1 plays and presses; player 2 holds, challenges (neutralises), the word is good:
    # player 2's time restarts where it stopped.
    c = run([Press(0, 2), Press(20 * S, 1), Neutralise(30 * S), Neutralise(90 * S)])
    assert view(c, 95 * S).players[1].running
    assert remaining(c, 95 * S) == (GAME - 20 * S, GAME - 15 * S)


def test_1_4_3_neutral_presses_by_the_stopped_side_opponent_do_nothing():
    c = run([Press(0, 2), Neutralise(5 * S)])  # player 1 was running
    assert apply(c, Press(6 * S, 2)) == settle(c, 6 * S)


# --- 5.1.2, 5.1.3: playing out neutralises; the player may restart the opponent's time ---------------


def test_5_1_3_playing_out_player_restarts_the_opponents_time():
    # player 1 plays out and neutralises instead of pressing (5.1.2), then, the opponent not
    # responding, presses their own button to start player 2's time (5.1.3(a)).
    c = run([Press(0, 2), Neutralise(40 * S), Press(46 * S, 1)])
    v = view(c, 50 * S)
    assert v.players[1].running
    assert remaining(c, 50 * S) == (GAME - 40 * S, GAME - 4 * S)


# --- 1.4.1(b): the director adjusts either player's remaining time --------------------------------


def test_1_4_1_b_director_adjusts_remaining_time_of_either_player():
    c = run([Press(0, 2), Press(60 * S, 1), Adjust(70 * S, 2, 10 * 60_000), Adjust(70 * S, 1, 20 * 60_000)])
    assert remaining(c, 70 * S) == (20 * 60 * S, 10 * 60 * S)
    assert remaining(c, 75 * S) == (20 * 60 * S, 10 * 60 * S - 5 * S)  # player 2's still runs


def test_1_4_1_b_adjust_into_overtime_and_the_penalty_follows():
    c = run([Press(0, 2), Adjust(1 * S, 1, -61_000)])
    p1 = view(c, 1 * S).players[0]
    assert (p1.text, p1.overtime_s, p1.penalty) == ("-1:01", 61, 20)


def test_1_4_1_b_adjust_at_or_past_the_forfeit_line_is_refused():
    c = started()
    with pytest.raises(ClockInputError):
        apply(c, Adjust(1 * S, 1, -600_000))
    with pytest.raises(ClockInputError):
        apply(c, Adjust(1 * S, 1, 1.5))


# --- 2.3.3: one player absent ---------------------------------------------------------------------


def test_2_3_3_one_absent_player_is_assigned_the_time_showing_on_their_side():
    c = run([LateStart(0, (2,))])
    v = view(c, 7 * 60 * S)
    assert v.phase is Phase.LATE and v.players[1].absent and not v.players[0].absent
    assert texts(c, 7 * 60 * S) == ("25:00", "18:00")  # only the late side drains
    c = apply(c, Arrive(7 * 60 * S, 2))
    v = view(c, 10 * 60 * S)
    assert v.phase is Phase.SETUP  # the game then proceeds as usual (2.2)
    assert remaining(c, 10 * 60 * S) == (GAME, 18 * 60 * S)
    c = apply(c, Press(10 * 60 * S, 1))  # player 1 starts player 2's time
    assert remaining(c, 10 * 60 * S + 5 * S) == (GAME, 18 * 60 * S - 5 * S)


def test_2_3_3_press_of_a_player_button_while_one_latecomer_is_awaited_does_nothing():
    c = run([LateStart(0, (2,))])
    assert apply(c, Press(S, 1)) == settle(c, S)
    assert apply(c, Press(S, 2)) == settle(c, S)


def test_2_3_3_b_the_centre_press_records_the_arrival_at_its_edge():
    """Issue 9: the director neutralises the timer when the late player arrives (2.3.3(b)); that
    one press is the arrival, and the player is assigned the time showing."""
    c = run([LateStart(0, (2,)), Neutralise(300 * S), End(400 * S)])
    v = view(c, 400 * S)
    assert v.players[1].remaining_ns == 20 * 60 * S and v.players[0].remaining_ns == GAME
    assert v.ending is Ending.END and v.forfeits == ()


def test_2_3_3_b_after_the_centre_press_the_game_proceeds_as_usual():
    c = run([LateStart(0, (1,)), Neutralise(2 * 60 * S)])
    v = view(c, 3 * 60 * S)
    assert v.phase is Phase.SETUP and not v.players[0].absent
    c = apply(c, Press(3 * 60 * S, 2))  # 2.2: player 2 starts player 1's time
    assert remaining(c, 3 * 60 * S + 5 * S) == (23 * 60 * S - 5 * S, GAME)


def test_2_3_2_b_c_first_arrival_by_their_own_button_second_by_the_centre():
    """Both absent: the first player to arrive presses their own button (the second side starts,
    2.3.2(b)); the centre press neutralises when the second arrives (2.3.2(c))."""
    c = run([LateStart(0, (1, 2)), Press(3 * 60 * S, 2)])
    v = view(c, 4 * 60 * S)
    assert v.phase is Phase.LATE and not v.players[1].absent and v.players[0].absent
    assert texts(c, 8 * 60 * S) == ("17:00", "22:00")
    c = apply(c, Press(5 * 60 * S, 2))  # the arrived player's button again: nothing
    assert view(c, 5 * 60 * S).players[0].absent
    c = apply(c, Neutralise(8 * 60 * S))
    assert view(c, 9 * 60 * S).phase is Phase.SETUP
    assert remaining(c, 9 * 60 * S) == (17 * 60 * S, 22 * 60 * S)


def test_2_3_2_the_centre_while_both_are_absent_records_both_arrivals():
    c = run([LateStart(0, (1, 2)), Neutralise(4 * 60 * S)])
    assert view(c, 5 * 60 * S).phase is Phase.SETUP
    assert remaining(c, 5 * 60 * S) == (21 * 60 * S, 21 * 60 * S)


def test_2_3_3_b_the_time_assigned_is_the_time_showing_rounded_up_as_displayed():
    """Issue 9: the display rounds up, so 14:59.5 remaining shows 15:00: that is what is assigned,
    and the optional forfeit (2.3.4, under 15:00) is not offered."""
    t = 10 * 60 * S + S // 2  # 14:59.5 left: the display shows 15:00
    c = run([LateStart(0, (2,))])
    assert texts(c, t)[1] == "15:00"
    for arrived in (apply(c, Neutralise(t)), apply(c, Arrive(t, 2))):
        v = view(arrived, t + S)
        assert v.players[1].remaining_ns == 15 * 60 * S and v.players[1].text == "15:00"
        assert not v.players[1].may_forfeit
        assert apply(arrived, Forfeit(t + S, 2)) == settle(arrived, t + S)
    c = run([LateStart(0, (1, 2)), Press(7 * 60 * S + 1, 1), Neutralise(9 * 60 * S + S // 3)])
    assert remaining(c, 10 * 60 * S) == (18 * 60 * S, 16 * 60 * S)  # 17:59.99.. and 15:59.66 shown rounded up


# --- 2.3.2: both players absent: each is assigned the game time less their own lateness --------------


def test_2_3_2_both_absent_each_assigned_game_time_less_own_lateness():
    c = run([LateStart(0, (1, 2)), Arrive(3 * 60 * S, 1)])
    # 2.3.2(b): the first player is assigned the time on the first side; the second side runs on
    assert texts(c, 8 * 60 * S) == ("22:00", "17:00")
    c = apply(c, Arrive(8 * 60 * S, 2))
    # 2.3.2(c): the time on the second side (20:00) minus the 3:00 deducted from the first = 17:00
    assert remaining(c, 9 * 60 * S) == (22 * 60 * S, 17 * 60 * S)
    assert view(c, 9 * 60 * S).phase is Phase.SETUP


# --- 2.3.4: optional forfeit when assigned less than 15 minutes ------------------------------------


def test_2_3_4_late_player_assigned_under_15_minutes_may_forfeit():
    c = run([LateStart(0, (2,)), Arrive(10 * 60 * S + S, 2)])  # assigned 14:59
    assert view(c, 11 * 60 * S).players[1].may_forfeit
    assert not view(c, 11 * 60 * S).players[0].may_forfeit
    c = apply(c, Forfeit(11 * 60 * S, 2))
    v = view(c, 11 * 60 * S)
    assert v.phase is Phase.ENDED and v.ending is Ending.OPTIONAL_FORFEIT
    assert v.forfeits == (2,) and v.winner_by_forfeit() == 1
    assert v.lateness_margin == 75  # 2.3.6(a)


def test_2_3_4_assigned_exactly_15_minutes_may_not_forfeit():
    c = run([LateStart(0, (2,)), Arrive(10 * 60 * S, 2)])  # assigned exactly 15:00
    assert not view(c, 11 * 60 * S).players[1].may_forfeit
    assert apply(c, Forfeit(11 * 60 * S, 2)) == settle(c, 11 * 60 * S)


def test_2_3_4_only_a_late_player_and_only_before_play_starts():
    c = run([LateStart(0, (2,)), Arrive(12 * 60 * S, 2)])
    assert apply(c, Forfeit(12 * 60 * S, 1)) == settle(c, 12 * 60 * S)  # player 1 was on time
    playing = apply(c, Press(12 * 60 * S, 1))
    assert apply(playing, Forfeit(13 * 60 * S, 2)).phase is Phase.RUNNING


def test_2_3_4_first_arrival_may_forfeit_while_the_opponent_is_still_absent():
    c = run([LateStart(0, (1, 2)), Arrive(11 * 60 * S, 1)])  # player 1 assigned 14:00
    v = view(c, 12 * 60 * S)
    assert v.phase is Phase.LATE and v.players[0].may_forfeit
    c = apply(c, Forfeit(12 * 60 * S, 1))
    v = view(c, 13 * 60 * S)
    assert v.ending is Ending.OPTIONAL_FORFEIT and v.forfeits == (1,)
    # the absent player's lateness up to the forfeit stays charged; it stops draining
    assert remaining(c, 13 * 60 * S) == (14 * 60 * S, 13 * 60 * S)


# --- 2.3.5, 2.3.6: compulsory forfeit when the assigned time runs out; 75-point margin ---------------


def test_2_3_5_absent_player_forfeits_when_their_time_runs_out():
    c = run([LateStart(0, (2,))])
    assert view(c, GAME - 1).phase is Phase.LATE
    v = view(c, GAME)  # no input needed
    assert v.phase is Phase.ENDED and v.ending is Ending.LATENESS_FORFEIT
    assert v.forfeits == (2,) and v.winner_by_forfeit() == 1
    assert v.lateness_margin == 75  # 2.3.6(a)
    assert v.players[1].remaining_ns == 0 and v.players[1].penalty == 0


def test_2_3_5_arriving_as_the_time_expires_is_too_late_a_nanosecond_before_is_not():
    late = run([LateStart(0, (2,)), Arrive(GAME, 2)])
    assert view(late, GAME).ending is Ending.LATENESS_FORFEIT
    in_time = run([LateStart(0, (2,)), Arrive(GAME - 1, 2)])
    assert view(in_time, GAME).phase is Phase.SETUP
    assert remaining(in_time, GAME) == (GAME, S)  # 1 ns left showed 0:01: that is the time assigned


def test_2_3_5_both_absent_both_forfeit():
    v = view(run([LateStart(0, (1, 2))]), GAME + S)
    assert v.ending is Ending.LATENESS_FORFEIT and v.forfeits == (1, 2)
    assert v.winner_by_forfeit() is None


def test_2_3_6_a_margin_is_configuration():
    v = view(run([LateStart(0, (1,))], Rules(lateness_forfeit_margin=100)), GAME)
    assert v.lateness_margin == 100


def test_2_3_director_adjusts_an_absent_players_draining_time():
    c = run([LateStart(0, (2,)), Adjust(60 * S, 2, 20 * 60_000)])
    assert remaining(c, 90 * S) == (GAME, 20 * 60 * S - 30 * S)
    c = apply(c, Arrive(90 * S, 2))
    assert remaining(c, 100 * S) == (GAME, 20 * 60 * S - 30 * S)


# --- 3.10.6: courtesy draw one minute after pressing ------------------------------------------------


def test_3_10_6_a_courtesy_draw_one_minute_after_pressing():
    c = run([Press(0, 2), Press(10 * S, 1)])  # player 1 pressed at 10 s; player 2 holds
    assert not view(c, 70 * S - 1).players[0].courtesy_draw
    v = view(c, 70 * S)
    assert v.players[0].courtesy_draw and not v.players[1].courtesy_draw
    # a neutralised clock (a challenge is on) shows no courtesy-draw indication
    assert not view(apply(c, Neutralise(71 * S)), 72 * S).players[0].courtesy_draw
    # and it goes when the opponent presses in turn
    assert not view(apply(c, Press(80 * S, 2)), 81 * S).players[0].courtesy_draw


def test_3_10_6_the_courtesy_draw_indicator_is_cleared_whenever_the_clock_is_neutralised():
    """Issue 9: after a challenge (neutralised, then restarted) the play may have come off the
    board (3.10.15(a)): the indicator belongs to a turn that stood."""
    c = run([Press(0, 2), Press(10 * S, 1), Neutralise(20 * S), Neutralise(30 * S)])
    assert view(c, 30 * S).players[1].running
    assert not any(p.courtesy_draw for p in view(c, 200 * S).players)
    # the same after a restart from a power cut, which comes back neutralised
    c = run([Press(0, 2), Press(10 * S, 1), Resume(t_ns=500 * S, at_ns=20 * S), Neutralise(501 * S)])
    assert not any(p.courtesy_draw for p in view(c, 700 * S).players)


def test_3_10_6_the_interval_is_configuration():
    c = run([Press(0, 2), Press(10 * S, 1)], Rules(courtesy_draw_after_ms=30_000))
    assert view(c, 40 * S).players[0].courtesy_draw


# --- End of game ----------------------------------------------------------------------------------


def test_end_stops_the_clock_and_keeps_final_times_and_penalties():
    c = run([Press(0, 2), Press(GAME + 61 * S, 1), End(GAME + 70 * S)])
    v = view(c, GAME + 1000 * S)
    assert v.phase is Phase.ENDED and v.ending is Ending.END and v.forfeits == ()
    assert (v.players[0].text, v.players[0].penalty) == ("-1:01", 20)
    assert v.players[1].remaining_ns == GAME - 9 * S
    assert apply(c, Adjust(GAME + 1001 * S, 1, 0)) == settle(c, GAME + 1001 * S)


def test_2_3_end_while_a_player_is_absent_keeps_their_lateness_charged():
    """Bug fixed in the core: End used to clear `absent` without charging the lateness, so the
    absent player's lost time came back (remaining must rise only by director adjustment)."""
    c = run([LateStart(0, (2,)), End(5 * 60 * S)])
    assert remaining(c, 6 * 60 * S) == (GAME, 20 * 60 * S)


# --- Both buttons at once (the switch guard) -------------------------------------------------------


def test_both_buttons_within_the_switch_guard_switch_once():
    c = run([Press(0, 2), Press(10 * S, 1), Press(10 * S + 1 * MS, 2)])
    assert view(c, 11 * S).players[1].running  # player 1's edge switched; 2's was the collision
    c = run([Press(0, 2), Press(10 * S, 1), Press(10 * S + 100 * MS, 2)])
    assert view(c, 11 * S).players[0].running  # 100 ms later is a real turn


# --- Restart after a power cut (issue 5) ---------------------------------------------------------------


def test_resume_comes_back_neutralised_with_the_times_of_the_last_record_downtime_not_charged():
    c = run([Press(0, 2), Press(10 * S, 1)])  # player 2 running since 10 s
    restored = apply(c, Resume(t_ns=5 * S, at_ns=12 * S))  # new boot's clock reads 5 s
    v = view(restored, 500 * S)
    assert v.phase is Phase.NEUTRALISED and v.restored
    assert remaining(restored, 500 * S) == (GAME - 10 * S, GAME - 2 * S)
    again = apply(restored, Neutralise(500 * S))  # centre button restarts player 2
    assert view(again, 503 * S).players[1].running
    assert remaining(again, 503 * S) == (GAME - 10 * S, GAME - 5 * S)
    assert not view(again, 503 * S).restored


def test_resume_at_before_the_last_input_charges_nothing_extra():
    c = run([Press(0, 2), Press(10 * S, 1)])
    restored = apply(c, Resume(t_ns=0, at_ns=3 * S))
    assert remaining(restored, 0) == (GAME - 10 * S, GAME)


def test_resume_notice_stays_through_a_press_that_changes_nothing():
    restored = apply(run([Press(0, 2)]), Resume(t_ns=0, at_ns=1 * S))  # player 1 to restart
    assert view(apply(restored, Press(1 * S, 2)), 1 * S).restored
    assert not view(apply(restored, Press(1 * S, 1)), 1 * S).restored  # 5.1.3 restart


def test_resume_while_a_player_is_absent_does_not_charge_the_downtime_as_lateness():
    c = run([LateStart(0, (2,))])
    restored = apply(c, Resume(t_ns=1_000 * S, at_ns=60 * S))
    assert remaining(restored, 1_000 * S) == (GAME, GAME - 60 * S)
    assert remaining(restored, 1_010 * S) == (GAME, GAME - 70 * S)  # lateness drains again


# --- Inputs that can never be valid ------------------------------------------------------------------


def test_time_going_backwards_is_refused():
    c = run([Press(10 * S, 2)])
    with pytest.raises(ClockInputError):
        apply(c, Press(9 * S, 1))


@pytest.mark.parametrize("player", [0, 3, -1, "1", None])
def test_unknown_player_is_refused(player):
    with pytest.raises(ClockInputError):
        apply(new_clock(), Press(0, player))


def test_rules_refuse_non_positive_times():
    with pytest.raises(ValueError):
        Rules(game_time_ms=0)
    with pytest.raises(ValueError):
        Rules(penalty_per_minute=-1)


def test_2_3_5_expiry_keeps_the_other_absent_players_lateness_charged():
    """Bug fixed in the core (found by the Hypothesis property): when one absent player's time ran
    out, the other absent player's lateness was given back."""
    c = run([LateStart(0, (1, 2)), Adjust(60 * S, 2, 60_000)])  # player 2 now has 1:00 left
    v = view(c, 120 * S)
    assert v.ending is Ending.LATENESS_FORFEIT and v.forfeits == (2,)
    assert remaining(c, 300 * S) == (GAME - 120 * S, 0)  # player 1 was 2:00 late when it ended


def test_2_3_5_expiry_of_a_time_adjusted_below_zero_keeps_it_there():
    """Bug fixed in the core (found by the Hypothesis property): the expiry reset a remaining time
    the director had put below 0:00 back up to 0:00."""
    c = run([LateStart(0, (1,)), Adjust(1 * S, 1, -30_000)])
    v = view(c, 2 * S)
    assert v.ending is Ending.LATENESS_FORFEIT
    assert v.players[0].remaining_ns == -30 * S


def test_2_3_5_an_absent_players_time_adjusted_to_0_00_expires_at_that_moment():
    """The fast path of `settle` (nothing to account) must not skip an expiry due at once."""
    c = run([LateStart(0, (2,)), Adjust(60 * S, 2, 0)])
    v = view(c, 60 * S)
    assert v.phase is Phase.ENDED and v.ending is Ending.LATENESS_FORFEIT and v.forfeits == (2,)
    assert settle(c, 60 * S).phase is Phase.ENDED


def test_the_clock_is_still_a_frozen_value_after_the_fast_copies():
    """Issue 11: the core copies clocks without dataclasses.replace; the copies are the same values."""
    import dataclasses

    c = run([Press(0, 2), Press(10 * S, 1), Neutralise(20 * S)])
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.phase = Phase.RUNNING
    same = dataclasses.replace(c)
    assert same == c and hash(same) == hash(c) and vars(same) == vars(c)
    v = view(c, 30 * S)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.phase = Phase.RUNNING
    assert dataclasses.replace(v) == v and dataclasses.replace(v.players[0]) == v.players[0]
