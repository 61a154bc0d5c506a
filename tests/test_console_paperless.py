"""The paperless table at the console (issue 27 items 2 to 4), through `rackside hall console` as its own
process and a real Mosquitto, the clocks publishing as a clock with a keypad does (support.keypadclock:
the clock core's own views, the clock's own payload functions, the wire contract of docs/hall.md):

- check-in (2.3.1(b), 1.4.5, 2.1): each table gets its round's pairing (TSH's `p12` names the starter)
  when its clock comes online; a number paired elsewhere is answered with `seat` and the table to go
  to, and listed for the director; a side checked in shows who sits there, the starter marked; at the
  scheduled start one confirmation starts the absent sides of every table not checked in (2.3.2(a),
  2.3.3(a)), dated from the start;
- calls (1.4.3): queued apart from challenges, acknowledged, resolved with a required reason, the
  clock told each time; audited and in the table's history;
- signed slips (5.4.1, 5.4.2): one that agrees with the clock's result and the pairing is recorded
  (the sides as the players signed), answered `recorded`; one that disagrees is held with why; an
  overtime forfeit the loser is still not behind in is the director's (5.3.3); a game recorded is
  final (5.4.1): changed by the director only, with a reason (5.4.1(b) for reversed scores); a table
  without a keypad is typed from the slip and marked so; the round's TSH export is accepted by the
  model of TSH's score entry;
- `[console] slips = "hold"`: a slip that agrees waits for the scorekeeper's one click; an unknown
  value stops the console with one line naming the key and what is allowed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest

from rackside.game import clock as C
from rackside.game.call import BUTTONS, KEYPAD, SIDE
from rackside.hall.console.scoring import tsh
from rackside.hall.wire import commands, health, payloads
from rackside.hall.wire.schema import Schema

from support.console import cheap_hash, post
from support.keypadclock import KeypadClock
from support.paperless import A_T, PASSWORD, Hall, InProcessHall
from support.tshmodel import Tsh
from support.wait import wait

@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    h = Hall(tmp_path_factory.mktemp("paperless"))
    for n in range(1, 6):  # table 6's clock has no keypad: it is never online here
        h.clock(n)
    yield h
    h.close()


def outcome(clock: KeypadClock, game: str) -> dict:
    return wait(lambda: next((c for c in clock.sent("slip_outcome") if c["game"] == game), None))


# --- check-in (item 2) ---------------------------------------------------------------------------


def test_each_table_gets_its_round_pairing_with_tshs_starter_when_its_clock_comes_online(hall):
    pairings = {n: wait(lambda n=n: hall.clocks[n].sent("pairing"))[0] for n in range(1, 6)}
    assert {n: (p["round"], p["numbers"], p["starter"]) for n, p in pairings.items()} == {
        1: (1, [1, 2], 1), 2: (1, [4, 3], 4), 3: (1, [5, 6], None), 4: (1, [7, 8], 7), 5: (1, [9, 10], 9)}
    assert all(p["by"] == "console" for p in pairings.values())
    # once a clock has it, a state that repeats changes nothing; a clock that comes online again gets it again
    hall.clocks[1].state()
    hall.clocks[4].offline()
    wait(lambda: hall.tile(4)["status"] == "offline")
    hall.clocks[4].online()
    wait(lambda: len(hall.clocks[4].sent("pairing")) == 2)
    assert len(hall.clocks[1].sent("pairing")) == 1


def test_in_a_hall_of_mixed_versions_a_clock_from_before_names_still_gets_its_pairing(tmp_path):
    """Issue 40 added the players' `names` to `pairing`; a clock of before refuses a command with a
    field it does not know (hall.wire.commands: unknown fields are refused), so the console's pairing
    never reached it: its players could not check in, and its table was lost. A clock now says in its
    status which later fields it takes (`takes`); the console sends `names` only to one that says so.
    The clocks of before are their message shapes: the bare `online` and issue 26's status object,
    each checking a pairing with the schema of before `names`."""
    before_names = Schema({**commands.ENVELOPE, **{k: f for k, f in commands.FIELDS["pairing"].items() if k != "names"}},
                          unknown="refuse", then=commands.SPECS["pairing"].then)
    issue_26 = health.status_payload(health.unknown(), "0.1.0+g1a2b3c4")
    h = Hall(tmp_path)
    try:
        bare, older = h.clock(1), h.clock(2, status=issue_26)
        newer = h.clock(3, status=health.status_payload(health.unknown(), "0.2.0", commands.TAKES))
        for old in (bare, older):
            got = before_names.check(wait(lambda old=old: old.sent("pairing"))[0])  # taken: no field it does not know
            assert "names" not in got
        assert wait(lambda: newer.sent("pairing"))[0]["names"] == ["Eng, Ed", "Fox, Flo"]
        # a clock updated in the hall says so once its health is read (the link's first status is the
        # bare word): its pairing comes again, with the names
        bare.status = health.status_payload(health.unknown(), "0.2.0", commands.TAKES)
        bare.online()
        assert wait(lambda: [p for p in bare.sent("pairing") if "names" in p])[0]["names"] == ["Adams, Ann", "Baker, Bob"]
        assert len(older.sent("pairing")) == 1
    finally:
        h.close()


def test_a_player_at_the_wrong_table_is_told_where_to_go_and_the_director_sees_it(hall):
    one, three = hall.clocks[1], hall.clocks[3]
    one.checkin(1, 5)  # Eng, who plays at table 3, at table 1's side 1
    seat = wait(lambda: one.sent("seat"))
    assert (seat[0]["number"], seat[0]["table"]) == (5, 3)
    one.wrong_table(1)
    wrong = wait(lambda: hall.paperless()["wrong_tables"])
    assert [(w["table"], w["side"], w["number"], w["goes_to"], w["name"]) for w in wrong] == [(1, 1, 5, 3, "Eng, Ed")]
    assert hall.checkin(1)["sides"] == {}  # that side is not checked in
    one.checkin(2, 77)  # nobody of the round
    assert wait(lambda: [s for s in one.sent("seat") if s["number"] == 77])[0]["table"] is None
    three.checkin(2, 5)  # Eng finds table 3
    wait(lambda: hall.checkin(3).get("sides", {}).get("2"))
    wrong = hall.paperless()["wrong_tables"]
    assert [(w["table"], w["number"]) for w in wrong] == [(1, 77)], wrong
    assert not three.sent("seat")


def test_a_checked_in_side_shows_who_sits_there_and_tshs_starter(hall):
    two = hall.clocks[2]
    two.checkin(1, 3)  # Cole put the clock the other way round: on side 1 (1.4.5)
    two.checkin(2, 4)  # Dunn, the starter (p12)
    sides = wait(lambda: (s := hall.checkin(2).get("sides", {})) and len(s) == 2 and s)
    assert {k: (v["number"], v["name"], v["starter"]) for k, v in sides.items()} == {
        "1": (3, "Cole, Cy", False), "2": (4, "Dunn, Di", True)}
    assert not two.sent("seat")


def test_at_the_scheduled_start_one_confirmation_starts_every_absent_side(hall):
    status, out = hall.post("/api/round", {"start": time.time() + 600})
    assert status == 200, out
    status, out = hall.post("/api/start-absent", {"tables": [1, 3]})
    assert status == 400 and "away" in out["error"], out
    start = int(time.time()) - 30
    assert hall.post("/api/round", {"start": start})[0] == 200
    hall.clocks[4].checkin(1, 7)
    hall.clocks[4].checkin(2, 8)
    hall.clocks[5].checkin(1, 9)
    hall.clocks[5].checkin(2, 10)
    wait(lambda: len(hall.checkin(5).get("sides", {})) == 2 and len(hall.checkin(4).get("sides", {})) == 2)
    plan = json.loads(hall.h.call("GET", "/api/start-absent")[1])
    # table 1: nobody checked in (2.3.2(a)); table 3: side 1 absent (2.3.3(a)); 2, 4, 5: both here
    assert [(x["table"], x["players"]) for x in plan["tables"]] == [(1, [1, 2]), (3, [1])]
    status, out = hall.post("/api/start-absent", {"tables": [1, 3]})
    assert status == 200 and out["sent"] == [{"table": 1, "players": [1, 2]}, {"table": 3, "players": [1]}], out
    at = datetime.fromtimestamp(start, timezone.utc).isoformat()
    for n, players in ((1, [1, 2]), (3, [1])):
        late = wait(lambda n=n: hall.clocks[n].sent("late_start"))
        assert (late[0]["players"], late[0]["at"], late[0]["by"]) == (players, at, "Chief TD")
    assert not hall.clocks[2].sent("late_start") and not hall.clocks[4].sent("late_start")


# --- calls (item 3) --------------------------------------------------------------------------------


def test_a_call_is_queued_acknowledged_and_resolved_with_a_reason(hall):
    one = hall.clocks[1]
    call = one.call(2)
    queued = wait(lambda: [c for c in hall.paperless()["calls"] if c["table"] == 1 and c["call"] == call])
    assert (queued[0]["side"], queued[0]["status"]) == (2, "waiting") and queued[0]["at"]
    status, out = hall.post("/api/call/1", {"call": call, "action": "ack"})
    assert status == 200 and out["call"]["status"] == "acknowledged", out
    assert wait(lambda: one.sent("call_ack"))[0]["call"] == call
    status, out = hall.post("/api/call/1", {"call": call, "action": "resolve", "reason": "  "})
    assert status == 400 and "reason" in out["error"], out
    status, out = hall.post("/api/call/1", {"call": "call-99", "action": "ack"})
    assert status == 400 and "no call" in out["error"], out
    status, out = hall.post("/api/call/1", {"call": call, "action": "resolve", "reason": "tile count checked: 100"})
    assert status == 200 and out["call"]["status"] == "resolved", out
    resolved = wait(lambda: one.sent("call_resolve"))[0]
    assert (resolved["call"], resolved["reason"], resolved["by"]) == (call, "tile count checked: 100", "Chief TD")
    # the clock applied it (its input from the hall): the queue has it as the clock does
    wait(lambda: next(c for c in hall.paperless()["calls"] if c["call"] == call)["clock"] == "call_resolve")
    status, out = hall.post("/api/call/1", {"call": call, "action": "resolve", "reason": "again"})
    assert status == 400 and "resolved already" in out["error"], out
    gesture = one.call(None, BUTTONS)  # the next call (a clock has one open at a time): the buttons' gesture has no side
    wait(lambda: [c for c in hall.paperless()["calls"] if c["call"] == gesture])
    actions = [(a["action"], a["reason"]) for a in hall.audit() if a["pn_high"] == 1 and a["pn_low"] == 0]
    assert ("call", "side 2") in actions and ("call ack", "") in actions
    assert wait(lambda: ("call", "the buttons") in [(a["action"], a["reason"]) for a in hall.audit() if a["pn_high"] == 1])
    assert ("call resolve", "tile count checked: 100") in actions
    history = json.loads(hall.h.call("GET", "/api/table/1")[1])["history"]
    assert [h["input"] for h in history if h.get("kind") == "input" and h.get("input", "").startswith("call")] == [
        "call", "call_ack", "call_resolve", "call"]
    assert [h["cmd"] for h in history if h.get("kind") == "command" and h["cmd"].startswith("call")] == ["call_ack", "call_resolve"]
    # apart from the challenges: none in the feed
    assert hall.snapshot()["feed"] == []


def test_the_queue_and_the_audit_say_how_a_call_without_a_side_was_made(hall):
    """`#` held alone on the keypad is not the three buttons' gesture (game.call's `how`): the
    Calls drawer and the audit say which; an older clock's call (no `how`) says neither."""
    one = hall.clocks[1]
    for how, who in ((KEYPAD, "the keypad"), (BUTTONS, "the buttons"), (None, "no side")):
        audited = [a for a in hall.audit() if a["action"] == "call" and a["reason"] == who and a["pn_high"] == 1]
        call = one.call(None, how)
        queued = wait(lambda: next((c for c in hall.paperless()["calls"] if c["table"] == 1 and c["call"] == call), None))
        assert (queued["side"], queued["how"], queued["who"]) == (None, how, who), queued
        wait(lambda: len([a for a in hall.audit() if a["action"] == "call" and a["reason"] == who and a["pn_high"] == 1]) > len(audited))
    call = one.call(1)  # `#` held with side 1's own button
    queued = wait(lambda: next((c for c in hall.paperless()["calls"] if c["table"] == 1 and c["call"] == call), None))
    assert (queued["side"], queued["how"], queued["who"]) == (1, SIDE, "side 1"), queued
    assert hall.post("/api/call/1", {"call": call, "action": "resolve", "reason": "done"})[0] == 200


