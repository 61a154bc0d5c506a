#!/usr/bin/env python3
"""Power-loss fault injection (issue 5): SIGKILL a running clock at random moments, restart it,
and check every restart.

    python bench/power_loss.py                   # the full run: 200 kills of the real runner
    python bench/power_loss.py --driver store    # the same, driving GameStore directly
    python bench/power_loss.py --kills 20 --max-ms 300 --interval-ms 100   # about what CI runs

Each kill: start the driver (a real process on the real monotonic clock), wait a random time,
SIGKILL it, snapshot the state directory, and start it again. Two drivers:

- `runner` (the default): the real `firmware.runner.Runner` loop, headless: the board's buttons
  on gpiozero's MockFactory pins, `RecordingDisplay`s, the real `GameStore`. A second thread
  plays a scripted random game on the pins, as players and a director would: taps of the running
  player's button, stray taps of the other, centre taps (neutralise/restart), 5.1.3 restarts,
  adjustments and "new game" through the director's menu, ends. So the kill lands in the runner's
  real order: write-ahead, apply, display, fsync per batch, checkpoint every `--interval-ms`
  (the runner's CHECKPOINT_NS, 900 ms unless a test asks for a denser run);
- `store`: `GameStore` + the clock core, with `record(event)` (write and fsync) before acting on
  each input, and the core's inputs directly: presses, stray presses, neutralise/restart, 5.1.3
  restarts, director adjustments, late starts, ends and new games, checkpointing on a timer.

Most kills land `--min-ms`..`--max-ms` after the clock has started (reported its restored state);
a fraction (`--early`) land 0..250 ms after the process was launched, so kills during start-up
and in the middle of a restore are covered too.
Every restart that got as far as reporting its restored clock is checked against the snapshot:

- the state is restored: a running clock comes back neutralised, marked restored, with exactly
  the times of the last record (the later of the last journalled input and the checkpoint);
- the running player lost no more than 1 s: restored remaining minus the true remaining at the
  kill, computed from the journal and the kill time on the same monotonic clock. No scheme can
  checkpoint while its process is not allowed to run, so the driver also writes a heartbeat (its
  monotonic time, to its stdout pipe, at every wake-up before any I/O). If it demonstrably did
  not run for longer than the checkpoint interval before the kill (the machine stalled it: CPU
  starvation, a blocked fsync), that kill is counted as a stall and the bound is checked from the
  last heartbeat instead. The loss from the last heartbeat is always checked;
- the journal is readable by the replay: every problem line is a torn write closed by a restore;
- every input the clock acted on before the kill is in the journal (issue 9): the driver tells
  the harness each input it acted on through its pipe (which survives the SIGKILL), and after
  every kill, a start killed before it reported included, every input acted on so far must be in
  a journal. The harness tests itself: after the run, `--self-test-kills` kills of a deliberately
  broken build (`drive --broken`: every other press acted on but not journalled, in the harness's
  driver only) must fail it.

Kills land anywhere, including mid-restore. A SIGKILL cannot tear one small write(), but a power
cut can tear the append in flight, so after a fraction of the kills (`--tear`) the harness also
leaves what such a cut leaves: a prefix of an unfinished line, or zeroed bytes, at the journal's
end (the input it was writing had not been acted on: the runner writes each input before applying it).
Prints figures; exits 1 on any failure.
This reads nothing from ../shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rackside.game.clock import (  # noqa: E402
    Adjust,
    End,
    LateStart,
    Arrive,
    Neutralise,
    Phase,
    Press,
    Resume,
    Rules,
    apply,
    view,
)
from rackside.game.journal import StateRecord, input_to_dict, parse_journal  # noqa: E402
from rackside.firmware.checkpoint import parse_checkpoint  # noqa: E402
from rackside.firmware.persist import GameStore  # noqa: E402
from rackside.game.replay import fold  # noqa: E402

S = 1_000_000_000
MS = 1_000_000
LOSS_BOUND_NS = 1 * S  # the bound: the running player loses no more than 1 s
EARLY_MAX_MS = 250  # start-up and the restore happen in here
STALL_SLACK_NS = 150 * MS  # scheduling latency allowed beyond the checkpoint interval


# --- The driver: a firmware process ----------------------------------------------------------------


def next_input(rng: random.Random, clock, now: int):
    """The scripted game's next input for the clock as it stands."""
    v = view(clock, now)
    if v.phase is Phase.SETUP:
        if clock.since_ns is None and rng.random() < 0.15:
            return LateStart(now, rng.choice([(1,), (2,), (1, 2)]))
        return Press(now, rng.choice([1, 2]))
    if v.phase is Phase.LATE:
        return Arrive(now, rng.choice([p.player for p in v.players if p.absent]))
    side = clock.side
    r = rng.random()
    if v.phase is Phase.NEUTRALISED:
        return Neutralise(now) if r < 0.6 else Press(now, side)  # restart, or 5.1.3
    if r < 0.78:
        return Press(now, side)
    if r < 0.86:
        return Press(now, 3 - side)  # a stray press from the side not running: nothing happens
    if r < 0.94:
        return Neutralise(now)
    if r < 0.99:
        return Adjust(now, rng.choice([1, 2]), rng.choice([rng.randint(-5_000, 5_000), rng.randint(60_000, Rules.game_time_ms)]))
    return End(now)


