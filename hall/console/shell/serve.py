"""Running the console: the hall state, the broker bridge and the web app under uvicorn.

A console serves one event: its files (results, audit, sessions and their key, commands, kept
challenges, updates, the live tourney.js) are in that event's folder (eventdir.py), which it locks.

`ConsoleServer` runs it on a thread (the demo and the tests); `rackside hall console` runs it in
the foreground. Commands the director sends are also appended to an owner-only log
(`console-commands.jsonl` in the event's folder) with who sent them and why: the clock journals
the command's id, the console's log says who it was.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import ssl
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import uvicorn

from rackside import paths
from rackside.atomic import write_atomic

from rackside.hall.wire import eventrules

from . import eventdir
from ..common import limits
from ..publichall import publicserve
from ..scoring import tsh, tshlive
from .app import Console, build_app
from .auth import Sessions, session_secret
from .bridge import Bridge
from .config import ConsoleConfig
from ..fleet.devices import FleetService
from ..common.guard import GuardedH11, now_iso
from ..scoring.resultstore import ResultStore
from ..fleet.updates import Updates

log = logging.getLogger("rackside.hall.console")
RESULTS_DB = "console-results.sqlite"  # every confirmed result and its audit trail (resultstore.py)
SESSION_KEY = "console-session.key"  # the session-signing secret, in the state dir (auth.session_secret)
SESSIONS = "console-sessions.json"
EVENT_SINCE = "event_since"  # the store's setting: when the event began (its first console's start)
CHALLENGES_KEPT = "console-challenges.jsonl"  # the stations' challenges, for the feed after a restart (ChallengeKeep)  # the live sessions, in the state dir (auth.Sessions)


class CommandLog:
    """Append-only, owner-only: every command sent, with who sent it and the reason."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.close(fd)

    def append(self, table: int, cmd: dict) -> None:
        try:
            with open(self.path, "a") as f:
                f.write(json.dumps({"table": table, **cmd}) + "\n")
        except OSError as e:
            log.error("console: command log %s: %s", self.path, e)


class ChallengeKeep:
    """The stations' challenges (summary and per-word detail, as they came from the broker), kept
    owner-only in the state dir so a restarted console's feed and challenges are not empty: a
    station publishes each challenge once, not retained. Bounded: 2 x limits.CHALLENGES messages
    (a summary and its detail each), the oldest dropped when the file is rewritten at twice that.
    At start the kept messages go through the same checks (hallstate.on_message) as live ones."""

    LEAVES = ("challenge", "detail")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.keep = 2 * limits.CHALLENGES
        self.lines = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))

    def kept(self) -> list[tuple[str, bytes]]:
        out = []
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    try:
                        d = json.loads(line)
                        out.append((str(d["topic"]), str(d["payload"]).encode()))
                    except (ValueError, KeyError, TypeError):
                        log.warning("console: %s line %d damaged: skipped", self.path, number)
        except OSError as e:
            log.error("console: challenges kept in %s: %s", self.path, e)
        self.lines = len(out)
        return out[-self.keep:]

    def append(self, topic: str, payload: bytes) -> None:
        parts = topic.split("/")
        if len(parts) != 6 or parts[3] != "station" or parts[5] not in self.LEAVES:
            return
        try:
            line = json.dumps({"topic": topic, "payload": payload.decode("utf-8")}) + "\n"
        except UnicodeDecodeError:
            return  # not JSON text: the console refuses it anyway
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(line)
            self.lines += 1
            if self.lines > 2 * self.keep:
                with open(self.path, encoding="utf-8") as f:
                    last = f.readlines()[-self.keep:]
                write_atomic(self.path, "".join(last))
                self.lines = len(last)
        except OSError as e:
            log.error("console: keeping a challenge in %s: %s", self.path, e)


def state_dir(cfg: ConsoleConfig) -> Path:
    """Where this console keeps its files: the config's own (the demo's), else `rackside paths`'."""
    return cfg.state_dir or paths.state_dir()


def event_home(cfg: ConsoleConfig, make: bool = True) -> tuple[str, Path]:
    """The event this console serves and its own folder (eventdir.py): [console] event, else the current one."""
    return eventdir.choose(state_dir(cfg), cfg.event_name, cfg.hall, make=make)


