"""Defects found in a review of the table clock, each pinned by the test that first failed."""

import pytest

from rackside.firmware import menu as menus
from rackside.firmware.clock import NS_PER_S, Arrive, Ending, Forfeit, LateStart, Phase, Rules, apply, display_text, new_clock, view
from rackside.firmware.config import CLOCK_KEYS, ConfigError, rules_from_table
from rackside.hardware import sevenseg

MIN = 60 * NS_PER_S


def test_menu_offers_the_optional_forfeit_of_a_late_player_while_the_opponent_is_still_absent():
    """2.3.2(b), 2.3.4: both absent; the first arrives with 13:00 assigned (under 15:00) and may
    elect to forfeit. The display shows `oPt` for them, so the director's LAtE item must offer it
    beside the other player's arrival."""
    rules = Rules()
    c = apply(new_clock(rules), LateStart(0, (1, 2)))
    c = apply(c, Arrive(12 * MIN, 1))
    v = view(c, 12 * MIN)
    assert v.phase is Phase.LATE and v.players[0].may_forfeit
    m = menus.open_menu(v, rules.game_time_ms, rules.forfeit_overtime_ms)
    late = next(i for i in m.items if i.label == "LAtE")
    assert ("For1", ("forfeit", 1)) in late.options
    assert ("Arr2", ("arrive", 2)) in late.options
    c = apply(c, Forfeit(12 * MIN, 1))
    v = view(c, 12 * MIN)
    assert v.ending is Ending.OPTIONAL_FORFEIT and v.winner_by_forfeit() == 2 and v.lateness_margin == 75


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


def test_clock_without_a_gpio_back_end_says_so_in_one_line_instead_of_a_traceback(tmp_path, monkeypatch, capsys):
    """`rackside clock` on a laptop (no pin back-end) must fail with a clear message pointing at
    --simulate, not a gpiozero traceback."""
    import gpiozero

    from rackside import cli as rackside_cli

    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no-such-back-end")
    monkeypatch.setattr(gpiozero.Device, "pin_factory", None)
    code = rackside_cli.main(["clock", "--state-dir", str(tmp_path / "state")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("rackside clock: ") and "--simulate" in err
