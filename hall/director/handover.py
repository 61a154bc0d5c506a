"""A spare's takeover commands, left with the broker (issue 24 item 4): they wait in the spare's
own MQTT session, so they reach it whenever it comes online, whoever asked for the takeover and
whether or not that program still runs (`rackside hall devices assign --replace` ends at once).

The director picks the spare's client id when it assigns it (hall.director.fleet), so before the
spare knows it the director logs in once with that client id (its own user, which may read the
table's commands), with a clean start and a session that outlives the connection
(hall.net.link.SESSION_EXPIRY_S, as the device's), subscribes to the table's `cmd` at QoS 1 and
leaves. The takeover's commands (hall.director.takeover) published afterwards are queued in that
session (and kept across a broker restart: persistence); the spare connects with the same client
id and `clean_start` False (hall.net.link) and is handed them, in order, as its own. No thread
waits for it anywhere.
"""

from __future__ import annotations

import json
import threading

from rackside.hall.wire import topics

TIMEOUT_S = 5.0


class HandoverError(RuntimeError):
    """The session for the spare could not be made."""


def prepare(connect_as, hall: str, table: int, client_id: str) -> None:
    """Make `client_id`'s session, subscribed to table `table`'s commands. `connect_as(client_id)`
    is a connected director login with that client id and a persistent session, its loop running."""
    c = connect_as(client_id)
    try:
        done = threading.Event()
        c.on_subscribe = lambda *a: done.set()
        c.subscribe(topics.table(hall, table, "cmd"), qos=1)
        if not done.wait(TIMEOUT_S):
            raise HandoverError(f"the broker did not answer the subscription for table {table}'s spare")
    finally:
        c.disconnect()
        c.loop_stop()


def send(client, hall: str, table: int, commands: list[dict]) -> None:
    """Publish the takeover's commands (QoS 1) on the director's `client`; they wait in the spare's
    session. Called after `prepare` and after the plugin's round trips of the assignment, so the
    broker has long closed the preparing connection (a message published while it was still open
    would be handed to it, not queued)."""
    for cmd in commands:
        info = client.publish(topics.table(hall, table, "cmd"), json.dumps(cmd), qos=1)
        info.wait_for_publish(TIMEOUT_S)
