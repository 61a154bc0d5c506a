"""One table's credentials cannot take over another table's MQTT session by using its client id.

Devices connect with the client id their credentials file names (hall.net.link), and Mosquitto
ends an existing connection when another connects with the same client id. The dynamic-security
plugin binds each device's client to its own client id (hall.director.dynsec), so table 3's
credentials with table 4's client id (even known) are refused at login and table 4 stays connected."""

from __future__ import annotations

import threading

from rackside.hall.wire import topics

from support.broker import ping


def test_table_3_cannot_take_over_table_4s_session(make_broker):
    hall_broker = make_broker(tables="3-4", stations=1)  # its own: the sessions made here touch no other test
    h = hall_broker.hall
    t4_id = hall_broker.devices["table-4"].client_id
    t4 = hall_broker.client("table-4", client_id=t4_id, persistent=True)
    dropped, subscribed = threading.Event(), threading.Event()
    t4.on_disconnect = lambda *a: dropped.set()
    t4.on_subscribe = lambda *a: subscribed.set()
    t4.subscribe(topics.table(h, 4, "cmd"), qos=1)
    assert subscribed.wait(10)
    got = []
    try:
        intruder = hall_broker.client("table-3", client_id=t4_id, persistent=True)
        intruder.on_message = lambda c, u, m: got.append(m.topic)
    except ConnectionRefusedError:
        intruder = None  # refused: what we want
    director = hall_broker.client("director")
    director.publish(topics.table(h, 4, "cmd"), b'{"id": "x", "cmd": "identify"}', qos=1).wait_for_publish(5)
    if intruder is not None:
        ping(intruder)  # the command was routed before its PUBACK: had the session been taken, it has it now
    try:
        ping(t4)  # a taken-over table 4 was sent its DISCONNECT before the intruder's CONNACK: handled by now
    except (ConnectionError, TimeoutError):  # no answer on a connection the broker closed
        pass
    kicked = dropped.is_set()
    for c in (t4, intruder, director):
        if c is not None:
            c.loop_stop()
            c.disconnect()
    assert got == []
    assert not kicked, "table 3's credentials disconnected table 4 by reusing its client id"
