"""The v1 topic contract (docs/hall.md, "Topics, v1"), checked at the console's boundary: every
device message is read here before it touches the hall state. Pure: values in, values out.

`read(leaf, payload)` returns the message as the console keeps it, holding only the fields the
contract names, each of its type, in its range and size (readers ignore fields they do not know,
docs/hall.md), or raises `Refused` saying which field is wrong and why. A payload over its size
(limits.MAX_PAYLOAD), nested deeper than limits.MAX_DEPTH, not UTF-8 JSON, or holding NaN,
Infinity or a number out of range is refused whole. So nothing a device sends can break the
snapshot's JSON (a 2 KB payload nested 977 deep did), the page's reading of it (`players` as an
object), or the console's memory.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from typing import Any

from rackside.firmware.clock import Ending, Phase, Rules
from rackside.hall.wire import health as _health
from rackside.hall.wire import update as _update

from . import limits

STATUSES = ("online", "offline")
PHASES = tuple(p.value for p in Phase)
ENDINGS = tuple(e.value for e in Ending)
# the rules a state carries for the page (5.3 penalty, 5.3.3 forfeit line, 2.3.6(a) margin, game time)
PAGE_RULES = ("game_time_ms", "penalty_per_minute", "forfeit_overtime_ms", "lateness_forfeit_margin")
GAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
ID = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")
WORD = re.compile(r"^[A-Za-z0-9_ .-]{1,24}$")
BIG = 10**12  # ms and ns fields: beyond any game, within JSON's exact integers
NS = 2**63


class Refused(ValueError):
    """Why a device message is refused (one line: the field and what is allowed)."""


def default_rules() -> dict:
    rules = Rules()
    return {name: getattr(rules, name) for name in PAGE_RULES}


def read(leaf: str, payload: bytes) -> Any:
    """A checked message for a topic leaf (`status`, `state`, `event`, `ack`, `challenge`, `detail`)."""
    most = limits.MAX_PAYLOAD.get(leaf)
    if most is None:
        raise Refused(f"{leaf}: not a topic of the v1 contract")
    if len(payload) > most:
        raise Refused(f"{leaf}: {len(payload)} bytes, allowed are at most {most}")
    if leaf == "status":
        return _status(payload)
    data = _loads(payload)
    if not isinstance(data, dict):
        raise Refused(f"{leaf}: not a JSON object")
    return _READERS[leaf](data)


def _loads(payload: bytes) -> Any:
    try:
        data = json.loads(payload, parse_constant=_not_json, parse_float=_finite)
    except RecursionError:
        raise Refused(f"nested deeper than {limits.MAX_DEPTH}") from None
    except ValueError as e:  # UnicodeDecodeError included
        raise Refused(f"not JSON: {str(e)[:80]}") from None
    _check_depth(data)
    return data


def _check_depth(data: Any) -> None:
    # iterative: a recursive walk is what a deep payload would break
    stack = [(data, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > limits.MAX_DEPTH:
                raise Refused(f"nested deeper than {limits.MAX_DEPTH}")
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))


def _finite(text: str) -> float:
    f = float(text)
    if not math.isfinite(f):  # 1e400
        raise ValueError(f"{text[:20]} is out of range")
    return f


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON")


# --- fields ---------------------------------------------------------------------------------------


def _int(d: dict, key: str, lo: int, hi: int, *, null: bool = False):
    v = d.get(key)
    if v is None and null:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise Refused(f"{key} {_show(v)}: allowed is a whole number from {lo} to {hi}")
    return v


def _text(d: dict, key: str, most: int, *, pattern: re.Pattern | None = None, null: bool = False):
    v = d.get(key)
    if v is None and null:
        return None
    if not isinstance(v, str) or not 0 < len(v) <= most or (pattern is not None and not pattern.match(v)):
        raise Refused(f"{key} {_show(v)}: allowed is a text of 1 to {most} characters" + (" of the form " + pattern.pattern if pattern else ""))
    return v


def _choice(d: dict, key: str, allowed: tuple, *, null: bool = False):
    v = d.get(key)
    if v is None and null:
        return None
    if isinstance(v, bool) or v not in allowed:
        raise Refused(f"{key} {_show(v)}: allowed are {', '.join(map(repr, allowed))}" + (" or null" if null else ""))
    return v


def _bool(d: dict, key: str, *, default: bool | None = None) -> bool:
    v = d.get(key, default)
    if not isinstance(v, bool):
        raise Refused(f"{key} {_show(v)}: allowed are true and false")
    return v


def _time(d: dict, key: str, *, null: bool = False):
    v = d.get(key)
    if v is None and null:
        return None
    try:
        if isinstance(v, str) and len(v) <= 40:
            datetime.fromisoformat(v)
            return v
    except ValueError:
        pass
    raise Refused(f"{key} {_show(v)}: allowed is a time in ISO 8601" + (" or null" if null else ""))


def _sides(d: dict, key: str) -> list[int]:
    v = d.get(key)
    if not isinstance(v, list) or len(v) > 2 or any(p not in (1, 2) or isinstance(p, bool) for p in v) or len(set(v)) != len(v):
        raise Refused(f"{key} {_show(v)}: allowed is a list of side 1 and/or 2")
    return list(v)


def _players(d: dict, *, live: bool) -> list[dict]:
    v = d.get("players")
    if not isinstance(v, list) or len(v) != 2:
        raise Refused(f"players {_show(v)}: allowed is a list of the two sides")
    out = []
    for i, p in enumerate(v):
        if not isinstance(p, dict) or p.get("player") != i + 1 or isinstance(p.get("player"), bool):
            raise Refused(f"players[{i}] {_show(p)}: allowed is side {i + 1}'s object")
        q = {"player": i + 1, "remaining_ms": _int(p, "remaining_ms", -BIG, BIG),
             "overtime_s": _int(p, "overtime_s", 0, BIG // 1000), "penalty": _int(p, "penalty", 0, 10**6),
             "forfeit": _bool(p, "forfeit")}
        if live:
            q["absent"] = _bool(p, "absent", default=False)
        out.append(q)
    return out


def _show(v: Any) -> str:
    text = json.dumps(v) if isinstance(v, (str, int, float, bool, type(None))) else type(v).__name__
    return text if len(text) <= 40 else text[:37] + "..."


# --- messages -------------------------------------------------------------------------------------


def _state(d: dict) -> dict:
    return {
        "seq": _int(d, "seq", 0, BIG),
        "game": _text(d, "game", 64, pattern=GAME),
        "phase": _choice(d, "phase", PHASES),
        "running": _choice(d, "running", (1, 2), null=True),
        "players": _players(d, live=True),
        "ending": _choice(d, "ending", ENDINGS, null=True),
        "sent_at": _time(d, "sent_at"),
        "rules": _rules(d.get("rules")),
        # the Rackside the clock runs (hall.wire.payloads): the update section of the Devices page shows it
        "version": _text(d, "version", 64, pattern=_update.VERSION, null=True),
    }


def _rules(v: Any) -> dict:
    """The game's rules as the clock sent them, checked by the clock core's own Rules; the core's
    defaults when a clock sends none (an older clock)."""
    if v is None:
        return default_rules()
    if not isinstance(v, dict):
        raise Refused(f"rules {_show(v)}: allowed is an object with {', '.join(PAGE_RULES)}")
    got = {k: _int(v, k, 0, BIG, null=True) for k in PAGE_RULES}
    try:
        Rules(**{k: x for k, x in got.items() if x is not None})
    except ValueError as e:
        raise Refused(f"rules: {e}") from None
    return {**default_rules(), **{k: x for k, x in got.items() if x is not None}}


_INPUT_FIELDS = {  # optional fields of an input event (docs/journal.md), each with its reader
    "player": lambda d, k: _choice(d, k, (1, 2)),
    "players": _sides,
    "remaining_ms": lambda d, k: _int(d, k, -BIG, BIG),
    "source": lambda d, k: _text(d, k, 16, pattern=GAME),
    "command": lambda d, k: _text(d, k, 64, pattern=GAME),
    "by": lambda d, k: _text(d, k, 64),
    "reason": lambda d, k: _text(d, k, 200),
    "scheduled_start": lambda d, k: _text(d, k, 40),
    "at_ns": lambda d, k: _int(d, k, 0, NS),
    "rebooted": _bool,
    "from_checkpoint": _bool,
}


def _event(d: dict) -> dict:
    kind = _choice(d, "kind", ("input", "result"))
    if kind == "result":
        return _result(d)
    out = {"kind": "input", "game": _text(d, "game", 64, pattern=GAME), "seq": _int(d, "seq", 1, BIG),
           "t_ns": _int(d, "t_ns", 0, NS), "input": _text(d, "input", 24, pattern=re.compile(r"^[a-z_]+$")),
           "at": _time(d, "at", null=True)}
    for key, reader in _INPUT_FIELDS.items():
        if d.get(key) is not None:
            out[key] = reader(d, key)
    return out


def _result(d: dict) -> dict:
    if d.get("seq") != 0 or isinstance(d.get("seq"), bool):
        raise Refused(f"seq {_show(d.get('seq'))}: a result's is 0")
    return {
        "kind": "result", "game": _text(d, "game", 64, pattern=GAME), "seq": 0,
        "ending": _choice(d, "ending", ENDINGS, null=True),
        "players": _players(d, live=False),
        "forfeits": _sides(d, "forfeits"),
        "winner_by_forfeit": _choice(d, "winner_by_forfeit", (1, 2), null=True),
        "lateness_margin": _int(d, "lateness_margin", 0, limits.SCORE_BOUND, null=True),
        "at": _time(d, "at", null=True),
    }


def _ack(d: dict) -> dict:
    ack = {"id": _text(d, "id", 64, pattern=GAME, null=True), "ok": _bool(d, "ok"),
           "reason": _text(d, "reason", 300, null=True), "seq": _int(d, "seq", 0, BIG, null=True),
           "at": _time(d, "at", null=True)}
    update = d.get("update")  # an update command's outcome (hall.device.update)
    if update is not None:
        if not isinstance(update, dict):
            raise Refused(f"update {_show(update)}: allowed is an object with version and outcome")
        ack["update"] = {"version": _text(update, "version", 64, pattern=_update.VERSION),
                         "outcome": _choice(update, "outcome", _update.OUTCOMES)}
    return ack


def _challenge(d: dict, *, detail: bool = False) -> dict:
    table = d.get("table")
    if isinstance(table, str) and table.isdigit() and len(table) <= 4:
        table = int(table)
    out = {"id": _text(d, "id", 80, pattern=ID),
           "table": _int({"table": table}, "table", 1, limits.MAX_TABLE, null=True),
           "time": _time(d, "time", null=True),
           "kind": _text(d, "kind", 16, pattern=re.compile(r"^[a-z_]+$"), null=True),
           "lexicon": _text(d, "lexicon", 32, pattern=ID, null=True),
           "lexicon_checksum": _text(d, "lexicon_checksum", 128, pattern=re.compile(r"^[0-9a-fA-F]+$"), null=True),
           "verdict": _text(d, "verdict", 24, pattern=re.compile(r"^[A-Za-z_ -]+$"), null=True)}
    words = d.get("words")
    if detail:
        if not isinstance(words, list) or len(words) > 64:
            raise Refused(f"words {_show(words)}: allowed is a list of at most 64 words")
        out["words"] = [{"word": _text(w, "word", 24, pattern=WORD), "valid": _bool(w, "valid")} if isinstance(w, dict)
                        else _refuse(f"words[{i}] {_show(w)}: allowed is an object with word and valid")
                        for i, w in enumerate(words)]
    elif words is not None:
        out["words"] = _int(d, "words", 0, 64)
    return out


def _refuse(why: str):
    raise Refused(why)


_READERS = {"state": _state, "event": _event, "ack": _ack, "challenge": _challenge,
            "detail": lambda d: _challenge(d, detail=True), "result": _result}


# --- a device's status, with its health (issue 26; hall.wire.health) ------------------------------


def _status(payload: bytes) -> dict:
    """`{"status", "version", "health"}`: from the bare word (the Last Will, an older device; no
    health) or the JSON object an online device sends, each health field of its kind and range
    (hall.wire.health.FIELDS) or null; unknown fields are dropped."""
    text = payload.decode("ascii", errors="replace").strip()
    if text in STATUSES:
        return {"status": text, "version": None, "health": None}
    if not text.startswith("{"):
        raise Refused(f"status {text[:16]!r}: allowed are {' or '.join(STATUSES)}, or the status object")
    d = _loads(payload)
    if not isinstance(d, dict):
        raise Refused("status: not a JSON object")
    status = _choice(d, "status", STATUSES)
    version = _text(d, "version", _health.VERSION_CHARS, pattern=_update.VERSION, null=True)
    h = d.get("health")
    if h is None:
        return {"status": status, "version": version, "health": None}
    if not isinstance(h, dict):
        raise Refused(f"health {_show(h)}: allowed is an object of {', '.join(_health.FIELDS)}")
    out = {}
    for key, (kind, lo, hi) in _health.FIELDS.items():
        v = h.get(key)
        if v is None:
            out[key] = None
        elif kind is bool:
            out[key] = _bool(h, key)
        elif kind is str:
            out[key] = _text(h, key, int(hi), pattern=WORD)
        elif kind is int:
            out[key] = _int(h, key, int(lo), int(hi))
        else:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
                raise Refused(f"health.{key} {_show(v)}: allowed is a number from {lo:g} to {hi:g} or null")
            out[key] = float(v)
    return {"status": status, "version": version, "health": out}
