"""One schema per message (issue 24 item 3): a director's command, what a clock or a station
publishes, and the hello are each described once (hall.wire.schema) and checked with that one
description at every end: the console's check of a director's command (hall.console.state.requests), the
clock's parser (hall.wire.commands.parse) and runner, the console's contract (hall.console.state.contract)
and the director's fleet (hall.wire.join). A field added to a schema is checked everywhere with no
further code, and every refusal is one line naming the field."""

from __future__ import annotations

import json

import pytest

from rackside.game.clock import End, Press, Rules, new_clock, view
from rackside.game.clock import apply as clock_apply
from rackside.game.messages import Request
from rackside.firmware.requests import ARGS
from rackside.hall.console.state import contract, requests
from rackside.hall.console.state.hallstate import HallState
from rackside.hall.wire import commands, join, messages, payloads, topics
from rackside.hall.wire.schema import OMIT, Flag, Invalid, ListOf, OneOf, Schema, Text, Time, Whole

NS = 10**9
WALL = 1_800_000_000 * NS


def console_command(body: dict) -> dict:
    """What the console's POST /api/command checks and sends, for a body from the page."""
    return requests.command({"tables": [1], **body}, None, 25 * 60_000, "director")


def clock_parses(command: dict) -> commands.Command:
    """What a clock's hall intake does with a command from the broker (hall.device.intake)."""
    return commands.parse(json.dumps({"id": "c1", **command}).encode())


# --- the acceptance: a field added to a schema is checked at both ends ---------------------------------


def test_a_field_added_to_a_commands_schema_is_checked_by_the_console_and_by_the_clock(monkeypatch):
    # before: the field is no command's: the clock refuses it, naming it, and the console does not send it
    with pytest.raises(commands.CommandError, match="unknown field 'colour'"):
        clock_parses({"cmd": "identify", "colour": "red"})
    assert "colour" not in console_command({"cmd": "identify", "colour": "red"})

    extended = commands.SCHEMAS["identify"].extended(colour=OneOf(("red", "green"), null=True))
    monkeypatch.setitem(commands.SCHEMAS, "identify", extended)

    # the console takes it from the page's body and checks it: no code of its own for it
    assert console_command({"cmd": "identify", "colour": "red"}) == {"cmd": "identify", "by": "director", "colour": "red"}
    with pytest.raises(ValueError) as console_says:
        console_command({"cmd": "identify", "colour": "blue"})
    # ... and the clock's parser checks it the same way
    assert clock_parses({"cmd": "identify", "colour": "green"}).name == "identify"
    with pytest.raises(commands.CommandError) as clock_says:
        clock_parses({"cmd": "identify", "colour": "blue"})
    assert str(console_says.value) == str(clock_says.value) == 'identify: colour must be one of "red", "green" or null, not "blue"'


def test_a_field_added_to_a_messages_schema_is_checked_by_the_consoles_contract(monkeypatch):
    state = json.loads(clock_state())
    extended = messages.SCHEMAS["state"].extended(battery_pct=Whole(0, 100, null=True))
    monkeypatch.setitem(messages.SCHEMAS, "state", extended)

    assert contract.read("state", json.dumps({**state, "battery_pct": 80}).encode())["battery_pct"] == 80
    with pytest.raises(contract.Refused, match=r"^battery_pct must be a whole number from 0 to 100, not 101$"):
        contract.read("state", json.dumps({**state, "battery_pct": 101}).encode())
    # through the console's own reading of the broker's messages: a problem on the table's tile
    hall = HallState("h")
    out = hall.on_message(topics.table("h", 4, "state"), json.dumps({**state, "battery_pct": True}).encode())
    assert [kind for kind, _ in out] == ["problem"] and "battery_pct must be" in json.dumps(out[0][1])


def test_the_runner_checks_identify_with_the_hall_commands_own_field(rig):
    assert ARGS["identify"].fields["seconds"] is commands.FIELDS["identify"]["seconds"]
    answers = []
    for seconds in (61, True, 60):
        rig.runner.submit(Request(rig.now, "identify", {"seconds": seconds}, reply=lambda ok, why: answers.append((ok, why))))
    rig.pump()
    with pytest.raises(commands.CommandError) as parser:
        clock_parses({"cmd": "identify", "seconds": 61})
    assert answers[0] == (False, str(parser.value))  # the same line from the hall's parser and the runner
    assert answers[1] == (False, "identify: seconds must be a whole number from 1 to 60, not true")
    assert answers[2] == (True, "")


