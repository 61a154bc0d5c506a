"""The director's side of enrolment: the devices waiting for a number and those holding one, and
assigning, renumbering and revoking them through the broker's dynamic-security plugin.

What it knows comes from the broker itself, so a restarted console or `rackside hall devices` in
another shell sees the same: every device's retained hello (`enrol/<device-id>`, read only by the
director), every retained reply (`enrol/<device-id>/reply`: which user the device now is), and every
table's and station's retained status (online / offline).

Assigning table 12 to a device creates the plugin client `table-12`, bound to client id `table-12`,
whose password is the secret the device sent in its hello (so no password ever travels to a device),
with the role of table 12's topics; then the device's reply says `table-12`. A table held by another
device that is online is refused unless `replace`: then the other device's client is deleted (the
plugin disconnects it), and its reply says it was revoked, so it comes back as a waiting device and
its login is refused. Renumbering deletes the device's old client first. One owning lock: the paho
thread records what arrives, callers (the console's handlers, the CLI) read and act under it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass

from rackside.hall.director import dynsec, takeover
from rackside.hall.wire import health, join, topics
from rackside.hall.director.dynsec_api import Control, ControlError

log = logging.getLogger(__name__)

TAKEOVER_WAIT_S = 120  # how long a spare may take to come online as its table before its times are set
MAX_DEVICES = 2000  # hellos kept; more are refused (logged once): a hall has at most 999 tables and a few stations


class FleetError(ValueError):
    """An assignment or revocation refused, worded for the director."""


@dataclass
class Device:
    hello: join.Hello
    user: str | None = None  # what the last reply gave it
    revoked: bool = False
    seen: float = 0.0  # when its hello arrived (time.time)


class Fleet:
    def __init__(self, hall: str, client) -> None:
        """`client`: a connected paho client of the director's, its loop running."""
        self.hall = hall
        self.client = client
        self.lock = threading.Lock()  # what arrives (paho's thread) and what the director reads
        self.acting = threading.Lock()  # one assignment or revocation at a time
        self.devices: dict[str, Device] = {}
        self.replies: dict[str, str | None] = {}  # device -> user (None: revoked), from retained replies
        self.online: dict[str, bool] = {}  # user -> its retained status says online
        self.states: dict[int, bytes] = {}  # table -> its last retained state (at most 999, each at most takeover.MAX_STATE_BYTES)
        self._full_logged = False
        self.changed = threading.Condition(self.lock)
        root = topics.hall_root(hall)
        client.message_callback_add(f"{root}/enrol/+", self._on_hello)
        client.message_callback_add(f"{root}/enrol/+/reply", self._on_reply)
        client.message_callback_add(f"{root}/table/+/status", self._on_status)
        client.message_callback_add(f"{root}/station/+/status", self._on_status)
        client.message_callback_add(f"{root}/table/+/state", self._on_state)
        for t in (f"{root}/enrol/+", f"{root}/enrol/+/reply", f"{root}/table/+/status", f"{root}/station/+/status",
                  f"{root}/table/+/state"):
            client.subscribe(t, qos=1)
        self.control = Control(client)  # subscribes last: once it answers, the retained messages above have arrived

    # --- paho's thread -----------------------------------------------------------------------------

    def _on_hello(self, client, userdata, msg) -> None:
        device = msg.topic.split("/")[-1]
        with self.lock:
            if not msg.payload:  # a retained hello cleared
                self.devices.pop(device, None)
                self.changed.notify_all()
                return
            try:
                hello = join.parse_hello(device, msg.payload)
            except ValueError as e:
                log.warning("%s", e)
                return
            if device not in self.devices and len(self.devices) >= MAX_DEVICES:
                if not self._full_logged:
                    log.error("more than %d devices said hello: the rest are not listed", MAX_DEVICES)
                    self._full_logged = True
                return
            old = self.devices.get(device)
            self.devices[device] = Device(hello, seen=time.time())
            if old is not None and old.hello.secret == hello.secret:
                self.devices[device].user, self.devices[device].revoked = old.user, old.revoked
            self._apply_reply(device)
            self.changed.notify_all()

    def _on_reply(self, client, userdata, msg) -> None:
        device = msg.topic.split("/")[-2]
        with self.lock:
            try:
                join.check_device_id(device)
                self.replies[device] = join.parse_reply(msg.payload) if msg.payload else None
            except ValueError as e:
                log.warning("reply to %s: %s", device, e)
                return
            self._apply_reply(device)
            self.changed.notify_all()

    def _apply_reply(self, device: str) -> None:
        d = self.devices.get(device)
        if d is not None and device in self.replies:
            d.user = self.replies[device]
            d.revoked = d.user is None

    def _on_status(self, client, userdata, msg) -> None:
        parts = topics.parse(msg.topic)
        if parts is None:
            return
        _, kind, ident, _ = parts
        with self.lock:
            self.online[f"{kind}-{ident}"] = health.is_online(msg.payload)  # the bare word, or with the health
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
        """Every device that said hello: waiting first, then by table or station."""
        with self.lock:
            out = []
            for device, d in self.devices.items():
                h = d.hello
                kind, ident = topics.parse_user(d.user) if d.user else (None, None)
                out.append({
                    "device": device, "kind": h.kind, "code": h.code, "version": h.version, "address": h.address,
                    "state": "revoked" if d.revoked else ("enrolled" if d.user else "waiting"),
                    "user": d.user, "table": int(ident) if kind == "table" else None,
                    "station": ident if kind == "station" else None,
                    "online": bool(d.user and self.online.get(d.user)),
                    "asks": h.asks,  # the table its own menu asked for: the director confirms or not
                })
        return sorted(out, key=lambda r: (r["state"] == "enrolled", r["table"] or 0, r["station"] or "", r["device"]))

    def holder(self, user: str) -> str | None:
        """The device whose reply gives it `user` (a table's or station's current device)."""
        for device, u in self.replies.items():
            if u == user:
                return device
        return None

    def assign(self, device: str, ident: int | str, *, replace: bool = False) -> str:
        """Give `device` table `ident` (a clock) or station `ident` (a station); its user name."""
        with self.acting:  # one director action at a time: two at once could both find a table free
            return self._assign(device, ident, replace)

    def _assign(self, device: str, ident: int | str, replace: bool) -> str:
        with self.lock:
            d = self.devices.get(device)
            if d is None:
                raise FleetError(f"device {device!r} has not said hello (is it on, with the hall's join file?)")
            kind = join.KINDS[d.hello.kind]
            if kind == "table":
                if isinstance(ident, str) and ident.strip().isdigit():
                    ident = int(ident)
                if isinstance(ident, bool) or not isinstance(ident, int) or not 1 <= ident <= topics.MAX_TABLE:
                    raise FleetError(f"table {ident!r}: allowed are whole numbers from 1 to {topics.MAX_TABLE}")
                user = topics.table_user(ident)
            else:
                try:
                    user = topics.station_user(topics.check_name("station", str(ident)))
                except ValueError as e:
                    raise FleetError(str(e)) from None
            holder = self.holder(user)
            if holder == device and d.user == user:
                return user  # already: nothing to do
            if holder is not None and holder != device and self.online.get(user) and not replace:
                raise FleetError(f"{user.replace('-', ' ')} is held by device {holder}, online: choose replace to give it to {device}")
            secret = d.hello.secret
            previous = d.user
        try:
            if previous and previous != user:
                self.control.run(dynsec.delete_device(previous), ignore=("not found",))  # renumbered: its old login goes
            if holder is None and previous != user:
                try:  # the usual case, a table nobody holds: made in one exchange
                    self.control.run(dynsec.create_device(self.hall, user, secret))
                    created = True
                except ControlError as e:
                    if "already exists" not in str(e):
                        raise
                    created = False  # made up front by provisioning (or left by a crash): replaced below
            else:
                created = False
            if not created:  # whoever held it: disconnected and refused from now on
                self.control.run(dynsec.delete_device(user) + dynsec.create_device(self.hall, user, secret), ignore=("not found",))
        except ControlError as e:
            raise FleetError(f"the broker refused: {e}") from None
        for gone in {previous, user if holder not in (None, device) else None} - {None}:
            self._offline(gone)  # its device was disconnected by the plugin, so no Last Will says it
        if holder is not None and holder != device:
            self._reply(holder, None, f"replaced by device {device}")
        self._reply(device, user)
        log.info("device %s is now %s%s", device, user, f" (replacing device {holder})" if holder and holder != device else "")
        if holder is not None and holder != device and kind == "table":
            self._take_over(int(ident), user, holder, device)
        return user

    def _take_over(self, n: int, user: str, old: str, new: str) -> None:
        """The spare continues the table's game: once it is online as the table, the commands of
        hall.director.takeover (a new game, each player's time exactly as the last state had it)."""
        with self.lock:
            state = self.states.get(n, b"")
        try:
            cmds = takeover.commands(state, table=n, old_device=old, new_device=new, stamp=f"{new}-{time.time_ns()}")
        except takeover.NothingToTakeOver as e:
            log.warning("%s: device %s starts afresh", e, new)
            return

        def send() -> None:
            if not self.wait(lambda f: f.online.get(user), TAKEOVER_WAIT_S):
                log.error("table %d: device %s did not come online in %d s: its times were not set (adjust them by hand)",
                          n, new, TAKEOVER_WAIT_S)
                return
            for cmd in cmds:
                self.client.publish(topics.table(self.hall, n, "cmd"), json.dumps(cmd), qos=1)
            log.warning("table %d: device %s continues %s", n, new, cmds[0]["reason"])

        threading.Thread(target=send, name=f"takeover-{n}", daemon=True).start()

    def revoke(self, device: str) -> None:
        """Disconnect `device` and refuse its login from now on; it shows it is waiting again."""
        with self.acting:
            self._revoke(device)

    def _revoke(self, device: str) -> None:
        with self.lock:
            d = self.devices.get(device)
            user = d.user if d is not None else self.replies.get(device)
        if user is None and d is None:
            raise FleetError(f"device {device!r} has not said hello")
        if user:
            try:
                self.control.run(dynsec.delete_device(user), ignore=("not found",))
            except ControlError as e:
                raise FleetError(f"the broker refused: {e}") from None
            self._offline(user)
        self._reply(device, None, "revoked by the director")
        log.warning("device %s revoked%s", device, f" (was {user})" if user else "")

    def _offline(self, user: str) -> None:
        """A device the plugin disconnected sends no Last Will (its client is gone): say it here."""
        with self.lock:
            self.online[user] = False  # known now: a takeover waits for the new device's "online"
        kind, ident = topics.parse_user(user)
        topic = topics.table(self.hall, int(ident), "status") if kind == "table" else topics.station(self.hall, ident, "status")
        self.client.publish(topic, b"offline", qos=1, retain=True).wait_for_publish(5)

    def _reply(self, device: str, user: str | None, reason: str = "") -> None:
        info = self.client.publish(topics.enrol_reply(self.hall, device), join.reply_payload(user, reason=reason), qos=1, retain=True)
        info.wait_for_publish(5)
        with self.lock:  # what the broker will echo back; known now so the next call sees it
            self.replies[device] = user
            self._apply_reply(device)
            self.changed.notify_all()

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
