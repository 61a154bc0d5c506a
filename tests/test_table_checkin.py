"""Check-in at the table and the director's call (issue 27 items 2, 3 and 5), clock side.

The pure cores on values (game.checkin, game.call, composed in game.table), then the
runner on gpiozero's MockFactory pins with a fake clock (support.firmware_rig): keys as the keypad's
scanner delivers them (`game.messages.Key`), the buttons through their pins, the hall's commands
as the hall output submits them (`game.messages.Request`), the journal on a real GameStore; and a
power cut at each step, restored by a new runner on the same state directory.
"""

from __future__ import annotations

import json

import pytest

from rackside.game import checkin, render, table
from rackside.game.call import BUTTONS, KEYPAD, SIDE, Call, CallAck, CallResolve
from rackside.game.checkin import CheckIn, Pairing, Seat, Seating, Typed
from rackside.game.clock import NS_PER_MS, Arrive, LateStart, Phase, Press, new_clock, apply
from rackside.game.messages import Key, Request
from rackside.game.replay import fold
from rackside.game.journal import read_journal
from rackside.game.checkin import MAX_TABLE

from support.firmware_rig import make_rig

S = 1_000_000_000
MS = NS_PER_MS


# --- the pure cores ----------------------------------------------------------------------------


def test_offline_a_check_in_records_the_side_and_the_number():
    """2.3.1(b), 1.4.5: with no pairing (no TSH), the press with a number typed seats that number on
    that side, whichever way round the clock stands."""
    s = Seating()
    for k in "031":
        s = checkin.apply(s, Typed(1, k))
    assert s.typed == "31"  # a leading 0 is nothing: TSH numbers players from 1
    s = checkin.apply(s, CheckIn(2, 2, 31))
    assert s.seated == (None, 31) and s.typed == ""
    s = checkin.apply(s, CheckIn(3, 1, 12))
    assert s.seated == (12, 31) and checkin.starter_side(s) is None  # no pairing: no starter known


def test_the_starter_side_is_where_tsh_s_starter_sits_or_opposite_the_non_starter():
    """2.1(b)(i): the starter is TSH's; the clock marks the side the starter sits on, known as soon
    as either player checked in."""
    paired = checkin.apply(Seating(), Pairing(0, 3, (12, 31), 31, 7))
    assert paired.table == 7
    assert checkin.starter_side(checkin.apply(paired, CheckIn(1, 2, 31))) == 2
    non_starter_left = checkin.apply(paired, CheckIn(1, 1, 12))
    assert checkin.starter_side(non_starter_left) == 2
    assert checkin.refuses_start(non_starter_left, 2) and not checkin.refuses_start(non_starter_left, 1)  # 2.2


def test_a_number_not_in_the_pairing_is_not_seated_and_the_hall_says_where():
    paired = checkin.apply(Seating(), Pairing(0, 3, (12, 31), 31, 7))
    asked = checkin.apply(paired, CheckIn(1, 1, 44))
    assert asked.seated == (None, None) and asked.asked == (44, None)
    told = checkin.apply(asked, Seat(2, 44, 14))
    assert told.elsewhere == (14, None) and told.asked == (None, None) and not checkin.checked_in(told, 1)
    nowhere = checkin.apply(asked, Seat(2, 44, None))
    assert nowhere.unknown == (True, False)
    right_one = checkin.apply(told, CheckIn(3, 1, 12))  # then the right player sits down there
    assert right_one.seated == (12, None) and right_one.elsewhere == (None, None)


def test_a_check_in_made_offline_stands_when_the_pairing_comes_and_names_it():
    s = checkin.apply(checkin.apply(Seating(), CheckIn(1, 1, 12)), CheckIn(2, 2, 44))
    s = checkin.apply(s, Pairing(3, 3, (12, 31), 12))
    assert s.seated == (12, None) and s.asked == (None, 44)  # 44 is the hall's to place (it was published)
    assert checkin.starter_side(s) == 1


