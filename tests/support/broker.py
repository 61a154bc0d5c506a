"""A real Mosquitto for the tests: provisioned with `rackside hall provision`, on a free loopback port.

Fixtures (registered for every test by tests/conftest.py):

- `hall_broker`: one broker for the whole session (hall "testhall", tables 1-8, stations 1-2, a
  director). Tests must not stop it; use `make_broker` for that. Each test finds nothing retained
  under the hall and leaves nothing: once the test and its own fixtures are done, every retained
  message under the hall (states, statuses, results, hellos) is deleted (`clear_retained`), so no
  test's console or recorder receives another test's table as its own.
- `make_broker`: a factory, `make_broker(tables="1-4", stations=1)`, for a test's own broker
  that it may stop, kill and restart (`broker.stop()`, `broker.start()`); each is torn down after
  the test.

A `Broker` knows its `url`, `hall`, `dir`, each device's `Device` (`broker.devices["table-3"]`,
with the password and the client id the broker binds it to) and credentials file (`broker.credentials("table-3")`), and makes connected
paho clients: `broker.client("director")`. Nothing is mocked: /usr/sbin/mosquitto runs for real.
Listening on 127.0.0.1 only.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from rackside.hall.director import provision as prov

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc: subprocess.Popen, port: int, name: str, log_path: Path, timeout: float, poll: float) -> None:
    """Return once `proc` accepts connections on 127.0.0.1:`port` (polled every `poll` s); a
    RuntimeError naming `name`, with the tail of its log, if it exits first or is not listening
    after `timeout` s."""
    from support.wait import until

    def listening() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited {proc.returncode}: {log_path.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            return False

    if not until(listening, timeout, poll):
        raise RuntimeError(f"{name} did not listen on {port}: {log_path.read_text()[-2000:]}")


def ping(client, timeout: float = 10.0) -> None:
    """A round trip to the broker on `client`'s own connection, as Mosquitto's tests `do_ping`: once
    it returns, every message the broker had routed to this client before has been through its
    on_message. The barrier a test needs before it asserts that something did not arrive: publish
    the thing under test with QoS 1 and wait for its PUBACK (the broker routes a message to every
    subscriber before it answers), then ping each subscriber that must not have it.

    The round trip is an UNSUBSCRIBE of a filter the client never had (every login may unsubscribe,
    hall.director.dynsec), answered by an UNSUBACK: the broker writes a connection's packets in order and
    paho handles them in order. (paho sends PINGREQ only on its own keepalive timer.) It holds for
    fewer QoS 1 messages on their way than the broker's in-flight window (max_inflight_messages, 50
    in a provisioned hall): the broker holds the rest back until the first are acknowledged, and the
    UNSUBACK overtakes them. `Recorder.ping` repeats the round trip until one brings nothing new.
    Raises ConnectionError if the client is not connected."""
    import paho.mqtt.client as mqtt

    answered: set[int] = set()
    cond = threading.Condition()
    previous = client.on_unsubscribe

    def on_unsubscribe(c, userdata, mid, reason_codes, properties):
        with cond:
            answered.add(mid)
            cond.notify_all()
        if previous is not None:
            previous(c, userdata, mid, reason_codes, properties)

    client.on_unsubscribe = on_unsubscribe
    try:
        rc, mid = client.unsubscribe("rackside/test-barrier/never-subscribed")
        if rc != mqtt.MQTT_ERR_SUCCESS:
            raise ConnectionError(f"ping: not connected ({mqtt.error_string(rc)})")
        with cond:
            if not cond.wait_for(lambda: mid in answered, timeout):
                raise TimeoutError(f"ping: no UNSUBACK in {timeout} s")
    finally:
        client.on_unsubscribe = previous


def end_process(proc: subprocess.Popen | None) -> None:
    """SIGTERM (a clean stop: mosquitto saves its persistence file), then SIGKILL if it has not
    ended after 10 s."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Broker:
    def __init__(self, directory: Path, *, hall: str = "testhall", tables: str = "1-8", stations: int = 2, port: int | None = None,
                 tls: bool = False):
        """`tls`: the devices' listener is TLS (`url` is mqtts://, on `tls_port`), with the hall's CA
        and a certificate for 127.0.0.1 made by provisioning; `port` stays plain MQTT for `client()`."""
        self.dir = Path(directory)
        self.hall = hall
        self.port = port or free_port()
        self.tls_port = free_port() if tls else None
        self.url = f"mqtts://127.0.0.1:{self.tls_port}" if tls else f"mqtt://127.0.0.1:{self.port}"
        run_as = getpass.getuser() if os.geteuid() == 0 else None  # root would drop to "mosquitto"
        self.devices = prov.provision(
            self.dir, hall, prov.parse_tables(tables) if tables else [], stations, port=self.port, bind="127.0.0.1", run_as=run_as, url=self.url,
            tls=tls, tls_port=self.tls_port or prov.TLS_PORT, names=["127.0.0.1", "localhost"],
        )
        self.proc: subprocess.Popen | None = None
        self.log_path = self.dir / "mosquitto.log"

    @classmethod
    def attach(cls, directory: Path, hall: str, port: int) -> "Broker":
        """A hall provisioned and run by the command line (`rackside hall provision`, `rackside hall
        broker`), not by this class: its credentials files give `client()` and `Recorder` their logins."""
        from rackside.hall.net.config import load_credentials

        b = cls.__new__(cls)
        b.dir, b.hall, b.port, b.tls_port, b.proc = Path(directory), hall, port, None, None
        b.url = f"mqtt://127.0.0.1:{port}"
        b.log_path = b.dir / "mosquitto.log"
        b.devices = {}
        for f in (b.dir / "credentials").glob("*.toml"):
            c = load_credentials(f)
            b.devices[c.user] = prov.Device(c.user, "", "", c.password, c.client_id or "")
        return b

    def credentials(self, user: str) -> Path:
        return self.dir / "credentials" / f"{user}.toml"

    def password(self, user: str) -> str:
        return self.devices[user].password

    # --- life cycle -----------------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> "Broker":
        if self.proc is not None and self.proc.poll() is None:
            return self
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.dir / "mosquitto.conf")], stdout=log, stderr=log)
        log.close()
        if self not in _started:
            _started.append(self)
        wait_listening(self.proc, self.port, "mosquitto", self.log_path, timeout, poll=0.02)
        return self

    def stop(self) -> None:
        """A clean stop (SIGTERM): the broker saves its persistence file."""
        end_process(self.proc)
        self.proc = None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # --- clients --------------------------------------------------------------------------------

    def client(self, user: str | None, *, password: str | None = None, client_id: str = "", timeout: float = 5.0,
               connect: bool = True, persistent: bool = False, will: tuple[str, bytes] | None = None):
        """A paho client logged in as `user` (None: anonymous), its network loop running (paho
        reconnects it by itself). `persistent`: a session the broker keeps (and persists) while the
        client is away, so it misses nothing across a broker restart (needs a `client_id`).
        A table or station connects with its own client id (provisioning's, `devices[user].client_id`)
        unless told otherwise (the broker binds each device to it). `will`: (topic, payload), its Last
        Will, retained (as hall.net.link sets a device's "offline"). Raises ConnectionRefusedError with the broker's reason when the login is refused."""
        import paho.mqtt.client as mqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        if not client_id and user in self.devices:
            client_id = self.devices[user].client_id
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        if user is not None:
            c.username_pw_set(user, password if password is not None else self.password(user))
        if will is not None:
            c.will_set(will[0], will[1], qos=1, retain=True)
        if not connect:
            return c
        done = threading.Event()
        result: dict = {}

        def on_connect(client, userdata, flags, reason_code, properties):
            result["rc"] = reason_code
            done.set()

        c.on_connect = on_connect
        c.reconnect_delay_set(0.2, 1)
        if persistent:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = 3600
            c.connect("127.0.0.1", self.port, clean_start=False, properties=props)
        else:
            c.connect("127.0.0.1", self.port)
        c.loop_start()
        if not done.wait(timeout):
            c.loop_stop()
            raise TimeoutError("no CONNACK")
        if result["rc"].is_failure:
            c.loop_stop()
            c.disconnect()
            raise ConnectionRefusedError(str(result["rc"]))
        c.on_connect = None
        return c


