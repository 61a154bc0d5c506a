"""Enrolment against the real broker with its dynamic-security plugin, over real TLS (issue 19):
the join secret can only enrol; a device is assigned a table and logs in as it with its own secret;
a table held by an online device is refused unless replaced; a revoked device is refused."""

from __future__ import annotations

import queue
import socket
import ssl
import threading

import paho.mqtt.client as mqtt
import pytest

from rackside.hall.device import joinfile
from rackside.hall.wire import join, topics
from rackside.hall.device.enrol import Enrolment
from rackside.hall.director.fleet import Fleet, FleetError

from support.broker import Recorder, ping
from support.wait import until


@pytest.fixture
def hall(make_broker):
    return make_broker(tables="", stations=0, tls=True)


_CLIENTS: list = []  # every tls_client of the test running: stopped when it ends (stop_tls_clients)


@pytest.fixture(autouse=True)
def stop_tls_clients():
    """A refused client's loop keeps reconnecting for the rest of the session unless stopped (its
    thread then tripped a later test that forbids time.sleep in its process)."""
    yield
    while _CLIENTS:
        c = _CLIENTS.pop()
        c.disconnect()
        c.loop_stop()


def tls_client(broker, user, password, client_id, *, port=None, ca=None):
    """A paho client over TLS pinning the hall's CA; (client, reason code or None on timeout)."""
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    _CLIENTS.append(c)
    c.username_pw_set(user, password)
    c.tls_set(ca_certs=str(ca or broker.dir / "tls" / "ca.crt"), tls_version=ssl.PROTOCOL_TLS_CLIENT)
    got = queue.Queue()
    c.on_connect = lambda cl, u, f, rc, p: got.put(rc)
    c.connect("127.0.0.1", port or broker.tls_port)
    c.loop_start()
    try:
        rc = got.get(timeout=5)
    except queue.Empty:
        rc = None
    return c, rc


def stop(*clients):
    for c in clients:
        c.disconnect()
        c.loop_stop()


class Device:
    """A simulated device's enrolment: what its `on_change` reported, in order."""

    def __init__(self, broker, tmp_path, name, kind="clock"):
        self.changes: queue.Queue = queue.Queue()
        jf = joinfile.load(broker.dir / "join.toml")
        self.enrolment = Enrolment(jf, tmp_path / name, kind, device=name, version="test",
                                   on_change=lambda user, cfg: self.changes.put((user, cfg)))
        self.enrolment.start()

    def next_change(self, timeout=10):
        return self.changes.get(timeout=timeout)


def director_fleet(broker):
    c = broker.client("director")
    return c, Fleet(broker.hall, c)


def row(fleet, name):
    """The listed row of the device with id `name` (None: not listed)."""
    return next((r for r in fleet.rows() if r["device"] == name), None)


def listed(fleet, *names):
    return lambda f: all(row(fleet, n) for n in names)


def test_the_join_secret_can_only_enrol(hall):
    secret = joinfile.load(hall.dir / "join.toml").secret
    h = hall.hall
    watcher = Recorder(hall)  # the whole hall, subscribed before anything is sent
    joiner, rc = tls_client(hall, "join", secret, "enrol-probe")
    assert rc is not None and not rc.is_failure
    codes = []
    done = threading.Event()
    joiner.on_subscribe = lambda c, u, mid, rcs, p: (codes.extend(rcs), done.set())
    joiner.subscribe([("#", 1), (f"rackside/v1/{h}/#", 1), (topics.enrol_hello(h, "+"), 1), (topics.table(h, 1, "cmd"), 1)])
    assert done.wait(5)
    assert all(c.is_failure for c in codes), codes
    for topic in (topics.table(h, 1, "event"), topics.table(h, 1, "status"), topics.station(h, "1", "challenge"),
                  f"rackside/v1/{h}/enrol/probe/reply", "$CONTROL/dynamic-security/v1"):
        joiner.publish(topic, b'{"forged": true}', qos=1).wait_for_publish(5)
    joiner.publish(topics.enrol_hello(h, "probe"), b"{}", qos=1).wait_for_publish(5)
    watcher.ping()  # each was routed before its PUBACK: whatever got through has now arrived
    assert [t for t, _, _ in watcher.messages] == [topics.enrol_hello(h, "probe")]  # only the hello got through
    watcher.client.publish(topics.enrol_hello(h, "probe"), b"", qos=1, retain=True).wait_for_publish(5)
    watcher.close()
    stop(joiner)


