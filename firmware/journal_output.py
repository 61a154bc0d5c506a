"""The journal and checkpoints as a clock output: the store that never raises.

It wraps a `firmware.persist.GameStore` (or anything with its `start`, `record`, `sync`,
`checkpoint`, `new_game`, `game`) and is the one output the runner also calls by name,
because the journal comes first: `record(input)` is called BEFORE the runner applies an input
(write-ahead: the line is in the page cache, so a crash of this process never loses an input the
clock acted on) and returns the input's `seq` in the journal (its number in the game), which every
other output is given; `game` is the journal's name, as the store made it.
Then, each loop iteration, after the displays were told (`view`), `flush` fsyncs the batch and
writes a checkpoint when one is due (at least once a second while a game is live), so the fsync
never delays a display.

Nothing here raises into the clock's loop. A journal write, fsync or creation that fails (a full
or failing card) is logged once per outage (`rackside.outage.Outage`) and retried on the next
input; the inputs applied meanwhile are counted and the count is logged when writes work again.
A new journal that cannot be created at "new game" leaves the new game in memory (`pending`):
every later input first retries creating it. The store logs its own checkpoint disk faults once
per outage; anything else a checkpoint raises is logged here, once until one succeeds again.
Only `start` may raise (`StoreError` at start-up: another clock holds the directory).
"""

from __future__ import annotations

import logging
from typing import Any

from rackside.game.clock import Clock, Input, Phase, Rules, phase_at
from rackside.firmware.outputs import Applied, Frame, Output, OutputContext, no_settings
from rackside.outage import Outage

log = logging.getLogger(__name__)

CHECKPOINT_NS = 900_000_000  # < 1 s: "at least once a second" even when a wake-up runs late


def factory(context: OutputContext, settings: dict) -> "JournalOutput":
    no_settings(settings)
    return JournalOutput(context.store)


