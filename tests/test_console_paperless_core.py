"""The pure parts of the paperless table at the console (issue 27): check-in against the round's
pairings (2.3.1(b), 1.4.5, 2.1), the absent sides at the start (2.3.2(a), 2.3.3(a)), the calls' queue,
and whether a signed slip agrees (5.4.1, 5.3). The end-to-end tests are test_console_paperless*.py."""

from __future__ import annotations

import pytest

from rackside.hall.console.state import checkin
from rackside.hall.console.tableside import incidents, signedslips
from rackside.hall.console.state.hallstate import Table


def seat(table, numbers, names, division="A", starter=None, round_=1):
    return {"table": table, "division": division, "round": round_, "numbers": list(numbers), "names": list(names),
            "starter": starter, "label": "", "board": table, "tsh_table": ""}


SEATS = {1: seat(1, (1, 2), ("Ann", "Bob"), starter=1), 2: seat(2, (3, 4), ("Cy", "Di")),
         3: seat(3, (1, 2), ("Eve", "Flo"), division="B")}


def event(game="game-000001", seq=1, **kw):
    return {"kind": "input", "game": game, "seq": seq, "t_ns": seq, "input": "checkin", "at": None, **kw}


def test_a_number_is_looked_for_in_the_tables_own_division_tsh_numbers_are_a_divisions_own():
    c = checkin.CheckIns()
    # player 1 of division B at division A's table 2: division A's player 1 plays at table 1
    assert c.check_in(2, event(player=1, number=1), SEATS[2], SEATS) == {"cmd": "seat", "number": 1, "table": 1}
    assert c.check_in(3, event(player=1, number=3), SEATS[3], SEATS) == {"cmd": "seat", "number": 3, "table": None}
    assert checkin.where_plays(3, None, SEATS) == 2  # a table TSH seats nothing at: the one table with that number
    assert checkin.where_plays(1, None, SEATS) is None  # in two divisions: not known


def test_a_number_checks_in_at_one_side_only_and_a_new_game_starts_afresh():
    c = checkin.CheckIns()
    assert c.check_in(1, event(player=1, number=2), SEATS[1], SEATS) is None
    assert c.check_in(1, event(seq=2, player=2, number=2), SEATS[1], SEATS) is None  # typed again on the other side
    assert c.sides(1) == {1: 2}  # the side it checked in at first stands, as on the clock (game.checkin)
    view = c.view(1, SEATS[1])
    assert view["sides"] == {"1": {"number": 2, "name": "Bob", "starter": False, "at": None}}
    c.check_in(1, event(seq=3, player=1, number=1), SEATS[1], SEATS)
    assert c.view(1, SEATS[1])["sides"]["1"]["starter"] is True  # TSH's p12 (2.1(b)(i))
    assert c.forget_other_games(1, "game-000002") and c.sides(1) == {}


def test_a_number_typed_on_both_sides_is_a_conflict_on_the_tile_until_put_right():
    """Issue 40: Ann (1) typed Bob's number 2; Bob's own check-in is refused at the clock, and the
    tile shows it (never silent); Ann typing her own number settles it."""
    c = checkin.CheckIns()
    c.check_in(1, event(player=1, number=2), SEATS[1], SEATS)
    assert c.view(1, SEATS[1])["conflict"] is None
    c.check_in(1, event(seq=2, player=2, number=2), SEATS[1], SEATS)
    assert c.sides(1) == {1: 2}
    assert c.view(1, SEATS[1])["conflict"] == {"side": 2, "number": 2, "name": "Bob", "held_by": 1}
    c.check_in(1, event(seq=3, player=1, number=1), SEATS[1], SEATS)
    assert c.view(1, SEATS[1])["conflict"] is None
    c.check_in(1, event(seq=4, player=2, number=2), SEATS[1], SEATS)
    assert c.sides(1) == {1: 1, 2: 2}


def test_a_conflict_on_the_tile_goes_when_the_clock_drops_it_for_a_number_not_paired_here():
    """Issue 40: the tile shows a refused check-in as long as the clock does (game.checkin). A
    number not paired at this table, typed at either side, clears the clock's USEd too: the side
    that held the number gives it up (Ann typed 9 instead), or the refused side types another."""
    from rackside.game import checkin as clock_checkin

    for side, number in ((1, 9), (2, 9)):  # the holder gives 2 up; the refused side types another
        c = checkin.CheckIns()
        s = clock_checkin.apply(clock_checkin.Seating(), clock_checkin.Pairing(0, 1, (1, 2), 1))
        for seq, (player, typed) in enumerate(((1, 2), (2, 2), (side, number)), start=1):
            c.check_in(1, event(seq=seq, player=player, number=typed), SEATS[1], SEATS)
            s = clock_checkin.apply(s, clock_checkin.CheckIn(seq, player, typed))
        assert clock_checkin.conflict(s) is None  # the clock no longer says USEd
        assert c.view(1, SEATS[1])["conflict"] is None, (side, number)  # nor does the tile