def test_the_same_number_on_both_sides_seats_it_once_and_the_second_is_refused_not_silently():
    """Issue 40: player 1 typed 9, their opponent's number; 9's own check-in is refused with a
    message on that side (USEd 9), never ignored, until the mistake is put right."""
    s = checkin.apply(Seating(), Pairing(0, 3, (1, 9), 1, 7))
    s = checkin.apply(s, CheckIn(1, 1, 9))  # #1 typed #9 by mistake
    s = checkin.apply(s, CheckIn(2, 2, 9))  # the real #9
    assert s.seated == (9, None) and s.refused == (None, 9) and checkin.conflict(s) == (2, 9)
    again = checkin.apply(s, CheckIn(3, 2, 9))  # typed again: refused again, still said
    assert again.refused == (None, 9)
    fixed = checkin.apply(s, CheckIn(4, 1, 1))  # #1 types their own number: the message goes
    assert fixed.seated == (1, None) and fixed.refused == (None, None) and checkin.conflict(fixed) is None
    assert checkin.apply(fixed, CheckIn(5, 2, 9)).seated == (1, 9)
    offline = checkin.apply(Seating(), CheckIn(1, 1, 12))
    assert checkin.apply(offline, CheckIn(2, 2, 12)).seated == (12, None)
    assert checkin.apply(offline, CheckIn(2, 2, 12)).refused == (None, 12)


def test_a_number_both_sides_claim_does_not_say_where_the_starter_sits():
    """Issue 40 (2.2): #1, TSH's starter, typed #9 on side 1, and #9's own check-in on side 2 was
    refused. The starter's side is not read from a number in conflict: it said side 2 (opposite the
    #9 on side 1), so the real #9's press, the non-starter starting the starter's time, was refused
    as the starter's own, and the starter's own press started #9's time."""
    s = checkin.apply(Seating(), Pairing(0, 3, (1, 9), 1, 7))
    s = checkin.apply(s, CheckIn(1, 1, 9))  # #1 typed #9 by mistake
    s = checkin.apply(s, CheckIn(2, 2, 9))  # the real #9: refused (USEd)
    assert checkin.starter_side(s) is None
    assert not checkin.refuses_start(s, 2) and not checkin.refuses_start(s, 1)
    fixed = checkin.apply(s, CheckIn(3, 1, 1))  # #1 types their own number: known again
    assert checkin.starter_side(fixed) == 1 and checkin.refuses_start(fixed, 1)


def test_a_checkpoint_written_before_refusals_were_kept_still_restores():
    t, _ = table.step(table.Table(), new_clock(), CheckIn(1, 1, 12))
    old = table.to_dict(t)
    del old["seating"]["refused"]
    assert table.from_dict(old) == t


@pytest.mark.parametrize("bad", [
    Pairing(0, 3, (12, 12), None), Pairing(0, 3, (12, 31), 5), Pairing(0, 0, (12, 31), None),
    CheckIn(0, 3, 12), CheckIn(0, 1, 0), CheckIn(0, 1, 10_000), Typed(0, "#"), Seat(0, 12, 0),
])
def test_inputs_that_can_never_be_valid_are_refused(bad):
    with pytest.raises(table.TableInputError):
        table.step(table.Table(), new_clock(), bad)


def test_a_check_in_on_a_late_started_side_is_that_player_s_arrival():
    """2.3.3(a)-(b): the director started the late player's side; their check-in is their arrival,
    assigned the time showing, and the clock is then back before the game (2.2 starts it)."""
    clock = apply(new_clock(), LateStart(0, (2,)))
    t, c = table.step(table.Table(), clock, CheckIn(90 * S, 2, 31))
    assert c.phase is Phase.SETUP and not c.absent[1] and c.late[1]
    assert c == apply(clock, Arrive(90 * S, 2))  # exactly the core's arrival
    assert t.seating.seated == (None, 31)
    both = apply(new_clock(), LateStart(0, (1, 2)))  # 2.3.2(b): the first of two absent players
    _, c = table.step(table.Table(), both, CheckIn(60 * S, 1, 12))
    assert c.phase is Phase.LATE and c.absent == (False, True)


