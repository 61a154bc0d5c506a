"""Updates from the console (issue 20, item 3; docs/fleet.md, "Updates"): the director uploads a
bundle, the chosen clocks are told to fetch it, and each one's outcome comes back as its ack.

- `POST /api/update/bundle` (the director's session and CSRF token; header `X-Bundle-SHA256`, the
  digest `rackside bundle` printed; the body the file itself, at most limits.MAX_BUNDLE_BYTES, the one
  request allowed more than MAX_BODY_BYTES, guard.BodyLimit): streamed to the console's state folder,
  its SHA-256 checked as it arrives, then every file in it against its own SHA256SUMS (on a worker
  thread). Only then does it replace the bundle on offer.
- `POST /api/update/send` ({tables: [n, ...] or "all", between_rounds, allow_downgrade}): each table's
  clock gets an `update` command (hall.wire.commands) on its own cmd topic with a token for it alone. A
  table whose game is in progress is refused, unless `between_rounds`: then its clock installs now and
  switches when its game has ended (waiting up to limits.BETWEEN_ROUNDS_WAIT_S). A table whose clock
  runs a newer version than the bundle's (by release numbers, then by the build times of the bundles
  this console was given, BUILT_FILE) is refused (`downgrade`: true, for the page's confirmation)
  unless `allow_downgrade` is true, which its command carries to the Pi's root updater (issue 36).
  Each command sent is audited (kind `update`: the version, and whether a downgrade was allowed).
- `GET /update/bundle.tar.gz` (header X-Rackside-Update-Token): the bundle, for a valid token only
  (no session: a clock has none; the token came on its cmd topic, which only it and the director
  may read). A token lasts limits.UPDATE_TOKEN_S and serves only the bundle it was made for.
- `GET /api/update`: the bundle on offer, and each table's version and last update outcome.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import os
import secrets
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from starlette.authentication import requires
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from rackside.atomic import write_atomic
from rackside.hall.wire import commands, update, bundle as wire_bundle

from ..common import limits
from ..common.guard import DIRECTOR, now_iso
from ..common.guard import refused as _bad
from ..scoring.results import BY_TABLE
from ..scoring.resultstore import UPDATE, StoreError

log = logging.getLogger("rackside.hall.console")
# When each bundle this console was given was built, by version (bundle.json's `built`): the bundles
# of one release differ only by their label (0.1.0+g<commit>), so it is by these that the console
# tells a clock's downgrade within a release, as the Pi's root updater does (hall.wire.update.older).
BUILT_FILE = "built.json"  # in the updates folder: [[version, built], ...], oldest first
MAX_BUILT = 100  # versions remembered (the oldest forgotten: its clocks' downgrades are then the Pi's to refuse)
IN_PROGRESS = ("running", "neutralised", "late")  # a clock's phases while a game is played (rackside.switch's too)


@dataclass(frozen=True)
class Bundle:
    path: Path
    version: str
    sha256: str
    size: int
    built: str | None = None  # from its bundle.json (hall.wire.bundle)


class Updates:
    """The bundle on offer, the tokens handed out for it, and each table's last outcome (all bounded:
    one bundle, limits.MAX_TABLE tokens and outcomes). Used on the event loop only."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.bundle: Bundle | None = None
        self.tokens: OrderedDict[str, tuple[int, float, str]] = OrderedDict()  # token -> (table, expiry, sha256)
        self.outcomes: dict[int, dict] = {}  # table -> {version, outcome, ok, why, at}
        self.built_at: OrderedDict[str, str] = _read_built(folder / BUILT_FILE)  # version -> built (BUILT_FILE)
        self._writing = asyncio.Lock()  # BUILT_FILE's writes, one at a time (given)
        for left in folder.glob(".upload-*"):  # partial uploads a kill or a cancelled request left (upload)
            left.unlink(missing_ok=True)

    def built(self, version: str | None) -> str | None:
        """When the bundle of `version` was built, if this console was given it."""
        return None if version is None else self.built_at.get(version)

    async def given(self, version: str, built: str | None) -> None:
        """A bundle uploaded: its build time kept (at most MAX_BUILT versions, in BUILT_FILE). The
        file is written on a worker thread, never on the event loop (a slow or failing card would
        stall every page and the broker's messages); one write at a time, each the latest list."""
        if built is None or self.built_at.get(version) == built:
            return
        self.built_at.pop(version, None)
        self.built_at[version] = built
        while len(self.built_at) > MAX_BUILT:
            self.built_at.popitem(last=False)
        async with self._writing:
            text = json.dumps(list(self.built_at.items())) + "\n"  # as it is now: a later upload's too
            try:
                await asyncio.to_thread(write_atomic, self.folder / BUILT_FILE, text)
            except OSError as e:  # the bundle is on offer; only a later downgrade's check knows less
                log.error("console: %s: %s", self.folder / BUILT_FILE, e)

    def token_for(self, table: int, now: float) -> str:
        token = secrets.token_urlsafe(32)
        self.tokens[token] = (table, now + limits.UPDATE_TOKEN_S, self.bundle.sha256)
        while len(self.tokens) > limits.MAX_TABLE:
            self.tokens.popitem(last=False)
        return token

    def valid(self, token: str, now: float) -> bool:
        entry = self.tokens.get(token)
        return (entry is not None and entry[1] > now and self.bundle is not None and entry[2] == self.bundle.sha256)

    def answered(self, table: int, ack: dict, command: dict | None) -> None:
        """An update command's ack: the table's outcome for the page."""
        got = ack.get("update") if isinstance(ack.get("update"), dict) else {}
        self.outcomes[table] = {"version": str(got.get("version") or (command or {}).get("version") or "")[:64],
                                "outcome": str(got.get("outcome") or ("switched" if ack.get("ok") else "failed"))[:20],
                                "ok": ack.get("ok") is True, "why": str(ack.get("reason") or "")[:update.MAX_WHY_CHARS]}


