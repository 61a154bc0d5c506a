"""What a clock and a station publish (docs/hall.md, "Topics, v1"), one schema each (hall.wire.schema):
a clock's `state`, its `event`s (an input, the game's `result`, or its signed `slip`) and its command `ack`s; a
station's `challenge` and its `detail`. hall.wire.payloads writes them on the device; the console
reads every one with these schemas (hall.console.state.contract) before it touches the hall state, and
the device's payloads are checked against them by the tests; so a field added here is read,
checked, at the console with no further code. Pure.

Readers ignore the fields they do not know (a newer device may send more); a field named here is of
its type, in its range and size, or the message is refused naming it.
"""

from __future__ import annotations

import re
from typing import Any

from rackside.game.call import CALL_HOW, CALL_ID, MAX_REASON_CHARS, CallError, check_how
from rackside.game.checkin import MAX_PLAYER_NUMBER, MAX_ROUND
from rackside.game.clock import Ending, Phase, Rules
from rackside.game.messages import KEYPAD_KEYS
from rackside.game.slip import SCORE_BOUND, SLIP_WHY_CHARS  # a typed score's bound, a slip outcome's reason: the game's
from rackside.hall.wire import health, topics, update
from rackside.hall.wire.schema import OMIT, Check, Flag, Invalid, ListOf, Obj, OneOf, Schema, Text, Time, Whole, field_path


STATUSES = (health.ONLINE, health.OFFLINE)  # a device's `status`: its will (and an older device) says the bare word
PHASES = tuple(p.value for p in Phase)
ENDINGS = tuple(e.value for e in Ending)
# the rules a state carries, for the page and readiness (5.3 penalty, 5.3.3 forfeit line, 2.3.6(a) margin,
# game time; 2.3.4's optional forfeit and 3.10.6(a)'s courtesy draw, so every game rule of the event's
# [event] is seen, issue 38; an older clock sends the first four, the console takes the core's defaults)
STATE_RULES = ("game_time_ms", "penalty_per_minute", "forfeit_overtime_ms", "lateness_forfeit_margin",
               "optional_forfeit_below_ms", "courtesy_draw_after_ms")
NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")  # a game, a command's id, an input's source
EVENT_OR_NONE = re.compile(f"(?:{topics.EVENT.pattern})|^$")  # a state's event: an event's id, or "" (none)
ID = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")  # a challenge's id, a lexicon's name
WORD = re.compile(r"^[A-Za-z0-9_ .-]{1,24}$")
TAKE = re.compile(r"^[a-z_]{1,23}\.[a-z_]{1,24}$")  # a later command field a device takes: "pairing.names"
LOWER = re.compile(r"^[a-z_]+$")
BIG = 10**12  # ms and ns fields: beyond any game, within JSON's exact integers
NS = 2**63

SIDE = OneOf((1, 2))
_OPT = {"default": OMIT, "null": True}  # an optional field: left out when absent or null