def break_the_store(store: GameStore) -> None:
    """The deliberately broken build of the harness's self-test (`--broken`): every other press is
    acted on but silently not journalled, as a store with that bug would do. Only here, never in
    the product."""
    record, count = store.record, [0]

    def record_or_not(event, **kwargs):
        if isinstance(event, Press):
            count[0] += 1
            if count[0] % 2 == 1:
                return store._writer.lines  # pretends to have written it
        return record(event, **kwargs)

    store.record = record_or_not


def acted(event) -> None:
    """Tell the harness the clock acted on `event` (a pipe write: it survives the SIGKILL)."""
    sys.stdout.write("A " + json.dumps(input_to_dict(event), separators=(",", ":")) + "\n")
    sys.stdout.flush()


def drive(state_dir: Path, seed: int, interval_ns: int, long_gap_ms: int, broken: bool = False) -> int:
    rules = Rules()
    store = GameStore(state_dir, rules, config={"driver": "bench/power_loss.py"})
    if broken:
        break_the_store(store)
    now = time.monotonic_ns()
    clock = store.start(now)
    v = view(clock, now)
    info = store.restore_info
    report = {
        "pid": os.getpid(),
        "t_ns": now,
        "journal": store.journal_path.name,
        "restored": v.restored,
        "phase": v.phase.value,
        "side": clock.side,
        "remaining_ns": [p.remaining_ns for p in v.players],
        "at_ns": info.at_ns if info else None,
        "from_checkpoint": info.from_checkpoint if info else None,
    }
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    rng = random.Random(seed)

    def gap() -> int:
        if rng.random() < 0.7:
            return rng.randint(5, 60) * MS
        return rng.randint(100, long_gap_ms) * MS  # a player thinking: checkpoints happen meanwhile

    due_input, due_checkpoint = now + gap(), now + interval_ns
    while True:
        now = time.monotonic_ns()
        sys.stdout.write(f"{now}\n")  # heartbeat: alive at `now` (a pipe write; nothing is stored)
        sys.stdout.flush()
        if now >= due_input:
            event = next_input(rng, clock, now)
            after = apply(clock, event)  # checked against the core first, as the runner does
            store.record(event)  # journalled (fsync) before the clock acts on it
            clock = after
            acted(event)
            if clock.phase is Phase.ENDED:
                clock = store.new_game(rules, time.monotonic_ns())
            due_input = now + gap()
        if now >= due_checkpoint:
            store.checkpoint(clock, now)
            due_checkpoint = now + interval_ns
        wait = min(due_input, due_checkpoint) - time.monotonic_ns()
        if wait > 0:
            time.sleep(wait / S)


PINS = {"left": 17, "right": 27, "neutralise": 22}  # any BCM numbers: the pins are gpiozero's mock pins
BUTTON_OF = {1: "left", 2: "right"}
SETTLE_S = 0.04  # more than the debounce settle time (15 ms) between one contact change and the next


