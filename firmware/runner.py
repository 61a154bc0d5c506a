"""The runner: the table clock's one loop, between the button queue, the core and the displays.

One thread does everything, so nothing is shared and nothing is locked. It waits on the queue the
board's callbacks fill (`hardware.board`) with a timeout computed to the next moment something is
due: a display digit or indicator changes, a release or a long press completes, a checkpoint, a
systemd watchdog ping. It never wakes otherwise (no busy loop, no fixed tick).

Each wake-up drains the queue and handles the batch in edge-time order, so two buttons pressed a
fraction of a millisecond apart reach the core in the order they were pressed, whatever order the
back-end threads delivered them in (the core then resolves the collision: the running player's edge
wins, see `Rules.switch_guard_ms`). Every input is checked against the core, written to the journal
(`GameStore.record(sync=False)`: in the page cache, so a crash of this process never loses an input
the clock acted on) and only then applied; once the batch is applied the displays are told, and
only then is the journal fsync'd (`GameStore.sync`), in the same iteration, before any checkpoint.
The fsync never delays a display; only a power cut in those few milliseconds can lose an input,
and the restore comes back neutralised anyway. A journal write or fsync that fails (a full or
failing card) never stops the clock: it is logged once per outage and the next input tries again.
Nor does a new journal that cannot be created at "new game": the new game starts in memory and
every later input first retries creating its journal (see `new_game`). No exception from the store
escapes the loop.
While a game is live the state is checkpointed at least once a second. A display is told its text
only when the text changes.
"""

from __future__ import annotations

import logging
import queue
import time
from dataclasses import replace
from typing import Any, Callable, Sequence

from rackside.firmware import menu as menus
from rackside.firmware import render
from rackside.firmware.clock import (
    Adjust,
    Arrive,
    ClockInputError,
    End,
    Ending,
    Forfeit,
    LateStart,
    Neutralise,
    Phase,
    Press,
    Rules,
    View,
    apply,
    new_clock,
    phase_at,
    settle,
    view,
)
from rackside.firmware.debounce import DEFAULT_SETTLE_NS, Debouncer
from rackside.firmware.gestures import BUTTONS, DEFAULT_CHORD_NS, DEFAULT_HOLD_NS, Action, Gestures
from rackside.outage import Outage

log = logging.getLogger(__name__)

CHECKPOINT_NS = 900_000_000  # < 1 s: "at least once a second" even when a wake-up runs late
RESTORED_BANNER_NS = 10_000_000_000
MAX_WAIT_S = 60.0


