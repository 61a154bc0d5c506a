"""The console's web app (Starlette): login, the page, server-sent events, commands, the round;
every feature's routes composed (`routes`), each given its services by the `Console`.

Every endpoint is a module-level function; what they share (the hall state, the open streams, the
login's throttle and sessions, the way to the broker) is the `Console` on `app.state.console`.
Starlette's AuthenticationMiddleware reads the session (auth.Sessions: the cookie carries only its
id) and `requires("director")` guards every endpoint but the login page, its script and stylesheet;
every POST (login included) also needs the session's CSRF token in `X-CSRF-Token` (`CsrfCheck`).
In front of all of it, guard.BodyLimit and guard.SecurityHeaders, and uvicorn's guard.GuardedH11
(limits.py has every bound). A new endpoint: a function here and a line in SHELL_ROUTES, or a feature's own in its `routes(...)`,
composed by `routes(console)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import uuid
from pathlib import Path
from typing import Callable

from starlette.applications import Starlette
from starlette.authentication import AuthCredentials, AuthenticationBackend, SimpleUser, requires
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from . import auth
from ..fleet import devices, readiness, updates
from ..state import health, requests
from ..common import limits
from ..tableside import paperless
from ..publichall import publicserve
from ..scoring import tsh, tshlive
from ..rules import rulespage
from ..resultsdesk import resultspage
from ..state.event import Event
from ..common.guard import DIRECTOR, Admission, BodyLimit, SecurityHeaders, json_object, now_iso
from ..common.guard import refused as _bad
from .transport import PlainHttpLocalOnly
from ..state.hallstate import RESEND_ID, TWICE_KEY, HallState
from ..scoring.resultstore import STORE_REFUSED, ResultStore, StoreError
from .hub import Hub, sse

log = logging.getLogger("rackside.hall.console")
STATIC = Path(__file__).parent.parent / "static"
PUBLIC_STATIC = {"login.html", "login.js", "request.js", "style.css"}  # (request.js: the login form's CSRF token)


class Console:
    """The console's state and its edges: the hall state, the open pages, and a way to send."""

    def __init__(self, hall: str, password_hash: str, send: Callable[[int, dict], None] | None = None,
                 sessions: auth.Sessions | None = None, store: ResultStore | None = None) -> None:
        self.state = HallState(hall)
        self.event = Event(store or ResultStore(None))  # every division, the seating, the results store
        self.state.restore_bindings(self.event.store.bound_games())  # which round each clock game is of
        for line in self.state.restore_twice(self.event.store.setting(TWICE_KEY, [])):  # issue 36's marks
            log.warning("console: %s", line)
        self.twice_kept = self.state.twice_rows()  # as the store has them
        self.state.thresholds = health.restored(self.event.store.setting(health.THRESHOLDS_KEY))  # the director's, kept
        self.seating_problems: list[str] = []  # games of the round that cannot be put on a table
        self.password_hash = password_hash
        self.hub = Hub()
        self.throttle = auth.Throttle()
        self.sessions = sessions or auth.Sessions()
        # One password check at a time: the throttle is checked and counted around the scrypt, so
        # tries sent all at once must queue here, or a burst of any size passes the check before one fails.
        self.login_lock = asyncio.Lock()
        self.send = send  # (table, command) -> None; set once the bridge exists
        self.broker_up = False
        self.loop: asyncio.AbstractEventLoop | None = None
        # the broker connection (serve.Bridge), started by the app's lifespan once the event loop
        # runs: messages it delivers before that would have nowhere to go (issue 17.1)
        self.bridge = None
        self.fleet = None  # devices.FleetService: the Devices page's own broker connection
        self.updates: updates.Updates | None = None  # the bundle on offer (updates.py), once a state folder is given
        self.gaps_since: dict[tuple, float] = {}  # (table, game, first, last) -> when first seen
        self.resent_at: dict[int, float] = {}  # table -> when its clock may next be asked to resend
        self.refusals: dict[int, int] = {}  # table -> resends refused in a row (each doubles the wait)
        self.binding_failed = False  # the store refused a game's binding (logged once until one is kept)
        self.tsh_out: tshlive.LiveFile | None = None  # the live tourney.js in its folder (serve.make_console)
        self.carried = tshlive.Carried()  # what an imported tourney.js had that the console does not hold
        self.result_rows = tshlive.Rows()  # the results, decoded once each, for the live tourney.js
        self.public_out = None  # publicserve.Feed: the public hall ([public], serve.make_console), told of changes
        self.event_name = ""  # the event served, and its folder and lock (eventdir.py, serve.make_console)
        self.home: Path | None = None
        self.event_lock = None
        self.paperless = paperless.Paperless(paperless.Services(  # check-in, calls, signed slips (issue 27)
            state=self.state, event=self.event, publish=self.hub.publish, send=self.send_command,
            connected=self.connected, results_changed=self.tsh_changed))

    # called on the event loop (the bridge hands messages over with call_soon_threadsafe)
    def on_message(self, topic: str, payload: bytes) -> None:
        updates = self.state.on_message(topic, payload)
        if any(kind in ("twice", "bind") for kind, _ in updates):  # a mark made, or cleared with its game's id bound afresh
            self.keep_twice()
        for kind, data in updates:
            if kind == "resend_ack":
                self.resend_answered(data["table"], data["ok"])
                continue
            if kind == "bind":
                self.keep_binding(data)
                continue
            if kind == "ack" and (data["command"] or {}).get("cmd") == "update" and self.updates is not None:
                self.updates.answered(data["table"], data["ack"], data["command"])
            if kind != "slip":  # the slip's own event is published with it
                self.hub.publish(kind, data)
            self.paperless.on_update(kind, data)

    def keep_binding(self, b: dict) -> None:
        """A clock game's round, kept for a restart; a disk that refuses it is said once (the
        binding holds in memory until the console restarts)."""
        try:
            self.event.store.bind_game(b["table"], b["game"], b["round"], b["seat"], b["since"])
            self.binding_failed = False
        except StoreError as e:
            if not self.binding_failed:
                log.error("console: %s", e)
            self.binding_failed = True

    def keep_twice(self) -> None:
        """The tables' "used twice" marks (issue 36), kept for a restart when they changed: a cloned
        identity is not forgotten, nor its game's slips let through, by restarting the console. A disk
        that refuses them is logged; the marks hold in memory."""
        rows = self.state.twice_rows()
        if rows == self.twice_kept:
            return
        try:
            self.event.store.put_setting(TWICE_KEY, rows)
            self.twice_kept = rows
        except StoreError as e:
            log.error("console: %s", e)

    def on_connection(self, up: bool, why: str) -> None:
        self.broker_up = up
        self.hub.publish("broker", {"up": up, "why": why})

    def on_dropped(self, device: str, count: int) -> None:
        kind, _, ident = device.partition(" ")
        who = (kind, int(ident)) if kind == "table" and ident.isdigit() else (kind, ident)
        for k, data in self.state.problem(who, f"{count} messages over the rate limit ({limits.DEVICE_RATE:g} a second) dropped"):
            self.hub.publish(k, data)

    def dropped_threadsafe(self, device: str, count: int) -> None:
        self.loop.call_soon_threadsafe(self.on_dropped, device, count)

    def deliver_threadsafe(self, topic: str, payload: bytes) -> None:
        self.loop.call_soon_threadsafe(self.on_message, topic, payload)

    def connection_threadsafe(self, up: bool, why: str) -> None:
        self.loop.call_soon_threadsafe(self.on_connection, up, why)

    def ask_for_gaps(self, now: float) -> list[dict]:
        """Ask each clock whose events have a gap (or whose state says there are more, or a result)
        to resend them from its journal (docs/hall.md, `resend`). A gap must have lasted
        GAP_GRACE_S (events still on their way fill it), a table is asked at most once every
        RESEND_EVERY_S, and at most RESENDS_AT_ONCE tables a round."""
        gaps = {g: self.gaps_since.get(g, now) for g in self.state.gaps()}
        self.gaps_since = gaps
        sent = []
        for (n, game, first, last), since in sorted(gaps.items(), key=lambda kv: kv[1]):
            if len(sent) >= limits.RESENDS_AT_ONCE:
                break
            if now - since < limits.GAP_GRACE_S or now < self.resent_at.get(n, 0.0):
                continue
            cmd = {"id": f"{RESEND_ID}{uuid.uuid4().hex[:12]}", "cmd": "resend", "game": game, "from_seq": first}
            if last is not None:
                cmd["to_seq"] = last
            try:
                self.send(n, cmd)
            except ConnectionError:
                break
            wait = min(limits.RESEND_EVERY_S * 2 ** self.refusals.get(n, 0), limits.RESEND_BACKOFF_MAX_S)
            self.resent_at[n] = now + wait
            sent.append({"table": n, **cmd})
        for n in [n for n, t in self.resent_at.items() if t < now and n not in {g[0] for g in gaps}]:
            del self.resent_at[n]
        return sent

    def resend_answered(self, n: int, ok: bool) -> None:
        """A clock that refuses (no such journal, or busy: the ack says when) is asked again later
        and later, up to RESEND_BACKOFF_MAX_S; one that answers, at the usual pace."""
        if ok:
            self.refusals.pop(n, None)
        elif len(self.refusals) < limits.MAX_TABLE or n in self.refusals:
            self.refusals[n] = min(self.refusals.get(n, 0) + 1, 16)

    async def watch_gaps(self) -> None:
        while True:
            await asyncio.sleep(limits.GAP_CHECK_S)
            if self.send is not None and self.broker_up:
                for cmd in self.ask_for_gaps(self.loop.time()):
                    log.info("console: asked table %d for %s events %s-%s", cmd["table"], cmd["game"], cmd["from_seq"],
                             cmd.get("to_seq", "end"))

    def apply_pairings(self) -> list[str]:
        """Seat every division's games of the round (hall-wide tables); returns what cannot be placed."""
        rd = self.state.round.number
        seats, self.seating_problems = self.event.seating(rd)
        for kind, data in self.state.set_seats(seats, self.event.finals(rd)):
            self.hub.publish(kind, data)
        self.hub.publish("divisions", self.divisions_view())
        self.paperless.pairings_known()
        return self.seating_problems

    def import_tsh(self, files: dict[str, bytes], revive: bool = True) -> list[str]:
        """TSH files (name -> bytes) into the event; returns every problem, each naming file and line.
        `revive`: a division the director removed comes back (an import on the page, not the config's files)."""
        try:
            problems = self.event.import_files(files, revive=revive)
        except StoreError:
            self.apply_pairings()  # read and seated, not kept: the page says so
            self.tsh_changed()
            raise
        self.tsh_changed()
        return problems + self.apply_pairings()

    def tsh_changed(self) -> None:
        """The TSH data or a result changed: the live tourney.js is written again (tshlive.LiveFile)."""
        if self.tsh_out is not None:
            self.tsh_out.changed()
        if self.public_out is not None:
            self.public_out.changed()

    async def tourney_js(self) -> tuple[str, list[str]]:
        """The live tourney.js: gathered here on the loop, written on a thread (tshlive.py)."""
        return await asyncio.to_thread(tshlive.render, tshlive.gather(self.event, self.result_rows), self.carried)

    def divisions_view(self) -> dict:
        return {"divisions": self.event.summary(),
                "tsh_problems": (self.event.problems + self.seating_problems)[:limits.MAX_PROBLEMS_SHOWN]}

    def connected(self) -> bool:
        return self.send is not None

    def send_command(self, n: int, cmd: dict) -> None:
        """A command to table `n`'s clock over the broker (`send` is set once the bridge exists)."""
        self.send(n, cmd)

    def publish_rules(self, payload: dict) -> None:
        if self.bridge is not None:
            self.bridge.publish_rules(payload)

    def updates_services(self) -> updates.Services:
        """What updates from the console use (updates.py), named."""
        return updates.Services(updates=lambda: self.updates, state=self.state, event=self.event, send=self.send_command,
                                connected=self.connected)

    def results_services(self) -> resultspage.Services:
        """What the results desk uses (resultspage.py), named."""
        return resultspage.Services(state=self.state, event=self.event, publish=self.hub.publish,
                                    import_tsh=self.import_tsh, divisions_view=self.divisions_view,
                                    apply_pairings=self.apply_pairings, results_changed=self.tsh_changed,
                                    tourney_js=self.tourney_js, seated=self.paperless.in_checkin_order)

    def rules_services(self) -> rulespage.Services:
        """What the rules page uses (rulespage.py), named."""
        return rulespage.Services(state=self.state, event=self.event, publish=self.hub.publish, publish_rules=self.publish_rules)

    def public_sources(self) -> publicserve.Sources:
        """What the public view reads (publicserve.Feed), named."""
        return publicserve.Sources(state=self.state, event=self.event, rows=self.result_rows,
                                   sided=self.paperless.in_checkin_order, event_name=self.event_name)

    def snapshot(self) -> dict:
        return {**self.state.snapshot(), **self.divisions_view(), "paperless": self.paperless.snapshot(),
                # the page's fallback rules (a clock's state carries its game's own): the event's ([event])
                "rules": self.event.state_rules(), "event_rules": self.event.rules.as_dict()}


