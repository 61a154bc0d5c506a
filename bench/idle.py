#!/usr/bin/env python3
"""Idle cost: CPU and wake-ups of a program that is waiting for a person, measured from /proc.

    .venv/bin/python bench/idle.py                      # every target, 60 s each
    .venv/bin/python bench/idle.py --seconds 10         # shorter runs (noisier)
    .venv/bin/python bench/idle.py sim-window sleep     # only these targets

Each target is started as its own process (a fresh state directory, so no game is restored),
left to settle for `--settle` seconds, then measured over `--seconds`:

- CPU: utime + stime of the whole process (every thread) from /proc/<pid>/stat, as a percentage
  of one core over the wall time measured;
- wake-ups: voluntary + nonvoluntary context switches of every thread (/proc/<pid>/task/*/status),
  per second. Each time a thread sleeps and is woken again counts at least once.

Targets (issue 11 item 3): an idle simulator window and an idle station at most 0.5 % of a core and
at most 50 wake-ups a second. `sim-window-neutralised` holds a blinking window to the same target (a
neutralised clock redraws at least twice a second: colons, HOLd and the turn LEDs), so the
figures are not bought by skipping what the screens promise. The baselines are measured in the same run: a sleeping Python (the
floor) and the clock simulator in a terminal (the same firmware, a different front end). Ratios are
against the terminal clock. The keypad (issue 27 item 1) is measured against the same clock without
one, in the same run: `sim-terminal-keypad` against `sim-terminal`, `headless-keypad` against
`headless` (the firmware alone, as on a Pi), `sim-window-keypad` against `sim-window`; its targets are
the window's (a keypad's scanner waits on edges, so an idle clock with one should cost what one without does).
The text display (issue 40) likewise: `headless-text` against `headless-keypad` and `sim-terminal-text`
against `sim-terminal-keypad`, printed as ratios after the table. Windows are opened on a private Xvfb display (Unix socket only, no TCP).

To add a target, add a function to TARGETS that returns (argv, env, needs_tty); `check` says
whether the issue's target applies to it.
"""

from __future__ import annotations

import argparse
import os
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, NamedTuple

REPO = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")
CPU_TARGET_PCT = 0.5
WAKEUPS_TARGET = 50.0


class Target(NamedTuple):
    describe: str
    start: Callable[[Path, dict], tuple[list[str], dict, bool]]  # (tmp dir, base env) -> argv, env, needs_tty
    check: bool  # the targets apply to it
    needs_x: bool = False


def _python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _sleep(tmp: Path, env: dict):
    return [_python(), "-c", "import time; time.sleep(10**6)"], env, False


def _clock(tmp: Path, env: dict, *extra: str):
    env = {**env, "RACKSIDE_STATE_DIR": str(tmp / "state"), "RACKSIDE_CONFIG_DIR": str(tmp / "config")}
    return [_python(), "-m", "rackside", "clock", "--simulate", *extra], env, True


def _keypad_clock(tmp: Path, env: dict, *extra: str):
    """The same clock with the optional keypad fitted: `[keypad] enabled = true` in its config."""
    (tmp / "config").mkdir(parents=True, exist_ok=True)
    (tmp / "config" / "clock.toml").write_text("[keypad]\nenabled = true\n")
    return _clock(tmp, env, *extra)


def _text_clock(tmp: Path, env: dict, *extra: str):
    """The keypad clock with the optional text display too (issue 40): `[text_display]`, the
    simulator's (any driver, with --simulate), its output's own thread waiting on its mailbox."""
    (tmp / "config").mkdir(parents=True, exist_ok=True)
    (tmp / "config" / "clock.toml").write_text('[keypad]\nenabled = true\n\n[text_display]\ndriver = "hd44780"\n')
    return _clock(tmp, env, *extra)


