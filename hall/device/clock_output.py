"""The clock on the hall: a clock output that publishes, and the director's commands into the runner.

Built through the outputs registry (`firmware.outputs.assemble`, name "hall": hall.device.clock_factory)
when clock.toml has a `[hall]` section (or `--hall`). Five threads, each owning its own state (hall.device.owner checks it);
they talk only by posting typed messages:

- **The runner's thread** (`HallOutput`: `applied`, `view`, `flush`, `close`) owns which game it
  last showed, whether its result was sent, when the last state went, and the overflow outage. It
  only posts `Input` (each applied input as the runner told it: the journal's own seq, the game,
  the source and notes), `Shown` (a frame's view when a state is due, and when a game ends) and
  `Stop` to a bounded queue with `put_nowait`, so the clock never waits on the disk or the network.
  A full queue is logged once per outage and what it dropped is recovered from the journal
  (`Resync`); its replies to hall commands (`Replied`) go to their own queue, never dropped.
- **paho's thread** (hall.net.link callbacks) only posts: a command's raw payload with its
  manual-ack token (`CommandIn`), PUBACK mids and connects (to the outbox publisher's inbox).
- **The worker's thread** ("hall-publisher", `_Worker`) owns everything else: the outbox (hall.device.outbox,
  every event, result and ack on disk first), its delivery (hall.device.publisher, shared with the
  station), the command intake (hall.device.intake: checks, de-duplication, the broker's acks), journal
  recovery (hall.device.recovery: inputs the outbox never saw, commands the journals hold, `resend`), each
  game's progress and the retained state.
- **The health watch's thread** ("hall-health", hall.device.health.HealthWatch) reads the Pi's
  health every 30 s and gives the link the retained status with it (`Link.set_status`); it owns
  only the reading last published.
- **The updater's thread** ("hall-update", hall.device.update.Updater, one at a time and only while an
  update runs) owns the update in progress: the fetched bundle, the request and result files in
  the state folder's updates/, the child `rackside update`. It only posts its outcome (`Updated`).

Events carry the input's `seq` in the journal (its number in the game: 1, 2, ...), so subscribers
drop duplicates by (table, game, seq). The state is published retained on every input and at least
every 10 s (not via the outbox: only the latest matters, and it is sent again on every reconnect).
A command is checked whole on the worker; a valid clock input or new game goes to the runner's queue
as a `game.messages.Request` with source "hall", which journals it with the command's id, applies
it as the director's menu would and replies; the worker acks it (with the seq of the input it
became) and only then tells the broker it has the command. `identify` has its id stored in the
outbox first; `resend` is answered from the journal on the worker; `update` is fetched and installed
on a thread of its own ("hall-update", hall.device.update.Updater), which posts its outcome (`Updated`) for
the worker to ack, so neither the runner nor the worker ever waits on it. The core runs once per input, on
the runner's thread: the worker never re-applies inputs (it replays a journal only to recover a
finished game's result, at start-up, after an outage, or for a resend).
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NamedTuple

from rackside import running_version
from rackside.game.clock import Phase, Rules, View
from rackside.firmware.outputs import Applied, Frame, Output
from rackside.hall.device import intake
from rackside.hall.wire import commands, messages, topics
from rackside.hall.net.config import HallConfig
from rackside.hall.net.link import Link
from rackside.hall.device.outbox import Outbox
from rackside.hall.device.owner import Owner
from rackside.hall.wire.payloads import SLIP_NOTE, ack_payload, applied_event, result_payload, slip_payload, state_payload
from rackside.hall.device.publisher import OutboxPublisher
from rackside.hall.device.recovery import JournalRecovery, Row
from rackside.hall.device.health import Health, HealthReader, HealthWatch
from rackside.hall.device.update import Updater
from rackside.outage import Outage

log = logging.getLogger(__name__)

STATE_EVERY_NS = messages.STATE_EVERY_S * 1_000_000_000
QUEUE_SIZE = 2000  # the runner's messages waiting for the worker
COMMANDS_SIZE = 256  # raw commands waiting for the worker (the broker sends at most 50 unacknowledged)
IDENTIFY_TAKEN = "taken just before the clock restarted: if the table did not flash, send identify again"


# --- messages between the threads ------------------------------------------------------------------


class Input(NamedTuple):
    """The runner applied an input (firmware.outputs.Applied) at wall time `wall_ns`."""

    entry: Applied
    wall_ns: int


class Shown(NamedTuple):
    """A frame's view for the state (and, `ended`, the game's result)."""

    game: str | None
    view: View
    rules: Rules
    wall_ns: int
    ended: bool


@dataclass
class GameEvent:
    """A game shown and the event the hall started it for (issue 35): `event` "" none, the `command`
    that started it (None: none), whether it was played `alone` (stand-alone), and whether it has
    `begun` (left setup)."""

    game: str
    event: str = ""
    command: str | None = None
    alone: bool = False
    begun: bool = False


class Stop(NamedTuple):
    pass


class Wake(NamedTuple):
    """Nothing but a nudge: another queue has something for the worker."""


class CommandIn(NamedTuple):
    """paho's thread: a message on the clock's cmd topic, and its manual-ack token."""

    payload: bytes
    token: tuple[int, int] | None


class Replied(NamedTuple):
    """The runner's answer to a hall command's request (on its thread, right after applying it)."""

    command: commands.Command
    ok: bool
    why: str


class Updated(NamedTuple):
    """The updater's thread: an `update` command is over (hall.device.update.Updater's report)."""

    command: commands.Command
    ok: bool
    outcome: str
    why: str


class Resync(NamedTuple):
    """The runner's queue overflowed: bring back from the journal what it dropped."""


