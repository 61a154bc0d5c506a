"""The clock's command intake: a director's command checked (hall.wire.commands), de-duplicated, and
settled with the broker, on the clock's hall worker thread (hall.device.clock_output), which owns it.

paho's thread only posts the raw command (with its manual-ack token) to the worker; here:

- a command is checked whole; a refused one is answered at once and never reaches the clock;
- a command whose id was answered before (a QoS 1 redelivery, also after a restart: `remember`
  seeds the answers from the outbox and the journals) is answered again, not applied again;
- one still being applied (its duplicate arrived meanwhile) waits for the first's answer;
- `answer(id, ack)` records the ack, `settle(id)` hands back the broker acknowledgements to send
  once that ack is in the outbox (a clock killed before that gets the command again);
- `resend` commands are rate-limited here (a token bucket: RESEND_BURST at once, then one every
  RESEND_EVERY_S), so nobody with the director's login keeps the card re-reading journals.

Bounded: ANSWERED_KEEP answers remembered (hall.device.outbox keeps as many on disk), at most MAX_PENDING
commands being applied at once (more are refused, saying so), tokens only for those.
"""

from __future__ import annotations

import collections
from typing import NamedTuple

from rackside.game.clock import Rules
from rackside.hall.wire import commands
from rackside.hall.device.outbox import ANSWERED_KEEP
from rackside.hall.device.owner import Owner

MAX_PENDING = 64  # commands applied at once: the broker sends a clock at most 50 unacknowledged
RESEND_BURST = 5
RESEND_EVERY_S = 2.0


class Refused(NamedTuple):
    id: str | None
    reason: str


class AnsweredBefore(NamedTuple):
    id: str
    ack: bytes


class Pending(NamedTuple):
    id: str


class Accepted(NamedTuple):
    command: commands.Command


class CommandIntake:
    def __init__(self) -> None:
        self.owner = Owner("command intake")
        self._answered: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._pending: set[str] = set()
        self._tokens: dict[str | None, list[tuple[int, int]]] = {}
        self._budget = float(RESEND_BURST)
        self._budget_at: float | None = None

    def remember(self, answers: dict[str, bytes]) -> None:
        """Answers given before this start (outbox, journals): a redelivery is answered again."""
        self.owner.check()
        for cid, ack in answers.items():
            self._answered.setdefault(cid, ack)
        self._trim()

    def receive(self, payload: bytes, token: tuple[int, int] | None, rules: Rules | None) -> Refused | AnsweredBefore | Pending | Accepted:
        self.owner.check()
        try:
            cmd = commands.parse(payload, rules)
        except commands.CommandError as e:
            cid = commands.command_id(payload)
            self._keep(cid, token)
            return Refused(cid, str(e))
        self._keep(cmd.id, token)
        if cmd.id in self._answered:
            return AnsweredBefore(cmd.id, self._answered[cmd.id])
        if cmd.id in self._pending:
            return Pending(cmd.id)
        if len(self._pending) >= MAX_PENDING:
            return Refused(cmd.id, f"{MAX_PENDING} commands are being applied on this clock: send it again in a moment")
        self._pending.add(cmd.id)
        return Accepted(cmd)

    def resend_allowed(self, now_s: float) -> str | None:
        """None if a resend may run now (and takes its turn), else why not."""
        self.owner.check()
        if self._budget_at is not None:
            self._budget = min(float(RESEND_BURST), self._budget + (now_s - self._budget_at) / RESEND_EVERY_S)
        self._budget_at = now_s
        if self._budget < 1:
            wait = (1 - self._budget) * RESEND_EVERY_S
            return f"resend: at most {RESEND_BURST} at once, then one every {RESEND_EVERY_S:g} s on this clock: retry in {wait:.1f} s"
        self._budget -= 1
        return None

    def answer(self, cid: str | None, ack: bytes) -> None:
        self.owner.check()
        if cid is None:
            return
        self._pending.discard(cid)
        self._answered[cid] = ack
        self._answered.move_to_end(cid)
        self._trim()

    def settle(self, cid: str | None) -> list[tuple[int, int]]:
        """The broker acknowledgements of `cid`'s deliveries: its ack is stored, send them."""
        self.owner.check()
        return self._tokens.pop(cid, [])

    def _keep(self, cid: str | None, token: tuple[int, int] | None) -> None:
        if token is not None:
            self._tokens.setdefault(cid, []).append(token)

    def _trim(self) -> None:
        while len(self._answered) > ANSWERED_KEEP:
            self._answered.popitem(last=False)
