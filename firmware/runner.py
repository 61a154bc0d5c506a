"""The runner: the table clock's one loop, between the queue, the core and the clock's outputs.

One thread does everything, so nothing is shared and nothing is locked. It waits on the one queue
(`game.messages`: the board's button edges, the optional keypad's keys, the simulator's
commands, requests `submit`ted from other threads such as the hall's) with a timeout computed to
the next moment something is due: a display digit or indicator changes, a release or a long press
completes, an output's checkpoint, a systemd watchdog ping. It never wakes otherwise (no busy loop, no fixed tick).

Each wake-up drains the queue and handles the batch in time order, so two buttons pressed a
fraction of a millisecond apart reach the core in the order they were pressed, whatever order the
back-end threads delivered them in (the core then resolves the collision: the running player's edge
wins, see `Rules.switch_guard_ms`). Every input is checked against the core, written to the journal
(`JournalOutput.record`, write-ahead: in the page cache, so a crash of this process never loses an
input the clock acted on) and only then applied and handed to every output (`applied`); once the
batch is applied every output is shown the frame (`view`: the displays are told), and only then
flushed (`flush`: the journal's fsync and checkpoint), in the same iteration. The fsync never
delays a display; only a power cut in those few milliseconds can lose an input, and the restore
comes back neutralised anyway.

The runner knows no display, buzzer, file or network: those are outputs (`firmware.outputs`), and
adding one is a new module and a config entry. The journal never raises into the loop (its faults
are logged once per outage by `firmware.journal_output`), nor does any other output (each call is
guarded). A display is told its text only when the text changes.

Two collaborators the runner owns hold the rest: the director's menu (`firmware.menu_session`:
open, press, what the displays show; a press comes back as the clock's inputs, applied here like
a button's) and the requests from off the table (`firmware.requests`: `REQUESTS`, each request's
check, its answer, and what a request shows on the displays: identify, notice). A third holds the
table's flows (`firmware.table_session`: check-in and the director's call, issue 27): a key or a
press comes back as the table's inputs (`game.table`), journalled and applied here (`_apply_table`)
beside the clock's. A fourth, the result slip after the game's end (`firmware.slip_session`), takes
the keys the table's flows leave and, while it waits for signatures, the players' presses. A clock
without a keypad reaches neither with a key.
"""

from __future__ import annotations

import logging
import queue
import time
from dataclasses import replace
from typing import Any, Callable, Sequence

from rackside.firmware import journal_output
from rackside.game import render
from rackside.game import slip as slips
from rackside.game.clock import (
    ClockInputError,
    End,
    Neutralise,
    Phase,
    Press,
    Rules,
    View,
    apply,
    new_clock,
    phase_at,
    view,
)
from rackside.firmware.debounce import DEFAULT_SETTLE_NS, Debouncer
from rackside.firmware.gestures import DEFAULT_CHORD_NS, DEFAULT_HOLD_NS, Action, Gestures
from rackside.firmware.journal_output import JournalOutput
from rackside.firmware.menu_session import AskTable, Closed, MenuSession, NewGame
from rackside.game.messages import BUTTONS, KEYPAD_KEYS, Command, Edge, Key, Message, Request, Stop
from rackside.firmware.outputs import Applied, Frame, Guarded, Output
from rackside.firmware.requests import Requests
from rackside.firmware.slip_session import SlipSession
from rackside.game import table as table_core
from rackside.game.table import Table, TableInputError
from rackside.game.call import CALL_KEY
from rackside.firmware.table_session import REFUSED, TableSession

log = logging.getLogger(__name__)

CHECKPOINT_NS = journal_output.CHECKPOINT_NS  # read when a Runner is made (bench/power_loss.py sets it)
RESTORED_BANNER_NS = 10_000_000_000
MAX_WAIT_S = 60.0