def console_of(conn: HTTPConnection) -> Console:
    return conn.app.state.console


# --- who is asking -----------------------------------------------------------------------------


class SessionAuth(AuthenticationBackend):
    """A request is the director's when its cookie names a live session (auth.Sessions)."""

    async def authenticate(self, conn: HTTPConnection):
        session = console_of(conn).sessions.get(conn.session.get("sid"))
        if session is None:
            return None
        return AuthCredentials([DIRECTOR]), SimpleUser(session.user)


class CsrfCheck:
    """ASGI middleware (inside the authentication): a POST needs the session's CSRF token in
    `X-CSRF-Token`. Checked for the login and for logged-in sessions; any other POST goes on to its
    endpoint's `requires`, which answers 401."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and (scope["path"] == "/api/login" or scope["user"].is_authenticated):
            token = dict(scope["headers"]).get(b"x-csrf-token", b"").decode("latin-1")
            if not auth.same_token(token, scope["session"].get("csrf")):
                return await _bad("missing or wrong CSRF token", 403)(scope, receive, send)
        await self.app(scope, receive, send)


# --- helpers -----------------------------------------------------------------------------------


# --- the endpoints -------------------------------------------------------------------------------


async def index(request: Request) -> Response:
    if not request.user.is_authenticated:
        return RedirectResponse("/login", status_code=303)
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})


async def login_page(request: Request) -> Response:
    request.session.setdefault("csrf", auth.new_token())
    return FileResponse(STATIC / "login.html", headers={"Cache-Control": "no-store"})


async def csrf(request: Request) -> Response:
    token = request.session.setdefault("csrf", auth.new_token())
    return JSONResponse({"csrf": token, "user": request.user.display_name if request.user.is_authenticated else None})


async def login(request: Request) -> Response:
    console = console_of(request)
    try:
        body = await json_object(request)
    except ValueError as e:
        return _bad(str(e))
    password = body.get("password")
    name = str(body.get("name") or "director").strip()[:auth.NAME_CHARS] or "director"
    source = request.client.host if request.client else "?"
    async with console.login_lock:
        wait = console.throttle.wait(source, name)
        if wait > 0:
            return _bad(f"too many wrong passwords: try again in {int(wait) + 1} s", 429)
        ok = isinstance(password, str) and await asyncio.to_thread(auth.verify_password, password, console.password_hash)
        if not ok:
            console.throttle.failed(source, name)
            log.warning("console: wrong password from %s (login as %r)", source, name)
            return _bad("wrong password", 401)
        console.throttle.succeeded(source, name)
    console.sessions.revoke(request.session.get("sid"))
    request.session.clear()
    request.session.update({"sid": console.sessions.new(name), "csrf": auth.new_token()})
    log.info("console: %s logged in from %s", name, source)
    return JSONResponse({"ok": True, "csrf": request.session["csrf"]})


@requires(DIRECTOR, status_code=401)
async def logout(request: Request) -> Response:
    console_of(request).sessions.revoke(request.session.get("sid"))  # a copy of the cookie is worthless from now on
    request.session.clear()
    return JSONResponse({"ok": True})


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    path = STATIC / name
    if "/" in name or not path.is_file():
        return PlainTextResponse("not found", status_code=404)
    if name not in PUBLIC_STATIC and not request.user.is_authenticated:
        return PlainTextResponse("login required", status_code=401)
    return FileResponse(path, headers={"Cache-Control": "no-cache"})


@requires(DIRECTOR, status_code=401)
async def events(request: Request) -> Response:
    """The hall's stream: a snapshot, then every change (hub.py)."""
    console = console_of(request)
    stream = console.hub.open(request.session.get("sid"))
    if stream is None:
        return _bad(f"too many event streams open (at most {limits.MAX_STREAMS})", 503)
    first = {**console.snapshot(), "broker_up": console.broker_up, "user": request.user.display_name,
             "server_now": now_iso(), "stream": stream.id}
    return _stream(console, stream, "snapshot", first)


