"""A device's side of enrolment: from the hall's join file to its own table number.

The device keeps, owner-only, in its state folder:

    hall-enrolment.toml   its device id (made once)
    hall-device-key.pem   its own key (hall.wire.devicekey, made once): its code, its enrolment
                          topics and join client id come from it (hall.wire.join), and the login
                          the director gives it comes sealed to it
    hall-ca.crt           the hall's CA from the join file (TLS pins it)
    hall-credentials.toml written when the director assigns it: hall, user (`table-12`), password
                          and client id (opened from its reply), table or station, url, tls_ca

It connects as the join client (client id `enrol-<key id>`), publishes its hello retained on
`enrol/<key id>` (device id, kind, public key, code, version, address; its Last Will clears it, so
a hello on the broker is a device on the broker) and listens on its own reply
topic for as long as it runs, saying hello again every HELLO_EVERY_S while it waits (a hello the
director's console dropped in a flood is listed later): an assignment (also a renumbering) calls
`on_change(user, HallConfig)`, a revocation `on_change(None, None)`. A device already assigned
reports that at once from its file, before it connects. Runs on paho's network thread; `on_change`
must not block for long.
"""

from __future__ import annotations

import logging
import ssl
import threading
from pathlib import Path
from typing import Callable

import paho.mqtt.client as mqtt

from rackside import tomlfile
from rackside.atomic import write_atomic
from rackside.hall.device import joinfile as device_joinfile
from rackside.hall.wire import devicekey, join, topics
from rackside.hall.net.config import HallConfig, HallConfigError, from_table, parse_url
from rackside.outage import Outage

log = logging.getLogger(__name__)

ENROLMENT_FILE = "hall-enrolment.toml"
KEY_FILE = "hall-device-key.pem"
CA_FILE = "hall-ca.crt"
CREDENTIALS_FILE = "hall-credentials.toml"
KEEPALIVE_S = 30
HELLO_EVERY_S = 30

Change = Callable[[str | None, HallConfig | None], None]


def identity(folder: Path, device: str | None = None) -> tuple[str, bytes]:
    """(device id, public key): the id made once and kept in `folder`/hall-enrolment.toml, the key
    in `folder`/hall-device-key.pem (both owner-only)."""
    path = folder / ENROLMENT_FILE
    dev = None
    try:
        data = tomlfile.read(path)
        if isinstance(data.get("device"), str) and (device is None or data["device"] == device):
            dev = join.check_device_id(data["device"])
    except tomlfile.TomlFileError as e:
        if not e.missing:
            log.error("%s: %s; making a new device id", path, e)
    except ValueError as e:
        log.error("%s: %s; making a new one", path, e)
    if dev is None:
        dev = join.check_device_id(device) if device else device_joinfile.device_id()
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(path, f'# This device\'s hall identity (rackside hall enrolment); its key is {KEY_FILE}.\ndevice = "{dev}"\n')
    devicekey.make(folder / KEY_FILE)
    return dev, devicekey.public_der(folder / KEY_FILE)


