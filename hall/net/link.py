"""One device's connection to the hall's broker: paho-mqtt 2.x, its own network thread.

A fixed client id (the credentials file's `client_id`, `table-12-<random>`: from an enrolled
device's sealed login, or written by provisioning; a file of an earlier provisioning has none, and
the device uses its user name, the id that provisioning bound it to) and a persistent MQTT 5 session (clean_start False, a
two-day session expiry): the broker keeps the device's subscription and its queued commands while
it is away, and paho re-sends every unacknowledged QoS 1 message on reconnect. The Last Will
publishes "offline" on the device's retained status topic; every (re)connect subscribes, then
publishes "online", or the status its owner last gave `set_status` (with the device's health,
hall.wire.health), so "online" means a command sent now reaches it.
paho reconnects by itself (0.5 s to 5 s back-off); failures are logged once per outage.
A link connects to one endpoint for its whole life: `url = "auto"` is resolved by mDNS (hall.net.mdns)
once, by the link's owner before `start` (retrying until a broker is found), and paho's reconnects
go back to that same host and port. A broker that moves is found again only when the program
restarts.

With `manual_ack` (paho 2.x's `manual_ack=True`), a QoS 1 message is not acknowledged to the broker
when the callback returns: `on_message(topic, payload, token)` gets a token, and the owner calls
`ack(token)` once the message is safe (the clock: its command journalled, its ack in the outbox).
A device killed before that gets the message again from its persistent session.
"""

from __future__ import annotations

import logging
import ssl
import threading
from typing import Callable

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from rackside.hall.net.config import Endpoint, HallConfig
from rackside.outage import Outage

log = logging.getLogger(__name__)

SESSION_EXPIRY_S = 2 * 24 * 3600
KEEPALIVE_S = 15


class Client(mqtt.Client):
    """paho's client, remembering why its last connection attempt failed: paho's on_connect_fail
    is told nothing, and "cannot connect" left the director to guess (a refused port, a TLS
    handshake with the wrong listener, an unknown host)."""

    last_error: OSError | None = None

    def reconnect(self):  # paho's own loop calls this for every attempt, the first included
        try:
            return super().reconnect()
        except OSError as e:
            self.last_error = e
            raise


