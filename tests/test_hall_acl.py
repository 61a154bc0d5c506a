"""Access control against the real broker (issue 12): no anonymous access, each device only its own
topics, and only the director sends commands or reads challenge details."""

from __future__ import annotations

import threading

import pytest
from support.broker import Broker, ping

from rackside.hall.director import provision as prov
from rackside.hall.wire import topics


@pytest.fixture(scope="module")
def hall_broker(tmp_path_factory):
    """This module's own broker: its device logins (each bound to its client id) must not knock the
    session broker's clocks off."""
    broker = Broker(tmp_path_factory.mktemp("acl-broker"), stations=2)
    broker.start()
    yield broker
    broker.stop()


def test_password_hash_is_mosquitto_passwds_format():
    salt = bytes(range(12))
    hashed = prov.hash_password("secret", salt)
    # the same salt and password as `mosquitto_passwd` hashes them (checked with Debian's 2.0.11)
    assert hashed.startswith("$7$101$AAECAwQFBgcICQoL$")
    assert prov.check_password("secret", hashed) and not prov.check_password("Secret", hashed)


@pytest.mark.parametrize("text, tables", [("1-3", [1, 2, 3]), ("1-2,5,7-8", [1, 2, 5, 7, 8]), ("4", [4])])
def test_table_ranges(text, tables):
    assert prov.parse_tables(text) == tables


@pytest.mark.parametrize("text", ["", "0-3", "3-1", "a", "1-1000"])
def test_bad_table_ranges_say_what_is_allowed(text):
    with pytest.raises(ValueError, match="allowed"):
        prov.parse_tables(text)


def test_credentials_are_owner_only(hall_broker):
    for user in ("director", "table-3", "station-1"):
        assert hall_broker.credentials(user).stat().st_mode & 0o777 == 0o600
    assert (hall_broker.dir / "dynamic-security.json").stat().st_mode & 0o077 == 0
    assert (hall_broker.dir / "join.toml").stat().st_mode & 0o777 == 0o600


def test_anonymous_is_refused(hall_broker):
    with pytest.raises(ConnectionRefusedError):
        hall_broker.client(None)


def test_a_wrong_password_is_refused(hall_broker):
    with pytest.raises(ConnectionRefusedError):
        hall_broker.client("table-3", password="not-it")


def test_every_provisioned_device_logs_in(hall_broker):
    for user in ("director", "table-1", "table-8", "station-2"):
        c = hall_broker.client(user)
        c.disconnect()
        c.loop_stop()


def test_a_device_made_up_front_is_bound_to_a_random_client_id_its_file_names(hall_broker):
    """Its user name is no client id the broker takes from it: a join-file holder knowing `table-3`
    names no connected client (tests/test_hall_enrolment_attacks.py connects as one)."""
    import re

    from rackside.hall.net.config import load_credentials

    ids = {}
    for user in ("table-3", "station-1"):
        creds = load_credentials(hall_broker.credentials(user))
        assert re.fullmatch(rf"{user}-[0-9a-f]{{16}}", creds.client_id) and creds.mqtt_client_id == creds.client_id
        ids[user] = creds.client_id
        with pytest.raises(ConnectionRefusedError):
            hall_broker.client(user, client_id=user)
        c = hall_broker.client(user, client_id=creds.client_id)
        c.disconnect()
        c.loop_stop()
    again = prov.provision(hall_broker.dir.with_name(hall_broker.dir.name + "-again"), "testhall", [3], ["1"], tls=False)
    assert again["table-3"].client_id != ids["table-3"] and again["station-1"].client_id != ids["station-1"]


class Watch:
    """The director's view of `topic_filter`: what the broker actually delivered."""

    def __init__(self, broker, topic_filter, user="director"):
        self.got: list[tuple[str, bytes]] = []
        self.subscribed = threading.Event()
        self.client = broker.client(user)
        self.client.on_message = lambda c, u, m: self.got.append((m.topic, m.payload))
        self.client.on_subscribe = lambda c, u, mid, rcs, p: (self.codes.extend(rcs), self.subscribed.set())
        self.codes: list = []
        self.client.subscribe(topic_filter, qos=1)
        assert self.subscribed.wait(5)

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


def publish_and_wait(client, topic, payload=b"x"):
    """QoS 1, until its PUBACK: the broker has routed it (or refused it) by then."""
    info = client.publish(topic, payload, qos=1)
    info.wait_for_publish(5)


