"""The director's calls from the tables (issue 27 item 3): the incident queue. Pure.

A player calls the director from the clock (a key on the keypad, or a gesture on the three buttons,
so `player` may be absent): the clock neutralises a running game (1.4.3) and publishes the input
"call" naming it ("call-K"). The console queues it, apart from challenges: table, side, since when,
and the page counts how long it has waited. The director acknowledges it (the `call_ack` command:
"on my way") and resolves it with a reason (`call_resolve`, the reason required); the clock journals
both as inputs from the hall (source "hall", by, reason, call), which come back as events and mark
the call as the clock has it. Every step is also audited in the results store (paperless.py) and
is in the table's history (the inputs and the commands are).

`rows()` / `restore()` are what the store keeps, so a restarted console has its open calls.
Bounded: a clock has one call open at a time (game.call), so a table has one open call here: a
new call from a table replaces its previous open one (the clock has resolved it, or is on another
game), and one device sending call after call never pushes out another table's. At most MAX_TABLE
open calls, and the latest RESOLVED_SHOWN resolved ones (MAX_CALLS in all).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import asdict, dataclass

from rackside.game.call import BUTTONS, CALL_HOW, KEYPAD
from rackside.game.checkin import MAX_TABLE

RESOLVED_SHOWN = 20  # resolved calls the page lists under the open ones, and all that are kept
MAX_CALLS = MAX_TABLE + RESOLVED_SHOWN  # one open call a table, and the latest resolved
WAITING, ACKNOWLEDGED, RESOLVED = "waiting", "acknowledged", "resolved"


class CallError(ValueError):
    """An acknowledgement or a resolution the queue cannot take (one line: why)."""


@dataclass
class Call:
    table: int
    call: str  # the clock's id, "call-K"
    game: str
    side: int | None  # who called (None: `#` held alone or the buttons' gesture, which have no side)
    at: str | None  # when, by the clock
    seq: int = 0
    status: str = WAITING
    acked_by: str = ""
    acked_at: str | None = None
    resolved_by: str = ""
    resolved_at: str | None = None
    reason: str = ""
    clock: str = ""  # what the clock has applied of the answers: "", "call_ack", "call_resolve"
    how: str | None = None  # how it was made (game.call.CALL_HOW); None: an older clock's call, or an older console's row

    @property
    def who(self) -> str:
        """Who called, as the Calls drawer, the tile and the audit say it."""
        if self.side is not None:
            return f"side {self.side}"
        return {KEYPAD: "the keypad", BUTTONS: "the buttons"}.get(self.how, "no side")

    def as_dict(self) -> dict:
        return asdict(self)

    def shown(self) -> dict:
        """The call as the page has it: its row, and who called."""
        return {**asdict(self), "who": self.who}


class Incidents:
    def __init__(self) -> None:
        self.calls: OrderedDict[tuple, Call] = OrderedDict()  # (table, call) -> Call, oldest first

    def called(self, n: int, event: dict) -> Call | None:
        """A "call" input at table `n`: queued (None for one queued already: a repeat)."""
        key = (n, event["call"])
        known = self.calls.get(key)
        if known is not None and known.game == event["game"]:
            return None
        self.calls.pop(key, None)  # the same id in a later game: a new call
        for k in [k for k, x in self.calls.items() if k[0] == n and x.status != RESOLVED]:
            del self.calls[k]  # the table's previous open call: its clock has one open at a time
        c = self.calls[key] = Call(n, event["call"], event["game"], event.get("player"), event.get("at"), event["seq"], how=event.get("how"))
        self._bound()
        return c

    def answered_on_clock(self, n: int, event: dict) -> Call | None:
        """The clock's input "call_ack" / "call_resolve" (from the hall's command): the call as the
        clock has it; a resolution made elsewhere (another console) resolves it here too."""
        c = self.calls.get((n, event.get("call")))
        if c is None:
            return None
        c.clock = event["input"]
        if event["input"] == "call_resolve" and c.status != RESOLVED:
            c.status, c.resolved_by, c.resolved_at, c.reason = RESOLVED, event.get("by") or "", event.get("at"), event.get("reason") or ""
            self._bound()
        elif event["input"] == "call_ack" and c.status == WAITING:
            c.status, c.acked_by, c.acked_at = ACKNOWLEDGED, event.get("by") or "", event.get("at")
        return c

    def find(self, n: int, call: str) -> Call:
        c = self.calls.get((n, call))
        if c is None:
            raise CallError(f"table {n} has no call {str(call)[:20]!r}")
        return c

    def acknowledge(self, n: int, call: str, by: str, at: str) -> Call:
        c = self.find(n, call)
        if c.status == RESOLVED:
            raise CallError(f"table {n}'s {call} is resolved already ({c.reason})")
        if c.status == WAITING:
            c.status, c.acked_by, c.acked_at = ACKNOWLEDGED, by, at
        return c

    def resolve(self, n: int, call: str, by: str, at: str, reason: str) -> Call:
        reason = " ".join(str(reason or "").split())
        if not reason:
            raise CallError("a call is resolved with a reason (it is audited, and journalled on the clock)")
        c = self.find(n, call)
        if c.status == RESOLVED:
            raise CallError(f"table {n}'s {call} is resolved already ({c.reason})")
        if not c.acked_at:
            c.acked_by, c.acked_at = by, at
        c.status, c.resolved_by, c.resolved_at, c.reason = RESOLVED, by, at, reason
        self._bound()
        return c

    def queue(self) -> list[dict]:
        """The open calls, oldest first (the longest waiting at the top), then the latest resolved."""
        open_ = [c.shown() for c in self.calls.values() if c.status != RESOLVED]
        done = [c.shown() for c in self.calls.values() if c.status == RESOLVED][-RESOLVED_SHOWN:]
        return open_ + list(reversed(done))

    def rows(self) -> list[dict]:
        return [c.as_dict() for c in self.calls.values()]

    def restore(self, rows) -> list[str]:
        """The calls the store kept; a damaged row is skipped, and said (by its number)."""
        problems = []
        for i, row in enumerate(rows if isinstance(rows, list) else [], 1):
            try:
                c = Call(**row)
                if not isinstance(c.table, int) or not isinstance(c.call, str):
                    raise TypeError("table and call")
                if c.how is not None and c.how not in CALL_HOW:
                    raise TypeError(f"how is one of {', '.join(CALL_HOW)}")
            except TypeError as e:
                problems.append(f"kept call {i} skipped: {e}")
                continue
            if c.status != RESOLVED:  # one open call a table (a store kept by an older console may have more)
                for k in [k for k, x in self.calls.items() if k[0] == c.table and x.status != RESOLVED]:
                    del self.calls[k]
            self.calls[(c.table, c.call)] = c
        self._bound()
        return problems

    def _bound(self) -> None:
        resolved = [k for k, c in self.calls.items() if c.status == RESOLVED]
        for k in resolved[:max(0, len(resolved) - RESOLVED_SHOWN)]:  # the oldest resolved first
            del self.calls[k]
        while len(self.calls) > MAX_CALLS:  # only a store from elsewhere: the oldest goes
            self.calls.popitem(last=False)
