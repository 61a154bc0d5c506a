"""The director's menu, pure: navigation, editing, effects, and texts a 7-segment module can show."""

import pytest

from rackside.firmware import menu as menus
from rackside.game.clock import LateStart, Arrive, Ending, Forfeit, NS_PER_S, Neutralise, Phase, Press, Rules, apply, new_clock, view
from rackside.firmware.config import rules_from_table
from rackside.hardware import sevenseg

RULES = Rules()
GAME_MS = RULES.game_time_ms


def neutralised_view(t=10 * NS_PER_S):
    c = apply(new_clock(RULES), Press(0, 2))
    c = apply(c, Neutralise(t))
    return view(c, t)


def walk(m, v, *buttons):
    effects = []
    for b in buttons:
        m, e = menus.press(m, b, v, GAME_MS)
        effects += e
    return m, effects


def test_items_mid_game_and_their_labels():
    v = neutralised_view()
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    assert [i.label for i in m.items] == ["P1", "P2", "LEn", "rSEt", "donE"]
    assert menus.texts(m, v, 0, GAME_MS) == ("P1", "24:50")


def test_navigation_stops_at_both_ends():
    """Issue 10: the menu does not wrap past its ends."""
    v = neutralised_view()
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    m, _ = walk(m, v, "left")
    assert m.item.label == "P1"
    m, _ = walk(m, v, *["right"] * 10)
    assert m.item.label == "donE"
    m, _ = walk(m, v, "left")
    assert m.item.label == "rSEt"


def test_options_and_yes_no_stop_at_their_ends():
    c = new_clock(RULES)
    v = view(apply(c, LateStart(0, (1, 2))), 0)
    m = menus.open_menu(view(c, 0), GAME_MS, RULES.forfeit_overtime_ms)
    m, _ = walk(m, v, "right", "right", "neutralise")  # LAtE: P1, P2, both
    assert menus.texts(m, v, 0, GAME_MS) == ("LAtE", "P1")
    m, _ = walk(m, v, "left")
    assert menus.texts(m, v, 0, GAME_MS) == ("LAtE", "P1")
    m, _ = walk(m, v, "right", "right", "right", "right")
    assert menus.texts(m, v, 0, GAME_MS) == ("LAtE", "both")
    m = menus.open_menu(neutralised_view(), GAME_MS, RULES.forfeit_overtime_ms)
    m, _ = walk(m, v, *["right"] * 3, "neutralise")  # rSEt: yES/no, "no" first
    assert menus.texts(m, v, 0, GAME_MS) == ("rSEt", "no")
    m, _ = walk(m, v, "right")
    assert menus.texts(m, v, 0, GAME_MS) == ("rSEt", "no")
    m, _ = walk(m, v, "left", "left")
    assert menus.texts(m, v, 0, GAME_MS) == ("rSEt", "yES")


def test_key_help_says_what_each_button_does_in_every_mode():
    """Issue 10: the simulator's key line, while the menu is open, comes from here."""
    v = neutralised_view()
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    assert menus.key_help(m) == {"left": "(first item)", "neutralise": "adjust P1's time", "right": "next item"}
    m, _ = walk(m, v, "right")
    assert menus.key_help(m)["left"] == "previous item"
    m, _ = walk(m, v, "neutralise")
    assert menus.key_help(m) == {"left": "1 minute less", "neutralise": "to the seconds", "right": "1 minute more"}
    m, _ = walk(m, v, "neutralise")
    assert menus.key_help(m) == {"left": "1 second less", "neutralise": "set P2's time", "right": "1 second more"}
    m, _ = walk(m, v, "neutralise", "right", "neutralise", "neutralise", "neutralise")  # LEn: minutes, seconds, confirm
    assert m.mode == "confirm"
    assert menus.key_help(m) == {"left": "yES", "neutralise": "confirm no", "right": "no"}
    m, _ = walk(m, v, "neutralise", "right", "right")
    assert m.item.label == "donE" and menus.key_help(m)["neutralise"] == "back to the clock"
    assert menus.key_help(m)["right"] == "(last item)"


def test_adjust_minutes_then_seconds_into_overtime():
    v = neutralised_view()
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    m, _ = walk(m, v, "neutralise")  # edit P1: 24:50
    m, _ = walk(m, v, *["left"] * 25)  # 24:50 - 25 min = -0:10
    assert menus.texts(m, v, 0, GAME_MS) == ("P1", "-0:10")
    assert menus.texts(m, v, 600_000_000, GAME_MS) == ("P1", "  :10")  # the minutes blink
    m, _ = walk(m, v, "neutralise", "right", "right")
    assert menus.texts(m, v, 600_000_000, GAME_MS) == ("P1", "-0:  ")  # now the seconds blink
    m, effects = walk(m, v, "neutralise")
    assert effects == [("adjust", 1, -8000)]
    assert m.mode == "list"


def test_confirming_the_shown_time_unchanged_adjusts_nothing():
    # 24:49.5 remaining shows 24:50 (rounded up): setting 24:50 would give half a second back
    c = apply(new_clock(RULES), Press(0, 2))
    t = 10 * NS_PER_S + NS_PER_S // 2
    v = view(apply(c, Neutralise(t)), t)
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    m, effects = walk(m, v, "neutralise", "neutralise", "neutralise")  # edit P1, keep 24:50
    assert effects == [] and m.mode == "list"
    m, effects = walk(m, v, "neutralise", "neutralise", "right", "neutralise")  # 24:51: a change
    assert effects == [("adjust", 1, (24 * 60 + 51) * 1000)]


def test_adjust_is_clamped_inside_the_forfeit_line_and_99_59():
    v = neutralised_view()
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    m, _ = walk(m, v, "neutralise", *["left"] * 60)
    assert m.value_s == -599
    m, _ = walk(m, v, *["right"] * 200)
    assert m.value_s == 99 * 60 + 59


