"""The open event streams, each bounded by bytes: the hall's (/api/events, every page) and an open
table's (/api/table/N/events, a page with that table's detail open).

A table's history (its clock's events and the director's commands to it: TABLE_ONLY) goes only to
the streams of the pages that have that table open, never to every page (issue 28.4: at 300 tables
that was every second message a page read, each a wake-up of its renderer, for a list nobody had on
screen). Acknowledgements go to both: the hall's stream says so in a toast, the table's puts it in
the history.

Every change is encoded once and queued on each open stream; a table's tile that repeats the one
last sent (a clock's state repeated with its times ticked on: hallstate.repeats) is not sent. A page that stops reading (a laptop
asleep, a stalled network) fills its queue; past STREAM_QUEUE_BYTES the stream is dropped: its
queue is freed and the stream ends, and the page's EventSource reconnects and starts again from a
snapshot. At most MAX_STREAMS are open at once. Touched only on the console's event loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from typing import Any

from . import limits
from .hallstate import repeats, tile_look

log = logging.getLogger("rackside.hall.console")


def sse(kind: str, data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'), allow_nan=False)}\n\n"


# the kinds that belong to one table's history: sent only to the streams open on that table
TABLE_ONLY = frozenset({"event", "command"})
BOTH = frozenset({"ack"})  # a toast on every page, a line in the open table's history


class Stream:
    def __init__(self, table: int | None = None) -> None:
        self.table = table  # None: the hall's stream; else the open table's
        self.items: deque[str] = deque()
        self.bytes = 0
        self.ready = asyncio.Event()
        self.dropped = False

    def put(self, msg: str) -> bool:
        """Queue one message; False (and the stream dropped, its queue freed) past the budget."""
        if self.bytes + len(msg) > limits.STREAM_QUEUE_BYTES:
            self.items.clear()
            self.bytes = 0
            self.dropped = True
            self.ready.set()
            return False
        self.items.append(msg)
        self.bytes += len(msg)
        self.ready.set()
        return True

    def take(self) -> list[str]:
        out = list(self.items)
        self.items.clear()
        self.bytes = 0
        self.ready.clear()
        return out


class Hub:
    def __init__(self) -> None:
        self.streams: set[Stream] = set()
        self.dropped = 0  # streams dropped for not reading (for the logs and tests)
        # each table's tile as last sent (hallstate.tile_look), one a table (at most limits.MAX_TABLE):
        # a tile that repeats it is not sent again. Kept with no stream open too: a stream opens
        # with a snapshot at least as new, so what it was last sent is never older than this.
        self.looks: dict[int, tuple] = {}

    def open(self, table: int | None = None) -> Stream | None:
        """A new stream (the hall's, or `table`'s history), or None when MAX_STREAMS are open, of
        either kind."""
        if len(self.streams) >= limits.MAX_STREAMS:
            return None
        s = Stream(table)
        self.streams.add(s)
        return s

    def close(self, s: Stream) -> None:
        self.streams.discard(s)

    def publish(self, kind: str, data: Any) -> None:
        if kind == "table" and isinstance(data, dict) and isinstance(data.get("table"), int):
            look = tile_look(data)
            if repeats(self.looks.get(data["table"]), look):
                return
            self.looks[data["table"]] = look
        if not self.streams:
            return
        if kind in TABLE_ONLY or kind in BOTH:
            n = data.get("table") if isinstance(data, dict) else None
            to = [s for s in self.streams if s.table is not None and s.table == n] + \
                ([s for s in self.streams if s.table is None] if kind in BOTH else [])
        else:
            to = [s for s in self.streams if s.table is None]
        if not to:
            return
        try:
            msg = sse(kind, data)
        except (ValueError, TypeError, RecursionError) as e:  # the schema keeps these out; never a crash
            log.error("console: a %s update could not be encoded: %s", kind, e)
            return
        for s in to:
            if not s.put(msg):
                self.streams.discard(s)
                self.dropped += 1
                log.warning("console: an event stream fell %d bytes behind and was dropped (the page resyncs)",
                            limits.STREAM_QUEUE_BYTES)