def make_console(cfg: ConsoleConfig) -> tuple[Console, Bridge]:
    """The console of one event: its lock taken first (EventError: another console holds it), then
    its store (StoreError: another hall's or event's), sessions and files, all in the event's folder."""
    name, home = event_home(cfg)
    lock = eventdir.Lock(home, name, f"{'https' if cfg.https else 'http'}://{cfg.listen_host}:{cfg.listen_port}/")
    try:
        store = ResultStore(home / RESULTS_DB, identity={"hall": cfg.hall, "event": name})
    except BaseException:
        lock.release()
        raise
    if (state_dir(cfg) / RESULTS_DB).exists():
        log.warning("console: %s (a console's results from before events had folders) is not read into event %r: "
                    "docs/console.md, \"Events\"", state_dir(cfg) / RESULTS_DB, name)
    console = Console(cfg.hall, cfg.password_hash, sessions=Sessions(home / SESSIONS), store=store)
    console.event_name, console.event_lock, console.home = name, lock, home
    console.state.event = name  # which clock games are this event's (hallstate._foreign)
    console.state.event_since = event_since(store)
    console.paperless.slips = cfg.slips  # [console] slips (issue 27)
    start = restore_event(console, cfg)
    # the event's rules ([event], issue 38), as restore_event worked them out: kept in the store, and
    # audited when they changed since the last start
    at = now_iso()
    changed = console.event.set_rules(cfg.event, "console.toml [event]", at, console.state.round.number, start)
    log.info("console: the event's rules: %s%s", console.event.rules.summary(),
             " (new since the last start: audited; games in progress keep theirs)" if changed else "")
    challenges = ChallengeKeep(home / CHALLENGES_KEPT)
    for topic, payload in challenges.kept():  # the feed and challenges from before a restart
        console.state.on_message(topic, payload)

    def deliver(topic: str, payload: bytes) -> None:  # on the bridge's thread
        challenges.append(topic, payload)
        console.deliver_threadsafe(topic, payload)

    bridge = Bridge(cfg.url, cfg.username, cfg.mqtt_password, cfg.hall, deliver,
                    console.connection_threadsafe, event=name, ca_file=cfg.ca_file, on_dropped=console.dropped_threadsafe)
    cmdlog = CommandLog(home / "console-commands.jsonl")
    def send(table: int, cmd: dict) -> None:
        if cmd.get("cmd") == "new_game":  # the clock's state of the new game says it is this event's (issue 35)
            cmd = {**cmd, "event": name}
        cmdlog.append(table, cmd)
        # what goes to the clock: the command as hall.wire.commands checked it, without the console's own note
        bridge.command(table, {k: v for k, v in cmd.items() if k != "sent_at"})

    console.send = send
    console.bridge = bridge
    bridge.rules = eventrules.payload(console.event.rules)  # the event's rules, retained for the stations (issue 38)
    console.fleet = FleetService(cfg.hall, cfg.url, cfg.username, cfg.mqtt_password, cfg.ca_file)
    console.command_log = cmdlog.path
    console.updates = Updates(home / "updates")  # the bundle on offer (updates.py)
    # the live tourney.js, kept in its folder for a web server, a sync or TSH's scoreboard to read
    console.tsh_out = tshlive.LiveFile(cfg.tourney_js_dir or home, lambda: tshlive.gather(console.event, console.result_rows),
                                       lambda gathered: tshlive.render(gathered, console.carried)[0])
    if cfg.public is not None:  # the public hall: its own listener and/or a folder of static files (publicserve.py)
        console.public_out = publicserve.Feed(console.public_sources(), cfg.public)
    return console, bridge


def event_since(store: ResultStore) -> datetime:
    """When the event began: its store's first opening, kept in the store (issue 35)."""
    since = store.setting(EVENT_SINCE)
    try:
        return datetime.fromisoformat(since)
    except (TypeError, ValueError):
        now = datetime.now(timezone.utc).replace(microsecond=0)
        store.put_setting(EVENT_SINCE, now.isoformat())
        return now


