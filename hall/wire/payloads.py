"""The JSON a table clock publishes (docs/hall.md, topics v1): states, events, results and acks; and
a challenge station's challenges (`challenge_payloads`). Functions of values to bytes: no threads,
no network, no clock read (the wall time is given)."""

from __future__ import annotations

import datetime
import json
from typing import Any

from rackside.game.clock import Rules, View
from rackside.game.journal import input_to_dict
from rackside.game.messages import NOTES
from rackside.hall.wire.messages import SLIP, STATE_RULES
from rackside.hall.wire.schema import Invalid

JOURNAL_NOTES = ("source", *NOTES)  # what a journal line carries beside its input, published with it
SLIP_NOTE = "slip"  # beside the signature that made a result slip final: the slip's record (firmware.slip_session)


def iso(wall_ns: int) -> str:
    return datetime.datetime.fromtimestamp(wall_ns / 1e9, datetime.timezone.utc).isoformat(timespec="milliseconds")


def dumps(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def players(v: View) -> list[dict]:
    return [
        {
            "player": p.player,
            "remaining_ms": p.remaining_ms,
            "overtime_s": p.overtime_s,
            "penalty": p.penalty,
            "forfeit": p.forfeit,
            "absent": p.absent,  # not yet arrived after a late start: the page ticks their time (2.3.2(a))
        }
        for p in v.players
    ]


def state_payload(v: View, game: str, seq: int, wall_ns: int, rules: Rules | None = None, version: str | None = None,
                  *, keypad: bool = False, event: str | None = None, alone: bool = False) -> bytes:
    """The retained state; `rules` (the running game's) let a page compute penalties and forfeits
    under the rules the game is played under (a new_game may set other than WESPA's); `version`
    is the Rackside the clock runs (after an update, the director sees which version each table has);
    `keypad`: the clock has one, so its players check in at it (issue 27); `event`: the event the hall
    started the game for ("" none: a game the hall did not start; None: not said, as an older clock);
    `alone`: the game was played without a hall (a stand-alone practice game)."""
    running = next((p.player for p in v.players if p.running), None)
    state: dict[str, Any] = {
        "seq": seq,
        "game": game,
        "phase": v.phase.value,
        "running": running,
        "to_move": v.to_move,  # also while neutralised: whose time the centre press restarts (a takeover needs it)
        "players": players(v),
        "ending": v.ending.value if v.ending else None,
        "sent_at": iso(wall_ns),
        "keypad": keypad,
    }
    if rules is not None:
        state["rules"] = {k: getattr(rules, k) for k in STATE_RULES}
    if version is not None:
        state["version"] = version
    return dumps(_of_event(state, event, alone))


def _of_event(d: dict, event: str | None, alone: bool) -> dict:
    """A state's or a result's event (issue 35): "" none, None not said (as an older clock)."""
    if event is not None:
        d["event"] = event
    if alone:
        d["alone"] = True
    return d


def result_payload(v: View, game: str, wall_ns: int | None, *, event: str | None = None, alone: bool = False) -> bytes:
    """A game's result; `event` and `alone` as the game's state says them (state_payload)."""
    return dumps(_of_event(
        {
            "kind": "result",
            "game": game,
            "seq": 0,  # no input has seq 0 (they count from 1): the result's own key
            "ending": v.ending.value if v.ending else None,
            "players": players(v),
            "forfeits": list(v.forfeits),
            "winner_by_forfeit": v.winner_by_forfeit(),
            "lateness_margin": v.lateness_margin,
            "at": iso(wall_ns) if wall_ns else None,
        }, event, alone))


def event_payload(line: dict, game: str, seq: int, wall_ns: int | None) -> bytes:
    return dumps({"kind": "input", "game": game, "seq": seq, **line, "at": iso(wall_ns) if wall_ns else None})


def applied_event(entry: Any, wall_ns: int) -> bytes:
    """An input as the runner told it (`firmware.outputs.Applied`): what the journal line holds
    (a final slip's record goes as its own event, `slip_payload`)."""
    extra = {"source": entry.source} if entry.source else {}
    notes = {k: v for k, v in entry.notes.items() if k != SLIP_NOTE}
    return event_payload({**input_to_dict(entry.input), **extra, **notes}, entry.game, entry.seq, wall_ns)


def slip_payload(record: dict, game: str, seq: int, wall_ns: int | None) -> bytes:
    """A signed result slip (hall.wire.messages.SLIP): `record` as journalled beside the signature
    that made it final (its `seq`): scores, penalties, final, numbers, ending, forfeits, recounted."""
    return dumps({"kind": "slip", "game": game, "seq": seq, **record, "at": iso(wall_ns) if wall_ns else None})


def journal_slip(jl: Any, game: str) -> bytes | None:
    """The slip event a journal line holds (the final signature's), else None (also for a damaged
    record: what is published from a file is checked by the schema every reader checks it with)."""
    record = (jl.data or {}).get(SLIP_NOTE)
    if not isinstance(record, dict) or jl.seq is None:
        return None
    payload = slip_payload(record, game, jl.seq, None)
    try:
        SLIP.check(json.loads(payload))
    except Invalid:
        return None
    return payload


def journal_event(jl: Any, game: str) -> bytes:
    """A journal line (game.journal.Line) as its event: the input and what was journalled
    beside it; `at` null (the journal keeps the monotonic time only)."""
    d = {k: v for k, v in (jl.data or {}).items() if k in JOURNAL_NOTES}
    return event_payload({**input_to_dict(jl.event), **d}, game, jl.seq, None)


def ack_payload(cid: str | None, ok: bool, reason: str | None, seq: int | None, wall_ns: int, **extra: Any) -> bytes:
    return dumps({"id": cid, "ok": ok, "reason": reason, "seq": seq, **extra, "at": iso(wall_ns)})


# --- a challenge station's (hall.device.station publishes them) ---------------------------------


def challenge_payloads(record: dict, station: str) -> tuple[bytes, bytes]:
    summary = {
        "id": record.get("id"),
        "time": record.get("time"),
        "station": station,
        "table": record.get("table"),
        "kind": record.get("kind", "self"),
        "lexicon": record.get("lexicon_name"),
        "lexicon_checksum": record.get("lexicon_sha256"),
        "words": len(record.get("words") or []),
        "verdict": record.get("verdict") or ("ACCEPTABLE" if record.get("acceptable") else "UNACCEPTABLE"),
    }
    detail = {
        **summary,
        "words": [{"word": w, "valid": bool(ok)} for w, ok in zip(record.get("words") or [], record.get("per_word") or [])],
    }
    dump = lambda d: json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode()  # noqa: E731
    return dump(summary), dump(detail)
