"""The open event streams, one a page (/api/events), each bounded by bytes.

A table's history (its clock's events and the director's commands to it: TABLE_ONLY) goes only to
the streams of the pages that watch that table (its detail drawer open: Hub.watch), never to every
page (issue 28.4: at 300 tables that was every second message a page read, each a wake-up of its
renderer, for a list nobody had on screen). A page's one stream carries both, so a page with its
drawer open holds one of the browser's six connections to the console, not two. Acknowledgements
go to every stream (a toast; the open table's history too, on the page that watches it).

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
import secrets
from collections import deque
from typing import Any

from ..common import limits
from ..state.hallstate import repeats, tile_look

log = logging.getLogger("rackside.hall.console")


def sse(kind: str, data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'), allow_nan=False)}\n\n"


# the kinds that belong to one table's history: sent only to the streams watching that table
TABLE_ONLY = frozenset({"event", "command"})


class Stream:
    def __init__(self, owner: str | None = None) -> None:
        self.id = secrets.token_urlsafe(16)  # the page learns it from its snapshot, to say what it watches
        self.owner = owner  # the login session that opened it: only that session may steer it
        self.watching: int | None = None  # the table whose history it carries (the page's open drawer)
        self.items: deque[str] = deque()
        self.bytes = 0
        self.ready = asyncio.Event()
        self.dropped = False  # dropped for falling behind, or ended by the console's stop (Hub.end_all)

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

    def open(self, owner: str | None = None) -> Stream | None:
        """A new stream for a page of the login session `owner`, or None when MAX_STREAMS are open."""
        if len(self.streams) >= limits.MAX_STREAMS:
            return None
        s = Stream(owner)
        self.streams.add(s)
        return s

    def find(self, stream_id: str, owner: str | None) -> Stream | None:
        """The open stream `stream_id` of the session `owner` (None for another session's, or one
        that has ended)."""
        asked = stream_id.encode("utf-8", "replace")  # (compare_digest takes ASCII text only: a path is any text)
        for s in self.streams:
            if secrets.compare_digest(s.id.encode(), asked) and s.owner == owner:
                return s
        return None

    def watch(self, s: Stream, table: int | None, detail: dict | None) -> bool:
        """`s` carries `table`'s history from now on (None: no table's): first its `detail` as it is
        now, then each entry as it comes, with nothing lost or repeated between the two (both are
        taken on the console's event loop, which alone changes them). False when the detail could not
        be encoded (the stream then watches nothing: the page asks again)."""
        s.watching = None
        if table is None or detail is None:
            return True
        try:
            msg = sse("detail", {**detail, "table": table})
        except (ValueError, TypeError, RecursionError) as e:  # as publish: the schema keeps these out; never a crash
            log.error("console: table %d's detail could not be encoded: %s", table, e)
            return False
        s.watching = table
        if not s.put(msg):
            self._drop(s)
        return True

    def close(self, s: Stream) -> None:
        self.streams.discard(s)

    def end_all(self) -> None:
        """The console stops: every page's stream ends now (on the event loop). A stream never ends by
        itself, and the server waits for its connections to close before it stops (serve.ConsoleServer):
        with a page open, a SIGTERM waited until the process was killed. The page's EventSource then
        finds the console gone, and reconnects to a snapshot when it is back."""
        for s in list(self.streams):
            s.dropped = True
            s.ready.set()

    def publish(self, kind: str, data: Any) -> None:
        if kind == "table" and isinstance(data, dict) and isinstance(data.get("table"), int):
            look = tile_look(data)
            if repeats(self.looks.get(data["table"]), look):
                return
            self.looks[data["table"]] = look
        if not self.streams:
            return
        if kind in TABLE_ONLY:
            n = data.get("table") if isinstance(data, dict) else None
            to = [s for s in self.streams if s.watching is not None and s.watching == n]
        else:
            to = list(self.streams)
        if not to:
            return
        try:
            msg = sse(kind, data)
        except (ValueError, TypeError, RecursionError) as e:  # the schema keeps these out; never a crash
            log.error("console: a %s update could not be encoded: %s", kind, e)
            return
        for s in to:
            if not s.put(msg):
                self._drop(s)

    def _drop(self, s: Stream) -> None:
        self.streams.discard(s)
        self.dropped += 1
        log.warning("console: an event stream fell %d bytes behind and was dropped (the page resyncs)",
                    limits.STREAM_QUEUE_BYTES)