class Enrolment:
    def __init__(self, joinfile: device_joinfile.JoinFile, folder: Path, kind: str, *, on_change: Change,
                 device: str | None = None, version: str = "", hello_every: float = HELLO_EVERY_S) -> None:
        if kind not in join.KINDS:
            raise ValueError(f"kind {kind!r}")
        self.join = joinfile
        self.folder = Path(folder)
        self.kind = kind
        self.on_change = on_change
        self.version = version
        self.hello_every = hello_every
        self.device, self.public = identity(self.folder, device)
        self.key_path = self.folder / KEY_FILE
        self.kid = join.key_id(self.public)
        self.code = join.code(self.public)
        self.user: str | None = None
        self.asks: int | None = None  # a table number asked for on the device (the director's menu)
        self.outage = Outage(log, f"hall enrolment ({joinfile.url})")
        self.ca_path = self.folder / CA_FILE
        if joinfile.ca:
            write_atomic(self.ca_path, joinfile.ca, mode=0o644)
        self.reply_topic = topics.enrol_reply(joinfile.hall, self.kid)
        self.hello_topic = topics.enrol_hello(joinfile.hall, self.kid)
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=join.enrol_client_id(self.kid), protocol=mqtt.MQTTv5)
        c.username_pw_set("join", joinfile.secret)
        # its Last Will clears its retained hello: a hello on the broker means a device connected now,
        # which the Devices page shows as such (issue 35: a waiting device showed Online "—")
        c.will_set(self.hello_topic, b"", qos=1, retain=True)
        if joinfile.tls:
            c.tls_set(ca_certs=str(self.ca_path), tls_version=ssl.PROTOCOL_TLS_CLIENT)
        c.reconnect_delay_set(0.5, 5)
        c.on_connect = self._on_connect
        c.on_connect_fail = lambda *a: self.outage.failed("cannot connect")
        c.on_disconnect = self._on_disconnect
        c.message_callback_add(self.reply_topic, self._on_reply)
        self.client = c
        self._started = False
        self._stopping = False
        self._stop = threading.Event()
        self._connected = False
        self._thread: threading.Thread | None = None

    @property
    def credentials_path(self) -> Path:
        return self.folder / CREDENTIALS_FILE

    def start(self) -> None:
        """Report a stored assignment at once, then connect (its own thread finds the broker)."""
        cfg = self._stored()
        if cfg is not None:
            self.user = cfg.credentials.user
            self.on_change(self.user, cfg)
        self._thread = threading.Thread(target=self._connect, name="hall-enrolment", daemon=True)
        self._thread.start()

    def _connect(self) -> None:
        endpoint = parse_url(self.join.url, "join file url")
        if endpoint is None:
            from rackside.hall.net import mdns

            while endpoint is None and not self._stopping:
                endpoint = mdns.find_broker(hall=self.join.hall)
                if endpoint is None:
                    self.outage.failed(mdns.NOT_FOUND)
        if self._stopping:
            return
        self.endpoint = endpoint
        self.client.connect_async(endpoint.host, endpoint.port, KEEPALIVE_S)
        self.client.loop_start()
        self._started = True
        while not self._stop.wait(self.hello_every):  # again while it waits: a hello dropped in a flood is listed later
            if self._connected and self.user is None:
                self._hello(self.client)

    def ask(self, n: int) -> None:
        """Ask the director for table `n`: the hello is sent again with it (any thread; paho queues
        the publish without waiting). The director still assigns it: a request numbers nothing."""
        self.asks = n
        if self._started:
            self._hello(self.client)

    def close(self) -> None:
        self._stopping = True
        self._stop.set()
        if self._started:
            self.client.disconnect()
            self.client.loop_stop()
            self._started = False

    def _stored(self) -> HallConfig | None:
        if not self.credentials_path.is_file():
            return None
        try:
            return self._config()
        except HallConfigError as e:
            log.error("%s", e)
            return None

    def _config(self) -> HallConfig:
        return from_table({"credentials": str(self.credentials_path), "url": self.join.url}, join.KINDS[self.kind])

    # --- paho's thread -----------------------------------------------------------------------------

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self.outage.failed(f"join refused: {reason_code} (is this the hall's current join file?)")
            return
        self.outage.recovered()
        self._connected = True
        client.subscribe(self.reply_topic, qos=1)
        self._hello(client)

    def _hello(self, client) -> None:
        try:
            address = client.socket().getsockname()[0]
        except (OSError, AttributeError):
            address = None
        client.publish(self.hello_topic, join.hello_payload(self.device, self.kind, self.public, version=self.version,
                                                             address=address, asks=self.asks), qos=1, retain=True)

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self._connected = False
        if not self._stopping:
            self.outage.failed(f"disconnected: {reason_code}")

    def _on_reply(self, client, userdata, msg) -> None:
        if not msg.payload:
            return
        try:
            reply = join.parse_reply(self.kid, msg.payload)
            user = reply.user
            if user is not None and topics.parse_user(user)[0] != join.KINDS[self.kind]:
                raise ValueError(f"{user} is not a {join.KINDS[self.kind]}")
            if user is not None:
                password, client_id = join.parse_login(devicekey.unseal(self.key_path, reply.sealed))
        except (ValueError, devicekey.DeviceKeyError) as e:
            log.error("enrolment reply: %s", e)
            return
        if user is None:
            if self.user is None and not self.credentials_path.exists():
                return
            self.user = None
            self.credentials_path.unlink(missing_ok=True)
            log.warning("the director revoked this device: waiting for a table number (code %s)", join.code_text(self.code))
            self.on_change(None, None)
            return
        stored = self._stored() if user == self.user else None
        if stored is not None and stored.credentials.password == password and stored.credentials.client_id == client_id:
            return  # the same assignment again (its retained reply at every connect)
        kind, ident = topics.parse_user(user)
        lines = [
            "# This device's hall credentials, from the director's assignment (rackside hall enrolment). Owner-only.",
            f'hall = "{self.join.hall}"', f'user = "{user}"', f'password = "{password}"', f'client_id = "{client_id}"',
            f"table = {int(ident)}" if kind == "table" else f'station = "{ident}"',
        ]
        if self.join.tls:
            lines.append(f'tls_ca = "{self.ca_path}"')
        write_atomic(self.credentials_path, "\n".join(lines) + "\n")
        try:
            cfg = self._config()
        except HallConfigError as e:
            log.error("%s", e)
            return
        self.user = user
        log.info("the director assigned this device: %s", user)
        self.on_change(user, cfg)
