"""What the console knows about the hall, built only from the broker's messages (docs/hall.md).

A plain value-holder with no I/O and no threads: the MQTT bridge hands it each message on the
console's event loop, and it returns what changed, for the page. Topics (v1):
`rackside/v1/<hall>/table/<n>/{status,state,event,ack}` and `rackside/v1/<hall>/station/<id>/{status,challenge}`.
Events are kept once per `(device, game, seq)`: QoS 1 may deliver twice.
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from rackside.firmware.clock import Rules

from .results import ClockResult, Final, Row

def _loads(payload: bytes):
    """A device's JSON, refusing NaN and Infinity: Python reads them, but the page's JSON.parse and
    the snapshot's JSONResponse do not, so one device's could break the whole hall's page."""
    return json.loads(payload, parse_constant=_not_json, parse_float=_finite)


def _finite(text: str) -> float:
    f = float(text)
    if not math.isfinite(f):  # 1e400
        raise ValueError(f"{text} is out of range")
    return f


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON")


# The rules the page needs to show a live penalty and the forfeit line. A clock's state carries its
# game's own (`rules`); these, WESPA's defaults from the clock core, are the page's fallback, sent as
# data in the snapshot so the page's JavaScript holds no rule of its own.
PAGE_RULES = ("game_time_ms", "penalty_per_minute", "forfeit_overtime_ms", "lateness_forfeit_margin")


def default_rules() -> dict:
    rules = Rules()
    return {name: getattr(rules, name) for name in PAGE_RULES}


HISTORY = 2000  # events kept per table (a game has a few hundred inputs)
FEED = 300  # challenges kept in the feed


@dataclass
class Table:
    n: int
    status: str | None = None  # "online" / "offline" (the Last Will)
    state: dict | None = None  # the retained snapshot, as sent
    names: tuple[str, str] = ("", "")
    numbers: tuple[int | None, int | None] = (None, None)  # TSH player numbers
    challenge: dict | None = None  # a station's challenge in progress for this table
    result: dict | None = None  # the clock's result event, once the game ends
    final: dict | None = None  # the confirmed result (scores with penalties)
    history: deque = field(default_factory=lambda: deque(maxlen=HISTORY))

    def tile(self) -> dict:
        """What a tile needs; the page derives the live times and the tile's class itself."""
        return {
            "table": self.n,
            "status": self.status,
            "state": self.state,
            "names": list(self.names),
            "challenge": None if self.challenge is None else _public_challenge(self.challenge),
            "result": self.result,
            "final": self.final,
        }


def _public_challenge(c: dict) -> dict:
    """A challenge without per-word results: what the feed and tiles carry."""
    return {k: v for k, v in c.items() if k != "word_results"}


