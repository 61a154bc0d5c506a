"""The optional text display (issue 40): the pure renderer's every screen (firmware.text_render), names
as a display can show them, the `[text_display]` config, and the output that never delays a press
(firmware.text_output, hardware.textdisplay) on the runner with MockFactory pins (support.firmware_rig).
"""

from __future__ import annotations

import re
import string
import threading

import pytest

from rackside.game import slip as slips
from rackside.firmware import text_render
from rackside.game import table
from rackside.game.call import SIDE, Call, CallAck
from rackside.game.checkin import CheckIn, Pairing, Seat, Typed
from rackside.game.clock import NS_PER_S, End, LateStart, Neutralise, Press, new_clock, run, view
from rackside.game.slip import SlipKey, SlipOutcome, SlipSign
from rackside.firmware.text_render import MESSAGES, ascii_text, fit, screen
from rackside.hardware.textdisplay import SimTextDisplay, TextDisplayError, check_spec

S = NS_PER_S
PAIRING = Pairing(0, 3, (12, 31), 31, 7, ("Smith, Anna", "Jones, Bo"))


def seated(*events, clock=None):
    t, c = table.Table(), clock or new_clock()
    for e in [PAIRING, *events]:
        t, c = table.step(t, c, e)
    return t, c


def words(t, c, at=S, **kw) -> str:
    return " / ".join(screen(view(c, at), at, table=t, **kw))


# --- check-in ---------------------------------------------------------------------------------------


def test_before_the_game_the_table_the_names_and_what_to_type():
    t, c = seated()
    assert words(t, c, keypad=True) == "Table 7 - round 3 / Smith v Jones / Each player: type your number, then your own button"
    t, c = seated(Typed(1, "1"), Typed(2, "2"))
    assert words(t, c, keypad=True) == "Number 12: press your own button"


def test_the_first_press_asks_the_player_to_confirm_the_name_of_the_number_typed():
    t, c = seated(Typed(1, "3"), Typed(2, "1"))
    assert words(t, c, keypad=True, confirm=(2, 31)) == "Right: Jones #31? Press your button again. Not you: *"
    assert words(t, c, keypad=True, confirm=(2, 44)) == "Number 31: press your own button"  # other digits: not this one's
    t, c = seated(Typed(1, "4"), Typed(2, "4"))
    assert words(t, c, keypad=True, confirm=(1, 44)) == "Left: #44? Press your button again. Not you: *"  # not paired here


@pytest.fixture
def confirm_rig(monkeypatch, tmp_path):
    from support.firmware_rig import make_rig

    r = make_rig(monkeypatch, tmp_path, keypad=True, confirm_names=True)
    yield r
    r.close()


def test_with_a_text_display_a_check_in_counts_at_the_second_press_and_a_key_between_starts_again(confirm_rig):
    rig = confirm_rig
    rig.type_keys("12")
    rig.tap("left")
    assert rig.runner.table.seating.seated == (None, None)  # asked, not checked in
    assert rig.runner.frame(rig.now).confirm == (1, 12)
    rig.type_keys("3")  # another digit: the question is for 123 now, from the start
    rig.tap("left")
    assert rig.runner.table.seating.seated == (None, None) and rig.runner.frame(rig.now).confirm == (1, 123)
    rig.tap("left")
    assert rig.runner.table.seating.seated == (123, None) and rig.runner.frame(rig.now).confirm is None
    assert [i["input"] for i in rig.journal_inputs() if i["input"] != "key"] == ["checkin"]  # the first press is not journalled


def test_each_side_names_who_checked_in_and_who_starts():
    t, c = seated(CheckIn(1, 1, 12))
    assert "Left: Smith #12" in words(t, c, keypad=True) and "Right: type your number" in words(t, c, keypad=True)
    t, c = seated(CheckIn(1, 1, 12), CheckIn(2, 2, 31))
    assert words(t, c, keypad=True) == ("Jones starts: Smith, press your button / Table 7 - round 3 / Smith v Jones / "
                                        "Left: Smith #12 / Right: Jones #31")  # 2.2: what to do first


