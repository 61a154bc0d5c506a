"""What keeps an outsider on the hall's network from knocking the console over, before any request
reaches the app (limits.py has every figure; docs/console.md, "Limits", states them).

- `GuardedH11`: uvicorn's own h11 protocol with three bounds it lacks: a request's line and headers
  must arrive within HEADER_TIMEOUT_S (uvicorn's keep-alive timer is cancelled by any byte, so a
  client sending one byte a second held a connection for ever, and 1,100 of them every file
  descriptor); at most MAX_CONNECTIONS_PER_SOURCE open connections from one address; and a client
  that reads nothing of a response for WRITE_STALL_S is cut off (asyncio's close() would wait for
  its buffer to drain, so it is aborted). Subclassed rather than wrapped: these hooks are the
  protocol's own (connection_made, pause_writing, ...), and the rest stays uvicorn's.
- `BodyLimit`: a request body over MAX_BODY_BYTES is refused with 413 without being read, before
  the session or the login are looked at (a 1 GB login body used to be read whole), and the body
  must arrive within BODY_TIMEOUT_S. The one exception is an update's bundle (POST UPLOAD_PATH):
  MAX_BUNDLE_BYTES within BUNDLE_TIMEOUT_S (still before the session is looked at: its endpoint
  needs the director's session and CSRF token like every POST).
- `SecurityHeaders`: a Content-Security-Policy with no inline script, no framing, no referrer.
"""

from __future__ import annotations

import asyncio

import h11
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from uvicorn.protocols.http.h11_impl import H11Protocol

from . import limits

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class GuardedH11(H11Protocol):
    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        per_source = self.server_state.__dict__.setdefault("rackside_per_source", {})
        self.source = self.client[0] if self.client else "?"
        per_source[self.source] = per_source.get(self.source, 0) + 1
        self.stall_timer: asyncio.TimerHandle | None = None
        self.header_timer: asyncio.TimerHandle | None = None
        if per_source[self.source] > limits.MAX_CONNECTIONS_PER_SOURCE:
            transport.abort()
            return
        self._await_headers()

    def connection_lost(self, exc) -> None:
        per_source = self.server_state.__dict__.setdefault("rackside_per_source", {})
        left = per_source.get(self.source, 1) - 1
        if left > 0:
            per_source[self.source] = left
        else:
            per_source.pop(self.source, None)
        for timer in (self.header_timer, self.stall_timer):
            if timer is not None:
                timer.cancel()
        super().connection_lost(exc)

    def _await_headers(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
        self.header_timer = self.loop.call_later(limits.HEADER_TIMEOUT_S, self._too_slow)

    def _too_slow(self) -> None:
        if self.conn.their_state is h11.IDLE:  # still no complete request line and headers
            self.transport.abort()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE and self.header_timer is not None:
            self.header_timer.cancel()  # the headers are in; the body has its own deadline (BodyLimit)
            self.header_timer = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_headers()  # the next request on this connection has the same deadline

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.stall_timer is None:
            self.stall_timer = self.loop.call_later(limits.WRITE_STALL_S, self.transport.abort)

    def resume_writing(self) -> None:
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