# --- the device writes what the schema describes ----------------------------------------------------


def clock_state(**kw) -> bytes:
    c = new_clock(Rules())
    c = clock_apply(c, Press(NS, 2))  # player 1's time runs
    return payloads.state_payload(view(c, 5 * NS), "game-000001", 1, WALL, Rules(), "0.1.0", **kw)


def test_every_message_a_clock_writes_is_read_whole_by_its_schema():
    c = clock_apply(clock_apply(new_clock(Rules()), Press(NS, 2)), End(3 * NS))
    state, result = json.loads(clock_state()), json.loads(payloads.result_payload(view(c, 4 * NS), "game-000001", WALL))
    ack = json.loads(payloads.ack_payload("c1", True, None, 3, WALL, update={"version": "0.1.0", "outcome": "switched"}))
    event = json.loads(payloads.event_payload({"t_ns": NS, "input": "adjust", "player": 1, "remaining_ms": 5000,
                                               "source": "hall", "command": "c1", "by": "td", "reason": "knock"}, "game-000001", 2, WALL))
    for schema, message in ((messages.STATE, state), (messages.ACK, ack), (messages.INPUT, event)):
        assert schema.check(message) == message  # every field it writes is named, and of its kind
    # whether the clock has a keypad (issue 27: only then can its players check in); an older clock's is false
    assert state["keypad"] is False and json.loads(clock_state(keypad=True))["keypad"] is True
    assert messages.STATE.check({k: v for k, v in state.items() if k != "keypad"})["keypad"] is False
    # a result's sides are read without `absent` (a finished game has no one arriving to tick)
    assert messages.RESULT.check(result) == {**result, "players": [{k: v for k, v in p.items() if k != "absent"} for p in result["players"]]}
    summary, detail = payloads.challenge_payloads({"id": "ch-1", "time": "2026-11-30T10:00:00", "table": 4, "kind": "self",
                                                   "words": ["QI", "ZZX"], "per_word": [True, False], "acceptable": False}, "s1")
    for schema, message in ((messages.CHALLENGE, json.loads(summary)), (messages.DETAIL, json.loads(detail))):
        assert schema.check(message) == {k: v for k, v in message.items() if k != "station"}  # the topic names the station


def test_a_call_event_says_how_the_call_was_made_and_an_older_one_without_is_read():
    """A call from `#` held alone, from `#` with a player's own button, or from the three buttons'
    gesture (game.call): the event carries `how`; an older clock's event has none."""
    from rackside.game.call import BUTTONS, KEYPAD, SIDE, Call
    from rackside.game.journal import input_to_dict

    for call in (Call(NS, None, "call-1", KEYPAD), Call(NS, 2, "call-1", SIDE), Call(NS, None, "call-1", BUTTONS), Call(NS, None, "call-1")):
        event = json.loads(payloads.event_payload(input_to_dict(call), "game-000001", 2, WALL))
        assert messages.INPUT.check(event) == event and event.get("how") == call.how
    with pytest.raises(contract.Refused, match=r"^how "):
        contract.read("event", json.dumps({**event, "how": "elbow"}).encode())
    # how and the side agree where the call enters the console, as the clock's own journal checks
    # them (game.call.check_how): a side's call names its side, a keypad's or the buttons' none
    side = json.loads(payloads.event_payload(input_to_dict(Call(NS, 2, "call-1", SIDE)), "game-000001", 2, WALL))
    keypad = json.loads(payloads.event_payload(input_to_dict(Call(NS, None, "call-1", KEYPAD)), "game-000001", 2, WALL))
    for bad in ({k: v for k, v in side.items() if k != "player"}, {**keypad, "player": 1}, {**keypad, "how": BUTTONS, "player": 2}):
        with pytest.raises(contract.Refused, match=r"^how: a call made by (side has a side, got side None|keypad has no side, got side 1|buttons has no side, got side 2)$"):
            contract.read("event", json.dumps(bad).encode())
    assert messages.INPUT.check({**keypad, "how": None, "player": 1})["player"] == 1  # an older clock's: any side
    assert messages.INPUT.check({**keypad, "input": "press", "player": 1, "how": KEYPAD})  # only a call's how is a call's