def play_on_the_pins(board, runner, rng: random.Random, long_gap_ms: int) -> None:
    """The scripted game, as presses on the mock pins (the runner's own thread does the rest).
    It only reads the runner's state (an immutable Clock, the menu) to choose the next press."""

    def tap(button: str) -> None:
        board.drive(button, True)
        time.sleep(rng.uniform(0.03, 0.08))
        board.drive(button, False)
        time.sleep(SETTLE_S)

    def director(taps: list[str]) -> None:
        """Open the director's menu, wait until it is open, and press through it."""
        board.command("menu")
        deadline = time.monotonic() + 5
        while runner.menu is None and time.monotonic() < deadline:
            time.sleep(0.01)
        for button in taps:
            tap(button)

    while True:
        if rng.random() < 0.7:
            time.sleep(rng.uniform(0.005, 0.06))
        else:
            time.sleep(rng.randint(100, long_gap_ms) / 1000)  # a player thinking: checkpoints meanwhile
        if runner.menu is not None:
            continue
        clock = runner.clock
        now = time.monotonic_ns()
        phase = view(clock, max(now, clock.since_ns or now)).phase
        r = rng.random()
        if phase is Phase.SETUP:
            tap(rng.choice(["left", "right"]))  # the non-starter's press starts the starter's time (2.2)
            time.sleep(0.45)  # the press acts after the chord window: do not make a chord of it
        elif phase is Phase.ENDED:
            director(["right", "neutralise", "left", "neutralise"])  # rSEt, yES: a new game
        elif phase is Phase.NEUTRALISED:
            tap("neutralise" if r < 0.6 else BUTTON_OF[clock.side])  # restart, or 5.1.3
            time.sleep(0.45)
        elif r < 0.80:
            tap(BUTTON_OF[clock.side])
        elif r < 0.88:
            tap(BUTTON_OF[3 - clock.side])  # a stray press from the side not running: nothing happens
        elif r < 0.95:
            tap("neutralise")
        elif r < 0.99:
            # the director adjusts a player's time through the menu (which neutralises, 1.4.3):
            # P1 (the first item) or P2, a minute more or less, seconds as they are, then donE
            # (left from P1 wraps to the last item)
            to_item, back = (["neutralise"], ["left"]) if rng.random() < 0.5 else (["right", "neutralise"], ["left", "left"])
            director(to_item + [rng.choice(["left", "right"]), "neutralise", "neutralise"] + back + ["neutralise"])
        else:
            board.command("end")


def drive_runner(state_dir: Path, seed: int, interval_ns: int, long_gap_ms: int, broken: bool = False) -> int:
    """The real runner, headless, on the real monotonic clock, fed by `play_on_the_pins`."""
    import threading

    from gpiozero.pins.mock import MockFactory

    import rackside.firmware.runner as runner_module
    from rackside.hardware.board import Board
    from rackside.firmware.display_output import DisplaysOutput
    from rackside.hardware.display import RecordingDisplay

    runner_module.CHECKPOINT_NS = interval_ns  # the runner reads it at each checkpoint
    rules = Rules()
    store = GameStore(state_dir, rules, config={"driver": "bench/power_loss.py runner"})
    board = Board(PINS, pin_factory=MockFactory(), clock_ns=time.monotonic_ns)
    runner = runner_module.Runner(
        rules=rules,
        store=store,
        outputs=[DisplaysOutput([RecordingDisplay("left"), RecordingDisplay("right")])],
        events=board.events,
        clock_ns=time.monotonic_ns,
        initially_down=board.initially_down(),
    )
    handle = runner.handle

    def heartbeat_then_handle(items: list, now: int) -> None:
        sys.stdout.write(f"{now}\n")  # heartbeat: the loop is alive at `now`, before any I/O
        sys.stdout.flush()
        handle(items, now)

    runner.handle = heartbeat_then_handle
    if broken:
        break_the_store(store)
    apply_input = runner._apply

    def apply_then_tell(event) -> bool:
        applied = apply_input(event)
        if applied:  # as acted on: the runner dates an edge that came late at its last input
            acted(replace(event, t_ns=runner.clock.since_ns))
        return applied

    runner._apply = apply_then_tell
    v = runner.start()
    info = store.restore_info
    report = {
        "pid": os.getpid(),
        "t_ns": info.resumed_ns if info else time.monotonic_ns(),
        "journal": store.journal_path.name,
        "restored": v.restored,
        "phase": v.phase.value,
        "side": runner.clock.side,
        "remaining_ns": [p.remaining_ns for p in v.players],
        "at_ns": info.at_ns if info else None,
        "from_checkpoint": info.from_checkpoint if info else None,
    }
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    threading.Thread(target=play_on_the_pins, args=(board, runner, random.Random(seed), long_gap_ms), daemon=True).start()
    runner.run()  # until the SIGKILL
    return 0