@pytest.mark.parametrize("presses", [
    [(1, 12), (2, 12)],  # the same number on both sides: the first side keeps it
    [(1, 12), (2, 31), (2, 12)],  # and the second side keeps its own
    [(1, 12), (1, 31)],  # a second check-in on a side replaces the first
    [(2, 31), (1, 12), (1, 31), (2, 12)],
    [(1, 12), (2, 44), (2, 31)],  # a number paired elsewhere seats nobody
])
def test_the_console_seats_each_check_in_where_the_clock_does(presses):
    """2.3.1(b), 1.4.5: the console's seating is the clock's (game.checkin): a late start is offered
    for the side a player is not sitting at (2.3.3(a)), and the typed form's sides are the players'."""
    from rackside.game import checkin as clock_checkin

    here = seat(1, (12, 31), ("Ann", "Bob"), starter=31)
    seats = {1: here, 2: seat(2, (44, 45), ("Cy", "Di"))}
    s = clock_checkin.apply(clock_checkin.Seating(), clock_checkin.Pairing(0, 1, (12, 31), 31, 1))
    c = checkin.CheckIns()
    for i, (side, number) in enumerate(presses, 1):
        s = clock_checkin.apply(s, clock_checkin.CheckIn(i, side, number))
        c.check_in(1, event(seq=i, player=side, number=number), here, seats)
        assert c.sides(1) == {side: n for side, n in zip((1, 2), s.seated) if n is not None}, (presses[:i], s.seated)


def test_the_wrong_table_list_is_bounded_and_cleared_when_the_player_finds_their_table():
    c = checkin.CheckIns()
    for i in range(checkin.MAX_WRONG + 20):
        c.check_in(2, event(seq=i + 1, player=1, number=5000 + i), SEATS[2], SEATS)
    assert len(c.wrong_tables()) == checkin.MAX_WRONG
    c.check_in(2, event(seq=999, player=2, number=1), SEATS[2], SEATS)
    assert c.wrong_tables()[0]["goes_to"] == 1
    c.check_in(1, event(seq=1000, player=1, number=1), SEATS[1], SEATS)
    assert all(w["number"] != 1 for w in c.wrong_tables())


def table(n, phase="setup", status="online", seat_=None, game="game-000001", keypad=True):
    t = Table(n, status=status, seat=seat_)
    t.state = {"game": game, "phase": phase, "keypad": keypad}
    return t


def test_the_absent_sides_at_the_start_are_those_not_checked_in_at_tables_not_begun():
    c = checkin.CheckIns()
    c.check_in(2, event(player=2, number=4), SEATS[2], SEATS)
    tables = {1: table(1, seat_=SEATS[1]), 2: table(2, seat_=SEATS[2]), 3: table(3, phase="running", seat_=SEATS[3]),
              4: table(4, status="offline", seat_=seat(4, (7, 8), ("G", "H"))), 5: table(5)}
    plan = checkin.absent_sides(tables, c, 1)
    # 1: both (2.3.2(a)); 2: side 1 (2.3.3(a)); 3 has begun, 4 is offline, 5 has no TSH game
    assert [(x["table"], x["players"]) for x in plan] == [(1, [1, 2]), (2, [1])]
    tables[2].state = {"game": "game-000002", "phase": "setup", "keypad": True}  # a new game: the check-in was the last one's
    assert [(x["table"], x["players"]) for x in checkin.absent_sides(tables, c, 1)] == [(1, [1, 2]), (2, [1, 2])]


def test_a_side_whose_check_in_was_refused_is_not_started_as_absent():
    """Issue 40, 2.3.2(a): a refused check-in (USEd) is a player at that side, typing their number:
    the one confirmation at the scheduled start offered that side as absent, and would have started
    a present player's time as a latecomer's while the conflict waited for the director."""
    c = checkin.CheckIns()
    c.check_in(1, event(player=1, number=2), SEATS[1], SEATS)  # Ann typed Bob's number
    c.check_in(1, event(seq=2, player=2, number=2), SEATS[1], SEATS)  # Bob's own: refused at the clock
    assert checkin.absent_sides({1: table(1, seat_=SEATS[1])}, c, 1) == []