def _neutralised_clock(tmp: Path, env: dict):
    """The window with a game in progress: a journal whose game was running, so the clock restores
    it neutralised (1.4.3) and blinks (colons, HOLd, both turn LEDs) for the whole measurement."""
    sys.path.insert(0, str(REPO))
    from rackside.game.clock import Press, Rules
    from rackside.firmware.persist import GameStore

    with GameStore(tmp / "state" / "clock", Rules()) as store:
        now = time.monotonic_ns()
        store.start(now)
        store.record(Press(now, 2))  # the right player started the left player's time (2.2)
    return _clock(tmp, env)


TARGETS: dict[str, Target] = {
    "sleep": Target("a sleeping Python (the floor)", _sleep, False),
    "sim-terminal": Target("clock simulator in a terminal (baseline)", lambda t, e: _clock(t, e, "--terminal"), False),
    "sim-window": Target("clock simulator window (Xvfb), before a game", lambda t, e: _clock(t, e), True, needs_x=True),
    "sim-window-neutralised": Target(
        "clock simulator window (Xvfb), neutralised: colons, HOLd and LEDs blink", _neutralised_clock, True, needs_x=True
    ),
    "sim-terminal-keypad": Target("clock simulator in a terminal with the keypad", lambda t, e: _keypad_clock(t, e, "--terminal"), True),
    "headless": Target("the clock firmware alone (--headless: as on a Pi), no keypad", lambda t, e: _clock(t, e, "--headless"), True),
    "headless-keypad": Target("the clock firmware alone with the keypad", lambda t, e: _keypad_clock(t, e, "--headless"), True),
    "sim-window-keypad": Target("clock simulator window (Xvfb) with the keypad, before a game", lambda t, e: _keypad_clock(t, e), True, needs_x=True),
    "headless-text": Target("the clock firmware alone with the keypad and a text display", lambda t, e: _text_clock(t, e, "--headless"), True),
    "sim-terminal-text": Target("clock simulator in a terminal with the keypad and a text display", lambda t, e: _text_clock(t, e, "--terminal"), True),
}
# A part measured against the same clock without it, in the same run (printed as ratios after the table)
AGAINST = {"headless-text": "headless-keypad", "sim-terminal-text": "sim-terminal-keypad"}
BASELINE = "sim-terminal"


def cpu_ticks(pid: int) -> int:
    """utime + stime of every thread of `pid`, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted after the comm


def context_switches(pid: int) -> int:
    """Voluntary + nonvoluntary context switches, summed over every thread of `pid`."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except FileNotFoundError:  # a thread that just ended
            pass
    return total


class Xvfb:
    """A private X server for window targets: Unix socket only (-nolisten tcp)."""

    def __init__(self) -> None:
        self.proc = None
        self.display = None

    def __enter__(self) -> "Xvfb":
        if not shutil.which("Xvfb"):
            raise SystemExit("bench/idle.py: Xvfb is needed for window targets (setup.sh --dev installs it)")
        for n in range(91, 140):
            if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
                self.proc = subprocess.Popen(
                    ["Xvfb", f":{n}", "-nolisten", "tcp", "-screen", "0", "1280x720x24"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
                for _ in range(100):
                    if os.path.exists(f"/tmp/.X11-unix/X{n}"):
                        self.display = f":{n}"
                        return self
                    time.sleep(0.05)
                self.proc.kill()
        raise SystemExit("bench/idle.py: could not start Xvfb")

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=5)


def measure(name: str, seconds: float, settle: float, display: str | None) -> dict:
    target = TARGETS[name]
    with tempfile.TemporaryDirectory(prefix=f"rackside-idle-{name}-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")}
        env.update(PYGAME_HIDE_SUPPORT_PROMPT="1", SDL_AUDIODRIVER="dummy", TERM="xterm")
        if target.needs_x:
            env["DISPLAY"] = display
        argv, env, needs_tty = target.start(Path(tmp), env)
        master = None
        if needs_tty:
            master, slave = pty.openpty()
            proc = subprocess.Popen(argv, env=env, stdin=slave, stdout=slave, stderr=subprocess.DEVNULL, start_new_session=True)
            os.close(slave)
        else:
            proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            drain_until = time.monotonic() + settle
            while time.monotonic() < drain_until:  # let it start; keep its terminal drained
                _drain(master, 0.1)
            if proc.poll() is not None:
                raise SystemExit(f"bench/idle.py: {name} exited with {proc.returncode} before it was measured")
            c0, s0, t0 = cpu_ticks(proc.pid), context_switches(proc.pid), time.monotonic()
            end = t0 + seconds
            while time.monotonic() < end:
                _drain(master, min(0.5, max(0.0, end - time.monotonic())))
            c1, s1, t1 = cpu_ticks(proc.pid), context_switches(proc.pid), time.monotonic()
            if proc.poll() is not None:
                raise SystemExit(f"bench/idle.py: {name} exited with {proc.returncode} while it was measured")
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if master is not None:
                os.close(master)
    wall = t1 - t0
    return {"cpu_pct": 100.0 * (c1 - c0) / TICKS / wall, "wakeups": (s1 - s0) / wall, "wall": wall}


