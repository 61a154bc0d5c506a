"""The bridge for trusted partners (hall.director.bridge): `rackside hall provision --bridge FILE`,
the hall's broker run by `rackside hall broker`, bridged over TLS to a SECOND real Mosquitto (the
partner's, with its own CA and a password login). Every kind of topic is published on the hall's side
with the login that publishes it in a hall; a subscriber to `#` on the partner's broker sees the
public ones (tables' states, results, statuses) and nothing else, and nothing comes back in."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from rackside.hall.director import bridge, tlsfiles
from rackside.hall.director.provision import hash_password
from rackside.hall.wire import topics
from support.broker import MOSQUITTO, Broker, Recorder, end_process, free_port, ping, wait_listening
from support.wait import wait

HALL = "bridgehall"
PARTNER_USER, PARTNER_PASSWORD = "open2026-feed", "s3cret-partner-pw"
WATCHER, WATCHER_PASSWORD = "viewer", "viewer-pw"


class Partner:
    """The partner's internet broker: Mosquitto with a TLS listener (a CA of its own, not the hall's)
    and a plain loopback one for the test's watcher, both refusing anonymous clients."""

    def __init__(self, folder: Path) -> None:
        self.dir = folder
        folder.mkdir(parents=True, exist_ok=True)
        tlsfiles.make(folder / "tls", "partner", ["127.0.0.1", "localhost"])
        self.tls_port, self.port = free_port(), free_port()
        (folder / "passwords").write_text(f"{PARTNER_USER}:{hash_password(PARTNER_PASSWORD)}\n"
                                          f"{WATCHER}:{hash_password(WATCHER_PASSWORD)}\n")
        os.chmod(folder / "passwords", 0o600)
        (folder / "mosquitto.conf").write_text("\n".join([
            *([f"user {getpass.getuser()}"] if os.geteuid() == 0 else []),  # root would drop to "mosquitto"
            "per_listener_settings false", "allow_anonymous false", f"password_file {folder / 'passwords'}",
            "log_dest stderr", "log_type all", "connection_messages true",
            f"listener {self.tls_port} 127.0.0.1", f"cafile {folder / 'tls' / 'ca.crt'}",
            f"certfile {folder / 'tls' / 'server.crt'}", f"keyfile {folder / 'tls' / 'server.key'}",
            f"listener {self.port} 127.0.0.1", ""]))
        self.log = folder / "mosquitto.log"
        self.proc = None

    def start(self) -> "Partner":
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.dir / "mosquitto.conf")], stdout=log, stderr=log)
        wait_listening(self.proc, self.port, "partner mosquitto", self.log, 10, 0.02)
        return self

    def stop(self) -> None:
        end_process(self.proc)

    def watcher(self) -> "Watch":
        return Watch(self)


class Watch:
    """A client of the partner's broker subscribed to `#`: everything it holds and everything that comes."""

    def __init__(self, partner: Partner) -> None:
        self.messages: list[tuple[str, bytes, bool]] = []
        self.lock = threading.Lock()
        subscribed, connected = threading.Event(), threading.Event()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        c.username_pw_set(WATCHER, WATCHER_PASSWORD)
        c.on_connect = lambda *a: connected.set()
        c.on_subscribe = lambda *a: subscribed.set()
        c.on_message = self._on_message
        c.connect("127.0.0.1", partner.port)
        c.loop_start()
        assert connected.wait(10)
        c.subscribe("#", qos=1)
        assert subscribed.wait(10)
        self.client = c

    def _on_message(self, client, userdata, msg) -> None:
        with self.lock:
            self.messages.append((msg.topic, msg.payload, bool(msg.retain)))

    def topics(self) -> set[str]:
        with self.lock:
            return {t for t, _, _ in self.messages}

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def bridge_file(folder: Path, partner: Partner, **extra: str) -> Path:
    lines = ["[bridge]", f'url = "mqtts://127.0.0.1:{partner.tls_port}"', f'ca_file = "{partner.dir / "tls" / "ca.crt"}"',
             f'user = "{PARTNER_USER}"', f'password = "{PARTNER_PASSWORD}"', *(f'{k} = "{v}"' for k, v in extra.items())]
    path = folder / "partner.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def provision_cli(out: Path, *args: str) -> subprocess.CompletedProcess:
    run_as = ["--run-as", getpass.getuser()] if os.geteuid() == 0 else []
    return subprocess.run([sys.executable, "-m", "rackside", "hall", "provision", "--hall", HALL, "--out", str(out),
                           "--tables", "1-4", "--stations", "1", "--no-tls", "--bind", "127.0.0.1", *run_as, *args],
                          capture_output=True, text=True, timeout=120)