def test_a_table_whose_clock_has_no_keypad_is_never_offered_a_late_start():
    """2.3.2(a): nobody can check in at a clock without a keypad, so "not checked in" says nothing of
    who is there: the one confirmation would start present players' time. An older clock's state has
    no keypad flag (the schema reads it as false)."""
    tables = {1: table(1, seat_=SEATS[1], keypad=False), 2: table(2, seat_=SEATS[2])}
    tables[3] = table(3, seat_=SEATS[3])
    del tables[3].state["keypad"]
    assert [x["table"] for x in checkin.absent_sides(tables, checkin.CheckIns(), 1)] == [2]


def call(n=1, k=1, side=2, game="game-000001"):
    return {"kind": "input", "game": game, "seq": k, "t_ns": k, "input": "call", "call": f"call-{k}", "player": side,
            "at": "2026-12-02T10:00:00+00:00"}


def test_a_call_is_acknowledged_then_resolved_with_a_reason_once():
    q = incidents.Incidents()
    assert q.called(1, call()) is not None and q.called(1, call()) is None  # a repeat (QoS 1) is one call
    q.acknowledge(1, "call-1", "td", "t1")
    with pytest.raises(incidents.CallError, match="reason"):
        q.resolve(1, "call-1", "td", "t2", "  ")
    c = q.resolve(1, "call-1", "td", "t2", " tiles  counted ")
    assert (c.status, c.reason, c.acked_at) == ("resolved", "tiles counted", "t1")
    with pytest.raises(incidents.CallError, match="resolved already"):
        q.acknowledge(1, "call-1", "td", "t3")
    with pytest.raises(incidents.CallError, match="no call"):
        q.acknowledge(2, "call-1", "td", "t3")
    assert q.called(1, call(game="game-000002")) is not None  # the same id in the next game: a new call
    assert q.queue()[0]["status"] == "waiting"


def test_the_queue_keeps_its_bound_forgetting_resolved_calls_first_and_restores_what_was_kept():
    q = incidents.Incidents()
    q.called(9, call(k=1))
    for k in range(2, incidents.RESOLVED_SHOWN + 10):
        q.called(1, call(k=k))
        q.resolve(1, f"call-{k}", "td", "t", "done")
    assert len(q.calls) == incidents.RESOLVED_SHOWN + 1 and (9, "call-1") in q.calls
    again = incidents.Incidents()
    problems = again.restore([*q.rows(), {"table": "x"}])  # a damaged row is skipped, by its number
    assert len(problems) == 1 and problems[0].startswith(f"kept call {incidents.RESOLVED_SHOWN + 2} skipped"), problems
    assert again.queue() == q.queue()


def test_a_table_has_one_open_call_so_one_device_never_pushes_out_another_tables_calls():
    """1.4.3: a clock has one call open at a time (game.call); a new call from a table replaces its
    previous open one, so a device sending call after call keeps one open call, and every other
    table's open call stays queued. At most MAX_TABLE open calls and RESOLVED_SHOWN resolved."""
    from rackside.game.checkin import MAX_TABLE

    q = incidents.Incidents()
    q.called(2, call(k=1))
    q.called(3, call(k=1))
    q.acknowledge(3, "call-1", "td", "t")
    for k in range(1, 1200):
        q.called(1, call(k=k))
    open_ = [(c["table"], c["call"]) for c in q.queue() if c["status"] != incidents.RESOLVED]
    assert open_ == [(2, "call-1"), (3, "call-1"), (1, "call-1199")]
    assert incidents.MAX_CALLS == MAX_TABLE + incidents.RESOLVED_SHOWN
    for n in range(1, MAX_TABLE + 1):
        q.called(n, call(k=5))
    for n in range(1, 40):
        q.resolve(n, "call-5", "td", "t", "done")
    assert len(q.calls) <= incidents.MAX_CALLS
    assert len([c for c in q.calls.values() if c.status == incidents.RESOLVED]) == incidents.RESOLVED_SHOWN


def slip(**kw):
    return {"kind": "slip", "game": "game-000001", "seq": 9, "scores": [400, 380], "penalties": [10, 0],
            "final": [390, 380], "numbers": [2, 1], "at": None, **kw}