def test_a_device_is_numbered_and_logs_in_as_its_table_with_its_own_secret(hall, tmp_path):
    director, fleet = director_fleet(hall)
    a, b = Device(hall, tmp_path, "dev-a"), Device(hall, tmp_path, "dev-b")
    assert fleet.wait(listed(fleet, "dev-a", "dev-b"), 10)
    rows = {r["device"]: r for r in fleet.rows()}
    assert rows["dev-a"]["code"] == a.enrolment.code and rows["dev-a"]["state"] == "waiting"
    assert rows["dev-a"]["address"] == "127.0.0.1" and rows["dev-a"]["kind"] == "clock"
    assert rows["dev-a"]["key"] == a.enrolment.kid and not rows["dev-a"]["clash"]
    assert fleet.assign(a.enrolment.code, 12) == "table-12"  # the code read off the device
    user, cfg = a.next_change()
    assert user == "table-12" and cfg.table == 12 and cfg.endpoint.tls
    creds = tmp_path / "dev-a" / "hall-credentials.toml"
    assert creds.stat().st_mode & 0o777 == 0o600
    a_id = cfg.credentials.client_id
    assert a_id.startswith("table-12-") and len(a_id) > len("table-12-") + 8  # a tail nobody else can name
    t12, rc = tls_client(hall, "table-12", cfg.credentials.password, a_id)
    assert not rc.is_failure
    # with another client id the login is refused, even table 12's own name
    _, rc = tls_client(hall, "table-12", cfg.credentials.password, "table-12")
    assert rc is not None and rc.is_failure
    t12.publish(topics.table(hall.hall, 12, "status"), b"online", qos=1, retain=True).wait_for_publish(5)
    assert fleet.wait(lambda f: f.online.get("table-12"), 5)
    with pytest.raises(FleetError, match="held by device dev-a, online"):
        fleet.assign(b.enrolment.code, 12)
    dropped = threading.Event()
    t12.on_disconnect = lambda *x: dropped.set()
    assert fleet.assign(b.enrolment.code, 12, replace=True) == "table-12"
    assert dropped.wait(5), "the replaced device stayed connected"
    assert a.next_change() == (None, None)  # told it was replaced: waiting again
    _, rc = tls_client(hall, "table-12", cfg.credentials.password, a_id)
    assert rc is not None and rc.is_failure  # the old device is refused
    user, cfg_b = b.next_change()
    assert user == "table-12"
    tb, rc = tls_client(hall, "table-12", cfg_b.credentials.password, cfg_b.credentials.client_id)
    assert not rc.is_failure
    # renumbered: its old login goes, its new one works
    assert fleet.assign(b.enrolment.code, 14) == "table-14"
    user, cfg_14 = b.next_change()
    assert user == "table-14"
    _, rc = tls_client(hall, "table-12", cfg_b.credentials.password, cfg_b.credentials.client_id)
    assert rc is not None and rc.is_failure
    t14, rc = tls_client(hall, "table-14", cfg_14.credentials.password, cfg_14.credentials.client_id)
    assert not rc.is_failure
    fleet.revoke(b.enrolment.code)
    assert b.next_change() == (None, None)
    _, rc = tls_client(hall, "table-14", cfg_14.credentials.password, cfg_14.credentials.client_id)
    assert rc is not None and rc.is_failure
    a.enrolment.close()
    b.enrolment.close()
    stop(tb, t14, director)


def test_a_hello_whose_code_or_key_is_not_its_topics_is_not_listed(hall, tmp_path):
    """A hello on a real device's topic with another key, or with a code its key does not give:
    refused; the real one stays."""
    director, fleet = director_fleet(hall)
    dev = Device(hall, tmp_path, "dev-c")
    assert fleet.wait(listed(fleet, "dev-c"), 10)
    secret = joinfile.load(hall.dir / "join.toml").secret
    forger, _ = tls_client(hall, "join", secret, "enrol-forger")
    other = join.hello_payload("dev-c", "clock", b"F" * 294, version="x", address=None)
    wrong_code = join.hello_payload("dev-c", "clock", dev.enrolment.public, version="x", address=None).replace(b'"code":"', b'"code":"9')
    for forged in (other, wrong_code):
        forger.publish(dev.enrolment.hello_topic, forged, qos=1, retain=True).wait_for_publish(5)
    ping(director)  # routed to the fleet before its PUBACK: the fleet has now read it
    assert fleet.roster.devices[dev.enrolment.kid].hello.key == dev.enrolment.public
    assert [r["device"] for r in fleet.rows()] == ["dev-c"]
    dev.enrolment.close()
    stop(forger, director)


