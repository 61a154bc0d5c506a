"""The console's one MQTT connection, as the director's user (paho-mqtt 2.x).

paho runs its network loop on its own thread; every message and every connection change is handed
to `deliver` unchanged, and the console moves it onto its event loop, so the hall state is touched
by one thread only. A persistent session (fixed client id, clean_session off) means events and
results published while the console was down are delivered when it comes back.
"""

from __future__ import annotations

import json
import logging
from typing import Callable
from urllib.parse import urlsplit

import paho.mqtt.client as mqtt

from rackside.outage import Outage

log = logging.getLogger("rackside.hall.console")


def parse_url(url: str) -> tuple[str, int, bool]:
    """`mqtt://host:port` or `mqtts://host:port` (TLS) into (host, port, tls)."""
    u = urlsplit(url)
    if u.scheme not in ("mqtt", "mqtts") or not u.hostname:
        raise ValueError(f"url {url!r}: expected mqtt://HOST:PORT or mqtts://HOST:PORT")
    tls = u.scheme == "mqtts"
    return u.hostname, u.port or (8883 if tls else 1883), tls


class Bridge:
    def __init__(
        self,
        url: str,
        username: str,
        password: str,
        hall: str,
        deliver: Callable[[str, bytes], None],
        on_connection: Callable[[bool, str], None] = lambda up, why: None,
        client_id: str = "director-console",
        ca_file: str | None = None,
    ) -> None:
        self.hall = hall
        self.stopping = False
        self.host, self.port, tls = parse_url(url)
        self.deliver = deliver
        self.on_connection = on_connection
        self.outage = Outage(log, f"broker {self.host}:{self.port}")
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False)
        self.client.username_pw_set(username, password)
        if tls:
            self.client.tls_set(ca_certs=ca_file)
        self.client.reconnect_delay_set(min_delay=1, max_delay=5)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message

    def start(self) -> None:
        self.client.connect_async(self.host, self.port, keepalive=15)
        self.client.loop_start()

    def stop(self) -> None:
        self.stopping = True
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self.outage.failed(f"refused: {reason_code}")
            self.on_connection(False, str(reason_code))
            return
        self.outage.recovered()
        root = f"rackside/v1/{self.hall}"
        client.subscribe([(f"{root}/table/+/{leaf}", 1) for leaf in ("status", "state", "event", "ack")]
                         + [(f"{root}/station/+/{leaf}", 1) for leaf in ("status", "challenge", "detail")])
        self.on_connection(True, "connected")

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        if self.stopping:
            return
        self.outage.failed(f"disconnected: {reason_code}")
        self.on_connection(False, str(reason_code))

    def _on_message(self, client, userdata, msg) -> None:
        self.deliver(msg.topic, msg.payload)

    def command(self, table: int, cmd: dict) -> None:
        """Send a command to a table's clock (QoS 1); its ack comes back on `…/ack`."""
        info = self.client.publish(f"rackside/v1/{self.hall}/table/{table}/cmd", json.dumps(cmd), qos=1)
        if info.rc != mqtt.MQTT_ERR_SUCCESS and info.rc != mqtt.MQTT_ERR_NO_CONN:
            raise ConnectionError(mqtt.error_string(info.rc))
