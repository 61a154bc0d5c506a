"""Simulated tables and a simulated challenge station on a real broker, for the demo, the browser
tests and the bench.

Each table is the real clock core (`game.clock`) with its own MQTT user, Last Will and journal,
publishing the hall topics of docs/hall.md: retained `status` and `state`, an `event` per input and
a `result` at the end, and an `ack` for each director command. Its journal is the firmware's format
(`journals/table-N/GAME.jsonl`, each input with its seq), so `rackside clock replay --json` audits it
and a console's `resend` is answered from it as a real clock answers (hall.wire.resend, which the
clock's hall.device.recovery answers with; the console paces its own resends, limits.RESEND_EVERY_S,
so the sim keeps no resend budget of its own: the clock's guards a Pi's SD card). One scheduler thread drives every table (scripts,
commands, the 10 s state refresh); paho gives each table its own network thread, as each Pi has.

A script is a list of `(seconds, action)` relative to the sim's start, negative for history that
happened before (a game already 20 minutes in). Actions: ("press", p), ("neutralise",), ("end",),
("late_start", (ps)), ("arrive", p), ("forfeit", p), ("offline",), ("challenge", words, verdict, hold_s),
("new_game",) (the next round's game, with the sim's rules, as a director's `new_game` starts it).
Actions may come as lists (from JSON, when the tables run in other processes: hall/console/demohall/simfleet.py).
"""

from __future__ import annotations

import heapq
import json
import logging
import queue
import random
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import paho.mqtt.client as mqtt

from rackside.game import clock as C
from rackside.game.journal import input_to_dict, make_header
from rackside.hall.wire import commands, health, messages, resend, topics
from rackside.hall.wire.payloads import event_payload, result_payload, state_payload
from rackside.hall.wire.payloads import challenge_payloads as station_payloads

log = logging.getLogger("rackside.hall.sim")
NS = 1_000_000_000
STATE_EVERY_S = float(messages.STATE_EVERY_S)


# the commands of the paperless table (issue 27, docs/hall.md) a clock without a keypad takes and ignores
KEYPAD_COMMANDS = commands.answered_by("table", "slip")  # what only a clock with a keypad shows