def _read_built(path: Path) -> OrderedDict[str, str]:
    """BUILT_FILE as written by Updates.given; what is not that (a damaged file) is left out."""
    try:
        with open(path, "rb") as f:
            rows = json.loads(f.read(256 * MAX_BUILT))  # a row is at most ~140 bytes
    except FileNotFoundError:
        return OrderedDict()
    except (OSError, ValueError) as e:
        log.error("console: %s: %s (the build times of earlier bundles are forgotten)", path, e)
        return OrderedDict()
    kept = OrderedDict()
    for row in rows[-MAX_BUILT:] if isinstance(rows, list) else []:
        if (isinstance(row, list) and len(row) == 2 and all(isinstance(x, str) and len(x) <= 64 for x in row)
                and update.VERSION.match(row[0])):
            kept[row[0]] = row[1]
    return kept


@dataclass(frozen=True)
class Services:
    """What updates from the console use of it, each named (app.Console gives them)."""

    updates: Callable[[], "Updates | None"]  # the bundle on offer (None: a console without a state folder)
    state: Any  # the hall state (hallstate.HallState): the tables, their versions, the commands pending
    event: Any  # the event (event.Event): its results store's audit
    send: Callable[[int, dict], None]  # a command to a table's clock over the broker (ConnectionError: not sent)
    connected: Callable[[], bool]  # whether there is a way to the broker to send on


def _updates(s: Services) -> Updates:
    updates = s.updates()
    if updates is None:  # a Console made without a state folder (serve.make_console gives one)
        raise _NoFolder()
    return updates


class _NoFolder(Exception):
    """An update endpoint reached on a console started without a state folder (answered 503)."""


def _no_folder(request: Request, exc: Exception) -> Response:
    return _bad("this console has no state folder to keep a bundle in", 503)


@requires(DIRECTOR, status_code=401)
async def upload(s: Services, request: Request) -> Response:
    updates = _updates(s)
    given = request.headers.get("x-bundle-sha256", "").strip().lower()
    if not update.SHA256.match(given):
        return _bad("X-Bundle-SHA256: the bundle's SHA-256 (64 hex digits, as `rackside bundle` printed it) is needed")
    # every touch of the disk on a worker thread, never the event loop: a slow or failing card
    # would stall every page and the broker's messages while a bundle comes in
    await asyncio.to_thread(updates.folder.mkdir, parents=True, exist_ok=True)
    partial = updates.folder / f".upload-{uuid.uuid4().hex}"
    h = hashlib.sha256()
    size = 0
    try:
        out = await asyncio.to_thread(partial.open, "wb")
        try:
            async for chunk in request.stream():  # bounded and timed by guard.BodyLimit
                h.update(chunk)
                size += len(chunk)
                await asyncio.to_thread(out.write, chunk)
        finally:
            await asyncio.to_thread(out.close)
        if h.hexdigest() != given:
            return _bad(f"the upload's SHA-256 is {h.hexdigest()}, not {given}: not the bundle that was built (copy it again)")
        try:
            inspected = await asyncio.to_thread(wire_bundle.inspect_bundle, partial)
        except update.UpdateError as e:
            return _bad(f"the bundle is refused: {e}")
        final = updates.folder / "bundle.tar.gz"
        await asyncio.to_thread(os.replace, partial, final)
    finally:
        await asyncio.to_thread(partial.unlink, missing_ok=True)
    version = inspected.version
    updates.bundle = Bundle(final, version, given, size, inspected.built)
    await updates.given(version, inspected.built)
    updates.tokens.clear()  # tokens served the bundle they were made for
    log.info("console: %s uploaded bundle %s (%d bytes, SHA-256 %s)", request.user.display_name, version, size, given)
    return JSONResponse({"version": version, "sha256": given, "size": size})