def connect_failure(error: OSError | None, tls: bool) -> str:
    """Why a connection attempt failed, in the director's words (hall.device.enrol may use it too)."""
    import socket

    if isinstance(error, ssl.SSLCertVerificationError):
        return f"TLS handshake failed: the broker's certificate is not the hall's for this address ({error.verify_message})"
    if isinstance(error, ssl.SSLError) or (tls and isinstance(error, (ConnectionResetError, BrokenPipeError))):
        reason = getattr(error, "reason", None) or error.strerror or error
        return f"TLS handshake failed ({reason}): is that port the broker's TLS listener (mqtts://, 8883 by default)?"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused: nothing listens on that port (is the broker running, and the URL's port right?)"
    if isinstance(error, socket.gaierror):
        return f"unknown host: {error.strerror}"
    if isinstance(error, TimeoutError):
        return "no answer: timed out"
    if error is not None:
        return f"cannot connect: {error.strerror or error}"
    return "cannot connect"


def login_refusal(reason_code) -> str:
    """A CONNACK's refusal, in the director's words."""
    if str(reason_code) in ("Not authorized", "Bad user name or password"):
        return (f"not authorised ({reason_code}): the broker does not know this user and password "
                "(a credentials file of another hall, or of an earlier provisioning)")
    return f"login refused: {reason_code}"


class Link:
    def __init__(
        self,
        cfg: HallConfig,
        status_topic: str,
        *,
        subscribe: tuple[str, ...] = (),
        on_message: Callable[[str, bytes], None] | None = None,
        on_ack: Callable[[int], None] | None = None,
        on_connected: Callable[[], None] | None = None,
        inflight: int = 50,
        manual_ack: bool = False,
    ) -> None:
        self.cfg = cfg
        self.status_topic = status_topic
        self.topics = subscribe
        self.on_message = on_message
        self.on_ack = on_ack
        self.on_connected = on_connected
        self.manual_ack = manual_ack
        self.connected = threading.Event()
        self.online = b"online"  # the retained status while connected (set_status: with the health)
        self.outage = Outage(log, f"hall broker ({cfg.url})")
        if cfg.credentials.client_id is None:
            # kept working rather than refused: the broker of that provisioning accepts this device only under its user name
            log.warning("the credentials file of %s has no client_id (an earlier `rackside hall provision`): connecting as %r, "
                        "which anyone with the hall's join file can knock off; provision again and install its new file",
                        cfg.credentials.user, cfg.credentials.user)
        c = Client(mqtt.CallbackAPIVersion.VERSION2, client_id=cfg.credentials.mqtt_client_id, protocol=mqtt.MQTTv5, manual_ack=manual_ack)
        c.username_pw_set(cfg.credentials.user, cfg.credentials.password)
        c.will_set(status_topic, b"offline", qos=1, retain=True)
        c.reconnect_delay_set(0.5, 5)
        c.max_inflight_messages_set(inflight)
        c.max_queued_messages_set(0)
        self._tls = bool((cfg.endpoint and cfg.endpoint.tls) or cfg.credentials.tls_ca)
        if self._tls:
            c.tls_set(ca_certs=cfg.credentials.tls_ca, tls_version=ssl.PROTOCOL_TLS_CLIENT)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_connect_fail = self._on_connect_fail
        c.on_publish = self._on_publish
        c.on_message = self._on_message
        self.client = c
        self._started = False

    def start(self, endpoint: Endpoint) -> None:
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = SESSION_EXPIRY_S
        self.client.connect_async(endpoint.host, endpoint.port, KEEPALIVE_S, clean_start=False, properties=props)
        self.client.loop_start()
        self._started = True

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False) -> int | None:
        """Hand a message to paho; its mid, or None when it was not accepted."""
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            return None
        return info.mid

    def set_status(self, payload: bytes) -> None:
        """The retained status while online (any thread): published now if connected, and on every
        reconnect (one bytes object, swapped whole)."""
        self.online = payload
        if self.connected.is_set():
            self.client.publish(self.status_topic, payload, qos=1, retain=True)

    def ack(self, token: tuple[int, int]) -> None:
        """Acknowledge a message given to `on_message` with this token (manual_ack; any thread:
        paho queues the PUBACK under its own lock). After a reconnect the broker has already
        re-sent the message under the same id, so a late ack still settles it."""
        self.client.ack(*token)

    def close(self, timeout: float = 2.0) -> None:
        if not self._started:
            return
        if self.connected.is_set():
            try:
                self.client.publish(self.status_topic, b"offline", qos=1, retain=True).wait_for_publish(timeout)
            except (RuntimeError, ValueError):
                pass
        self._started = False  # a disconnect from here on is ours, not an outage
        self.client.disconnect()
        self.client.loop_stop()

    # --- paho's thread ---------------------------------------------------------------------------

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self.outage.failed(login_refusal(reason_code))
            return
        self.outage.recovered()
        # Subscribed first, then "online": the broker handles a connection's packets in order, so
        # whoever sends a command on seeing "online" (the console, a takeover) finds the
        # subscription there; the other way round, a first session's command could be dropped.
        for topic in self.topics:
            client.subscribe(topic, qos=1)
        client.publish(self.status_topic, self.online, qos=1, retain=True)
        self.connected.set()
        if self.on_connected:
            self.on_connected()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()
        if self._started:
            self.outage.failed(f"disconnected: {reason_code}")

    def _on_connect_fail(self, client, userdata) -> None:
        self.outage.failed(connect_failure(client.last_error, self._tls))

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        if self.on_ack:
            self.on_ack(mid)

    def _on_message(self, client, userdata, msg) -> None:
        if not self.on_message:
            return
        try:
            if self.manual_ack:
                self.on_message(msg.topic, msg.payload, (msg.mid, msg.qos))
            else:
                self.on_message(msg.topic, msg.payload)
        except Exception:  # noqa: BLE001 - a bad message must never stop the network thread
            log.exception("hall message on %s not handled", msg.topic)
            if self.manual_ack:  # never handled: acked so it cannot hold the broker's window
                client.ack(msg.mid, msg.qos)