def test_without_a_keypad_the_pairing_still_says_who_starts():
    t, c = seated()
    assert words(t, c) == "Table 7 - round 3 / Smith v Jones / Jones starts: Smith, press your button"


def test_a_number_taken_at_the_other_side_is_said_in_words():
    t, c = seated(CheckIn(1, 1, 31), CheckIn(2, 2, 31))  # Smith typed Jones's number
    assert "Left: Jones #31" in words(t, c, keypad=True)  # Smith sees the wrong name on their side
    # said to both: the refused side is most often #31 itself, and the one to type again is the other
    assert "Right: #31 is in on the left too. Whoever is not #31: type your own number" in words(t, c, keypad=True)


def test_the_wrong_table_and_a_number_in_no_pairing():
    t, c = seated(CheckIn(1, 1, 44))
    assert "Left: #44 - looking for your table" in words(t, c, keypad=True)
    t, c = seated(CheckIn(1, 1, 44), Seat(2, 44, 14))
    assert "Left: wrong table: go to table 14" in words(t, c, keypad=True)
    t, c = seated(CheckIn(1, 2, 45), Seat(2, 45, None))
    assert "Right: not paired this round: call the director" in words(t, c, keypad=True)


def test_a_late_player_is_named():
    t, c = seated(CheckIn(1, 1, 12))
    c = run([LateStart(2 * S, (2,))], clock=c)
    assert words(t, c, 3 * S, keypad=True).startswith("Right is late: time running / Table 7 - round 3")


# --- the call, the game ------------------------------------------------------------------------------


def test_the_call_says_how_long_the_director_has_been_waited_for():
    t, c = seated(CheckIn(1, 1, 12), CheckIn(2, 2, 31))
    c = run([Press(3 * S, 1)], clock=c)  # Smith starts Jones's time
    t, c = table.step(t, c, Call(4 * S, 1, "call-1", SIDE))
    assert words(t, c, 46 * S) == "Director called: 0:42"
    t, c = table.step(t, c, CallAck(50 * S, "call-1"))
    assert words(t, c, 61 * S) == "Director is coming: 0:57"


def test_during_the_game_the_names_and_a_pause():
    t, c = seated(CheckIn(1, 1, 12), CheckIn(2, 2, 31))
    c = run([Press(3 * S, 1)], clock=c)
    assert words(t, c, 5 * S) == "Smith v Jones"
    c = run([Neutralise(6 * S)], clock=c)
    assert words(t, c, 7 * S) == "Smith v Jones / Clock paused"


def test_the_power_cut_banner_and_the_directors_menu():
    t, c = seated()
    assert words(t, c, restored=True).startswith("Power cut: game restored")
    assert words(t, c, menu=("LEn ", "25:00")) == "Director's menu: LEn 25:00"


# --- the slip, step by step ----------------------------------------------------------------------------


def ended_game():
    t, c = seated(CheckIn(1, 1, 12), CheckIn(2, 2, 31))
    c = run([Press(3 * S, 1), Press(60 * S, 2), End(70 * S)], clock=c)
    return t, c


def slip_after(text: str, *more):
    t, c = ended_game()
    s = slips.begin(view(c, c.since_ns))
    for i, k in enumerate(text):
        s = slips.apply(s, SlipKey(100 * S + i, k))
    for e in more:
        s = slips.apply(s, e)
    return t, c, s


def test_the_end_asks_for_the_scores():
    t, c = ended_game()
    at = c.since_ns
    assert words(t, c, at, keypad=True) == "Game over / Winner: type both scores"
    assert words(t, c, at) == "Game over / Fill in the result slip"


