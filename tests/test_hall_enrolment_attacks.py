"""Issue 25, defects 1-4: what someone holding the hall's join file (it is on every device's SD
card) tried against enrolment, against the real broker with its dynamic-security plugin over real
TLS. Each was seen failing on the code before enrolment was bound to the device's key.

1. a forged hello under a real device's id took its table;
2. the 4-digit code was cheap to match, two rows with one code were not flagged, a made-up id
   sorted first;
3. an empty retained hello erased a device, 2,100 hellos hid every later device, the director could
   not delete hellos;
4. the join client could use any client id and so drop a table or the console.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import json
import os
import queue
import re
import secrets
import ssl
import threading

import paho.mqtt.client as mqtt
import pytest
from support.broker import Recorder
from support.wait import until, wait

from rackside.hall.device import joinfile
from rackside.hall.device.enrol import Enrolment
from rackside.hall.director.fleet import Fleet, FleetError
from rackside.hall.wire import join, schema, topics


@pytest.fixture
def hall(make_broker):
    return make_broker(tables="", stations=0, tls=True)


_CLIENTS: list = []  # every tls_login of the test running: stopped when it ends (stop_tls_logins)


@pytest.fixture(autouse=True)
def stop_tls_logins():
    """A refused login's loop keeps reconnecting for the rest of the session unless stopped."""
    yield
    while _CLIENTS:
        c = _CLIENTS.pop()
        c.disconnect()
        c.loop_stop()


def tls_login(broker, user, password, client_id):
    """A paho client over TLS pinning the hall's CA: (client, reason code, dropped event)."""
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    _CLIENTS.append(c)
    c.username_pw_set(user, password)
    c.tls_set(ca_certs=str(broker.dir / "tls" / "ca.crt"), tls_version=ssl.PROTOCOL_TLS_CLIENT)
    got: queue.Queue = queue.Queue()
    dropped = threading.Event()
    c.on_connect = lambda cl, u, f, rc, p: got.put(rc)
    c.on_disconnect = lambda *a: dropped.set()
    c.connect("127.0.0.1", broker.tls_port)
    c.loop_start()
    try:
        rc = got.get(timeout=5)
    except queue.Empty:
        rc = None
    return c, rc, dropped


def joiner(broker, client_id="enrol-forger"):
    c, rc, dropped = tls_login(broker, "join", joinfile.load(broker.dir / "join.toml").secret, client_id)
    assert rc is not None and not rc.is_failure
    return c, dropped


def stop(*clients):
    for c in clients:
        if c is not None:
            c.disconnect()
            c.loop_stop()


class Device:
    def __init__(self, broker, folder, name, kind="clock", **kw):
        self.changes: queue.Queue = queue.Queue()
        self.enrolment = Enrolment(joinfile.load(broker.dir / "join.toml"), folder / name, kind, device=name, version="test",
                                   on_change=lambda user, cfg: self.changes.put((user, cfg)), **kw)
        self.enrolment.start()

    def next_change(self, timeout=10):
        return self.changes.get(timeout=timeout)


def fleet_of(broker):
    c = broker.client("director")
    return c, Fleet(broker.hall, c)


def soon(predicate, timeout):
    """`predicate()` once truthy, else its last value after `timeout` s (polled every 50 ms: a
    listing of a thousand rows is not free)."""
    return until(predicate, timeout, poll=0.05)


def listed(fleet, name):
    return [r for r in fleet.rows() if r["device"] == name]


def forged_hello(device: str, kind: str = "clock") -> bytes:
    """A hello as a forger makes it: its own secret (the old format) and its own key bytes (the new)."""
    secret = secrets.token_urlsafe(32)
    key = secrets.token_bytes(294)
    digest = hashlib.sha256(device.encode() + b"\0" + secret.encode()).digest()
    old_code = f"{int.from_bytes(digest[:8], 'big') % 10_000:04d}"
    return json.dumps({"device": device, "kind": kind, "code": old_code, "secret": secret, "version": "x", "address": "",
                       "key": base64.b64encode(key).decode()}).encode(), secret