@requires(DIRECTOR, status_code=401)
async def watch(request: Request) -> Response:
    """The page's detail drawer: its stream (the snapshot's `stream`, this session's) carries
    `table`'s detail as it is now, then each entry of its history as it comes; `table` null: none."""
    console = console_of(request)
    try:
        n = requests.watched_table(await json_object(request))
    except ValueError as e:
        return _bad(str(e))
    stream = console.hub.find(request.path_params["stream"], request.session.get("sid"))
    if stream is None:
        return _bad("no such event stream open for this session (the page opens a new one, then asks again)", 410)
    detail = None
    if n is not None:
        detail = console.state.detail(n)
        if detail is None:
            return _bad("no such table", 404)
    if not console.hub.watch(stream, n, detail):
        return _bad("the table's detail could not be sent (the console's log says why)", 500)
    return JSONResponse({"ok": True})


def _stream(console: Console, stream, first_kind: str, first: dict) -> Response:
    async def body():
        try:
            yield sse(first_kind, first)
            while not stream.dropped:
                try:
                    await asyncio.wait_for(stream.ready.wait(), limits.KEEPALIVE_S)
                except asyncio.TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                # what came together goes out as one write: a state and its event (one press), a
                # burst of changes; each a wake-up of the page's network and renderer less (issue 28.4)
                yield "".join(stream.take())
            # dropped for falling behind: the stream ends, the page's EventSource reconnects to a snapshot
        finally:
            console.hub.close(stream)

    return StreamingResponse(body(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@requires(DIRECTOR, status_code=401)
async def snapshot(request: Request) -> Response:
    return JSONResponse(console_of(request).snapshot())


@requires(DIRECTOR, status_code=401)
async def table_detail(request: Request) -> Response:
    detail = console_of(request).state.detail(request.path_params["n"])
    if detail is None:
        return _bad("no such table", 404)
    return JSONResponse(detail)


@requires(DIRECTOR, status_code=401)
async def command(request: Request) -> Response:
    console = console_of(request)
    try:
        body = await json_object(request)
        tables = requests.tables(body)
        rd = console.state.round
        cmd = requests.command(body, rd.start, rd.game_time_ms, request.user.display_name, console.event.rules.command_rules())
    except ValueError as e:
        return _bad(str(e))
    if console.send is None:
        return _bad("not connected to the broker", 503)
    sent = []
    for n in tables:
        c = {**cmd, "id": uuid.uuid4().hex[:12], "sent_at": now_iso()}
        console.state.command_sent(n, c)
        try:
            console.send(n, c)
        except ConnectionError as e:
            console.state.pending.pop(c["id"], None)
            return _bad(f"table {n}: not sent: {e}", 503)
        sent.append({"table": n, "id": c["id"]})
        console.hub.publish("command", {"table": n, "command": c})
    log.info("console: %s sent %s to tables %s", request.user.display_name, cmd["cmd"], tables)
    return JSONResponse({"sent": sent})


@requires(DIRECTOR, status_code=401)
async def set_round(request: Request) -> Response:
    console = console_of(request)
    try:
        body = await json_object(request)
        rd = console.state.round
        before = rd.as_dict()
        if "division" in body:  # the division on screen ("" for all): results are never touched
            rd.division = str(body["division"] or "").strip()[:40]
        if "number" in body:
            rd.number = requests.whole(body["number"], "round", 1, tsh.MAX_ROUNDS)  # a .t file's rounds past it are not read
        if "start" in body:
            rd.start = None if body["start"] in (None, "") else requests.start(body["start"])
        if "late_after_s" in body:
            rd.late_after_s = requests.whole(body["late_after_s"], "late_after_s", 0, 3600)
        if "game_time_ms" in body:
            rd.game_time_ms = requests.game_time_ms(body["game_time_ms"])
    except (ValueError, TypeError) as e:
        return _bad(str(e))
    try:
        console.event.save_round(rd.as_dict())
    except StoreError as e:  # the round as it was: a restart would not find the new one
        log.error("console: %s", e)
        for key, value in before.items():
            setattr(rd, key, value)
        return _bad(f"{e} The round is unchanged.", STORE_REFUSED)
    console.apply_pairings()
    console.hub.publish("round", rd.as_dict())
    return JSONResponse(rd.as_dict())


# --- device health and round readiness (issue 26; health.py, readiness.py) ------------------------


async def ready_page(request: Request) -> Response:
    if not request.user.is_authenticated:
        return RedirectResponse("/login", status_code=303)
    return FileResponse(STATIC / "ready.html", headers={"Cache-Control": "no-store"})


@requires(DIRECTOR, status_code=401)
async def ready(request: Request) -> Response:
    """Every table of the round's pairings: online, version, rules, clock sync, health, players."""
    console = console_of(request)
    state = console.state
    view = readiness.view(state.tables, state.round.game_time_ms, state.round.number, state.stations, console.event.rules)
    return JSONResponse({**view, "thresholds": state.thresholds, "threshold_help": {k: v[3] for k, v in health.THRESHOLDS.items()}})


@requires(DIRECTOR, status_code=401)
async def health_thresholds(request: Request) -> Response:
    """`{name: number, ...}`: the thresholds that make a health value a problem, kept in the store."""
    console = console_of(request)
    try:
        th = health.check(await json_object(request), base=console.state.thresholds)
    except ValueError as e:
        return _bad(str(e))
    console.event.store.put_setting(health.THRESHOLDS_KEY, th)
    for kind, data in console.state.set_thresholds(th):
        console.hub.publish(kind, data)
    console.hub.publish("health_thresholds", th)
    log.info("console: %s set the health thresholds to %s", request.user.display_name, th)
    return JSONResponse({"thresholds": th})


async def no_favicon(request: Request) -> Response:
    return Response(status_code=204)


SHELL_ROUTES = [  # the shell's own: the page, the login, the streams, commands, the round, readiness
    Route("/", index),
    Route("/login", login_page, methods=["GET"]),
    Route("/favicon.ico", no_favicon),
    Route("/api/csrf", csrf),
    Route("/api/login", login, methods=["POST"]),
    Route("/api/logout", logout, methods=["POST"]),
    Route("/static/{name}", static),
    Route("/api/events", events),
    Route("/api/snapshot", snapshot),
    Route("/api/table/{n:int}", table_detail),
    Route("/api/events/{stream}/watch", watch, methods=["POST"]),
    Route("/api/command", command, methods=["POST"]),
    Route("/api/round", set_round, methods=["POST"]),
    Route("/ready", ready_page),
    Route("/api/ready", ready),
    Route("/api/health-thresholds", health_thresholds, methods=["POST"]),
]


def routes(console: Console) -> list[Route]:
    """Every endpoint: the shell's, then each feature's, given what it uses (the one place they are composed)."""
    return [
        *SHELL_ROUTES,
        *resultspage.routes(console.results_services()),  # results, TSH's files, the exports, the audit (resultspage.py)
        *devices.routes(lambda: console.fleet),  # the Devices page (devices.py)
        *updates.routes(console.updates_services()),  # updates from the console (updates.py)
        *paperless.routes(console.paperless),  # check-in, calls, signed slips (paperless.py)
        *rulespage.routes(console.rules_services()),  # the event's rules on the page (rulespage.py, issue 38)
    ]


@contextlib.asynccontextmanager
async def lifespan(app: Starlette):
    console: Console = app.state.console
    console.loop = asyncio.get_running_loop()
    gaps = asyncio.create_task(console.watch_gaps())
    tsh_out = None if console.tsh_out is None else asyncio.create_task(console.tsh_out.run())
    if console.bridge is not None:
        console.bridge.start()
    try:
        yield
    finally:
        gaps.cancel()
        if tsh_out is not None:
            tsh_out.cancel()
        if console.bridge is not None:
            console.bridge.stop()


def build_app(console: Console, *, secret_key: str | None = None, https_only: bool = False) -> Starlette:
    middleware = [
        Middleware(PlainHttpLocalOnly),  # transport.py: plain HTTP only to this machine
        Middleware(SecurityHeaders),
        Middleware(BodyLimit),  # before the session and the login look at anything
        Middleware(SessionMiddleware, secret_key=secret_key or secrets.token_hex(32), session_cookie="rackside_console",
                   max_age=limits.SESSION_S, same_site="strict", https_only=https_only),
        Middleware(AuthenticationMiddleware, backend=SessionAuth(),
                   on_error=lambda conn, exc: _bad("login required", 401)),
        Middleware(Admission),  # guard.py: slots a crowd cannot take from a signed-in director
        Middleware(CsrfCheck),
    ]
    app = Starlette(routes=routes(console), middleware=middleware, lifespan=lifespan, exception_handlers=updates.EXCEPTION_HANDLERS)
    app.state.console = console
    return app
