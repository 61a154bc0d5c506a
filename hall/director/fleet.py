"""The director's side of enrolment: assigning, renumbering, revoking and removing devices through
the broker's dynamic-security plugin. What the broker holds (hellos, replies, statuses) is
hall.director.roster's; a spare's takeover is left with the broker by hall.director.handover.

Assigning names the code the director reads off the device (hall.wire.join.code, from the device's
own key), never a device id: the one row showing that code gets table 12. The plugin client
`table-12` is made with a new random password and a client id with a random tail (`table-12-…`),
both sealed to that row's key (hall.wire.devicekey) in the device's retained reply, so only the
device holding the key can log in as table 12. Two rows showing one code are both refused until the
director removes one. A table held by another device that is online is refused unless `replace`:
then the other device's client is deleted (the plugin disconnects it), and its reply says it was
revoked, so it comes back as a waiting device and its login is refused; a game under way on the
table is taken over by the spare (hall.director.takeover, hall.director.handover). Renumbering
deletes the device's old client first. Removing a device revokes it and clears its hello and reply.

One director action at a time (`acting`): two at once could both find a table free.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time

from rackside.hall.director import dynsec, handover, takeover
from rackside.hall.director.dynsec_api import Control, ControlError
from rackside.hall.director.roster import Device, Roster
from rackside.hall.wire import devicekey, join, topics

log = logging.getLogger(__name__)


class FleetError(ValueError):
    """An assignment or revocation refused, worded for the director."""


class Fleet:
    def __init__(self, hall: str, client, *, connect_as=None) -> None:
        """`client`: a connected paho client of the director's, its loop running. `connect_as(client_id)`:
        another director login with that client id and a persistent session (hall.net.client.connect),
        for a spare's takeover; without it a spare starts its game afresh."""
        self.hall = hall
        self.client = client
        self.connect_as = connect_as
        self.acting = threading.Lock()
        self.roster = Roster(hall, client)
        self.control = Control(client)  # subscribes last: once it answers, the retained messages above have arrived

    def rows(self) -> list[dict]:
        return self.roster.rows()

    def wait(self, predicate, timeout: float) -> bool:
        return self.roster.wait(predicate, timeout)

    def _one(self, ref: str) -> tuple[str, Device]:
        """The row `ref` names: its key id, or a code only one row shows."""
        ref = str(ref).strip()
        if join.KEY_ID.match(ref):
            d = self.roster.devices.get(ref)
            if d is None:
                raise FleetError(f"no device with key {ref}")
            return ref, d
        try:
            code = join.normal_code(ref)
        except ValueError as e:
            raise FleetError(f"{e}, or a device's key as the list shows it") from None
        found = self.roster.with_code(code)
        if not found:
            raise FleetError(f"no device shows code {join.code_text(code)} (is it on, with the hall's join file?)")
        if len(found) > 1:
            raise FleetError(f"{len(found)} devices show code {join.code_text(code)} (flagged): remove the ones that are "
                             f"not the device in front of you (by their key) before assigning it")
        return found[0]

    def assign(self, code: str, ident: int | str, *, replace: bool = False) -> str:
        """Give the device showing `code` table `ident` (a clock) or station `ident` (a station); its user name."""
        with self.acting:
            try:
                join.normal_code(code)
            except ValueError as e:
                raise FleetError(str(e)) from None
            return self._assign(*self._one(code), ident, replace)

    def _assign(self, kid: str, d: Device, ident: int | str, replace: bool) -> str:
        hello = d.hello
        kind = join.KINDS[hello.kind]
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
        holder = self.roster.holder(user)
        if holder == kid:
            return user  # already: nothing to do
        with self.roster.lock:
            online = self.roster.online.get(user)
            previous = d.user
            holder_row = self.roster.devices.get(holder) if holder else None
        if holder is not None and online and not replace:
            name = holder_row.hello.device if holder_row else holder
            raise FleetError(f"{user.replace('-', ' ')} is held by device {name}, online: choose replace to give it to "
                             f"{hello.device} (code {join.code_text(hello.code)})")
        password, client_id = secrets.token_urlsafe(24), dynsec.client_id(user)
        try:
            sealed = devicekey.seal(hello.key, join.sealed_login(password, client_id))
        except devicekey.DeviceKeyError as e:
            raise FleetError(f"device {hello.device}'s key cannot be used ({e}): remove it") from None
        cmds = self._takeover_commands(int(ident), holder_row, hello) if kind == "table" and holder_row else []
        if cmds:
            try:
                handover.prepare(self.connect_as, self.hall, int(ident), client_id)
            except (handover.HandoverError, ConnectionError, OSError) as e:
                log.error("table %s: the spare's takeover could not be left with the broker (%s): it starts afresh", ident, e)
                cmds = []
        text = f"{dynsec.ENROLLED_TEXT} {hello.device} key {kid}"
        try:
            if previous and previous != user:
                self.control.run(dynsec.delete_device(previous), ignore=("not found",))  # renumbered: its old login goes
            # whoever held it (or provisioning, or a crash) is disconnected and refused from now on
            self.control.run(dynsec.delete_device(user) + dynsec.create_device(self.hall, user, password, client_id, text=text),
                             ignore=("not found",))
        except ControlError as e:
            raise FleetError(f"the broker refused: {e}") from None
        for gone in {previous, user if holder is not None else None} - {None}:
            self._offline(gone)  # its device was disconnected by the plugin, so no Last Will says it
        if holder_row is not None:
            self._reply(holder, holder_row.hello, None, f"replaced by device {hello.device}")
        self._reply(kid, hello, user, sealed=sealed)
        log.info("device %s (code %s) is now %s%s", hello.device, join.code_text(hello.code), user,
                    f" (replacing device {holder_row.hello.device})" if holder_row else "")
        if cmds:
            handover.send(self.client, self.hall, int(ident), cmds)
            log.info("table %s: device %s continues %s", ident, hello.device, cmds[0]["reason"])
        return user

    def _takeover_commands(self, n: int, old: Device, new: join.Hello) -> list[dict]:
        """The spare continues the table's game (hall.director.takeover), if one is under way."""
        if self.connect_as is None:
            log.warning("table %d: no way to leave a takeover with the broker here: device %s starts afresh", n, new.device)
            return []
        with self.roster.lock:
            state = self.roster.states.get(n, b"")
        try:
            return takeover.commands(state, table=n, old_device=old.hello.device, new_device=new.device,
                                     stamp=f"{new.device}-{time.time_ns()}")
        except takeover.NothingToTakeOver as e:
            log.warning("%s: device %s starts afresh", e, new.device)
            return []

    def revoke(self, ref: str) -> None:
        """Disconnect the device `ref` names (its code, or key) and refuse its login from now on; it shows it is waiting again."""
        with self.acting:
            kid, d = self._one(ref)
            self._revoke(kid, d)
            self._reply(kid, d.hello, None, "revoked by the director")

    def _revoke(self, kid: str, d: Device) -> None:
        if d.user:
            try:
                self.control.run(dynsec.delete_device(d.user), ignore=("not found",))
            except ControlError as e:
                raise FleetError(f"the broker refused: {e}") from None
            self._offline(d.user)
            log.info("device %s revoked (was %s)", d.hello.device, d.user)

    def remove(self, ref: str) -> None:
        """Revoke the device `ref` names and clear its hello and reply: it is no longer listed (a device
        still running says hello again, and is listed again as waiting)."""
        with self.acting:
            kid, d = self._one(ref)
            self._revoke(kid, d)
            for topic in (topics.enrol_reply(self.hall, kid), topics.enrol_hello(self.hall, kid)):
                self.client.publish(topic, b"", qos=1, retain=True).wait_for_publish(5)
            self.roster.forget(kid)
            log.info("device %s (key %s) removed", d.hello.device, kid)

    def remove_waiting(self) -> int:
        """Remove every row the director never answered (a flood of made-up hellos, say), clearing
        their retained hellos; how many. Real devices still waiting say hello again and are listed."""
        with self.acting:
            with self.roster.lock:
                kids = [kid for kid, d in self.roster.devices.items() if not d.answered]
            infos = [self.client.publish(topics.enrol_hello(self.hall, kid), b"", qos=1, retain=True) for kid in kids]
            for kid, info in zip(kids, infos):
                info.wait_for_publish(5)
                self.roster.forget(kid)
            log.info("%d waiting devices removed", len(kids))
            return len(kids)

    def _offline(self, user: str) -> None:
        """A device the plugin disconnected sends no Last Will (its client is gone): say it here."""
        self.roster.set_online(user, False)
        kind, ident = topics.parse_user(user)
        topic = topics.table(self.hall, int(ident), "status") if kind == "table" else topics.station(self.hall, ident, "status")
        self.client.publish(topic, b"offline", qos=1, retain=True).wait_for_publish(5)

    def _reply(self, kid: str, hello: join.Hello, user: str | None, reason: str = "", *, sealed: bytes = b"") -> None:
        payload = join.reply_payload(hello, user, sealed=sealed, reason=reason)
        self.client.publish(topics.enrol_reply(self.hall, kid), payload, qos=1, retain=True).wait_for_publish(5)
        self.roster.answered(kid, hello, user)  # what the broker will echo back; known now so the next call sees it