def iso(wall: float) -> str:
    return datetime.fromtimestamp(wall, timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class SimTable:
    n: int
    user: str
    password: str
    client_id: str  # the one the broker binds this table's login to (provisioning's: table-N-<random>)
    rules: C.Rules
    journal_dir: Path
    game_no: int = 1
    clock: C.Clock = None  # type: ignore[assignment]
    seq: int = 0  # the game's: its journal's own count of inputs, from 1 (a new game starts again)
    inputs: int = 0  # every input of every game (for the benches)
    client: mqtt.Client | None = None
    resulted: bool = False
    offline: bool = False
    journal: Path | None = None
    last_state_wall: float = 0.0

    @property
    def journals(self) -> Path:  # one folder a table, as each clock has its own (what `resend` reads)
        return self.journal_dir / f"table-{self.n}"

    @property
    def game(self) -> str:  # named as a clock names its games (a resend names one: hall.wire.commands.GAME)
        return f"game-{self.game_no:06}"


class SimHall:
    """`tables`: {n: (user, password, client id)} (a provisioned device's `login`); `station`: (id,
    user, password, client id); `host`, `port`: the broker; `scripts`: {n: [(s, action)]}."""

    def __init__(self, hall: str, host: str, port: int, tables: dict[int, tuple[str, str, str]], journal_dir: Path,
                 *, rules: C.Rules | None = None, station: tuple[str, str, str, str] | None = None,
                 faults: dict[int, tuple[str, ...]] | None = None) -> None:
        self.hall = hall
        # each table's retained status while online: the health a simulated table has (none known:
        # it reads nothing) with the faults the demo was asked to inject (hall.wire.health.FAULTS)
        self.statuses = {n: health.status_payload(health.with_faults(health.unknown(), (faults or {}).get(n, ())), None)
                         for n in tables}
        self.host, self.port = host, port
        self.rules = rules or C.Rules()
        self.journal_dir = Path(journal_dir)
        self.journal_dir.mkdir(parents=True, exist_ok=True)
        self.tables = {n: SimTable(n, u, p, cid, self.rules, self.journal_dir) for n, (u, p, cid) in tables.items()}
        self.station = station  # (id, user, password, client id)
        self.station_client: mqtt.Client | None = None
        self.t0_ns = time.monotonic_ns()
        self.wall0 = time.time()
        self.heap: list = []
        self.inbox: queue.Queue = queue.Queue()
        self.stop_flag = threading.Event()
        self.thread: threading.Thread | None = None
        self._order = 0
        self.challenges = 0
        for t in self.tables.values():
            self._new_game(t, self.rules)

    # --- time -------------------------------------------------------------------------------------

    def now_ns(self) -> int:
        return time.monotonic_ns() - self.t0_ns + 3600 * NS  # room for an hour of back-dated history

    def wall_of(self, t_ns: int) -> float:
        return self.wall0 + (t_ns - 3600 * NS) / NS

    # --- life cycle -------------------------------------------------------------------------------

    def connect(self, timeout: float = 20.0) -> None:
        pending = set(self.tables)
        ready = threading.Event()
        lock = threading.Lock()

        def connected(n):
            with lock:
                pending.discard(n)
                if not pending:
                    ready.set()

        for t in self.tables.values():
            t.client = self._client(t, connected)
        if self.station:
            sid, user, pw, cid = self.station
            c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=cid)
            c.username_pw_set(user, pw)
            st = topics.station(self.hall, sid, "status")
            c.will_set(st, b"offline", qos=1, retain=True)
            c.on_connect = lambda cl, *a: cl.publish(st, b"online", qos=1, retain=True)
            c.connect_async(self.host, self.port, keepalive=10)
            c.loop_start()
            self.station_client = c
        if not ready.wait(timeout):
            raise TimeoutError(f"tables not connected: {sorted(pending)[:10]}")

    def _client(self, t: SimTable, connected) -> mqtt.Client:
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=t.client_id, clean_session=True)
        c.username_pw_set(t.user, t.password)
        c.will_set(topics.table(self.hall, t.n, "status"), b"offline", qos=1, retain=True)

        def on_connect(client, userdata, flags, rc, props):
            if rc.is_failure:
                log.error("table %d refused: %s", t.n, rc)
                return
            client.subscribe(topics.table(self.hall, t.n, "cmd"), qos=1)
            client.publish(topics.table(self.hall, t.n, "status"), self.statuses[t.n], qos=1, retain=True)
            self.inbox.put(("state", t.n, None))
            connected(t.n)

        c.on_connect = on_connect
        c.on_message = lambda client, userdata, msg: self.inbox.put(("cmd", t.n, msg.payload))
        c.connect_async(self.host, self.port, keepalive=10)
        c.loop_start()
        return c

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="sim-hall", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop_flag.set()
        if self.thread:
            self.thread.join(5)
        for t in self.tables.values():
            if t.client is not None and not t.offline:
                t.client.publish(topics.table(self.hall, t.n, "status"), b"offline", qos=1, retain=True)
                t.client.disconnect()
                t.client.loop_stop()
        if self.station_client is not None:
            self.station_client.disconnect()
            self.station_client.loop_stop()

    # --- scripting --------------------------------------------------------------------------------

    def script(self, n: int, steps: list) -> None:
        """Queue a table's script. Steps with negative times are history, applied now, in order."""
        for s, action in steps:
            self._order += 1
            heapq.heappush(self.heap, (self.now_ns() + int(s * NS), self._order, n, action))

    def act(self, n: int, action: tuple) -> None:
        """Do an action at once, from any thread (the bench's clock inputs)."""
        self.inbox.put(("act", n, action))

    # --- the scheduler ---------------------------------------------------------------------------

    def _run(self) -> None:
        while not self.stop_flag.is_set():
            now = self.now_ns()
            while self.heap and self.heap[0][0] <= now:
                t_ns, _, n, action = heapq.heappop(self.heap)
                self._do(self.tables[n], action, t_ns)
            try:
                while True:
                    self._handle_now(self.inbox.get_nowait())
            except queue.Empty:
                pass
            now = self.now_ns()
            wall = time.time()
            for t in self.tables.values():
                if t.offline:
                    continue
                if not t.resulted and t.clock.phase in (C.Phase.RUNNING, C.Phase.LATE):
                    v = C.view(t.clock, now)
                    if v.phase is C.Phase.ENDED:  # a forfeit that time alone caused (5.3.3, 2.3.5)
                        self._input(t, C.End(now))
                        continue
                if wall - t.last_state_wall >= STATE_EVERY_S:
                    self._publish_state(t, now)
            wait = 0.1 if not self.heap else min(0.1, max(0.0, (self.heap[0][0] - self.now_ns()) / NS))
            try:
                self._handle_now(self.inbox.get(timeout=wait))
            except queue.Empty:
                pass

    def _handle_now(self, item) -> None:
        kind, n, data = item
        t = self.tables[n]
        if kind == "cmd":
            self._command(t, data)
        elif kind == "act":
            self._do(t, data, self.now_ns())
        elif kind == "state":
            self._publish_state(t, self.now_ns())

    def _do(self, t: SimTable, action: tuple, t_ns: int) -> None:
        if t.offline:
            return
        name = action[0]
        if name == "press":
            self._input(t, C.Press(t_ns, action[1]))
        elif name == "turn":  # the running player ends their turn (3.1.1(c))
            if t.clock.phase is C.Phase.RUNNING:
                self._input(t, C.Press(t_ns, t.clock.side))
        elif name == "neutralise":
            self._input(t, C.Neutralise(t_ns))
        elif name == "end":
            self._input(t, C.End(t_ns))
        elif name == "late_start":
            self._input(t, C.LateStart(t_ns, tuple(action[1])), source="hall")
        elif name == "arrive":
            self._input(t, C.Arrive(t_ns, action[1]), source="hall")
        elif name == "forfeit":
            self._input(t, C.Forfeit(t_ns, action[1]))
        elif name == "offline":
            self._go_offline(t)
        elif name == "new_game":
            t.game_no += 1
            self._new_game(t, self.rules)
            self._publish_state(t, t_ns)
        elif name == "challenge":
            self._challenge(t, t_ns, *action[1:])
        elif name == "verdict":
            self._verdict(t, *action[1:])

    def _go_offline(self, t: SimTable) -> None:
        """The Pi loses power: the socket drops without a DISCONNECT, so the broker sends the Will."""
        t.offline = True
        c = t.client
        c.loop_stop()
        sock = c.socket()
        if sock is not None:
            sock.close()

    # --- the clock side ------------------------------------------------------------------------

    def _new_game(self, t: SimTable, rules: C.Rules) -> None:
        t.clock = C.new_clock(rules)
        t.seq = 0
        t.resulted = False
        t.journal = t.journals / f"{t.game}.jsonl"
        t.journal.parent.mkdir(parents=True, exist_ok=True)
        t.journal.write_text(json.dumps(make_header(rules, table=t.n, game=t.game)) + "\n")

    def _input(self, t: SimTable, event, source: str = "button", extra: dict | None = None) -> None:
        if t.clock.since_ns is not None and event.t_ns < t.clock.since_ns:
            event = type(event)(**{**event.__dict__, "t_ns": t.clock.since_ns})
        line = input_to_dict(event)
        if source != "button":
            line["source"] = source
        if extra:
            line.update(extra)
        with open(t.journal, "a") as f:
            f.write(json.dumps({**line, "seq": t.seq + 1}) + "\n")  # the input's number, as a clock journals it
        t.clock = C.apply(t.clock, event)
        t.seq += 1
        t.inputs += 1
        wall_ns = int(self.wall_of(event.t_ns) * 1e9)
        self._publish_raw(t, "event", event_payload(line, t.game, t.seq, wall_ns))
        self._publish_state(t, event.t_ns)
        if t.clock.phase is C.Phase.ENDED and not t.resulted:
            t.resulted = True
            self._publish_raw(t, "event", result_payload(C.view(t.clock, t.clock.since_ns), t.game, wall_ns))

    def _publish_raw(self, t: SimTable, leaf: str, payload: bytes, retain: bool = False) -> None:
        if t.offline or t.client is None:
            return
        t.client.publish(topics.table(self.hall, t.n, leaf), payload, qos=1, retain=retain)

    def _ack(self, t: SimTable, cid: str | None, ok: bool, reason: str | None = None, **extra) -> None:
        self._publish_raw(t, "ack", json.dumps({"id": cid, "ok": ok, "reason": reason, "seq": t.seq if ok else None,
                                                **extra, "at": iso(time.time())}).encode())

    def _publish_state(self, t: SimTable, t_ns: int) -> None:
        t_ns = max(t_ns, t.clock.since_ns or t_ns)
        v = C.view(t.clock, t_ns) if t.clock.since_ns is not None else C.view(t.clock, 0)
        wall = self.wall_of(t_ns) if t.clock.since_ns is not None else time.time()
        payload = state_payload(v, t.game, t.seq, int(wall * 1e9), t.clock.rules)
        t.last_state_wall = time.time()
        self._publish_raw(t, "state", payload, retain=True)

    def _command(self, t: SimTable, payload: bytes) -> None:
        """A director command, checked by the clock's own parser (hall.wire.commands) and applied as the
        clock's runner applies it: journalled with "source": "hall", then acked with its seq."""
        try:
            cmd = commands.parse(payload, t.clock.rules)
        except commands.CommandError as e:
            self._ack(t, commands.command_id(payload), False, str(e))
            return
        now = self.now_ns()
        if cmd.name in KEYPAD_COMMANDS:  # a simulated table has no keypad (issue 27): taken, nothing to show
            self._ack(t, cmd.id, True, "no keypad on this simulated clock")
            return
        answerer = commands.SPECS[cmd.name].answerer  # who answers it on a clock (hall.wire.commands.ANSWERERS)
        if answerer == "journal":  # a console asking for events it missed: from the journal, as a clock answers
            ok, reason, found = resend.answer(t.journals, cmd.game, cmd.from_seq, cmd.to_seq)
            for event in found:
                self._publish_raw(t, "event", event)
            self._ack(t, cmd.id, ok, reason, queued=len(found))
            return
        if answerer == "game":
            t.game_no += 1
            self._new_game(t, cmd.rules)
            self._publish_state(t, now)
        elif answerer == "updater":  # (a simulated clock's update once raised here, unanswered)
            self._ack(t, cmd.id, False, "a simulated clock installs no update")
            return
        elif answerer == "clock":  # identify (the displays): taken, nothing to flash
            try:
                v = C.view(t.clock, t.clock.since_ns or now)
                event = cmd.clock_input(commands.dated(cmd, now, int(self.wall_of(now) * 1e9), tuple(p.remaining_ms for p in v.players)))
                if t.clock.phase is C.Phase.ENDED:
                    raise C.ClockInputError("the game has ended")
                C.apply(t.clock, event)  # refuse what the core refuses, before journalling it
            except (C.ClockInputError, commands.CommandError) as e:
                self._ack(t, cmd.id, False, str(e))
                return
            self._input(t, event, source="hall", extra=cmd.notes())  # who sent it and why, as a clock journals them
        self._ack(t, cmd.id, True)

    # --- the station ------------------------------------------------------------------------------

    def _challenge(self, t: SimTable, t_ns: int, words, verdict: str, hold_s: float) -> None:
        """The players neutralise and go to the station; it publishes once judged, as a real one does."""
        self.challenges += 1
        self._input(t, C.Neutralise(t_ns))
        self._order += 1
        cid = f"s{self.station[0] if self.station else 0}-{self.challenges}"
        heapq.heappush(self.heap, (self.now_ns() + int(hold_s * NS), self._order, t.n, ("verdict", cid, words, verdict)))

    def _verdict(self, t: SimTable, cid: str, words, verdict: str) -> None:
        if self.station_client is not None:
            sid = self.station[0]
            record = {"id": cid, "time": iso(time.time()), "table": t.n, "kind": "self", "lexicon_name": "ENABLE",
                      "lexicon_sha256": "0" * 64, "words": [w for w, _ in words], "per_word": [ok for _, ok in words],
                      "verdict": verdict}
            summary, detail = station_payloads(record, sid)
            self.station_client.publish(topics.station(self.hall, sid, "challenge"), summary, qos=1)
            self.station_client.publish(topics.station(self.hall, sid, "detail"), detail, qos=1)
        self._input(t, C.Neutralise(self.now_ns()))  # 3.10.3(c): restart after the challenge


