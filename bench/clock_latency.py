"""Table clock benchmark (issue 2): press-to-switch latency, charged-time error, CPU of a running clock.

1. Latency through gpiozero's mock pins, with the runner on its own thread blocked on the queue as in
   production: from a press's edge (the timestamp MockPin gives `drive_low`, which the board turns
   into the edge time the core charges from) to the moment the runner has written the input to
   the journal, applied the switch and told the displays. The journal's fsync follows the displays
   in the same loop iteration; "edge -> fsync'd" is printed beside it. p50/p99/max, idle and with
   two CPU-burning processes, with the state directory on the real disk as on a Pi (`--disk-dir`,
   default: the temp directory, or the repository's file system if that is tmpfs), plus an idle
   run on tmpfs (the firmware's own cost, no disk) and, as the baseline measured in the same run, an
   idle on-disk run in the previous order (each input fsync'd before it is applied and shown). On
   a 2-core machine two CPU hogs delay the runner's wake-up by the kernel's scheduling slice (~5 ms)
   at normal priority, nice or not; as a SCHED_FIFO process (systemd's CPUSchedulingPolicy=fifo) it
   wakes at once. All are printed, each with the load average (the machine may be shared); the
   target is judged on the on-disk idle runs and the busy SCHED_FIFO run; the busy normal-priority,
   baseline and tmpfs runs are informative.
2. Charged-time error: the time charged to each player against the sum of their turns measured edge
   to edge. On a fake clock, for games from 1 minute to 6 hours (the error must not grow with the
   length of the game), and on the real clock through the mock pins.
3. CPU of a running clock over 60 s: a separate process runs the real runner with a game in
   progress (a display changing every second, checkpoints every 0.9 s, gpiozero's button threads),
   measured with getrusage; a process that only waits on a queue for the same 60 s is the baseline.

0. The clock core's work per press: the time the runner spends in the core (`apply`, `view`,
   `settle`) in each loop iteration that acts on a press, runner on its own thread on mock pins, idle,
   normal priority; p50 and p99, with a fixed pure-Python workload timed in the same run as the
   baseline (the ratio carries between machines; a Pi Zero 2 W is several times slower).

With `[text_display]` (issue 40) the idle on-disk run is repeated with the text display as one more
output (its words rendered on the runner's thread, written to a 20x4 display whose bus takes 4 ms a
row by its own thread) and its ratio to the run without printed (the same target: p99 <= 1 ms).

Targets: core work p50 <= 0.1 ms; p99 <= 1 ms; charged-time error <= 1 ms whatever the game length; CPU <= 1% of one core.

    .venv/bin/python bench/clock_latency.py [--presses 1000] [--cpu-seconds 60] [--disk-dir DIR] [--core-only]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MS = 1_000_000
PINS = {"left": 17, "right": 27, "neutralise": 22}
BURN_S = 600  # the busy processes stop by themselves after this, whatever happens to us


def build(state_dir: Path, *, clock_ns=time.monotonic_ns, rules=None, fsync_first: bool = False):
    from gpiozero.pins.mock import MockFactory

    from rackside.game.clock import Rules
    from rackside.firmware.persist import GameStore
    from rackside.firmware.display_output import DisplaysOutput
    from rackside.firmware.runner import Runner
    from rackside.hardware.board import Board
    from rackside.hardware.display import RecordingDisplay

    rules = rules or Rules()
    board = Board(PINS, pin_factory=MockFactory(), clock_ns=clock_ns)
    displays = [RecordingDisplay("left"), RecordingDisplay("right")]
    if fsync_first:

        class FsyncFirstStore(GameStore):
            """The previous order, as a baseline: every input fsync'd before the clock acts on it."""

            def record(self, event, *, sync=True, **extra):
                return super().record(event, sync=True, **extra)

        store = FsyncFirstStore(state_dir, rules, boot_id="bench")
    else:
        store = GameStore(state_dir, rules, boot_id="bench")
    runner = Runner(rules=rules, store=store, outputs=[DisplaysOutput(displays)], events=board.events, clock_ns=clock_ns)
    return board, displays, store, runner


