"""The director's console in-process (issue 37 item 4): the console of one event made as
`rackside hall console` makes it (serve.make_console: its event folder and lock, store, sessions,
command log, updates folder, live tourney.js), its Starlette app built by app.build_app with the
event's own session key, and Starlette's TestClient in front of it, running the app's lifespan.
No HTTP server, no process, no port: an endpoint test takes milliseconds instead of a console's
start.

What the console would publish to the broker is recorded (`Published`): each command as it would
go to a table's clock (after serve.make_console's own `send`, which logs it and stamps a new game
with the event), and the event's rules the rules page would retain. The devices page's fleet keeps
its own real broker connection when a `broker` is given (support.broker); without one it has none
and answers 503. A table's keypad clock (`InProcessConsole.clock`: support.keypadclock's, the real
clock core) hands its messages to the console as the bridge would, and takes and acks the commands
the console publishes to its table, on a thread of its own as the broker's delivery would. Whole
journeys (the bridge and the broker, the page in Chromium, the console's process killed and started
again) keep the real console process and broker (support.console.ConsoleProcess, support.browser).

`InProcessHttp` answers like support.console.Http (`call`, `csrf`, `login`, its session's CSRF
token in `token` for support.console.post), so a test written against a console process runs
unchanged in-process; each one is a browser of its own (its own cookies) on the console's one
event loop."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from pathlib import Path

from starlette.testclient import TestClient

from rackside.hall.console.shell.app import build_app
from rackside.hall.console.shell.auth import session_secret
from rackside.hall.console.shell.config import ConsoleConfig, load_credentials
from rackside.hall.console.shell.serve import SESSION_KEY, make_console

from support.console import cheap_hash
from support.keypadclock import KeypadClock

PASSWORD = "director-pw"
EVENT = "event-1"
BASE_URL = "http://127.0.0.1:8080"  # the TestClient's requests are for this host, from 127.0.0.1 (transport.PlainHttpLocalOnly)
NO_BROKER = "mqtt://127.0.0.1:9"  # nothing listens there (discard): the fleet's connection is refused


class Published:
    """Stands in for the console's broker bridge (serve.Bridge) in-process: what it would have
    published, kept in order. `commands`: (table, command) as they would go to the clock's `cmd`
    topic; `rules`: each rules payload the rules page would retain."""

    def __init__(self, bridge) -> None:
        self.commands: list[tuple[int, dict]] = []
        self.rules: list[bytes] = []
        self.refuse: str | None = None  # set: the next commands fail as a broker that refused them (ConnectionError)
        bridge.command = self.command  # serve.make_console's `send` calls its bridge's command
        self.hall = bridge.hall
        self.clocks: dict[int, "InProcessClock"] = {}  # the tables whose clock takes its commands (InProcessConsole.clock)
        self._to_clocks: queue.Queue = queue.Queue()
        self._courier: threading.Thread | None = None

    def command(self, table: int, cmd: dict) -> None:
        if self.refuse is not None:
            raise ConnectionError(self.refuse)
        payload = json.dumps(cmd)
        self.commands.append((table, json.loads(payload)))  # as it would go on the wire
        clock = self.clocks.get(table)
        if clock is not None:  # to its clock later, on a thread of its own, as the broker's delivery would be
            if self._courier is None:
                self._courier = threading.Thread(target=self._carry, name="inproc-commands", daemon=True)
                self._courier.start()
            self._to_clocks.put((clock, payload.encode()))

    def _carry(self) -> None:
        while (item := self._to_clocks.get()) is not None:
            clock, payload = item
            clock.take(payload)

    def close(self) -> None:
        if self._courier is not None:
            self._to_clocks.put(None)
            self._courier.join(10)

    def publish_rules(self, rules: bytes) -> None:
        self.rules.append(rules)

    def start(self) -> None:  # the app's lifespan starts and stops its bridge
        pass

    def stop(self) -> None:
        pass


class InProcessHttp:
    """support.console.Http's interface on Starlette's TestClient: one browser (its own cookies)."""

    def __init__(self, app, portal=None, source: str = "127.0.0.1") -> None:
        self.client = TestClient(app, base_url=BASE_URL, client=(source, 50000), follow_redirects=False)
        if portal is not None:  # the console's one event loop (its locks and streams belong to it)
            self.client.portal = portal
        self.token: str | None = None

    def call(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        r = self.client.request(method, path, content=data, headers={"Content-Type": "application/json", **(headers or {})})
        return r.status_code, r.content, r.headers

    def csrf(self) -> str:
        return json.loads(self.call("GET", "/api/csrf")[1])["csrf"]

    def login(self, password: str = PASSWORD, name: str = "Sam") -> str:
        """Log in as the director (the login page's flow: its CSRF token, the password, the session
        cookie); the session's CSRF token for the requests that follow, also kept in `token`."""
        token = self.csrf()
        status, body, _ = self.call("POST", "/api/login", {"password": password, "name": name}, {"X-CSRF-Token": token})
        assert status == 200, body
        self.token = json.loads(body)["csrf"]
        return self.token