class Runner:
    """Runs one table clock. `store` is a `firmware.persist.GameStore` (or anything with its
    `start`, `record`, `sync`, `checkpoint`, `new_game`, `close`); `displays` is (left, right)."""

    def __init__(
        self,
        *,
        rules: Rules,
        store: Any,
        displays: Sequence[Any],
        events: "queue.SimpleQueue",
        clock_ns: Callable[[], int] = time.monotonic_ns,
        board: Any = None,
        buzzer: bool = False,
        notifier: Any = None,
        settle_ns: int = DEFAULT_SETTLE_NS,
        hold_ns: int = DEFAULT_HOLD_NS,
        chord_ns: int = DEFAULT_CHORD_NS,
        restored_banner_ns: int = RESTORED_BANNER_NS,
        initially_down: dict[str, bool] | None = None,
        outputs: Sequence[Any] = (),
        on_new_game: Callable[[Rules], None] | None = None,
    ) -> None:
        self.rules = rules
        self.store = store
        self.displays = tuple(displays)
        self.events = events
        self.clock_ns = clock_ns
        self.board = board
        self.buzzer = buzzer and board is not None
        self.notifier = notifier
        self.restored_banner_ns = restored_banner_ns
        self.on_new_game = on_new_game  # keeps the menu's game time for the following games
        down = initially_down or {}
        self.debouncers = {b: Debouncer(settle_ns, raw_down=bool(down.get(b))) for b in BUTTONS}
        self.gestures = Gestures(hold_ns=hold_ns, chord_ns=chord_ns)
        self.menu: menus.Menu | None = None
        self.clock = None
        self.shown: list[str | None] = [None] * len(self.displays)
        self.restored_until_ns: int | None = None
        self.stopped = False
        self._next_checkpoint_ns: int | None = None
        self._final_checkpoint_done = False
        self._watchdog_ns = notifier.watchdog_period_ns() if notifier is not None else None
        self._next_watchdog_ns: int | None = None
        self._out = (False, False)  # each player's time is up (for the 0:00 buzzer)
        self._ending: Ending | None = None
        self._unsynced = False  # inputs written to the journal since the last fsync
        self._last_write_ok = True  # the latest journal write (or fsync) succeeded
        self.journal_outage: str | None = None  # the error, while the journal cannot be written
        self.unjournalled = 0  # inputs applied but not written during the current outage
        self.pending_new_game = False  # a new game runs in memory; its journal is not created yet
        self._checkpoint_error: str | None = None  # an unexpected checkpoint exception, once per outage
        # Clock outputs (the hall's publisher): told each applied input and each refresh's view.
        # Their faults are logged once per outage and never reach the clock.
        self.outputs = list(outputs)
        self._output_fault = Outage(log, "clock output")
        self.identify_until_ns: int | None = None  # a director's "identify": the displays flash
        self._seq: int | None = None  # the journal line of the last input applied
        self._refused: str | None = None  # why the core refused the last input it refused

    # --- life cycle ----------------------------------------------------------------------------

    def start(self) -> View:
        now = self.clock_ns()
        self.clock = self.store.start(now)
        self.rules = getattr(self.store, "rules", self.rules)  # a restored game keeps its own rules
        v = view(self.clock, now)
        if v.restored:
            self.restored_until_ns = now + self.restored_banner_ns
            log.warning("restored an unfinished game after a restart; the clock is neutralised")
        self._out = tuple(p.remaining_ns <= 0 for p in v.players)
        self._ending = v.ending
        self._next_checkpoint_ns = now + CHECKPOINT_NS
        if self._watchdog_ns:
            self._next_watchdog_ns = now
        self.refresh(now)
        self._housekeeping(now)
        if self.notifier is not None:
            self.notifier.ready(f"clock {v.phase.value}: {v.players[0].text} {v.players[1].text}")
        return v

    def run(self) -> None:
        """Start, then handle events until a "stop" command (or KeyboardInterrupt)."""
        if self.clock is None:
            self.start()
        try:
            while self.step():
                pass
        finally:
            self.close()

    def close(self) -> None:
        if self.notifier is not None:
            self.notifier.stopping("clock stopped")
        if self.clock is not None:
            now = self.clock_ns()
            if self.menu is None:
                self._do(self.gestures.flush())  # a press made before the stop is never lost
            self._sync_journal()
            phase = self._phase(now)
            if phase is not Phase.SETUP and not self.pending_new_game:
                try:
                    self.store.checkpoint(self.clock, now)
                except Exception as exc:  # noqa: BLE001 - closing anyway; the journal has every input
                    log.error("final checkpoint failed: %s", exc)

    def stop(self) -> None:
        """Ask the loop to stop (from any thread)."""
        self.events.put(("stop", self.clock_ns()))

    # --- the loop ------------------------------------------------------------------------------

    def step(self, timeout_s: float | None = None) -> bool:
        """Wait for events (until the next thing due, or `timeout_s`), handle them. False once stopped."""
        now = self.clock_ns()
        if timeout_s is None:
            timeout_s = self.wait_s(now)
        items = []
        try:
            items.append(self.events.get(timeout=timeout_s) if timeout_s > 0 else self.events.get_nowait())
        except queue.Empty:
            pass
        while True:
            try:
                items.append(self.events.get_nowait())
            except queue.Empty:
                break
        self.handle(items, self.clock_ns())
        return not self.stopped

    def pump(self) -> bool:
        """Handle whatever is queued and whatever is due, without waiting (tests, benchmarks)."""
        return self.step(0)

    def next_due_ns(self, now: int) -> int | None:
        times = [d.release_due_ns() for d in self.debouncers.values()]
        times += [self.gestures.deadline()]
        if self.menu is not None:
            times.append(menus.next_change_ns(self.menu, now))
        else:
            times.append(render.next_change_ns(self.clock, view(self.clock, now), now, restored_until_ns=self.restored_until_ns))
        if self._checkpointing(now):
            times.append(self._next_checkpoint_ns)
        times.append(self._next_watchdog_ns)
        if self.identify_until_ns is not None and now < self.identify_until_ns:
            times.append(min(self.identify_until_ns, (now // render.BLINK_NS + 1) * render.BLINK_NS))
        times = [t for t in times if t is not None]
        return min(times) if times else None

    def wait_s(self, now: int) -> float:
        due = self.next_due_ns(now)
        if due is None:
            return MAX_WAIT_S
        return min(MAX_WAIT_S, max(0, due - now) / 1e9)

    def handle(self, items: list, now: int) -> None:
        """Handle a batch of queued items, in time order, then whatever is due at `now`."""
        items.sort(key=lambda item: item[1])
        for item in items:
            kind, t = item[0], min(item[1], now)
            self._advance(t)
            if kind == "edge":
                _, _, button, down = item
                self._edge(button, down, t)
            elif kind == "cmd":
                self._command(item[2], t)
            elif kind == "hall":
                self._hall_command(item[2], item[3], t)
            elif kind == "stop":
                self.stopped = True
        self._advance(now)
        self.refresh(now)  # first: the displays never wait for an fsync
        self._sync_journal()  # then every input of the batch is made durable, before any checkpoint
        self._housekeeping(now)

    # --- inputs --------------------------------------------------------------------------------

    def _advance(self, t: int) -> None:
        """Handle everything due up to `t` in time order: releases that became final and long
        presses that completed."""
        while True:
            due = [(d.release_due_ns(), "release", b) for b, d in self.debouncers.items()]
            due.append((self.gestures.deadline(), "gesture", None))
            due = [x for x in due if x[0] is not None and x[0] <= t]
            if not due:
                return
            when, what, button = min(due, key=lambda x: x[0])
            if what == "release":
                released = self.debouncers[button].poll(when)
                if released is not None:
                    self._do(self.gestures.release(button, released))
            else:
                self._do(self.gestures.tick(when, self._phase(when)))

    def _edge(self, button: str, down: bool, t: int) -> None:
        d = self.debouncers.get(button)
        if d is None:
            log.error("edge from unknown button %r ignored", button)
            return
        released = d.poll(t) if down else None  # a release that ended just before this press
        if released is not None:
            self._do(self.gestures.release(button, released))
        if not d.edge(t, down):
            return
        if self.menu is not None:
            self.gestures.down[button] = t
            self.gestures.consumed.add(button)
            self._menu_press(button, t)
            return
        self._do(self.gestures.press(button, t, self._phase(t)))

    def _command(self, name: str, t: int) -> None:
        """Keyboard commands of the simulator: the same functions as the long presses."""
        if name == "stop":
            self.stopped = True
        elif name == "menu":
            if self.menu is None:
                self._do([Action("menu", t)])
        elif name == "end":
            if self.menu is None and self._phase(t) in (Phase.RUNNING, Phase.NEUTRALISED, Phase.LATE):
                self._do([Action("end", t)])
        else:
            log.warning("unknown command %r ignored", name)

    def _do(self, actions: list[Action]) -> None:
        for a in actions:
            if a.kind == "press":
                self._apply(Press(a.t_ns, a.player))
            elif a.kind == "neutralise":
                self._apply(Neutralise(a.t_ns))
            elif a.kind == "end":
                self._apply(End(a.t_ns))
            elif a.kind == "menu":
                self._open_menu(a.t_ns)

    def _hall_command(self, cmd: Any, reply: Any, t: int) -> None:
        """A director's command from the hall (rackside.hall.commands.Command, already checked):
        journalled with "source": "hall" and applied like a button; `reply(ok, reason, seq)` acks it."""
        ok, reason = True, None
        if cmd.name == "identify":
            self.identify_until_ns = t + cmd.seconds * 1_000_000_000
        elif self.menu is not None:
            ok, reason = False, "the director's menu is open on the clock"
        elif cmd.name == "new_game":
            if self._phase(t) in (Phase.RUNNING, Phase.LATE):
                ok, reason = False, f"the game is {self._phase(t).value}: neutralise or end it first"
            else:
                self.rules = cmd.rules
                self.new_game(cmd.rules.game_time_ms, t)
        else:
            before = self.clock
            ok = self._apply(cmd.clock_input(t), source="hall")
            if not ok:
                reason = self._refused
            elif self.clock == before or settle(before, max(t, before.since_ns or t)) == self.clock:
                reason = f"applied; it changed nothing (the game is {self._phase(t).value})"

        try:
            reply(ok, reason, self._seq if ok and cmd.clock_input(t) is not None else None)
        except Exception as exc:  # noqa: BLE001 - the ack is the hall's business, never the clock's
            self._output_fault.failed(exc)

    def _apply(self, event: Any, **extra: Any) -> bool:
        """Check `event` against the core, write it to the journal, then apply it (the batch's
        fsync follows the displays: `_sync_journal`). An edge dated before the last input (a
        back-end that delivered late) is dated at that input instead."""
        since = self.clock.since_ns
        if since is not None and event.t_ns < since:
            event = replace(event, t_ns=since)
        try:
            after = apply(self.clock, event)
        except ClockInputError as exc:
            log.warning("input %r refused: %s", event, exc)
            self._refused = str(exc)
            return False
        self._seq = None  # the input's journal line, when it was written
        if self.pending_new_game and not self._create_journal(event.t_ns):
            self.unjournalled += 1  # never written to the previous game's journal
        else:
            try:
                self._seq = self.store.record(event, sync=False, **extra)
            except Exception as exc:  # noqa: BLE001 - a full or failing card: the clock keeps counting
                self._journal_failed(exc, "write")
                self.unjournalled += 1
            else:
                self._unsynced = self._last_write_ok = True
        self.clock = after
        for output in self.outputs:
            try:
                output.applied(after, event, self._seq, event.t_ns, source=extra.get("source"))
            except Exception as exc:  # noqa: BLE001 - an output never stops the clock
                self._output_fault.failed(exc)
        return True

    def _sync_journal(self) -> None:
        """fsync the inputs written since the last call: once per batch, after the displays."""
        if not self._unsynced:
            return
        self._unsynced = False
        try:
            self.store.sync()
        except Exception as exc:  # noqa: BLE001 - the clock keeps counting; the next batch retries
            self._journal_failed(exc, "fsync")
            return
        if self.journal_outage is not None and self._last_write_ok:
            log.warning(
                "journal writes work again (after %s); %d input(s) applied meanwhile could not be written",
                self.journal_outage,
                self.unjournalled,
            )
            self.journal_outage, self.unjournalled = None, 0

    def _journal_failed(self, exc: Exception, what: str) -> None:
        self._last_write_ok = False
        if self.journal_outage is None:  # once per outage: a failing card must not flood the log
            self.journal_outage = f"{what}: {exc}"
            log.error("journal %s failed (%s); the clock keeps counting and retries on every input", what, exc)

    def _create_journal(self, t: int) -> bool:
        """Start the pending new game's journal; False (logged once per outage) if it cannot be."""
        try:
            self.store.new_game(self.rules, t)
        except Exception as exc:  # noqa: BLE001 - the store kept the previous journal; retried later
            self._journal_failed(exc, "creation")
            return False
        self.pending_new_game = False
        return True

    def _phase(self, t: int) -> Phase:
        c = self.clock
        if c.since_ns is not None and t >= c.since_ns:
            return phase_at(c, t)  # settle(c, t).phase without building the settled clock
        return c.phase

    # --- the director's menu -------------------------------------------------------------------

    def _open_menu(self, t: int) -> None:
        if self._phase(t) is Phase.RUNNING:  # the director's menu always neutralises (1.4.3)
            self._apply(Neutralise(t))
        self.gestures.reset()
        self.restored_until_ns = None
        self.menu = menus.open_menu(view(self.clock, max(t, self.clock.since_ns or t)), self.rules.game_time_ms, self.rules.forfeit_overtime_ms)
        log.info("director's menu opened")

    def menu_help(self) -> dict[str, str] | None:
        """What each button does while the director's menu is open, else None: the simulators'
        key line (any thread may ask; the menu is an immutable value)."""
        menu = self.menu
        return None if menu is None else menus.key_help(menu)

    def _menu_press(self, button: str, t: int) -> None:
        t = max(t, self.clock.since_ns or t)
        self.menu, effects = menus.press(self.menu, button, view(self.clock, t), self.rules.game_time_ms)
        for effect in effects:
            kind = effect[0]
            if kind == "adjust":
                self._apply(Adjust(t, effect[1], effect[2]))
            elif kind == "late_start":
                self._apply(LateStart(t, tuple(effect[1])))
            elif kind == "arrive":
                self._apply(Arrive(t, effect[1]))
            elif kind == "forfeit":
                self._apply(Forfeit(t, effect[1]))
            elif kind == "new_game":
                self.new_game(effect[1], t)
            elif kind == "exit":
                self.menu = None
                self.gestures.reset()
                log.info("director's menu closed")

    def new_game(self, game_time_ms: int, t: int) -> None:
        """Close the current game's journal and start a new game with `game_time_ms` a player.

        If the store cannot create the new journal (a full or failing card), the new game still
        starts, in memory: the director asked for it and the clock must be usable. The outage is
        logged once, like a failed write; the previous game's journal is left as it was (never
        given this game's inputs); no checkpoint is written; and every later input first retries
        creating the journal, the inputs applied meanwhile counted as unjournalled."""
        self.rules = replace(self.rules, game_time_ms=game_time_ms)
        self.pending_new_game = True
        self.clock = new_clock(self.rules)
        self._create_journal(t)
        self.restored_until_ns = None
        self._final_checkpoint_done = False
        self._out = (False, False)
        self._ending = None
        log.info("new game: %d:%02d a player", game_time_ms // 60000, game_time_ms // 1000 % 60)
        if self.on_new_game is not None:
            try:  # no game time runs in a new game: a small atomic write here delays nobody
                self.on_new_game(self.rules)
            except Exception as exc:  # noqa: BLE001 - the new game goes on with its game time
                log.error("the game time for the following games was not saved: %s", exc)

    # --- output --------------------------------------------------------------------------------

    def _texts(self, v: View, now: int) -> tuple[str, str]:
        if self.menu is not None:
            return menus.texts(self.menu, v, now, self.rules.game_time_ms)
        if self.identify_until_ns is not None and now < self.identify_until_ns:
            return ("8888", "8888") if (now // render.BLINK_NS) % 2 == 0 else ("", "")  # the director's "identify"
        return render.texts(v, now, restored_until_ns=self.restored_until_ns)

    def refresh(self, now: int) -> None:
        """Tell each display its text if it changed; sound the buzzer when a time reaches 0:00
        or a game is forfeited."""
        v = view(self.clock, now)
        for output in self.outputs:
            try:
                output.view(v, now)
            except Exception as exc:  # noqa: BLE001 - an output never stops the clock
                self._output_fault.failed(exc)
        texts = self._texts(v, now)
        for i, (display, text) in enumerate(zip(self.displays, texts)):
            if text != self.shown[i]:
                self.shown[i] = text
                display.show(text)
        out = tuple(p.remaining_ns <= 0 for p in v.players)
        if self.buzzer:
            if any(o and not was for o, was in zip(out, self._out)) and v.phase is not Phase.ENDED:
                self.board.beep("zero")
            if v.ending in (Ending.OVERTIME_FORFEIT, Ending.LATENESS_FORFEIT) and v.ending is not self._ending:
                self.board.beep("forfeit")
        self._out, self._ending = out, v.ending

    def _checkpointing(self, now: int) -> bool:
        phase = self._phase(now)
        if phase is Phase.ENDED:
            return not self._final_checkpoint_done
        return phase is not Phase.SETUP

    def _checkpoint(self, now: int) -> None:
        """The store logs its own disk faults once per outage; anything else it raises is logged
        here, also once until a checkpoint call succeeds again."""
        try:
            self.store.checkpoint(self.clock, now)
        except Exception as exc:  # noqa: BLE001 - the journal still has every input; keep counting
            if self._checkpoint_error is None:
                self._checkpoint_error = repr(exc)
                log.error("checkpoint failed: %r; the clock keeps counting and retries every checkpoint", exc)
            return
        if self._checkpoint_error is not None:
            log.warning("checkpoints work again (after %s)", self._checkpoint_error)
            self._checkpoint_error = None

    def _housekeeping(self, now: int) -> None:
        if self._checkpointing(now) and now >= self._next_checkpoint_ns:
            if not self.pending_new_game:  # no journal for this game yet: nothing to vouch for
                self._checkpoint(now)
            self._next_checkpoint_ns = now + CHECKPOINT_NS
            if self._phase(now) is Phase.ENDED:
                self._final_checkpoint_done = True
        elif not self._checkpointing(now):
            self._next_checkpoint_ns = max(self._next_checkpoint_ns or now, now)
        if self._next_watchdog_ns is not None and now >= self._next_watchdog_ns:
            self.notifier.watchdog()
            self._next_watchdog_ns = now + self._watchdog_ns