def test_table_3_cannot_publish_to_table_4(hall_broker):
    h = hall_broker.hall
    watch = Watch(hall_broker, f"rackside/v1/{h}/table/+/event")
    t3 = hall_broker.client("table-3")
    publish_and_wait(t3, topics.table(h, 4, "event"), b"forged")
    publish_and_wait(t3, topics.table(h, 3, "event"), b"own")
    ping(watch.client)
    assert watch.got == [(topics.table(h, 3, "event"), b"own")]
    watch.close()


def test_table_3_cannot_read_another_tables_commands(hall_broker):
    h = hall_broker.hall
    t3 = hall_broker.client("table-3")
    got = []
    t3.on_message = lambda c, u, m: got.append(m.topic)
    codes = []
    done = threading.Event()
    t3.on_subscribe = lambda c, u, mid, rcs, p: (codes.extend(rcs), done.set())
    t3.subscribe([(topics.table(h, 4, "cmd"), 1), (topics.table(h, 3, "cmd"), 1)])
    assert done.wait(5)
    director = hall_broker.client("director")
    publish_and_wait(director, topics.table(h, 4, "cmd"), b"{}")
    publish_and_wait(director, topics.table(h, 3, "cmd"), b"{}")
    ping(t3)
    assert got == [topics.table(h, 3, "cmd")]
    assert [c.is_failure for c in codes] == [True, False]  # the plugin refuses the subscription itself


def test_only_the_director_reads_challenge_details(hall_broker):
    h = hall_broker.hall
    detail = topics.station(h, "1", "detail")
    seen = {}
    for user in ("table-3", "station-2", "director"):
        w = Watch(hall_broker, detail, user=user)
        seen[user] = w
    station = hall_broker.client("station-1")
    publish_and_wait(station, detail, b'{"words": []}')
    for w in seen.values():
        ping(w.client)
    assert [t for t, _ in seen["director"].got] == [detail]
    assert seen["table-3"].got == [] and seen["station-2"].got == []
    for w in seen.values():
        w.close()


def test_a_station_cannot_send_commands(hall_broker):
    h = hall_broker.hall
    watch = Watch(hall_broker, f"rackside/v1/{h}/table/+/cmd")
    station = hall_broker.client("station-1")
    publish_and_wait(station, topics.table(hall_broker.hall, 3, "cmd"), b'{"cmd": "identify"}')
    t5 = hall_broker.client("table-5")
    publish_and_wait(t5, topics.table(hall_broker.hall, 3, "cmd"), b'{"cmd": "identify"}')
    ping(watch.client)
    assert watch.got == []
    watch.close()


def test_a_station_reads_the_events_rules_and_cannot_write_them(hall_broker):
    """Issue 38: the console's retained rules reach every station (its challenge rule, 3.10.15); a
    station or a table cannot change them for the others."""
    rules = topics.rules(hall_broker.hall)
    station = Watch(hall_broker, rules, user="station-2")
    assert [c.is_failure for c in station.codes] == [False]
    director = Watch(hall_broker, rules)
    publish_and_wait(hall_broker.client("station-1"), rules, b'{"challenge_rule": "double"}')
    publish_and_wait(hall_broker.client("table-3"), rules, b'{"challenge_rule": "double"}')
    publish_and_wait(hall_broker.client("director"), rules, b'{"challenge_rule": "5-per-word"}')
    for w in (station, director):
        ping(w.client)
        assert w.got == [(rules, b'{"challenge_rule": "5-per-word"}')]
        w.close()


def test_re_provisioning_gives_an_enrolled_station_todays_acls():
    """A station enrolled before the event's rules topic existed (issue 38) has a role without its read:
    re-provisioning, which keeps enrolled devices, gives it the role a station has now, so it reads the
    event's challenge rule. Before, the kept role was copied as it was, and the station's subscription
    to the rules was refused for good (it kept its own rule, silently)."""
    from rackside.hall.director import dynsec

    hall = "h1"
    old_role = dynsec.role("station-7", [dynsec.write(topics.station(hall, "7", leaf)) for leaf in topics.STATION_TOPICS])
    enrolled = dynsec.client("station-7", "$7$101$c2FsdA==$aGFzaA==", ["station-7"], clientid="station-7-x",
                             text=dynsec.ENROLLED_TEXT)
    before = {"clients": [enrolled], "roles": [old_role]}
    config = dynsec.initial_config(hall, "$7$101$c2FsdA==$aGFzaA==", "$7$101$c2FsdA==$aGFzaA==", {},
                                   keep=dynsec.enrolled(before))
    [kept] = [r for r in config["roles"] if r["rolename"] == "station-7"]
    assert kept["acls"] == dynsec.station_acls(hall, "7")
    assert [c["username"] for c in config["clients"]].count("station-7") == 1
