"""What a director's browser sends, checked where it enters (the other boundary is contract.py, what
the devices send). Pure: a request's body in, the checked values out, or ValueError (ResultError for
a result) saying in one line which field is wrong and what is allowed. app.py's endpoints call these
before they touch anything.

A director's command (`command`) is checked by the clock's own parser (hall.wire.commands, its
schema per command): the console sends only what every clock takes, and a field added to a
command's schema is taken from the page's body and checked here with no further code.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from rackside.game.rules_table import ConfigError as RulesError
from rackside.game.rules_table import rules_from_table
from rackside.hall.wire import commands
from rackside.hall.wire.schema import Invalid, Whole
from rackside.hall.wire.schema import whole as _whole

from ..common import limits
from ..scoring import results

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# The commands the page sends (docs/console.md, "Commands": hall.wire.commands.SPECS' `page`); the
# hall's others (resend, takeover, update, the table's) come from the console's own code, never from a request.
PAGE_COMMANDS = tuple(n for n, spec in commands.SPECS.items() if spec.page)
# A command whose schema has one of these fields has it filled by the console (CONSOLE_FILLS), or
# must carry it: 1.4.1(b), an adjustment's reason is required and logged.
REASON_REQUIRED = "remaining_ms"
# What the console fills in itself, never from the body: who (the session), a late start's
# scheduled start (the round's), a new game's time (the round's, or game_time_ms) and rules (the event's
# [event], issue 38); the page sets no rules.
CONSOLE_FILLS = ("id", "cmd", "by", "at", "game_time", "rules")
SCORE = limits.SCORE_BOUND  # a slip's score and a lateness margin, either way (TSH's limits are results.py's)


def whole(v: Any, name: str, lo: int, hi: int) -> int:
    """A whole number from lo to hi: a number, or the text of one (a form's field, a query's value);
    never a bool, nor a fraction (350.7 is not a score)."""
    try:
        return Whole(lo, hi, text=True).check(v, name)
    except Invalid as e:
        raise ValueError(str(e)) from None


def start(v: Any) -> float:
    """A round's scheduled start, epoch seconds: a real moment (not NaN or infinity, which JSON
    cannot carry and a late start cannot be dated from)."""
    try:
        s = float(v)
        _EPOCH + timedelta(seconds=s)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"start must be a time in epoch seconds, not {v!r}") from None
    return s


def game_time_ms(v: Any) -> int:
    """A game time in ms, within the clock's own limits for [clock] game_time (game.rules_table):
    a round the console accepts is one every clock takes."""
    if not _whole(v):
        raise ValueError(f"game_time_ms must be a whole number of milliseconds, not {v!r}")
    try:
        rules_from_table({"game_time": v // 1000})
    except RulesError as e:
        raise ValueError(f"game_time_ms {v}: {e}") from None
    return v


def tables(body: dict) -> list[int]:
    tables = body.get("tables")
    if not isinstance(tables, list) or not tables or len(tables) > limits.MAX_TABLE:
        raise ValueError("tables must be a non-empty list of table numbers")
    return sorted({whole(t, "table", 1, limits.MAX_TABLE) for t in tables})


def watched_table(body: dict) -> int | None:
    """The table whose history a page's stream is to carry (POST /api/events/ID/watch), or None."""
    n = body.get("table")
    return None if n is None else whole(n, "table", 1, limits.MAX_TABLE)


