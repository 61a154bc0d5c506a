"""The director's commands to a clock (`.../table/<n>/cmd`), checked whole before the clock sees them.

A command is one JSON object, at most MAX_COMMAND_BYTES:

    {"id": "c17", "cmd": "adjust", "player": 1, "remaining_ms": 540000}
    {"id": "c18", "cmd": "late_start", "players": [2], "at": "2026-11-30T10:00:00+00:00"}
    {"id": "c19", "cmd": "arrive", "player": 2}
    {"id": "c20", "cmd": "new_game", "game_time": "25:00", "rules": {"penalty_per_minute": 10}}
    {"id": "c21", "cmd": "identify"}
    {"id": "c22", "cmd": "adjust", "player": 2, "remaining_ms": 60000, "by": "director", "reason": "clock knocked"}
    {"id": "c23", "cmd": "takeover", "player": 1, "by": "director", "reason": "takeover of table 12 ..."}
    {"id": "c30", "cmd": "resend", "game": "game-000003", "from_seq": 12, "to_seq": 20}
    {"id": "c50", "cmd": "pairing", "round": 3, "numbers": [12, 7], "starter": 7}
    {"id": "c51", "cmd": "seat", "number": 12, "table": 14}
    {"id": "c52", "cmd": "call_ack", "call": "call-1"}
    {"id": "c53", "cmd": "call_resolve", "call": "call-1", "reason": "tile count checked"}
    {"id": "c54", "cmd": "slip_outcome", "game": "game-000003", "outcome": "recorded", "why": null}
    {"id": "c40", "cmd": "update", "version": "0.1.0+g1a2b3c4", "sha256": "<64 hex>",
     "url": "https://console.local:8443/update/bundle.tar.gz", "token": "<the table's own>", "wait_s": 0}

`takeover` (hall.director.takeover, after a new_game and the adjustments) puts a spare clock's game, before its
first press, in the neutralised phase with `player` to move (1.4.1(b)): the centre press restarts that
player's time, as on the old clock.

`resend` is not a clock input: the clock's hall output answers it from its journal (the events of
`game` with `from_seq` <= seq <= `to_seq`, and the result if that game ended), never reaching the
runner (hall.device.clock_output says how many at most, and how often).

`slip_outcome` is the console's answer to a signed result slip (issue 27; game.slip): "recorded",
"held" (for the scorekeeper's click) or "refused", with `why`, and `recorded`, the result recorded for
the game instead (by the clock's sides, after penalties: issue 36); the clock journals it beside the slip
and shows it, and a player's own button on a refused slip calls the director. It names the `game` the slip is of: one for another game is refused.
`pairing`, `seat`, `call_ack` and `call_resolve` are the table's (issue 27; game.table): the
round's pairing at this table and who starts (2.1(b)(i)), where a player who checked in at the wrong
table plays, and the director's answer to a call from the table (1.4.3). The clock journals each
as an input of the game with "source": "hall" (docs/journal.md):

    {"id": "c50", "cmd": "pairing", "round": 3, "numbers": [12, 31], "starter": 31}
    {"id": "c51", "cmd": "seat", "number": 7, "table": 14}
    {"id": "c52", "cmd": "call_ack", "call": "call-1", "by": "director"}
    {"id": "c53", "cmd": "call_resolve", "call": "call-1", "reason": "word judged; play on"}

`update` is not a clock input either: the hall output hands it to hall.device.update.Updater, which
fetches the bundle from `url` with `token`, checks it against `sha256` and installs it, switching
only between games (waiting up to `wait_s` for the game in progress to end); a version older than
the one installed only with `"allow_downgrade": true`, the director's confirmation; its ack is the
outcome (docs/fleet.md, "Updates").

Any command may carry `by` (who sent it, at most 64 characters) and `reason` (why, at most 200):
the clock journals them beside the input with "source": "hall", so its own journal says who and why.
A late start's optional `at` is the round's scheduled start (ISO 8601 with its time zone): the clock
dates the late start from it (2.3.2(a), 2.3.3(a)), taking one at most 5 s in the future as now (the
director's machine and the Pi keep slightly different time), refusing one further ahead or one so long
ago that an absent player's whole time has already run out (hall.device.clock_output); without it, from the
command. Every command's `id` is journalled beside the input it became (as "command").

Each command is one entry in `SPECS` (a `Spec`): its fields with their bounds, who answers it on the
clock (`ANSWERERS`: the runner's game, table, slip or displays, or the hall output's journal or
updater), whether the director's page may send it, how it becomes the runner's request
(`Command.request`) and that request a game input. The console (hall.console.state.requests), the clock's
intake and hall output (hall.device), the runner (firmware.requests) and the demo (hall.console.demohall.sim)
read it and spell no command's name: adding a command is its entry, with an example that
tests/test_command_table.py sends from the console to its answerer.

`parse` returns a `Command` or raises `CommandError` saying why, which the clock sends back in the
command's ack; nothing in a command can raise anything else. `rules` takes the keys of clock.toml's
[clock] section (firmware.config), checked by the same code, so a hall command can set nothing a
director could not set on the clock itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields as dataclass_fields
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from rackside.game.call import CALL_ID, MAX_REASON_CHARS, CallAck, CallResolve
from rackside.game.checkin import MAX_NAME_CHARS, MAX_PLAYER_NUMBER, MAX_ROUND, Pairing, Seat
from rackside.game.clock import Adjust, Arrive, LateStart, Rules, Takeover
from rackside.game import slip
from rackside.hall.wire import topics, update
from rackside.hall.wire.schema import Check, Field, Flag, Invalid, ListOf, OneOf, Schema, Text, Time, Whole

MAX_COMMAND_BYTES = 4096
IDENTIFY_S = 10
IDENTIFY_MAX_S = 60  # the longest an identify may flash a clock's displays (the clock checks it too)
# A late start's `at` this far ahead of the clock's own time is taken as now: the director's machine
# and a Pi keep slightly different time (NTP on a hall network without internet is not a given).
FUTURE_TOLERANCE_NS = 5 * 10**9
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
NOTES = {"by": 64, "reason": MAX_REASON_CHARS}  # optional on every command: the longest each may be
_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
# A game is its journal's name on the clock (firmware.persist: journals/game-000003.jsonl), the
# `game` of every event and state: never a path.
GAME = re.compile(r"^game-[0-9]{6,12}$")
MAX_SEQ = 2**53  # a seq as JSON numbers hold it exactly
# How far a director may set a player's time (1.4.1(b)): above 20 minutes of overtime (past the
# 10-minute forfeit of 5.3.3, so a forfeited game can still be corrected) and at most 100 minutes.
ADJUST_ABOVE_MS = -20 * 60_000
ADJUST_MAX_MS = 100 * 60_000


# --- each command's schema (hall.wire.schema): the console's check and the clock's are these ---------

def _url(v: Any) -> str:
    if (not isinstance(v, str) or len(v) > update.MAX_URL_CHARS or not v.startswith(("http://", "https://"))
            or not v.endswith(update.DOWNLOAD_PATH) or any(c.isspace() for c in v)):
        raise ValueError()
    return v


def _rules_object(v: Any) -> dict:
    if not isinstance(v, dict):
        raise ValueError()
    return v


def _new_game_rules(c: dict, where: str) -> dict:
    """game_time and rules together are a [clock] table, checked by the clock's own code (WESPA's
    defaults for the keys not given; `parse` checks again on the clock's own defaults)."""
    from rackside.game.rules_table import ConfigError, rules_from_table

    try:
        rules_from_table({**c["rules"], "game_time": c["game_time"]})
    except ConfigError as e:
        raise Invalid("rules", "clock.toml's [clock] keys", c["rules"], line=str(e)) from None
    return c