DRIVERS = {"runner": drive_runner, "store": drive}


# --- The harness -------------------------------------------------------------------------------------


@dataclass
class Snapshot:
    """The state directory right after a kill, and when the kill happened."""

    kill_ns: int  # taken just before the signal was sent
    journal_name: str | None
    journal: bytes | None
    checkpoint: bytes | None


@dataclass
class Results:
    kills: int = 0
    checked: int = 0  # restarts that reported their restored clock and were checked
    died_before_report: int = 0  # killed during start-up/restore (the next restart covers it)
    restored_running: int = 0  # the clock had been running and came back neutralised
    from_checkpoint: int = 0
    tears: int = 0  # kills after which the harness tore the append in flight
    torn_tails: int = 0  # restarts that found a torn journal tail
    new_games: int = 0
    losses_ns: list[int] = field(default_factory=list)  # the counting player's loss at each restore
    alive_losses_ns: list[int] = field(default_factory=list)  # the same, from the last heartbeat
    stalls: int = 0  # kills the driver had not run for more than an interval before (machine stalls)
    acted: int = 0  # inputs the killed processes reported acting on
    acted_checked: int = 0  # of those, checked against the journal after the last kill
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


def tear_journal(state: Path, rng: random.Random, kill_ns: int) -> None:
    """Leave what a power cut in the middle of an append leaves at the end of the journal."""
    journals = sorted((state / "journals").glob("game-*.jsonl"))
    if not journals:
        return
    line = json.dumps({"t_ns": kill_ns, "input": "press", "player": rng.choice([1, 2])}, separators=(",", ":"))
    junk = line.encode()[: rng.randint(1, len(line) - 1)] if rng.random() < 0.7 else b"\x00" * rng.randint(1, 64)
    with open(journals[-1], "ab") as f:
        f.write(junk)


def snapshot(state: Path, kill_ns: int) -> Snapshot:
    journals = sorted((state / "journals").glob("game-*.jsonl")) if (state / "journals").is_dir() else []
    latest = journals[-1] if journals else None
    cp = state / "checkpoint.json"
    return Snapshot(
        kill_ns=kill_ns,
        journal_name=latest.name if latest else None,
        journal=latest.read_bytes() if latest else None,
        checkpoint=cp.read_bytes() if cp.exists() else None,
    )


def restores(snap: Snapshot) -> tuple[str | None, int]:
    """Which journal, and how many restores it holds (a resume line is one write: whole or absent)."""
    if snap.journal is None:
        return (None, 0)
    return (snap.journal_name, snap.journal.count(b'"input":"resume"'))