def _drain(fd: int | None, timeout: float) -> None:
    """Read and drop what a terminal target wrote, so it never blocks on a full pty."""
    if fd is None:
        time.sleep(timeout)
        return
    import select

    ready, _, _ = select.select([fd], [], [], timeout)
    if ready:
        try:
            os.read(fd, 65536)
        except OSError:
            time.sleep(timeout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"some of: {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--seconds", type=float, default=60.0, help="measure each target this long (default 60)")
    parser.add_argument("--settle", type=float, default=5.0, help="let each target start this long first (default 5)")
    args = parser.parse_args(argv)
    names = args.targets or list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        parser.error(f"unknown target {unknown[0]!r} (allowed: {', '.join(TARGETS)})")
    if BASELINE not in names:
        names.insert(0, BASELINE)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; {args.seconds:g} s per target, "
          f"after {args.settle:g} s to settle; clock tick {TICKS} Hz (CPU resolution {100 / TICKS / args.seconds:.3f} %)")
    results: dict[str, dict] = {}
    display = None
    xvfb = Xvfb() if any(TARGETS[n].needs_x for n in names) else None
    try:
        if xvfb is not None:
            display = xvfb.__enter__().display
        for name in names:
            results[name] = measure(name, args.seconds, args.settle, display)
    finally:
        if xvfb is not None:
            xvfb.__exit__(None, None, None)
    base = results[BASELINE]
    failed = False
    print(f"{'target':<20} {'CPU % of a core':>16} {'wake-ups/s':>11} {'CPU vs baseline':>16} {'wake-ups vs baseline':>21}  verdict")
    for name, r in results.items():
        t = TARGETS[name]
        ratio_cpu = r["cpu_pct"] / base["cpu_pct"] if base["cpu_pct"] else float("inf") if r["cpu_pct"] else 1.0
        ratio_wake = r["wakeups"] / base["wakeups"] if base["wakeups"] else float("inf")
        verdict = "(baseline)" if name == BASELINE else "(reference)"
        if t.check:
            ok = r["cpu_pct"] <= CPU_TARGET_PCT and r["wakeups"] <= WAKEUPS_TARGET
            failed |= not ok
            verdict = f"{'PASS' if ok else 'FAIL'} (target <= {CPU_TARGET_PCT} % and <= {WAKEUPS_TARGET:g}/s)"
        print(f"{name:<20} {r['cpu_pct']:>15.3f}% {r['wakeups']:>11.1f} {ratio_cpu:>15.2f}x {ratio_wake:>20.2f}x  {verdict}")
        print(f"{'':<20} {t.describe}")
    for name, other in AGAINST.items():
        if name in results and other in results:
            a, b = results[name], results[other]
            cpu_x = a["cpu_pct"] / b["cpu_pct"] if b["cpu_pct"] else (float("inf") if a["cpu_pct"] else 1.0)
            wake_x = a["wakeups"] / b["wakeups"] if b["wakeups"] else (float("inf") if a["wakeups"] else 1.0)
            print(f"{name} against {other}: CPU {cpu_x:.2f}x, wake-ups {wake_x:.2f}x")
    print("OVERALL", "FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