def test_a_call_neutralises_a_running_clock_and_waits_for_the_director():
    """1.4.3: the director is called; both times stop until the game is restarted as ever."""
    clock = apply(apply(new_clock(), Press(0, 2)), Press(10 * S, 1))  # 2 runs since 10 s
    t, c = table.step(table.Table(), clock, Call(15 * S, 1, "call-1"))
    assert c.phase is Phase.NEUTRALISED and c.side == 2 and c.played_ns[1] == 5 * S
    assert t.calls.open.call == "call-1" and t.calls.open.player == 1
    with pytest.raises(table.TableInputError):
        table.step(t, c, Call(16 * S, None, "call-2"))  # one at a time
    with pytest.raises(table.TableInputError):
        table.step(t, c, CallAck(16 * S, "call-9"))  # not the open call
    t, c2 = table.step(t, c, CallAck(17 * S, "call-1"))
    assert t.calls.open.acked_ns == 17 * S and c2.phase is Phase.NEUTRALISED and c2.played_ns == c.played_ns
    with pytest.raises(table.TableInputError):
        table.step(t, c, CallResolve(18 * S, "call-1", " "))  # a reason is required
    t, _ = table.step(t, c, CallResolve(18 * S, "call-1", "word judged"))
    assert t.calls.open is None and t.calls.made == 1


@pytest.mark.parametrize("player, how", [(None, SIDE), (1, KEYPAD), (2, BUTTONS), (1, "elbow"), (None, "")])
def test_a_call_says_how_it_was_made_and_its_side_agrees(player, how):
    """`how`: `#` held alone (the keypad, no side), `#` held with a player's own button (that side),
    the three buttons' gesture (no side). A call whose side does not fit how it was made is refused."""
    with pytest.raises(table.TableInputError, match="made"):
        table.step(table.Table(), new_clock(), Call(S, player, "call-1", how))
    for player, how in [(None, KEYPAD), (2, SIDE), (None, BUTTONS), (None, None), (1, None)]:  # None: an older journal's
        t, _ = table.step(table.Table(), new_clock(), Call(S, player, "call-1", how))
        assert t.calls.open.player == player


def test_every_table_input_round_trips_through_a_journal_line():
    from rackside.game.journal import dumps, input_to_dict, parse_line

    for event in [Typed(1, "7"), Typed(1, "*"), CheckIn(2, 1, 12), Pairing(3, 4, (12, 31), None), Pairing(3, 4, (12, 31), 31, 9),
                  Seat(4, 44, 14), Seat(4, 44, None), Call(5, None, "call-1"), Call(5, 2, "call-2"), CallAck(6, "call-1"),
                  Call(5, None, "call-1", KEYPAD), Call(5, 2, "call-2", SIDE), Call(5, None, "call-3", BUTTONS),
                  CallResolve(7, "call-1", "ok")]:
        assert parse_line(dumps(input_to_dict(event))) == event
    assert input_to_dict(Call(5, None, "call-1")) == {"t_ns": 5, "input": "call", "call": "call-1"}  # as an older clock wrote it
    assert input_to_dict(Call(5, None, "call-1", KEYPAD)) == {"t_ns": 5, "input": "call", "call": "call-1", "how": "keypad"}
    with pytest.raises(Exception, match="how"):
        parse_line(dumps({"t_ns": 5, "input": "call", "call": "call-1", "how": "elbow"}))


def test_the_table_state_round_trips_and_a_damaged_one_is_refused_whole():
    t = table.Table()
    for e in [Pairing(1, 3, (12, 31), 31, 7), Typed(2, "4"), CheckIn(3, 2, 31), CheckIn(4, 1, 44), Seat(5, 44, 14), Call(6, 1, "call-1")]:
        t, _ = table.step(t, new_clock(), e)
    assert table.from_dict(json.loads(json.dumps(table.to_dict(t)))) == t
    broken = table.to_dict(t)
    broken["seating"]["seated"] = [1, "x"]
    with pytest.raises(ValueError):
        table.from_dict(broken)


# --- the runner: keys, buttons, the hall's commands ------------------------------------------------


@pytest.fixture
def kp_rig(monkeypatch, tmp_path):
    r = make_rig(monkeypatch, tmp_path, keypad=True)
    yield r
    r.close()


def type_number(rig, text: str) -> None:
    rig.type_keys(text)


def hall(rig, name: str, answers: list | None = None, **args) -> None:
    def reply(ok, why):
        if answers is not None:
            answers.append((ok, why))
    rig.runner.submit(Request(rig.now, name, args, source="hall", reply=reply))
    rig.pump()


