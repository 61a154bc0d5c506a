"""Check-in and the director's call on the hall (issue 27), end to end against the real broker: a
clock with a keypad (firmware.cli.Clock on mock pins, the keypad's real scanner thread, the real
hall output) is sent the round's pairing, a player checks in at the wrong table and is told where
to go (`seat`), the right players check in and the non-starter starts the starter's time (2.1,
2.2), a call neutralises the game (1.4.3) and the director's call_ack and call_resolve come back.
Every input reaches the hall as an event with its journal seq."""

from __future__ import annotations



from rackside.game.clock import Phase

from support.hallclock import LiveClock, ack, clock_config, send
from support.wait import until


def test_check_in_and_a_call_travel_to_the_hall_and_its_answers_come_back(hall_broker, tmp_path):
    from rackside.hall.wire.health import is_online
    from support.broker import Recorder

    rec = Recorder(hall_broker)
    live = LiveClock(clock_config(tmp_path / "clock.toml", hall_broker, 5, keypad=True), tmp_path / "state")
    try:
        rec.wait_for(lambda r: any(t.endswith("table/5/status") and is_online(p) for t, p, _ in r.messages))
        send(hall_broker, 5, {"id": "p1", "cmd": "pairing", "round": 2, "numbers": [12, 31], "starter": 31, "by": "console"})
        assert ack(rec, "p1")["ok"] is True
        assert until(lambda: live.runner.table.seating.table == 5), "the clock knows its table from the pairing"
        # a player of another table checks in here: published, and the console says where they play
        for k in "44":
            live.key(k)
        live.tap("left")
        checkin = rec.wait_for(lambda r: next((e for e in r.json("event") if e.get("input") == "checkin"), None))
        assert (checkin["player"], checkin["number"]) == (1, 44)
        send(hall_broker, 5, {"id": "s1", "cmd": "seat", "number": 44, "table": 14})
        assert ack(rec, "s1")["ok"] is True
        assert until(lambda: live.runner.table.seating.elsewhere == (14, None)), "tAbL 14 on the left"
        assert until(lambda: live.texts()[0] in ("tAbL", "  14")), "the left display says where to go"
        # the right players: 12 on the left, 31 (TSH's starter) on the right
        for number, side in (("12", "left"), ("31", "right")):
            for k in number:
                live.key(k)
            live.tap(side)
        assert until(lambda: live.runner.table.seating.seated == (12, 31)), "both checked in"
        live.tap("right")  # the starter's own press: no start (2.2)
        live.tap("left")  # the non-starter's: the starter's time runs
        assert until(lambda: live.runner.clock.phase is Phase.RUNNING and live.runner.clock.side == 2), "the starter's time"
        # the call: # held 1.5 s; the game is neutralised and the call published
        live.key("#", hold_s=1.8)
        call = rec.wait_for(lambda r: next((e for e in r.json("event") if e.get("input") == "call"), None))
        assert call["call"] == "call-1"
        assert until(lambda: live.runner.clock.phase is Phase.NEUTRALISED), "neutralised by the call (1.4.3)"
        send(hall_broker, 5, {"id": "a1", "cmd": "call_ack", "call": "call-1", "by": "director"})
        assert ack(rec, "a1")["ok"] is True
        send(hall_broker, 5, {"id": "r1", "cmd": "call_resolve", "call": "call-1", "reason": "word judged", "by": "director"})
        assert ack(rec, "r1")["ok"] is True
        send(hall_broker, 5, {"id": "r2", "cmd": "call_resolve", "call": "call-9", "reason": "no such call"})
        refused = ack(rec, "r2")
        assert refused["ok"] is False and "not open" in refused["reason"]
        assert until(lambda: live.runner.table.calls.open is None), "the call resolved"
        journal = live.journal()
        events = rec.wait_for(lambda r: (lambda ev: ev if len(ev) == len(journal) else None)(
            [e for e in r.json("event") if e["kind"] == "input"]))
        assert [e["input"] for e in events] == [j["input"] for j in journal]
        assert [e["seq"] for e in events] == list(range(1, 1 + len(journal)))
        names = [e["input"] for e in events]
        for name in ("pairing", "key", "checkin", "seat", "press", "call", "call_ack", "call_resolve"):
            assert name in names, name
        resolve = next(e for e in events if e["input"] == "call_resolve")
        assert resolve["reason"] == "word judged" and resolve["source"] == "hall" and resolve["by"] == "director"
        pairing = next(e for e in events if e["input"] == "pairing")
        assert pairing["numbers"] == [12, 31] and pairing["starter"] == 31 and pairing["table"] == 5
    finally:
        live.close()
        rec.close()



def test_a_late_start_never_starts_the_time_of_a_player_who_checked_in(hall_broker, tmp_path):
    """2.3.3(a), 2.3.1(b): the console plans a late start of both sides; side 1's player checks in
    before the command reaches the clock. Only side 2 is started late; a late start left with no
    absent side is refused, saying so in the ack."""
    from rackside.hall.wire.health import is_online
    from support.broker import Recorder

    rec = Recorder(hall_broker)
    live = LiveClock(clock_config(tmp_path / "clock.toml", hall_broker, 6, keypad=True), tmp_path / "state")
    try:
        rec.wait_for(lambda r: any(t.endswith("table/6/status") and is_online(p) for t, p, _ in r.messages))
        send(hall_broker, 6, {"id": "p1", "cmd": "pairing", "round": 1, "numbers": [12, 31], "starter": 31, "by": "console"})
        assert ack(rec, "p1")["ok"] is True
        for k in "12":
            live.key(k)
        live.tap("left")
        assert until(lambda: live.runner.table.seating.seated == (12, None)), "12 checked in on the left"
        send(hall_broker, 6, {"id": "l1", "cmd": "late_start", "players": [1], "by": "Chief TD"})
        refused = ack(rec, "l1")
        assert refused["ok"] is False and "checked in" in refused["reason"], refused
        assert live.runner.clock.phase is Phase.SETUP
        send(hall_broker, 6, {"id": "l2", "cmd": "late_start", "players": [1, 2], "by": "Chief TD"})
        assert ack(rec, "l2")["ok"] is True
        assert until(lambda: live.runner.clock.phase is Phase.LATE), "side 2's time runs late"
        assert live.runner.clock.absent == (False, True), "side 1 checked in: its time is not a latecomer's"
        started = [j for j in live.journal() if j["input"] == "late_start"]
        assert [j["players"] for j in started] == [[2]]
    finally:
        live.close()
        rec.close()