def _resend_range(c: dict, where: str) -> dict:
    if c["to_seq"] is not None and c["to_seq"] < c["from_seq"]:
        raise Invalid("to_seq", f"a whole number from from_seq to {MAX_SEQ}", c["to_seq"])
    return c


PLAYER = OneOf((1, 2), says="1 or 2")  # a side of the table
NUMBER = Whole(1, MAX_PLAYER_NUMBER)  # a TSH player number (game.checkin)
CALL = Text(12, pattern=CALL_ID, says='a call\'s id on the clock, e.g. "call-1"')


def _pairing(c: dict, where: str) -> dict:
    if c["numbers"][0] == c["numbers"][1]:
        raise Invalid("numbers", "two different player numbers", c["numbers"])
    if c["starter"] is not None and c["starter"] not in c["numbers"]:
        raise Invalid("starter", "one of the pairing's numbers, or null", c["starter"])
    return c

def _rules(v: Any) -> Rules:
    if not isinstance(v, Rules):
        raise ValueError()
    return v


# Every command: its id (journalled beside the input it becomes) and who sent it and why.
def _envelope(names: tuple[str, ...]) -> dict[str, Field]:
    return {"id": Text(64, pattern=_ID, shape="of letters, digits, '.', '_', ':' or '-'"), "cmd": OneOf(names),
            **{k: Text(most, null=True) for k, most in NOTES.items()}}


