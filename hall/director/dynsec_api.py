"""The director's line to the broker's dynamic-security plugin: commands published on
`$CONTROL/dynamic-security/v1`, answers read from its `/response` topic, matched by the
`correlationData` each command carries (the plugin echoes it). Runs on a connected paho client of
the director's (its role may use the control topic, hall.director.dynsec); the caller's thread waits.
"""

from __future__ import annotations

import itertools
import json
import threading

from rackside.hall.director import dynsec

TIMEOUT_S = 5.0
MAX_PENDING = 256  # answers waited for at once; more is a caller's bug, refused rather than kept


class ControlError(RuntimeError):
    """The broker's dynamic-security plugin refused a command, or did not answer in time."""


class Control:
    def __init__(self, client) -> None:
        """`client`: a connected paho client logged in as the director, its loop running."""
        self.client = client
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[threading.Event, list]] = {}
        client.message_callback_add(dynsec.CONTROL_RESPONSE, self._on_response)
        # the SUBACK may arrive before subscribe() returns its mid: every SUBACK is noted meanwhile
        acked: set[int] = set()
        cond = threading.Condition()
        previous = client.on_subscribe

        def on_subscribe(c, u, m, rcs, p):
            with cond:
                acked.add(m)
                cond.notify_all()
            if previous is not None:
                previous(c, u, m, rcs, p)

        client.on_subscribe = on_subscribe
        try:
            mid = client.subscribe(dynsec.CONTROL_RESPONSE, qos=1)[1]
            with cond:
                if not cond.wait_for(lambda: mid in acked, TIMEOUT_S):
                    raise ControlError("the broker did not answer the subscription to the plugin's responses")
        finally:
            client.on_subscribe = previous

    def _on_response(self, client, userdata, msg) -> None:
        try:
            answers = json.loads(msg.payload).get("responses", [])
        except (ValueError, AttributeError):
            return
        with self._lock:
            for a in answers if isinstance(answers, list) else []:
                slot = self._waiting.get(a.get("correlationData")) if isinstance(a, dict) else None
                if slot is not None:
                    slot[1].append(a)
                    slot[0].set()

    def run(self, commands: list[dict], *, ignore: tuple[str, ...] = ()) -> list[dict]:
        """Send `commands` in one message and wait for every answer; ControlError names the first
        command the plugin refused, unless its error contains one of `ignore` (e.g. "not found")."""
        keys = []
        with self._lock:
            if len(self._waiting) + len(commands) > MAX_PENDING:
                raise ControlError("too many plugin commands waiting for answers")
            sent = []
            for cmd in commands:
                key = f"rackside-{next(self._ids)}"
                keys.append(key)
                self._waiting[key] = (threading.Event(), [])
                sent.append({**cmd, "correlationData": key})
        try:
            self.client.publish(dynsec.CONTROL, json.dumps({"commands": sent}), qos=1)
            answers = []
            for key, cmd in zip(keys, commands):
                event, got = self._waiting[key]
                if not event.wait(TIMEOUT_S):
                    raise ControlError(f"the broker's plugin did not answer {cmd['command']} in {TIMEOUT_S:.0f} s")
                a = got[0]
                err = a.get("error")
                if err and not any(x in str(err) for x in ignore):
                    raise ControlError(f"{cmd['command']}: {err}")
                answers.append(a)
            return answers
        finally:
            with self._lock:
                for key in keys:
                    self._waiting.pop(key, None)
