"""The console's web app (Starlette): login, the page, server-sent events, commands, results.

Everything except the login page and its stylesheet needs a session; every POST also needs the
session's CSRF token in the `X-CSRF-Token` header. Commands go to the broker through the bridge and
their acks come back over the same event stream as everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from . import auth, results, tsh
from .hallstate import HallState

log = logging.getLogger("rackside.hall.console")
STATIC = Path(__file__).parent / "static"
PUBLIC_STATIC = {"login.html", "login.js", "style.css"}
COMMANDS = ("late_start", "arrive", "adjust", "new_game", "identify")
KEEPALIVE_S = 15.0


class Hub:
    """The open event streams. Each page has a queue; a page that stops reading is dropped rather
    than let the console's memory grow."""

    def __init__(self) -> None:
        self.queues: set[asyncio.Queue] = set()

    def publish(self, kind: str, data: Any) -> None:
        if not self.queues:
            return
        msg = f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
        for q in list(self.queues):
            try:
                q.put_nowait(msg)
            except asyncio.QueueFull:
                self.queues.discard(q)  # its stream ends when it next looks


class Console:
    """The console's state and its edges: the hall state, the open pages, and a way to send."""

    def __init__(self, hall: str, password_hash: str, send: Callable[[int, dict], None] | None = None) -> None:
        self.state = HallState(hall)
        self.password_hash = password_hash
        self.hub = Hub()
        self.lockout = auth.Lockout()
        # One login try at a time: the lockout is checked and counted around the scrypt, so tries
        # sent all at once must queue here, or a burst of any size passes the check before one fails.
        self.login_lock = asyncio.Lock()
        self.send = send  # (table, command) -> None; set once the bridge exists
        self.divisions: dict[str, tsh.Division] = {}
        self.broker_up = False
        self.loop: asyncio.AbstractEventLoop | None = None
        # the broker connection (serve.Bridge), started by the app's lifespan once the event loop
        # runs: messages it delivers before that would have nowhere to go (issue 17.1)
        self.bridge = None

    # called on the event loop (the bridge hands messages over with call_soon_threadsafe)
    def on_message(self, topic: str, payload: bytes) -> None:
        for kind, data in self.state.on_message(topic, payload):
            self.hub.publish(kind, data)

    def on_connection(self, up: bool, why: str) -> None:
        self.broker_up = up
        self.hub.publish("broker", {"up": up, "why": why})

    def deliver_threadsafe(self, topic: str, payload: bytes) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.on_message, topic, payload)

    def connection_threadsafe(self, up: bool, why: str) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.on_connection, up, why)

    def apply_pairings(self) -> None:
        div = self.divisions.get(self.state.round.division)
        if div is None:
            return
        for kind, data in self.state.set_players(div.pairings(self.state.round.number)):
            self.hub.publish(kind, data)

    def import_tsh(self, divisions: list[tsh.Division]) -> list[str]:
        for d in divisions:
            self.divisions[d.name] = d
        self.apply_pairings()
        return [p for d in divisions for p in d.problems]


# --- helpers -----------------------------------------------------------------------------------


def _user(request: Request) -> str | None:
    return request.session.get("user")


def _csrf_ok(request: Request) -> bool:
    return auth.same_token(request.headers.get("x-csrf-token"), request.session.get("csrf"))


def _deny(request: Request) -> Response | None:
    """None when the request may go on; else the refusal (401 without login, 403 without CSRF)."""
    if not _user(request):
        return JSONResponse({"error": "login required"}, status_code=401)
    if request.method == "POST" and not _csrf_ok(request):
        return JSONResponse({"error": "missing or wrong CSRF token"}, status_code=403)
    return None


async def _json(request: Request) -> dict:
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ValueError("the request body must be a JSON object")
    return body


