"""What keeps an outsider on the hall's network from knocking the console over, before any request
reaches the app (limits.py has every figure; docs/console.md, "Limits", states them).

- `GuardedH11`: uvicorn's own h11 protocol with the bounds it lacks: the TLS handshake and a
  request's line and headers must arrive within HEADER_TIMEOUT_S (uvicorn's keep-alive timer is
  cancelled by any byte, so a client sending one byte a second held a connection for ever, and
  1,100 of them every file descriptor); TLS is started here, inside those bounds, not in the
  listening socket (where a connection in its handshake was counted by nothing for asyncio's 60 s);
  connections are counted by `Crowd` (MAX_CONNECTIONS_PER_SOURCE from one address, MAX_WAITING
  waiting for a request and MAX_CONNECTIONS in all, past which a crowd's waiting connections are
  closed, busiest address first, never the newcomer's); and a client that reads nothing of a
  response for WRITE_STALL_S is cut off (asyncio's close() would wait for its buffer to drain, so
  it is aborted). Subclassed rather than wrapped: these hooks are the protocol's own
  (connection_made, pause_writing, ...), and the rest stays uvicorn's.
- `Admission`: requests without the director's session are at most MAX_ANONYMOUS_REQUESTS in
  flight; a signed-in director's are never refused for them (issue 25: 1,100 half-open
  connections from 20 addresses got the director 1 answer in 36).
- `BodyLimit`: a request body over MAX_BODY_BYTES is refused with 413 without being read, before
  the session or the login are looked at (a 1 GB login body used to be read whole), and the body
  must arrive within BODY_TIMEOUT_S. The one exception is an update's bundle (POST UPLOAD_PATH):
  MAX_BUNDLE_BYTES within BUNDLE_TIMEOUT_S (still before the session is looked at: its endpoint
  needs the director's session and CSRF token like every POST).
- `SecurityHeaders`: a Content-Security-Policy with no inline script, no framing, no referrer.
"""

from __future__ import annotations

import asyncio
import gc
import ssl
import traceback
from datetime import datetime, timezone

import h11
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from uvicorn.protocols.http.h11_impl import H11Protocol

from rackside.hall.wire import update as _update

from . import limits

DIRECTOR = "director"  # the one scope a logged-in session has: every director endpoint `requires` it