class JournalOutput(Output):
    def __init__(self, store: Any, *, log: logging.Logger = log, checkpoint_ns: int | None = None) -> None:
        self.store = store
        self.checkpoint_ns = checkpoint_ns
        self.rules: Rules | None = None
        self.clock: Clock | None = None
        self.pending_new_game = False  # a new game runs in memory; its journal is not created yet
        self.unjournalled = 0  # inputs applied but not written during the current outage
        self.game: str | None = None  # the journal's name ("game-000003"), None while pending
        self.outage = Outage(
            log,
            "journal",
            failed_msg="journal %(reason)s; the clock keeps counting and retries on every input",
            recovered_msg="journal writes work again (after %(reason)s); %(inputs)d input(s) applied meanwhile could not be written",
        )
        self.checkpoint_outage = Outage(
            log,
            "checkpoint",
            failed_msg="checkpoint failed: %(reason)s; the clock keeps counting and retries every checkpoint",
            recovered_msg="checkpoints work again (after %(reason)s)",
        )
        self._unsynced = False  # inputs written since the last fsync
        self._last_write_ok = True  # the latest write (or fsync) succeeded
        self._next_checkpoint_ns: int | None = None
        self._final_checkpoint_done = False
        self._new_game_notes: dict[str, str] = {}

    @property
    def interval_ns(self) -> int:
        return self.checkpoint_ns if self.checkpoint_ns is not None else CHECKPOINT_NS

    # --- the runner's calls, by name -------------------------------------------------------------

    def start(self, now: int) -> Clock:
        """Restore the unfinished game, or start a new journal. May raise `StoreError`."""
        self.clock = self.store.start(now)
        self.rules = getattr(self.store, "rules", None)
        self._next_checkpoint_ns = now + self.interval_ns
        self.game = self.store.game
        return self.clock

    def record(self, event: Input, after: Clock | None = None, **extra: Any) -> int | None:
        """Write `event` ahead of applying it (`after`: the clock the core made of it); its seq in the
        journal, or None if it could not be written (logged once per outage). Never raises."""
        if self.pending_new_game and not self._create_journal(event.t_ns):
            self.unjournalled += 1  # never written to the previous game's journal
            return None
        try:
            seq = self.store.record(event, sync=False, after=after, **extra)
        except Exception as exc:  # noqa: BLE001 - a full or failing card: the clock keeps counting
            self._failed(f"write failed ({exc})")
            self.unjournalled += 1
            return None
        self._unsynced = self._last_write_ok = True
        return seq

    def new_game(self, rules: Rules, clock: Clock, t: int, notes: dict[str, str] | None = None) -> None:
        """Close the current game's journal and start the new one's (its header holds `notes`: a
        hall command's id, who, why); if it cannot be created, the new game runs in memory and
        later inputs retry (see the module docstring)."""
        self.rules = rules
        self._new_game_notes = dict(notes or {})
        self.clock = clock
        self.pending_new_game = True
        self.game = None
        self._final_checkpoint_done = False
        self._create_journal(t)

    # --- the output protocol -----------------------------------------------------------------------

    def applied(self, entry: Applied) -> None:
        self.clock = entry.clock

    def view(self, frame: Frame, t_ns: int) -> None:
        self.clock = frame.clock

    def flush(self, t_ns: int) -> None:
        """fsync this iteration's inputs (after the displays), then checkpoint if one is due."""
        self._sync()
        if self.clock is None:
            return
        if self._checkpointing(t_ns) and t_ns >= self._next_checkpoint_ns:
            if not self.pending_new_game:  # no journal for this game yet: nothing to vouch for
                self._checkpoint(t_ns)
            self._next_checkpoint_ns = t_ns + self.interval_ns
            if self._phase(t_ns) is Phase.ENDED:
                self._final_checkpoint_done = True
        elif not self._checkpointing(t_ns):
            self._next_checkpoint_ns = max(self._next_checkpoint_ns or t_ns, t_ns)

    def next_due_ns(self, t_ns: int) -> int | None:
        if self.clock is not None and self._checkpointing(t_ns):
            return self._next_checkpoint_ns
        return None

    def close(self, t_ns: int | None = None) -> None:
        """The clock stops: fsync, and a final checkpoint of a game in progress."""
        self._sync()
        if self.clock is None or t_ns is None:
            return
        if self._phase(t_ns) is not Phase.SETUP and not self.pending_new_game:
            try:
                self.store.checkpoint(self.clock, t_ns)
            except Exception as exc:  # noqa: BLE001 - closing anyway; the journal has every input
                log.error("final checkpoint failed: %s", exc)

    # --- internals ---------------------------------------------------------------------------------

    def _sync(self) -> None:
        if not self._unsynced:
            return
        self._unsynced = False
        try:
            self.store.sync()
        except Exception as exc:  # noqa: BLE001 - the clock keeps counting; the next batch retries
            self._failed(f"fsync failed ({exc})")
            return
        if self._last_write_ok and self.outage.recovered(inputs=self.unjournalled):
            self.unjournalled = 0

    def _failed(self, reason: str) -> None:
        self._last_write_ok = False
        self.outage.failed(reason)

    def _create_journal(self, t: int) -> bool:
        try:
            self.store.new_game(self.rules, t, **self._new_game_notes)
        except Exception as exc:  # noqa: BLE001 - the store kept the previous journal; retried later
            self._failed(f"creation failed ({exc})")
            return False
        self.pending_new_game = False
        self.game = self.store.game
        return True

    def _phase(self, t: int) -> Phase:
        c = self.clock
        if c.since_ns is not None and t >= c.since_ns:
            return phase_at(c, t)  # settle(c, t).phase without building the settled clock
        return c.phase

    def _checkpointing(self, t: int) -> bool:
        phase = self._phase(t)
        if phase is Phase.ENDED:
            return not self._final_checkpoint_done
        return phase is not Phase.SETUP

    def _checkpoint(self, t: int) -> None:
        try:
            self.store.checkpoint(self.clock, t)
        except Exception as exc:  # noqa: BLE001 - the journal still has every input; keep counting
            self.checkpoint_outage.failed(repr(exc))
            return
        self.checkpoint_outage.recovered()