def _player(live: bool) -> Schema:
    fields = {"player": SIDE, "remaining_ms": Whole(-BIG, BIG), "overtime_s": Whole(0, BIG // 1000),
              "penalty": Whole(0, 10**6), "forfeit": Flag()}
    if live:  # not yet arrived after a late start: the page ticks their time (2.3.2(a))
        fields["absent"] = Flag(default=False)
    return Schema(fields)


def _sides_in_order(m: dict, where: str) -> dict:
    for i, p in enumerate(m["players"]):
        if p["player"] != i + 1:
            raise Invalid(f"players[{i}].player", f"{i + 1} (side {i + 1}'s object comes {'first' if i == 0 else 'second'})", p["player"])
    return m


def _players(live: bool) -> ListOf:
    return ListOf(Obj(_player(live)), least=2, most=2, says="a list of the two sides")


def _rules(v: Any) -> dict:
    """The game's rules as the clock sent them (the keys given), checked by the clock core's own Rules."""
    if not isinstance(v, dict):
        raise ValueError()
    given = Schema({k: Whole(0, BIG, default=OMIT, null=True) for k in STATE_RULES}).check(v, "rules")
    try:
        Rules(**given)
    except ValueError as e:
        raise Invalid("rules", "the clock's rules", v, line=f"rules: {e}") from None
    return given


def _table(v: Any) -> int:
    """A challenge's table: a number, or the text of one (a station's log keeps what was typed)."""
    if isinstance(v, str) and v.isdigit() and len(v) <= 4:
        v = int(v)
    return Whole(1, topics.MAX_TABLE).check(v, "table")


# A clock publishes its retained state on every input and at least this often while it is on (a
# page that sees a running clock's sent_at grow older than this knows the state is stale)
STATE_EVERY_S = 10


GAME_EVENT = {  # which event a game is of (issue 35), in its state and its result
    # the event the hall started this game for (its new_game's `event`); "" for a game the hall did
    # not start for an event (the clock's own first game, a stand-alone practice game); an older clock sends none
    "event": Text(64, least=0, pattern=EVENT_OR_NONE, shape="an event's id, or \"\"", default=OMIT),
    # the game was played stand-alone, without a hall (a practice game): never any event's
    "alone": Flag(default=OMIT),
}

STATE = Schema({
    "seq": Whole(0, BIG),
    "game": Text(64, pattern=NAME),
    "phase": OneOf(PHASES),
    "running": OneOf((1, 2), null=True),
    # whose time the centre press restarts, also while neutralised (a takeover needs it); an older clock sends none
    "to_move": OneOf((1, 2), default=OMIT, null=True),
    "players": _players(live=True),
    "ending": OneOf(ENDINGS, null=True),
    "sent_at": Time(),
    # the running game's rules (the console takes the core's defaults for a state without: an older clock)
    "rules": Check(_rules, says="an object with " + ", ".join(STATE_RULES), default={}, null=True),
    # the Rackside the clock runs: the update section of the Devices page shows it
    "version": Text(64, pattern=update.VERSION, null=True),
    # a keypad is fitted (issue 27): only then do its players check in, so only then is a side not
    # checked in absent (2.3.2(a)); an older clock sends none and has none
    "keypad": Flag(default=False),
    **GAME_EVENT,
}, then=_sides_in_order)


def _call_how_agrees(m: dict, where: str) -> dict:
    """A call's `how` agrees with its side (game.call.check_how, the clock's own journal check):
    `#` with a side's button names that side, `#` alone and the buttons' gesture none."""
    if m["input"] == "call":
        try:
            check_how(m.get("how"), m.get("player"))
        except CallError as e:
            field = field_path(where, "how")
            raise Invalid(field, "", m.get("how"), line=f"{field}: {e}") from None
    return m


EVENT_KINDS = ("input", "result", "slip")
INPUT = Schema({  # an input event: the journal's line (docs/journal.md) with its game, seq and time
    "kind": OneOf(EVENT_KINDS),
    "game": Text(64, pattern=NAME),
    "seq": Whole(1, BIG),
    "t_ns": Whole(0, NS),
    "input": Text(24, pattern=LOWER),
    "at": Time(null=True),
    # optional, by input (docs/journal.md)
    "player": OneOf((1, 2), **_OPT),
    "players": ListOf(SIDE, most=2, distinct=True, says="a list of side 1 and/or 2", **_OPT),
    "remaining_ms": Whole(-BIG, BIG, **_OPT),
    "source": Text(16, pattern=NAME, **_OPT),
    "command": Text(64, pattern=NAME, **_OPT),
    "by": Text(64, **_OPT),
    "reason": Text(MAX_REASON_CHARS, **_OPT),
    "scheduled_start": Text(40, **_OPT),
    "at_ns": Whole(0, NS, **_OPT),
    "key": OneOf(KEYPAD_KEYS, **_OPT),  # a keypad's key: check-in's typing (game.checkin), slip_key's (game.slip)
    "outcome": Text(16, pattern=LOWER, **_OPT),  # slip_outcome: the console's answer, and why
    "why": Text(SLIP_WHY_CHARS, **_OPT),
    "recorded": ListOf(Whole(-SCORE_BOUND, SCORE_BOUND), least=2, most=2, says="the two scores recorded", **_OPT),
    "rebooted": Flag(**_OPT),
    "from_checkpoint": Flag(**_OPT),
    # the table's inputs (issue 27, game.table): a check-in's TSH player number,
    # a pairing's round, numbers and starter (2.1), a seat's table, a call's id and how it was made
    # (game.call: `#` alone, `#` with a side's button, the buttons' gesture; an older clock's has none)
    "number": Whole(1, MAX_PLAYER_NUMBER, **_OPT),
    "round": Whole(1, MAX_ROUND, **_OPT),
    "numbers": ListOf(Whole(1, MAX_PLAYER_NUMBER), least=2, most=2, says="a list of two player numbers", **_OPT),
    "starter": Whole(1, MAX_PLAYER_NUMBER, **_OPT),
    "table": Whole(1, topics.MAX_TABLE, **_OPT),
    "call": Text(12, pattern=CALL_ID, **_OPT),
    "how": OneOf(CALL_HOW, **_OPT),
}, then=_call_how_agrees)


RESULT = Schema({  # the game's result: an event of kind "result", seq 0
    "kind": OneOf(("result",)),
    "game": Text(64, pattern=NAME),
    "seq": OneOf((0,), says="0 (a result's seq)"),
    "ending": OneOf(ENDINGS, null=True),
    "players": _players(live=False),
    "forfeits": ListOf(SIDE, most=2, distinct=True, says="a list of side 1 and/or 2"),
    "winner_by_forfeit": OneOf((1, 2), null=True),
    "lateness_margin": Whole(0, SCORE_BOUND, null=True),
    "at": Time(null=True),
    **GAME_EVENT,
}, then=_sides_in_order)



def _player_number(v: Any) -> int | None:
    if v is None:
        return None
    return Whole(1, MAX_PLAYER_NUMBER).check(v, "numbers")


def _pair(item, says: str) -> ListOf:
    return ListOf(item, least=2, most=2, says=says)


SLIP = Schema({  # a signed result slip (game.slip): an event of kind "slip", once both players signed
    "kind": OneOf(("slip",)),
    "game": Text(64, pattern=NAME),
    "seq": Whole(1, BIG),  # the journal seq of the signature that made it final
    "scores": _pair(Whole(0, SCORE_BOUND), "the two scores as typed, side 1 then side 2"),
    "penalties": _pair(Whole(0, 10**6), "the clock's two time penalties (5.3)"),
    # after penalties; an overtime forfeiter's at least 100 points off (5.3.3)
    "final": _pair(Whole(-10**6, SCORE_BOUND), "the two scores after penalties"),
    "numbers": _pair(Check(_player_number, says=f"a TSH player number from 1 to {MAX_PLAYER_NUMBER}, or null"),
                     "the two sides' TSH player numbers from check-in (null: not checked in)"),
    "ending": OneOf(ENDINGS, null=True),
    "forfeits": ListOf(SIDE, most=1, says="[] or the overtime forfeiter's side (5.3.3)", default=[]),
    "recounted": Flag(default=False),  # a recount was asked for (5.5.1)
    "at": Time(null=True),
})

ACK = Schema({  # a command's answer
    "id": Text(64, pattern=NAME, null=True),
    "ok": Flag(),
    "reason": Text(300, null=True),
    "seq": Whole(0, BIG, null=True),
    "at": Time(null=True),
    # an update command's outcome (hall.device.update)
    "update": Obj(Schema({"version": Text(64, pattern=update.VERSION), "outcome": OneOf(update.OUTCOMES)}), **_OPT),
})

CHALLENGE = Schema({  # a station's challenge, without its per-word results
    "id": Text(80, pattern=ID),
    "table": Check(_table, says=f"a table number from 1 to {topics.MAX_TABLE}", null=True),
    "time": Time(null=True),
    "kind": Text(16, pattern=LOWER, null=True),
    "lexicon": Text(32, pattern=ID, null=True),
    "lexicon_checksum": Text(128, pattern=re.compile(r"^[0-9a-fA-F]+$"), null=True),
    "verdict": Text(24, pattern=re.compile(r"^[A-Za-z_ -]+$"), null=True),
    "words": Whole(0, 64, **_OPT),  # how many
})
# ... and with them, for the director's eyes only
DETAIL = CHALLENGE.extended(words=ListOf(Obj(Schema({"word": Text(24, pattern=WORD), "valid": Flag()})), most=64,
                                         says="a list of at most 64 objects with word and valid"))

# Each JSON message by its topic leaf (an event of kind "result" is a RESULT); looked up when a
# message is read, so a schema replaced or extended here is the one every reader checks with.
def _number(lo: float, hi: float) -> Check:
    """A finite number (int or float, never a bool) from `lo` to `hi`, kept as a float."""
    def test(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise ValueError()
        return float(v)
    return Check(test, says=f"a number from {lo:g} to {hi:g}", null=True)


def _health_field(kind: type, lo: float, hi: float):
    if kind is bool:
        return Flag(null=True)
    if kind is str:
        return Text(int(hi), pattern=WORD, null=True)
    if kind is int:
        return Whole(int(lo), int(hi), null=True)
    return _number(lo, hi)


# A device's retained status while online (issue 26; hall.wire.health): every health field of its
# kind and range, or null (the device cannot read it); unknown fields are dropped.
HEALTH = Schema({k: _health_field(*v) for k, v in health.FIELDS.items()})
STATUS = Schema({
    "status": OneOf(STATUSES),
    "version": Text(health.VERSION_CHARS, pattern=update.VERSION, null=True),
    "health": Obj(HEALTH, null=True),
    # the later optional command fields the device takes (hall.wire.commands.LATER_FIELDS): none from a
    # device of before them, which refuses them; one this reader does not know is kept and never used
    "takes": ListOf(Text(health.TAKE_CHARS, pattern=TAKE, shape='of the form "command.field"'), most=health.MAX_TAKES,
                    null=True, default=[], says=f'a list of at most {health.MAX_TAKES} "command.field" texts'),
})

SCHEMAS: dict[str, Schema] = {"state": STATE, "event": INPUT, "result": RESULT, "ack": ACK, "challenge": CHALLENGE,
                              "detail": DETAIL, "slip": SLIP}


def schema_of(leaf: str, message: dict) -> Schema:
    """The schema a JSON message on `leaf` is read with."""
    if leaf == "event" and message.get("kind") in ("result", "slip"):
        return SCHEMAS[message["kind"]]
    return SCHEMAS[leaf]