class Recorder:
    """Everything the broker delivers to `user` on `topic_filter` (the director, the whole hall, by
    default), in arrival order: `messages` is a list of (topic, payload bytes, retained)."""

    def __init__(self, broker: Broker, topic_filter: str | None = None, user: str = "director", *, client_id: str = "") -> None:
        """With a `client_id`, the recorder's session is persistent: it survives a broker restart."""
        self.messages: list[tuple[str, bytes, bool]] = []
        self.cond = threading.Condition()
        subscribed = threading.Event()
        self.client = broker.client(user, client_id=client_id, persistent=bool(client_id))
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.on_connect = None
        self.client.subscribe(topic_filter or f"rackside/v1/{broker.hall}/#", qos=1)
        if not subscribed.wait(5):
            raise TimeoutError("no SUBACK")

    def _on_message(self, client, userdata, msg) -> None:
        with self.cond:
            self.messages.append((msg.topic, msg.payload, bool(msg.retain)))
            self.cond.notify_all()

    def json(self, leaf: str) -> list[dict]:
        """The JSON payloads of every message whose topic ends with /`leaf`."""
        import json

        with self.cond:
            return [json.loads(p) for t, p, _ in self.messages if t.endswith("/" + leaf)]

    def wait_for(self, predicate, timeout: float = 10.0):
        """Wait until predicate(self) is truthy; returns its value (raises TimeoutError)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                value = predicate(self)
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"waited {timeout} s; got {len(self.messages)} message(s)")
                self.cond.wait(min(left, 0.2))

    def ping(self) -> None:
        """Once this returns, the recorder has every message the broker routed to it before: round
        trips (`ping`) until one brings no new message, so none was held back behind the broker's
        in-flight window (each PUBACK paho sent before the round trip let the next one go first)."""
        while True:
            with self.cond:
                before = len(self.messages)
            ping(self.client)
            with self.cond:
                if len(self.messages) == before:
                    return

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


# Every broker a test started, stopped when the session ends whatever became of its fixture: a module
# fixture that fails after starting one never reaches its own stop(), and its mosquitto outlived the run.
_started: list[Broker] = []


def pytest_sessionfinish(session, exitstatus) -> None:
    while _started:
        _started.pop().stop()


def clear_retained(broker: Broker, passes: int = 5) -> None:
    """Delete every message retained under `broker`'s hall: as the director (who may publish to the
    whole hall, hall.director.dynsec), subscribe to it, take in what comes retained (`Recorder.ping`:
    all of it), and publish an empty retained message to each such topic (MQTT 5 3.3.1.3: that
    deletes it), each PUBACK awaited (the broker has deleted it by then). Repeated until a fresh
    subscription receives nothing retained; a RuntimeError naming the topics if something still
    publishes them after `passes` rounds (a device the test left running)."""
    left: list[str] = []
    for _ in range(passes):
        rec = Recorder(broker)
        try:
            rec.ping()
            with rec.cond:
                left = sorted({topic for topic, _, retained in rec.messages if retained})
            if not left:
                return
            for topic in left:
                rec.client.publish(topic, b"", qos=1, retain=True).wait_for_publish(10)
        finally:
            rec.close()
    raise RuntimeError(f"retained again after {passes} clearings (a device of the test still running?): {left}")


@pytest.fixture(scope="session")
def _session_hall_broker(tmp_path_factory):
    broker = Broker(tmp_path_factory.mktemp("hall-broker"))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def hall_broker(_session_hall_broker):
    """The session's broker, for one test: set up before any fixture of the test that uses it, so
    torn down after them (their clocks and consoles stopped), it then clears what the test left
    retained, whether the test passed or failed."""
    yield _session_hall_broker
    clear_retained(_session_hall_broker)


@pytest.fixture
def make_broker(tmp_path_factory):
    made: list[Broker] = []

    def make(**kwargs) -> Broker:
        broker = Broker(tmp_path_factory.mktemp("hall-broker"), **kwargs)
        made.append(broker)
        return broker.start()

    yield make
    for broker in made:
        broker.stop()
