"""The v1 topic contract (docs/hall.md, "Topics, v1"), checked at the console's boundary: every
device message is read here before it touches the hall state. Pure: values in, values out.

`read(leaf, payload)` returns the message as the console keeps it, holding only the fields its
schema names (hall.wire.messages: the one description the devices' payloads are held to), each of
its type, in its range and size (readers ignore fields they do not know, docs/hall.md), or raises
`Refused` saying which field is wrong and why, in one line. A payload over its size
(limits.MAX_PAYLOAD), nested deeper than limits.MAX_DEPTH, not UTF-8 JSON, or holding NaN,
Infinity or a number out of range is refused whole. So nothing a device sends can break the
snapshot's JSON (a 2 KB payload nested 977 deep did), the page's reading of it (`players` as an
object), or the console's memory.
"""

from __future__ import annotations

import json
import math
from typing import Any

from rackside.game.clock import Rules
from rackside.hall.wire import messages
from rackside.hall.wire.schema import Invalid

from ..common import limits


class Refused(ValueError):
    """Why a device message is refused (one line: the field and what is allowed)."""


def state_rules(rules: Rules) -> dict:
    """Game rules as a clock's state carries them (hall.wire.messages.STATE_RULES)."""
    return {name: getattr(rules, name) for name in messages.STATE_RULES}


def default_rules() -> dict:
    return state_rules(Rules())


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
    try:
        message = messages.schema_of(leaf, data).check(data)
    except Invalid as e:
        raise Refused(str(e)) from None
    if leaf == "state":  # the core's defaults for what a clock leaves out (an older clock)
        message["rules"] = {**default_rules(), **message["rules"]}
    return message


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


# --- a device's status, with its health (issue 26; hall.wire.health) ------------------------------


def _status(payload: bytes) -> dict:
    """`{"status", "version", "health"}`: from the bare word (the Last Will, an older device; no
    health) or the JSON object an online device sends, checked by its schema (messages.STATUS)."""
    text = payload.decode("ascii", errors="replace").strip()
    if text in messages.STATUSES:
        return {"status": text, "version": None, "health": None, "takes": []}
    if not text.startswith("{"):
        raise Refused(f"status {text[:16]!r}: allowed are {' or '.join(messages.STATUSES)}, or the status object")
    d = _loads(payload)
    if not isinstance(d, dict):
        raise Refused("status: not a JSON object")
    try:
        return messages.STATUS.check(d)
    except Invalid as e:
        raise Refused(f"status: {e}") from None
