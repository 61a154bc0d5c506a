"""The public hall served and written (docs/public.md): the documents of public.py, kept up to date,
delayed if asked, answered on their own listener and written into a folder as static files.

- `Feed` (on the console's event loop, its one owner) builds the view at most once every
  `[public] every_s`: live.json from the tiles each time (cheap: a few hundred tiles), the other
  documents only after a result or an import changed them (`changed()`, from app.Console.tsh_changed)
  or the round did, off the loop (tshout.live_divisions and the standings of a big event take a few
  hundred ms). Each document is encoded once, with its ETag (a digest of its bytes); a document that
  did not change keeps its bytes and its ETag (live.json too: its `built_at` moves on only with a
  change). hall.json names the other documents' ETags (`versions`), so a page polls hall.json alone.
- The delay (`[public] delay_s`, 0 to 3,600 s) is applied here, where the view is built: the views
  wait in a queue and the one shown is the newest at least that old, so neither the listener nor the
  folder ever holds anything newer. The queue is bounded: at most MAX_DELAYED views, one kept every
  delay_s / MAX_DELAYED seconds at most (an hour's delay: one every 10 s), sharing the bytes of the
  documents that did not change. The queue is in memory: until a console just started has a view
  delay_s old, the listener answers the last view the folder holds (`read_view`: the view shown
  before the restart, read back whole and checked as anything read from disk, and old enough for the
  delay), or, with no folder or none it can show, the page and `public.waiting`'s hall.json (the
  hall's name, the delay, when the hall is back; nothing of it as it is now) and the other documents
  a 503; the folder keeps what it holds (the last view written, delayed as it was when written).
- `app(feed)` (Starlette) answers GET and HEAD for the page and the documents, nothing else: every
  answer has an ETag and a Cache-Control, and a request whose If-None-Match names it gets a 304 with
  no body. No session, no cookie, no login: nothing of the director's is reachable from it (its own
  routes, its own uvicorn server with limits.PUBLIC's caps, guard.GuardedH11's deadlines).
- `Folder` writes the page and the documents into `[public] folder` whenever the view shown
  changes, each file whole or not at all (rackside.atomic, 0644: a web server or `rclone` reads them).
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import logging
import math
import os
import stat
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any, Callable, Protocol

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from rackside.atomic import write_atomic

from ..scoring import hallplan, tshout
from ..common import limits
from . import public
from ..common.guard import BodyLimit, GuardedH11, SecurityHeaders, now_iso

log = logging.getLogger("rackside.hall.console")
STATIC = Path(__file__).parent.parent / "static"
PAGE_SOURCES = {"index.html": "public.html", **{n: n for n in public.PAGE_FILES if n != "index.html"}}
MEDIA = {".json": "application/json", ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8"}
MAX_DELAYED = 360  # views waiting out the delay, at most (see the module's docstring)
FILE_MODE = 0o644  # public: for a web server or a sync to read


@dataclass(frozen=True)
class Doc:
    """One answer: its bytes, its ETag and its type."""

    body: bytes
    etag: str
    media: str

    @staticmethod
    def of(name: str, body: bytes) -> "Doc":
        return Doc(body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"', MEDIA.get(Path(name).suffix, "application/octet-stream"))


def encode(docs: dict[str, object], before: dict[str, Doc]) -> dict[str, Doc]:
    """Each JSON document as bytes with its ETag; one whose bytes did not change keeps its Doc."""
    out = {}
    for name, value in docs.items():
        body = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
        old = before.get(name)
        out[name] = old if old is not None and old.body == body else Doc.of(name, body)
    return out


def page() -> dict[str, Doc]:
    """The page's files, read once (they are the package's own)."""
    return {name: Doc.of(name, (STATIC / source).read_bytes()) for name, source in PAGE_SOURCES.items()}


def not_modified(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 13.1.2: If-None-Match lists ETags (or `*`); a weak comparison."""
    if not if_none_match:
        return False
    tags = [t.strip() for t in if_none_match.split(",")]
    return "*" in tags or any(t.removeprefix("W/") == etag for t in tags)