def listening_addresses(port: int) -> set[str]:
    """The local addresses a socket listens on at `port` (the kernel's own table, /proc/net/tcp[6])."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hexport = local.split(":")
            if state == "0A" and int(hexport, 16) == port:  # 0A: LISTEN
                raw = bytes.fromhex(address)
                if len(raw) == 4:
                    found.add(socket.inet_ntop(socket.AF_INET, raw[::-1]))
                else:
                    found.add(socket.inet_ntop(socket.AF_INET6, b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))))
    return found


def test_plain_mqtt_only_on_127_0_0_1(hall):
    conf = (hall.dir / "mosquitto.conf").read_text()
    assert f"\nlistener {hall.port} 127.0.0.1\n" in conf
    assert listening_addresses(hall.port) == {"127.0.0.1"}
    assert listening_addresses(hall.tls_port) == {"127.0.0.1"}  # the tests' TLS listener is bound to loopback too


def test_a_hall_provisioned_for_the_network_takes_plain_mqtt_only_on_127_0_0_1(tmp_path):
    """As a director provisions it (no --bind): TLS on every address, plain MQTT on loopback only."""
    import getpass
    import os
    import subprocess

    from support.broker import MOSQUITTO, free_port

    from rackside.hall.director import provision

    port, tls_port = free_port(), free_port()
    provision.provision(tmp_path / "h", "net", [], 0, port=port, tls_port=tls_port, names=["127.0.0.1"],
                        run_as=getpass.getuser() if os.geteuid() == 0 else None)
    proc = subprocess.Popen([MOSQUITTO, "-c", str(tmp_path / "h" / "mosquitto.conf")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        until(lambda: listening_addresses(port) and listening_addresses(tls_port), 10)
        assert listening_addresses(port) == {"127.0.0.1"}
        assert listening_addresses(tls_port) - {"0.0.0.0", "::"} == set() and listening_addresses(tls_port)
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_broker_with_another_ca_is_refused(hall, tmp_path):
    """The device pins the hall's CA: a certificate from any other CA fails the handshake."""
    other = tmp_path / "other"
    from rackside.hall.director import tlsfiles

    tlsfiles.make(other, "elsewhere", ["127.0.0.1"])
    secret = joinfile.load(hall.dir / "join.toml").secret
    with pytest.raises(ssl.SSLError):
        tls_client(hall, "join", secret, "enrol-x", ca=other / "ca.crt")


def test_rackside_hall_devices_lists_assigns_and_revokes(hall, tmp_path, capsys):
    from rackside.cli import main

    creds = str(hall.credentials("director"))
    url = f"mqtt://127.0.0.1:{hall.port}"
    dev = Device(hall, tmp_path, "dev-cli", kind="station")
    director, fleet = director_fleet(hall)
    assert fleet.wait(listed(fleet, "dev-cli"), 10)
    stop(director)
    shown = join.code_text(dev.enrolment.code)  # as the station's screen shows it
    assert main(["hall", "devices", "--credentials", creds, "--url", url]) == 0
    out = capsys.readouterr().out.splitlines()
    line = next(x for x in out if " dev-cli " in x)
    assert line.startswith(shown) and "station" in line and "waiting" in line and dev.enrolment.kid in line
    assert main(["hall", "devices", "--credentials", creds, "--url", url, "assign", shown, "2"]) == 0
    assert f"the device showing {shown} is station 2" in capsys.readouterr().out
    user, cfg = dev.next_change()
    assert user == "station-2" and cfg.ident == "2"
    assert main(["hall", "devices", "--credentials", creds, "--url", url, "assign", "0000 0000 0000", "3"]) == 1
    assert "no device shows code 0000 0000 0000" in capsys.readouterr().err
    assert main(["hall", "devices", "--credentials", creds, "--url", url, "assign", "dev-cli", "3"]) == 1
    assert "allowed are the 12 digits the device shows" in capsys.readouterr().err  # a device id is not a code
    assert main(["hall", "devices", "--credentials", creds, "--url", url, "revoke", shown]) == 0
    assert dev.next_change() == (None, None)
    assert main(["hall", "devices", "--credentials", creds, "--url", url, "remove", dev.enrolment.kid]) == 0
    assert "removed" in capsys.readouterr().out
    assert main(["hall", "devices", "--credentials", creds, "--url", url, "remove-waiting"]) == 0
    assert "waiting device(s) removed" in capsys.readouterr().out
    dev.enrolment.close()