class HallBroker:
    """`rackside hall broker --config DIR` running; `broker` gives the provisioned logins' clients."""

    def __init__(self, out: Path, port: int) -> None:
        self.log = out / "broker-command.log"
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "broker", "--config", str(out), "--no-mdns"],
                                         stdout=log, stderr=log)
        wait_listening(self.proc, port, "rackside hall broker", self.log, 30, 0.05)
        self.broker = Broker.attach(out, HALL, port)

    def stop(self) -> None:
        end_process(self.proc)


@pytest.fixture
def bridged(tmp_path):
    partner = Partner(tmp_path / "partner").start()
    port = free_port()
    out = tmp_path / "hall"
    r = provision_cli(out, "--port", str(port), "--bridge", str(bridge_file(tmp_path, partner)))
    assert r.returncode == 0, r.stderr
    assert f"bridge:        the public topics out to 127.0.0.1:{partner.tls_port} over TLS" in r.stdout
    hall = HallBroker(out, port)
    yield hall, partner, out
    hall.stop()
    partner.stop()


def publish(client, topic: str, payload: dict | str, *, retain: bool = False) -> None:
    """QoS 1, waiting for the broker's PUBACK: once it returns, the broker has routed the message."""
    body = payload if isinstance(payload, str) else json.dumps(payload)
    info = client.publish(topic, body, qos=1, retain=retain)
    info.wait_for_publish(10)
    assert info.rc == mqtt.MQTT_ERR_SUCCESS and info.is_published(), (topic, info.rc)


def every_topic(b: Broker) -> tuple[dict[str, str], dict[str, str]]:
    """Publish every kind of topic of the tree as the hall's own logins do; returns (public, private):
    topic -> the marker its payload carries."""
    public, private = {}, {}
    table = b.client("table-3")
    station = b.client("station-1")
    director = b.client("director")
    secret = tomllib.loads((b.dir / "join.toml").read_text())["secret"]  # the join login's password: the join file's
    joiner = b.client("join", password=secret, client_id="enrol-abc123")
    try:
        def send(client, topic: str, *, retain: bool, public_topic: bool) -> None:
            marker = f"marker-{len(public) + len(private)}-{topic.rsplit('/', 1)[-1]}"
            (public if public_topic else private)[topic] = marker
            publish(client, topic, {"marker": marker, "seq": 1}, retain=retain)

        for leaf in topics.TABLE_WRITES:
            # Said here on its own, not read from topics.PUBLIC_TABLE_TOPICS: a private leaf added
            # there by mistake (an event, an ack) must fail this test, not move its expectation.
            public_leaf = leaf in ("status", "state", "result")
            send(table, topics.table(HALL, 3, leaf), retain=public_leaf, public_topic=public_leaf)
        send(director, topics.table(HALL, 3, "cmd"), retain=False, public_topic=False)
        for leaf in topics.STATION_TOPICS:
            send(station, topics.station(HALL, "1", leaf), retain=leaf == "status", public_topic=False)
        send(joiner, topics.enrol_hello(HALL, "abc123"), retain=True, public_topic=False)
        send(director, topics.enrol_reply(HALL, "abc123"), retain=True, public_topic=False)
    finally:
        for c in (table, station, director, joiner):
            c.disconnect()
            c.loop_stop()
    return public, private