# --- 1. a forged hello under a real device's id ------------------------------------------------------


def test_a_forged_hello_under_a_real_devices_id_takes_nothing(hall, tmp_path):
    director, fleet = fleet_of(hall)
    dev = Device(hall, tmp_path, "pi-real")
    assert soon(lambda: listed(fleet, "pi-real"), 10)
    forger, _ = joiner(hall)
    payload, forged_secret = forged_hello("pi-real")
    # on the real device's own hello topic, and on the topic its id names
    for topic in {dev.enrolment.hello_topic, topics.enrol_hello(hall.hall, "pi-real")}:
        forger.publish(topic, payload, qos=1, retain=True).wait_for_publish(5)
    forger.publish(topics.enrol_hello(hall.hall, join.key_id(b"x" * 294)), payload, qos=1, retain=True).wait_for_publish(5)
    # the director assigns the code it reads off the real device
    assert fleet.assign(dev.enrolment.code, 5) == "table-5"
    user, cfg = dev.next_change()
    assert user == "table-5"
    t5, rc, _ = tls_login(hall, "table-5", cfg.credentials.password, cfg.credentials.client_id)
    assert rc is not None and not rc.is_failure  # the real device logs in as table 5
    stop(t5)
    for client_id in ("table-5", cfg.credentials.client_id):
        _, rc, _ = tls_login(hall, "table-5", forged_secret, client_id)
        assert rc is not None and rc.is_failure  # the forger cannot
    dev.enrolment.close()
    stop(forger, director)


def test_a_join_client_reads_no_other_devices_reply_and_a_reply_opens_only_with_its_key(hall, tmp_path):
    snoop, _ = joiner(hall, "enrol-snoop")
    codes, got = [], []
    done = threading.Event()
    snoop.on_subscribe = lambda c, u, mid, rcs, p: (codes.extend(rcs), done.set())
    snoop.on_message = lambda c, u, m: got.append((m.topic, m.payload))
    snoop.subscribe([(topics.enrol_reply(hall.hall, "+"), 1), (f"rackside/v1/{hall.hall}/enrol/#", 1)])
    assert done.wait(5)
    director, fleet = fleet_of(hall)
    dev = Device(hall, tmp_path, "pi-x")
    assert soon(lambda: listed(fleet, "pi-x"), 10)
    fleet.assign(dev.enrolment.code, 7)
    user, cfg = dev.next_change()
    # the reply, even read by its exact topic, carries the login only sealed to the device's key
    reader, _ = joiner(hall, "enrol-reader")
    box: list = []
    reader.on_message = lambda c, u, m: box.append(m.payload)
    reader.subscribe(dev.enrolment.reply_topic, qos=1)
    wait(lambda: box, 5)
    assert cfg.credentials.password.encode() not in box[0] and cfg.credentials.client_id.encode() not in box[0]
    assert all(c.is_failure for c in codes), codes  # no wildcard over the replies
    assert got == []
    dev.enrolment.close()
    stop(snoop, reader, director)


# --- 2. the code ------------------------------------------------------------------------------------


def test_matching_a_devices_code_by_brute_force_is_impractical(hall, tmp_path):
    """20,000 tries (the old 4-digit code fell in 1,922): no match; the code has at least 10^12 values."""
    dev = Device(hall, tmp_path, "pi-code")
    target = dev.enrolment.code
    assert len(target) >= 12 and target.isdigit()
    matched = next((i for i in range(20_000) if join.code(secrets.token_bytes(294)) == target), None)
    assert matched is None, f"matched in {matched} tries"
    dev.enrolment.close()