# --- the table of commands: one entry per command ---------------------------------------------------
#
# Who answers a command on the clock (`Spec.answerer`):
ANSWERERS = {
    "clock": "the runner applies its game input (game.clock) while the director's menu is closed",
    "table": "the runner applies its table input (game.table), the menu open or not",
    "slip": "the runner's slip session journals and shows it (firmware.slip_session)",
    "display": "the runner's displays show it (firmware.requests)",
    "game": "the runner starts a new game with it",
    "journal": "the clock's hall output answers it from its journal (hall.device.recovery), never the runner",
    "updater": "the clock's hall output hands it to its updater (hall.device.update), never the runner",
}
RUNNER_ANSWERS = ("clock", "table", "slip", "display", "game")  # the answerers that are the runner


@dataclass(frozen=True)
class Spec:
    """One command: its fields (hall.wire.schema, with their bounds) and the check across them
    (`then`), who answers it on the clock (ANSWERERS), whether the director's page may send it,
    and how it becomes the runner's request (`request`: the Command and the clock's table number ->
    the request's arguments, `takes` of them required, `optional` not) and that request a game
    input (`game_input`: t_ns and the arguments -> the input). `runner_check`: the arguments the
    runner checks itself (the core checks its inputs'). `example`: the command's own fields, valid,
    as the page or the console sends them (tests/test_command_table.py sends each)."""
    fields: dict[str, Field]
    answerer: str
    example: dict
    then: Callable[[dict, str], dict] | None = None
    page: bool = False
    request: Callable[["Command", int | None], dict] | None = None
    takes: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    game_input: Callable[[int, dict], Any] | None = None
    runner_check: Schema | None = None


def _pairing_request(c: "Command", table: int | None) -> dict:
    names = {} if c.names is None else {"names": list(c.names)}  # shown on a text display (issue 40)
    return {"round": c.round, "numbers": list(c.numbers), "starter": c.starter, "table": table, **names}


def _own(fields: dict[str, Field], then: Callable | None = None) -> Schema:
    return Schema(dict(fields), then=then)


_LATE_START = {"players": ListOf(PLAYER, least=1, most=2, distinct=True, says="a list of 1 and/or 2"),
               "at": Time(zone=True, null=True)}
_ADJUST = {"player": PLAYER, "remaining_ms": Whole(ADJUST_ABOVE_MS, ADJUST_MAX_MS, above=True, unit="milliseconds")}
_IDENTIFY = {"seconds": Whole(1, IDENTIFY_MAX_S, default=IDENTIFY_S)}
_PAIRING = {"round": Whole(1, MAX_ROUND), "numbers": ListOf(NUMBER, least=2, most=2, says="a list of the two player numbers"),
            "starter": Whole(1, MAX_PLAYER_NUMBER, null=True, default=None),
            # the two players' names as TSH has them, in `numbers`' order: a text display shows them (issue 40)
            "names": ListOf(Text(MAX_NAME_CHARS, least=0), least=2, most=2, null=True, default=None,
                            says=f"a list of the two players' names, at most {MAX_NAME_CHARS} characters each")}