def test_the_hello_a_device_writes_is_the_one_the_director_reads():
    key = b"k" * 294  # a device's public key (DER); the hello's check does not parse it
    d = json.loads(join.hello_payload("pi-1", "clock", key, version="0.1.0", address="10.0.0.7", asks=12))
    assert join.HELLO.check(d) == {**d, "key": key}
    kid = join.key_id(key)
    with pytest.raises(ValueError, match=r"^hello from pi-1: asks must be a table number from 1 to 999, not 1000$"):
        join.parse_hello(kid, json.dumps({**d, "asks": 1000}).encode())
    hello = join.parse_hello(kid, json.dumps(d).encode())
    reply = join.parse_reply(kid, join.reply_payload(hello, "table-12", sealed=b"s" * 256))
    assert reply.user == "table-12" and reply.sealed == b"s" * 256 and reply.hello.device == "pi-1"
    assert join.parse_reply(kid, join.reply_payload(hello, None)).user is None


# --- refusals: one line naming the field --------------------------------------------------------------


def _bad_side(state: dict) -> dict:
    state["players"][1]["remaining_ms"] = 1.5
    return state


@pytest.mark.parametrize("leaf, message, field", [
    ("state", lambda: _bad_side(json.loads(clock_state())), "players[1].remaining_ms"),
    ("state", lambda: {**json.loads(clock_state()), "players": json.loads(clock_state())["players"][::-1]}, "players[0].player"),
    ("event", lambda: {"kind": "input", "game": "game-000001", "seq": 1, "t_ns": 5, "input": "adjust", "remaining_ms": "5"}, "remaining_ms"),
    ("ack", lambda: {"ok": True, "update": {"version": "0.1.0", "outcome": "maybe"}}, "update.outcome"),
    ("detail", lambda: {"id": "x1", "words": [{"word": "QI", "valid": 1}]}, "words[0].valid"),
])
def test_a_refused_device_message_is_one_line_naming_the_field(leaf, message, field):
    with pytest.raises(contract.Refused) as e:
        contract.read(leaf, json.dumps(message()).encode())
    line = str(e.value)
    assert "\n" not in line and line.startswith(field + " "), line


def test_the_kinds_take_what_they_say_and_nothing_else():
    s = Schema({"n": Whole(1, 5), "t": Text(3), "f": Flag(default=False), "at": Time(zone=True, null=True),
                "sides": ListOf(OneOf((1, 2)), most=2, distinct=True, default=OMIT, null=True)})
    assert s.check({"n": 5, "t": "abc", "extra": [1]}) == {"n": 5, "t": "abc", "f": False, "at": None}
    for bad, field in [({"n": True, "t": "a"}, "n"), ({"n": 5.0, "t": "a"}, "n"), ({"n": "5", "t": "a"}, "n"),
                       ({"n": 1, "t": ""}, "t"), ({"n": 1, "t": "a", "f": 0}, "f"),
                       ({"n": 1, "t": "a", "at": "2026-11-30T10:00:00"}, "at"), ({"n": 1, "t": "a", "sides": [1, 1]}, "sides"),
                       ({"t": "a"}, "n")]:
        with pytest.raises(Invalid) as e:
            s.check(bad)
        assert e.value.field == field and "\n" not in str(e.value)
    assert Whole(1, 5, text=True).check("3", "n") == 3  # a form's field
    with pytest.raises(Invalid, match=r"^token must be 32"):  # a secret is never echoed
        Text(64, pattern=__import__("re").compile("^x{32}$"), says="32 x", hide=True).check("y" * 40, "token")
    refusing = Schema({"n": Whole(1, 5)}, unknown="refuse")
    with pytest.raises(Invalid, match=r"^unknown field 'm': allowed are n$"):
        refusing.check({"n": 1, "m": 2})


def test_a_fraction_is_not_a_whole_number_at_the_consoles_requests():
    """The console's request check took int(v): a round number 2.5 became round 2, a slip's score
    350.7 became 350, silently. A number from the page is a whole number, or the text of one."""
    assert requests.whole("3", "round", 1, 999) == 3 and requests.whole(3, "round", 1, 999) == 3
    for bad in (2.5, "2.5", True, "", None, [3]):
        with pytest.raises(ValueError, match=r"^round must be a whole number from 1 to 999, not "):
            requests.whole(bad, "round", 1, 999)
    body = {"slip": ["350.7", 300]}
    with pytest.raises(ValueError, match="score"):
        requests.result_body(body)