# --- scripted games --------------------------------------------------------------------------------

# a table's mean time between presses in the benches' scripted games: about three times a real
# game's pace (some 16 turns a player: a press every 80 s or so, docs/performance.md), a stress load
MEAN_TURN_S = 25


def playing(rng: random.Random, minutes_in: float, *, until_s: float = 3600, mean_turn_s: float = MEAN_TURN_S) -> list:
    """A game already `minutes_in` minutes old, then presses every few seconds until `until_s`."""
    steps = [(-minutes_in * 60, ("press", 2))]  # the non-starter starts side 1 (2.2)
    t = -minutes_in * 60
    while t < until_s:
        t += rng.uniform(0.4, 1.6) * mean_turn_s
        steps.append((t, ("turn",)))
    return steps


def tournament_day(rng: random.Random, *, hours: float, speed: float = 1.0, game_time_s: float = C.Rules.game_time_ms / 1000,
                   mean_turn_s: float = MEAN_TURN_S, break_s: float = 300, in_progress: bool = False) -> list:
    """A table's day: games back to back for `hours`, each played until both sides have used most of
    their time (a turn every `mean_turn_s` on average), ended, and after a break the next round's
    game. `speed` compresses the day (a soak covers ten hours in half an hour): every span is
    divided by it, so the table must run with `compressed_rules(speed)`. `in_progress`: the first
    game is already under way (side 1 has been thinking for up to 80 % of a game time, and its
    first turn ends a uniform part of a turn in)."""
    steps: list = []
    t = rng.uniform(0, 120) / speed  # tables start their games over the first two minutes
    end = hours * 3600 / speed
    first = True
    while t < end:
        used = [0.0, 0.0]
        under_way = first and in_progress  # its first turn is already part thought: the presses start at their pace, not a turn late
        if under_way:
            used[0] = rng.uniform(0.1, 0.8) * game_time_s
            t = 0.0
            steps.append((-used[0] / speed, ("press", 2)))
        else:
            if not first:
                steps.append((t, ("new_game",)))
            t += rng.uniform(10, 90) / speed  # the players sit down; the non-starter starts side 1 (2.2)
            steps.append((t, ("press", 2)))
        first = False
        side = 0
        while min(used) < 0.9 * game_time_s and max(used) < 0.97 * game_time_s:
            turn = rng.uniform(0.4, 1.6) * mean_turn_s
            used[side] += turn
            t += (turn * rng.random() if under_way else turn) / speed  # (`used` counts it whole: that game ends a little early)
            under_way = False
            steps.append((t, ("turn",)))
            side ^= 1
        t += 1 / speed
        steps.append((t, ("end",)))
        t += break_s / speed
    return steps