def restore_event(console: Console, cfg: ConsoleConfig) -> tuple:
    """The round, the TSH files and the seating the console had (its store), and the config's TSH
    files: the console's start, and `rackside hall ready`'s (ready_cli.py). Returns the event's
    rules at start and whether they changed (event.Event.rules_at_start), worked out once: the
    console keeps them (Event.set_rules)."""
    console.state.round.division = cfg.division
    console.state.round.number = cfg.round
    saved = console.event.saved_round()  # the round the director last set, kept across a restart
    # the event's rules ([event], issue 38; make_console keeps and audits them): the round's game time
    # is theirs when they are new (one the director set on the page for the round stays otherwise)
    start = console.event.rules, changed = console.event.rules_at_start(cfg.event)
    console.state.round.game_time_ms = console.event.rules.rules.game_time_ms
    if saved:
        for key in ("division", "number", "start", "late_after_s", "game_time_ms"):
            if key in saved and not (changed and key == "game_time_ms"):
                setattr(console.state.round, key, saved[key])
    try:
        for p in console.event.restore():  # the TSH files imported in the page before a restart
            log.warning("TSH: %s", p)
    except tsh.TshError as e:  # what was kept cannot be read again: say so, start without it
        log.error("TSH: the files imported before the restart: %s", e)
    if cfg.tsh:  # read here: tsh is pure; config.tsh with its .t files, or .t / tourney.js files
        for p in console.import_tsh({str(f): Path(f).read_bytes() for f in cfg.tsh}, revive=False):  # a removed division stays removed
            log.warning("TSH: %s", p)
    console.apply_pairings()
    return start


def server_config(app, cfg: ConsoleConfig, log_level: str) -> uvicorn.Config:
    """uvicorn with the console's bounds (limits.py): uvicorn's own h11 protocol with a header
    deadline, caps on connections by address, waiting and in all, TLS started inside those caps,
    and a cut-off for clients that stop reading (guard.GuardedH11), its header size and keep-alive.
    uvicorn's own limit_concurrency is off: it counted a crowd's half-open connections against the
    director (guard.Crowd and guard.Admission do that job)."""
    config = uvicorn.Config(app, host=cfg.listen_host, port=cfg.listen_port, log_level=log_level, access_log=False,
                            lifespan="on", http=GuardedH11, ws="none", h11_max_incomplete_event_size=limits.MAX_HEADER_BYTES,
                            timeout_keep_alive=limits.KEEP_ALIVE_S, limit_concurrency=None,
                            backlog=limits.BACKLOG, server_header=False)
    config.rackside_tls = tls_context(cfg) if cfg.https else None  # read by GuardedH11: the hall's certificate
    return config


def tls_context(cfg: ConsoleConfig) -> ssl.SSLContext:
    """The page's TLS: the hall's certificate and key, the standard library's server defaults."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cfg.certfile), str(cfg.keyfile))
    return context


def release_freed_buffers() -> None:
    """Have glibc give every freed block of 128 KiB or more back to the system at once. Each TLS
    connection's 256 KiB buffer is such a block; with glibc's sliding threshold they came from the
    heap after the first, and a crowd's 300 MiB stayed with the process after it left. mallopt is
    a C call (ctypes) because Python has no binding; elsewhere than glibc it is skipped."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    except (OSError, AttributeError):
        pass


M_MMAP_THRESHOLD = -3  # glibc's malloc.h


class DirectorServer(uvicorn.Server):
    """uvicorn serving the director's page: on its way out (a SIGTERM, `should_exit`), first the
    page's event streams end (Hub.end_all), which never end by themselves; uvicorn then waits for
    the connections to close, and with a page open it waited until the process was killed (systemd's
    stop timeout, a test's 10 s)."""

    def __init__(self, config: uvicorn.Config, hub) -> None:
        super().__init__(config)
        self.hub = hub

    async def shutdown(self, sockets=None) -> None:
        self.hub.end_all()
        await super().shutdown(sockets)