class Runner:
    """Runs one table clock.

    `store` is the journal: a `JournalOutput`, or a `firmware.persist.GameStore` (then wrapped in
    one, which never raises). `outputs` are every other output, built by `firmware.outputs.assemble`
    (displays, LEDs, buzzer, the configured ones, the hall), told everything in that order; the
    journal is told last.
    """

    def __init__(
        self,
        *,
        rules: Rules,
        store: Any,
        events: "queue.SimpleQueue",
        clock_ns: Callable[[], int] = time.monotonic_ns,
        notifier: Any = None,
        outputs: Sequence[Output] = (),
        settle_ns: int = DEFAULT_SETTLE_NS,
        hold_ns: int = DEFAULT_HOLD_NS,
        chord_ns: int = DEFAULT_CHORD_NS,
        restored_banner_ns: int = RESTORED_BANNER_NS,
        initially_down: dict[str, bool] | None = None,
        on_new_game: Callable[[Rules], None] | None = None,
        keypad: bool = False,
        confirm_names: bool = False,  # a text display is fitted: a check-in's name is confirmed by a second press (issue 40)
    ) -> None:
        self.rules = rules  # the next game's (a hall's new_game may set them: firmware.requests)
        self.own_rules = rules  # clock.toml's: the fallback of a clock with no hall (issue 38)
        self.journal = store if isinstance(store, JournalOutput) else JournalOutput(store, log=log, checkpoint_ns=CHECKPOINT_NS)
        self.journal.rules = rules
        self.store = self.journal.store
        self.events = events
        self.clock_ns = clock_ns
        self.notifier = notifier
        self.restored_banner_ns = restored_banner_ns
        # The journal last: its flush (fsync, checkpoint) follows every other output's.
        self.outputs: tuple[Output, ...] = (*outputs, self.journal)
        self._guarded = [Guarded(o) for o in self.outputs if o is not self.journal]
        self.on_new_game = on_new_game  # keeps the menu's game time for the following games
        down = initially_down or {}
        self.debouncers = {b: Debouncer(settle_ns, raw_down=bool(down.get(b))) for b in BUTTONS}
        self.gestures = Gestures(hold_ns=hold_ns, chord_ns=chord_ns)
        self.menu_session = MenuSession()  # the director's menu, while it is open
        self.clock = None
        self.restored_until_ns: int | None = None
        self.stopped = False
        self._refused = ""  # why the core refused the last input it refused
        self._watchdog_ns = notifier.watchdog_period_ns() if notifier is not None else None
        self._next_watchdog_ns: int | None = None
        self.requests = Requests(self)  # from off the table: checked, applied, answered
        self.keys_unused = 0  # keypad keys handled that no flow used (see _key)
        self.slip_session = SlipSession(self)  # the signed result slip after the game's end (issue 27)
        # issue 27: check-in and the director's call, beside the clock (`keypad`: one is fitted)
        self.table = Table()
        self.table_session = TableSession(keypad=keypad, confirm=keypad and confirm_names)
        # the slip names the players by the numbers they checked in with (game.checkin), by side
        self.slip_session.numbers = lambda: self.table.seating.seated

    @property
    def menu(self):
        """The director's menu (a `firmware.menu.Menu`) while it is open, else None."""
        return self.menu_session.menu

    @menu.setter
    def menu(self, menu) -> None:  # tests close it directly (leaving it is test_menu.py's business)
        self.menu_session.menu = menu

    # The journal's state, read by tests and the status line.
    @property
    def journal_outage(self) -> str | None:
        """The error, while the journal cannot be written."""
        return self.journal.outage.reason

    @property
    def unjournalled(self) -> int:
        """Inputs applied but not written during the current journal outage."""
        return self.journal.unjournalled

    @property
    def pending_new_game(self) -> bool:
        """A new game runs in memory; its journal could not be created yet."""
        return self.journal.pending_new_game

    # --- life cycle ----------------------------------------------------------------------------

    def start(self) -> View:
        now = self.clock_ns()
        self.clock = self.journal.start(now)
        self.table = getattr(self.store, "table", None) or Table()  # a restored game's check-in and calls
        self.rules = self.journal.rules or self.rules  # a restored game keeps its own rules
        self.journal.rules = self.rules
        self.slip_session.restore(getattr(self.store, "slip", None))  # an ended game's slip, mid-typing or signing
        v = view(self.clock, now)
        if v.restored:
            self.restored_until_ns = now + self.restored_banner_ns
            log.warning("restored an unfinished game after a restart; the clock is neutralised")
        if self._watchdog_ns:
            self._next_watchdog_ns = now
        self.refresh(now)
        self.flush(now)
        for g in self._guarded:  # after the restore: a publisher's thread sees the journal as restored
            g.call("start")
        if self.notifier is not None:
            self.notifier.ready(f"clock {v.phase.value}: {v.players[0].text} {v.players[1].text}")
        return v

    def run(self) -> None:
        """Start, then handle messages until a stop (or KeyboardInterrupt)."""
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
            self.journal.close(now)
        for g in self._guarded:
            g.call("close")

    def submit(self, message: Message) -> None:
        """Hand the loop a message from any thread (a `Request` from the hall, a `Command`, an
        `Edge`): it is handled in time order with the buttons', on the runner's thread. Thread-safe
        (`queue.SimpleQueue.put`) and never blocks."""
        self.events.put(message)

    def stop(self) -> None:
        """Ask the loop to stop (from any thread)."""
        self.submit(Stop(self.clock_ns()))

    # --- the loop ------------------------------------------------------------------------------

    def step(self, timeout_s: float | None = None) -> bool:
        """Wait for messages (until the next thing due, or `timeout_s`), handle them. False once stopped."""
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
        times += [self.gestures.deadline(), self.table_session.deadline()]
        if self.menu is not None:
            times.append(self.menu_session.next_change_ns(now))
        else:
            times.append(render.next_change_ns(self.clock, view(self.clock, now), now, restored_until_ns=self.restored_until_ns,
                                               table=self.table, keypad=self.table_session.keypad))
        times.append(self.journal.next_due_ns(now))
        times += [g.call("next_due_ns", now) for g in self._guarded]
        times.append(self._next_watchdog_ns)
        times.append(self.requests.next_change_ns(now))
        times.append(self.slip_session.next_change_ns(now))
        times = [t for t in times if t is not None]
        return min(times) if times else None

    def wait_s(self, now: int) -> float:
        due = self.next_due_ns(now)
        if due is None:
            return MAX_WAIT_S
        return min(MAX_WAIT_S, max(0, due - now) / 1e9)

    def handle(self, items: list, now: int) -> None:
        """Handle a batch of queued messages, in time order, then whatever is due at `now`."""
        items.sort(key=lambda m: m.t_ns)
        for m in items:
            t = min(m.t_ns, now)
            self._advance(t)
            if isinstance(m, Edge):
                self._edge(m.button, m.down, t)
            elif isinstance(m, Key):
                self._key(m, t)
            elif isinstance(m, Command):
                self._command(m.name, t)
            elif isinstance(m, Request):
                self.requests.handle(m, t)
            elif isinstance(m, Stop):
                self.stopped = True
            else:
                log.error("message %r ignored: not one of game.messages' types", m)
        self._advance(now)
        self.refresh(now)  # first: the displays never wait for an fsync
        self.flush(now)  # then every input of the batch is made durable, before any checkpoint

    # --- inputs --------------------------------------------------------------------------------

    def _advance(self, t: int) -> None:
        """Handle everything due up to `t` in time order: releases that became final and long
        presses that completed."""
        while True:
            due = [(d.release_due_ns(), "release", b) for b, d in self.debouncers.items()]
            due.append((self.gestures.deadline(), "gesture", None))
            due.append((self.table_session.deadline(), "table", None))
            due = [x for x in due if x[0] is not None and x[0] <= t]
            if not due:
                return
            when, what, button = min(due, key=lambda x: x[0])
            if what == "table":
                self._table_inputs(self.table_session.tick(when, self.table))
            elif what == "release":
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
            self.gestures.taken(button, t)  # the menu used this press; its release does nothing
            self._menu_press(button, t)
            return
        self._do(self.gestures.press(button, t, self._phase(t)))

    def _key(self, m: Key, t: int) -> None:
        """A keypad key (`hardware.keypad`, already debounced): the table's flows say what it is
        (`firmware.table_session`: a digit typed for check-in, the director's call), journalled and
        applied like a button's input; after the game's end a pressed key they leave is the result
        slip's (`firmware.slip_session`: journalled when the slip applies it). A key no flow uses
        changes nothing: it is counted and logged at debug level, and not journalled. A clock without
        a keypad never sees one."""
        if m.key not in KEYPAD_KEYS or not isinstance(m.down, bool):
            log.error("key %r ignored: not one of the keypad's keys", m)
            return
        inputs = None if self.menu is not None else self.table_session.key(m.key, m.down, t, self.table, self._phase(t))
        if inputs is not None:  # the table's (an empty list: `#` held, its call not yet due)
            self._table_inputs(inputs)
            return
        # a key the table's flows leave is the slip's when pressed; `#` once released, as a tap (held,
        # it calls the director: table_session)
        if m.down != (m.key == CALL_KEY) and self.slip_session.key(m.key, t):
            return
        self.keys_unused += 1
        log.debug("keypad %s %s at %d: no flow uses it now", m.key, "pressed" if m.down else "released", t)

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
        elif name == "call":  # the director's call (issue 27), as the three buttons' gesture
            if self.menu is None:
                self._do([Action("call", t)])
        else:
            log.warning("unknown command %r ignored", name)

    def _do(self, actions: list[Action]) -> None:
        for a in actions:
            if a.kind == "press":
                taken = self.table_session.press(a.player, a.t_ns, self.table, self._phase(a.t_ns))
                if taken is REFUSED:  # 2.2: the non-starter starts the starter's time
                    log.info("press %d before the game ignored: the starter's own press is not a start (2.2)", a.player)
                elif taken is not None:
                    self._table_inputs(taken)
                elif not self.slip_session.sign(a.player, a.t_ns):  # while the slip waits: a signature
                    disputed = self.slip_session.dispute(a.player, a.t_ns)  # a refused slip: the director (issue 36)
                    if disputed is not None:
                        self._table_inputs(disputed)
                    else:
                        self._apply(Press(a.t_ns, a.player))
            elif a.kind == "call":
                self._table_inputs(self.table_session.gesture_call(a.t_ns, self.table))
            elif a.kind == "neutralise":
                self._apply(Neutralise(a.t_ns))
            elif a.kind == "end":
                self._apply(End(a.t_ns))
            elif a.kind == "menu":
                self._open_menu(a.t_ns)

    def _apply(self, event: Any, **extra: Any) -> bool:
        """Check `event` against the core, write it to the journal (with `extra` fields beside it),
        then apply it and hand it to the outputs (the batch's fsync follows the displays). An edge
        dated before the last input (a back-end that delivered late) is dated at that input
        instead. True when applied; else False, and `_refused` says why."""
        since = self.clock.since_ns
        if since is not None and event.t_ns < since:
            event = replace(event, t_ns=since)
        try:
            after = apply(self.clock, event)
        except ClockInputError as exc:
            log.warning("input %r refused: %s", event, exc)
            self._refused = str(exc) or type(exc).__name__
            return False
        seq = self.journal.record(event, after, **extra)
        self.clock = after
        self._applied(event, seq, after, extra)
        return True

    def _table_inputs(self, inputs: list) -> None:
        for event in inputs:
            self._apply_table(event)

    def _apply_table(self, event: Any, **extra: Any) -> bool:
        """A table input (game.table: check-in, the director's call), as `_apply` for the
        clock's: checked, journalled (write-ahead, with the table after it for the checkpoints),
        then applied with what it does to the clock (an arrival, a neutralisation) and handed to
        the outputs. True when applied; else False, and `_refused` says why."""
        since = self.clock.since_ns
        if since is not None and event.t_ns < since:
            event = replace(event, t_ns=since)
        try:
            table, after = table_core.step(self.table, self.clock, event)
        except (TableInputError, ClockInputError) as exc:
            log.warning("input %r refused: %s", event, exc)
            self._refused = str(exc) or type(exc).__name__
            return False
        seq = self.journal.record(event, after, table_after=table, **extra)
        self.clock, self.table = after, table
        self._applied(event, seq, after, extra)
        return True

    def _applied(self, event: Any, seq: int, after: Any, extra: dict) -> None:
        """An input journalled and applied (`_apply`, `_apply_table`): told to the journal's writer and every output."""
        notes = {k: v for k, v in extra.items() if k != "source"}
        entry = Applied(event, seq, self.journal.game, extra.get("source"), notes, after, event.t_ns)
        self.journal.applied(entry)
        for g in self._guarded:
            g.call("applied", entry)

    def _phase(self, t: int) -> Phase:
        c = self.clock
        if c.since_ns is not None and t >= c.since_ns:
            return phase_at(c, t)  # settle(c, t).phase without building the settled clock
        return c.phase

    # --- the runner's surface for its collaborators (firmware.requests): they hand it inputs ----------

    def phase(self, t: int) -> Phase:
        """The game's phase at `t`."""
        return self._phase(t)

    def apply(self, event: Any, table: bool = False, **extra: Any) -> tuple[bool, str]:
        """A game input (`table`: the table's, game.table) checked, journalled with `extra` beside
        it and applied, as the buttons' are: (True, "") or (False, why the core refused it)."""
        if (self._apply_table if table else self._apply)(event, **extra):
            return True, ""
        return False, self._refused

    def command(self, name: str, t: int) -> None:
        """One of the runner's own commands (menu, end, stop), as the long presses do them."""
        self._command(name, t)

    # --- the director's menu -------------------------------------------------------------------

    def _open_menu(self, t: int) -> None:
        if self._phase(t) is Phase.RUNNING:  # the director's menu always neutralises (1.4.3)
            self._apply(Neutralise(t))
        self.gestures.reset()
        self.table_session.cancel()  # a # held as the menu opened makes no call
        self.restored_until_ns = None
        # the game time the next game would get, the forfeit line of this one (an adjustment's bound)
        self.menu_session.open(view(self.clock, max(t, self.clock.since_ns or t)),
                               replace(self.clock.rules, game_time_ms=self.rules.game_time_ms),
                               ask_table=any(getattr(g.output, "asks_table", False) for g in self._guarded))
        log.info("director's menu opened")

    def menu_help(self) -> dict[str, str] | None:
        """What each button does while the director's menu is open, else None: the simulators'
        key line (any thread may ask)."""
        return self.menu_session.key_help()

    def _menu_press(self, button: str, t: int) -> None:
        t = max(t, self.clock.since_ns or t)
        for step in self.menu_session.press(button, view(self.clock, t), t, self.rules.game_time_ms):
            if isinstance(step, NewGame):
                self.new_game(step.game_time_ms, t)
            elif isinstance(step, AskTable):  # to the output that can ask the hall (hall.device.enrolled_output)
                for g in self._guarded:
                    if getattr(g.output, "asks_table", False):
                        g.call("ask_table", step.table)
            elif isinstance(step, Closed):
                self.gestures.reset()
                log.info("director's menu closed")
            else:
                self._apply(step)

    def new_game(self, game_time_ms: int, t: int, notes: dict[str, str] | None = None) -> None:
        """Close the current game's journal and start a new game with `game_time_ms` a player.

        If the store cannot create the new journal (a full or failing card), the new game still
        starts, in memory: the director asked for it and the clock must be usable. The outage is
        logged once, like a failed write; the previous game's journal is left as it was (never
        given this game's inputs); no checkpoint is written; and every later input first retries
        creating the journal, the inputs applied meanwhile counted as unjournalled."""
        self.rules = replace(self.rules, game_time_ms=game_time_ms)
        self.clock = new_clock(self.rules)
        self.table = Table()  # a new game's check-in starts afresh (the hall sends its pairing)
        self.journal.new_game(self.rules, self.clock, t, notes)
        self.slip_session.reset()
        self.requests.new_game(t)  # a pairing kept for this game is its first input
        self.restored_until_ns = None
        log.info("new game: %d:%02d a player", game_time_ms // 60000, game_time_ms // 1000 % 60)
        if self.on_new_game is not None:
            try:  # no game time runs in a new game: a small atomic write here delays nobody
                self.on_new_game(self.rules)
            except Exception as exc:  # noqa: BLE001 - the new game goes on with its game time
                log.error("the game time for the following games was not saved: %s", exc)

    # --- output --------------------------------------------------------------------------------

    def _texts(self, v: View, now: int) -> tuple[str, str]:
        if self.menu is not None:
            return self.menu_session.texts(v, now, self.rules.game_time_ms)
        shown = self.requests.texts(v, now)  # the hall's identify or notice
        if shown is None and (self.table.calls.open is None or not slips.disputable(self.slip_session.slip)):
            shown = self.slip_session.texts(now)  # the result slip, once a key began it (a dispute's call: CALL)
        if shown is not None:
            return shown
        return render.texts(v, now, restored_until_ns=self.restored_until_ns, table=self.table, keypad=self.table_session.keypad)

    def frame(self, now: int) -> Frame:
        """What the clock shows at `now`."""
        v = view(self.clock, now)
        return Frame(v, self._texts(v, now), self.clock, self.menu is not None, self.journal.game, self.table,
                     self.slip_session.slip, self.table_session.keypad,
                     self.restored_until_ns is not None and now < self.restored_until_ns,
                     self.table_session.confirm_shown(self.table))

    def refresh(self, now: int) -> None:
        """Show every output the frame at `now`: the displays are told a text that changed, the
        buzzer sounds when a time reaches 0:00 or a game is forfeited."""
        frame = self.frame(now)
        for g in self._guarded:
            g.call("view", frame, now)
        self.journal.view(frame, now)

    def flush(self, now: int) -> None:
        """End of an iteration: every output flushes (the journal last: fsync, then a checkpoint
        if one is due), then the systemd watchdog is pinged if due."""
        for g in self._guarded:
            g.call("flush", now)
        self.journal.flush(now)
        if self._next_watchdog_ns is not None and now >= self._next_watchdog_ns:
            self.notifier.watchdog()
            self._next_watchdog_ns = now + self._watchdog_ns
