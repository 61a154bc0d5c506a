#!/usr/bin/env python3
"""Challenge-station benchmark: cold start, JUDGE-to-result latency, frame time.

    .venv/bin/python bench/kiosk_bench.py            # figures and ratios
    .venv/bin/python bench/kiosk_bench.py --screens docs/screens   # also write the 800x480 PNGs

Targets (issue 4): cold start to the idle screen at most 1.5x a bare pygame window started in the
same run (separate subprocesses, alternated, median of several); JUDGE-to-result at most 30 ms
(includes adjudication, the fsync'd log record and the drawn, flipped verdict); frame time at
most 10 ms at 800x480 and 1920x1080 under SDL's dummy video driver.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PIN = "2468"


# --- children for the cold-start measurement --------------------------------------------------
# Each child is a fresh interpreter that runs only this code (not this file's imports), prints
# "ready" when its first frame is on screen, and waits for the parent to let it go.

BARE_CHILD = """
import sys
import pygame
pygame.display.init()
pygame.font.init()
surface = pygame.display.set_mode((800, 480))
surface.fill((0, 0, 0))
pygame.display.flip()
print("ready", flush=True)
sys.stdin.readline()
"""

# What `rackside kiosk --windowed` does up to the idle screen being drawn.
KIOSK_CHILD = """
import os, sys
from pathlib import Path
from rackside.kiosk.app import KioskApp
from rackside.kiosk.station_config import load_config
app = KioskApp(load_config(Path(sys.argv[1])), fullscreen=False)
app.start()
print("ready", flush=True)
if os.environ.get("KIOSK_BENCH_WARM"):  # also time the warm-up that follows the first frame
    app.warm_up()
    print("warm", flush=True)