# --- 1. latency ---------------------------------------------------------------------------------


def fs_type(path: str) -> str:
    """The file system `path` is on (from /proc/self/mounts: the longest mount point above it)."""
    path = os.path.realpath(path)
    best, kind = "", "unknown"
    try:
        with open("/proc/self/mounts") as mounts:
            for line in mounts:
                _, point, fs = line.split()[:3]
                point = point.replace("\\040", " ")
                if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
                    best, kind = point, fs
    except OSError:
        pass
    return kind


def default_disk_dir() -> str:
    """A directory on a real disk: the temp directory unless it is tmpfs, else the repository's."""
    tmp = tempfile.gettempdir()
    return tmp if fs_type(tmp) not in ("tmpfs", "ramfs") else str(ROOT)


CORE_FUNCTIONS = ("apply", "view", "settle", "phase_at")  # the clock core's entry points the runner calls


class CoreTimer:
    """Times the clock core's work inside the runner: wraps the core functions the runner module
    calls (`apply`, `view`, `settle`; whatever they call inside the core is included once) and
    sums their perf_counter time. The wrapper's own cost (~0.1 us a call) is included."""

    def __init__(self) -> None:
        import rackside.firmware.runner as runner_module

        self.module = runner_module
        # whichever of them the runner module uses (an older runner has no phase_at)
        self.saved = {name: getattr(runner_module, name) for name in CORE_FUNCTIONS if hasattr(runner_module, name)}
        self.total_ns = 0
        self.calls = 0

    def __enter__(self) -> "CoreTimer":
        perf = time.perf_counter_ns

        def timed(fn):
            def wrapper(*args, **kwargs):
                t0 = perf()
                try:
                    return fn(*args, **kwargs)
                finally:
                    self.total_ns += perf() - t0
                    self.calls += 1

            return wrapper

        for name, fn in self.saved.items():
            setattr(self.module, name, timed(fn))
        return self

    def __exit__(self, *exc) -> None:
        for name, fn in self.saved.items():
            setattr(self.module, name, fn)


def reference_work_us(repeat: int = 2000) -> float:
    """The same-run baseline for the core's work: the median time of a fixed pure-Python workload
    (building and comparing a few small tuples, about what one input should cost), in us. The
    ratio core/reference is comparable between machines; the absolute figure is this machine's."""

    def work() -> bool:
        acc = (0, 0)
        for i in range(50):
            acc = (acc[0] + i, acc[1] - i) if i % 2 else (acc[1], acc[0])
        return acc == (1, 2)

    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        work()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1000


class SlowTextDisplay:
    """A 20x4 text display whose bus takes `row_ms` a row, as an HD44780 behind a PCF8574 does
    (RPLCD writes each character as I2C nibbles: a few ms a row), for the text display runs."""

    def __init__(self, row_ms: float = 4.0) -> None:
        from rackside.hardware.textdisplay import SimTextDisplay

        self.inner = SimTextDisplay(20, 4)
        self.cols, self.rows, self.row_s = 20, 4, row_ms / 1000

    def show(self, lines) -> None:
        time.sleep(self.row_s * len(lines))
        self.inner.show(lines)

    def close(self) -> None:
        pass


