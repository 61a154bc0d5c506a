"""The clock on the hall: a clock output that publishes, and the command subscriber.

A `firmware.outputs` output, built by `rackside clock` when clock.toml has a `[hall]` section (or
`--hall`). On the runner's thread, `applied(input, seq, clock, t_ns)` (each input applied),
`view(frame, t_ns)` (each loop iteration) and `flush(t_ns)` only put a small tuple on a bounded
queue (`put_nowait`: never waits; a full queue is logged once per outage and recovered from the
journal), so the clock never waits on the disk or the network. The publisher's own thread:

- writes each input as an event, the game's result, and each command's ack into the outbox
  (hall.outbox) first, then publishes them in order at QoS 1 and deletes each only when the broker
  acknowledged it; `seq` is the input's `seq` in the journal (its number in the game: 1, 2, ...),
  so subscribers drop duplicates by (table, game, seq);
- publishes the retained state on every input and at least every 10 s (not via the outbox: only
  the latest state matters, and it is published again on every reconnect);
- at start-up puts into the outbox every input of the last two journals it has not yet seen, so a
  clock killed before its publisher wrote an event still delivers it.

Commands arrive on paho's thread (`_on_message`), are checked whole (hall.commands), and go into
the runner's queue as a `firmware.messages.Request` with source "hall": the runner journals the
input with "source": "hall", applies it exactly as the director's menu would, hands it to the
outputs (`applied`) and calls the request's `reply(accepted, why)`, which becomes the ack (with the
input's seq: `applied` holds the input until the runner's next call, so the reply that follows it
marks it as the hall's). A refused command is acked with the reason and never reaches the runner.
A command delivered twice (QoS 1 after a reconnect) is acked again, applied once.
"""

from __future__ import annotations

import collections
import datetime
import json
import logging
import queue
import threading
import time
from pathlib import Path
from typing import Any, Callable

from rackside import running_version
from rackside.firmware.clock import Adjust, Arrive, End, Forfeit, LateStart, Neutralise, Phase, Press, Resume, Rules, View
from rackside.firmware.clock import view as clock_view
from rackside.firmware.journal import JournalError, input_to_dict, read_journal
from rackside.hall import commands, topics
from rackside.hall.config import HallConfig
from rackside.hall.link import Link
from rackside.firmware.runner import NOTES as RUNNER_NOTES
from rackside.hall import outbox as outbox_module
from rackside.hall.outbox import Outbox
from rackside.outage import Outage

log = logging.getLogger(__name__)

SPILL = ("ack", "ack_again", "resend", "identify")  # queue items no journal holds: kept aside, never dropped
INPUT_TYPES = (Press, Neutralise, End, Adjust, LateStart, Arrive, Forfeit, Resume)
STATE_EVERY_NS = 10_000_000_000
QUEUE_SIZE = 2000
WINDOW = 50  # messages in flight at once: paho's and the broker's limit
RESEND_AFTER_S = 10.0  # after a reconnect, rows still unacknowledged this long are handed to paho again
ANSWERED_KEEP = outbox_module.ANSWERED_KEEP  # command ids remembered, to ack a redelivered command without applying it twice
# `resend` (the console asks for events it missed): answered from the journal, at most this many
# events a command (the console asks again from where it got to), and at most RESEND_BURST commands
# at once then one more every RESEND_EVERY_S on this clock (a token bucket): a console, or anyone
# with the director's login, cannot keep the clock's card and its link busy re-reading journals.
RESEND_MAX_EVENTS = 500
RESEND_BURST = 5
RESEND_EVERY_S = 2.0
JOURNAL_NOTES = ("source", *RUNNER_NOTES)  # what a journal line carries beside the input, published with it


def iso(wall_ns: int) -> str:
    return datetime.datetime.fromtimestamp(wall_ns / 1e9, datetime.timezone.utc).isoformat(timespec="milliseconds")


