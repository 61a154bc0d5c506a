"""A table clock with a keypad as the hall sees it (issue 27, the wire contract of docs/hall.md "The
paperless table"): it logs in to the real broker with its own table's credentials and publishes what a
clock publishes, each message written by the clock's own payload functions (hall.wire.payloads) from
the real clock core (game.clock): its status, its state, each input as its journal line (a press,
a check-in with the number typed, a call), its result, and the signed slip. It takes the console's
commands on its cmd topic, acks each as a clock does, and journals (publishes as an input from the
hall) the call answers it applies. The clock side's own code (its keypad, its screens) is the clock's
helpers'; this is the other end of the console's tests, held to the same schemas (hall.wire.messages).

Time: the core runs on this object's own monotonic count (`t_ns`), moved on by `after_s`; the wall
times it publishes are the machine's, as a clock's are.
"""

from __future__ import annotations

import json
import threading
import time

from rackside.game import clock as C
from rackside.game.call import SIDE, Call
from rackside.game.journal import input_to_dict
from rackside.hall.wire import messages, payloads, topics


class KeypadClock:
    def __init__(self, broker, n: int, rules: C.Rules | None = None, game_no: int = 1, status: bytes = b"online") -> None:
        self.n, self.hall = n, broker.hall
        # its retained status while online: the bare word (a clock of before issue 26), or the JSON object
        # of hall.wire.health.status_payload, whose `takes` says which later command fields it takes
        self.status = status
        self.rules = rules or C.Rules()
        self.clock = C.new_clock(self.rules)
        self.game = f"game-{game_no:06d}"
        self.seq = 0
        self.t_ns = 10**12
        self.calls = 0
        self.numbers: list = [None, None]  # checked in at side 1, side 2 (the clock keeps them for the slip)
        self.commands: list[dict] = []  # every command the console sent, in order
        self.lock = threading.Lock()
        self._connect(broker)

    def _connect(self, broker) -> None:
        """Its own connection to the broker (support.inproc.InProcessClock has none: it hands its
        messages to an in-process console)."""
        n = self.n
        # its Last Will, and "online" again on every reconnect, as hall.net.link (a copied card that takes
        # its client id over makes the broker close this connection and publish the Will: issue 36)
        self.client = broker.client(topics.table_user(n), will=(self.topic("status"), b"offline"))
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_cmd
        self.client.subscribe(topics.table(self.hall, n, "cmd"), qos=1)
        from support.broker import ping

        ping(self.client)  # subscribed before the console may send anything

    def _on_connect(self, client, *args) -> None:  # paho's thread: a reconnect (subscribed again, then "online")
        client.subscribe(self.topic("cmd"), qos=1)
        client.publish(self.topic("status"), self.status, qos=1, retain=True)

    def topic(self, leaf: str) -> str:
        return topics.table(self.hall, self.n, leaf)

    def _publish(self, leaf: str, payload: bytes, retain: bool = False, wait: bool = True):
        """`wait`: until the broker has it (never on paho's own thread: its PUBACK comes there);
        returns the publish's info (to wait on later: never while holding `self.lock`)."""
        if leaf != "status":
            d = json.loads(payload)
            messages.schema_of(leaf, d).check(d)  # what the console's contract reads it with
        return self._send(leaf, payload, retain, wait)

    def _send(self, leaf: str, payload: bytes, retain: bool, wait: bool):
        info = self.client.publish(self.topic(leaf), payload, qos=1, retain=retain)
        if wait:
            info.wait_for_publish(10)
        return info

    # --- what a clock publishes --------------------------------------------------------------------

    def online(self) -> "KeypadClock":
        self._publish("status", self.status, retain=True)
        self.state()
        return self

    def offline(self) -> None:
        self._publish("status", b"offline", retain=True)

    def state(self) -> None:
        v = C.view(self.clock, self.t_ns)
        self._publish("state", payloads.state_payload(v, self.game, self.seq, time.time_ns(), self.rules, keypad=True), retain=True)

    def _event(self, line: dict, wait: bool = True) -> int:
        with self.lock:
            self.seq += 1
            seq = self.seq
            # queued under the lock: the events leave in their seq's order; its PUBACK is waited for
            # outside it, for the PUBACK comes on paho's thread, which may itself be waiting for the
            # lock in _on_cmd (a call_ack's journal line): waiting under it stalled both for 10 s
            info = self._publish("event", payloads.event_payload(line, self.game, seq, time.time_ns()), wait=False)
        if wait:
            info.wait_for_publish(10)
        return seq

    def after(self, s: float) -> int:
        self.t_ns += int(s * 1e9)
        return self.t_ns

    def checkin(self, side: int, number: int) -> None:
        """A player typed `number` and pressed their own button (`side`): their arrival (2.3.1(b))."""
        self._event({"t_ns": self.after(1), "input": "checkin", "player": side, "number": number})
        self.numbers[side - 1] = number

    def wrong_table(self, side: int) -> None:
        """The console's `seat` answer: that side is not checked in (the clock shows where to go)."""
        self.numbers[side - 1] = None

    def apply(self, event) -> None:
        self.clock = C.apply(self.clock, event)
        self._event(input_to_dict(event))

    def press(self, side: int, after_s: float = 1.0) -> None:
        self.apply(C.Press(self.after(after_s), side))

    def end(self, after_s: float = 1.0) -> dict:
        """The game's end (both players agree it is over), its result published as a clock does."""
        self.apply(C.End(self.after(after_s)))
        v = C.view(self.clock, self.t_ns)
        payload = payloads.result_payload(v, self.game, time.time_ns())
        self._publish("event", payload)
        self._publish("result", payload, retain=True)
        self.state()
        return json.loads(payload)

    def call(self, side: int | None, how: str | None = SIDE) -> str:
        """A call for the director: `#` held with a side's own button (SIDE), `#` held alone (KEYPAD:
        no side), the three buttons' gesture (BUTTONS: no side), or None: an older clock's, which
        says neither (game.call)."""
        with self.lock:
            self.calls += 1
            call = f"call-{self.calls}"
        if side is None and how == SIDE:
            raise ValueError("a call from a side names the side")
        self._event(input_to_dict(Call(self.after(1), side, call, how)))
        return call

    def slip(self, scores: tuple[int, int], penalties: tuple[int, int] | None = None, numbers=None) -> dict:
        """Both players signed the scores the winner typed (5.4.1, 5.4.2): the clock's slip, its own
        penalties (unless `penalties` says otherwise: a slip that disagrees)."""
        v = C.view(self.clock, self.t_ns)
        pen = list(penalties) if penalties is not None else [p.penalty for p in v.players]
        # the second signature's input event, and the slip with its seq, right after it (docs/hall.md),
        # as firmware.cli.Clock publishes them
        seq = self._event({"t_ns": self.after(1), "input": "slip_sign", "player": 2})
        with self.lock:
            slip = {"kind": "slip", "game": self.game, "seq": seq, "scores": list(scores), "penalties": pen,
                    "final": [scores[0] - pen[0], scores[1] - pen[1]],
                    "numbers": list(self.numbers if numbers is None else numbers), "at": payloads.iso(time.time_ns())}
            info = self._publish("event", payloads.dumps(slip), wait=False)
        info.wait_for_publish(10)  # outside the lock, as _event's
        return slip

    # --- the console's commands --------------------------------------------------------------------

    def _on_cmd(self, client, userdata, msg) -> None:
        cmd = json.loads(msg.payload)
        self.commands.append(cmd)
        seq = None
        if cmd.get("cmd") in ("call_ack", "call_resolve"):  # journalled as inputs from the hall (paperless.md)
            line = {"t_ns": self.after(0.1), "input": cmd["cmd"], "call": cmd["call"], "source": "hall",
                    "command": cmd["id"], "by": cmd.get("by")}
            if cmd.get("reason"):
                line["reason"] = cmd["reason"]
            seq = self._event(line, wait=False)
        ack = payloads.ack_payload(cmd.get("id"), True, None, seq, time.time_ns())
        client.publish(self.topic("ack"), ack, qos=1)

    def sent(self, name: str) -> list[dict]:
        return [c for c in list(self.commands) if c.get("cmd") == name]

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()