def check_restart(
    report: dict, snap: Snapshot, state: Path, results: Results, *, alive_ns: int | None = None,
    interval_ns: int = S, killed_by_ns: int | None = None,
) -> None:
    """Check one restart against the state its process found on disk. `alive_ns` is the last
    heartbeat of the process that was killed, `killed_by_ns` a time after it was certainly dead."""
    fail = results.failures.append
    tag = f"restart pid {report['pid']}"
    if snap.journal is None:
        if report["restored"]:
            fail(f"{tag}: restored from nothing")
        return
    journal = parse_journal(snap.journal, snap.journal_name)
    game = fold(journal)
    if journal.torn:
        results.torn_tails += 1
    # the journal is readable by the replay: a problem line may only be a torn write (the last
    # line, or a line a restore closed and followed with its resume)
    numbers = [line.number for line in journal.lines]
    for number, problem in game.problems:
        if number == 1:
            continue
        following = [line for line in journal.lines if line.number > number]
        if following and not (following[0].data or {}).get("input") == "resume":
            fail(f"{tag}: {snap.journal_name}:{number} unreadable mid-journal: {problem}")
    if game.applied == 0 or game.clock.phase is Phase.ENDED:
        if report["restored"]:
            fail(f"{tag}: restored a game that had not started or had ended")
        results.new_games += report["journal"] != snap.journal_name
        return
    if not report["restored"] or report["journal"] != snap.journal_name:
        fail(f"{tag}: unfinished game in {snap.journal_name} was not restored")
        return

    # the last record: the later of the last input and a checkpoint covering the current stretch
    expected_at = game.last_t_ns
    if snap.checkpoint:
        try:
            cp = parse_checkpoint(snap.checkpoint)
        except ValueError as e:
            fail(f"{tag}: checkpoint unreadable after a kill (not atomic?): {e}")
        else:
            current = cp.journal == snap.journal_name and cp.lines >= (game.last_resume_line or 0) and cp.lines <= max(numbers, default=1)
            if current and cp.t_ns > expected_at:
                expected_at = cp.t_ns
    if report["at_ns"] != expected_at:
        fail(f"{tag}: restored as of {report['at_ns']} ns, but the last record is {expected_at} ns")
    if killed_by_ns is not None and report["at_ns"] > killed_by_ns:
        fail(f"{tag}: restored as of {report['at_ns']} ns, after the process was dead ({killed_by_ns} ns)")
    results.from_checkpoint += bool(report["from_checkpoint"])

    expected = apply(game.clock, Resume(t_ns=report["t_ns"], at_ns=expected_at))
    ev = view(expected, report["t_ns"])
    if [p.remaining_ns for p in ev.players] != report["remaining_ns"]:
        fail(f"{tag}: times {report['remaining_ns']} differ from the last record's {[p.remaining_ns for p in ev.players]}")
    was = view(game.clock, game.clock.since_ns).phase
    want_phase = Phase.NEUTRALISED if was is Phase.RUNNING else was
    if report["phase"] != want_phase.value:
        fail(f"{tag}: came back {report['phase']}, expected {want_phase.value}")
    results.restored_running += was is Phase.RUNNING

    # the loss: restored remaining vs the true remaining at the moment of the kill
    if view(game.clock, game.clock.since_ns).phase is Phase.ENDED:
        return
    since = game.clock.since_ns
    stalled = alive_ns is not None and snap.kill_ns - alive_ns > interval_ns + STALL_SLACK_NS
    results.stalls += stalled
    moments = [("kill", max(snap.kill_ns, since))]
    if alive_ns is not None:
        moments.append(("last heartbeat", max(alive_ns, since)))
    for name, moment in moments:
        truth = view(game.clock, moment)
        if truth.phase is Phase.ENDED:  # time alone ended it (a forfeit) before then
            continue
        for p, restored_ns in zip(truth.players, report["remaining_ns"]):
            counting = p.running or (truth.phase is Phase.LATE and p.absent)
            loss = restored_ns - p.remaining_ns
            if not counting:
                if loss != 0:
                    fail(f"{tag}: player {p.player}, not running, changed by {loss / MS:.1f} ms")
                continue
            (results.losses_ns if name == "kill" else results.alive_losses_ns).append(loss)
            if name == "kill" and stalled:
                continue  # the process was not running: checked from its last heartbeat instead
            if not 0 <= loss <= LOSS_BOUND_NS:
                fail(f"{tag}: player {p.player} lost {loss / MS:.1f} ms from the {name} (bound {LOSS_BOUND_NS / MS:.0f} ms)")


def journalled_inputs(state: Path) -> set[str]:
    """Every input in every journal of the state directory, in one canonical text each."""
    found = set()
    for path in sorted((state / "journals").glob("game-*.jsonl")):
        for line in parse_journal(path.read_bytes(), path).iter_lines():
            if line.event is not None and not isinstance(line.event, StateRecord):
                found.add(json.dumps(input_to_dict(line.event), sort_keys=True))
    return found


def check_acted(acted: list[dict], state: Path, tag: str, results: Results) -> None:
    """Every input a clock acted on before a kill must be in the journal (write-ahead): a press the
    clock acted on and the journal lacks is a press a restore silently takes back."""
    results.acted_checked = len(acted)
    if not acted:
        return
    journalled = journalled_inputs(state)
    missing = [a for a in acted if json.dumps(a, sort_keys=True) not in journalled]
    for a in missing[:3]:
        results.failures.append(f"{tag}: {a['input']} at {a['t_ns']} ns acted on before the kill but not in the journal")
    if missing:
        acted[:] = [a for a in acted if a not in missing]  # reported once


