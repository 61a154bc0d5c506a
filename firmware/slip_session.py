"""The runner's result slip (issue 27, item 4): the one `game.slip.Slip` of the game that ended.

The runner makes one and calls it at four points only, so a clock without a keypad never reaches
it (no key, no slip): a keypad key (`key`), a player's press (`sign`: a signature while the slip
waits for them, else the clock's own press as before), the hall's "slip_outcome" request
(`outcome`, from `firmware.requests`) and what the displays show (`texts`, `next_change_ns`).
Each input the slip applies goes through the runner's `apply`, so it is journalled (write-ahead,
with its `seq`) and told to every output like any input; an input that changes nothing is not
journalled. The signature that makes the slip final is journalled with the whole slip beside it
(`"slip": {...}`, docs/journal.md), which the hall output publishes as the "slip" event
(hall.device.clock_output). A restart brings back the slip the store folded from the journal
(`GameStore.slip`, `game.replay.fold_slip`).
"""

from __future__ import annotations

from typing import Any, Callable

from rackside.game import call as call_core
from rackside.game import slip as slips
from rackside.game.clock import Phase, view

SLIP_NOTE = "slip"  # the journal field (and Applied note) that holds a final slip's record


class SlipSession:
    def __init__(self, runner: Any) -> None:
        self.runner = runner  # the `firmware.runner.Runner` (not imported: it imports this)
        self.slip: slips.Slip | None = None
        # The TSH numbers of the players by side, from check-in (issue 27, item 2); (None, None)
        # until a check-in flow sets this.
        self.numbers: Callable[[], tuple[int | None, int | None]] = lambda: (None, None)

    def restore(self, slip: slips.Slip | None) -> None:
        self.slip = slip

    def reset(self) -> None:
        """A new game: no slip."""
        self.slip = None

    def _begun(self, t: int) -> slips.Slip | None:
        r = self.runner
        if self.slip is None and r.phase(t) is Phase.ENDED:
            self.slip = slips.begin(view(r.clock, max(t, r.clock.since_ns or t)))
        return self.slip

    def _apply(self, event: slips.SlipInput, **extra: Any) -> tuple[bool, str]:
        """Apply `event` to the slip when it changes it: journalled first (the runner's `apply`).
        (True, "") when applied; else (False, why the core refused it, "" when it changes nothing)."""
        s = self.slip
        after = slips.apply(s, event)
        if after == s:
            return False, ""
        if after.step is slips.Step.FINAL and s.step is not slips.Step.FINAL:
            extra[SLIP_NOTE] = self.record(after)
        done, why = self.runner.apply(event, **extra)
        if done:
            self.slip = after
        return done, why

    def record(self, s: slips.Slip) -> dict:
        """The final slip as journalled and published (hall.wire.messages.SLIP, without game, seq, at)."""
        v = view(self.runner.clock, self.runner.clock.since_ns)
        return {"scores": list(s.scores), "penalties": [p.penalty for p in v.players], "final": list(s.final),
                "numbers": list(self.numbers()), "ending": v.ending.value if v.ending else None,
                "forfeits": list(s.forfeits), "recounted": s.recounted}

    # --- the runner's calls --------------------------------------------------------------------------

    def key(self, key: str, t: int) -> bool:
        """A keypad key pressed: True when the slip used it."""
        if self.runner.menu is not None or self._begun(t) is None:
            return False
        return self._apply(slips.SlipKey(t, key))[0]

    def sign(self, player: int, t: int) -> bool:
        """A player's press: True when it was the slip's (a signature, or one already given)."""
        if self.slip is None or not self.slip.signable:
            return False
        self._apply(slips.SlipSign(t, player))
        return True

    def dispute(self, player: int, t: int) -> list | None:
        """A player's press on a slip the console refused (`slips.disputable`): the call to the director
        it makes ([] when one is open already), or None: not a dispute."""
        if not slips.disputable(self.slip):
            return None
        made = call_core.next_call(self.runner.table.calls, t, call_core.SIDE, player)
        return [made] if made is not None else []

    def outcome(self, game: Any, outcome: str, why: str | None, t: int, recorded: Any = None, **notes: Any) -> tuple[bool, str]:
        """The console's answer to the signed slip (hall "slip_outcome"): (done, why not)."""
        if game != self.runner.journal.game:
            return False, f"game {game} is not this clock's current game ({self.runner.journal.game})"
        if self.slip is None or self.slip.step is not slips.Step.FINAL:
            return False, "this game has no signed slip on the clock"
        event = slips.SlipOutcome(t, outcome, why, None if recorded is None else tuple(recorded))
        if slips.apply(self.slip, event) == self.slip:
            return True, ""  # the same answer again: shown already
        done, why = self._apply(event, **notes)
        return (True, "") if done else (False, why or "not applied")

    def texts(self, now: int) -> tuple[str, str] | None:
        return None if self.slip is None else slips.texts(self.slip, now)

    def next_change_ns(self, now: int) -> int | None:
        return None if self.slip is None else slips.next_change_ns(self.slip, now)