def test_only_a_call_of_the_tables_current_game_is_audited(hall):
    """A device replaying calls of other games (or inventing them) neither fills the audit nor
    pushes anything out: the call is its table's one open call at most, audited only when it is of
    the game the table's clock is on."""
    two = hall.clocks[2]
    before = len(hall.audit())
    game = two.game
    try:
        two.game = "game-000099"  # not the game the table's state names
        for _ in range(3):
            stray = two.call(1)
    finally:
        two.game = game
    wait(lambda: [c for c in hall.paperless()["calls"] if c["table"] == 2 and c["call"] == stray])
    assert [(c["table"], c["call"]) for c in hall.paperless()["calls"] if c["table"] == 2 and c["status"] != "resolved"] == [(2, stray)]
    assert len(hall.audit()) == before, hall.audit()[before:]
    status, out = hall.post("/api/call/2", {"call": stray, "action": "resolve", "reason": "not this game's"})
    assert status == 200, out


# --- signed slips (item 4) -----------------------------------------------------------------------


def test_a_signed_slip_that_agrees_is_recorded_with_the_sides_as_signed(hall):
    two = hall.clocks[2]  # Cole at side 1, Dunn at side 2 (checked in above)
    two.press(1)  # Cole starts Dunn's time (2.2)
    two.press(2, 1400)
    two.press(1, 1599)  # Cole's time: 99 s over, 20 off (5.3)
    result = two.end()
    assert [p["penalty"] for p in result["players"]] == [20, 0]
    wait(lambda: hall.tile(2)["result"])
    two.slip((420, 380))
    assert outcome(two, two.game)["outcome"] == "recorded", outcome(two, two.game)
    row = wait(lambda: hall.csv().get("2"))
    assert (row["player1"], row["name1"], row["slip1"], row["penalty1"], row["score1"]) == ("3", "Cole, Cy", "420", "20", "400")
    assert (row["player2"], row["score2"], row["entry"], row["clock_record"]) == ("4", "380", "signed at the clock", "clock")
    assert hall.tile(2)["final"]["entry"] == "signed at the clock"
    # a signed result is final (5.4.1): the director's to change, with a reason; reversed scores are
    # corrected on petition (5.4.1(b)); 5.4.1(a) is the players' own correction before it is signed
    status, out = post(hall.h, "/api/result/2", {"slip": [380, 420]})
    assert status == 400 and "(5.4.1)" in out["error"] and "5.4.1(b)" in out["error"] and "signed" in out["error"], out
    assert "5.4.1(a)" not in out["error"], out
    # the same slip again (the clock's redelivery) is answered again, and changes nothing; another is refused
    two.slip((420, 380))
    wait(lambda: len(two.sent("slip_outcome")) == 2)
    assert two.sent("slip_outcome")[1]["outcome"] == "recorded"
    two.slip((380, 420))
    wait(lambda: len(two.sent("slip_outcome")) == 3)
    refused = two.sent("slip_outcome")[2]
    assert refused["outcome"] == "refused" and "5.4.1(b)" in refused["why"], refused
    assert hall.csv()["2"]["score1"] == "400" and not hall.paperless()["held_slips"]