def run_kills(
    kills: int,
    workdir: Path,
    *,
    seed: int = 1,
    min_ms: int = 50,
    max_ms: int = 300,
    interval_ms: int = 100,
    long_gap_ms: int = 400,
    tear: float = 0.25,
    early: float = 0.25,
    driver: str = "runner",
    progress=None,
    broken: bool = False,
) -> Results:
    """Kill the driver `kills` times; then start it once more and check that restart too."""
    state = workdir / "state"
    state.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    results = Results()
    started = time.monotonic()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    snap: Snapshot | None = snapshot(state, time.monotonic_ns())
    acted_all: list[dict] = []
    alive_ns: int | None = None
    killed_by_ns: int | None = None
    with open(workdir / "driver.log", "ab") as log:
        for i in range(kills + 1):
            proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "drive", "--driver", driver, "--state-dir", str(state),
                 "--seed", str(rng.randrange(2**32)), "--interval-ms", str(interval_ms),
                 "--long-gap-ms", str(long_gap_ms)] + (["--broken"] if broken else []),
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=ROOT,
                env=env,
            )
            try:
                if i == kills:  # the last start: let it report, then stop it the same way
                    select.select([proc.stdout], [], [], 30)
                elif rng.random() < early:  # during start-up or the restore
                    time.sleep(rng.uniform(0, EARLY_MAX_MS) / 1000)
                else:  # once the clock is going
                    select.select([proc.stdout], [], [], 30)
                    time.sleep(rng.uniform(min_ms, max_ms) / 1000)
                kill_ns = time.monotonic_ns()
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=30)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            dead_ns = time.monotonic_ns()
            results.kills += i < kills
            out = proc.stdout.read().decode().split("\n")[:-1]  # whole lines only
            proc.stdout.close()
            # the driver's pipe: its report (one JSON line, first), heartbeats (integers) and the
            # inputs the clock acted on ("A {...}"), in the order written
            line = out[0] if out and out[0].startswith("{") else ""
            acted_now = [json.loads(x[2:]) for x in out if x.startswith("A ")]
            results.acted += len(acted_now)
            if line:
                try:
                    report = json.loads(line)
                except ValueError:
                    results.failures.append(f"start {i}: unreadable report {line!r}")
                else:
                    check_restart(report, snap, state, results, alive_ns=alive_ns,
                                  interval_ns=interval_ms * MS, killed_by_ns=killed_by_ns)
                    results.checked += 1
            else:
                results.died_before_report += 1
                if i == kills:
                    results.failures.append("the final start never reported its restored clock")
            if not line and snap is not None and restores(snapshot(state, kill_ns)) == restores(snap):
                # Killed before its restore reached the journal: the game is still as of the
                # previous power cut (an unfinished start-up is downtime), so keep that moment.
                kill_ns, alive_ns_now = snap.kill_ns, alive_ns
            else:
                # the killed process's last heartbeat (only whole lines: a cut one is ignored)
                beats = [int(b) for b in out[1:] if b.isdigit()]
                alive_ns_now = beats[-1] if beats else (json.loads(line)["t_ns"] if line else None)
            if i < kills and rng.random() < tear:
                tear_journal(state, rng, kill_ns)
                results.tears += 1
            snap = snapshot(state, kill_ns)
            # every input acted on so far, by this process or an earlier one, is in a journal:
            # checked after every kill, a start killed before it reported included
            acted_all.extend(acted_now)
            check_acted(acted_all, state, f"start {i}", results)
            alive_ns = alive_ns_now
            killed_by_ns = dead_ns
            if progress and (i + 1) % 20 == 0:
                progress(f"{i + 1} starts, {len(results.failures)} failures")
    # every journal the run produced is readable by the replay
    for path in sorted((state / "journals").glob("game-*.jsonl")):
        journal = parse_journal(path.read_bytes(), path)
        fold(journal)
    results.seconds = time.monotonic() - started
    return results