def test_only_the_public_topics_cross_to_the_partner_and_nothing_comes_back(bridged):
    hall, partner, out = bridged
    b = hall.broker
    watch = partner.watcher()
    # The bridge is up when a first public message crosses (it connects on its own, with TLS and its login).
    table4 = b.client("table-4")
    publish(table4, topics.table(HALL, 4, "state"), {"marker": "bridge-up"}, retain=True)
    wait(lambda: topics.table(HALL, 4, "state") in watch.topics(), 30)

    public, private = every_topic(b)
    # The barrier: a public message published after every private one. The hall's broker hands the
    # bridge its messages in order, so once this one is on the partner's side, anything private would be too.
    publish(table4, topics.table(HALL, 4, "result"), {"marker": "last"}, retain=True)
    wait(lambda: topics.table(HALL, 4, "result") in watch.topics(), 30)
    ping(watch.client)

    seen = watch.topics()
    assert set(public) <= seen, sorted(set(public) - seen)
    assert seen == set(public) | {topics.table(HALL, 4, "state"), topics.table(HALL, 4, "result")}
    with watch.lock:
        bodies = b"\n".join(p for _, p, _ in watch.messages)
    for topic, marker in private.items():  # by value too: no private payload under any name
        assert marker.encode() not in bodies, topic
    watch.close()

    # A partner's client that connects later gets the tables' retained state, result and status.
    late = partner.watcher()
    wait(lambda: set(public) <= late.topics(), 30)
    with late.lock:
        assert all(retained for _, _, retained in late.messages)
    late.close()

    # Nothing from the internet reaches the hall: a forged command and a forged state on the
    # partner's broker, and the hall's director sees neither.
    director = Recorder(b, f"{topics.hall_root(HALL)}/#")
    forger = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    forger.username_pw_set(PARTNER_USER, PARTNER_PASSWORD)
    forger.connect("127.0.0.1", partner.port)
    forger.loop_start()
    try:
        director.wait_for(lambda r: len(r.messages) >= 1)  # the retained ones, first
        director.ping()
        before = len(director.messages)
        publish(forger, topics.table(HALL, 3, "cmd"), {"id": "forged", "command": "adjust"})
        publish(forger, topics.table(HALL, 3, "state"), {"marker": "forged"}, retain=True)
        # A bridge would carry them from the partner's broker before it answered the forger; a
        # last public message through the hall and back from the partner's side closes the window.
        publish(table4, topics.table(HALL, 4, "state"), {"marker": "after-forgery"}, retain=True)
        director.wait_for(lambda r: any(b"after-forgery" in p for _, p, _ in r.messages))
        director.ping()
        assert not any(b"forged" in p for _, p, _ in director.messages[before:])
    finally:
        forger.disconnect()
        forger.loop_stop()
        director.close()
        table4.disconnect()
        table4.loop_stop()
    # And by construction: every topic the hall's broker bridges goes out only.
    conf = (out / "mosquitto.conf").read_text()
    lines = [line.split() for line in conf.splitlines() if line.startswith("topic ")]
    assert [line[1] for line in lines] == bridge.public_topics(HALL) and {line[2] for line in lines} == {"out"}
    assert os.stat(out / "mosquitto.conf").st_mode & 0o077 == 0  # it holds the partner's password


def test_a_prefix_puts_the_hall_under_the_partners_topic_of_choice(tmp_path):
    partner = Partner(tmp_path / "partner").start()
    port = free_port()
    out = tmp_path / "hall"
    r = provision_cli(out, "--port", str(port), "--bridge", str(bridge_file(tmp_path, partner, prefix="feeds/open2026/")))
    assert r.returncode == 0, r.stderr
    hall = HallBroker(out, port)
    watch = partner.watcher()
    try:
        table = hall.broker.client("table-2")
        publish(table, topics.table(HALL, 2, "state"), {"marker": "prefixed"}, retain=True)
        wait(lambda: watch.topics(), 30)
        assert watch.topics() == {"feeds/open2026/" + topics.table(HALL, 2, "state")}
        table.disconnect()
        table.loop_stop()
    finally:
        watch.close()
        hall.stop()
        partner.stop()


