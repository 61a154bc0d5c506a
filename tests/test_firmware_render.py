"""What the displays are told for each state (pure), and when the texts next change."""

import pytest

from rackside.firmware import menu as menus
from rackside.game import render
from rackside.game.clock import (
    Adjust,
    Arrive,
    End,
    LateStart,
    NS_PER_S,
    Neutralise,
    Press,
    Resume,
    Rules,
    display_text,
    new_clock,
    run,
    view,
)
from rackside.firmware.config import CLOCK_KEYS, ConfigError, rules_from_table
from rackside.hardware import sevenseg

S = NS_PER_S


def frames(c, t0, seconds=4, restored_until=None):
    """Every text each display shows over `seconds` from t0, sampled every half second."""
    out = [set(), set()]
    for k in range(seconds * 2):
        t = t0 + k * S // 2
        left, right = render.texts(view(c, t), t, restored_until_ns=restored_until)
        out[0].add(left)
        out[1].add(right)
    return out


def test_running_display_always_shows_its_time():
    c = run([Press(0, 2)])
    assert frames(c, 10 * S)[0] == {"24:50", "24:49", "24:48", "24:47"}
    for t in range(0, 10 * S, S // 4):
        left, _ = render.texts(view(c, t), t)
        assert ":" in left and left[0].isdigit()


def test_overtime_shows_a_minus_sign():
    c = run([Press(0, 2), Adjust(0, 1, 0)])
    left, _ = render.texts(view(c, 65 * S + 3), 65 * S + 3)
    assert left == "-1:05"


def test_neutralised_colons_blink_on_both_displays():
    c = run([Press(0, 2), Neutralise(3 * S)])
    assert render.texts(view(c, 10 * S), 10 * S) == ("24:57", "25:00")
    assert render.texts(view(c, 10 * S + S // 2), 10 * S + S // 2) == ("2457", "2500")


def test_courtesy_draw_alternates_on_the_waiting_players_display():
    c = run([Press(0, 2), Press(5 * S, 1)])  # left pressed at 5 s
    left, right = frames(c, 63 * S, seconds=2)
    assert render.COURTESY not in left  # not until a minute after the press: 5 s + 60 s
    left, right = frames(c, 66 * S, seconds=2)
    assert render.COURTESY in left
    assert all(":" in t for t in right)  # the holder's running time is never hidden


def test_late_absent_player_alternates_with_LAtE():
    c = run([LateStart(0, (1,))])
    left, right = frames(c, 10 * S)
    assert "LAtE" in left and "24:50" in left
    assert right == {"25:00"}


def test_may_forfeit_after_a_very_late_arrival():
    c = run([LateStart(0, (1,)), Arrive(11 * 60 * S, 1)])
    left, _ = frames(c, 11 * 60 * S)
    assert render.MAY_FORFEIT in left


def test_ended_cycles_time_end_and_penalty():
    c = run([Press(0, 2), Adjust(0, 1, 0), End(61 * S)])
    left, right = frames(c, 70 * S)
    assert left == {"-1:01", "End", "P 20"}
    assert right == {"25:00", "End", "P  0"}


def test_forfeit_shows_ForF_and_100_points():
    c = run([Press(0, 2), Adjust(0, 1, 0)])
    t = 601 * S
    left, right = frames(c, t)
    assert left == {"-10:00", "ForF", "P100"}
    assert "End" in right


def test_restored_banner_on_both_displays_for_a_while():
    c = run([Press(0, 2), Resume(100 * S, 5 * S)])
    left, right = frames(c, 100 * S, restored_until=110 * S)
    assert render.RESTORED in left and render.RESTORED in right
    left, right = frames(c, 111 * S, restored_until=110 * S)
    assert render.RESTORED not in left | right


def test_every_indicator_text_fits_a_4_digit_module():
    for text in (render.COURTESY, render.ABSENT, render.MAY_FORFEIT, render.ENDED, render.FORFEIT, render.RESTORED,
                 render.penalty_text(0), render.penalty_text(100), render.no_colon("-10:00"), render.no_colon(" 5:00")):
        sevenseg.encode(text)


@pytest.mark.parametrize("remaining_ns, expected", [
    (1_500 * S, S),  # 25:00 exactly -> 24:59 in 1 s
    (1_499 * S + 1, 1),  # 25:00 shown (rounded up) until one more ns passes
    (S // 2, S // 2),  # 0:01 -> 0:00 when time is up
    (0, S),  # 0:00 -> -0:01 after one whole second of overtime
    (-S - 5, S - 5),
])
def test_next_digit_change(remaining_ns, expected):
    assert render.next_digit_change_ns(remaining_ns) == expected


def test_next_change_is_never_late():
    """Sampling every ms: the texts never change before the moment next_change_ns predicted."""
    c = run([Press(0, 2), Press(3_333_333_333, 1), Neutralise(4 * S), Neutralise(5 * S)])
    t = 5 * S
    while t < 9 * S:
        nxt = render.next_change_ns(c, view(c, t), t)
        now = render.texts(view(c, t), t)
        for probe in range(t + 1_000_000, nxt, 7_000_000):
            assert render.texts(view(c, probe), probe) == now
        t = nxt


def test_nothing_changes_before_the_game():
    c = new_clock(Rules())
    assert render.next_change_ns(c, view(c, 0), 0) is None


def test_every_overtime_the_config_allows_can_be_shown_on_the_displays():
    """1.4.2(a)(ii), 5.3: overtime counts up on the display until the forfeit, which shows the
    forfeit line itself. A forfeit_overtime the 4-digit module cannot draw ("-20:00") would leave
    the display frozen on its last drawable text while the clock keeps counting."""
    high_s = CLOCK_KEYS["forfeit_overtime"][2]
    sevenseg.encode(display_text(-high_s * NS_PER_S))  # the forfeit moment at the highest setting
    rules = rules_from_table({"forfeit_overtime": high_s})
    m = menus.open_menu(view(new_clock(rules), 0), rules.game_time_ms, rules.forfeit_overtime_ms)
    sevenseg.encode(display_text(m.low_s * NS_PER_S))  # the director's lowest editable overtime
    with pytest.raises(ConfigError, match="forfeit_overtime"):
        rules_from_table({"forfeit_overtime": "20:00"})