class ConsoleServer:
    """The console on a background thread: `start()` returns once the page is being served."""

    def __init__(self, cfg: ConsoleConfig, *, log_level: str = "warning") -> None:
        self.cfg = cfg
        self.console, self.bridge = make_console(cfg)
        self.app = build_app(self.console, secret_key=session_secret(self.console.home / SESSION_KEY), https_only=cfg.https)
        self.server = DirectorServer(server_config(self.app, cfg, log_level), self.console.hub)
        self.thread: threading.Thread | None = None

    @property
    def console_log_path(self) -> Path:
        return self.console.command_log

    @property
    def url(self) -> str:
        return f"{'https' if self.cfg.https else 'http'}://{self.cfg.listen_host}:{self.cfg.listen_port}/"

    def start(self, timeout: float = 15.0) -> "ConsoleServer":
        feed = self.console.public_out  # with [public]: the public hall beside it, on the same loop
        run = self.server.run if feed is None else (lambda: asyncio.run(serve_all(self.server, feed)))
        self.thread = threading.Thread(target=run, name="console", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"the console did not start on {self.url}")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True  # the app's lifespan stops the bridge
        if self.thread:
            self.thread.join(10)
        self.console.fleet.close()
        self.console.event_lock.release()


def port_taken(host: str, port: int) -> bool:
    """Whether something already listens on (host, port), checked by binding as uvicorn will
    (SO_REUSEADDR, so a port in TIME_WAIT is free): otherwise a second console printed its URL,
    then uvicorn's "[Errno 98] ... address already in use"."""
    import errno
    import socket

    if port == 0:
        return False
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            return e.errno == errno.EADDRINUSE
    return False


def run_foreground(cfg: ConsoleConfig) -> int:
    release_freed_buffers()
    if port_taken(cfg.listen_host, cfg.listen_port):
        import sys

        print(f"rackside hall console: port {cfg.listen_port} on {cfg.listen_host} is in use (another console or "
              f"`rackside hall demo`?): stop it, or choose another port with [console] listen", file=sys.stderr)
        return 1
    if cfg.public is not None and cfg.public.listen_port is not None and port_taken(cfg.public.listen_host, cfg.public.listen_port):
        import sys

        print(f"rackside hall console: port {cfg.public.listen_port} on {cfg.public.listen_host} is in use: stop what "
              f"holds it, or choose another port with [public] listen", file=sys.stderr)
        return 1
    console, bridge = make_console(cfg)
    app = build_app(console, secret_key=session_secret(console.home / SESSION_KEY), https_only=cfg.https)  # Secure cookies
    server = DirectorServer(server_config(app, cfg, "warning"), console.hub)
    gc.freeze()  # what start-up made lives as long as the process: no collection need look at it again (guard.Crowd.sweep)
    scheme = "https" if cfg.https else "http"
    print(f"rackside hall console: {scheme}://{cfg.listen_host}:{cfg.listen_port}/ (hall {cfg.hall}, event {console.event_name} "
          f"in {console.home}, broker {cfg.url})", flush=True)
    if cfg.https:
        from .transport import trust_hint

        print(f"rackside hall console: {trust_hint(cfg.certfile)}", flush=True)
    else:
        print("rackside hall console: plain HTTP, served to this machine only (certfile and keyfile in [console] for HTTPS)", flush=True)
    feed = console.public_out
    if feed is not None:
        s = feed.settings
        if s.listen_port is not None:
            print(f"rackside hall console: the public hall on http://{s.listen_host}:{s.listen_port}/ (read-only, no login"
                  f"{f', {s.delay_s} s behind' if s.delay_s else ''})", flush=True)
        if s.folder is not None:
            print(f"rackside hall console: the public hall written to {s.folder}", flush=True)
    asyncio.run(serve_all(server, feed))  # the app's lifespan starts the bridge once the loop runs, and stops it
    return 0


async def serve_all(server: uvicorn.Server, feed: "publicserve.Feed | None") -> None:
    """The director's server and, with [public], the public hall's feed and listener on the same
    loop; the director's server owns the signals, and the public side stops when it does."""
    if feed is None:
        await server.serve()
        return
    tasks = [asyncio.create_task(feed.run())]
    public_server = publicserve.server(feed) if feed.settings.listen_port is not None else None
    if public_server is not None:
        tasks.append(asyncio.create_task(public_server.serve()))
    try:
        await server.serve()
    finally:
        if public_server is not None:
            public_server.should_exit = True
            await asyncio.wait([tasks[1]], timeout=5)
        for t in tasks:
            t.cancel()