def inputs(rig) -> list[str]:
    return [i["input"] for i in rig.journal_inputs()]


def seen_texts(rig, ms: int = 4000) -> set[tuple[str, str]]:
    seen = set()
    for _ in range(ms // 250):
        rig.advance_ms(250)
        seen.add(rig.texts())
    return seen


def test_typing_shows_the_digits_and_the_button_checks_the_player_in(kp_rig):
    rig = kp_rig
    type_number(rig, "12")
    assert rig.texts() == ("  12", "  12")  # both displays: whoever types sees it
    rig.tap("left")
    rig.advance_ms(500)
    assert rig.view().phase is Phase.SETUP  # the check-in press started nobody's time
    assert inputs(rig) == ["key", "key", "checkin"]
    assert rig.journal_inputs()[-1] == {**rig.journal_inputs()[-1], "input": "checkin", "player": 1, "number": 12}
    assert ("  12", "25:00") in seen_texts(rig) or any(t[0] == "  12" for t in seen_texts(rig))
    type_number(rig, "39*")  # * clears what was typed
    assert rig.texts() != ("  39", "  39") and inputs(rig)[-1] == "key"


def test_with_the_pairing_the_starter_is_marked_and_only_the_non_starter_starts_the_starter_s_time(kp_rig):
    """2.1(b)(i): TSH says 31 starts; 2.2: the non-starter (12, on the left) starts 31's time; 31's
    own press before the game starts nothing."""
    rig = kp_rig
    answers: list = []
    hall(rig, "pairing", answers, round=3, numbers=[12, 31], starter=31, table=7, command="c1")
    assert answers == [(True, "")]
    assert ("t  7", "t  7") in seen_texts(rig, 2500)  # the clock shows its table before the game
    type_number(rig, "31")
    rig.tap("right")
    type_number(rig, "12")
    rig.tap("left")
    assert any(t[1] == render.STARTER for t in seen_texts(rig))  # the starter's side (2.1)
    rig.tap("right")  # the starter's own press: not a start (2.2)
    rig.advance_ms(500)
    assert rig.view().phase is Phase.SETUP
    rig.tap("left")  # the non-starter's: the starter's time runs
    rig.advance_ms(500)
    v = rig.view()
    assert v.phase is Phase.RUNNING and v.players[1].running
    journal = rig.journal_inputs()
    assert journal[0] == {**journal[0], "input": "pairing", "round": 3, "numbers": [12, 31], "starter": 31, "source": "hall",
                          "command": "c1"}
    assert [i["input"] for i in journal if i["input"] != "key"] == ["pairing", "checkin", "checkin", "press"]


def test_at_the_wrong_table_the_clock_says_where_to_go_and_that_side_is_not_checked_in(kp_rig):
    rig = kp_rig
    hall(rig, "pairing", round=3, numbers=[12, 31], starter=31, table=7)
    type_number(rig, "44")
    rig.tap("left")
    assert any(t[0] == render.ASKED for t in seen_texts(rig, 2500))  # waiting for the hall
    answers: list = []
    hall(rig, "seat", answers, number=44, table=14)
    assert answers == [(True, "")]
    shown = {t[0] for t in seen_texts(rig)}
    assert {"tAbL", "  14"} <= shown  # tAbL 14, on that side
    assert not checkin.checked_in(rig.runner.table.seating, 1)
    assert inputs(rig)[-2:] == ["checkin", "seat"]


def test_a_number_already_checked_in_is_refused_on_the_clock_and_the_player_can_type_again(kp_rig):
    """Issue 40: #1 types #9 (their opponent) on the left; #9's own check-in on the right is refused
    with USEd 9 on that side (published like every check-in: the console shows the conflict), and
    the starter's press then starts nobody's time on the wrong side. #1 types 1: the message goes and
    #9 checks in."""
    rig = kp_rig
    hall(rig, "pairing", round=3, numbers=[1, 9], starter=9, table=7)
    type_number(rig, "9")
    rig.tap("left")  # #1, with #9 typed
    type_number(rig, "9")
    rig.tap("right")  # the real #9
    assert rig.runner.table.seating.seated == (9, None)
    shown = seen_texts(rig, 2500)
    assert {render.USED, "   9"} <= {t[1] for t in shown}  # USEd 9 on the right, in place of the time
    assert inputs(rig)[-1] == "checkin" and rig.journal_inputs()[-1]["number"] == 9
    type_number(rig, "1")
    rig.tap("left")  # #1 puts it right
    assert rig.runner.table.seating.refused == (None, None)
    assert render.USED not in {t[1] for t in seen_texts(rig, 2500)}
    type_number(rig, "9")
    rig.tap("right")
    assert rig.runner.table.seating.seated == (1, 9) and checkin.starter_side(rig.runner.table.seating) == 2


def test_the_keypad_call_neutralises_and_shows_until_the_director_resolves_it(kp_rig):
    """1.4.3: `#` held 1.5 s while player 1's time runs: the clock is neutralised, both displays
    say CALL, then SEEn once acknowledged, then the times again once resolved."""
    rig = kp_rig
    rig.tap("right")
    rig.advance_ms(3000)
    assert rig.view().players[0].running
    rig.runner.submit(Key(rig.now, "#", True))
    rig.advance_ms(1000)
    assert rig.view().phase is Phase.RUNNING  # not yet: a tap of # is no call
    rig.advance_ms(600)
    assert rig.view().phase is Phase.NEUTRALISED
    rig.runner.submit(Key(rig.now, "#", False))
    assert {render.CALL} <= {t[0] for t in seen_texts(rig)}
    answers: list = []
    hall(rig, "call_ack", answers, call="call-1", by="director")
    assert {render.CALL_SEEN} <= {t[1] for t in seen_texts(rig)}
    hall(rig, "call_resolve", answers, call="call-1", reason="word judged; play on", by="director")
    hall(rig, "call_resolve", answers, call="call-1", reason="again")
    assert answers[:2] == [(True, ""), (True, "")] and answers[2][0] is False and "not open" in answers[2][1]
    assert not {render.CALL, render.CALL_SEEN} & {t[0] for t in seen_texts(rig)}
    assert rig.view().phase is Phase.NEUTRALISED  # the game restarts as ever (4.1)
    journal = rig.journal_inputs()
    call = next(i for i in journal if i["input"] == "call")
    assert call["call"] == "call-1" and "player" not in call and call["how"] == "keypad"
    resolve = next(i for i in journal if i["input"] == "call_resolve")
    assert resolve["reason"] == "word judged; play on" and resolve["source"] == "hall" and resolve["by"] == "director"


def test_hash_held_with_a_players_button_calls_from_that_side(kp_rig):
    rig = kp_rig
    rig.tap("right")
    rig.advance_ms(2000)
    rig.runner.submit(Key(rig.now, "#", True))
    rig.pump()
    rig.tap("left")
    assert rig.view().phase is Phase.NEUTRALISED
    call = next(i for i in rig.journal_inputs() if i["input"] == "call")
    assert call["player"] == 1 and call["how"] == "side"


def test_without_a_keypad_the_three_buttons_call_the_director(rig):
    """Both player buttons held, then the centre: the call (firmware.gestures). While a game runs
    the presses have acted at their edges; the call neutralises (1.4.3)."""
    rig.tap("right")
    rig.advance_ms(2000)
    rig.down("left").pump()
    rig.after_ms(30).down("right").pump()
    rig.after_ms(200).down("neutralise").pump()
    rig.advance_ms(100)
    for b in ("left", "right", "neutralise"):
        rig.up(b).pump()
    rig.advance_ms(3500)  # the releases do nothing, and no long press completes
    assert rig.view().phase is Phase.NEUTRALISED and rig.runner.menu is None
    assert inputs(rig)[-1] == "call"
    call = rig.journal_inputs()[-1]
    assert call["how"] == "buttons" and "player" not in call
    assert render.CALL in {t[0] for t in seen_texts(rig)}


def test_before_the_game_the_three_buttons_call_and_start_nobody(rig):
    rig.down("left").pump()
    rig.after_ms(30).down("right").pump()
    rig.after_ms(200).down("neutralise").pump()
    rig.advance_ms(4000)  # past the menu's hold: the call pre-empted it
    for b in ("left", "right", "neutralise"):
        rig.up(b).pump()
    rig.advance_ms(500)
    assert rig.view().phase is Phase.SETUP and rig.runner.menu is None
    assert inputs(rig) == ["call"]


def test_a_clock_without_a_keypad_shows_nothing_new_for_a_pairing(rig):
    """A clock with no keypad works as today: the pairing is journalled (the hall sent it), the
    displays show the times, and the first press starts the game (2.2)."""
    hall(rig, "pairing", round=3, numbers=[12, 31], starter=31, table=7)
    assert seen_texts(rig, 2000) == {("25:00", "25:00")}
    rig.tap("right")
    rig.advance_ms(500)
    assert rig.view().players[0].running


def test_a_pairing_during_a_game_is_for_the_next_one(kp_rig):
    rig = kp_rig
    rig.tap("right")
    rig.advance_ms(500)
    answers: list = []
    hall(rig, "pairing", answers, round=4, numbers=[5, 6], starter=5, table=7)
    assert answers == [(True, "")] and "pairing" not in inputs(rig)
    hall(rig, "end")
    hall(rig, "new_game", game_time_ms=25 * 60_000)
    assert inputs(rig) == ["pairing"] and rig.runner.table.seating.numbers == (5, 6)


# --- a power cut at each step --------------------------------------------------------------------


def power_cut(rig, monkeypatch, tmp_path, **kw):
    rig.board.close()
    rig.store.close()  # no clean shutdown: the runner never closes
    return make_rig(monkeypatch, tmp_path, keypad=True, **kw)


@pytest.mark.parametrize("step", ["typing", "checked in", "asked the hall", "at another table", "starter marked"])
def test_a_power_cut_during_check_in_comes_back_to_the_same_step(monkeypatch, tmp_path, step):
    rig = make_rig(monkeypatch, tmp_path, keypad=True)
    hall(rig, "pairing", round=3, numbers=[12, 31], starter=31, table=7)
    if step == "typing":
        type_number(rig, "3")
    else:
        type_number(rig, {"checked in": "12", "starter marked": "31"}.get(step, "44"))
        rig.tap("right")
        if step == "at another table":
            hall(rig, "seat", number=44, table=14)
    before = rig.runner.table
    again = power_cut(rig, monkeypatch, tmp_path)
    try:
        assert again.runner.table == before and again.view().phase is Phase.SETUP
        if step == "typing":
            type_number(again, "1")  # the digits typed before the cut are still there
            again.tap("left")
            assert again.runner.table.seating.seated == (31, None)
        elif step == "starter marked":
            again.tap("right")  # still the starter's side: no start (2.2)
            again.advance_ms(500)
            assert again.view().phase is Phase.SETUP
        elif step == "at another table":
            assert {"tAbL", "  14"} <= {t[1] for t in seen_texts(again, 12_000)}
    finally:
        again.close()


@pytest.mark.parametrize("step", ["called", "acknowledged"])
def test_a_power_cut_with_a_call_open_comes_back_with_the_call(monkeypatch, tmp_path, step):
    """A running game, called, a checkpoint taken (the restore reads only what follows it): the
    call is still open after the cut, and the director's answer still applies."""
    rig = make_rig(monkeypatch, tmp_path, keypad=True)
    rig.tap("right")
    rig.advance_ms(2000)
    rig.runner.submit(Key(rig.now, "#", True))
    rig.advance_ms(1600)
    rig.runner.submit(Key(rig.now, "#", False))
    if step == "acknowledged":
        hall(rig, "call_ack", call="call-1")
    rig.tap("left")  # play restarted under the call (5.1.3): the clock runs, checkpoints follow
    rig.advance_ms(3000)
    checkpoint = json.loads((tmp_path / "state" / "checkpoint.json").read_text())
    assert checkpoint["table_state"]["calls"]["open"]["call"] == "call-1"
    before = rig.runner.table
    again = power_cut(rig, monkeypatch, tmp_path)
    try:
        assert again.runner.table == before and again.view().phase is Phase.NEUTRALISED
        answers: list = []
        hall(again, "call_resolve", answers, call="call-1", reason="resolved after the cut")
        assert answers == [(True, "")] and again.runner.table.calls.open is None
    finally:
        again.close()


def test_the_replay_folds_check_ins_and_calls_with_the_clock(kp_rig, capsys):
    from argparse import Namespace

    from rackside.game import replay

    rig = kp_rig
    hall(rig, "pairing", round=3, numbers=[12, 31], starter=31, table=7)
    type_number(rig, "12")
    rig.tap("left")
    type_number(rig, "31")
    rig.tap("right")
    rig.tap("left")
    rig.advance_ms(2000)
    rig.runner.submit(Key(rig.now, "#", True))
    rig.advance_ms(1600)
    hall(rig, "call_ack", call="call-1")
    hall(rig, "call_resolve", call="call-1", reason="ok", by="td")
    folded = fold(read_journal(rig.store.journal_path))
    assert folded.table == rig.runner.table and folded.clock == rig.runner.clock and not folded.problems
    assert replay.run(Namespace(file=rig.store.journal_path, json=False)) == 0
    out = capsys.readouterr().out
    for text in ("pairing r3 #12-#31, starts #31", "checkin 1: #12", "checkin 2: #31", "call-1", "call-1 acknowledged",
                 "call-1 resolved", "(hall, by td, reason: ok)"):
        assert text in out, text
    assert replay.run(Namespace(file=rig.store.journal_path, json=True)) == 0
    summary = json.loads(capsys.readouterr().out)["table"]
    assert summary["seated"] == [12, 31] and summary["starter_side"] == 2 and summary["calls"] == 1 and summary["open_call"] is None


def test_the_call_gesture_is_both_player_buttons_held_then_the_centre_in_any_phase():
    """firmware.gestures: it pre-empts the menu's chord (no menu, the two presses dropped) and its
    releases do nothing; one player's button and the centre stay what they were (both act)."""
    from rackside.firmware.gestures import Action, Gestures

    for phase in (Phase.SETUP, Phase.NEUTRALISED, Phase.ENDED):
        g = Gestures(hold_ns=3000 * MS, chord_ns=400 * MS)
        assert g.press("left", 0, phase) == [] and g.press("right", 100 * MS, phase) == []
        assert g.press("neutralise", 300 * MS, phase) == [Action("call", 300 * MS)]
        assert g.deadline() is None and g.tick(5000 * MS, phase) == []
        assert [g.release(b, 6000 * MS) for b in ("left", "right", "neutralise")] == [[], [], []]
    g = Gestures(hold_ns=3000 * MS, chord_ns=400 * MS)
    assert g.press("left", 0, Phase.NEUTRALISED) == []
    assert g.press("neutralise", 100 * MS, Phase.NEUTRALISED) == [Action("press", 0, 1), Action("neutralise", 100 * MS)]


def test_the_simulators_c_is_the_call(rig):
    from rackside.game.messages import Command

    rig.tap("right")
    rig.runner.submit(Command(rig.now, "call"))
    rig.pump()
    assert rig.view().phase is Phase.NEUTRALISED and inputs(rig)[-1] == "call"
    rig.runner.submit(Command(rig.now, "call"))  # one call at a time: the second changes nothing
    rig.pump()
    assert inputs(rig).count("call") == 1


def test_hash_held_as_the_directors_menu_opens_makes_no_call(kp_rig):
    from rackside.game.messages import Command

    rig = kp_rig
    rig.runner.submit(Key(rig.now, "#", True))
    rig.pump()
    rig.runner.submit(Command(rig.now, "menu"))
    rig.pump()
    rig.runner.submit(Key(rig.now, "#", False))  # released in the menu: the menu's, not the call's
    rig.advance_ms(3000)
    assert "call" not in inputs(rig) and rig.runner.menu is not None


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_T = st.integers(0, 10**12)
_NUMBER = st.integers(-1, 10_001)
_INPUTS = st.one_of(
    st.builds(Typed, _T, st.sampled_from([*"0123456789*#A"])),
    st.builds(CheckIn, _T, st.integers(0, 3), _NUMBER),
    st.builds(Pairing, _T, st.integers(0, 1001), st.tuples(_NUMBER, _NUMBER), st.one_of(st.none(), _NUMBER),
              st.one_of(st.none(), st.integers(0, 1000))),
    st.builds(Seat, _T, _NUMBER, st.one_of(st.none(), st.integers(0, 1000))),
    st.builds(Call, _T, st.sampled_from([None, 1, 2, 3]), st.sampled_from(["call-1", "call-2", "call-x"])),
    st.builds(CallAck, _T, st.sampled_from(["call-1", "call-2", "bad"])),
    st.builds(CallResolve, _T, st.sampled_from(["call-1", "call-2"]), st.sampled_from(["", "ok", "x" * 201])),
    st.builds(Press, _T, st.integers(1, 2)),
    st.builds(LateStart, _T, st.sampled_from([(1,), (2,), (1, 2)])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_INPUTS, max_size=25))
def test_no_sequence_of_table_inputs_breaks_the_cores_and_every_state_round_trips(events):
    """Whatever the order and the values: an input applies or is refused with TableInputError (the
    clock core's own never raise here: times going back are dated at the last input, as the runner
    does), and every table state survives the checkpoint's JSON."""
    t, c = table.Table(), new_clock()
    for e in sorted(events, key=lambda e: e.t_ns):
        try:
            if table.is_table_input(e):
                t, c = table.step(t, c, e)
            else:
                c = apply(c, e)
        except table.TableInputError:
            continue
        assert table.from_dict(json.loads(json.dumps(table.to_dict(t)))) == t
        render.texts(view_of(c), c.since_ns or 0, table=t, keypad=True)


def view_of(c):
    from rackside.game.clock import view

    return view(c, c.since_ns or 0)


def test_the_hall_s_table_commands_apply_while_the_directors_menu_is_open(kp_rig):
    """A pairing refused because a director was in the clock's menu would never come again (the
    console sends it when the pairings are known and when the clock comes online)."""
    from rackside.game.messages import Command

    rig = kp_rig
    rig.runner.submit(Command(rig.now, "menu"))
    rig.pump()
    answers: list = []
    hall(rig, "pairing", answers, round=3, numbers=[12, 31], starter=31, table=7)
    assert answers == [(True, "")] and rig.runner.menu is not None and inputs(rig) == ["pairing"]


def test_a_late_player_s_check_in_at_the_clock_is_their_arrival(kp_rig):
    """2.3.3(a)-(b): the director starts the absent player's side at the scheduled start; that
    player's check-in is their arrival, assigned the time showing, in one journal line; then the
    non-starter starts the starter's time as usual (2.2)."""
    rig = kp_rig
    hall(rig, "pairing", round=3, numbers=[12, 31], starter=12, table=7)
    type_number(rig, "12")
    rig.tap("left")
    hall(rig, "late_start", players=[2])
    rig.advance_ms(90_000)
    assert rig.view().phase is Phase.LATE and rig.view().players[1].absent
    type_number(rig, "31")
    rig.tap("right")
    v = rig.view()
    assert v.phase is Phase.SETUP and not v.players[1].absent and 23 * 60 * S < v.players[1].remaining_ns < 24 * 60 * S
    assert [i["input"] for i in rig.journal_inputs() if i["input"] != "key"] == ["pairing", "checkin", "late_start", "checkin"]
    rig.tap("right")  # 31, the non-starter, starts 12's time (2.2)
    rig.advance_ms(500)
    assert rig.view().players[0].running


def test_a_tap_of_hash_is_no_call_and_is_left_to_other_flows(kp_rig):
    rig = kp_rig
    rig.runner.submit(Key(rig.now, "#", True))
    rig.after_ms(200)
    rig.runner.submit(Key(rig.now, "#", False))
    rig.advance_ms(3000)
    assert "call" not in inputs(rig) and rig.runner.keys_unused == 1  # the release of a tap: unused here


def test_a_pairing_s_table_is_checked_once_by_the_core(kp_rig):
    """The pairing's table number (the hall's) is the core's to check (game.checkin): refused
    with its line, nothing journalled; a good one is taken."""
    answers: list = []
    hall(kp_rig, "pairing", answers, round=1, numbers=[12, 31], starter=31, table=MAX_TABLE + 1)
    hall(kp_rig, "pairing", answers, round=1, numbers=[12, 31], starter=31, table=7)
    assert answers[0] == (False, f"a table is a whole number from 1 to {MAX_TABLE}, got {MAX_TABLE + 1}")
    assert answers[1] == (True, "") and kp_rig.runner.table.seating.table == 7
    assert inputs(kp_rig).count("pairing") == 1