_SEAT = {"number": NUMBER, "table": Whole(1, topics.MAX_TABLE, null=True, default=None)}
_CALL_ACK = {"call": CALL}
_CALL_RESOLVE = {"call": CALL, "reason": Text(MAX_REASON_CHARS)}
# the console's answer to a signed result slip (game.slip: the clock shows it)
_SLIP_OUTCOME = {"game": Text(24, pattern=GAME, says='a game as its events name it, e.g. "game-000003"'),
                 "outcome": OneOf(slip.OUTCOMES), "why": Text(slip.MAX_WHY, null=True),
                 # the result recorded for the game, after penalties, by this clock's sides, when it is
                 # not the slip signed here (issue 36): the clock shows it, and its players may dispute it
                 "recorded": ListOf(Whole(-slip.MOST_SHOWN, slip.MOST_SHOWN), least=2, most=2, null=True, default=None,
                                    says="the two scores recorded, side 1 then side 2")}

SPECS: dict[str, Spec] = {
    # 2.3.2(a), 2.3.3(a): the absent players' time runs from the scheduled start (`at`, the console's)
    "late_start": Spec(_LATE_START, "clock", {"players": [2]}, page=True,
                       request=lambda c, table: {"players": list(c.players)}, takes=("players",),
                       game_input=lambda t, a: LateStart(t, tuple(a["players"]))),
    "arrive": Spec({"player": PLAYER}, "clock", {"player": 2}, page=True,
                   request=lambda c, table: {"player": c.player}, takes=("player",),
                   game_input=lambda t, a: Arrive(t, a["player"])),
    # 1.4.1(b): the director sets a player's time, with a reason (the console requires one)
    "adjust": Spec(_ADJUST, "clock", {"player": 1, "remaining_ms": 540_000, "reason": "clock knocked"}, page=True,
                   request=lambda c, table: {"player": c.player, "remaining_ms": c.remaining_ms},
                   takes=("player", "remaining_ms"), game_input=lambda t, a: Adjust(t, a["player"], a["remaining_ms"])),
    "new_game": Spec({"game_time": Field(says='"MM:SS" or whole seconds'),
                      "rules": Check(_rules_object, says="an object with clock.toml's [clock] keys", default={}),
                      # the console's event (issue 35): the clock's state of this game carries it back
                      "event": Text(64, pattern=topics.EVENT, shape="of letters, digits, '.', '_' or '-'", null=True, default=None)},
                     "game", {"game_time": "20:00"}, then=_new_game_rules, page=True,
                     request=lambda c, table: {"game_time_ms": c.rules.game_time_ms, "rules": c.rules},
                     takes=("game_time_ms",), optional=("rules",),
                     runner_check=Schema({"game_time_ms": Whole(1, 2**63, says="a positive whole number of milliseconds"),
                                          "rules": Check(_rules, says="a clock.Rules", null=True)})),
    "identify": Spec(_IDENTIFY, "display", {"seconds": 10}, page=True,
                     request=lambda c, table: {"seconds": c.seconds}, takes=("seconds",), runner_check=_own(_IDENTIFY)),
    "resend": Spec({"game": Text(24, pattern=GAME, says='a game as its events name it, e.g. "game-000003"'),
                    "from_seq": Whole(1, MAX_SEQ), "to_seq": Whole(1, MAX_SEQ, null=True)},
                   "journal", {"game": "game-000003", "from_seq": 12, "to_seq": 20}, then=_resend_range),
    # hall.director.takeover: a spare clock continues a table's game, neutralised (1.4.1(b))
    "takeover": Spec({"player": PLAYER}, "clock", {"player": 1},
                     request=lambda c, table: {"player": c.player}, takes=("player",),
                     game_input=lambda t, a: Takeover(t, a["player"])),
    "update": Spec({"version": Text(64, pattern=update.VERSION, says='a bundle\'s version, e.g. "0.1.0+g1a2b3c4"'),
                    "sha256": Text(64, pattern=update.SHA256, says="64 lower-case hex digits"),
                    "url": Check(_url, says=f"the console's http(s)://HOST:PORT{update.DOWNLOAD_PATH}, "
                                            f"at most {update.MAX_URL_CHARS} characters"),
                    "token": Text(64, pattern=update.TOKEN, says="32 to 64 letters, digits, '-' or '_'", hide=True),
                    "wait_s": Whole(0, update.MAX_WAIT_S, unit="seconds", null=True, default=0),
                    # the director confirmed installing a version older than the clock's (issue 36)
                    "allow_downgrade": Flag(default=False)},
                   "updater", {"version": "0.1.0+g1a2b3c4", "sha256": "0" * 64,
                               "url": f"https://console.local:8443{update.DOWNLOAD_PATH}", "token": "t" * 32}),
    "slip_outcome": Spec(_SLIP_OUTCOME, "slip", {"game": "game-000003", "outcome": slip.OUTCOMES[0], "why": None},
                         request=lambda c, table: {"game": c.game, "outcome": c.outcome, "why": c.why,
                                                   "recorded": None if c.recorded is None else list(c.recorded)},
                         takes=("game", "outcome", "why"), optional=("recorded",), runner_check=_own(_SLIP_OUTCOME)),
    # issue 27, the table (game.checkin, game.call): journalled as the table's inputs
    "pairing": Spec(_PAIRING, "table", {"round": 3, "numbers": [12, 7], "starter": 7, "names": ["Ann", "Bo"]},
                    then=_pairing, request=_pairing_request, takes=("round", "numbers", "starter"),
                    optional=("table", "names"),  # table: this clock's number (the hall's), which the check-in shows
                    game_input=lambda t, a: Pairing(t, a["round"], tuple(a["numbers"]), a["starter"], a.get("table"),
                                                    None if a.get("names") is None else tuple(a["names"])),
                    runner_check=_own(_PAIRING, _pairing)),
    "seat": Spec(_SEAT, "table", {"number": 12, "table": 14}, request=lambda c, table: {"number": c.number, "table": c.table},
                 takes=("number", "table"), game_input=lambda t, a: Seat(t, a["number"], a["table"]), runner_check=_own(_SEAT)),
    "call_ack": Spec(_CALL_ACK, "table", {"call": "call-1"}, request=lambda c, table: {"call": c.call}, takes=("call",),
                     game_input=lambda t, a: CallAck(t, a["call"]), runner_check=_own(_CALL_ACK)),
    "call_resolve": Spec(_CALL_RESOLVE, "table", {"call": "call-1", "reason": "word judged; play on"},
                         request=lambda c, table: {"call": c.call, "reason": c.reason}, takes=("call", "reason"),
                         game_input=lambda t, a: CallResolve(t, a["call"], a["reason"]), runner_check=_own(_CALL_RESOLVE)),
}
# Read off the table (never spelled again): the names, each command's own fields, its whole schema.
NAMES = tuple(SPECS)
TABLE_COMMANDS = tuple(n for n, s in SPECS.items() if s.answerer == "table")  # the table's inputs (game.table), issue 27
ENVELOPE: dict[str, Field] = _envelope(NAMES)
FIELDS: dict[str, dict[str, Field]] = {name: s.fields for name, s in SPECS.items()}
_THEN = {name: s.then for name, s in SPECS.items() if s.then is not None}
# The schema of each command, by name: looked up when a command is checked, so a field added here is
# checked by the console (hall.console.state.requests) and by the clock (`parse`) alike.
SCHEMAS: dict[str, Schema] = {name: Schema({**ENVELOPE, **s.fields}, unknown="refuse", then=s.then) for name, s in SPECS.items()}