sys.stdin.readline()
"""


def time_child(code: str, args: list[str], env: dict, until: str = "ready") -> float:
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env, cwd=REPO)
    line = p.stdout.readline()
    while line and line.strip() != until:
        line = p.stdout.readline()
    elapsed = time.perf_counter() - t0
    p.communicate("\n", timeout=30)
    if line.strip() != until:
        raise SystemExit(f"child {args} failed (exit {p.returncode})")
    return elapsed


def time_cli(config: Path, env: dict) -> float:
    """The whole `rackside kiosk` command (dispatcher and argument parsing included) to the
    "idle screen shown" log line; then SIGTERM, which must end it cleanly."""
    import signal

    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "rackside", "-v", "kiosk", "--config", str(config), "--windowed"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
    elapsed = None
    for line in p.stderr:
        if "idle screen shown" in line:
            elapsed = time.perf_counter() - t0
            break
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    if elapsed is None or p.returncode != 0:
        raise SystemExit(f"rackside kiosk failed (exit {p.returncode})")
    return elapsed


# --- a station to measure in-process -----------------------------------------------------------


def make_station(workdir: Path, size=(800, 480), mode: str = "self", printer: str | None = None):
    from rackside.kiosk.app import KioskApp, Paths
    from rackside.kiosk.station_config import StationConfig, hash_pin

    config = StationConfig(name="bench", mode=mode, fullscreen=False, size=size,
                           pin_hash=hash_pin(PIN, n=2**8), printer_url=printer, printer_status_check=False)
    clock = [time.monotonic_ns()]
    app = KioskApp(config, clock_ns=lambda: clock[0], paths=Paths(
        settings=workdir / "station.json", log=workdir / "log.jsonl", exports=workdir / "exports"))
    app.start()
    app.warm_up()  # as `run()` does before waiting for the first touch
    return app, clock


def write_config(workdir: Path) -> Path:
    from rackside.kiosk.station_config import hash_pin

    cfg = workdir / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{hash_pin(PIN)}"\n[display]\nfullscreen = false\n'
                   f'[log]\npath = "{workdir / "log.jsonl"}"\n', encoding="utf-8")
    return cfg


def post_key(name: str) -> None:
    import pygame

    code = {"TAB": pygame.K_TAB, "SPACE": pygame.K_SPACE, "ESCAPE": pygame.K_ESCAPE,
            "ENTER": pygame.K_RETURN}.get(name) or ord(name.lower())
    pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=code, mod=0))


def type_challenge(app, words: list[str]) -> None:
    post_key(str(len(words)))
    for i, w in enumerate(words):
        if i:
            post_key("SPACE")
        for ch in w:
            post_key(ch)
    app.step()


def judge_latency(workdir: Path, runs: int) -> list[float]:
    from rackside.kiosk.flow import Screen

    app, clock = make_station(workdir)
    plays = [["QI", "ZA"], ["CAT", "XYZZY", "DOG"], ["QUIXOTIC"], ["JINX", "JO", "ZAX", "OX", "AX", "EX", "XI", "XU"]]
    out = []
    try:
        for i in range(runs):
            type_challenge(app, plays[i % len(plays)])
            post_key("TAB")
            t0 = time.perf_counter()
            app.step()  # translate, adjudicate, log + fsync, draw and flip the verdict
            out.append(time.perf_counter() - t0)
            assert app.station.screen == Screen.RESULT
            clock[0] += 11 * 10**9
            app.step()
    finally:
        app.shutdown()
    return out


SCREEN_STEPS = {
    "idle": [],
    "count": ["start"],
    "entry": ["key:3", "type:QI ZA CA"],
    "result": ["key:2", "type:QI ZA", "key:TAB"],
    "pin": ["key:ESCAPE", "key:1", "key:2"],
    "director": ["key:ESCAPE", "pin", "key:ENTER"],
    "rules": ["key:ESCAPE", "pin", "key:ENTER", "tap:rules"],
    "log": ["key:2", "type:QI XQ", "key:TAB", "wait", "key:ESCAPE", "pin", "key:ENTER", "tap:log"],
}


def drive(app, clock, steps: list[str]) -> None:
    from rackside.kiosk.flow import Tap

    for step in steps:
        if step == "start":
            app.feed(Tap("start", clock[0]))
        elif step.startswith("key:"):
            post_key(step[4:])
        elif step.startswith("type:"):
            for ch in step[5:]:
                post_key("SPACE" if ch == " " else ch)
        elif step == "pin":
            for d in PIN:
                post_key(d)
        elif step == "wait":
            app.step()
            clock[0] += 11 * 10**9
        elif step.startswith("tap:"):
            app.step()
            app.feed(Tap(step[4:], clock[0]))
        app.step()


def frame_times(workdir: Path, size, runs: int) -> dict[str, tuple[float, float]]:
    """Per screen: (first frame with cold text caches, median of `runs` forced redraws)."""
    out = {}
    for name, steps in SCREEN_STEPS.items():
        sub = workdir / f"{size[0]}-{name}"
        sub.mkdir()
        app, clock = make_station(sub, size)
        try:
            drive(app, clock, steps)
            app.renderer._text.clear()
            app.renderer._fonts.clear()
            t0 = time.perf_counter()
            app.render(force=True)
            first = time.perf_counter() - t0
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                app.render(force=True)
                times.append(time.perf_counter() - t0)
            out[name] = (first, statistics.median(times))
        finally:
            app.shutdown()
    return out


# --- screenshots for docs/ ---------------------------------------------------------------------


def screenshots(workdir: Path, out_dir: Path) -> list[Path]:
    """Every screen at 800x480 (and one at 1920x1080), as the README shows them."""
    from rackside.kiosk.flow import Screen, Tap

    out_dir.mkdir(parents=True, exist_ok=True)
    made = []

    def shot(app, name):
        path = out_dir / f"{name}.png"
        app.save_screenshot(path)
        made.append(path)

    def fresh(name, **kw):
        sub = workdir / f"shot-{name}"
        sub.mkdir()
        return make_station(sub, **kw)

    app, clock = fresh("self")
    try:
        shot(app, "idle")
        app.feed(Tap("start", clock[0]))
        shot(app, "count")
        drive(app, clock, ["key:3", "type:JO CAT"])
        shot(app, "entry-typing")
        drive(app, clock, ["key:TAB"])
        shot(app, "entry-count-mismatch")
        drive(app, clock, ["key:SPACE", "type:QUIXOTIC"])
        shot(app, "entry-ready")
        drive(app, clock, ["key:TAB"])
        shot(app, "result-acceptable")
        clock[0] += 11 * 10**9
        drive(app, clock, ["key:2", "type:CAT XQ", "key:TAB"])
        shot(app, "result-unacceptable")
        clock[0] += 11 * 10**9
        drive(app, clock, ["key:ESCAPE", "key:1", "key:1", "key:1", "key:1", "key:ENTER", "key:1", "key:2"])
        shot(app, "pin")
        for _ in range(4):
            drive(app, clock, ["key:1", "key:1", "key:1", "key:1", "key:ENTER"])
        assert app.station.screen == Screen.LOCKED
        shot(app, "locked")
        clock[0] += 61 * 10**9
        drive(app, clock, ["key:ESCAPE", "pin", "key:ENTER"])
        shot(app, "director")
        drive(app, clock, ["tap:lexicons"])
        shot(app, "director-lexicons")
        drive(app, clock, ["tap:back", "tap:rules"])
        shot(app, "director-rules")
        drive(app, clock, ["tap:back", "tap:log"])
        app.feed(Tap(f"row:{app.station.log_rows[0].challenge_id}", clock[0]))
        shot(app, "director-log")
        drive(app, clock, ["tap:readj"])
        shot(app, "director-readjudication")
        drive(app, clock, ["tap:back", "tap:readj"])
        shot(app, "director-readjudicate-by-id")
    finally:
        app.shutdown()

    app, clock = fresh("runner", mode="runner", printer="loop://")
    try:
        app.feed(Tap("start", clock[0]))
        drive(app, clock, ["key:1", "key:2"])
        shot(app, "runner-table")
        drive(app, clock, ["key:ENTER", "key:2", "type:JINX OX", "key:TAB"])
        shot(app, "runner-result-printed")
    finally:
        app.shutdown()
    app, clock = fresh("full-hd", size=(1920, 1080))  # the same layout, scaled up
    try:
        drive(app, clock, ["key:3", "type:JO CAT QUI"])
        shot(app, "entry-1920x1080")
    finally:
        app.shutdown()
    app, clock = fresh("runner-off", mode="runner", printer=str(workdir / "ttyUSB-unplugged"))
    try:
        drive(app, clock, ["start", "key:7", "key:ENTER", "key:1", "type:XQ", "key:TAB"])
        shot(app, "runner-result-docket-failed")
    finally:
        app.shutdown()
    return made


# --- main --------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="cold starts of each kind (alternated)")
    parser.add_argument("--screens", type=Path, metavar="DIR", help="also write the 800x480 screenshots to DIR")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kiosk-bench-") as tmp:
        work = Path(tmp)
        os.environ["RACKSIDE_STATE_DIR"] = str(work / "state")
        from rackside.judge.lexicon import install_default_lexicon

        lexicon = install_default_lexicon()  # installed once, outside the timings (setup.sh does this)
        print(f"lexicon: {lexicon.name} in {work}")
        if args.screens:
            from rackside.judge.lexicon import compile_lexicon

            club = work / "club.txt"  # a second lexicon, so the director's list shows a choice
            club.write_text("\n".join(["QI", "ZA", "JINX", "QUIXOTIC", "CAT", "DOG"]) + "\n")
            compile_lexicon(club, lexicon.parent / "club-sample.rlex", "CLUB SAMPLE")
            made = screenshots(work, args.screens)
            for p in made:
                print(f"screenshot {p} ({p.stat().st_size // 1024} KB)")

        # Cold start, alternating bare and kiosk so drift on a shared machine hits both alike.
        config = write_config(work)
        env = dict(os.environ)
        # Measure the station as deployed, with its bytecode cached (as after its first start, or a
        # pip install): a private cache folder, so the repository is not touched even when
        # PYTHONDONTWRITEBYTECODE is set in this environment.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        env["PYTHONPATH"] = str(REPO)
        env["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"
        time_child(BARE_CHILD, [], env)  # warm the page and bytecode caches for both
        time_child(KIOSK_CHILD, [str(config)], env)
        bare, kiosk = [], []
        for _ in range(args.runs):
            bare.append(time_child(BARE_CHILD, [], env))
            kiosk.append(time_child(KIOSK_CHILD, [str(config)], env))
        mb, mk = statistics.median(bare), statistics.median(kiosk)
        ratio = mk / mb
        print(f"cold start: bare pygame window median {mb * 1000:.0f} ms, kiosk to idle screen median "
              f"{mk * 1000:.0f} ms, ratio {ratio:.2f} (target <= 1.5) {'OK' if ratio <= 1.5 else 'OVER'}")
        warm_env = dict(env, KIOSK_BENCH_WARM="1")
        warm = statistics.median(time_child(KIOSK_CHILD, [str(config)], warm_env, "warm")
                                 for _ in range(max(3, args.runs // 2)))
        print(f"  and to warmed up (log opened, JUDGE path loaded, after the idle screen is shown): median "
              f"{warm * 1000:.0f} ms, ratio {warm / mb:.2f} (for information)")

        cli = statistics.median(time_cli(config, env) for _ in range(max(3, args.runs // 2)))
        print(f"  whole `rackside kiosk` command to the idle screen (rackside.py dispatcher and every "
              f"subcommand's registration included): median {cli * 1000:.0f} ms, ratio {cli / mb:.2f} "
              f"(for information)")

        lat = judge_latency(work, 40)
        med, worst = statistics.median(lat) * 1000, max(lat) * 1000
        p95 = sorted(lat)[int(len(lat) * 0.95) - 1] * 1000
        print(f"JUDGE to result drawn (adjudicate + fsync'd log + frame), {len(lat)} runs: median {med:.1f} ms, "
              f"p95 {p95:.1f} ms, max {worst:.1f} ms (target <= 30) {'OK' if p95 <= 30 else 'OVER'}")

        for size in ((800, 480), (1920, 1080)):
            ft = frame_times(work, size, 30)
            worst_first = max(f for f, _ in ft.values()) * 1000
            worst_med = max(m for _, m in ft.values()) * 1000
            detail = ", ".join(f"{k} {m * 1000:.1f}" for k, (_, m) in ft.items())
            print(f"frame {size[0]}x{size[1]}: worst screen median {worst_med:.1f} ms, worst first frame "
                  f"(cold text cache) {worst_first:.1f} ms (target <= 10) "
                  f"{'OK' if worst_med <= 10 else 'OVER'} [{detail}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
