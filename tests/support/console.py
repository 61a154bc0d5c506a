"""Helpers of the console's tests: an HTTP client that keeps its cookies, a request straight through the
console's ASGI app in-process (`call`, `logged_in`: no HTTP client library is installed), the demo hall on a real
Mosquitto, the console as its own process (a director's command sent straight to a clock, and its
ack, are in support.hallclock)."""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import urllib.error
import urllib.request


class Http:
    """A cookie-keeping HTTP client for the login and CSRF checks (no browser needed)."""

    def __init__(self, base: str, source: str | None = None):
        """`source`: the loopback address to connect from (127.0.0.2, ...): another machine on the
        hall's network, as far as the console can tell."""
        self.base = base.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        handlers = [urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect()]
        if source:
            handlers.append(_FromAddress(source))
        self.opener = urllib.request.build_opener(*handlers)

    def call(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with self.opener.open(req, timeout=10) as r:
                return r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers

    def csrf(self):
        return json.loads(self.call("GET", "/api/csrf")[1])["csrf"]

    def login(self, password, name="Sam"):
        """Log in as the director; the session's CSRF token for the commands that follow."""
        token = self.csrf()
        status, body, _ = self.call("POST", "/api/login", {"password": password, "name": name}, {"X-CSRF-Token": token})
        assert status == 200, body
        return json.loads(body)["csrf"]


def get_json(url: str):
    """A plain GET of a JSON document (the public hall's files), no session."""
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


async def call(app, method: str, path: str, headers: dict, body: bytes = b"") -> tuple[int, dict, bytes]:
    path, _, query = path.partition("?")
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": query.encode(), "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8080),
    }
    sent = False
    out: dict = {"status": None, "headers": {}, "body": b""}

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)

    async def send(msg):
        if msg["type"] == "http.response.start":
            out["status"] = msg["status"]
            out["headers"] = {k.decode().lower(): v.decode("latin-1") for k, v in msg["headers"]}
        elif msg["type"] == "http.response.body":
            out["body"] += msg.get("body", b"")

    await app(scope, receive, send)
    return out["status"], out["headers"], out["body"]


async def logged_in(app, password: str) -> dict:
    """The director's request headers once logged in: the session's cookie and CSRF token."""
    _, headers, body = await call(app, "GET", "/api/csrf", {})
    h = {"cookie": headers["set-cookie"].split(";", 1)[0], "x-csrf-token": json.loads(body)["csrf"],
         "content-type": "application/json"}
    _, headers, body = await call(app, "POST", "/api/login", h, json.dumps({"password": password}).encode())
    h.update(cookie=headers["set-cookie"].split(";", 1)[0], **{"x-csrf-token": json.loads(body)["csrf"]})
    return h


class _FromAddress(urllib.request.HTTPHandler):
    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source

    def http_open(self, req):
        import functools
        import http.client

        return self.do_open(functools.partial(http.client.HTTPConnection, source_address=(self.source, 0)), req)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


def cheap_hash(password: str) -> str:
    """The console's stored password form with a tiny scrypt N, so a test's login is quick
    (verify_password reads N from the hash)."""
    import base64
    import hashlib

    salt = b"0123456789abcdef"
    digest = hashlib.scrypt(password.encode(), salt=salt, n=16, r=8, p=1, dklen=32)
    return f"scrypt:16:8:1:{base64.b64encode(salt).decode()}:{base64.b64encode(digest).decode()}"


@contextlib.contextmanager
def demo_hall(folder, broker_tables: str, tables: list[int], scripts: dict, password: str, faults: dict | None = None):
    """A real Mosquitto provisioned for `broker_tables` ("1-4") and one station, and the demo hall
    (hall.console.demohall.demo) on it: `tables` simulated from `scripts`, the console under uvicorn. The hall
    keeps its `broker` (to publish as a table that is not simulated) and its `workdir`."""
    from rackside.hall.console.demohall.demo import start_hall

    from support.broker import Broker

    broker = Broker(folder / "broker", tables=broker_tables, stations=1).start()
    try:
        h = start_hall(port=broker.port, devices=broker.devices, tables=tables, workdir=folder, scripts=scripts,
                       round_start_ago_s=None, password=password, hall=broker.hall, faults=faults)
        h.broker, h.workdir = broker, folder
        try:
            yield h
        finally:
            h.stop()
    finally:
        broker.stop()