def test_two_devices_showing_one_code_are_both_flagged_and_neither_is_assigned(hall, tmp_path, monkeypatch):
    """Made cheap here (two digits) so that two keys share a code; the rows are then flagged."""
    director, fleet = fleet_of(hall)
    forger, _ = joiner(hall)
    monkeypatch.setattr(join, "CODE_DIGITS", 2)
    monkeypatch.setattr(join, "HELLO", join.HELLO.extended(code=schema.Text(2, least=2, pattern=re.compile(r"^[0-9]+$"))))
    dev = Device(hall, tmp_path, "pi-twin")
    assert soon(lambda: listed(fleet, "pi-twin"), 10)
    while True:  # a key whose (short) code is the device's
        key = secrets.token_bytes(294)
        if join.code(key) == dev.enrolment.code:
            break
    forger.publish(topics.enrol_hello(hall.hall, join.key_id(key)),
                   join.hello_payload("pi-fake", "clock", key, version="x", address=None), qos=1, retain=True).wait_for_publish(5)
    assert soon(lambda: len(fleet.rows()) == 2, 10)
    assert all(r["clash"] for r in fleet.rows())
    with pytest.raises(FleetError, match="2 devices show code"):
        fleet.assign(dev.enrolment.code, 3)
    fake = next(r for r in fleet.rows() if r["device"] == "pi-fake")
    fleet.remove(fake["key"])  # the director resolves it: the row not in front of them goes
    assert fleet.assign(dev.enrolment.code, 3) == "table-3"
    dev.enrolment.close()
    stop(forger, director)


def test_a_made_up_device_does_not_sort_ahead_of_the_real_one(hall, tmp_path):
    director, fleet = fleet_of(hall)
    dev = Device(hall, tmp_path, "pi-9")
    assert soon(lambda: listed(fleet, "pi-9"), 10)
    forger, _ = joiner(hall)
    key = secrets.token_bytes(294)
    forger.publish(topics.enrol_hello(hall.hall, join.key_id(key)), join.hello_payload("0-spare", "clock", key, version="x", address=None),
                   qos=1, retain=True).wait_for_publish(5)
    payload, _ = forged_hello("0-spare")
    forger.publish(topics.enrol_hello(hall.hall, "0-spare"), payload, qos=1, retain=True).wait_for_publish(5)
    assert soon(lambda: len(fleet.rows()) >= 2, 10)
    assert fleet.rows()[0]["device"] == "pi-9"
    dev.enrolment.close()
    stop(forger, director)


# --- 3. erasing and flooding -------------------------------------------------------------------------


def test_an_empty_retained_hello_erases_no_device(hall, tmp_path):
    director, fleet = fleet_of(hall)
    dev = Device(hall, tmp_path, "pi-e")
    assert soon(lambda: listed(fleet, "pi-e"), 10)
    forger, _ = joiner(hall)
    forger.publish(topics.enrol_hello(hall.hall, "pi-e"), b"", qos=1, retain=True).wait_for_publish(5)
    stop(director)
    director, fleet = fleet_of(hall)  # the console restarted: what the broker keeps
    assert soon(lambda: listed(fleet, "pi-e"), 5)
    # numbered, the device stays listed even were its own hello cleared
    fleet.assign(dev.enrolment.code, 4)
    dev.next_change()
    dev.enrolment.close()
    forger.publish(dev.enrolment.hello_topic, b"", qos=1, retain=True).wait_for_publish(5)
    stop(director)
    director, fleet = fleet_of(hall)
    assert soon(lambda: [r for r in listed(fleet, "pi-e") if r["table"] == 4], 5)
    stop(forger, director)


def test_a_hello_flood_hides_no_later_device_nor_one_seen_before(hall, tmp_path):
    director, fleet = fleet_of(hall)
    seen = Device(hall, tmp_path, "pi-seen")
    assert soon(lambda: listed(fleet, "pi-seen"), 10)
    fleet.assign(seen.enrolment.code, 1)
    seen.next_change()
    seen.enrolment.close()
    forger, _ = joiner(hall)
    infos = []
    for i in range(2100):
        key = secrets.token_bytes(294)
        infos.append(forger.publish(topics.enrol_hello(hall.hall, join.key_id(key)),
                                    join.hello_payload(f"flood-{i}", "clock", key, version="x", address=None), qos=1, retain=True))
        payload, _ = forged_hello(f"flood-{i}")
        infos.append(forger.publish(topics.enrol_hello(hall.hall, f"flood-{i}"), payload, qos=1, retain=True))
    for info in infos:
        info.wait_for_publish(30)
    later = Device(hall, tmp_path, "pi-later", hello_every=1)
    assert soon(lambda: listed(fleet, "pi-later"), 15), "a device saying hello after the flood is not listed"
    assert len(fleet.rows()) <= 1100  # bounded
    stop(director)
    director, fleet = fleet_of(hall)  # the console restarted
    assert soon(lambda: listed(fleet, "pi-seen") and listed(fleet, "pi-later"), 15)
    assert soon(lambda: len(fleet.rows()) <= 1100, 1)
    # the director clears the flood: every waiting row it never answered, and their retained hellos
    n = fleet.remove_waiting()
    assert n >= 1 and listed(fleet, "pi-seen")
    later.enrolment.close()
    stop(forger, director)