def measure_latency(
    presses: int, state_root: str | None, fsync_first: bool = False, core: list[float] | None = None, core_calls: list[int] | None = None,
    text_display: bool = False,
) -> tuple[list[float], list[float]]:
    """Latencies in ms of `presses` switches, the runner on its own thread: edge -> displays told,
    and edge -> journal fsync'd. When `core` is a list, the core's work (us) in each runner
    iteration that acted on a press is appended to it. `text_display`: with the optional text
    display (issue 40) as one more output, its words rendered on the runner's thread and written
    by its own thread to a display whose bus is slow (SlowTextDisplay)."""
    from rackside.game.clock import Rules
    from rackside.firmware.display_output import DisplaysOutput
    from rackside.firmware.runner import Runner

    done: dict[int, int] = {}  # switched_ns -> when the displays had been told
    durable: dict[int, int] = {}  # switched_ns -> when its journal line had been fsync'd
    switched = threading.Event()
    timer = CoreTimer() if core is not None else None
    core_calls = core_calls if core_calls is not None else []

    class TimedRunner(Runner):
        def step(self, timeout_s=None) -> bool:
            if timer is None:
                return super().step(timeout_s)
            before, timer.total_ns, calls = self.clock.switched_ns, 0, timer.calls
            more = super().step(timeout_s)  # includes the next wait's planning (view): per press
            if self.clock.switched_ns != before:
                core.append(timer.total_ns / 1000)
                core_calls.append(timer.calls - calls)
            return more

        def refresh(self, now: int) -> None:
            super().refresh(now)
            s = self.clock.switched_ns
            if s is not None and s not in done:
                done[s] = time.monotonic_ns()
                switched.set()

        def flush(self, now: int) -> None:
            super().flush(now)  # the journal's fsync is in the outputs' flush
            s = self.clock.switched_ns
            if s is not None and s not in durable:
                durable[s] = time.monotonic_ns()

    with tempfile.TemporaryDirectory(prefix="rackside-latency-", dir=state_root) as tmp, (timer or contextlib.nullcontext()):
        # switch_guard_ms = 0 lets the bench press every ~25 ms; the guard only ignores presses
        board, displays, store, runner = build(Path(tmp), rules=Rules(switch_guard_ms=0, game_time_ms=99 * 60_000), fsync_first=fsync_first)
        outputs = [DisplaysOutput(displays)]
        if text_display:
            from rackside.firmware.text_output import TextDisplayOutput

            outputs.append(TextDisplayOutput(SlowTextDisplay()))
        timed = TimedRunner(rules=runner.rules, store=store, outputs=outputs, events=board.events)
        timed.start()
        thread = threading.Thread(target=timed.run, daemon=True)
        thread.start()
        rng = random.Random(3)
        try:
            board.drive("right", True)  # start the left player's time (held back until release: 2.2)
            time.sleep(0.03)
            board.drive("right", False)
            time.sleep(0.1)
            running = "left"
            latencies, switches = [], []
            for _ in range(presses):
                time.sleep(rng.uniform(0.02, 0.03))
                switched.clear()
                board.drive(running, True)  # this thread then sleeps: it never competes with the runner
                if not switched.wait(1.0):
                    raise RuntimeError("a press did not switch the clock within 1 s")
                s = timed.clock.switched_ns
                latencies.append((done[s] - s) / MS)
                switches.append(s)
                time.sleep(0.002)
                board.drive(running, False)
                running = "right" if running == "left" else "left"
        finally:
            timed.stop()
            thread.join(5)
            board.close()
            store.close()
    return latencies, [(durable[s] - s) / MS for s in switches]


def start_burners(n: int) -> list[subprocess.Popen]:
    code = f"import time\nend = time.monotonic() + {BURN_S}\nwhile time.monotonic() < end:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def stop_burners(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


# --- 2. charged-time error ----------------------------------------------------------------------