def test_a_slip_that_disagrees_is_held_with_why(hall):
    three = hall.clocks[3]
    three.checkin(1, 6)  # Fox arrives (the late start runs side 1)
    three.press(1)
    three.press(2, 600)
    three.end(1)
    wait(lambda: hall.tile(3)["result"])
    three.slip((350, 360), penalties=(0, 10))  # not the clock's penalties
    out = outcome(three, three.game)
    assert out["outcome"] == "held" and "penalties" in out["why"] and "(5.3)" in out["why"], out
    held = wait(lambda: [x for x in hall.paperless()["held_slips"] if x["table"] == 3])
    assert held[0]["why"] == out["why"] and held[0]["agrees"] is False
    assert "3" not in hall.csv()
    # the one click does not record what disagrees: the form does (from the clock's result), then the slip is set aside
    status, resp = hall.post("/api/slip/3", {"game": three.game, "action": "record"})
    assert status == 400 and "cannot be recorded as signed" in resp["error"], resp
    assert post(hall.h, "/api/result/3", {"slip": [350, 360], "confirm": True})[0] == 200
    status, resp = hall.post("/api/slip/3", {"game": three.game, "action": "dismiss"})
    assert status == 400 and "reason" in resp["error"], resp
    assert hall.post("/api/slip/3", {"game": three.game, "action": "dismiss", "reason": "typed from the score sheets"})[0] == 200
    assert not [x for x in hall.paperless()["held_slips"] if x["table"] == 3]
    assert hall.csv()["3"]["entry"] == "typed from a slip"
    # a slip whose players are not the pair TSH has here is held too
    four = hall.clocks[4]
    four.press(1)
    four.end(300)
    wait(lambda: hall.tile(4)["result"])
    four.slip((400, 300), numbers=[7, 9])
    out = outcome(four, four.game)
    assert out["outcome"] == "held" and "not the pair TSH has" in out["why"], out
    # the game's slip again, agreeing (not a real clock's: its final slip is never typed again, only
    # resent as it was); recorded, it takes the held one's place
    four.slip((400, 300))
    wait(lambda: len(four.sent("slip_outcome")) == 2)
    assert four.sent("slip_outcome")[1]["outcome"] == "recorded"
    assert not [x for x in hall.paperless()["held_slips"] if x["table"] == 4]


