"""Long presses, pure: what each press means in each phase, and the moments they complete."""

from rackside.game.clock import Phase
from rackside.firmware.gestures import Action, Gestures

MS = 1_000_000
R, N, S, E = Phase.RUNNING, Phase.NEUTRALISED, Phase.SETUP, Phase.ENDED


def g():
    return Gestures(hold_ns=3000 * MS, chord_ns=400 * MS)


def test_while_running_every_press_acts_at_its_edge():
    x = g()
    assert x.press("left", 5 * MS, R) == [Action("press", 5 * MS, 1)]
    assert x.press("neutralise", 7 * MS, R) == [Action("neutralise", 7 * MS)]


def test_centre_held_while_running_neutralises_then_ends():
    x = g()
    x.press("neutralise", 0, R)
    assert x.deadline() == 3000 * MS
    assert x.tick(2999 * MS, N) == []
    assert x.tick(3000 * MS, N) == [Action("end", 3000 * MS)]
    assert x.release("neutralise", 3500 * MS) == []


def test_stopped_tap_acts_on_release_dated_at_its_edge():
    x = g()
    assert x.press("neutralise", 10 * MS, N) == []
    assert x.release("neutralise", 90 * MS) == [Action("neutralise", 10 * MS)]
    assert x.press("right", 200 * MS, S) == []
    assert x.release("right", 260 * MS) == [Action("press", 200 * MS, 2)]


def test_stopped_player_press_held_alone_acts_after_the_chord_window():
    x = g()
    x.press("left", 0, N)
    assert x.deadline() == 400 * MS
    assert x.tick(400 * MS, N) == [Action("press", 0, 1)]
    assert x.release("left", 5000 * MS) == []


def test_both_players_held_open_the_menu_and_their_presses_are_dropped():
    x = g()
    x.press("left", 0, N)
    x.press("right", 150 * MS, N)
    assert x.deadline() == 3150 * MS
    assert x.tick(3150 * MS, N) == [Action("menu", 3150 * MS)]
    assert x.release("left", 4000 * MS) == [] and x.release("right", 4000 * MS) == []


def test_a_chord_released_early_acts_as_two_presses_in_order():
    x = g()
    x.press("left", 0, N)
    x.press("right", 100 * MS, N)
    assert x.release("right", 900 * MS) == [Action("press", 0, 1), Action("press", 100 * MS, 2)]


def test_centre_held_before_or_after_a_game_opens_the_menu_and_during_one_ends_it():
    # Waiting for latecomers is before the game: the director marks arrivals through the menu, and
    # the same long press that opened it must not end the game and lose the lateness counted.
    for phase, kind in ((S, "menu"), (E, "menu"), (N, "end"), (Phase.LATE, "menu")):
        x = g()
        x.press("neutralise", 0, phase)
        assert x.tick(3000 * MS, phase) == [Action(kind, 3000 * MS)]


def test_centre_then_player_while_stopped_is_no_gesture():
    x = g()
    x.press("neutralise", 0, N)
    assert x.press("left", 50 * MS, N) == [Action("neutralise", 0), Action("press", 50 * MS, 1)]