# Optional fields added to a command after clocks of a hall were installed (a hall runs clocks of
# several versions while an update rolls out). A clock refuses a field it does not know (SCHEMAS:
# unknown="refuse", so a director's typo is never silently dropped), and a clock of before would
# refuse the whole command: the console sends such a field only to a clock whose retained status
# says it takes it (`takes`: "command.field", hall.wire.health.status_payload), and leaves it out
# for any other (`for_clock`). The clock announces TAKES, read off this table.
LATER_FIELDS: dict[str, tuple[str, ...]] = {
    "pairing": ("names",),  # issue 40: the players' names, for a text display
}
TAKES: tuple[str, ...] = tuple(f"{name}.{field}" for name, later in LATER_FIELDS.items() for field in later)


def for_clock(fields: dict, takes) -> dict:
    """A command's fields as a clock that announced `takes` (its status's; empty: a clock of before
    any) can take them: each later optional field (LATER_FIELDS) it did not announce left out."""
    name = fields.get("cmd")
    left_out = [f for f in LATER_FIELDS.get(name, ()) if f in fields and f"{name}.{f}" not in takes]
    return {k: v for k, v in fields.items() if k not in left_out} if left_out else fields


def answered_by(*answerers: str) -> tuple[str, ...]:
    """The commands those answer (ANSWERERS), in the table's order."""
    return tuple(n for n, s in SPECS.items() if s.answerer in answerers)