@pytest.mark.parametrize("body, line", [
    ('url = "mqtt://partner.example:1883"', "[bridge] url = 'mqtt://partner.example:1883': allowed is the partner's broker as mqtts://HOST[:PORT] (TLS only; port 8883 by default)"),
    ('url = "mqtts://partner.example"\nuser = "a b"\npassword = "x"', "[bridge] user = 'a b': allowed is 1 to 256 printable characters, without spaces or quotes"),
    ('url = "mqtts://partner.example"\nuser = "a"', "[bridge] user and password go together: both, or neither"),
    ('url = "mqtts://partner.example"\nca_file = "missing.crt"', "[bridge] ca_file = 'missing.crt': allowed is the path of a file (relative to the bridge file), which must exist"),
    ('url = "mqtts://partner.example"\nprefix = "feeds/#"', "[bridge] prefix = 'feeds/#': allowed is \"\" or topic levels of letters, digits, \".\", \"_\", \"-\" ending in \"/\", e.g. \"broadcast/\""),
    ('url = "mqtts://partner.example"\ntopics = "#"', "[bridge] has unknown key 'topics': allowed keys are url, ca_file, user, password, certfile, keyfile, client_id, prefix"),
    ('address = "x"', "[bridge] has unknown key 'address': allowed keys are url, ca_file, user, password, certfile, keyfile, client_id, prefix"),
])
def test_a_bad_bridge_file_is_one_line_and_nothing_is_written(tmp_path, body, line):
    path = tmp_path / "partner.toml"
    path.write_text("[bridge]\n" + body + "\n")
    out = tmp_path / "hall"
    r = provision_cli(out, "--bridge", str(path))
    assert (r.returncode, r.stderr) == (2, f"rackside hall provision: --bridge {path}: {line}\n")
    assert not out.exists()


def test_a_missing_bridge_file_is_one_line(tmp_path):
    r = provision_cli(tmp_path / "hall", "--bridge", str(tmp_path / "nope.toml"))
    assert (r.returncode, r.stderr) == (2, f"rackside hall provision: --bridge {tmp_path / 'nope.toml'}: no such file\n")


def test_the_bridge_refuses_a_partner_whose_certificate_its_ca_did_not_sign(tmp_path):
    partner = Partner(tmp_path / "partner").start()
    impostor_ca = tmp_path / "other"
    tlsfiles.make(impostor_ca, "someone-else", ["127.0.0.1"])  # a CA that never signed the partner's certificate
    port = free_port()
    out = tmp_path / "hall"
    path = bridge_file(tmp_path, partner)
    path.write_text(path.read_text().replace(str(partner.dir / "tls" / "ca.crt"), str(impostor_ca / "ca.crt")))
    assert provision_cli(out, "--port", str(port), "--bridge", str(path)).returncode == 0
    hall = HallBroker(out, port)
    try:
        wait(lambda: "certificate verify failed" in hall.log.read_text(), 30)  # Mosquitto's own words (OpenSSL's)
        assert "New bridge connected" not in partner.log.read_text()
    finally:
        hall.stop()
        partner.stop()


def test_what_the_tables_publish_while_the_internet_is_down_crosses_when_it_is_back(bridged):
    hall, partner, out = bridged
    table = hall.broker.client("table-3")
    watch = partner.watcher()
    try:
        publish(table, topics.table(HALL, 3, "state"), {"marker": "before"}, retain=True)
        wait(lambda: topics.table(HALL, 3, "state") in watch.topics(), 30)
        watch.close()
        partner.stop()
        publish(table, topics.table(HALL, 3, "result"), {"marker": "result-while-down"}, retain=True)
        partner.start()  # the same ports, nothing kept: the result can only come from the hall's queue
        watch = partner.watcher()
        wait(lambda: topics.table(HALL, 3, "result") in watch.topics(), 60)  # the bridge retries every 5 s or more
        with watch.lock:  # QoS 1 is at least once: the partner may get it more than once, never another
            assert {json.loads(p)["marker"] for t, p, _ in watch.messages if t.endswith("/result")} == {"result-while-down"}
    finally:
        watch.close()
        table.disconnect()
        table.loop_stop()