def test_the_slip_step_by_step():
    t, c, s = slip_after("412")
    at = c.since_ns
    assert words(t, c, at, slip=s, keypad=True) == "Type Smith's score, then # / Smith 412, Jones _"
    t, c, s = slip_after("412#388#")
    assert words(t, c, at, slip=s, keypad=True) == "Smith 412, Jones 388 / Smith wins by 24 / Each player: press your button to sign"
    t, c, s = slip_after("412#388#", SlipSign(200 * S, 1))
    assert words(t, c, at, slip=s, keypad=True) == "Smith 412, Jones 388 / Smith wins by 24 / Jones, press your button to sign"
    t, c, s = slip_after("412#388#", SlipSign(200 * S, 1), SlipSign(201 * S, 2))
    assert words(t, c, at, slip=s, keypad=True) == "Both signed: result sent / Smith 412, Jones 388 / Smith wins by 24"


def test_a_close_game_offers_the_recount():
    t, c, s = slip_after("400#390#")  # 5.5.1: a margin of 20 or less
    assert words(t, c, c.since_ns, slip=s, keypad=True) == "Smith 400, Jones 390 / Margin 10: recount? * yes, # no"


@pytest.mark.parametrize("outcome, why, said", [
    ("recorded", None, "Result recorded"),
    ("held", "the scores disagree with the clock",
     "Stay at your table / Held for the director: the scores disagree with the clock"),
    ("refused", "not this round's pairing", "Refused: not this round's pairing / Call the director: press your button"),
])
def test_the_consoles_answer(outcome, why, said):
    t, c, s = slip_after("412#388#", SlipSign(200 * S, 1), SlipSign(201 * S, 2), SlipOutcome(202 * S, outcome, why))
    assert words(t, c, c.since_ns, slip=s, keypad=True) == f"{said} / Smith 412, Jones 388 / Smith wins by 24"


def test_a_result_recorded_that_the_players_did_not_sign_here_is_shown_with_its_dispute():
    """The console recorded another result for this game (issue 36: a copied card's): the 4-digit
    displays show rEC, its scores and dISP; the text display says the same in words, the recorded
    scores by this clock's sides, and how to dispute (a player's own button calls the director)."""
    t, c, s = slip_after("412#388#", SlipSign(200 * S, 1), SlipSign(201 * S, 2),
                         SlipOutcome(202 * S, "refused", "another result is recorded", (10, 990)))
    assert slips.disputable(s)
    said = words(t, c, c.since_ns, slip=s, keypad=True)
    assert said.startswith("Recorded by the director / Smith 10, Jones 990 / ")
    assert "press your own button" in said and "412" not in said


@pytest.mark.parametrize("why", ["not this round's pairing", None])
def test_a_refused_slip_says_what_to_do_next_on_the_first_page(why):
    """A slip the console refused (no other result recorded): a player's own button calls the
    director (game.slip.disputable; the 4-digit displays show rEF, then dISP). The text display
    said "Refused: ... See the director" with no line saying how: it says which button, on the
    first page of the reference 20x4 display, its words from the renderer's one table."""
    t, c, s = slip_after("412#388#", SlipSign(200 * S, 1), SlipSign(201 * S, 2), SlipOutcome(202 * S, "refused", why))
    assert slips.disputable(s)
    at = c.since_ns
    lines = screen(view(c, at), at, table=t, slip=s, keypad=True)
    assert MESSAGES["call_director"] in lines
    first_page = " ".join(row.strip() for row in fit(lines, 20, 4, 0))
    assert first_page.startswith("Refused") and "press your button" in first_page, first_page


@pytest.mark.parametrize("why", ["scores disagree",
                                 "the director's setting: a signed slip waits for the scorekeeper's click",
                                 "the console has no clock result of the slip's game game-000001"])