def charged_error_fake_clock(game_s: int, seed: int) -> tuple[int, int]:
    """Play a game of about `game_s` seconds on a fake clock; return (presses, max |error| ns)."""
    import gpiozero.pins.mock as mock

    from rackside.game.clock import Rules

    now = [1_000_000 * 1_000_000_000]  # 11.6 days of uptime: float ticks lose precision with uptime
    saved = mock.monotonic
    mock.monotonic = lambda: now[0] / 1e9
    rng = random.Random(seed)
    rules = Rules(game_time_ms=(99 * 60 + 59) * 1000, forfeit_overtime_ms=99 * 60_000)
    with tempfile.TemporaryDirectory(prefix="rackside-charged-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as tmp:
        board, _, store, runner = build(Path(tmp), clock_ns=lambda: now[0], rules=rules)
        try:
            runner.start()
            now[0] += 10 * MS
            board.drive("right", True)
            now[0] += 50 * MS
            board.drive("right", False)
            now[0] += 30 * MS
            runner.pump()
            turn_start = runner.clock.switched_ns
            end = turn_start + game_s * 1_000_000_000
            expected = [0, 0]
            running, presses = 1, 0
            while True:
                press_t = turn_start + rng.randint(200 * MS, min(90_000 * MS, max(400 * MS, game_s * 1000 * MS // 20)))
                if press_t > end:
                    break
                button = "left" if running == 1 else "right"
                now[0] = press_t
                board.drive(button, True)
                runner.pump()
                now[0] += rng.randint(30 * MS, 150 * MS)
                board.drive(button, False)
                runner.pump()
                expected[running - 1] += press_t - turn_start
                running, turn_start, presses = 3 - running, press_t, presses + 1
            errors = [abs(a - b) for a, b in zip(runner.clock.played_ns, expected)]
            return presses, max(errors)
        finally:
            mock.monotonic = saved
            board.close()
            store.close()


def charged_error_real_clock(presses: int) -> tuple[int, float]:
    """Through the mock pins on the real clock: edge-to-edge reference taken just before each
    drive_low; returns (presses, max |error| in ms over both players)."""
    with tempfile.TemporaryDirectory(prefix="rackside-charged-real-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as tmp:
        board, _, store, runner = build(Path(tmp))
        runner.start()
        thread = threading.Thread(target=runner.run, daemon=True)
        thread.start()
        rng = random.Random(5)
        try:
            board.drive("right", True)
            t_start = time.monotonic_ns()
            time.sleep(0.03)
            board.drive("right", False)
            time.sleep(0.15)
            expected = [0, 0]
            running, turn_start = 1, t_start
            for _ in range(presses):
                time.sleep(rng.uniform(0.11, 0.2))
                button = "left" if running == 1 else "right"
                t = time.monotonic_ns()
                board.drive(button, True)
                time.sleep(0.02)
                board.drive(button, False)
                expected[running - 1] += t - turn_start
                running, turn_start = 3 - running, t
            time.sleep(0.1)
            played = runner.clock.played_ns
            return presses, max(abs(a - b) for a, b in zip(played, expected)) / MS
        finally:
            runner.stop()
            thread.join(5)
            board.close()
            store.close()


# --- 3. CPU ---------------------------------------------------------------------------------------

CPU_CHILD = r"""
import os, resource, sys, tempfile, threading, time
sys.path.insert(0, sys.argv[1])
seconds = float(sys.argv[2])
mode = sys.argv[3]
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
if mode == "baseline":
    import queue
    q = queue.SimpleQueue()
    c0, w0 = cpu(), time.monotonic()
    try:
        q.get(timeout=seconds)
    except queue.Empty:
        pass
    print(cpu() - c0, time.monotonic() - w0)
    sys.exit(0)
sys.argv = sys.argv[:1]
from pathlib import Path
import bench.clock_latency as b
with tempfile.TemporaryDirectory(prefix="rackside-cpu-") as tmp:
    board, displays, store, runner = b.build(Path(tmp))
    runner.start()
    board.drive("right", True); time.sleep(0.05); board.drive("right", False)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    time.sleep(1.0)
    assert runner.clock.phase.value == "running", runner.clock.phase
    shown0 = len(displays[0].shown)
    c0, w0 = cpu(), time.monotonic()
    time.sleep(seconds)
    c1, w1 = cpu(), time.monotonic()
    runner.stop(); thread.join(5)
    print(c1 - c0, w1 - w0, len(displays[0].shown) - shown0)
    board.close(); store.close()
"""


def measure_cpu(seconds: float) -> tuple[tuple[float, float, int], tuple[float, float]]:
    env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock")
    clock = subprocess.Popen([sys.executable, "-c", CPU_CHILD, str(ROOT), str(seconds), "clock"], stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    base = subprocess.Popen([sys.executable, "-c", CPU_CHILD, str(ROOT), str(seconds), "baseline"], stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    out_c, _ = clock.communicate(timeout=seconds + 60)
    out_b, _ = base.communicate(timeout=seconds + 60)
    if clock.returncode or base.returncode:
        raise RuntimeError(f"CPU measurement failed: {out_c!r} {out_b!r}")
    c = out_c.split()
    b = out_b.split()
    return (float(c[0]), float(c[1]), int(c[2])), (float(b[0]), float(b[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presses", type=int, default=1000)
    ap.add_argument("--cpu-seconds", type=float, default=60.0)
    ap.add_argument("--disk-dir", default=None, help="where the on-disk state directories go (default: the temp directory, or the repository's file system if that is tmpfs)")
    ap.add_argument("--core-only", action="store_true", help="only the core's work per press and the idle normal-priority press-to-display run")
    args = ap.parse_args()
    ok = True
    shm = "/dev/shm" if Path("/dev/shm").is_dir() else None
    disk = args.disk_dir or default_disk_dir()
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}")
    print(f"journal on disk: {disk} ({fs_type(disk)}); on tmpfs: {shm} ({fs_type(shm) if shm else 'none'})")

    print(f"\n0. the clock core's work per press (apply, view, settle, as the runner calls them), runner on mock pins, idle, normal priority, journal on disk")
    core: list[float] = []
    calls: list[int] = []
    lat, _ = measure_latency(args.presses, disk, core=core, core_calls=calls)
    ref = reference_work_us()
    c50, c99 = statistics.median(core), pct(core, 99)
    good = c50 <= 100.0
    ok &= good
    print(f"   core work per press: p50 {c50:7.1f} us  p99 {c99:7.1f} us  ({len(core)} presses, {statistics.median(calls):.0f} core calls each)  target p50 <= 100 us: {'PASS' if good else 'FAIL'}")
    print(f"   baseline, same run: a fixed pure-Python workload takes {ref:.1f} us: core p50 = {c50 / ref:.1f}x the baseline")
    print(f"   press-to-display (timed run, wrappers included): p50 {statistics.median(lat):7.3f} ms  p99 {pct(lat, 99):7.3f} ms  (load average {os.getloadavg()[0]:.2f})")
    if args.core_only:
        lat, _ = measure_latency(args.presses, disk)
        p99 = pct(lat, 99)
        ok &= p99 <= 1.0
        print(f"   press-to-display, untimed, idle, normal priority: p50 {statistics.median(lat):7.3f} ms  p99 {p99:7.3f} ms  target p99 <= 1 ms: {'PASS' if p99 <= 1.0 else 'FAIL'}  (load average {os.getloadavg()[0]:.2f}; the machine may be shared)")
        print("\nOVERALL", "PASS" if ok else "FAIL")
        return 0 if ok else 1

    print(f"\n1. press-to-switch latency, {args.presses} presses each (edge -> written, applied, displays told; the fsync follows)")
    rows = {}
    runs = [  # label, state directory root, busy processes, SCHED_FIFO, judged, fsync before the display, a text display
        ("idle, journal on disk", disk, 0, False, True, False, False),
        ("idle, disk, with a text display", disk, 0, False, True, False, True),
        ("idle, journal on disk, SCHED_FIFO 20", disk, 0, True, True, False, False),
        ("idle, disk, SCHED_FIFO 20, a text display", disk, 0, True, True, False, True),
        ("2 busy processes, disk, normal priority", disk, 2, False, False, False, False),
        ("2 busy processes, disk, SCHED_FIFO 20", disk, 2, True, True, False, False),
        ("baseline: idle, disk, fsync first", disk, 0, False, False, True, False),
    ]
    if shm is not None:
        runs.append(("idle, journal on tmpfs (no disk)", shm, 0, False, False, False, False))
    medians = {}
    for label, root, burners, fifo, judged, fsync_first, text in runs:
        procs = start_burners(burners)
        try:
            time.sleep(0.5 if burners else 0)
            if fifo:  # after the burners started: they must not inherit it
                try:
                    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(20))
                except PermissionError:
                    print(f"   {label:<40} skipped: needs CAP_SYS_NICE (systemd's CPUSchedulingPolicy= grants it)")
                    continue
            try:
                lat, synced = measure_latency(args.presses, root, fsync_first, text_display=text)
            finally:
                if fifo:
                    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        finally:
            stop_burners(procs)
        p50, p99, mx = statistics.median(lat), pct(lat, 99), max(lat)
        rows[label] = p99
        medians[label] = p50
        target = p99 <= 1.0
        if judged:
            ok &= target
        verdict = ("PASS" if target else "FAIL") if judged else "(informative)"
        print(f"   {label:<40} p50 {p50:7.3f} ms  p99 {p99:7.3f} ms  max {mx:7.3f} ms  target p99 <= 1 ms: {verdict}  (load average {os.getloadavg()[0]:.2f})")
        print(f"   {'':<40} edge -> fsync'd: p50 {statistics.median(synced):7.3f} ms  p99 {pct(synced, 99):7.3f} ms  max {max(synced):7.3f} ms  (informative)")
    base = rows["idle, journal on disk"]
    print("   p99 relative to idle on disk: " + ", ".join(f"{k}: {v / base:.1f}x" for k, v in rows.items() if k != "idle, journal on disk"))
    for with_text, without in (("idle, disk, with a text display", "idle, journal on disk"),
                               ("idle, disk, SCHED_FIFO 20, a text display", "idle, journal on disk, SCHED_FIFO 20")):
        if with_text in medians and without in medians:
            print(f"   a text display (20x4, its bus 4 ms a row, its own thread) against none, same run, {without}: "
                  f"p50 {medians[with_text] / medians[without]:.2f}x, p99 {rows[with_text] / rows[without]:.2f}x")
    print("   (baseline: the previous order, each input fsync'd before the clock acts on it and the displays are told)")
    print("   (the time charged never includes this latency: presses are dated at their edges)")

    print("\n2. charged time vs edge-to-edge time")
    for minutes in (1, 50, 360):
        presses, err = charged_error_fake_clock(minutes * 60, seed=minutes)
        good = err <= MS
        ok &= good
        print(f"   fake clock, {minutes:>4} min game, {presses:>5} presses: max error {err} ns  {'PASS' if good else 'FAIL'}")
    presses, err_ms = charged_error_real_clock(100)
    good = err_ms <= 1.0
    ok &= good
    print(f"   real clock through mock pins, {presses} presses: max error {err_ms:.4f} ms  {'PASS' if good else 'FAIL'}")

    print(f"\n3. CPU of a running clock over {args.cpu_seconds:.0f} s (separate process, real clock)")
    (c_cpu, c_wall, redraws), (b_cpu, b_wall) = measure_cpu(args.cpu_seconds)
    share = 100 * c_cpu / c_wall
    good = share <= 1.0
    ok &= good
    print(f"   running clock: {c_cpu:.3f} s CPU in {c_wall:.1f} s = {share:.3f}% of one core ({redraws} redraws of the running display)  {'PASS' if good else 'FAIL'}")
    print(f"   baseline (a process waiting on a queue): {b_cpu:.3f} s CPU in {b_wall:.1f} s = {100 * b_cpu / b_wall:.3f}%")
    print("\nOVERALL", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