@dataclass
class Round:
    division: str = "a"
    number: int = 1
    start: float | None = None  # scheduled start, wall-clock epoch seconds
    late_after_s: int = 300  # a table not started this long after the start is an exception
    game_time_ms: int = 25 * 60_000

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class HallState:
    def __init__(self, hall: str) -> None:
        self.hall = hall
        self.prefix = f"rackside/v1/{hall}/"
        self.tables: dict[int, Table] = {}
        self.stations: dict[str, str] = {}
        self.feed: deque = deque(maxlen=FEED)
        self.challenges: dict[str, dict] = {}  # "station/id" -> full challenge (with per-word results)
        self.seen: set[tuple[str, str, int]] = set()
        self.round = Round()
        self.rows: dict[int, Row] = {}  # table -> confirmed result of this round
        self.pending: dict[str, dict] = {}  # command id -> command, until its ack
        self.problems: deque = deque(maxlen=50)

    def table(self, n: int) -> Table:
        t = self.tables.get(n)
        if t is None:
            t = self.tables[n] = Table(n)
        return t

    # --- messages in ------------------------------------------------------------------------

    def on_message(self, topic: str, payload: bytes) -> list[tuple[str, Any]]:
        """Fold one message in; return the page updates it causes as (kind, data) pairs."""
        if not topic.startswith(self.prefix):
            return []
        parts = topic[len(self.prefix):].split("/")
        if len(parts) < 3:
            return []
        kind, ident, leaf = parts[0], parts[1], "/".join(parts[2:])
        try:
            if kind == "table":
                return self._table_message(int(ident), leaf, payload)
            if kind == "station":
                return self._station_message(ident, leaf, payload)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            self.problems.append(f"{topic}: {e}")
        return []

    def _table_message(self, n: int, leaf: str, payload: bytes) -> list:
        t = self.table(n)
        if leaf == "status":
            t.status = payload.decode(errors="replace").strip()
            return [("table", t.tile())]
        if leaf == "cmd":
            return []  # our own commands come back only if the ACL allows it; history records them when sent
        data = _loads(payload)
        if leaf == "state":
            if not isinstance(data, dict):
                raise ValueError("state is not a JSON object")
            old = t.state or {}
            if old.get("game") == data.get("game") and int(data.get("seq", 0)) < int(old.get("seq", 0)):
                return []  # an older snapshot delivered late
            if old.get("game") not in (None, data.get("game")):
                t.result = t.final = None  # a new game on this table
            t.state = data
            return [("table", t.tile())]
        if leaf == "event":
            key = (f"table/{n}", str(data.get("game")), int(data.get("seq", -1)))
            if key in self.seen:
                return []
            self.seen.add(key)
            entry = {"kind": "input", **data}
            t.history.append(entry)
            out: list = [("event", {"table": n, "event": entry})]
            if _is_result(data):
                t.result = data
                out.append(("table", t.tile()))
            return out
        if leaf == "ack":
            cmd = self.pending.pop(str(data.get("id")), None)
            entry = {"kind": "ack", **data, "command": cmd}
            t.history.append(entry)
            return [("ack", {"table": n, "ack": data, "command": cmd})]
        return []

    def _station_message(self, sid: str, leaf: str, payload: bytes) -> list:
        if leaf == "status":
            self.stations[sid] = payload.decode(errors="replace").strip()
            return [("station", {"station": sid, "status": self.stations[sid]})]
        if leaf in ("challenge", "detail"):  # detail: the per-word results, for the director alone
            c = _loads(payload)
            if not isinstance(c, dict):
                raise ValueError("challenge is not a JSON object")
            cid = str(c.get("id") or f"{sid}:{len(self.challenges)}")
            # kept by station and id: ids are each station's own, and no station may rewrite another's
            known = self.challenges.setdefault(f"{sid}/{cid}", {"station": sid, "id": cid})
            if leaf == "detail":
                known["word_results"] = c.get("words") if isinstance(c.get("words"), list) else []
                c = {k: v for k, v in c.items() if k != "words"}
            elif isinstance(c.get("words"), int):
                c = {**{k: v for k, v in c.items() if k != "words"}, "word_count": c["words"]}
            known.update({**c, "station": sid, "id": cid})
            out: list = []
            table = known.get("table")
            if leaf == "challenge":
                if table is not None:
                    t = self.table(int(table))
                    # a station publishes once judged; a challenge without a verdict is still in progress
                    t.challenge = known if known.get("verdict") in (None, "", "pending") else None
                    t.history.append({"kind": "challenge", **_public_challenge(known)})
                    out.append(("table", t.tile()))
                self.feed.appendleft(_public_challenge(known))
                out.append(("challenge", _public_challenge(known)))
            return out
        return []

    # --- the director's side -----------------------------------------------------------------

    def command_sent(self, n: int, cmd: dict) -> None:
        self.pending[cmd["id"]] = cmd
        self.table(n).history.append({"kind": "command", **cmd})

    def set_players(self, pairings: dict[int, tuple]) -> list:
        """TSH pairings for the round: table -> (side 1 player, side 2 player)."""
        out = []
        for n, (a, b) in pairings.items():
            t = self.table(n)
            t.names = (a.name, b.name)
            t.numbers = (a.number, b.number)
            out.append(("table", t.tile()))
        return out

    def confirm(self, n: int, slip, final: Final, by: str) -> Row:
        t = self.table(n)
        if t.result is None:
            raise KeyError(f"table {n} has no result yet")
        res = ClockResult.from_event(n, t.result.get("game"), t.result)
        row = Row(self.round.division, self.round.number, n, res, slip, final, t.numbers, t.names, by)
        self.rows[n] = row
        t.final = {"scores": list(final.scores), "penalties": list(final.penalties), "note": final.note, "by": by}
        return row

    def snapshot(self) -> dict:
        return {
            "hall": self.hall,
            "round": self.round.as_dict(),
            "rules": default_rules(),
            "tables": [t.tile() for t in sorted(self.tables.values(), key=lambda t: t.n)],
            "feed": list(self.feed)[:100],
            "stations": self.stations,
        }

    def detail(self, n: int) -> dict | None:
        """A table's history, with per-word results of its challenges (the director's eyes only);
        None for a table the console does not know (asking adds no tile)."""
        t = self.tables.get(n)
        if t is None:
            return None
        words = [c for c in self.challenges.values() if str(c.get("table")) == str(n)]
        return {"tile": t.tile(), "history": list(t.history), "challenges": words, "numbers": list(t.numbers)}


def _is_result(data: dict) -> bool:
    return data.get("kind") == "result"