# --- the runner's side ----------------------------------------------------------------------------


class HallOutput(Output):
    """Publishes one table clock to the hall and feeds the director's commands into its runner."""

    name = "hall"

    def __init__(
        self,
        cfg: HallConfig,
        journal_dir: Path | None,
        submit: Callable[[Any], None],
        *,
        outbox_path: Path,
        clock_ns: Callable[[], int] = time.monotonic_ns,
        state_every_ns: int = STATE_EVERY_NS,
        queue_size: int = QUEUE_SIZE,
        resolve: Callable[[HallConfig], Any] | None = None,
        health: Health | None = None,
        keypad: bool = False,
    ) -> None:
        self.cfg = cfg
        self.keypad = keypad  # said in every state: only a clock with a keypad checks its players in (issue 27)
        self.clock_ns = clock_ns
        self.state_every_ns = state_every_ns
        self.topic = {leaf: topics.table(cfg.hall, cfg.table, leaf) for leaf in topics.TABLE_TOPICS}
        # the channels between the threads (the only things more than one thread touches)
        self.queue: queue.Queue = queue.Queue(queue_size)  # runner -> worker: Input, Shown, Stop (+ Wake)
        self.replies: queue.SimpleQueue = queue.SimpleQueue()  # runner, updater -> worker: Replied, Updated, Resync (one per command, per outage)
        self.commands: queue.Queue = queue.Queue(COMMANDS_SIZE)  # paho -> worker: CommandIn
        self.publisher = OutboxPublisher()
        self.link = Link(
            cfg,
            self.topic["status"],
            subscribe=(self.topic["cmd"],),
            on_message=self._on_message,
            on_ack=self.publisher.on_ack,
            on_connected=self._on_connected,
            manual_ack=True,  # a command is acked to the broker once journalled (or refused) and its ack is in the outbox
        )
        # `update` commands: fetched and installed on a thread of its own (hall.device.update), one at a time
        self.updater = Updater(Path(outbox_path).parent / "updates", cfg.credentials.tls_ca)
        self.worker = _Worker(self, journal_dir, submit, Path(outbox_path), resolve)
        self.thread = threading.Thread(target=self.worker.run, name="hall-publisher", daemon=True)
        self.health = self._health_watch(health)
        self.stopped = threading.Event()
        # the runner's own state
        self.owner = Owner("hall output (runner side)")
        self.overflow = Outage(log, "hall publisher queue")
        self._game: str | None = None
        self._first = True
        self._ended_sent = False
        self._state_due = False
        self._last_state_ns: int | None = None

    def _health_watch(self, health: Health | None) -> HealthWatch | None:
        """The clock's health in its retained status (hall.device.health, its own thread): the
        write errors are the journal's (`health.journal_errors`) and the outbox's (the worker's)."""
        if health is None:
            return None
        journal_errors = health.journal_errors
        reader = HealthReader(health.state_dir, lambda: (journal_errors() or 0) + self.worker.write_errors)
        # its status says which later command fields it takes (the console sends them only then)
        return HealthWatch(reader, self.link.set_status, running_version(), faults=health.faults, takes=commands.TAKES)

    @property
    def published(self) -> int:
        """Outbox rows acknowledged by the broker (read for benches and tests; an int is atomic)."""
        return self.publisher.published

    # --- the runner's thread (never waits) ---------------------------------------------------------

    def start(self) -> None:
        self.owner.release()  # the runner's loop owns it from here (it may run on another thread than its start)
        self.thread.start()
        if self.health is not None:
            self.health.start()

    def applied(self, entry: Applied) -> None:
        self.owner.check()
        self._put(Input(entry, self._wall(entry.t_ns)))
        self._state_due = True  # the frame that follows in this iteration carries the state

    def view(self, frame: Frame, t_ns: int) -> None:
        self.owner.check()
        v = frame.view
        ended = v.phase is Phase.ENDED
        if self._first or frame.game != self._game:  # the first view, or a new game
            self._first, self._game, self._ended_sent = False, frame.game, ended
            due = True
        elif ended and not self._ended_sent:
            self._ended_sent = due = True
            self._put(Shown(frame.game, v, frame.clock.rules, self._wall(t_ns), True))
            self._state_due, self._last_state_ns = False, t_ns
            return
        else:
            due = self._state_due or self._last_state_ns is None or t_ns - self._last_state_ns >= self.state_every_ns
        if due:
            self._put(Shown(frame.game, v, frame.clock.rules, self._wall(t_ns), False))
            self._state_due, self._last_state_ns = False, t_ns

    def flush(self, t_ns: int) -> None:
        self.owner.check()

    def close(self, timeout: float = 3.0) -> None:
        if self.thread.is_alive():
            try:
                self.queue.put(Stop(), timeout=timeout)
            except queue.Full:
                pass
            self.thread.join(timeout)
        if self.health is not None:
            self.health.close()
        self.link.close()

    def _wall(self, t_ns: int) -> int:
        return time.time_ns() - (self.clock_ns() - t_ns)

    def _put(self, item: NamedTuple) -> None:
        """Queue `item` for the worker without waiting; a drop is an outage, logged once, and
        recovered from the journal when the queue has room again."""
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            self.overflow.failed(f"queue full ({self.queue.maxsize}); events will be recovered from the journal")
            return
        if self.overflow.active:
            self.overflow.recovered()
            self.replies.put(Resync())

    def _replied(self, cmd: commands.Command, ok: bool, why: str) -> None:
        """A request's reply (game.messages.Reply): on the runner's thread, right after it applied the command."""
        self.replies.put(Replied(cmd, ok, why))
        self._wake()

    def _updated(self, cmd: commands.Command, ok: bool, outcome: str, why: str) -> None:
        """An update's outcome (on the updater's thread)."""
        self.replies.put(Updated(cmd, ok, outcome, why))
        self._wake()

    def _wake(self) -> None:
        try:
            self.queue.put_nowait(Wake())
        except queue.Full:
            pass  # a full queue wakes the worker anyway

    # --- paho's thread -----------------------------------------------------------------------------

    def _on_connected(self) -> None:
        self.publisher.on_connected()
        self._wake()

    def _on_message(self, topic: str, payload: bytes, token: tuple[int, int] | None = None) -> None:
        if topic != self.topic["cmd"]:
            if token is not None:
                self.link.ack(token)
            return
        try:
            self.commands.put_nowait(CommandIn(payload, token))
        except queue.Full:  # never acked: the broker delivers it again after a reconnect
            log.warning("hall command dropped: %d commands are waiting already", self.commands.maxsize)
            return
        self._wake()


