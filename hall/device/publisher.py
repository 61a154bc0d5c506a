"""Delivering an outbox (hall.device.outbox) over a Link, in order, at QoS 1: the clock's publisher and the
station's share this one unit.

Owned by one thread, the device's publisher thread, which calls `open`, `deliver` and `drain`. paho's
thread only posts to `inbox` (`on_ack`: a PUBACK's mid; `on_connected`), never touching the rows in
flight. `deliver()`:

- deletes the rows the broker acknowledged (a row is deleted only then: a crash re-sends it);
- after a reconnect, holds new rows back until paho's re-sent in-flight ones are acknowledged, so
  order is kept; if paho did not re-send them (a lost session) within RESEND_AFTER_S, hands them over
  again, oldest first (a late ack of the old ones is ignored; subscribers drop duplicates by key);
- hands the next rows to paho, at most WINDOW in flight (paho's and the broker's limit).

`drain()` at a clean stop waits briefly for the last acks, so nothing is re-sent after a restart.
"""

from __future__ import annotations

import queue
import time

from rackside.hall.net.link import Link
from rackside.hall.device.outbox import Outbox
from rackside.hall.device.owner import Owner

WINDOW = 50  # messages in flight at once: paho's and the broker's limit (max_inflight_messages)
RESEND_AFTER_S = 10.0  # after a reconnect, rows still unacknowledged this long are handed to paho again
DRAIN_S = 2.0
_CONNECTED = -1  # in the inbox: a (re)connect (mids are positive)


class OutboxPublisher:
    def __init__(self, *, window: int = WINDOW, resend_after_s: float = RESEND_AFTER_S) -> None:
        self.window = window
        self.resend_after_s = resend_after_s
        # paho's thread -> the owner: PUBACK mids (at most `window` in flight) and connects
        self.inbox: queue.SimpleQueue[int] = queue.SimpleQueue()
        self.owner = Owner("outbox publisher")
        self.outbox: Outbox | None = None
        self.link: Link | None = None
        self._inflight: dict[int, int] = {}  # mid -> outbox row id
        self._sent_upto = 0  # the last outbox row handed to paho in this process
        self._hold_since: float | None = None  # reconnected at; in-flight rows are being re-sent
        self.published = 0  # outbox rows acknowledged by the broker

    # --- paho's thread -----------------------------------------------------------------------------

    def on_ack(self, mid: int) -> None:
        self.inbox.put(mid)

    def on_connected(self) -> None:
        self.inbox.put(_CONNECTED)

    # --- the owner's thread ------------------------------------------------------------------------

    def open(self, outbox: Outbox, link: Link) -> None:
        self.owner.check()
        self.outbox, self.link = outbox, link

    @property
    def busy(self) -> bool:
        """Rows in flight: the owner polls often for their acks."""
        self.owner.check()
        return bool(self._inflight)

    def deliver(self, publish: bool = True) -> bool:
        """Delete what the broker acknowledged; hand paho the next rows. True when the link
        (re)connected since the last call (the owner publishes its retained state again)."""
        self.owner.check()
        done, connected = [], False
        while True:
            try:
                mid = self.inbox.get_nowait()
            except queue.Empty:
                break
            if mid == _CONNECTED:
                connected = True
                self._hold_since = time.monotonic()  # paho re-sends what was in flight first
                continue
            row = self._inflight.pop(mid, None)
            if row is not None:
                done.append(row)
        if done:
            self.outbox.delete(done)
            self.published += len(done)
        if not publish or not self.link.connected.is_set():
            return connected
        if self._hold_since is not None:
            if not self._inflight:
                self._hold_since = None
            elif time.monotonic() - self._hold_since > self.resend_after_s:
                self._sent_upto = min(self._inflight.values()) - 1
                self._inflight.clear()
                self._hold_since = None
            else:
                return connected
        room = self.window - len(self._inflight)
        if room > 0:
            for row_id, topic, payload, qos, retain in self.outbox.pending(self._sent_upto, room):
                mid = self.link.publish(topic, payload, qos=qos, retain=bool(retain))
                if mid is None:
                    break
                self._inflight[mid] = row_id
                self._sent_upto = row_id
        return connected

    def drain(self, seconds: float = DRAIN_S) -> None:
        """A clean stop: wait briefly for the last acks, so a restart re-sends nothing."""
        self.owner.check()
        deadline = time.monotonic() + seconds
        while self._inflight and self.link.connected.is_set() and time.monotonic() < deadline:
            time.sleep(0.02)
            self.deliver(publish=False)