@dataclass(frozen=True)
class Sources:
    """What the public view reads of the console, each named (app.Console.public_sources gives them)."""

    state: Any  # the hall state (hallstate.HallState): the hall's name, the round, the tables
    event: Any  # the event (event.Event): its divisions, TSH's config and options, the results store
    rows: Any  # the recorded results, decoded once each (tshlive.Rows)
    sided: Callable[[Any], Any]  # a table with its players in the sides they sit at (paperless.Paperless.in_checkin_order)
    event_name: str = ""  # the event served: its public folder is stamped with it


class Settings(Protocol):
    """[public] as the console's config reads it (config.PublicConfig): what the feed and its listener use."""

    listen_host: str | None
    listen_port: int | None
    folder: Path | None
    delay_s: int
    every_s: int


def gather(sources: Sources, delay_s: int, slow: bool, every_s: float = 1) -> dict:
    """What the view is made of, taken on the event loop (the store's and the state's one owner)."""
    ev = sources.event
    st = sources.state
    # each tile's names in the sides they sit at (checkin.on_sides), as the director's tile has them
    sided = sources.sided
    out = {"name": st.hall, "round": st.round.number, "tiles": [sided(t).tile() for t in st.tables.values()],
           "built_at": now_iso(), "delay_s": delay_s, "every_s": every_s}
    if slow:
        out.update(divisions=list(ev.divisions.values()), rows=sources.rows.of(ev.store),
                   entry_config=ev.entry_config(), config=ev.config,
                   options=ev.options())
    return out


def hall_of(g: dict) -> public.Hall:
    """The public.Hall of what gather() took (off the loop: TSH's arithmetic over the whole event)."""
    h = public.Hall(g["name"], g["round"], tiles=g["tiles"], built_at=g["built_at"], delay_s=g["delay_s"],
                    every_s=g.get("every_s", 1))
    if "divisions" in g:
        h.divisions, _problems = tshout.live_divisions(g["divisions"], g["rows"], g["entry_config"])
        h.options = g["options"]
        h.seats = {r: {n: s.as_dict() for n, s in hallplan.plan(g["divisions"], g["config"], r)[0].items()}
                   for r in (g["round"], g["round"] + 1)}
    return h


def _without_time(live: dict) -> dict:
    return {k: v for k, v in live.items() if k != "built_at"}


class FolderViewError(ValueError):
    """The folder's view cannot be shown (one line: which file, and why)."""


def _strict_json(name: str, body: bytes) -> dict:
    def constant(c: str):
        raise ValueError(f"{c} is not JSON")

    def finite(text: str) -> float:
        f = float(text)
        if not math.isfinite(f):
            raise ValueError(f"{text[:20]} is out of range")
        return f

    try:
        value = json.loads(body.decode("utf-8"), parse_constant=constant, parse_float=finite)
    except RecursionError:
        raise FolderViewError(f"{name}: not JSON (nested too deep)") from None
    except ValueError as e:  # UnicodeDecodeError and JSONDecodeError included
        raise FolderViewError(f"{name}: not JSON ({str(e)[:80]})") from None
    if not isinstance(value, dict):
        raise FolderViewError(f"{name}: not a JSON object")
    return value