def _bad(msg: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": msg}, status_code=status)


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


# --- the app -------------------------------------------------------------------------------------


def build_app(console: Console, *, secret_key: str | None = None, https_only: bool = False) -> Starlette:
    async def index(request: Request) -> Response:
        if not _user(request):
            return RedirectResponse("/login", status_code=303)
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def login_page(request: Request) -> Response:
        request.session.setdefault("csrf", auth.new_token())
        return FileResponse(STATIC / "login.html", headers={"Cache-Control": "no-store"})

    async def csrf(request: Request) -> Response:
        token = request.session.setdefault("csrf", auth.new_token())
        return JSONResponse({"csrf": token, "user": _user(request)})

    async def login(request: Request) -> Response:
        if not _csrf_ok(request):
            return _bad("missing or wrong CSRF token", 403)
        try:
            body = await _json(request)
        except ValueError as e:
            return _bad(str(e))
        password = body.get("password")
        name = str(body.get("name") or "director").strip()[:40] or "director"
        async with console.login_lock:
            wait = console.lockout.locked_for()
            if wait > 0:
                return _bad(f"too many wrong passwords: try again in {int(wait) + 1} s", 429)
            ok = isinstance(password, str) and await asyncio.to_thread(auth.verify_password, password, console.password_hash)
            if not ok:
                console.lockout.failed()
                log.warning("console: wrong password (login as %r)", name)
                return _bad("wrong password", 401)
            console.lockout.succeeded()
        request.session.clear()
        request.session.update({"user": name, "csrf": auth.new_token()})
        log.info("console: %s logged in", name)
        return JSONResponse({"ok": True, "csrf": request.session["csrf"]})

    async def logout(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        request.session.clear()
        return JSONResponse({"ok": True})

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        path = STATIC / name
        if "/" in name or not path.is_file():
            return PlainTextResponse("not found", status_code=404)
        if name not in PUBLIC_STATIC and not _user(request):
            return PlainTextResponse("login required", status_code=401)
        return FileResponse(path, headers={"Cache-Control": "no-cache"})

    async def events(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        q: asyncio.Queue = asyncio.Queue(maxsize=20000)
        console.hub.queues.add(q)
        first = {**console.state.snapshot(), "broker_up": console.broker_up, "user": _user(request), "server_now": _now_iso()}

        async def stream():
            try:
                yield f"event: snapshot\ndata: {json.dumps(first, separators=(',', ':'))}\n\n"
                while q in console.hub.queues:
                    try:
                        yield await asyncio.wait_for(q.get(), KEEPALIVE_S)
                    except asyncio.TimeoutError:
                        yield ": keepalive\n\n"
            finally:
                console.hub.queues.discard(q)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def snapshot(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        return JSONResponse(console.state.snapshot())

    async def table_detail(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        return JSONResponse(console.state.detail(int(request.path_params["n"])))

    async def command(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        try:
            body = await _json(request)
            cmd, tables = _check_command(body, console)
        except ValueError as e:
            return _bad(str(e))
        if console.send is None:
            return _bad("not connected to the broker", 503)
        sent = []
        for n in tables:
            c = {**cmd, "id": uuid.uuid4().hex[:12], "by": _user(request), "sent_at": _now_iso()}
            console.state.command_sent(n, c)
            try:
                console.send(n, c)
            except ConnectionError as e:
                console.state.pending.pop(c["id"], None)
                return _bad(f"table {n}: not sent: {e}", 503)
            sent.append({"table": n, "id": c["id"]})
            console.hub.publish("command", {"table": n, "command": c})
        log.info("console: %s sent %s to tables %s", _user(request), cmd["cmd"], tables)
        return JSONResponse({"sent": sent})

    async def set_round(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        try:
            body = await _json(request)
            rd = console.state.round
            if "division" in body:
                rd.division = str(body["division"]).strip() or rd.division
            if "number" in body:
                rd.number = _int(body["number"], "round", 1, 999)
            if "start" in body:
                rd.start = None if body["start"] in (None, "") else _start(body["start"])
            if "late_after_s" in body:
                rd.late_after_s = _int(body["late_after_s"], "late_after_s", 0, 3600)
            if "game_time_ms" in body:
                rd.game_time_ms = _int(body["game_time_ms"], "game_time_ms", 60_000, 180 * 60_000)
        except (ValueError, TypeError) as e:
            return _bad(str(e))
        console.state.rows = {k: v for k, v in console.state.rows.items() if v.round == rd.number and v.division == rd.division}
        console.apply_pairings()
        console.hub.publish("round", rd.as_dict())
        return JSONResponse(rd.as_dict())

    async def tsh_import(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        try:
            body = await _json(request)
            name, text = str(body.get("name") or "a.t"), str(body.get("text") or "")
            if name.endswith(".js") or text.lstrip().startswith("newt"):
                divisions = tsh.parse_tourney_js(text, name)
            else:
                divisions = [tsh.parse_t(text, name=name.rsplit("/", 1)[-1].removesuffix(".t"), source=name)]
        except (ValueError, tsh.TshError) as e:
            return _bad(str(e))
        problems = console.import_tsh(divisions)
        return JSONResponse({"divisions": [{"name": d.name, "players": len(d.players)} for d in divisions],
                             "problems": problems})

    def _final_for(n: int, body: dict) -> tuple[results.Final, tuple | None]:
        t = console.state.tables.get(n)
        if t is None or t.result is None:
            raise results.ResultError(f"table {n} has no clock result yet")
        res = results.ClockResult.from_event(n, t.result.get("game"), t.result)
        slip = body.get("slip")
        slip = None if slip is None else tuple(slip)
        if slip is not None and len(slip) != 2:
            raise results.ResultError("type both scores")
        margin = body.get("margin")
        return results.final_scores(res, slip, None if margin in (None, "") else int(margin)), slip

    async def result(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        n = int(request.path_params["n"])
        try:
            body = await _json(request)
            final, slip = _final_for(n, body)
        except (ValueError, TypeError, results.ResultError) as e:
            return _bad(str(e))
        out = {"scores": list(final.scores), "penalties": list(final.penalties), "note": final.note,
               "needs_director": final.needs_director}
        if body.get("confirm"):
            console.state.confirm(n, slip, final, _user(request))
            console.hub.publish("table", console.state.tables[n].tile())
            log.info("console: %s confirmed table %d: %s", _user(request), n, final.scores)
            out["confirmed"] = True
        return JSONResponse(out)

    async def export_csv(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        rd = console.state.round
        return Response(results.to_csv(list(console.state.rows.values())), media_type="text/csv",
                        headers={"Content-Disposition": f'attachment; filename="{rd.division}-round{rd.number}.csv"'})

    async def export_tsh(request: Request) -> Response:
        if (r := _deny(request)) is not None:
            return r
        rd = console.state.round
        ex = results.to_tsh(rd.division, rd.number, list(console.state.rows.values()))
        headers = {"Content-Disposition": f'attachment; filename="{rd.division}-round{rd.number}.tsh"'}
        if ex.missing:
            headers["X-Rackside-Missing-Tables"] = ",".join(map(str, ex.missing))
        return PlainTextResponse(ex.text, headers=headers)

    routes = [
        Route("/", index),
        Route("/login", login_page, methods=["GET"]),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Route("/api/csrf", csrf),
        Route("/api/login", login, methods=["POST"]),
        Route("/api/logout", logout, methods=["POST"]),
        Route("/static/{name}", static),
        Route("/api/events", events),
        Route("/api/snapshot", snapshot),
        Route("/api/table/{n:int}", table_detail),
        Route("/api/command", command, methods=["POST"]),
        Route("/api/round", set_round, methods=["POST"]),
        Route("/api/tsh", tsh_import, methods=["POST"]),
        Route("/api/result/{n:int}", result, methods=["POST"]),
        Route("/api/export/round.csv", export_csv),
        Route("/api/export/tsh.txt", export_tsh),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app):
        console.loop = asyncio.get_running_loop()
        if console.bridge is not None:
            console.bridge.start()
        try:
            yield
        finally:
            if console.bridge is not None:
                console.bridge.stop()

    middleware = [Middleware(SessionMiddleware, secret_key=secret_key or secrets.token_hex(32),
                             session_cookie="rackside_console", max_age=12 * 3600, same_site="strict",
                             https_only=https_only)]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def _int(v, name: str, lo: int, hi: int) -> int:
    if isinstance(v, bool):
        raise ValueError(f"{name} must be a whole number")
    try:
        i = int(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a whole number, not {v!r}") from None
    if not lo <= i <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, not {i}")
    return i


def _start(v) -> float:
    """A round's scheduled start, epoch seconds: a real moment (not NaN or infinity, which JSON
    cannot carry and a late start cannot be dated from)."""
    try:
        start = float(v)
        datetime.fromtimestamp(start, timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        raise ValueError(f"start must be a time in epoch seconds, not {v!r}") from None
    return start


def _check_command(body: dict, console: Console) -> tuple[dict, list[int]]:
    """The command as the clock receives it (docs/hall.md, `cmd`), and the tables it goes to."""
    name = body.get("cmd")
    if name not in COMMANDS:
        raise ValueError(f"cmd must be one of {', '.join(COMMANDS)}, not {name!r}")
    tables = body.get("tables")
    if not isinstance(tables, list) or not tables:
        raise ValueError("tables must be a non-empty list of table numbers")
    tables = sorted({_int(t, "table", 1, 9999) for t in tables})
    cmd: dict[str, Any] = {"cmd": name}
    if name == "late_start":  # 2.3.2(a), 2.3.3(a): the absent players' sides, from the scheduled start
        players = body.get("players")
        if not isinstance(players, list) or not players or any(p not in (1, 2) for p in players):
            raise ValueError("players must be [1], [2] or [1, 2]: the absent sides")
        cmd["players"] = sorted(set(players))
        if console.state.round.start is not None:
            cmd["at"] = datetime.fromtimestamp(console.state.round.start, timezone.utc).isoformat()
    elif name == "arrive":
        cmd["player"] = _int(body.get("player"), "player", 1, 2)
    elif name == "adjust":  # 1.4.1(b)
        cmd["player"] = _int(body.get("player"), "player", 1, 2)
        # above the forfeit line (5.3.3), at most the clock's own limit (hall.commands)
        cmd["remaining_ms"] = _int(body.get("remaining_ms"), "remaining_ms", -599_999, 100 * 60_000)
        reason = str(body.get("reason") or "").strip()
        if not reason:
            raise ValueError("an adjustment needs a reason (it is logged)")
        cmd["reason"] = reason[:200]
    elif name == "new_game":
        ms = body.get("game_time_ms", console.state.round.game_time_ms)
        cmd["game_time"] = _int(ms, "game_time_ms", 60_000, 180 * 60_000) // 1000  # whole seconds on the wire
    return cmd, tables


def new_secret() -> str:
    return secrets.token_hex(32)


def now() -> float:
    return time.time()