class CommandError(ValueError):
    """Why a command is refused, for its ack."""


@dataclass(frozen=True)
class Command:
    id: str
    name: str
    player: int | None = None
    players: tuple[int, ...] = ()
    remaining_ms: int | None = None
    rules: Rules | None = None
    seconds: int = IDENTIFY_S
    by: str | None = None
    reason: str | None = None
    event: str | None = None  # new_game: the event the hall starts it for (issue 35), journalled in its header
    at_ns: int | None = None  # late_start: the scheduled start, wall-clock ns since the epoch
    at: str | None = None  # ... as sent
    game: str | None = None  # resend: the game, and its range of seq (to_seq None: to the end)
    from_seq: int | None = None
    to_seq: int | None = None
    version: str | None = None  # update: the bundle's version, its SHA-256, where and how to fetch it
    sha256: str | None = None
    url: str | None = None
    token: str | None = None
    wait_s: int = 0
    allow_downgrade: bool = False  # update: the director's confirmation of a downgrade
    outcome: str | None = None  # slip_outcome: the console's answer to the game's signed slip, and why
    why: str | None = None
    recorded: tuple[int, int] | None = None  # ... and the result recorded instead, by this clock's sides (issue 36)
    round: int | None = None  # pairing: the round, its two numbers and the starter (2.1(b)(i))
    numbers: tuple[int, ...] = ()
    starter: int | None = None
    names: tuple[str, ...] | None = None  # pairing: the players' names (issue 40)
    number: int | None = None  # seat: the number checked in at the wrong table, and where it plays
    table: int | None = None
    call: str | None = None  # call_ack, call_resolve: the call's id on the clock

    def notes(self) -> dict[str, str]:
        """The command's id, who sent it, why, and a late start's scheduled start, as given (for
        the journal: the id lets a restarted clock ack a redelivered command without applying it)."""
        notes = (("command", self.id), ("by", self.by), ("reason", self.reason), ("scheduled_start", self.at),
                 ("event", self.event))
        return {k: v for k, v in notes if v is not None}

    def request(self, table: int | None = None) -> dict:
        """The runner's request this command is (firmware.requests): its arguments (SPECS' `request`,
        `table` the clock's own number) and its notes, journalled beside the input."""
        spec = SPECS[self.name]
        if spec.request is None:
            raise CommandError(f"{self.name}: {ANSWERERS[spec.answerer]}")
        return {**spec.request(self, table), **self.notes()}

    def clock_input(self, t_ns: int):
        """The game input this command is (None for a command the runner answers otherwise: SPECS)."""
        spec = SPECS[self.name]
        if spec.answerer != "clock":
            return None
        return spec.game_input(t_ns, spec.request(self, None))