def _read_doc(path: Path, name: str) -> tuple[bytes, os.stat_result]:
    """One document of the folder, its bytes and its stat: a regular file of at most
    limits.PUBLIC_DOC_BYTES, opened without following a link and without waiting (a FIFO there
    would block a read for ever, a link to /dev/zero read without bound); else FolderViewError."""
    bound = limits.PUBLIC_DOC_BYTES
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise FolderViewError(f"{name} is missing") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise FolderViewError(f"{name} is a symbolic link, not a file the console wrote") from None
        raise FolderViewError(f"{name} cannot be read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FolderViewError(f"{name} is not a regular file (a FIFO, a device or a folder: not one the console wrote)")
        if st.st_size > bound:
            raise FolderViewError(f"{name}: {st.st_size} bytes, at most {bound}")
        chunks, size = [], 0
        while size <= bound:
            chunk = os.read(fd, min(1 << 20, bound + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise FolderViewError(f"{name} cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if size > bound:  # (it grew since)
        raise FolderViewError(f"{name}: more than {bound} bytes, at most {bound}")
    return b"".join(chunks), st


def read_view(folder: Path, hall: str, delay_s: int, now: float | None = None) -> dict[str, Doc] | None:
    """The last view the folder holds, as the documents it was written as (their bytes, so their
    ETags), to show after a restart; None when it holds none (no hall.json: a folder never written).
    Checked whole, as anything read from disk: every document there, each a regular file (not a
    link, not a FIFO: `_read_doc`) of at most limits.PUBLIC_DOC_BYTES of JSON (UTF-8, no NaN, an
    object); hall.json of this hall, naming each
    other document's ETag (a document of a later view written, the console stopped before that
    view's hall.json, is not this view's); and old enough for `delay_s`: shown delayed by its own
    `delay_s`, then written (hall.json last) when the file says. Anything else raises FolderViewError
    (one line), and the folder is left as it is."""
    folder = Path(folder)
    if not os.path.lexists(folder / "hall.json"):
        return None
    docs, head, written = {}, {}, 0.0
    for name in public.FILES:
        body, st = _read_doc(folder / name, name)
        if name == "hall.json":  # of the parsed values, only hall.json's is kept: the others are checked
            head, written = _strict_json(name, body), st.st_mtime
        else:
            _strict_json(name, body)
        docs[name] = Doc.of(name, body)
    if head.get("hall") != hall:
        raise FolderViewError(f"hall.json is of the hall {str(head.get('hall'))[:64]!r}, not {hall!r}")
    versions = head.get("versions")
    if not isinstance(versions, dict) or not versions:
        raise FolderViewError("hall.json: names no versions of the other documents")
    for name in public.FILES[1:]:
        if versions.get(name) != docs[name].etag:
            raise FolderViewError(f"{name} is not the one hall.json names (a later view's, or damaged)")
    was = head.get("delay_s")
    if not isinstance(was, int) or isinstance(was, bool) or was < 0:
        raise FolderViewError(f"hall.json: delay_s {str(was)[:20]} is not a whole number of seconds")
    age = was + max(0.0, (time.time() if now is None else now) - written)
    if age < delay_s:
        raise FolderViewError(f"its view is too new to show under delay_s = {delay_s}: at least {int(age)} s old "
                              f"(shown {was} s late, written {int(age - was)} s ago)")
    return docs


class Feed:
    """The public view as it is shown, kept up to date on the console's event loop."""

    def __init__(self, sources: Sources, settings: Settings) -> None:
        self.sources = sources
        self.settings = settings
        self.page = page()
        self.current: dict[str, Doc] = {}  # what the listener answers and the folder holds
        self.shown_view: dict[str, Doc] | None = None  # the view `current` was made from
        self.latest: dict[str, Doc] = {}  # the newest view built (shown once the delay has passed)
        self.slow_due = True  # players, pairings, standings: built again
        self.slow_round: int | None = None
        self.live_value: dict | None = None  # live.json as last built (its time moves on only with a change)
        self.delayed: deque[tuple[float, dict[str, Doc]]] = deque()
        self.folder = Folder(settings.folder, sources.event_name) if settings.folder is not None else None
        self.builds = 0  # views built (the tests and the bench read it)
        self.shown = asyncio.Event()  # set once the first view is shown (and written to the folder)

    def changed(self) -> None:
        """A result or the TSH files changed: the slow documents are built again."""
        self.slow_due = True

    @property
    def every_s(self) -> float:
        return max(self.settings.every_s, self.settings.delay_s / MAX_DELAYED)

    async def build(self, now: float) -> None:
        rnd = self.sources.state.round.number
        slow = self.slow_due or rnd != self.slow_round
        self.slow_due = False
        g = gather(self.sources, self.settings.delay_s, slow, self.every_s)
        if slow:
            docs = await asyncio.to_thread(lambda: public.view(hall_of(g)))
            self.slow_round = rnd
        else:
            docs = public.live(hall_of(g))
        live = docs["live.json"]
        if self.live_value is not None and _without_time(live) == _without_time(self.live_value):
            docs["live.json"] = self.live_value  # nothing changed but the time it was built: the same bytes and ETag
        self.live_value = docs["live.json"]
        hall = docs.pop("hall.json", None) or json.loads(self.latest["hall.json"].body)
        latest = {**self.latest, **encode(docs, self.latest)}
        # hall.json names every other document's ETag: a page asks for hall.json alone (a 304 while
        # nothing changed) and for a document only when its ETag there is new to it
        hall = {**hall, "versions": {n: latest[n].etag for n in public.FILES if n != "hall.json"}}
        self.latest = {**latest, **encode({"hall.json": hall}, latest)}
        self.builds += 1
        if self.settings.delay_s:
            self.delayed.append((now, self.latest))
            while len(self.delayed) > MAX_DELAYED:
                self.delayed.popleft()

    def due(self, now: float) -> dict[str, Doc] | None:
        """The view to show at `now`: the latest, or with a delay the newest at least delay_s old."""
        if not self.settings.delay_s:
            return self.latest
        shown = None
        while self.delayed and now - self.delayed[0][0] >= self.settings.delay_s:
            shown = self.delayed.popleft()[1]
        return shown

    def waiting(self) -> dict[str, Doc]:
        """The page and public.waiting's hall.json: what is answered until a view is delay_s old."""
        back = datetime.now(timezone.utc) + timedelta(seconds=self.settings.delay_s)
        hall = public.waiting(self.sources.state.hall, self.settings.delay_s, self.every_s,
                              back.isoformat(timespec="seconds"))
        return {**self.page, **encode({"hall.json": hall}, {})}

    async def resume(self) -> None:
        """What the listener answers as a console starts with a delay: the folder's last view while
        it is old enough and whole (`read_view`), else the waiting page (the listener's alone: the
        folder keeps what it holds). The first view of this run that is delay_s old replaces it."""
        if not self.settings.delay_s:
            return
        view = None
        held = None if self.folder is None else await asyncio.to_thread(self.folder.event_held)
        if held is not None and held != self.folder.event:  # the last event's view is not this event's
            log.warning("console: the public folder %s holds the view of event %r, not of %r: not shown; the waiting page "
                        "until this event's is %d s old", self.folder.folder, held[:64], self.folder.event, self.settings.delay_s)
        elif self.folder is not None:
            try:
                view = await asyncio.to_thread(read_view, self.folder.folder, self.sources.state.hall, self.settings.delay_s)
            except (FolderViewError, OSError) as e:  # (an OSError: the folder changed as it was read)
                log.warning("console: the public folder %s: %s: not shown; the waiting page until a view is %d s old",
                            self.folder.folder, e, self.settings.delay_s)
        if view is None:
            self.current = self.waiting()
            return
        self.current = {**self.page, **view}
        self.folder.written.update({n: d.etag for n, d in view.items()})  # on disk already: not written again
        log.info("console: the public listener shows the folder's last view until one of this run is %d s old", self.settings.delay_s)

    async def run(self) -> None:
        await self.resume()
        while True:
            now = time.monotonic()
            try:
                await self.build(now)
            except Exception:  # a bug here must not stop the console: said, and tried at the next turn
                log.exception("console: the public view could not be built")
            view = self.due(time.monotonic())
            if view is not None and view is not self.shown_view:
                self.shown_view = view
                self.current = {**self.page, **view}
                if self.folder is not None:
                    await self.folder.write(self.current)
                self.shown.set()  # (after the folder has it: a test waits on this, not on a guessed time)
            await asyncio.sleep(self.every_s)


EVENT_STAMP = ".rackside-event"  # the event whose view a public folder holds (hidden: `rackside hall publish` copies no dot file)


class Folder:
    """The public view as static files in a folder: only the files that changed are written."""

    def __init__(self, folder: Path, event: str = "") -> None:
        self.folder = Path(folder)
        self.written: dict[str, str] = {}  # name -> ETag on disk
        self.failing = False
        self.event = event  # the event whose view the folder holds (issue 35), stamped in EVENT_STAMP
        self.stamped = not event

    def event_held(self) -> str | None:
        """The event whose view the folder holds, by its stamp (None: no stamp, a folder from before)."""
        try:
            with open(self.folder / EVENT_STAMP, "rb") as f:
                return f.read(128).decode("utf-8", "replace").strip()
        except OSError:
            return None

    async def write(self, docs: dict[str, Doc]) -> None:
        todo = {n: d for n, d in docs.items() if self.written.get(n) != d.etag}
        # the documents first, hall.json (what a page reads first) last: a reader never finds a
        # hall.json newer than the documents it names
        for name in sorted(todo, key=lambda n: n == "hall.json"):
            try:
                await asyncio.to_thread(write_atomic, self.folder / name, todo[name].body, FILE_MODE)
                self.written[name] = todo[name].etag
                if not self.stamped and name == "hall.json":  # the folder is this event's view now
                    await asyncio.to_thread(write_atomic, self.folder / EVENT_STAMP, self.event + "\n", FILE_MODE)
                    self.stamped = True
                if self.failing:
                    log.info("console: the public folder %s is written again", self.folder)
                self.failing = False
            except OSError as e:
                if not self.failing:
                    log.error("console: the public folder %s: %s cannot be written (%s): tried again at the next change",
                              self.folder, name, e)
                self.failing = True
                return


# --- the listener ----------------------------------------------------------------------------------


async def answer(feed: Feed, request: Request) -> Response:
    name = request.path_params.get("name", "index.html")
    doc = feed.current.get(name)
    if doc is None:
        if name in public.FILES or name in PAGE_SOURCES:  # (once a view is shown, every one is there)
            return PlainTextResponse("the public hall is not shown yet (starting, or delayed: hall.json says until when)", status_code=503,
                                     headers={"Retry-After": "2", "Cache-Control": "no-store"})
        return PlainTextResponse("not found", status_code=404, headers={"Cache-Control": f"public, max-age={limits.PUBLIC_PAGE_MAX_AGE_S}"})
    age = limits.PUBLIC_PAGE_MAX_AGE_S if name in PAGE_SOURCES else limits.PUBLIC_MAX_AGE_S
    headers = {"ETag": doc.etag, "Cache-Control": f"public, max-age={age}"}
    if not_modified(request.headers.get("if-none-match"), doc.etag):
        return Response(status_code=304, headers=headers)
    return Response(doc.body, media_type=doc.media, headers=headers)


def routes(feed: Feed) -> list[Route]:
    """The public listener's endpoints, each given the feed."""
    return [Route("/", partial(answer, feed), methods=["GET"]), Route("/{name}", partial(answer, feed), methods=["GET"])]


def app(feed: Feed) -> Starlette:
    return Starlette(routes=routes(feed), middleware=[Middleware(SecurityHeaders), Middleware(BodyLimit)])


class PublicServer(uvicorn.Server):
    """The public listener beside the director's, in the same process and event loop. The director's
    server owns the process's signals: this one is stopped by it (serve.run_foreground)."""

    def capture_signals(self):  # type: ignore[override]
        import contextlib

        return contextlib.nullcontext()


def server(feed: Feed, log_level: str = "warning") -> PublicServer:
    s = feed.settings
    config = uvicorn.Config(app(feed), host=s.listen_host, port=s.listen_port, log_level=log_level, access_log=False,
                            lifespan="off", http=GuardedH11, ws="none", h11_max_incomplete_event_size=limits.MAX_HEADER_BYTES,
                            timeout_keep_alive=limits.KEEP_ALIVE_S, limit_concurrency=None, backlog=limits.BACKLOG,
                            server_header=False)
    config.rackside_tls = None  # plain HTTP: the public hall carries nothing secret (docs/public.md)
    config.rackside_crowding = limits.PUBLIC
    return PublicServer(config)