def test_the_director_removes_a_device_and_its_retained_hello(hall, tmp_path):
    director, fleet = fleet_of(hall)
    dev = Device(hall, tmp_path, "pi-r")
    assert soon(lambda: listed(fleet, "pi-r"), 10)
    fleet.assign(dev.enrolment.code, 6)
    dev.next_change()
    dev.enrolment.close()
    fleet.remove(dev.enrolment.code)
    assert listed(fleet, "pi-r") == []
    rec = Recorder(hall, f"rackside/v1/{hall.hall}/enrol/#")
    stop(director)
    director, fleet = fleet_of(hall)
    assert not soon(lambda: listed(fleet, "pi-r"), 1) and listed(fleet, "pi-r") == []
    assert [t for t, p, retained in rec.messages if retained and dev.enrolment.kid in t] == []
    rec.close()
    stop(director)


# --- 4. client ids -----------------------------------------------------------------------------------


def test_the_join_client_drops_no_table_and_no_console(hall, tmp_path):
    from rackside.hall.console.shell.bridge import Bridge

    director, fleet = fleet_of(hall)
    dev = Device(hall, tmp_path, "pi-t2")
    assert soon(lambda: listed(fleet, "pi-t2"), 10)
    fleet.assign(dev.enrolment.code, 2)
    _, cfg = dev.next_change()
    table2, rc, table_dropped = tls_login(hall, "table-2", cfg.credentials.password, cfg.credentials.mqtt_client_id)
    assert not rc.is_failure
    ups: queue.Queue = queue.Queue()
    console = Bridge(hall.url.replace("mqtts", "mqtt").replace(str(hall.tls_port), str(hall.port)), "director",
                     hall.password("director"), hall.hall, lambda t, p: None, on_connection=lambda up, why: ups.put(up))
    console.start()
    assert ups.get(timeout=10) is True
    for client_id in ("table-2", "director-console", "station-1", "director"):
        c, _ = joiner(hall, client_id)
        stop(c)
    assert not table_dropped.is_set(), "the join client dropped table 2"
    assert ups.empty(), "the join client dropped the console's session"
    console.stop()
    dev.enrolment.close()
    stop(table2, director)


