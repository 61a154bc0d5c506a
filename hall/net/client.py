"""A paho-mqtt client logged in to the hall's broker with a credentials file's user, for a session
that lives as long as one command or page: `rackside hall devices` (hall.director.fleet_cli) and
the console's Devices page (hall/console/fleet/devices.py) log in as the director with it. A device's
long-lived session, with its reconnects and outbox, is hall.net.link's."""

from __future__ import annotations

import queue
import socket
import ssl


def connect(creds, url: str, *, client_id: str = "", session_expiry: int = 0):
    """A paho client logged in as the director (`creds`: hall, user, password, tls_ca); ConnectionError
    saying why not. `client_id` and `session_expiry` (seconds): a new session the broker keeps that
    long after the client leaves (hall.director.handover)."""
    import paho.mqtt.client as mqtt

    from rackside.hall.net.config import parse_url

    endpoint = parse_url(url, "--url")
    if endpoint is None:
        from rackside.hall.net.mdns import find_broker

        endpoint = find_broker(hall=creds.hall)
        if endpoint is None:
            raise ConnectionError("no broker for this hall found by mDNS; give --url")
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    c.username_pw_set(creds.user, creds.password)
    if endpoint.tls:
        c.tls_set(ca_certs=creds.tls_ca, tls_version=ssl.PROTOCOL_TLS_CLIENT)
    got: queue.Queue = queue.Queue()
    c.on_connect = lambda cl, u, f, rc, p: got.put(rc)
    try:
        if session_expiry:
            from paho.mqtt.packettypes import PacketTypes
            from paho.mqtt.properties import Properties

            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = session_expiry
            c.connect(endpoint.host, endpoint.port, clean_start=True, properties=props)
        else:
            c.connect(endpoint.host, endpoint.port)
        # paho leaves Nagle on: an assignment's reply and the next plugin command would each wait
        # for the previous segment's (delayed) ACK, ~40 ms an assignment
        c.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError as e:
        from rackside.hall.net.link import connect_failure

        raise ConnectionError(f"{endpoint.url}: {connect_failure(e, endpoint.tls)}") from None
    c.loop_start()
    try:
        rc = got.get(timeout=10)
    except queue.Empty:
        rc = "no answer"
    if rc == "no answer" or rc.is_failure:
        c.loop_stop()
        from rackside.hall.net.link import login_refusal

        raise ConnectionError(f"{endpoint.url} refused the director: {'no answer' if rc == 'no answer' else login_refusal(rc)}")
    return c
