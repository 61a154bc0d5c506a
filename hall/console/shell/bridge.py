"""The console's one MQTT connection, as the director's user (paho-mqtt 2.x).

Like the devices' (hall.net.link): MQTT 5 with a fixed client id and a persistent session (clean_start
off, a two-day session expiry), so events and results published while the console was down are
delivered when it comes back; the broker's address is read by the devices' own parser
(hall.net.config.parse_url) and every topic comes from hall.wire.topics.

paho runs its network loop on its own thread; each message is handed to `deliver` unchanged, and
the console moves it onto its event loop, so the hall state is touched by one thread only. The one
thing done here, on paho's thread, is the per-device rate limit (`RateGate`, owned by that thread):
a device flooding the console is cut to limits.DEVICE_RATE messages a second before anything else
is spent on it, and what it dropped is reported (a gap in its events is asked for again later).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from typing import Callable

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from rackside.hall.wire import topics
from rackside.hall.net.config import parse_url
from rackside.hall.net.link import KEEPALIVE_S, SESSION_EXPIRY_S, Client, connect_failure, login_refusal
from rackside.outage import Outage

from ..common import limits

log = logging.getLogger("rackside.hall.console")
REPORT_EVERY_S = 5.0  # a flooding device's dropped messages are reported at most this often


class RateGate:
    """A token bucket per device (limits.DEVICE_RATE a second, DEVICE_BURST deep). Touched only on
    paho's network thread."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.buckets: dict[str, list[float]] = {}  # device -> [tokens, last refill, dropped, last report]

    def allow(self, device: str) -> tuple[bool, int]:
        """(let it through?, how many were dropped since the last report, when one is due)."""
        now = self.clock()
        b = self.buckets.get(device)
        if b is None:
            if len(self.buckets) >= limits.MAX_TABLE + limits.MAX_STATIONS:
                self.buckets.clear()  # only topics of real devices reach here (the ACL): never in a real hall
            b = self.buckets[device] = [float(limits.DEVICE_BURST), now, 0, now - REPORT_EVERY_S]  # the first drop is reported at once
        b[0] = min(limits.DEVICE_BURST, b[0] + (now - b[1]) * limits.DEVICE_RATE)
        b[1] = now
        if b[0] >= 1:
            b[0] -= 1
            ok = True
        else:
            b[2] += 1
            ok = False
        report = 0
        if b[2] and now - b[3] >= REPORT_EVERY_S:
            report, b[2], b[3] = int(b[2]), 0, now
        return ok, report


def console_client_id(password: str, hall: str = "", event: str = "") -> str:
    """The console's client id: `director-console-` and a tail only the director's password gives,
    the same at every start of one event's console in one hall (its session persists). A fixed,
    guessable id could be taken by anyone with the join file, and Mosquitto drops the client already
    holding an id (issue 25, defect 4); so the hall and the event are in it too: two consoles of
    two events (or halls) with the director's one login would otherwise drop each other, over and
    over, and share one session, each getting some of the hall's messages. One event's second
    console is refused before it connects (eventdir.Lock)."""
    what = b"rackside console client id\0" + hall.encode() + b"\0" + event.encode()
    return "director-console-" + hmac.new(password.encode(), what, hashlib.sha256).hexdigest()[:16]


class Bridge:
    def __init__(
        self,
        url: str,
        username: str,
        password: str,
        hall: str,
        deliver: Callable[[str, bytes], None],
        on_connection: Callable[[bool, str], None] = lambda up, why: None,
        client_id: str | None = None,
        event: str = "",
        ca_file: str | None = None,
        on_dropped: Callable[[str, int], None] = lambda device, n: None,
    ) -> None:
        self.hall = hall
        self.stopping = False
        endpoint = parse_url(url, "[console] url")
        if endpoint is None:
            raise ValueError('[console] url = "auto": the console needs the broker\'s address, mqtt://HOST[:PORT]')
        self.host, self.port = endpoint.host, endpoint.port
        self.deliver = deliver
        self.on_connection = on_connection
        self.on_dropped = on_dropped
        self.gate = RateGate()
        self.outage = Outage(log, f"broker {self.host}:{self.port}")
        self.tls = endpoint.tls
        if client_id is None:
            client_id = console_client_id(password, hall, event)
        self.client = Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)  # link.Client: says why a connection failed
        self.client.username_pw_set(username, password)
        if endpoint.tls:
            self.client.tls_set(ca_certs=ca_file)
        self.client.reconnect_delay_set(min_delay=1, max_delay=5)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_message = self._on_message
        self.rules: bytes | None = None  # the event's rules (hall.wire.eventrules.payload), retained at each connection

    def start(self) -> None:
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = SESSION_EXPIRY_S
        self.client.connect_async(self.host, self.port, keepalive=KEEPALIVE_S, clean_start=False, properties=props)
        self.client.loop_start()

    def stop(self) -> None:
        self.stopping = True
        self.client.disconnect()
        self.client.loop_stop()

    def subscriptions(self) -> list[tuple[str, int]]:
        return ([(topics.table(self.hall, "+", leaf), 1) for leaf in topics.TABLE_TOPICS if leaf != "cmd"]
                + [(topics.station(self.hall, "+", leaf), 1) for leaf in topics.STATION_TOPICS])

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self.outage.failed(login_refusal(reason_code))
            self.on_connection(False, str(reason_code))
            return
        self.outage.recovered()
        client.subscribe(self.subscriptions())
        if self.rules is not None:  # retained: a station that comes later, or back, reads them (issue 38)
            client.publish(topics.rules(self.hall), self.rules, qos=1, retain=True)
        self.on_connection(True, "connected")

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        if self.stopping:
            return
        self.outage.failed(f"disconnected: {reason_code}")
        self.on_connection(False, str(reason_code))

    def _on_connect_fail(self, client, userdata) -> None:
        why = connect_failure(client.last_error, self.tls)
        self.outage.failed(why)
        self.on_connection(False, why)

    def _on_message(self, client, userdata, msg) -> None:
        where = topics.parse(msg.topic)
        device = f"{where[1]} {where[2]}" if where else "?"
        ok, dropped = self.gate.allow(device)
        if dropped:
            self.on_dropped(device, dropped)
        if ok:
            self.deliver(msg.topic, msg.payload)

    def publish_rules(self, rules: bytes) -> None:
        """The event's rules changed (the rules page): retained now, and again at each connection."""
        self.rules = rules
        self.client.publish(topics.rules(self.hall), rules, qos=1, retain=True)  # queued while away: sent again on connect

    def command(self, table: int, cmd: dict) -> None:
        """Send a command to a table's clock (QoS 1); its ack comes back on `…/ack`."""
        info = self.client.publish(topics.table(self.hall, table, "cmd"), json.dumps(cmd), qos=1)
        if info.rc != mqtt.MQTT_ERR_SUCCESS and info.rc != mqtt.MQTT_ERR_NO_CONN:
            raise ConnectionError(mqtt.error_string(info.rc))