def test_late_options_before_the_game_and_while_waiting():
    c = new_clock(RULES)
    v = view(c, 0)
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    assert [i.label for i in m.items] == ["P1", "P2", "LAtE", "LEn", "rSEt", "donE"]
    m, effects = walk(m, v, "right", "right", "neutralise", "right", "right", "neutralise")
    assert effects == [("late_start", (1, 2)), ("exit",)]
    c = apply(c, LateStart(0, (1, 2)))
    v = view(c, 5 * NS_PER_S)
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    m, _ = walk(m, v, "right", "right", "neutralise")
    assert menus.texts(m, v, 0, GAME_MS) == ("LAtE", "Arr1")
    m, effects = walk(m, v, "right", "neutralise")
    assert effects == [("arrive", 2), ("exit",)]


def test_optional_forfeit_offered_to_a_very_late_player():
    c = apply(new_clock(RULES), LateStart(0, (1,)))
    c = apply(c, Arrive(11 * 60 * NS_PER_S, 1))  # 14:00 left: may forfeit (2.3.4)
    v = view(c, 11 * 60 * NS_PER_S)
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    late = next(i for i in m.items if i.label == "LAtE")
    assert [text for text, _ in late.options] == ["P1", "P2", "both", "For1"]


def test_new_game_needs_a_yes():
    v = neutralised_view()
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    m, effects = walk(m, v, "right", "right", "right", "neutralise")  # rSEt
    assert menus.texts(m, v, 0, GAME_MS) == ("rSEt", "no")
    m, effects = walk(m, v, "neutralise")
    assert effects == [] and m.mode == "list"
    m, effects = walk(m, v, "neutralise", "left", "neutralise")  # left: yES
    assert effects == [("new_game", GAME_MS), ("exit",)]


def test_game_length_then_confirm():
    v = neutralised_view()
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    m, _ = walk(m, v, "right", "right", "neutralise", *["left"] * 30)  # LEn, down to the 1:00 floor
    assert m.value_s == 60
    m, effects = walk(m, v, "neutralise", "neutralise", "left", "neutralise")
    assert effects == [("new_game", 60_000), ("exit",)]


def test_done_exits():
    v = neutralised_view()
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    _, effects = walk(m, v, *["right"] * len(m.items), "neutralise")
    assert effects == [("exit",)]


@pytest.mark.parametrize("t", [0, 600_000_000])
def test_every_menu_text_is_drawable_on_the_module(t):
    c = new_clock(RULES)
    v = view(c, 0)
    m = menus.open_menu(v, GAME_MS, RULES.forfeit_overtime_ms)
    seen = set()
    for path in (["right"] * k + ["neutralise"] for k in range(len(m.items))):
        mm = m
        for b in path:
            mm, _ = menus.press(mm, b, v, GAME_MS)
            for side in menus.texts(mm, v, t, GAME_MS):
                seen.add(side)
        for b in ["right", "right", "left"]:
            mm, _ = menus.press(mm, b, v, GAME_MS) if mm.mode != "list" else (mm, [])
            seen.update(menus.texts(mm, v, t, GAME_MS))
    for text in seen:
        sevenseg.encode(text)  # raises if a 4-digit module could not show it
    assert {"P1", "LAtE", "both", "LEn", "rSEt", "yES", "no", "donE"} <= seen


def test_menu_offers_the_optional_forfeit_of_a_late_player_while_the_opponent_is_still_absent():
    """2.3.2(b), 2.3.4: both absent; the first arrives with 13:00 assigned (under 15:00) and may
    elect to forfeit. The display shows `oPt` for them, so the director's LAtE item must offer it
    beside the other player's arrival."""
    rules = Rules()
    c = apply(new_clock(rules), LateStart(0, (1, 2)))
    c = apply(c, Arrive(12 * 60 * NS_PER_S, 1))
    v = view(c, 12 * 60 * NS_PER_S)
    assert v.phase is Phase.LATE and v.players[0].may_forfeit
    m = menus.open_menu(v, rules.game_time_ms, rules.forfeit_overtime_ms)
    late = next(i for i in m.items if i.label == "LAtE")
    assert ("For1", ("forfeit", 1)) in late.options
    assert ("Arr2", ("arrive", 2)) in late.options
    c = apply(c, Forfeit(12 * 60 * NS_PER_S, 1))
    v = view(c, 12 * 60 * NS_PER_S)
    assert v.ending is Ending.OPTIONAL_FORFEIT and v.winner_by_forfeit() == 2 and v.lateness_margin == 75


def test_the_blinking_minutes_of_an_overtime_past_ten_minutes_can_be_shown():
    """With forfeit_overtime above 10:00 the director can edit an overtime such as -15:00; while
    the minutes blink off, the right display must still be drawable (the "-1" shares one digit,
    so two blank digits stand for it, as for "-9")."""
    rules = rules_from_table({"forfeit_overtime": "19:59"})
    v = view(new_clock(rules), 0)
    m = menus.open_menu(v, rules.game_time_ms, rules.forfeit_overtime_ms)
    m, _ = menus.press(m, "neutralise", v, rules.game_time_ms)  # P1: the minutes blink
    for _ in range(40):  # 25:00 down to -15:00, a minute at a time
        m, _ = menus.press(m, "left", v, rules.game_time_ms)
    assert m.mode == "minutes" and m.value_s == -15 * 60
    blink_off = menus.BLINK_NS  # the second half of the first second
    for t in (0, blink_off):
        sevenseg.encode(menus.texts(m, v, t, rules.game_time_ms)[1])
    assert menus.texts(m, v, blink_off, rules.game_time_ms)[1] == "  :00"