def dated(cmd: Command, now_ns: int, wall_now_ns: int, remaining_ms: tuple[int, int]) -> int:
    """The monotonic time a command takes effect at: now, or a late start's scheduled start
    (now_ns - (wall_now - at)). A scheduled start up to FUTURE_TOLERANCE_NS ahead is now (the
    director's machine and the Pi keep slightly different time); further ahead is refused, and so
    is one longer ago than an absent player's whole time (`remaining_ms`, before the game): that
    player has forfeited (2.3.5)."""
    if cmd.at_ns is None:
        return now_ns
    ago_ns = wall_now_ns - cmd.at_ns
    if ago_ns < -FUTURE_TOLERANCE_NS:
        raise CommandError(f"late_start: the scheduled start {cmd.at} is {-ago_ns / 1e9:.1f} s in the future on this clock, "
                           f"more than the {FUTURE_TOLERANCE_NS // 10**9} s allowed for clocks that differ (2.3.2(a), 2.3.3(a))")
    ago_ns = max(ago_ns, 0)
    limit_ms = min(remaining_ms[p - 1] for p in cmd.players)
    if ago_ns >= limit_ms * 1_000_000:
        raise CommandError(f"late_start: the scheduled start {cmd.at} is {ago_ns // 10**9} s ago, past the absent "
                           f"player's whole time ({limit_ms // 1000} s): that player has forfeited (2.3.5)")
    return now_ns - ago_ns


def command_id(payload: bytes) -> str | None:
    """The id of a command, if one can be read (to address the ack of a refused command)."""
    try:
        d = json.loads(payload)
        cid = d.get("id") if isinstance(d, dict) else None
    except (ValueError, RecursionError):
        return None
    return cid if isinstance(cid, str) and _ID.match(cid) else None


def _epoch_ns(at: str) -> int:
    return (datetime.fromisoformat(at) - _EPOCH) // timedelta(microseconds=1) * 1000


def parse(payload: bytes, default_rules: Rules | None = None) -> Command:
    if len(payload) > MAX_COMMAND_BYTES:
        raise CommandError(f"command is {len(payload)} bytes: allowed are at most {MAX_COMMAND_BYTES}")
    try:
        d = json.loads(payload)
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        raise CommandError(f"not a JSON object: {str(e)[:80]}") from None
    if not isinstance(d, dict):
        raise CommandError("not a JSON object")
    cid = d.get("id")
    if not isinstance(cid, str) or not _ID.match(cid):
        raise CommandError("id: allowed are 1 to 64 letters, digits, '.', '_', ':' or '-'")
    name = d.get("cmd")
    if name not in NAMES:
        raise CommandError(f"cmd {name!r}: allowed are {', '.join(NAMES)}")
    return command(name, check(d), default_rules)


def check(d: dict) -> dict:
    """A command, as an object, checked whole by its schema (SCHEMAS); CommandError naming the
    command and the field. The console checks a director's command with this before it sends it."""
    name = d.get("cmd")
    if name not in SCHEMAS:
        raise CommandError(f"cmd {name!r}: allowed are {', '.join(SCHEMAS)}")
    try:
        return SCHEMAS[name].check(d)
    except Invalid as e:
        raise CommandError(f"{name}: {e}") from None


_ATTRIBUTES = {f.name for f in dataclass_fields(Command)}


def command(name: str, c: dict, default_rules: Rules | None = None) -> Command:
    """The Command a checked command (`check`) is: its fields as the clock keeps them."""
    kept = {k: v for k, v in c.items() if k in _ATTRIBUTES and k not in ("id", "name")}
    if name == "pairing":
        kept["numbers"] = tuple(c["numbers"])
        kept["names"] = None if c.get("names") is None else tuple(c["names"])
    if name == "slip_outcome" and c.get("recorded") is not None:
        kept["recorded"] = tuple(c["recorded"])
    if name == "late_start":
        kept["players"] = tuple(sorted(c["players"]))
        kept["at_ns"] = None if c["at"] is None else _epoch_ns(c["at"])
    elif name == "new_game":
        from rackside.game.rules_table import ConfigError, rules_from_table, rules_to_table

        base = rules_to_table(default_rules) if default_rules is not None else {}
        try:
            kept["rules"] = rules_from_table({**base, **c["rules"], "game_time": c["game_time"]})
        except ConfigError as e:
            raise CommandError(f"new_game: {e}") from None
    return Command(c["id"], name, **kept)