def test_an_overtime_forfeit_still_ahead_is_held_for_the_directors_decision_5_3_3(hall):
    five = hall.clocks[5]
    five.press(2)  # side 1 (Ives) runs ...
    result = five.end(2200)  # ... 10 minutes over: the clock forfeits her (5.3.3)
    assert result["ending"] == "overtime forfeit" and result["forfeits"] == [1]
    wait(lambda: hall.tile(5)["result"])
    five.slip((450, 300))  # 450 - 100 is still ahead of 300
    out = outcome(five, five.game)
    assert out["outcome"] == "held" and "director decides" in out["why"], out
    body = {"slip": [450, 300], "decision": {"scores": [299, 300], "reason": "5.3.3: a loss"}, "confirm": True}
    status, resp = post(hall.h, "/api/result/5", body)
    assert status == 200 and resp["recorded"] == "decide", resp
    assert hall.post("/api/slip/5", {"game": five.game, "action": "dismiss", "reason": "the director decided"})[0] == 200


def test_a_table_without_a_keypad_is_typed_from_the_slip_and_the_round_goes_to_tsh(hall):
    # table 6's clock never came: its game is typed from the paper slip (no clock record)
    body = {"slip": [390, 410], "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]}, "confirm": True}
    status, out = post(hall.h, "/api/result/6", body)
    assert status == 200, out
    one = hall.clocks[1]  # Adams and Baker arrived after the late start; they play and sign
    one.checkin(1, 1)
    one.checkin(2, 2)
    wait(lambda: len(hall.checkin(1).get("sides", {})) == 2)
    one.press(2)
    one.end(900)
    wait(lambda: hall.tile(1)["result"])
    one.slip((433, 377))
    assert outcome(one, one.game)["outcome"] == "recorded"
    rows = wait(lambda: (r := hall.csv()) and len(r) == 6 and r)
    assert {n: (r["score1"], r["score2"], r["entry"]) for n, r in rows.items()} == {
        "1": ("433", "377", "signed at the clock"), "2": ("400", "380", "signed at the clock"),
        "3": ("350", "360", "typed from a slip"), "4": ("400", "300", "signed at the clock"),
        "5": ("299", "300", "typed from a slip"), "6": ("390", "410", "typed from a slip")}
    model = Tsh.load([tsh.parse_t(A_T, "A")], {})
    status, raw, _ = hall.h.call("GET", "/api/export/tsh.txt?division=A&round=1")
    assert status == 200, raw
    assert [str(m) for m in model.feed(raw.decode()) if m.error] == [] and model.unscored("A", 1) == []
    # table 3 was typed in the sides its players checked in at: Fox on side 1, Eng on side 2
    assert hall.csv()["3"]["player1"] == "6"
    assert [p.scores for p in model.division("A").values()] == [[433], [377], [400], [380], [360], [350], [400], [300],
                                                                [299], [300], [390], [410]]


# --- the director's setting ------------------------------------------------------------------------


def test_with_slips_hold_a_slip_that_agrees_waits_for_one_click(tmp_path):
    h = InProcessHall(tmp_path, slips="hold")  # the console in-process (support.inproc)
    try:
        c = h.clock(2)
        c.checkin(1, 4)
        c.checkin(2, 3)
        c.press(1)
        c.end(200)
        wait(lambda: h.tile(2)["result"])
        c.slip((300, 350))
        out = outcome(c, c.game)
        assert out["outcome"] == "held" and "setting" in out["why"], out
        held = wait(lambda: h.paperless()["held_slips"])
        assert held[0]["agrees"] is True and h.paperless()["slips_setting"] == "hold"
        assert h.csv() == {}
        status, resp = h.post("/api/slip/2", {"game": c.game, "action": "record"})
        assert status == 200, resp
        row = h.csv()["2"]
        assert (row["player1"], row["score1"], row["player2"], row["score2"], row["confirmed_by"], row["entry"]) == (
            "4", "300", "3", "350", "Chief TD", "signed at the clock")
        assert h.paperless()["held_slips"] == []
        # a lateness forfeit (2.3.5): Eng never came, so side 1 never checked in; the slip is Fox's alone
        three = h.clock(3)
        three.checkin(2, 6)
        three.apply(C.LateStart(three.after(1), (1,)))  # the director's late start of side 1 (2.3.3(a))
        result = three.end(1501)
        assert (result["ending"], result["forfeits"]) == ("lateness forfeit", [1])
        wait(lambda: h.tile(3)["result"])
        three.slip((0, 0))
        held = wait(lambda: [x for x in h.paperless()["held_slips"] if x["table"] == 3])
        assert held[0]["agrees"] is True, held  # the absent side is the seat's other player
        assert h.post("/api/slip/3", {"game": three.game, "action": "record"})[0] == 200
        row = h.csv()["3"]
        assert (row["player1"], row["score1"], row["player2"], row["score2"], row["rated"]) == ("5", "-75", "6", "75", "no"), row
    finally:
        h.close()


def test_an_unknown_slips_setting_is_refused_in_one_line(tmp_path):
    config = tmp_path / "hall.toml"
    config.write_text('[console]\nhall = "h"\nurl = "mqtt://127.0.0.1:1"\nusername = "d"\nmqtt_password = "p"\n'
                      f'password = "{cheap_hash("x")}"\nslips = "maybe"\n')
    run = subprocess.run([sys.executable, "-m", "rackside", "hall", "console", "--config", str(config)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    lines = [x for x in run.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "[console] slips = 'maybe'" in lines[0] and "'record' or 'hold'" in lines[0], run.stderr


def test_a_slip_before_its_clock_result_is_judged_again_when_the_result_comes(tmp_path):
    """A resend brings a game's events first and its result last: the slip waits for the result."""
    h = InProcessHall(tmp_path)  # the console in-process (support.inproc)
    try:
        c = h.clock(4)
        c.checkin(1, 7)
        c.checkin(2, 8)
        c.press(1)
        c.apply(C.End(c.after(300)))  # the game's end as an input: its result not yet here
        c.state()  # a clock's state goes with every input: the game ended
        slip = c.slip((410, 390))
        first = outcome(c, c.game)
        assert first["outcome"] == "held" and "no clock result" in first["why"], first
        c._publish("event", payloads.result_payload(C.view(c.clock, c.t_ns), c.game, time.time_ns()))
        wait(lambda: len(c.sent("slip_outcome")) == 2)
        assert c.sent("slip_outcome")[1]["outcome"] == "recorded"
        assert h.csv()["4"]["score1"] == "410" and h.paperless()["held_slips"] == []
        assert slip["numbers"] == [7, 8]
    finally:
        h.close()


def test_a_slip_of_a_game_the_table_is_not_on_is_ignored(tmp_path):
    """A slip of a game the table's clock is not on, and the console never bound to it (a device
    inventing games), is neither held, nor audited, nor answered: it cannot push out a held slip or
    fill the disk. The table's own slip after it is recorded."""
    h = InProcessHall(tmp_path)  # the console in-process (support.inproc)
    try:
        c = h.clock(4)
        c.checkin(1, 7)
        c.checkin(2, 8)
        c.press(1)
        c.end(300)
        wait(lambda: h.tile(4)["result"])
        game = c.game
        try:
            for g in range(80, 84):
                c.game = f"game-{g:06d}"
                c.slip((410, 390))
        finally:
            c.game = game
        c.slip((410, 390))  # after the strays on the same topic: its answer is the barrier
        assert outcome(c, game)["outcome"] == "recorded"
        assert [o["game"] for o in c.sent("slip_outcome")] == [game]
        assert h.paperless()["held_slips"] == []
        assert [a for a in h.audit() if a["action"] == "slip held"] == []
    finally:
        h.close()


def test_the_open_calls_and_the_held_slips_outlive_a_sigkill_of_the_console(tmp_path):
    from support.console import ConsoleProcess, Http

    h = Hall(tmp_path)
    try:
        c = h.clock(4)
        call = c.call(1)
        c.press(1)
        c.end(300)
        wait(lambda: h.tile(4)["result"])
        c.slip((410, 390), numbers=[7, None])  # Hart never checked in
        wait(lambda: h.paperless()["held_slips"] and h.paperless()["calls"])
        h.console.proc.kill()  # SIGKILL: nothing is flushed on the way out
        h.console.proc.wait()
        h.console = ConsoleProcess(h.broker, tmp_path / "console", PASSWORD, extra=h.extra).start()
        h.h = Http(h.console.url)
        h.h.token = h.h.login(PASSWORD, "Chief TD")
        after = h.paperless()
        assert [(x["table"], x["call"], x["status"]) for x in after["calls"]] == [(4, call, "waiting")]
        assert [(x["table"], x["slip"]["scores"]) for x in after["held_slips"]] == [(4, [410, 390])]
        assert "side 2 did not check in" in after["held_slips"][0]["why"]
        assert h.post("/api/call/4", {"call": call, "action": "resolve", "reason": "answered after the restart"})[0] == 200
    finally:
        h.close()