def test_a_held_slip_says_to_stay_at_the_table_on_the_first_page(why):
    """A slip held for the director: the players wait at their table for the director (the player
    card's "Stay at the table"); the text display said only why it was held. The next step is the
    first row of the reference 20x4 display, before why: the console's reasons run to six rows."""
    t, c, s = slip_after("412#388#", SlipSign(200 * S, 1), SlipSign(201 * S, 2),
                         SlipOutcome(202 * S, "held", why))
    at = c.since_ns
    lines = screen(view(c, at), at, table=t, slip=s, keypad=True)
    first_page = [row.strip() for row in fit(lines, 20, 4, 0)]
    assert first_page[0] == MESSAGES["stay"], first_page  # why follows, on this page or the next


def load_scenes():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "tools" / "text_screens.py"
    spec = importlib.util.spec_from_file_location("text_screens", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_message_is_in_a_screenshot_of_docs_table_md_and_each_screenshot_is_current():
    """Each message of the renderer's table is reached by a scene of docs/tools/text_screens.py, whose
    picture docs/table.md shows; the picture's caption there is the scene's first page, as drawn."""
    from pathlib import Path

    tool = load_scenes()
    docs = (Path(__file__).resolve().parents[1] / "docs" / "table.md").read_text()
    reached = set()
    for name in tool.SCENES:
        texts, lines, shown = tool.scene(name)
        assert f"(screens/{name}.png)" in docs, f"docs/table.md does not show {name}.png"
        assert (Path(__file__).resolve().parents[1] / "docs" / "screens" / f"{name}.png").exists()
        assert " / ".join(row.rstrip() for row in shown if row.strip()) in docs, f"{name}: regenerate docs/tools/text_screens.py and table.md"
        for key, template in MESSAGES.items():
            pattern = re.compile("".join(re.escape(lit) + (".+?" if field else "") for lit, field, _, _ in string.Formatter().parse(template)))
            if any(pattern.fullmatch(line) for line in lines):
                reached.add(key)
    assert set(MESSAGES) - reached - tool.NOT_IN_A_SCENE == set()


def test_every_message_of_the_table_is_a_format_of_known_fields():
    fields = {"table", "round", "a", "b", "side", "typed", "who", "name", "number", "starter", "other", "goes", "waited",
              "sa", "sb", "margin", "winner", "pa", "pb", "why", "left", "right"}
    import string

    for key, text in MESSAGES.items():
        used = {f for _, f, _, _ in string.Formatter().parse(text) if f}
        assert used <= fields, key
    assert MESSAGES["recorded_by_director"] == "Recorded by the director"


# --- names and fitting ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name, shown", [
    ("Müller, Jörg", "Muller, Jorg"), ("Søren Ørsted", "Soren Orsted"), ("Straße", "Strasse"),
    ("Łukasz", "Lukasz"), ("Nguyễn", "Nguyen"), ("O’Brien", "O'Brien"), ("王", "?"), ("a\x00b\nc", "ab c"),
    ("", ""), (None, "None"), ("a\\b~c", "a/b-c"),
    ("Jose\u0301 Mu\u0308ller", "Jose Muller"),  # decomposed (NFD, as a Mac may save a TSH file): the marks dropped, not '?'
])
def test_names_become_ascii_and_never_raise(name, shown):
    assert ascii_text(name) == shown
    assert text_render.short_name("Ñúñez, José") == "Nunez"


def test_lines_are_wrapped_and_paged_on_the_clocks_grid():
    lines = ["Table 7 - round 3", "Smith v Jones", "Left: type your number, then your button"]
    first = fit(lines, 16, 2, 0)
    assert first == ("Table 7 - round ", "Smith v Jones   ") or len(first) == 2
    assert all(len(row) == 16 for row in first)
    shown = {fit(lines, 16, 2, k * text_render.PAGE_NS) for k in range(4)}
    assert len(shown) == text_render.pages(lines, 16, 2) > 1
    assert text_render.next_change_ns(lines, 16, 2, 5, ticking=False) == text_render.PAGE_NS
    assert text_render.next_change_ns(["Smith v Jones"], 20, 4, 5, ticking=False) is None