def dumps(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def players(v: View) -> list[dict]:
    return [
        {
            "player": p.player,
            "remaining_ms": p.remaining_ms,
            "overtime_s": p.overtime_s,
            "penalty": p.penalty,
            "forfeit": p.forfeit,
            "absent": p.absent,  # not yet arrived after a late start: the page ticks their time (2.3.2(a))
        }
        for p in v.players
    ]


STATE_RULES = ("game_time_ms", "penalty_per_minute", "forfeit_overtime_ms", "lateness_forfeit_margin")


def state_payload(v: View, game: str, seq: int, wall_ns: int, rules: Rules | None = None, version: str | None = None) -> bytes:
    """The retained state; `rules` (the running game's) let a page compute penalties and forfeits
    under the rules the game is played under (a new_game may set other than WESPA's); `version`
    is the Rackside the clock runs (after an update, the director sees which version each table has)."""
    running = next((p.player for p in v.players if p.running), None)
    state = {
        "seq": seq,
        "game": game,
        "phase": v.phase.value,
        "running": running,
        "players": players(v),
        "ending": v.ending.value if v.ending else None,
        "sent_at": iso(wall_ns),
    }
    if rules is not None:
        state["rules"] = {k: getattr(rules, k) for k in STATE_RULES}
    if version is not None:
        state["version"] = version
    return dumps(state)


def result_payload(v: View, game: str, wall_ns: int | None) -> bytes:
    return dumps(
        {
            "kind": "result",
            "game": game,
            "seq": 0,  # no input has seq 0 (they count from 1): the result's own key
            "ending": v.ending.value if v.ending else None,
            "players": players(v),
            "forfeits": list(v.forfeits),
            "winner_by_forfeit": v.winner_by_forfeit(),
            "lateness_margin": v.lateness_margin,
            "at": iso(wall_ns) if wall_ns else None,
        }
    )


def event_payload(line: dict, game: str, seq: int, wall_ns: int | None) -> bytes:
    return dumps({"kind": "input", "game": game, "seq": seq, **line, "at": iso(wall_ns) if wall_ns else None})


def journal_event(jl, game: str) -> bytes:
    """A journal line (firmware.journal.Line) as its event: the input and what was journalled
    beside it (source, command, by, reason, scheduled_start); `at` null (the journal keeps the
    monotonic time only)."""
    d = {k: v for k, v in (jl.data or {}).items() if k in JOURNAL_NOTES}
    return event_payload({**input_to_dict(jl.event), **d}, game, jl.seq, None)


class HallOutput:
    """Publishes one table clock to the hall and feeds the director's commands into its runner."""

    def __init__(
        self,
        cfg: HallConfig,
        store: Any,
        submit: Callable[[Any], None],
        *,
        outbox_path: Path,
        clock_ns: Callable[[], int] = time.monotonic_ns,
        state_every_ns: int = STATE_EVERY_NS,
        queue_size: int = QUEUE_SIZE,
        resolve: Callable[[HallConfig], Any] | None = None,
    ) -> None:
        self.cfg = cfg
        self.version = running_version()  # in every state: which Rackside this table runs
        self.store = store
        self.submit = submit  # puts a firmware.messages.Request on the runner's queue
        self.clock_ns = clock_ns
        self.state_every_ns = state_every_ns
        self.outbox_path = outbox_path
        self.resolve = resolve
        n = cfg.table
        self.topic = {leaf: topics.table(cfg.hall, n, leaf) for leaf in topics.TABLE_TOPICS}
        self.queue: queue.Queue = queue.Queue(queue_size)
        self.overflow = Outage(log, "hall publisher queue")
        self.fault = Outage(log, "hall publisher")
        self._acks: collections.deque[int] = collections.deque()
        # Acks that found the queue full: an ack is in no journal (the resync cannot bring it back),
        # so it is kept here and published with the next batch rather than dropped.
        self._spilled: collections.deque[tuple] = collections.deque()
        self._resync_due = False  # a batch the outbox refused: its inputs come back from the journal
        self._answered: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._pending_cmds: set[str] = set()
        # each command id's broker acknowledgements to send (paho's (mid, qos)), once its ack row is
        # in the outbox: a clock killed before that gets the command again
        self._tokens: dict[str | None, list[tuple[int, int]]] = {}
        self._flashing: set[str] = set()  # identify commands handed to the runner, not yet answered (publisher's)
        self._resend_budget = float(RESEND_BURST)
        self._resend_at = time.monotonic()
        self._hold_since: float | None = None  # reconnected at; in-flight rows are being re-sent
        self._cmd_lock = threading.Lock()
        # the runner thread's own bookkeeping
        self._path: Path | None = None
        self._held: list | None = None  # the last applied input, until the runner's next call
        self.phase = Phase.SETUP  # the latest frame's (read by the command subscriber)
        self.remaining_ms = (0, 0)  # ... and its players' remaining times (a late start's limit)
        self._ended_sent = False
        self._last_state_ns: int | None = None
        self.link = Link(
            cfg,
            self.topic["status"],
            subscribe=(self.topic["cmd"],),
            on_message=self._on_message,
            on_ack=self._on_ack,
            on_connected=self._on_connected,
            manual_ack=True,  # a command is acked to the broker once journalled (or refused) and its ack is in the outbox
        )
        self.thread = threading.Thread(target=self._run, name="hall-publisher", daemon=True)
        self.published = 0  # outbox rows acknowledged by the broker
        self.stopped = threading.Event()

    # --- the runner's side (its thread; never waits) -------------------------------------------

    def start(self) -> None:
        self.thread.start()

    def applied(self, inp, seq, clock, t_ns) -> None:
        # Held until the runner's next call: if it is the reply to a hall command, the input is
        # marked "source": "hall" first (the runner answers a request right after applying it).
        self._release()
        if seq is not None:  # written: key it by the journal's own seq (issue 9), as the resync does
            seq = getattr(self.store, "last_seq", seq)
        self._held = ["input", self._game_path(None), clock, inp, seq, t_ns, None, self._wall(t_ns)]
        self._last_state_ns = t_ns

    def _game_path(self, game: int | None) -> Path | None:
        """The current game's journal: the store's own (it changes the moment a new game's journal
        is created, before any frame shows it), else the frame's game number, else the last one."""
        path = getattr(self.store, "journal_path", None)
        if path is not None:
            return Path(path)
        return Path(f"game-{game:06d}.jsonl") if game is not None else self._path

    def flush(self, t_ns: int) -> None:
        self._release()

    def next_due_ns(self, t_ns: int) -> int | None:
        return None

    def _release(self) -> None:
        if self._held is not None:
            item, self._held = self._held, None
            self._put(tuple(item))

    def view(self, frame, t_ns: int) -> None:
        self._release()
        v = frame.view
        self.phase = v.phase
        self.remaining_ms = tuple(p.remaining_ms for p in v.players)
        path = self._game_path(frame.game)
        rules = frame.clock.rules
        if path != self._path:  # a new game (or the first view)
            self._path, self._ended_sent = path, v.phase is Phase.ENDED
            self._put(("view", path, v, self._wall(t_ns), rules))
            self._last_state_ns = t_ns
        elif v.phase is Phase.ENDED and not self._ended_sent:
            self._ended_sent = True
            self._put(("result", path, v, self._wall(t_ns), rules))
            self._last_state_ns = t_ns
        elif self._last_state_ns is None or t_ns - self._last_state_ns >= self.state_every_ns:
            self._put(("view", path, v, self._wall(t_ns), rules))
            self._last_state_ns = t_ns

    def close(self, timeout: float = 3.0) -> None:
        self._release()
        if self.thread.is_alive():
            try:
                self.queue.put(("stop",), timeout=timeout)
            except queue.Full:
                pass
            self.thread.join(timeout)
        self.link.close()

    def _wall(self, t_ns: int) -> int:
        return time.time_ns() - (self.clock_ns() - t_ns)

    def _put(self, item: tuple, wake: bool = False) -> None:
        """Queue `item` for the publisher without waiting. `wake` items (a nudge, a resync) may be
        dropped silently when the queue is full; anything else dropped is an outage, logged once."""
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            if item[0] in SPILL:
                self._spilled.append(item)
            if not wake:
                self.overflow.failed(f"queue full ({self.queue.maxsize}); events will be recovered from the journal")
            return
        if self.overflow.active and not wake:
            self.overflow.recovered()
            self._put(("resync",), wake=True)

    # --- paho's thread ---------------------------------------------------------------------------

    def _on_connected(self) -> None:
        # Hold new rows back until paho's re-sent in-flight ones are acknowledged: order is kept.
        self._hold_since = time.monotonic()
        self._put(("connected",), wake=True)

    def _on_ack(self, mid: int) -> None:
        self._acks.append(mid)

    def _on_message(self, topic: str, payload: bytes, token: tuple[int, int] | None = None) -> None:
        if topic != self.topic["cmd"]:
            if token is not None:
                self.link.ack(token)
            return
        try:
            cmd = commands.parse(payload, getattr(self.store, "rules", None))
        except commands.CommandError as e:
            log.warning("hall command refused: %s", e)
            cid = commands.command_id(payload)
            with self._cmd_lock:
                self._tokens.setdefault(cid, []).extend([token] if token else [])
            self._put(("ack", cid, False, str(e), None))
            return
        with self._cmd_lock:
            self._tokens.setdefault(cmd.id, []).extend([token] if token else [])
            if cmd.id in self._answered:  # redelivered: answer again, apply once
                self._put(("ack_again", cmd.id, self._answered[cmd.id]))
                return
            if cmd.id in self._pending_cmds:
                return
            self._pending_cmds.add(cmd.id)
        log.info("hall command %s: %s", cmd.id, cmd.name)
        if cmd.name == "resend":  # answered from the journal on the publisher's thread
            self._put(("resend", cmd))
            return
        if cmd.name == "identify":  # its id is stored before the displays flash (publisher's thread)
            self._put(("identify", cmd))
            return
        if cmd.name == "new_game" and self.phase in (Phase.RUNNING, Phase.LATE):
            self._reply(cmd, False, f"the game is {self.phase.value}: neutralise or end it first", None)
            return
        try:  # a late start from the scheduled start: that moment on this clock
            t_ns = commands.dated(cmd, self.clock_ns(), time.time_ns(), self.remaining_ms)
        except commands.CommandError as e:
            self._reply(cmd, False, str(e), None)
            return
        self._submit(cmd, t_ns)

    def _submit(self, cmd: commands.Command, t_ns: int) -> None:
        from rackside.firmware.messages import Request

        args = {
            "adjust": lambda: {"player": cmd.player, "remaining_ms": cmd.remaining_ms},
            "late_start": lambda: {"players": list(cmd.players)},
            "arrive": lambda: {"player": cmd.player},
            "new_game": lambda: {"game_time_ms": cmd.rules.game_time_ms, "rules": cmd.rules},
            "identify": lambda: {"seconds": cmd.seconds},
        }[cmd.name]()
        args.update(cmd.notes())  # journalled beside the input (firmware.runner.NOTES)
        self.submit(Request(t_ns, cmd.name, args, source="hall", reply=lambda ok, why: self._replied(cmd, ok, why)))

    def _replied(self, cmd: commands.Command, ok: bool, why: str) -> None:
        """The runner's answer (on its thread, right after applying the command's input)."""
        seq = None
        held = self._held
        if ok and held is not None and held[3] == cmd.clock_input(held[3].t_ns):
            held[6] = {"source": "hall", **cmd.notes()}  # the input this command became, who sent it and why
            seq = held[4]
        self._release()
        self._reply(cmd, ok, why or None, seq)

    def _reply(self, cmd: commands.Command, ok: bool, reason: str | None, seq: int | None, **extra: Any) -> None:
        self._put(("ack", cmd.id, ok, reason, seq, extra))

    # --- the publisher's thread ----------------------------------------------------------------

    def _run(self) -> None:
        try:
            self.outbox = Outbox(self.outbox_path)
        except Exception as e:  # noqa: BLE001 - no outbox: the clock runs on, off the hall
            log.error("hall outbox %s cannot be opened (%s); this clock is not on the hall", self.outbox_path, e)
            return
        self._progress: dict[str, tuple[int, bool]] = {}
        self._inflight: dict[int, int] = {}  # mid -> outbox row id
        self._sent_upto = 0  # the last outbox row handed to paho in this process
        self._state: tuple[bytes, bool] | None = None  # (payload, published)
        self._seqs: dict[str, int] = {}  # each game's last journal seq seen
        self._resync()
        self._remember_answered()  # before connecting: a redelivered command finds its answer
        self._connect()
        stopping = False
        while not stopping:
            busy = self._inflight or self._acks
            try:
                items = [self.queue.get(timeout=0.02 if busy else 0.5)]
            except queue.Empty:
                items = []
            while True:
                try:
                    items.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            try:
                stopping = self._handle(items)
                self._deliver()
                self.fault.recovered()
            except Exception as e:  # noqa: BLE001 - a disk or network fault: logged once, retried
                self.fault.failed(repr(e))
                time.sleep(0.5)
        self._deliver()
        deadline = time.monotonic() + 2  # a clean stop waits briefly for the last acks: no resend
        while self._inflight and self.link.connected.is_set() and time.monotonic() < deadline:
            time.sleep(0.02)
            self._deliver()
        self.outbox.close()
        self.stopped.set()

    def _connect(self) -> None:
        endpoint = self.cfg.endpoint
        if endpoint is None:
            from rackside.hall import mdns

            resolve = self.resolve or mdns.find_broker
            while endpoint is None:
                endpoint = resolve(self.cfg)
                if endpoint is None:
                    self.fault.failed("no hall broker found by mDNS (_mqtt._tcp); retrying")
                    time.sleep(2)
        self.link.start(endpoint)

    def _game(self, path: Path | None) -> str:
        return path.stem if path is not None else "none"

    def _last_seq(self, game: str) -> int:
        """The journal seq the state of `game` includes up to (the outbox's progress after a restart)."""
        if game not in self._seqs:
            self._seqs[game] = self._progress_of(game)[0]
        return self._seqs[game]

    def _progress_of(self, game: str) -> tuple[int, bool]:
        if game not in self._progress:
            self._progress[game] = self.outbox.progress(game)
        return self._progress[game]

    def _handle(self, items: list[tuple]) -> bool:
        rows: list[tuple[str, bytes, int, int]] = []
        changed: dict[str, tuple[int, bool]] = {}
        answered: dict[str, bytes] = {}  # stored with the batch: a redelivered command is acked again
        settled: list[str | None] = []  # commands whose broker acknowledgement may go once the batch is stored
        stopping = False
        if self._resync_due:  # before this batch, so events stay in order; retried until it works
            try:
                self._resync()
            except Exception:
                self._spilled.extend(i for i in items if i[0] in SPILL)  # its inputs: in the journal
                raise
            self._resync_due = False
        while self._spilled:
            items.append(self._spilled.popleft())
        for item in items:
            kind = item[0]
            if kind == "input":
                _, path, clock, inp, seq, t_ns, source, wall = item
                game = self._game(path)
                seen, result = self._progress_of(game)
                if seq is not None and seq > seen:
                    d = input_to_dict(inp)
                    if source:
                        d.update(source)
                    rows.append((self.topic["event"], event_payload(d, game, seq, wall), 1, 0))
                    self._progress[game] = changed[game] = (seq, result)
                if seq is not None:
                    self._seqs[game] = seq
                self._state = (state_payload(clock_view(clock, t_ns), game, self._last_seq(game), wall, clock.rules, self.version), False)
            elif kind == "view":
                _, path, v, wall, rules = item
                game = self._game(path)
                self._state = (state_payload(v, game, self._last_seq(game), wall, rules, self.version), False)
            elif kind == "result":
                _, path, v, wall, rules = item
                game = self._game(path)
                seen, result = self._progress_of(game)
                if not result:
                    rows.extend(self._result_rows(result_payload(v, game, wall)))
                    self._progress[game] = changed[game] = (seen, True)
                self._state = (state_payload(v, game, self._last_seq(game), wall, rules, self.version), False)
            elif kind == "ack":
                _, cid, ok, reason, seq, *extra = item
                rows.append((self.topic["ack"], self._answer(cid, ok, reason, seq, answered, extra[0] if extra else {}), 1, 0))
                settled.append(cid)
            elif kind == "ack_again":
                rows.append((self.topic["ack"], item[2], 1, 0))
                settled.append(item[1])
            elif kind == "resend":
                cmd = item[1]
                ok, reason, found = self._resend(cmd)
                rows.extend(found)
                rows.append((self.topic["ack"], self._answer(cmd.id, ok, reason, None, answered, {"queued": len(found)}), 1, 0))
                settled.append(cmd.id)
            elif kind == "identify":
                # Stored before the displays flash, so a redelivery after a restart is acked and
                # not flashed again (at most once: a kill between the two leaves it unflashed, and
                # the stored ack says so); the runner's answer replaces it.
                cmd = item[1]
                if cmd.id in self._flashing:  # handed to the runner already (this batch is being retried)
                    continue
                taken = dumps({"id": cmd.id, "ok": True, "reason": "taken just before the clock restarted: if the table did not flash, send identify again", "seq": None, "at": iso(time.time_ns())})
                self.outbox.put([], answered={cmd.id: taken})
                self._submit(cmd, self.clock_ns())
                self._flashing.add(cmd.id)
            elif kind == "connected":
                if self._state is not None:
                    self._state = (self._state[0], False)
            elif kind == "resync":
                self._resync()
            elif kind == "stop":
                stopping = True
        try:
            self.outbox.put(rows, changed, answered)
        except Exception:
            # Nothing of this batch is stored: forget the progress it marked (re-read from the
            # outbox), bring its inputs and result back from the journal, and keep its acks.
            for game in changed:
                self._progress.pop(game, None)
            self._resync_due = True
            self._spilled.extend(i for i in items if i[0] in SPILL)
            raise
        for cid in settled:  # stored: the broker may forget these commands now
            with self._cmd_lock:
                tokens = self._tokens.pop(cid, [])
            for token in tokens:
                self.link.ack(token)
        return stopping

    def _result_rows(self, payload: bytes) -> list[tuple[str, bytes, int, int]]:
        """A result: an event, and the same JSON retained on `result` (a console restarted later has it)."""
        return [(self.topic["event"], payload, 1, 0), (self.topic["result"], payload, 1, 1)]

    def _answer(self, cid: str | None, ok: bool, reason: str | None, seq: int | None, answered: dict, extra: dict) -> bytes:
        """A command's ack, remembered (in memory, and in the outbox with the batch) so a redelivered
        command is acked again without being done twice."""
        payload = dumps({"id": cid, "ok": ok, "reason": reason, "seq": seq, **extra, "at": iso(time.time_ns())})
        if cid is not None:
            answered[cid] = payload
            self._flashing.discard(cid)
            with self._cmd_lock:
                self._pending_cmds.discard(cid)
                self._answered[cid] = payload
                while len(self._answered) > ANSWERED_KEEP:
                    self._answered.popitem(last=False)
        return payload

    def _resend(self, cmd: commands.Command) -> tuple[bool, str | None, list]:
        """The events of `cmd.game` from its journal (never from memory) with from_seq <= seq <=
        to_seq, at most RESEND_MAX_EVENTS, and its result if it ended and the range reaches its end;
        rate-limited (RESEND_BURST, then one every RESEND_EVERY_S)."""
        now = time.monotonic()
        self._resend_budget = min(float(RESEND_BURST), self._resend_budget + (now - self._resend_at) / RESEND_EVERY_S)
        self._resend_at = now
        if self._resend_budget < 1:
            wait = (1 - self._resend_budget) * RESEND_EVERY_S
            return False, (f"resend: at most {RESEND_BURST} at once, then one every {RESEND_EVERY_S:g} s on this clock: "
                           f"retry in {wait:.1f} s"), []
        self._resend_budget -= 1
        journal_dir = getattr(self.store, "journal_dir", None)
        path = Path(journal_dir) / f"{cmd.game}.jsonl" if journal_dir is not None else None
        if path is None or not path.is_file():
            return False, f"resend: {cmd.game} is not in this clock's journals", []
        try:
            journal = read_journal(path)
        except (OSError, JournalError) as e:
            return False, f"resend: {cmd.game}'s journal cannot be read: {e}", []
        last = cmd.to_seq
        rows, more = [], False
        for jl in journal.iter_lines():
            if jl.seq is None or jl.seq < cmd.from_seq or (last is not None and jl.seq > last) or not isinstance(jl.event, INPUT_TYPES):
                continue
            if len(rows) == RESEND_MAX_EVENTS:
                more = True
                break
            rows.append((self.topic["event"], journal_event(jl, cmd.game), 1, 0))
        if more:
            upto = json.loads(rows[-1][1])["seq"]
            return True, f"resend: at most {RESEND_MAX_EVENTS} events a command: ask again from seq {upto + 1}", rows
        if last is None:
            from rackside.firmware.replay import fold

            folded = fold(journal).clock
            if folded.phase is Phase.ENDED and folded.since_ns is not None:
                rows.append((self.topic["event"], result_payload(clock_view(folded, folded.since_ns), cmd.game, None), 1, 0))
        return True, None, rows

    def _resync(self) -> None:
        """Put into the outbox every input of the last two journals it has not seen (by `seq`), and a
        finished game's result: what a crash, a power cut or a full queue kept from the publisher.
        State lines (the clock's whole state after inputs the card lost) are not inputs: skipped."""
        journal_dir = getattr(self.store, "journal_dir", None)
        if journal_dir is None or not Path(journal_dir).is_dir():
            return
        from rackside.firmware.replay import fold

        for path in sorted(Path(journal_dir).glob("game-*.jsonl"))[-2:]:
            game = self._game(path)
            seen, result = self._progress_of(game)
            try:
                journal = read_journal(path)
                lines = journal.lines
            except (OSError, JournalError) as e:
                log.warning("hall: journal %s not read for the outbox: %s", path, e)
                continue
            rows = []
            last = seen
            for jl in lines:
                if jl.seq is None or jl.seq <= seen or not isinstance(jl.event, INPUT_TYPES):
                    continue  # before issue 9's seq, already in the outbox, damaged, or a state line
                rows.append((self.topic["event"], journal_event(jl, game), 1, 0))
                last = max(last, jl.seq)
            done = result
            folded = fold(journal).clock
            if not result and folded.phase is Phase.ENDED and folded.since_ns is not None:
                rows.extend(self._result_rows(result_payload(clock_view(folded, folded.since_ns), game, None)))
                done = True
            if rows:
                log.info("hall: %d message(s) of %s recovered from the journal into the outbox", len(rows), game)
                self.outbox.put(rows, {game: (last, done)})
                self._progress[game] = (last, done)

    def _remember_answered(self) -> None:
        """Seed the answered commands from the last two journals (each hall input carries its
        command's id): a command applied just before a crash, whose PUBACK or ack never went out,
        is redelivered by the broker after the restart; it is then acked again with its input's
        seq, not applied a second time (an `adjust` would set the player's time back)."""
        with self._cmd_lock:
            self._answered.update(self.outbox.answered())  # every kind's ack, refusals and identify included
        journal_dir = getattr(self.store, "journal_dir", None)
        if journal_dir is None or not Path(journal_dir).is_dir():
            return
        for path in sorted(Path(journal_dir).glob("game-*.jsonl"))[-2:]:
            try:
                journal = read_journal(path)
                lines = journal.lines
            except (OSError, JournalError) as e:
                log.warning("hall: journal %s not read for the commands it holds: %s", path, e)
                continue
            cid = journal.header.get("command")  # a new_game's journal names the command that made it
            if isinstance(cid, str):
                with self._cmd_lock:
                    self._answered.setdefault(cid, dumps({"id": cid, "ok": True, "reason": None, "seq": None, "at": iso(time.time_ns())}))
            for jl in lines:
                data = jl.data or {}
                cid = data.get("command")
                if data.get("source") != "hall" or not isinstance(cid, str) or not isinstance(jl.event, INPUT_TYPES):
                    continue
                payload = dumps({"id": cid, "ok": True, "reason": None, "seq": jl.seq, "at": iso(time.time_ns())})
                with self._cmd_lock:
                    self._answered.setdefault(cid, payload)
                    while len(self._answered) > ANSWERED_KEEP:
                        self._answered.popitem(last=False)

    def _deliver(self) -> None:
        """Delete what the broker acknowledged; publish the state and the next outbox rows."""
        done = []
        while self._acks:
            row = self._inflight.pop(self._acks.popleft(), None)
            if row is not None:
                done.append(row)
        if done:
            self.outbox.delete(done)
            self.published += len(done)
        if not self.link.connected.is_set():
            return
        if self._state is not None and not self._state[1]:
            if self.link.publish(self.topic["state"], self._state[0], qos=1, retain=True) is not None:
                self._state = (self._state[0], True)
        if self._hold_since is not None:
            if not self._inflight:
                self._hold_since = None
            elif time.monotonic() - self._hold_since > RESEND_AFTER_S:
                # paho did not re-send what was in flight (a lost session): hand those rows over
                # again, oldest first; a late ack of the old ones is ignored, duplicates are dropped
                # by subscribers.
                self._sent_upto = min(self._inflight.values()) - 1
                self._inflight.clear()
                self._hold_since = None
            else:
                return
        room = WINDOW - len(self._inflight)
        if room <= 0:
            return
        for row_id, topic, payload, qos, retain in self.outbox.pending(self._sent_upto, room):
            mid = self.link.publish(topic, payload, qos=qos, retain=bool(retain))
            if mid is None:
                break
            self._inflight[mid] = row_id
            self._sent_upto = row_id