def now_iso() -> str:
    """The time a director's action or a command is stamped with (UTC, to the millisecond)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


SWEEP_AFTER = 16  # closed connections before a collection is due (Crowd.sweep)
SWEEP_DELAY_S = 1.0  # ... which runs this long after it is due: one a second at most, whatever a crowd does


class Crowd:
    """Every connection the console holds, by address, and those waiting for a request (a TLS
    handshake, a request's line and headers, or a kept-alive connection's next request), oldest
    first. One per server (uvicorn's ServerState), on the event loop's thread only.

    Why eviction rather than refusal: a connection cannot be told apart from the director's until
    its cookie arrives with its headers, so a full house of waiting connections must not refuse a
    new one. Past MAX_WAITING (or MAX_CONNECTIONS in all), the oldest waiting connection of the
    address with the most waiting is closed: a crowd churns its own connections, and a director's
    browser, a few connections from one address whose requests come at once, is the last to go.
    Addresses with one waiting connection each (a fleet of clocks fetching an update at once) are
    thinned only past MAX_CONNECTIONS."""

    def __init__(self, bounds: limits.Crowding = limits.DIRECTOR) -> None:
        self.bounds = bounds  # the listener's caps: the director's, or the public hall's (limits.PUBLIC)
        self.closed = 0  # connections closed since the last collection (sweep)
        self.sweep_due: asyncio.TimerHandle | None = None
        self.per_source: dict[str, int] = {}
        self.waiting: dict["GuardedH11", None] = {}  # insertion-ordered: the oldest first
        self.waiting_per_source: dict[str, int] = {}

    @property
    def total(self) -> int:
        return sum(self.per_source.values())

    def add(self, conn: "GuardedH11") -> bool:
        """Count a new connection; False if its address already has its share (it is refused)."""
        self.per_source[conn.source] = self.per_source.get(conn.source, 0) + 1
        conn.counted = True
        return self.per_source[conn.source] <= self.bounds.per_source

    def wait(self, conn: "GuardedH11") -> None:
        if conn not in self.waiting:
            self.waiting[conn] = None
            self.waiting_per_source[conn.source] = self.waiting_per_source.get(conn.source, 0) + 1

    def busy(self, conn: "GuardedH11") -> None:
        if self.waiting.pop(conn, False) is None:
            left = self.waiting_per_source[conn.source] - 1
            if left:
                self.waiting_per_source[conn.source] = left
            else:
                del self.waiting_per_source[conn.source]

    def forget(self, conn: "GuardedH11") -> None:
        """Uncount a connection closed or lost (once, whichever comes first)."""
        self.busy(conn)
        if not conn.counted:
            return
        conn.counted = False
        self.closed += 1
        if self.closed >= SWEEP_AFTER and self.sweep_due is None:
            self.sweep_due = asyncio.get_running_loop().call_later(SWEEP_DELAY_S, self.sweep)
        left = self.per_source.get(conn.source, 1) - 1
        if left > 0:
            self.per_source[conn.source] = left
        else:
            self.per_source.pop(conn.source, None)

    def sweep(self) -> None:
        """What a closed connection leaves in reference cycles (asyncio's transports keep bound
        methods of themselves; _start_tls clears the largest, its TLS buffer) is freed only when the
        cycle collector runs, and an idle console runs it never: a burst of closed connections is
        followed by one full collection, at most one a SWEEP_DELAY_S. It costs about 17 ms, as
        serve.run_foreground froze what start-up made (gc.freeze): 126 ms before, long enough for a
        crowd to overflow the listening socket's backlog meanwhile."""
        self.sweep_due = None
        self.closed = 0
        gc.collect()

    def make_room(self) -> bool:
        """Close waiting connections until the bounds hold; False if only busy ones are left."""
        while (over_total := self.total > self.bounds.connections) or len(self.waiting) > self.bounds.waiting:
            if not self.waiting:
                return False
            busiest = max(self.waiting_per_source, key=self.waiting_per_source.__getitem__)
            if not over_total and self.waiting_per_source[busiest] == 1:
                break  # one waiting connection an address (200 clocks fetching an update at once): only the total bounds these
            victim = next(c for c in self.waiting if c.source == busiest)
            victim.close_now()
        return True


class GuardedH11(H11Protocol):
    def connection_made(self, transport) -> None:  # type: ignore[override]
        self.raw = transport  # the TCP connection itself: what a bound closes (TLS or not)
        self.made = False  # uvicorn's connection_made has been called (after the TLS handshake)
        self.early: list[bytes] = []
        self.counted = False
        self.stall_timer: asyncio.TimerHandle | None = None
        self.header_timer: asyncio.TimerHandle | None = None
        peer = transport.get_extra_info("peername")
        self.source = peer[0] if peer else "?"
        bounds = getattr(self.config, "rackside_crowding", limits.DIRECTOR)  # the public listener sets its own
        self.crowd = self.server_state.__dict__.setdefault("rackside_crowd", Crowd(bounds))
        if not self.crowd.add(self):
            self.close_now()
            return
        self.crowd.wait(self)
        self._await_headers()
        if not self.crowd.make_room():
            self.close_now()
            return
        tls = getattr(self.config, "rackside_tls", None)
        if tls is None:
            self._made(transport)
        else:
            transport.pause_reading()  # start_tls takes the connection over on the next turn of the loop
            self.loop.create_task(self._start_tls(transport, tls))

    async def _start_tls(self, transport, tls) -> None:
        """TLS here rather than in the listening socket (uvicorn's ssl=), so the bounds above apply
        from the TCP accept: asyncio's own handshake timeout is 60 s, and a connection in its
        handshake (256 KiB of buffer each) was counted by no cap."""
        if transport.is_closing():
            return
        try:
            wrapped = await self.loop.start_tls(transport, self, tls, server_side=True,
                                                ssl_handshake_timeout=limits.HEADER_TIMEOUT_S)
        except (OSError, ssl.SSLError, asyncio.TimeoutError, ConnectionError) as e:
            # start_tls closed it; connection_lost does the counting. Its frame, kept by the
            # exception's traceback, holds the waiter that holds the exception: a reference cycle
            # keeping the TLS layer's 256 KiB buffer until the cycle collector ran, which an idle
            # console did never (a crowd's 300 MiB stayed). Clearing the frames frees it now.
            traceback.clear_frames(e.__traceback__)
            return
        if wrapped is None or transport.is_closing():  # closed (or cut off by a bound) as the handshake ended
            if wrapped is not None:
                wrapped.abort()
            return
        self._made(wrapped)

    def _made(self, transport) -> None:
        self.made = True
        super().connection_made(transport)
        early, self.early = self.early, []
        for data in early:  # what the TLS layer delivered before start_tls returned
            super().data_received(data)

    def close_now(self) -> None:
        self.crowd.forget(self)
        self.raw.abort()

    def data_received(self, data: bytes) -> None:
        if not self.made:
            self.early.append(data)
            return
        super().data_received(data)

    def connection_lost(self, exc) -> None:
        self.crowd.forget(self)
        for timer in (self.header_timer, self.stall_timer):
            if timer is not None:
                timer.cancel()
        if self.made:
            super().connection_lost(exc)

    def _await_headers(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
        self.header_timer = self.loop.call_later(limits.HEADER_TIMEOUT_S, self._too_slow)

    def _too_slow(self) -> None:
        if not self.made or self.conn.their_state is h11.IDLE:  # no TLS yet, or no whole request line and headers
            self.close_now()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE and self.header_timer is not None:
            self.header_timer.cancel()  # the headers are in; the body has its own deadline (BodyLimit)
            self.header_timer = None
            self.crowd.busy(self)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self.crowd.wait(self)  # a kept-alive connection waits again, the newest
            self._await_headers()  # the next request on this connection has the same deadline

    def pause_writing(self) -> None:
        if not self.made:
            return
        super().pause_writing()
        if self.stall_timer is None:
            self.stall_timer = self.loop.call_later(limits.WRITE_STALL_S, self.close_now)

    def resume_writing(self) -> None:
        if not self.made:
            return
        super().resume_writing()
        if self.stall_timer is not None:
            self.stall_timer.cancel()
            self.stall_timer = None


class BodyLimit:
    """ASGI middleware: bodies over their limit refused (413) unread; the body within its time (408)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        bundle = scope["path"] == limits.UPLOAD_PATH
        most = limits.MAX_BUNDLE_BYTES if bundle else limits.MAX_BODY_BYTES
        for name, value in scope["headers"]:
            if name == b"content-length" and (not value.isdigit() or int(value) > most):
                return await _refuse(send, 413, f"the request body is over {most} bytes")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (limits.BUNDLE_TIMEOUT_S if bundle else limits.BODY_TIMEOUT_S)
        received = 0

        async def bounded_receive():
            nonlocal received
            left = deadline - loop.time()
            try:
                message = await asyncio.wait_for(receive(), max(left, 0.001))
            except asyncio.TimeoutError:
                raise HTTPException(408, "the request body took too long") from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > most:
                    raise HTTPException(413, f"the request body is over {most} bytes")
            return message

        # only a POST's body is read; a GET's receive is the event stream waiting for its disconnect
        await self.app(scope, bounded_receive if scope["method"] == "POST" else receive, send)


async def _refuse(send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"), *HEADERS]})
    await send({"type": "http.response.body", "body": body})


class Admission:
    """ASGI middleware (inside the authentication): at most MAX_ANONYMOUS_REQUESTS requests in flight
    without the director's session (503 above it, and the connection waits again, where guard.Crowd
    can close it); a request bearing a live session is always let through, so slots a crowd fills
    with slow bodies or unread answers are never the director's. An update's download is let
    through too: its endpoint refuses a wrong token at once, and a fleet of clocks fetches at once."""

    def __init__(self, app) -> None:
        self.app = app
        self.anonymous = 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["user"].is_authenticated or scope["path"] == _update.DOWNLOAD_PATH:
            return await self.app(scope, receive, send)
        if self.anonymous >= limits.MAX_ANONYMOUS_REQUESTS:
            return await _refuse(send, 503, "the console is busy: try again")
        self.anonymous += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.anonymous -= 1


class SecurityHeaders:
    """ASGI middleware: the security headers on every response."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)


def refused(msg: str, status: int = 400) -> JSONResponse:
    """A refused API request, in the one shape every endpoint answers with: {"error": what was wrong}."""
    return JSONResponse({"error": msg}, status_code=status)


async def json_object(request) -> dict:
    """A request's body as a JSON object, or ValueError saying what it must be (after BodyLimit has
    bounded its size; RecursionError is a body nested past what json can read)."""
    try:
        body = await request.json()
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        raise ValueError("the request body must be a JSON object")
    return body