@requires(DIRECTOR, status_code=401)
async def send(s: Services, request: Request) -> Response:
    updates = _updates(s)
    try:
        body = await request.json()
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        return _bad("the request body must be a JSON object")
    if updates.bundle is None:
        return _bad("no bundle uploaded yet")
    if not s.connected():
        return _bad("not connected to the broker", 503)
    tables = body.get("tables")
    if tables == "all":
        tables = sorted(s.state.tables)
        if not tables:
            return _bad("no table has been heard from yet")
    if (not isinstance(tables, list) or not tables or len(tables) > limits.MAX_TABLE
            or any(not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= limits.MAX_TABLE for n in tables)):
        return _bad(f'tables must be "all" or a list of table numbers from 1 to {limits.MAX_TABLE}')
    between_rounds = body.get("between_rounds") is True
    allow_downgrade = body.get("allow_downgrade", False)
    if not isinstance(allow_downgrade, bool):
        return _bad("allow_downgrade must be true or false (true: the director confirmed installing an older version)")
    url = str(request.base_url).rstrip("/") + update.DOWNLOAD_PATH
    now = time.monotonic()
    sent, refused = [], []
    for n in sorted(set(tables)):
        t = s.state.tables.get(n)
        phase = (t.state or {}).get("phase") if t is not None else None
        if phase in IN_PROGRESS and not between_rounds:
            refused.append({"table": n, "why": f"its game is {phase}: update between rounds"})
            continue
        running = (t.state or {}).get("version") if t is not None else None
        downgrade = bool(update.older(updates.bundle.version, updates.bundle.built, running, updates.built(running)))
        if downgrade and not allow_downgrade:
            refused.append({"table": n, "downgrade": True,
                            "why": f"its clock runs {running}, newer than {updates.bundle.version}: a downgrade, sent only "
                                   "when you confirm it"})
            continue
        cmd = {"cmd": "update", "version": updates.bundle.version, "sha256": updates.bundle.sha256, "url": url,
               "token": updates.token_for(n, now), "wait_s": limits.BETWEEN_ROUNDS_WAIT_S if between_rounds else 0,
               "allow_downgrade": allow_downgrade, "by": request.user.display_name, "id": uuid.uuid4().hex[:12]}
        try:
            commands.parse(json.dumps(cmd).encode())  # the clock's own check, before it goes
        except commands.CommandError as e:
            return _bad(str(e))
        s.state.command_sent(n, cmd)
        try:
            s.send(n, cmd)
        except ConnectionError as e:
            s.state.pending.pop(cmd["id"], None)
            refused.append({"table": n, "why": f"not sent: {e}"})
            continue
        updates.outcomes[n] = {"version": updates.bundle.version, "outcome": "sent", "ok": None, "why": ""}
        sent.append({"table": n, "id": cmd["id"]})
        _audit(s, n, request.user.display_name, cmd, running, downgrade)
    log.info("console: %s sent update %s to tables %s", request.user.display_name, updates.bundle.version,
             [s["table"] for s in sent])
    return JSONResponse({"sent": sent, "refused": refused})


def _audit(s: Services, n: int, who: str, cmd: dict, running: str | None, downgrade: bool) -> None:
    """The director's update of table `n`, in the audit (kind `update`): kept forever."""
    action = "update (downgrade allowed)" if cmd["allow_downgrade"] else "update"
    said = f"from {running or 'an unknown version'} to {cmd['version']}" + (", a downgrade" if downgrade else "")
    after = {"version": cmd["version"], "sha256": cmd["sha256"], "from": running, "allow_downgrade": cmd["allow_downgrade"],
             "command": cmd["id"]}
    try:
        s.event.store.note(now_iso(), who, action, BY_TABLE,
                           s.state.round.number, n, said, after, kind=UPDATE)
    except StoreError as e:  # the command went; the log says what the audit could not keep
        log.error("console: table %d: %s", n, e)


async def download(s: Services, request: Request) -> Response:
    updates = _updates(s)
    token = request.headers.get(update.TOKEN_HEADER, "")
    if not update.TOKEN.match(token) or not updates.valid(token, time.monotonic()):
        return _bad("no update for this token", 403)
    return FileResponse(updates.bundle.path, media_type="application/gzip", headers={"Cache-Control": "no-store"})


@requires(DIRECTOR, status_code=401)
async def overview(s: Services, request: Request) -> Response:
    b, outcomes = _updates(s).bundle, _updates(s).outcomes
    tables = []
    for n in sorted(set(s.state.tables) | set(outcomes)):
        t = s.state.tables.get(n)
        state = (t.state if t is not None else None) or {}
        tables.append({"table": n, "version": state.get("version"), "phase": state.get("phase"),
                       "online": t is not None and t.status == "online", "update": outcomes.get(n)})
    return JSONResponse({"bundle": None if b is None else {"version": b.version, "sha256": b.sha256, "size": b.size, "built": b.built},
                         "max_bytes": limits.MAX_BUNDLE_BYTES, "in_progress": list(IN_PROGRESS), "tables": tables})


def routes(s: Services) -> list[Route]:
    """Updates' endpoints, each given `s` (the console's shell composes them: app.routes)."""
    return [
        Route("/api/update", functools.partial(overview, s)),
        Route("/api/update/bundle", functools.partial(upload, s), methods=["POST"]),
        Route("/api/update/send", functools.partial(send, s), methods=["POST"]),
        Route(update.DOWNLOAD_PATH, functools.partial(download, s)),
    ]

EXCEPTION_HANDLERS = {_NoFolder: _no_folder}