def command(body: dict, round_start: float | None, round_game_time_ms: int, by: str, rules: dict | None = None) -> dict:
    """The command as the clock receives it (docs/hall.md, `cmd`), from a page's body: every field
    of its schema (hall.wire.commands.SCHEMAS) the body gives, but those the console fills in
    (CONSOLE_FILLS), checked by the clock's own parser: one set of limits for the console and the clock.
    `rules`: a new game's, the event's ([event], hall.wire.eventrules.EventRules.command_rules)."""
    name = body.get("cmd")
    if not isinstance(name, str) or name not in PAGE_COMMANDS:
        raise ValueError(f"cmd {str(name)[:40]!r}: allowed are {', '.join(PAGE_COMMANDS)}")
    cmd: dict[str, Any] = {"cmd": name, "by": by}
    cmd.update({k: body[k] for k in commands.SCHEMAS[name].fields if k not in CONSOLE_FILLS and k in body})
    reason = cmd.pop("reason", None)
    if isinstance(reason, str) and reason.strip():
        cmd["reason"] = reason.strip()
    elif reason is not None and not isinstance(reason, str):
        cmd["reason"] = reason  # refused by the parser below, naming it
    fields = commands.SPECS[name].fields  # what the console fills, it fills by the command's fields
    players = cmd.get("players")
    if isinstance(players, list) and all(_whole(p) for p in players):
        cmd["players"] = sorted(set(players))  # [2, 2] is side 2 (the clock takes each side once)
    if "at" in fields and round_start is not None:  # 2.3.2(a), 2.3.3(a): a late start, from the scheduled start
        cmd["at"] = (_EPOCH + timedelta(seconds=round_start)).isoformat()
    if REASON_REQUIRED in fields and "reason" not in cmd:  # 1.4.1(b): an adjustment's reason is required, and logged
        raise ValueError("an adjustment needs a reason (it is logged)")
    if "game_time" in fields:  # a new game: the round's time
        cmd["game_time"] = game_time_ms(body.get("game_time_ms", round_game_time_ms)) // 1000  # seconds on the wire
        if rules is not None:  # every game key: the clock's next game runs the event's rules, not its clock.toml's
            cmd["rules"] = dict(rules)
    try:
        commands.parse(json.dumps({"id": "check", **cmd}).encode())
    except commands.CommandError as e:
        raise ValueError(str(e)) from None
    return cmd


def checked_command(cmd: dict) -> None:
    """A command the console makes itself (paperless.py: pairing, seat, call answers, slip_outcome),
    checked by the clock's own parser before it is sent (its `sent_at` is the console's note)."""
    try:
        commands.parse(json.dumps({k: v for k, v in cmd.items() if k != "sent_at"}).encode())
    except commands.CommandError as e:
        raise ValueError(str(e)) from None


def result_body(body: dict) -> None:
    """Types at the boundary, each checked here once and put in its one form for
    hall.console.state.event's `result`, which checks none of them again: two whole numbers for a slip (a
    text "12" is the page's form field, a list of two is the slip), a whole margin, a decision
    object with its scores and reason, a correction's reason as text, the shape of `no_clock` (its
    values are results.slip_result's), the names typed for a game by table (results.typed_names)."""
    slip = body.get("slip")
    if slip is not None:
        if not isinstance(slip, list) or len(slip) != 2:
            raise results.ResultError("type both scores")
        body["slip"] = [whole(x, "score", -SCORE, SCORE) for x in slip]
    if body.get("margin") not in (None, ""):
        body["margin"] = whole(body["margin"], "margin", 0, SCORE)
    decision = body.get("decision")
    if decision is not None:
        if not isinstance(decision, dict) or not isinstance(decision.get("reason", ""), str):
            raise ValueError("decision must be {scores: [side 1, side 2], reason: text}")
        scores = decision.get("scores")
        if scores is not None:
            if not isinstance(scores, list) or len(scores) != 2:
                raise ValueError("decision scores must be two whole numbers")
            decision["scores"] = [whole(x, "score", -SCORE, SCORE) for x in scores]
    if not isinstance(body.get("correction", ""), str):
        raise ValueError("correction must be the reason, as text")
    no_clock = body.get("no_clock")
    if no_clock is not None:  # the slip of a game with no clock result: its values are checked by results.slip_result
        if not isinstance(no_clock, dict) or not isinstance(no_clock.get("reason", ""), str) \
                or not isinstance(no_clock.get("ending", "end"), (str, type(None))):
            raise ValueError("no_clock must be {reason: text, penalties: [side 1, side 2], ending, forfeit}")
    if body.get("names") is not None:
        body["names"] = list(results.typed_names(body["names"]))