def test_the_join_client_drops_no_table_and_no_station_made_up_front(tmp_path):
    """`rackside hall provision --tables 2 --stations 1`: a real clock and a real `rackside hall
    station` log in with the credentials files it wrote; a join client connecting as `table-2` or
    `station-1` drops neither (it did: their client id was their user name)."""
    import subprocess
    import sys

    from support.broker import Broker, free_port
    from support.hallclock import LiveClock, clock_config

    out, port, tls_port = tmp_path / "hall", free_port(), free_port()
    run_as = ["--run-as", getpass.getuser()] if os.geteuid() == 0 else []
    made = subprocess.run([sys.executable, "-m", "rackside", "hall", "provision", "--hall", "upfront", "--out", str(out),
                           "--tables", "2", "--stations", "1", "--port", str(port), "--tls-port", str(tls_port),
                           "--bind", "127.0.0.1", "--host", "127.0.0.1", "--url", f"mqtts://127.0.0.1:{tls_port}", *run_as],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    broker = Broker.attach(out, "upfront", port)
    broker.tls_port = tls_port
    broker.start()
    statuses = Recorder(broker, "rackside/v1/upfront/+/+/status")
    clock = station = None
    try:
        clock = LiveClock(clock_config(tmp_path / "clock.toml", broker, 2, url=f"mqtts://127.0.0.1:{tls_port}"), tmp_path / "clock-state")
        (tmp_path / "station.toml").write_text(
            f'[log]\npath = "{tmp_path / "challenges.jsonl"}"\n\n[hall]\ncredentials = "{broker.credentials("station-1")}"\n'
            f'outbox = "{tmp_path / "outbox.sqlite"}"\n')
        station = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "station", "--config", str(tmp_path / "station.toml")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env={**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "station-state")})
        status = {"table-2": topics.table("upfront", 2, "status"), "station-1": topics.station("upfront", "1", "status")}

        def online(r):
            last = {t: p for t, p, _ in r.messages}
            return all(last.get(t, b"").startswith(b"{") for t in status.values())

        statuses.wait_for(online, timeout=30)
        before = len(statuses.messages)
        for client_id in status:
            c, _ = joiner(broker, client_id)
            stop(c)
        statuses.ping()
        log = broker.log_path.read_text()
        for user in status:
            assert f"Client {user} already connected" not in log, f"the join client dropped {user}"
        assert [p for t, p, _ in statuses.messages[before:] if p == b"offline"] == []
    finally:
        if station is not None:
            station.terminate()
            station.wait(10)
        if clock is not None:
            clock.close()
        statuses.close()
        broker.stop()


def test_a_credentials_file_without_a_client_id_still_logs_in_under_its_user_name(make_broker, tmp_path, caplog):
    """A table provisioned before client ids had tails: its broker binds it to `table-5`, and its
    file names no client_id. The clock logs in as before, and says once why to provision again."""
    from rackside.hall.director import dynsec
    from rackside.hall.director.dynsec_api import Control
    from support.hallclock import LiveClock, clock_config

    broker = make_broker(tables="", stations=0)
    director = broker.client("director")
    Control(director).run(dynsec.create_device(broker.hall, "table-5", "old-pw", "table-5"))  # as provisioning bound it then
    (broker.dir / "credentials" / "table-5.toml").write_text(f'hall = "{broker.hall}"\nuser = "table-5"\npassword = "old-pw"\ntable = 5\n')
    statuses = Recorder(broker, topics.table(broker.hall, 5, "status"))
    clock = LiveClock(clock_config(tmp_path / "clock.toml", broker, 5), tmp_path / "state")
    try:
        statuses.wait_for(lambda r: any(p.startswith(b"{") for _, p, _ in r.messages), timeout=20)
        assert "has no client_id (an earlier `rackside hall provision`): connecting as 'table-5'" in caplog.text
    finally:
        clock.close()
        statuses.close()
        stop(director)


# --- re-provisioning ---------------------------------------------------------------------------------


def test_re_provisioning_keeps_enrolled_devices(make_broker, tmp_path):
    from rackside.hall.director import provision

    broker = make_broker(tables="1", stations=0, tls=True)
    director, fleet = fleet_of(broker)
    dev = Device(broker, tmp_path, "pi-keep")
    assert soon(lambda: listed(fleet, "pi-keep"), 10)
    fleet.assign(dev.enrolment.code, 9)
    _, cfg = dev.next_change()
    dev.enrolment.close()
    stop(director)
    broker.stop()
    broker.devices = provision.provision(broker.dir, broker.hall, [1, 2], 0, port=broker.port, bind="127.0.0.1",
                                         url=broker.url, tls=True, tls_port=broker.tls_port, names=["127.0.0.1", "localhost"],
                                         run_as=getpass.getuser() if os.geteuid() == 0 else None)
    broker.start()
    t9, rc, _ = tls_login(broker, "table-9", cfg.credentials.password, cfg.credentials.mqtt_client_id)
    assert rc is not None and not rc.is_failure, "re-provisioning forgot the enrolled device"
    director, fleet = fleet_of(broker)
    assert soon(lambda: [r for r in listed(fleet, "pi-keep") if r["table"] == 9], 10)
    stop(t9, director)