def compressed_rules(speed: float, game_time_s: float = C.Rules.game_time_ms / 1000) -> C.Rules:
    """WESPA's rules with every span divided by `speed` (for a compressed day, tournament_day)."""
    base = C.Rules()
    return C.Rules(game_time_ms=max(1, int(game_time_s * 1000 / speed)),
                   forfeit_overtime_ms=max(1, int(base.forfeit_overtime_ms / speed)),
                   optional_forfeit_below_ms=int(base.optional_forfeit_below_ms / speed),
                   courtesy_draw_after_ms=max(1, int(base.courtesy_draw_after_ms / speed)))


def demo_scripts(tables: list[int], seed: int = 7, game_time_s: int = C.Rules.game_time_ms // 1000) -> tuple[dict[int, list], dict[int, str]]:
    """The demo's hall: most tables playing; among them an overtime, a lateness forfeit, a late
    arrival, a table that goes offline, a challenge, a finished game, and tables not started."""
    rng = random.Random(seed)
    scripts: dict[int, list] = {}
    story: dict[int, str] = {}
    for n in tables:
        scripts[n] = playing(rng, rng.uniform(2, 18))
    special = iter(tables)
    n = next(special, None)
    if n is not None:  # overtime: side 1 has 20 s left and is thinking; ends 95 s into overtime
        scripts[n] = [(-(game_time_s - 20), ("press", 2)), (115, ("press", 1)), (118, ("end",))]
        story[n] = "overtime: side 1 goes 95 s over (penalty 20), then the game ends"
    n = next(special, None)
    if n is not None:  # lateness forfeit: side 2 never comes; assigned time runs out 40 s in (2.3.5)
        scripts[n] = [(-(game_time_s - 40), ("late_start", (2,)))]
        story[n] = "lateness forfeit: side 2 absent, forfeits 40 s in (75-point win, 2.3.6(a))"
    n = next(special, None)
    if n is not None:  # late arrival: started 4 minutes ago, side 1 arrives 30 s in, then play
        scripts[n] = [(-240, ("late_start", (1,))), (30, ("arrive", 1)), (35, ("press", 2))] + [
            (s + 40, a) for s, a in playing(rng, 0)[1:]]
        story[n] = "late arrival: side 1 arrives 30 s in, 4.5 minutes late (2.3.3)"
    n = next(special, None)
    if n is not None:
        scripts[n] = playing(rng, 9, until_s=20) + [(20, ("offline",))]
        story[n] = "offline: the clock loses power 20 s in (Last Will)"
    n = next(special, None)
    if n is not None:
        scripts[n] = playing(rng, 11, until_s=15) + [(15, ("challenge", [("QI", True), ("ZAX", True), ("JOQ", False)], "UNACCEPTABLE", 25))] + [
            (s + 45, a) for s, a in playing(rng, 0)[1:]]
        story[n] = "challenge: a station judges QI ZAX JOQ 15 s in (UNACCEPTABLE), 25 s neutralised"
    n = next(special, None)
    if n is not None:  # a finished game, waiting for its scores
        scripts[n] = [(-1500, ("press", 2)), (-1400, ("press", 1)), (-60, ("press", 2)), (-10, ("end",))]
        story[n] = "finished: waiting for the scorekeeper"
    for _ in range(2):  # not started: nobody pressed yet
        n = next(special, None)
        if n is not None:
            scripts[n] = []
            story[n] = "not started"
    return scripts, story
