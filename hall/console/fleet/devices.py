"""The console's Devices page: the devices that joined with the hall's join file, waiting or
numbered, and the director's assign / replace / renumber / revoke (hall.director.fleet does the work).

The page (static/devices.html, devices.js) polls `GET /api/devices` every 2 s and posts
`/api/devices/assign` ({code, number, replace}: the code the director reads off the device, never
its id), `/api/devices/revoke` and `/api/devices/remove` ({device}: a code, or a row's key); all need
the director's session and CSRF token like every console POST. The fleet has its own director
connection to the broker (not the console bridge's: its subscriptions would take the statuses the
hall view needs), made at the first request and kept. Calls into the fleet wait on the broker's
plugin (up to hall.director.dynsec_api.TIMEOUT_S), so they run on a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import threading
from functools import partial
from typing import Callable

from starlette.authentication import requires
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from rackside.hall.wire import join, topics

from ..common import guard
from ..common.guard import DIRECTOR
from ..common.guard import refused as _bad


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
                from rackside.hall.net.link import SESSION_EXPIRY_S

                self._client = connect(self.creds, self.url)
                self._fleet = Fleet(self.creds.hall, self._client, connect_as=lambda cid: connect(
                    self.creds, self.url, client_id=cid, session_expiry=SESSION_EXPIRY_S))
            return self._fleet

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.disconnect()
                self._client.loop_stop()
            self._client = self._fleet = None


async def _body(request: Request, key: str = "device") -> dict:
    """The request's JSON object; its `key` a code (12 digits) or a row's key id."""
    body = await guard.json_object(request)
    ref = body.get(key)
    if not (isinstance(ref, str) and join.KEY_ID.match(ref)):
        body[key] = join.normal_code(ref) if key == "code" or not isinstance(ref, str) else _code_or_key(ref)
    return body


def _code_or_key(ref: str) -> str:
    try:
        return join.normal_code(ref)
    except ValueError:
        raise ValueError(f"device {ref[:40]!r}: allowed are the code the device shows ({join.CODE_DIGITS} digits) "
                         f"or its key as the list shows it") from None


async def page(request: Request) -> Response:
    """/devices: the page itself is a static file the console serves to a logged-in director."""
    return RedirectResponse("/static/devices.html" if request.user.is_authenticated else "/login", status_code=303)


@requires(DIRECTOR, status_code=401)
async def listing(fleet_of: Callable[[], FleetService], request: Request) -> Response:
    try:
        fleet = await asyncio.to_thread(fleet_of().get)
    except (ConnectionError, OSError) as e:
        return _bad(f"not connected to the broker: {e}", 503)
    return JSONResponse({"hall": fleet.hall, "devices": fleet.rows(), "max_table": topics.MAX_TABLE,
                         "kinds": dict(join.KINDS)})


@requires(DIRECTOR, status_code=401)
async def assign(fleet_of: Callable[[], FleetService], request: Request) -> Response:
    from rackside.hall.director.fleet import FleetError

    try:
        body = await _body(request, "code")
        number = body.get("number")
        if not isinstance(number, (int, str)) or isinstance(number, bool) or not str(number).strip():
            raise ValueError(f"number: a table number (1 to {topics.MAX_TABLE}) or a station id")
        replace = body.get("replace", False) is True
        fleet = await asyncio.to_thread(fleet_of().get)
        user = await asyncio.to_thread(fleet.assign, body["code"], str(number).strip(), replace=replace)
    except (ValueError, FleetError) as e:
        return _bad(str(e), 409 if "held by" in str(e) else 400)
    except (ConnectionError, OSError) as e:
        return _bad(f"not connected to the broker: {e}", 503)
    kind, ident = topics.parse_user(user)
    return JSONResponse({"ok": True, "user": user, kind: ident})


@requires(DIRECTOR, status_code=401)
async def revoke(fleet_of: Callable[[], FleetService], request: Request) -> Response:
    return await _act(fleet_of, request, "revoke")


@requires(DIRECTOR, status_code=401)
async def remove(fleet_of: Callable[[], FleetService], request: Request) -> Response:
    return await _act(fleet_of, request, "remove")


async def _act(fleet_of: Callable[[], FleetService], request: Request, action: str) -> Response:
    from rackside.hall.director.fleet import FleetError

    try:
        body = await _body(request)
        fleet = await asyncio.to_thread(fleet_of().get)
        await asyncio.to_thread(getattr(fleet, action), body["device"])
    except (ValueError, FleetError) as e:
        return _bad(str(e))
    except (ConnectionError, OSError) as e:
        return _bad(f"not connected to the broker: {e}", 503)
    return JSONResponse({"ok": True})


def routes(fleet_of: Callable[[], FleetService]) -> list[Route]:
    """The Devices page's endpoints, each given the way to the console's fleet (app.routes composes them)."""
    return [
        Route("/devices", page),
        Route("/api/devices", partial(listing, fleet_of)),
        Route("/api/devices/assign", partial(assign, fleet_of), methods=["POST"]),
        Route("/api/devices/revoke", partial(revoke, fleet_of), methods=["POST"]),
        Route("/api/devices/remove", partial(remove, fleet_of), methods=["POST"]),
    ]