class InProcessConsole:
    """A console in-process: `console` (app.Console), `app`, `published`, `home` (the event's folder),
    `http()` for another browser, `director` a browser logged in as the director."""

    def __init__(self, console, app, published: Published, portal, password: str) -> None:
        self.console, self.app, self.published, self.portal, self.password = console, app, published, portal, password
        self.home: Path = console.home
        self.url = BASE_URL  # what the app is asked for (the update command's download URL is made from it)
        self.director = self.http()
        self.director.login(password)

    def http(self, source: str = "127.0.0.1") -> InProcessHttp:
        return InProcessHttp(self.app, self.portal, source)

    def on_loop(self, fn, *args):
        """Run `fn(*args)` on the console's event loop (as the bridge hands it a message) and return its result."""
        async def go():
            return fn(*args)

        return self.portal.call(go)

    def deliver(self, topic: str, payload: bytes) -> None:
        """A message from the broker as the bridge would deliver it (Console.on_message, on the loop)."""
        self.on_loop(self.console.on_message, topic, payload)

    def clock(self, n: int, rules=None, game_no: int = 1) -> "InProcessClock":
        """Table `n`'s keypad clock (support.keypadclock), its messages handed to this console, online."""
        return InProcessClock(self, n, rules, game_no).online()


class _Delivered:
    def wait_for_publish(self, timeout=None) -> None:  # handed over already: nothing to wait for
        pass


class InProcessClock(KeypadClock):
    """support.keypadclock.KeypadClock (the real clock core, its payloads checked against the wire
    schemas) with no broker connection: what it publishes goes to the in-process console as its
    bridge would deliver it. The console's commands to it are in `InProcessConsole.published`."""

    def __init__(self, c: InProcessConsole, n: int, rules=None, game_no: int = 1) -> None:
        self.inproc = c
        super().__init__(c.published, n, rules, game_no)  # Published has the hall's name, as a broker does

    def _connect(self, broker) -> None:
        self.inproc.published.clocks[self.n] = self  # the console's commands to this table come to it

    def _send(self, leaf: str, payload: bytes, retain: bool, wait: bool):
        self.inproc.deliver(self.topic(leaf), payload)
        return _Delivered()

    def take(self, payload: bytes) -> None:
        """A command the console published to this table (on Published's courier thread): taken and
        acked as KeypadClock takes one from the broker."""
        self._on_cmd(self, None, _Message(payload))

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False) -> _Delivered:
        """KeypadClock acks through its client's publish: here it is itself the client."""
        self.inproc.deliver(topic, payload)
        return _Delivered()

    def close(self) -> None:
        self.inproc.published.clocks.pop(self.n, None)


class _Message:
    def __init__(self, payload: bytes) -> None:
        self.payload = payload


def config(folder: Path, broker=None, password: str = PASSWORD, **settings) -> ConsoleConfig:
    """The console's settings as ConsoleProcess's hall.toml gives them: `broker`'s hall and the
    director's credentials (none: a hall with no broker), state in `folder`/state, event "event-1"."""
    if broker is not None:
        user, mqtt_password = load_credentials(broker.credentials("director"))
        hall, url = broker.hall, broker.url
    else:
        user, mqtt_password, hall, url = "director", "none", "testhall", NO_BROKER
    settings.setdefault("event_name", EVENT)
    return ConsoleConfig(hall=hall, url=url, username=user, mqtt_password=mqtt_password, password_hash=cheap_hash(password),
                         state_dir=Path(folder) / "state", base=Path(folder), **settings)


@contextlib.contextmanager
def inproc_console(folder, broker=None, password: str = PASSWORD, **settings):
    """The console in-process with the director logged in (InProcessConsole); `settings`: ConsoleConfig's
    (tsh, round, division, slips, event, public ...). Stopped as ConsoleServer stops: its lifespan,
    its fleet's connection, its event's lock."""
    cfg = config(Path(folder), broker, password, **settings)
    console, bridge = make_console(cfg)
    try:
        published = Published(bridge)
        console.bridge = published
        app = build_app(console, secret_key=session_secret(console.home / SESSION_KEY), https_only=False)
        with TestClient(app) as lifespan:  # the app's lifespan: the console's loop, its gap watch, the live tourney.js
            try:
                yield InProcessConsole(console, app, published, lifespan.portal, password)
            finally:  # the courier's last commands are acked while the loop still runs (after it, no portal)
                published.close()
    finally:
        console.fleet.close()
        console.event_lock.release()