class ConsoleProcess:
    """`rackside hall console` as its own process, as the director runs it: a hall.toml written for
    `broker` (the director's credentials), a free loopback port, the state directory `state_dir`.
    `start()` returns once the page answers; `stop()` ends it (SIGTERM, then SIGKILL)."""

    def __init__(self, broker, folder, password: str = "director-pw", *, extra: str = "", prefix: list | None = None,
                 event: str | None = "event-1", state_dir=None) -> None:
        """`prefix`: what the console's command line is run under (support.disk.SmallDisk's unshare);
        `event`: [console] event (None: none named, the current one); `state_dir`: RACKSIDE_STATE_DIR
        (default `folder`/state: another console's, to share one)."""
        from pathlib import Path

        from support.broker import free_port

        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.password = password
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = self.folder / "hall.toml"
        self.event = event
        self._state_dir = None if state_dir is None else Path(state_dir)
        self.config.write_text(
            f'[console]\nhall = "{broker.hall}"\nurl = "{broker.url}"\n'
            + ('' if event is None else f'event = "{event}"\n') +
            f'credentials = "{broker.credentials("director")}"\npassword = "{cheap_hash(password)}"\n'
            f'listen = "127.0.0.1:{self.port}"\n{extra}'
        )
        self.proc = None
        self.prefix = list(prefix or [])
        self.log_path = self.folder / "console.log"

    def start(self, timeout: float = 20.0) -> "ConsoleProcess":
        import os
        import subprocess
        import sys

        from support.broker import wait_listening

        env = {**os.environ, "RACKSIDE_STATE_DIR": str(self.state_dir)}
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([*self.prefix, sys.executable, "-m", "rackside", "hall", "console", "--config", str(self.config)],
                                     stdout=log, stderr=log, env=env)
        log.close()
        wait_listening(self.proc, self.port, "the console", self.log_path, timeout, poll=0.05)
        return self

    @property
    def state_dir(self):
        return self._state_dir or self.folder / "state"

    @property
    def home(self):
        """The event's own folder (hall/console/shell/eventdir.py): its results, audit, sessions, commands."""
        return self.state_dir / "events" / self.event

    def rss_mib(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def stop(self) -> None:
        from support.broker import end_process

        end_process(self.proc)
        self.proc = None


def post(h, path: str, body: dict) -> tuple[int, dict]:
    """POST `body` as the director logged in on `h` (its CSRF token kept as `h.token`): the status and the reply."""
    status, raw, _ = h.call("POST", path, body, {"X-CSRF-Token": h.token})
    return status, json.loads(raw or b"{}")


def tsh_files(console_folder, files: dict, round: int | None = 1) -> str:
    """TSH's files (name: text, or bytes as TSH wrote them) put in `console_folder`/tsh; the console's
    settings naming them (and the round, unless None) for ConsoleProcess's `extra`."""
    from pathlib import Path

    folder = Path(console_folder) / "tsh"
    folder.mkdir(parents=True)
    for name, text in files.items():
        if isinstance(text, bytes):
            (folder / name).write_bytes(text)
        else:
            (folder / name).write_text(text)
    return f"tsh = {json.dumps([f'tsh/{name}' for name in files])}\n" + ("" if round is None else f"round = {round}\n")


def sim_clocks(broker, scripts: dict, journals, game_s: int):
    """Simulated clocks (hall.console.demohall.sim, the real clock core) at `scripts`' tables, each on its own
    credentials and playing its script, started; close() when done."""
    from rackside.game.clock import Rules
    from rackside.hall.console.demohall.sim import SimHall

    sim = SimHall(broker.hall, "127.0.0.1", broker.port,
                  {n: broker.devices[f"table-{n}"].login for n in scripts},
                  journals, rules=Rules(game_time_ms=game_s * 1000))
    sim.connect()
    for n, steps in scripts.items():
        sim.script(n, steps)
    sim.start()
    return sim