# --- the worker's thread ----------------------------------------------------------------------------


class _Worker:
    """Everything of the hall output but the runner's side: owned by the "hall-publisher" thread."""

    def __init__(self, out: HallOutput, journal_dir: Path | None, submit: Callable[[Any], None], outbox_path: Path, resolve) -> None:
        self.out = out
        self.submit = submit  # puts a game.messages.Request on the runner's queue (thread-safe)
        self.outbox_path = outbox_path
        self.resolve = resolve
        self.topic = out.topic
        self.owner = Owner("hall output (worker)")
        self.version = running_version()  # in every state: which Rackside this table runs
        self.fault = Outage(log, "hall publisher")
        self.write_errors = 0  # outbox writes that failed (the health's; an int, read from the health thread)
        self.intake = intake.CommandIntake()
        self.recovery = JournalRecovery(journal_dir, out.topic)
        self.outbox: Outbox | None = None
        self._progress: dict[str, tuple[int, bool]] = {}  # game -> (last journal seq in the outbox, result put)
        self._seqs: dict[str, int] = {}  # each game's last journal seq seen (the state's seq)
        self._state: tuple[bytes, bool] | None = None  # (payload, published)
        self._rules: Rules | None = None  # the running game's: a new_game's defaults
        # the game shown and its event (issue 35), and the game's before it (a new_game's ack names
        # the game it archived)
        self._event: GameEvent | None = None
        self._left: GameEvent | None = None
        self._remaining_ms: tuple[int, int] = (0, 0)  # the players' remaining times, as last shown (a late start's limit)
        self._command_seq: dict[str, int | None] = {}  # a hall command's id -> the seq of the input it became
        self._resync_due = False
        self._carry: tuple[list[Row], dict[str, bytes], list[str | None]] = ([], {}, [])  # acks a failed batch did not store

    def run(self) -> None:
        self.owner.check()
        try:
            self.outbox = Outbox(self.outbox_path)
        except Exception as e:  # noqa: BLE001 - no outbox: the clock runs on, off the hall
            log.error("hall outbox %s cannot be opened (%s); this clock is not on the hall", self.outbox_path, e)
            return
        self.out.publisher.open(self.outbox, self.out.link)
        self._resync()
        # before connecting: a redelivered command finds its answer
        self.intake.remember({**self.recovery.answered(time.time_ns()), **self.outbox.answered()})
        self._connect()
        stopping = False
        while not stopping:
            try:
                first = [self.out.queue.get(timeout=0.02 if self.out.publisher.busy else 0.5)]
            except queue.Empty:
                first = []
            # replies before the queue's rest: an Input the runner posted before its Replied is in `items`
            replies, cmds = _drain(self.out.replies), _drain(self.out.commands)
            items = first + _drain(self.out.queue)
            try:
                stopping = self._handle(items, replies, cmds)
                if self.out.publisher.deliver() and self._state is not None:
                    self._state = (self._state[0], False)  # reconnected: the retained state again
                self._publish_state()
                self.fault.recovered()
            except Exception as e:  # noqa: BLE001 - a disk or network fault: logged once, retried
                if isinstance(e, (OSError, sqlite3.Error)):
                    self.write_errors += 1
                self.fault.failed(repr(e))
                time.sleep(0.5)
        self.out.publisher.deliver()
        self.out.publisher.drain()
        self.outbox.close()
        self.out.stopped.set()

    def _connect(self) -> None:
        endpoint = self.out.cfg.endpoint
        if endpoint is None:
            from rackside.hall.net import mdns

            resolve = self.resolve or mdns.find_broker
            while endpoint is None:
                endpoint = resolve(self.out.cfg)
                if endpoint is None:
                    self.fault.failed(mdns.NOT_FOUND)
                    time.sleep(2)
        self.out.link.start(endpoint)

    def _progress_of(self, game: str) -> tuple[int, bool]:
        if game not in self._progress:
            self._progress[game] = self.outbox.progress(game)
        return self._progress[game]

    def _last_seq(self, game: str) -> int:
        """The journal seq the state of `game` includes up to (the outbox's progress after a restart)."""
        if game not in self._seqs:
            self._seqs[game] = self._progress_of(game)[0]
        return self._seqs[game]

    def _handle(self, items: list, replies: list, cmds: list) -> bool:
        self.owner.check()
        rows, answered, settled = list(self._carry[0]), dict(self._carry[1]), list(self._carry[2])
        self._carry = ([], {}, [])
        changed: dict[str, tuple[int, bool]] = {}
        stopping = False
        if any(isinstance(r, Resync) for r in replies):
            self._resync_due = True
        if self._resync_due:  # before this batch, so events stay in order; retried until it works
            self._resync()
            self._resync_due = False
        for item in items:
            if isinstance(item, Input):
                self._input(item, rows, changed)
            elif isinstance(item, Shown):
                self._shown(item, rows, changed)
            elif isinstance(item, Stop):
                stopping = True
        for r in replies:
            if isinstance(r, Replied):
                seq = self._command_seq.pop(r.command.id, None) if r.ok else None
                why = r.why or (self._archived(r.command) if r.ok and commands.SPECS[r.command.name].answerer == "game" else None)
                rows.append(self._ack(r.command.id, r.ok, why or None, seq, answered))
                settled.append(r.command.id)
            elif isinstance(r, Updated):
                update = {"version": r.command.version, "outcome": r.outcome}
                rows.append(self._ack(r.command.id, r.ok, r.why or None, None, answered, update=update))
                settled.append(r.command.id)
        for c in cmds:
            self._command(c, rows, answered, settled)
        try:
            self.outbox.put(rows, changed, answered)
        except Exception:
            # Nothing of this batch is stored: forget the progress it marked (re-read from the
            # outbox), bring its inputs and result back from the journal, and keep its acks.
            for game in changed:
                self._progress.pop(game, None)
            self._resync_due = True
            ack = self.topic["ack"]
            self._carry = ([r for r in rows if r[0] == ack], answered, settled)
            raise
        for cid in settled:  # stored: the broker may forget these commands now
            for token in self.intake.settle(cid):
                self.out.link.ack(token)
        return stopping

    def _input(self, item: Input, rows: list[Row], changed: dict) -> None:
        entry = item.entry
        if entry.source == "hall" and "command" in entry.notes:
            self._command_seq[entry.notes["command"]] = entry.seq
        if entry.seq is None or entry.game is None:
            return  # not journalled: its effect is in the next state (docs/hall.md's known limits)
        seen, result = self._progress_of(entry.game)
        if entry.seq > seen:
            rows.append((self.topic["event"], applied_event(entry, item.wall_ns), 1, 0))
            if SLIP_NOTE in entry.notes:  # the signature that made the result slip final: the slip (QoS 1)
                rows.append((self.topic["event"], slip_payload(entry.notes[SLIP_NOTE], entry.game, entry.seq, item.wall_ns), 1, 0))
            self._progress[entry.game] = changed[entry.game] = (entry.seq, result)
        self._seqs[entry.game] = entry.seq

    def _shown(self, item: Shown, rows: list[Row], changed: dict) -> None:
        game = item.game or "none"
        self._rules = item.rules
        if self._event is None or self._event.game != game:  # a new game: its journal's header says its event
            self._left = self._event
            self._event = GameEvent(game, *self.recovery.event_of(game)) if item.game is not None else GameEvent(game)
        self._event.begun = self._event.begun or item.view.phase is not Phase.SETUP
        self._remaining_ms = tuple(p.remaining_ms for p in item.view.players)
        if item.ended and item.game is not None:
            seen, result = self._progress_of(game)
            if not result:
                rows.extend(self.recovery.result_rows(result_payload(item.view, game, item.wall_ns, event=self._event.event,
                                                                                    alone=self._event.alone)))
                self._progress[game] = changed[game] = (seen, True)
        self._state = (state_payload(item.view, game, self._last_seq(game), item.wall_ns, item.rules, self.version,
                                     keypad=self.out.keypad, event=self._event.event, alone=self._event.alone), False)

    def _archived(self, cmd: commands.Command) -> str | None:
        """A new_game for an event while the clock's game was another event's (or none's: a practice
        game): that game stays in the journals' archive, out of this event, and the ack says so
        (issue 35). None when the game before was this event's."""
        before = self._left if self._event is not None and self._event.command == cmd.id else self._event
        if before is None or before.event == (cmd.event or "") or not before.begun:
            return None  # this event's, or a game never begun (the clock's own, waiting in setup)
        game, was = before.game, before.event
        whose = f"event {was!r}" if was else "no event (a game the hall did not start: a practice game)"
        line = f"{game} of {whose} archived: the new game is {f'event {cmd.event!r}' if cmd.event else 'of no event'}'s"
        log.info("hall: %s", line)
        return line

    def _command(self, c: CommandIn, rows: list[Row], answered: dict, settled: list) -> None:
        decision = self.intake.receive(c.payload, c.token, self._rules)
        if isinstance(decision, intake.Refused):
            log.warning("hall command refused: %s", decision.reason)
            rows.append(self._ack(decision.id, False, decision.reason, None, answered))
            settled.append(decision.id)
            return
        if isinstance(decision, intake.AnsweredBefore):  # redelivered: answer again, apply once
            rows.append((self.topic["ack"], decision.ack, 1, 0))
            settled.append(decision.id)
            return
        if isinstance(decision, intake.Pending):
            return  # its answer settles both deliveries
        cmd = decision.command
        log.info("hall command %s: %s", cmd.id, cmd.name)
        answerer = commands.SPECS[cmd.name].answerer
        if answerer == "journal":  # resend: answered here, from the journal, never by the runner
            why = self.intake.resend_allowed(time.monotonic())
            ok, reason, found = (False, why, []) if why else self.recovery.resend(cmd.game, cmd.from_seq, cmd.to_seq)
            rows.extend(found)
            rows.append(self._ack(cmd.id, ok, reason, None, answered, queued=len(found)))
            settled.append(cmd.id)
            return
        if answerer == "updater":
            self._update(cmd, rows, answered, settled)
            return
        try:  # a late start from the scheduled start: that moment on this clock
            t_ns = commands.dated(cmd, self.out.clock_ns(), time.time_ns(), self._remaining_ms)
        except commands.CommandError as e:
            rows.append(self._ack(cmd.id, False, str(e), None, answered))
            settled.append(cmd.id)
            return
        if answerer == "display":  # identify
            # Stored before the displays flash, so a redelivery after a restart is acked and not
            # flashed again (at most once: a kill between the two leaves it unflashed, and the
            # stored ack says so); the runner's answer replaces it.
            try:
                self.outbox.put([], answered={cmd.id: ack_payload(cmd.id, True, IDENTIFY_TAKEN, None, time.time_ns())})
            except Exception as e:  # noqa: BLE001 - a failing card: flash anyway (a redelivery may flash twice)
                log.warning("hall: identify %s not stored before flashing: %s", cmd.id, e)
        self._submit(cmd, t_ns)

    def _update(self, cmd: commands.Command, rows: list[Row], answered: dict, settled: list) -> None:
        """Start the update on the updater's thread; its outcome is the ack (`Updated`). Acked at
        once: the version running already (the restarted clock, when the command comes again), or
        another update still running."""
        if cmd.version == self.version:
            rows.append(self._ack(cmd.id, True, f"running {cmd.version} already", None, answered,
                                  update={"version": cmd.version, "outcome": "switched"}))
            settled.append(cmd.id)
            return
        out = self.out
        started = out.updater.start(cmd.id, cmd.version, cmd.sha256, cmd.url, cmd.token, cmd.wait_s,
                                    lambda ok, outcome, why: out._updated(cmd, ok, outcome, why),
                                    allow_downgrade=cmd.allow_downgrade)
        if not started:
            rows.append(self._ack(cmd.id, False, "another update is running on this clock: send it again when it is over",
                                  None, answered, update={"version": cmd.version, "outcome": "failed"}))
            settled.append(cmd.id)

    def _submit(self, cmd: commands.Command, t_ns: int) -> None:
        """The command as the runner's request (hall.wire.commands.SPECS: its arguments and notes; a
        pairing carries this clock's table number, which the check-in shows before the game)."""
        from rackside.game.messages import Request

        out = self.out
        self.submit(Request(t_ns, cmd.name, cmd.request(out.cfg.table), source="hall",
                            reply=lambda ok, why: out._replied(cmd, ok, why)))

    def _ack(self, cid: str | None, ok: bool, reason: str | None, seq: int | None, answered: dict, **extra: Any) -> Row:
        """A command's ack, remembered (by the intake, and in the outbox with the batch) so a
        redelivered command is acked again without being done twice."""
        payload = ack_payload(cid, ok, reason, seq, time.time_ns(), **extra)
        if cid is not None:
            answered[cid] = payload
            self.intake.answer(cid, payload)
        return (self.topic["ack"], payload, 1, 0)

    def _resync(self) -> None:
        """Put into the outbox every input of the last two journals it has not seen (by `seq`), and a
        finished game's result: what a crash, a power cut or a full queue kept from the worker."""
        for found in self.recovery.missing(self._progress_of):
            self.outbox.put(found.rows, {found.game: (found.seq, found.result)})
            self._progress[found.game] = (found.seq, found.result)

    def _publish_state(self) -> None:
        if self._state is not None and not self._state[1] and self.out.link.connected.is_set():
            if self.out.link.publish(self.topic["state"], self._state[0], qos=1, retain=True) is not None:
                self._state = (self._state[0], True)


def _drain(q) -> list:
    items = []
    while True:
        try:
            items.append(q.get_nowait())
        except queue.Empty:
            return items