def test_a_station_joins_with_the_join_file_and_publishes_as_the_id_it_is_given(hall, tmp_path):
    """`rackside hall station` with `[hall] join`: it prints its code, waits, and once the director
    gives it station 2 publishes the station's challenges as station 2."""
    import json
    import os
    import subprocess
    import sys

    from support.broker import Recorder

    log = tmp_path / "challenges.jsonl"
    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[log]\npath = "{log}"\n\n[hall]\njoin = "{hall.dir / "join.toml"}"\n')
    rec = Recorder(hall)
    director, fleet = director_fleet(hall)
    proc = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "station", "--config", str(cfg), "--device-id", "st-9"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "state")})
    try:
        first = proc.stdout.readline()
        assert "device st-9, code" in first and "waiting for a station id" in first
        assert fleet.wait(listed(fleet, "st-9"), 10)
        code = row(fleet, "st-9")["code"]
        assert join.code_text(code) in first and row(fleet, "st-9")["kind"] == "station"
        from rackside.kiosk import hall_status

        status = tmp_path / "state" / hall_status.FILE_NAME  # what the kiosk's idle screen shows
        assert hall_status.notice(status) == f"Hall: code {join.code_text(code)} · waiting for a station id"
        fleet.assign(code, "2")
        assert "this is station 2" in proc.stdout.readline()
        assert hall_status.notice(status) == "Hall: station 2"
        record = {"v": 1, "id": "station-2-20261201-101500-abcdef", "time": "2026-12-01T10:15:00+00:00", "station": "station-2",
                  "table": "3", "kind": "self", "lexicon_name": "ENABLE", "lexicon_sha256": "ab" * 32,
                  "words": ["QI"], "verdict": "ACCEPTABLE", "acceptable": True, "per_word": [True]}
        log.write_text(json.dumps(record) + "\n")
        topic = topics.station(hall.hall, "2", "challenge")
        got = rec.wait_for(lambda r: [json.loads(p) for t, p, _ in r.messages if t == topic])
        assert got[0]["id"] == record["id"] and got[0]["station"] == "2"
        proc.terminate()
        proc.wait(10)
        assert not status.exists()  # stopped: the screen no longer claims the hall
    finally:
        proc.terminate()
        proc.wait(10)
        rec.close()
        stop(director)


def test_a_reply_read_by_another_device_gives_nothing_to_log_in_with(hall, tmp_path):
    """No join client may subscribe to every reply or hello; and a reply read by its exact topic
    carries the login only sealed to its device's key."""
    secret = joinfile.load(hall.dir / "join.toml").secret
    snoop, rc = tls_client(hall, "join", secret, "enrol-snoop")
    got = []
    subscribed = threading.Event()
    snoop.on_message = lambda c, u, m: got.append((m.topic, m.payload))
    snoop.on_subscribe = lambda *a: subscribed.set()
    snoop.subscribe([(topics.enrol_reply(hall.hall, "+"), 1), (topics.enrol_hello(hall.hall, "+"), 1)])
    assert subscribed.wait(5)
    director, fleet = director_fleet(hall)
    dev = Device(hall, tmp_path, "dev-x")
    assert fleet.wait(listed(fleet, "dev-x"), 10)
    fleet.assign(dev.enrolment.code, 7)
    user, cfg = dev.next_change()
    ping(snoop)  # the hello and the reply were routed to every subscriber before that
    assert got == []  # neither replies nor hellos by wildcard
    reply = subscribe_once(hall, secret, dev.enrolment.reply_topic)
    assert reply and cfg.credentials.password.encode() not in reply and cfg.credentials.client_id.encode() not in reply
    dev.enrolment.close()
    stop(snoop, director)


def subscribe_once(broker, secret, topic):
    """What a join client reads on `topic` by its exact name (a retained message), or None."""
    c, _ = tls_client(broker, "join", secret, "enrol-reader")
    got: queue.Queue = queue.Queue()
    c.on_message = lambda cl, u, m: got.put(m.payload)
    c.subscribe(topic, qos=1)
    try:
        return got.get(timeout=5)
    except queue.Empty:
        return None
    finally:
        stop(c)


def test_join_auto_is_the_config_folders_join_file_else_the_boot_partitions(tmp_path):
    from rackside.hall.net.config import HallConfigError

    config, boot = tmp_path / "etc", tmp_path / "boot" / "rackside-join.toml"
    config.mkdir()
    with pytest.raises(HallConfigError, match='hall.join = "auto": no join file in'):
        joinfile.resolve("auto", config, (boot,))
    boot.parent.mkdir()
    boot.write_text("x")
    assert joinfile.resolve("auto", config, (boot,)) == boot
    (config / "join.toml").write_text("x")
    assert joinfile.resolve("auto", config, (boot,)) == config / "join.toml"  # the config folder's first
    assert joinfile.resolve("hall/join.toml", config, (boot,)) == config / "hall/join.toml"
    with pytest.raises(HallConfigError, match="allowed are"):
        joinfile.resolve(3, config, (boot,))
