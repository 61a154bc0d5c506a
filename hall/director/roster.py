"""What the broker holds about the hall's devices, as the director reads it: every device's hello
and the director's reply to it, every table's and station's status, every table's last state. The
state of enrolment, kept in one place with one lock (hall.director.fleet acts on it).

A device is its key (hall.wire.join): a row per key id, never per device id, so a hello can never
replace another device's hello; it can only be another row, with another code. What arrives:

    enrol/<key id>          a hello: taken only if its key is the one its topic names. A row is
                            updated by its own key's hellos; an empty one removes a row only the
                            director has never answered.
    enrol/<key id>/reply    the director's own reply (only the director may write it): the device
                            it numbered or revoked, listed always, even with no hello kept (a hall
                            restarted, a hello flood) — what the hall has seen before stays listed
    table/<n>/status, station/<id>/status, table/<n>/state

Bounds: at most MAX_WAITING rows the director has not answered; hellos arriving live (not the
retained ones a new subscription is handed) make new rows at most HELLO_RATE a second, with bursts
of HELLO_BURST (enough for a hall's 200 clocks switched on at once); the rest are dropped, logged
once, and the device says hello again later (hall.device.enrol.HELLO_EVERY_S). Rows the director has
answered are bounded by the plugin's clients (a table or station each) and the director's removals.
Two rows showing one code are both flagged (`clash`): hall.director.fleet assigns neither.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from rackside.hall.director import takeover
from rackside.hall.wire import health, join, topics

log = logging.getLogger(__name__)

MAX_WAITING = 1000  # rows not yet answered: a hall has at most 999 tables and a few stations
MAX_ANSWERED = 4000  # rows the director answered (numbered, revoked): removals bring it down
HELLO_RATE = 20.0  # new rows a second from live hellos, after a burst of
HELLO_BURST = 400


@dataclass
class Device:
    hello: join.Hello  # who it is: its own hello, else what the director's reply recorded
    user: str | None = None  # what the last reply gave it
    revoked: bool = False
    answered: bool = False  # the director has replied to it: always listed
    has_hello: bool = False  # its hello is on the broker
    seen: float = field(default_factory=time.time)  # when it first said hello


class Roster:
    def __init__(self, hall: str, client) -> None:
        """`client`: a connected paho client of the director's, its loop running. Subscribes to
        what it reads; the caller's next subscription's SUBACK means the retained ones arrived."""
        self.hall = hall
        self.lock = threading.RLock()  # reentrant: a wait's predicate may call rows()
        self.changed = threading.Condition(self.lock)
        self.devices: dict[str, Device] = {}  # key id -> its row
        self.online: dict[str, bool] = {}  # user -> its retained status says online
        self.states: dict[int, bytes] = {}  # table -> its last retained state (at most 999, each at most takeover.MAX_STATE_BYTES)
        self._tokens = float(HELLO_BURST)
        self._filled = time.monotonic()
        self._dropped_logged = False
        self._bad_logged = 0
        root = topics.hall_root(hall)
        subscriptions = {
            f"{root}/enrol/+": self._on_hello,
            f"{root}/enrol/+/reply": self._on_reply,
            f"{root}/table/+/status": self._on_status,
            f"{root}/station/+/status": self._on_status,
            f"{root}/table/+/state": self._on_state,
        }
        for t, callback in subscriptions.items():
            client.message_callback_add(t, callback)
        for t in subscriptions:
            client.subscribe(t, qos=1)

    # --- paho's thread -----------------------------------------------------------------------------

    def _admit(self) -> bool:
        """One more new row from a live hello (the token bucket of HELLO_RATE, HELLO_BURST)."""
        now = time.monotonic()
        self._tokens = min(float(HELLO_BURST), self._tokens + (now - self._filled) * HELLO_RATE)
        self._filled = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    def _drop(self, why: str) -> None:
        if not self._dropped_logged:
            log.error("hellos dropped (%s): those devices are listed when they say hello again", why)
            self._dropped_logged = True

    def _bad(self, message: str) -> None:
        self._bad_logged += 1
        if self._bad_logged <= 10 or self._bad_logged % 1000 == 0:  # a flood of forged hellos does not flood the log
            log.warning("%s (%d refused so far)", message, self._bad_logged)

    def _on_hello(self, client, userdata, msg) -> None:
        kid = msg.topic.split("/")[-1]
        with self.lock:
            d = self.devices.get(kid)
            if not msg.payload:  # a retained hello cleared
                if d is not None:
                    if d.answered:
                        d.has_hello = False
                    else:
                        del self.devices[kid]
                    self.changed.notify_all()
                return
            try:
                hello = join.parse_hello(kid, msg.payload)
            except ValueError as e:
                self._bad(str(e))
                return
            if d is None:
                if sum(1 for x in self.devices.values() if not x.answered) >= MAX_WAITING:
                    return self._drop(f"{MAX_WAITING} devices are waiting")
                if not msg.retain and not self._admit():
                    return self._drop(f"more than {HELLO_RATE:.0f} new devices a second")
                d = self.devices[kid] = Device(hello)
            d.hello, d.has_hello = hello, True  # its own key's: the same device, whatever it now says
            self.changed.notify_all()

    def _on_reply(self, client, userdata, msg) -> None:
        kid = msg.topic.split("/")[-2]
        with self.lock:
            d = self.devices.get(kid)
            if not msg.payload:  # the director removed the device
                if d is not None:
                    d.answered, d.user, d.revoked = False, None, False
                    if not d.has_hello:
                        del self.devices[kid]
                    self.changed.notify_all()
                return
            try:
                reply = join.parse_reply(kid, msg.payload)
            except ValueError as e:
                self._bad(f"reply on {kid[:40]}: {e}")
                return
            if d is None:
                if sum(1 for x in self.devices.values() if x.answered) >= MAX_ANSWERED:
                    return self._drop(f"{MAX_ANSWERED} devices answered")
                d = self.devices[kid] = Device(reply.hello)
            self._answer(d, reply.user)

    def answered(self, kid: str, hello: join.Hello, user: str | None) -> None:
        """What the director's reply says, known now (the broker's echo comes later)."""
        with self.lock:
            d = self.devices.get(kid)
            if d is None:
                d = self.devices[kid] = Device(hello)
            self._answer(d, user)

    def _answer(self, d: Device, user: str | None) -> None:
        d.answered, d.user, d.revoked = True, user, user is None
        self.changed.notify_all()

    def forget(self, kid: str) -> None:
        with self.lock:
            self.devices.pop(kid, None)
            self.changed.notify_all()

    def _on_status(self, client, userdata, msg) -> None:
        parts = topics.parse(msg.topic)
        if parts is None:
            return
        _, kind, ident, _ = parts
        self.set_online(f"{kind}-{ident}", health.is_online(msg.payload))  # the bare word, or with the health

    def set_online(self, user: str, online: bool) -> None:
        with self.lock:
            self.online[user] = online
            self.changed.notify_all()

    def _on_state(self, client, userdata, msg) -> None:
        parts = topics.parse(msg.topic)
        if parts is None or not parts[2].isdigit() or len(msg.payload) > takeover.MAX_STATE_BYTES:
            return
        n = int(parts[2])
        if 1 <= n <= topics.MAX_TABLE:
            with self.lock:
                self.states[n] = msg.payload

    # --- the director's ----------------------------------------------------------------------------

    def rows(self) -> list[dict]:
        """Every device listed: waiting first (oldest first: a row made up later cannot jump ahead
        of the device in front of the director), then by table or station."""
        with self.lock:
            codes: dict[str, int] = {}
            for d in self.devices.values():
                codes[d.hello.code] = codes.get(d.hello.code, 0) + 1
            out = []
            for kid, d in self.devices.items():
                h = d.hello
                kind, ident = topics.parse_user(d.user) if d.user else (None, None)
                out.append({
                    "key": kid, "device": h.device, "kind": h.kind, "code": h.code, "code_text": join.code_text(h.code),
                    "version": h.version, "address": h.address,
                    "state": "revoked" if d.revoked else ("enrolled" if d.user else "waiting"),
                    "user": d.user, "table": int(ident) if kind == "table" else None,
                    "station": ident if kind == "station" else None,
                    "online": bool(d.user and self.online.get(d.user)),
                    # a device waiting for its number is on the broker as the join client while its
                    # hello is (its Last Will clears it: hall.device.enrol)
                    "connected": bool(d.user and self.online.get(d.user)) if d.user else d.has_hello,
                    "asks": h.asks,  # the table its own menu asked for: the director confirms or not
                    "clash": codes[h.code] > 1,  # another device shows this code: neither is assigned
                    "hello": d.has_hello, "seen": d.seen,
                })
        return sorted(out, key=lambda r: (r["state"] == "enrolled", r["table"] or 0, r["station"] or "", r["seen"], r["key"]))

    def with_code(self, code: str) -> list[tuple[str, Device]]:
        with self.lock:
            return [(kid, d) for kid, d in self.devices.items() if d.hello.code == code]

    def holder(self, user: str) -> str | None:
        """The key id of the device the director's replies give `user` (its current device)."""
        with self.lock:
            for kid, d in self.devices.items():
                if d.user == user:
                    return kid
        return None

    def wait(self, predicate, timeout: float) -> bool:
        """Wait until predicate(self) holds (called under the lock)."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)
            return True