RESULT = {"game": "game-000001", "players": [{"player": 1, "penalty": 10}, {"player": 2, "penalty": 0}]}


@pytest.mark.parametrize("changes, result, why", [
    ({}, RESULT, None),  # the pair either way round (1.4.5), the clock's penalties (5.3)
    ({"numbers": [2, None]}, RESULT, "side 2 did not check in"),
    ({"numbers": [2, 3]}, RESULT, "not the pair TSH has"),
    ({"penalties": [0, 0], "final": [400, 380]}, RESULT, "not the clock's 10/0 (5.3)"),
    ({}, None, "no clock result"),
    ({"game": "game-000002"}, RESULT, "the clock's result of game game-000001"),
])
def test_a_slip_agrees_with_the_pairing_and_the_clocks_result_or_says_why(changes, result, why):
    got = signedslips.disagreement(slip(**changes), SEATS[1], result)
    assert got is None if why is None else why in got, got


def test_a_slip_at_a_table_with_no_tsh_game_is_held_and_the_seat_is_taken_as_signed():
    assert "no TSH game" in signedslips.disagreement(slip(), None, RESULT)
    assert signedslips.seat_as_signed(SEATS[1], [2, 1])["names"] == ["Bob", "Ann"]
    assert signedslips.seat_as_signed(SEATS[1], [1, 2]) is SEATS[1]


def test_a_side_that_forfeited_for_lateness_is_the_seats_other_player_2_3_5():
    late = {"game": "game-000001", "ending": "lateness forfeit", "forfeits": [1],
            "players": [{"player": 1, "penalty": 0}, {"player": 2, "penalty": 0}]}
    s = slip(numbers=[None, 2], scores=[0, 0], penalties=[0, 0], final=[0, 0])
    assert signedslips.signed_numbers(s, SEATS[1], late) == [1, 2]
    assert signedslips.disagreement(s, SEATS[1], late) is None
    # not a lateness forfeit of that side: who played there is not known
    assert "side 1 did not check in" in signedslips.disagreement(s, SEATS[1], {**late, "forfeits": [2]})


def test_a_table_holds_one_slip_its_latest_games():
    """One device's slips never push out another table's held slip: a table holds one, of the latest
    game it sent (the earlier one is in its audit and history), at most MAX_TABLE in all."""
    from rackside.game.checkin import MAX_TABLE

    h = signedslips.Held()
    h.hold(2, slip(), "side 2 did not check in", agrees=False)
    for g in range(1, 1500):
        h.hold(1, slip(game=f"game-{g:06d}"), "why", agrees=False)
    assert [(x["table"], x["slip"]["game"]) for x in h.view()] == [(2, "game-000001"), (1, "game-001499")]
    assert h.get(1, "game-000001") is None and h.take(1, "game-000001") is None and h.get(1, "game-001499")
    assert signedslips.MAX_HELD == MAX_TABLE
    again = signedslips.Held()
    again.restore([*h.rows(), {"table": 1, "slip": slip(game="game-000007"), "why": "", "agrees": False}])
    assert [(x["table"], x["slip"]["game"]) for x in again.view()] == [(2, "game-000001"), (1, "game-000007")]


@pytest.mark.parametrize("player, how, who", [(2, "side", "side 2"), (None, "keypad", "the keypad"), (None, "buttons", "the buttons"),
                                              (None, None, "no side"), (1, None, "side 1")])
def test_a_queued_call_says_who_called_as_the_drawer_and_the_audit_say_it(player, how, who):
    """`#` held alone (the keypad) and the three buttons' gesture both call from no side; the call's
    `how` tells them apart. An older clock's call has no `how`: without a side it says "no side"."""
    q = incidents.Incidents()
    e = {k: v for k, v in {**call(side=player), "how": how}.items() if v is not None}
    c = q.called(1, e)
    assert (c.side, c.how, c.who) == (player, how, who)
    assert q.queue()[0]["who"] == who and q.queue()[0]["how"] == how
    again = incidents.Incidents()
    assert again.restore(q.rows()) == [] and again.queue() == q.queue()  # kept, and restored, with how
    old = {k: v for k, v in q.rows()[0].items() if k != "how"}  # a row an older console kept
    assert again.restore([old]) == [] and again.queue()[0]["who"] == ("no side" if player is None else who)
    assert again.restore([{**old, "call": "call-2", "how": "elbow"}])[0].startswith("kept call 1 skipped")
