"""A signed result slip travels to the hall and the console's answer comes back (issue 27 item 4),
against the real broker: a table clock (firmware.cli.Clock on mock pins, its real hall output) ends
a game, the winner's keys reach its runner as the keypad's scanner delivers them, both players sign
at their buttons, the slip event arrives (QoS 1, checked by the console's own schema), and the
console's "slip_outcome" is journalled, acked and shown."""

from __future__ import annotations

import time

from rackside.game.clock import Phase
from rackside.game.messages import Key
from rackside.game.slip import Step
from rackside.hall.wire import messages

from support.hallclock import ack, send
from support.wait import until


def type_keys(live, keys: str) -> None:
    for k in keys:
        live.runner.submit(Key(time.monotonic_ns(), k, True))
        live.runner.submit(Key(time.monotonic_ns(), k, False))


def test_a_signed_slip_travels_to_the_hall_and_the_outcome_comes_back(hall_broker, table3):
    live, rec = table3
    live.tap("right")  # 2.2: the left player's time runs
    live.tap("left")
    live.command("end")
    assert until(lambda: live.runner.clock.phase is Phase.ENDED)
    session = live.runner.slip_session
    type_keys(live, "412#350#")
    assert until(lambda: session.slip is not None and session.slip.step is Step.SIGNING)
    live.tap("left")  # each player signs at their own button (5.4.1)
    assert until(lambda: session.slip.signed[0])
    live.tap("right")
    assert until(lambda: session.slip.step is Step.FINAL)

    slip = rec.wait_for(lambda r: next((e for e in r.json("event") if e["kind"] == "slip"), None))
    checked = messages.schema_of("event", slip).check(slip)
    assert checked["scores"] == [412, 350] and checked["final"] == [412, 350] and checked["penalties"] == [0, 0]
    assert checked["numbers"] == [None, None] and checked["ending"] == "end" and checked["at"]
    game = live.runner.journal.game
    sign = [j for j in live.journal() if j["input"] == "slip_sign"][-1]
    assert (checked["game"], checked["seq"]) == (game, sign["seq"])  # made final by this signature
    inputs = [e for e in rec.wait_for(lambda r: [e for e in r.json("event") if e["kind"] == "input" and e["seq"] == sign["seq"]] and r.json("event"))
              if e["kind"] == "input"]
    assert "slip" not in inputs[-1]  # the slip goes as its own event, not inside the input's

    send(hall_broker, 3, {"id": "so1", "cmd": "slip_outcome", "game": "game-000099", "outcome": "recorded", "why": None})
    refused = ack(rec, "so1")
    assert refused["ok"] is False and "not this clock's current game" in refused["reason"]
    send(hall_broker, 3, {"id": "so2", "cmd": "slip_outcome", "game": game, "outcome": "recorded", "why": "agrees with the pairing"})
    a = ack(rec, "so2")
    assert a["ok"] is True
    line = [j for j in live.journal() if j["input"] == "slip_outcome"][-1]
    assert (line["outcome"], line["source"], line["command"], a["seq"]) == ("recorded", "hall", "so2", line["seq"])
    assert until(lambda: live.texts() == ("rEC", "rEC"), timeout=5)


# --- the console reads a slip event (before the console's own flow for it: issue 27's console side) ---

P = "rackside/v1/h/"


def test_the_console_keeps_a_slip_event_apart_from_the_result():
    """A slip is an event of its own kind: a console that has not seen the game's result (it
    started later, a resend brings them in any order) never takes the slip for the result."""
    import json

    from rackside.hall.console.state.hallstate import HallState

    h = HallState("h")
    slip = {"kind": "slip", "game": "game-000001", "seq": 14, "scores": [412, 350], "penalties": [0, 0],
            "final": [412, 350], "numbers": [None, None], "ending": "end", "forfeits": [], "recounted": False, "at": None}
    out = h.on_message(P + "table/3/event", json.dumps(slip).encode())
    assert h.tables[3].result is None and ("event", {"table": 3, "event": slip}) in out
    assert h.tables[3].history[-1]["kind"] == "slip"
    h.tables[3].tile()  # and the table's tile is still drawn


def test_a_slip_lost_to_a_crash_is_recovered_from_the_journal_and_resent(monkeypatch, tmp_path):
    """The outbox never saw the final signature (a crash, a full queue): the journal holds the slip
    beside it, so the recovery puts the slip event back, and a console's resend brings it too."""
    import json

    from rackside.hall.device.recovery import JournalRecovery
    from rackside.hall.wire import resend

    from support.firmware_rig import Rig
    from support.keypad_scan import KeypadRig

    rig = Rig(monkeypatch, tmp_path / "state")
    keypad = KeypadRig(rig)
    rig.after_ms(10)
    rig.tap("left")
    rig.down("neutralise").advance_ms(3200)
    rig.up("neutralise").advance_ms(50)
    keypad.type("412#350#")
    rig.tap("left")
    rig.tap("right")
    keypad.close()
    rig.close()
    journals = tmp_path / "state" / "journals"
    topic = {"event": "ev", "result": "res"}
    found = JournalRecovery(journals, topic).missing(lambda game: (0, True))
    slips = [json.loads(p) for t, p, _, _ in found[0].rows if json.loads(p)["kind"] == "slip"]
    assert len(slips) == 1 and slips[0]["scores"] == [412, 350] and slips[0]["at"] is None
    ok, _, payloads = resend.answer(journals, "game-000001", 1, None)
    assert ok and [json.loads(p)["kind"] for p in payloads].count("slip") == 1


def test_the_console_takes_a_slip_that_has_its_signatures_seq():
    """A real clock publishes the signature's input event and then the slip with that same seq
    (hall.device.clock_output, hall.wire.resend, docs/hall.md): the console once took the slip for a
    repeat of that event and dropped it, so no slip of a real clock was ever recorded or answered
    (tests/test_paperless_round.py found it). A redelivery is handed on again, to be answered again
    (a clock whose answer was lost gets one), and kept in the history once; in a resend's order (the
    slip first) the signature's input is still taken."""
    import json

    from rackside.hall.console.state.hallstate import HallState

    h = HallState("h")
    sign = {"kind": "input", "game": "game-000001", "seq": 14, "t_ns": 10**9, "input": "slip_sign", "player": 2,
            "at": None}
    slip = {"kind": "slip", "game": "game-000001", "seq": 14, "scores": [412, 350], "penalties": [0, 0],
            "final": [412, 350], "numbers": [12, 31], "ending": "end", "forfeits": [], "recounted": False, "at": None}
    h.on_message(P + "table/3/event", json.dumps(sign).encode())
    out = h.on_message(P + "table/3/event", json.dumps(slip).encode())
    assert ("slip", {"table": 3, "slip": slip}) in out
    again = h.on_message(P + "table/3/event", json.dumps(slip).encode())
    assert again == [("slip", {"table": 3, "slip": slip})]
    assert [e["kind"] for e in h.tables[3].history].count("slip") == 1
    h2 = HallState("h")
    assert ("slip", {"table": 3, "slip": slip}) in h2.on_message(P + "table/3/event", json.dumps(slip).encode())
    assert ("event", {"table": 3, "event": sign}) in h2.on_message(P + "table/3/event", json.dumps(sign).encode())
