"""The console's Devices page: the devices that joined with the hall's join file, waiting or
numbered, and the director's assign / replace / renumber / revoke (hall.director.fleet does the work).

The page (static/devices.html, devices.js) polls `GET /api/devices` every 2 s and posts
`/api/devices/assign` ({device, number, replace}) and `/api/devices/revoke` ({device}); both need
the director's session and CSRF token like every console POST. The fleet has its own director
connection to the broker (not the console bridge's: its subscriptions would take the statuses the
hall view needs), made at the first request and kept. Calls into the fleet wait on the broker's
plugin (up to hall.director.dynsec_api.TIMEOUT_S), so they run on a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import threading

from starlette.authentication import requires
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from rackside.hall.wire import join, topics

from . import guard
from .guard import refused as _bad

DIRECTOR = "director"


class FleetService:
    """The console's fleet: one director connection, made when first needed."""

    def __init__(self, hall: str, url: str, user: str, password: str, ca_file: str | None) -> None:
        from rackside.hall.net.config import Credentials

        self.creds = Credentials(hall=hall, user=user, password=password, tls_ca=ca_file)
        self.url = url
        self._lock = threading.Lock()
        self._client = None
        self._fleet = None

    def get(self):
        from rackside.hall.director.fleet import Fleet
        from rackside.hall.net.client import connect

        with self._lock:
            if self._fleet is None:
                self._client = connect(self.creds, self.url)
                self._fleet = Fleet(self.creds.hall, self._client)
            return self._fleet

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.disconnect()
                self._client.loop_stop()
            self._client = self._fleet = None


def _service(request: Request) -> FleetService:
    return request.app.state.console.fleet


async def _body(request: Request) -> dict:
    body = await guard.json_object(request)
    device = body.get("device")
    try:
        join.check_device_id(device)
    except ValueError as e:
        raise ValueError(str(e)) from None
    return body


async def page(request: Request) -> Response:
    """/devices: the page itself is a static file the console serves to a logged-in director."""
    return RedirectResponse("/static/devices.html" if request.user.is_authenticated else "/login", status_code=303)


@requires(DIRECTOR, status_code=401)
async def listing(request: Request) -> Response:
    try:
        fleet = await asyncio.to_thread(_service(request).get)
    except (ConnectionError, OSError) as e:
        return _bad(f"not connected to the broker: {e}", 503)
    return JSONResponse({"hall": fleet.hall, "devices": fleet.rows(), "max_table": topics.MAX_TABLE,
                         "kinds": dict(join.KINDS)})


@requires(DIRECTOR, status_code=401)
async def assign(request: Request) -> Response:
    from rackside.hall.director.fleet import FleetError

    try:
        body = await _body(request)
        number = body.get("number")
        if not isinstance(number, (int, str)) or isinstance(number, bool) or not str(number).strip():
            raise ValueError(f"number: a table number (1 to {topics.MAX_TABLE}) or a station id")
        replace = body.get("replace", False) is True
        fleet = await asyncio.to_thread(_service(request).get)
        user = await asyncio.to_thread(fleet.assign, body["device"], str(number).strip(), replace=replace)
    except (ValueError, FleetError) as e:
        return _bad(str(e), 409 if "held by" in str(e) else 400)
    except (ConnectionError, OSError) as e:
        return _bad(f"not connected to the broker: {e}", 503)
    kind, ident = topics.parse_user(user)
    return JSONResponse({"ok": True, "user": user, kind: ident})


@requires(DIRECTOR, status_code=401)
async def revoke(request: Request) -> Response:
    from rackside.hall.director.fleet import FleetError

    try:
        body = await _body(request)
        fleet = await asyncio.to_thread(_service(request).get)
        await asyncio.to_thread(fleet.revoke, body["device"])
    except (ValueError, FleetError) as e:
        return _bad(str(e))
    except (ConnectionError, OSError) as e:
        return _bad(f"not connected to the broker: {e}", 503)
    return JSONResponse({"ok": True})


ROUTES = [
    Route("/devices", page),
    Route("/api/devices", listing),
    Route("/api/devices/assign", assign, methods=["POST"]),
    Route("/api/devices/revoke", revoke, methods=["POST"]),
]