# --- the config and the output -------------------------------------------------------------------------


def test_the_config_table_is_checked_naming_the_key():
    assert check_spec(None) is None and check_spec({"driver": "none"}) is None
    assert check_spec({"driver": "hd44780", "cols": 16, "rows": 2}) == {"driver": "hd44780", "cols": 16, "rows": 2, "address": 0x27, "port": 1}
    assert check_spec({"driver": "ssd1306"})["address"] == 0x3C
    with pytest.raises(TextDisplayError, match=r"text_display.driver: 'lcd' \(allowed: hd44780, ssd1306, sim, none\)"):
        check_spec({"driver": "lcd"})
    with pytest.raises(TextDisplayError, match="text_display.rows = 9: allowed is a whole number from 1 to 8"):
        check_spec({"driver": "sim", "rows": 9})
    with pytest.raises(TextDisplayError, match="text_display.colour: unknown key"):
        check_spec({"driver": "sim", "colour": 1})


def test_a_size_the_drivers_panel_cannot_show_is_refused():
    """An HD44780 has 80 characters of display memory in at most 4 rows (20x4, 16x2, 40x2), an
    SSD1306 128x64 pixels of 6x12 cells (21x5): a bigger size would page its messages through rows
    nobody sees (an OLED's 6th to 8th row are off the panel) or fail every write (an HD44780's 5th)."""
    for ok in ({"cols": 20, "rows": 4}, {"cols": 16, "rows": 2}, {"cols": 40, "rows": 2}):
        assert check_spec({"driver": "hd44780", **ok})["rows"] == ok["rows"]
    with pytest.raises(TextDisplayError, match=r"text_display.rows = 8: an hd44780 shows at most 4 rows"):
        check_spec({"driver": "hd44780", "rows": 8})
    with pytest.raises(TextDisplayError, match=r"text_display: 40x4 is 160 characters: an hd44780 shows at most 80"):
        check_spec({"driver": "hd44780", "cols": 40, "rows": 4})
    with pytest.raises(TextDisplayError, match=r"text_display.rows = 6: an ssd1306 shows at most 5 rows"):
        check_spec({"driver": "ssd1306", "rows": 6})
    with pytest.raises(TextDisplayError, match=r"text_display.cols = 30: an ssd1306 shows at most 21 columns"):
        check_spec({"driver": "ssd1306", "cols": 30})
    assert check_spec({"driver": "sim", "cols": 40, "rows": 8})["rows"] == 8  # the simulator's window shows any


def test_a_hardware_display_that_fails_is_logged_and_never_raises(monkeypatch):
    from rackside.hardware import textdisplay

    d = textdisplay.open_text_display(check_spec({"driver": "hd44780"}))
    d.show(("x",) * 4)  # no RPLCD or no bus here: logged once, kept
    d.show(("y",) * 4)
    d.close()


class SlowDisplay(SimTextDisplay):
    """A display whose bus hangs until released: the clock must not wait for it."""

    def __init__(self) -> None:
        super().__init__(20, 4)
        self.release = threading.Event()

    def show(self, lines) -> None:
        self.release.wait(10)
        super().show(lines)


@pytest.fixture
def td_rig(monkeypatch, tmp_path):
    from rackside.firmware.text_output import TextDisplayOutput
    from support.firmware_rig import make_rig

    display = SlowDisplay()
    r = make_rig(monkeypatch, tmp_path, keypad=True, outputs=[TextDisplayOutput(display)])
    r.text_display = display
    yield r
    display.release.set()
    r.close()


def test_a_hung_display_never_delays_a_press(td_rig):
    from support.wait import wait

    rig = td_rig
    rig.tap("left")
    rig.advance_ms(500)
    assert rig.view().players[1].running  # the press went through while the display's bus hangs
    assert rig.text_display.shown == 0  # ... and no screen has been written yet
    rig.text_display.release.set()
    wait(lambda: "Left v Right" in rig.text_display.text)