def percentile(values: list[int], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode")
    d = sub.add_parser("drive", help="(internal) run the firmware process the harness kills")
    d.add_argument("--driver", choices=DRIVERS, default="runner")
    d.add_argument("--state-dir", type=Path, required=True)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--interval-ms", type=int, default=900)
    d.add_argument("--long-gap-ms", type=int, default=400)
    d.add_argument("--broken", action="store_true", help="(self-test) skip journalling every other press")
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--min-ms", type=int, default=50, help="earliest kill after a start")
    parser.add_argument("--max-ms", type=int, default=1500, help="latest kill after a start")
    parser.add_argument("--interval-ms", type=int, default=900, help="checkpoint interval (the runner's is 900 ms)")
    parser.add_argument("--long-gap-ms", type=int, default=2500, help="longest think between inputs")
    parser.add_argument("--tear", type=float, default=0.25, help="fraction of kills that also tear the append in flight")
    parser.add_argument("--early", type=float, default=0.25, help="fraction of kills timed from the launch, not the start")
    parser.add_argument("--driver", choices=DRIVERS, default="runner",
                        help="the killed process: the real runner on mock pins, or GameStore driven directly")
    parser.add_argument("--self-test-kills", type=int, default=10,
                        help="kills of a deliberately broken build that must fail the harness (0: skip)")
    parser.add_argument("--workdir", type=Path, help="keep the state here (default: a temporary directory)")
    args = parser.parse_args(argv)
    if args.mode == "drive":
        return DRIVERS[args.driver](args.state_dir, args.seed, args.interval_ms * MS, args.long_gap_ms, args.broken)

    import tempfile

    with tempfile.TemporaryDirectory(prefix="rackside-power-loss-") as tmp:
        workdir = args.workdir or Path(tmp)
        print(f"power loss ({args.driver} driver): {args.kills} SIGKILLs {args.min_ms}-{args.max_ms} ms after each start "
              f"({args.early:.0%} 0-{EARLY_MAX_MS} ms after the launch instead), "
              f"checkpoint every {args.interval_ms} ms, thinks up to {args.long_gap_ms} ms")
        r = run_kills(args.kills, workdir, seed=args.seed, min_ms=args.min_ms, max_ms=args.max_ms,
                      interval_ms=args.interval_ms, long_gap_ms=args.long_gap_ms, tear=args.tear, early=args.early,
                      driver=args.driver,
                      progress=lambda s: print("  " + s, flush=True))
        journals = len(list((workdir / "state" / "journals").glob("game-*.jsonl")))
        print(f"kills: {r.kills}; restarts checked: {r.checked}; killed before reporting: {r.died_before_report}")
        print(f"restored while running (came back neutralised): {r.restored_running}; as of a checkpoint: "
              f"{r.from_checkpoint}; appends torn: {r.tears}, torn tails restored past: {r.torn_tails}; games: {journals}")
        if r.losses_ns:
            print(f"running player's loss per restore, from the kill: p50 {percentile(r.losses_ns, 0.5) / MS:.1f} ms, "
                  f"p99 {percentile(r.losses_ns, 0.99) / MS:.1f} ms, max {max(r.losses_ns) / MS:.1f} ms "
                  f"(bound {LOSS_BOUND_NS / MS:.0f} ms; the checkpoint interval is {args.interval_ms} ms)")
        if r.alive_losses_ns:
            print(f"  from the killed process's last heartbeat: p50 {percentile(r.alive_losses_ns, 0.5) / MS:.1f} ms, "
                  f"p99 {percentile(r.alive_losses_ns, 0.99) / MS:.1f} ms, max {max(r.alive_losses_ns) / MS:.1f} ms")
        print(f"machine stalls (the clock process did not run for over {args.interval_ms} ms + "
              f"{STALL_SLACK_NS // MS} ms before the kill): {r.stalls}")
        print(f"inputs acted on by the killed clocks: {r.acted}, every one checked against the journal after each kill "
              f"(starts killed before reporting included)")
        print(f"failures: {len(r.failures)}; {r.seconds:.1f} s")
        for f in r.failures[:20]:
            print("  FAIL " + f)
        ok = not r.failures
        if args.self_test_kills:
            print(f"\nself-test of the harness: {args.self_test_kills} kills of a deliberately broken build "
                  f"(every other press acted on but not journalled)")
            b = run_kills(args.self_test_kills, workdir / "self-test", seed=args.seed, min_ms=400, max_ms=900,
                          interval_ms=args.interval_ms, long_gap_ms=args.long_gap_ms, tear=0.0, early=0.0,
                          driver=args.driver, broken=True)
            caught = [f for f in b.failures if "not in the journal" in f]
            print(f"inputs acted on: {b.acted}; failures: {len(b.failures)}, of which presses missing from the journal: {len(caught)}")
            for f in b.failures[:5]:
                print("  FAIL " + f)
            if caught:
                print("self-test: FAIL as it must be (the harness sees presses acted on and not journalled)")
            else:
                print("SELF-TEST FAILED: the harness passed a build that loses presses; it cannot see them")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