# --- the real clock, as `rackside clock --simulate` assembles it ---------------------------------------


def live_clock(tmp_path, text: str):
    from support.hallclock import LiveClock

    config = tmp_path / "clock.toml"
    config.write_text('[keypad]\nenabled = true\n' + text)
    return LiveClock(config, tmp_path / "state")


def test_a_configured_text_display_is_one_more_output_and_the_simulator_draws_it(tmp_path):
    from rackside.game.messages import Request
    from rackside.firmware.text_output import TextDisplayOutput
    from rackside.hardware import terminal
    from support.wait import wait

    live = live_clock(tmp_path, '[text_display]\ndriver = "hd44780"\ncols = 16\nrows = 2\n')  # --simulate: the sim's, 16x2
    try:
        assert sum(isinstance(o, TextDisplayOutput) for o in live.clock.outputs) == 1
        d = live.clock.text_display
        assert (d.cols, d.rows) == (16, 2)
        live.runner.submit(Request(live.runner.clock_ns(), "pairing", {"round": 1, "numbers": [1, 9], "starter": 9, "table": 4,
                                                                        "names": ["Smith, Al", "Jones, Bea"]}, source="hall"))
        wait(lambda: "Table 4 - round 1" in d.text or "Smith v Jones" in d.text)
        drawn = terminal.screen(live.texts(), text=d.lines)
        assert "| " in drawn and any(row.rstrip() in drawn for row in d.lines)
    finally:
        live.close()


def test_without_one_the_clock_is_as_before(tmp_path):
    from rackside.firmware.text_output import TextDisplayOutput

    live = live_clock(tmp_path, "")
    try:
        assert live.clock.text_display is None and not any(isinstance(o, TextDisplayOutput) for o in live.clock.outputs)
        assert live.runner.frame(live.runner.clock_ns()).texts == ("25:00", "25:00")
    finally:
        live.close()


def test_a_pin_map_that_takes_the_i2c_bus_is_refused_with_a_text_display(tmp_path):
    from rackside.firmware.config import ConfigError, load_config

    path = tmp_path / "clock.toml"
    path.write_text('[text_display]\ndriver = "hd44780"\n\n[keypad]\nenabled = true\nrows = [2, 25, 13, 19]\n')
    with pytest.raises(ConfigError, match=r"BCM 2 is used twice: keypad.rows\[0\]|BCM 2 is used twice: .* and text_display \(SDA"):
        load_config(path)


def test_a_bad_text_display_table_stops_the_clock_with_one_line(tmp_path, capsys):
    from rackside.firmware.config import ConfigError, load_config

    path = tmp_path / "clock.toml"
    path.write_text('[text_display]\ndriver = "hd44780"\naddress = 300\n')
    with pytest.raises(ConfigError, match=r"clock.toml: text_display.address = 300: allowed is a whole number from 3 to 119"):
        load_config(path)


def test_a_display_that_raises_is_logged_and_the_next_screen_still_written(caplog):
    from support.wait import wait

    from rackside.firmware.text_output import TextDisplayOutput

    class Flaky(SimTextDisplay):
        fail = True

        def show(self, lines):
            if self.fail:
                self.fail = False
                raise OSError("I2C bus error")
            super().show(lines)

    d = Flaky(20, 4)
    out = TextDisplayOutput(d)
    out.start()
    try:
        t, c = seated()
        from rackside.firmware.outputs import Frame

        out.view(Frame(view(c, S), ("", ""), c, False, None, t, None, True), S)
        wait(lambda: out.outage.active)
        out.view(Frame(view(c, S), ("", ""), c, False, None, t, None, False), S)  # a new screen: written
        wait(lambda: d.shown == 1)
        assert "I2C bus error" in caplog.text
    finally:
        out.close()
