"""The director's console over a whole tournament day (issue 17.6): does it cost the same at hour ten
as at minute one?

A private Mosquitto (provisioned as a real hall), 300 simulated tables (the real clock core, each
its own MQTT user, spread over processes: hall/console/demohall/simfleet.py) playing back-to-back games at
tournament pace (25 minutes a side, a turn every 25 s on average, a break between rounds), the
console as its own process (`rackside hall console`), and Debian's headless Chromium showing the
console's page (1920x1080: about 100 of the 300 tiles on screen) the whole day. The day is
compressed: `--speed 30` plays every game 30 times faster (the clocks run compressed rules), so ten
hours take twenty minutes and each table sends thirty times the messages a second.

Sampled at every simulated hour: the console process's RSS, the page's renderer CPU (every renderer
process's CPU time, from Chromium's SystemInfo.getProcessInfo and /proc), its main thread's task
time (CDP Performance.getMetrics TaskDuration), its JS heap and DOM nodes.

Baselines from the same run: the console and the page idle (every table connected, no game
started yet), and the end of warm-up.

Targets: the console's RSS grows <= 5 MiB per simulated hour after warm-up (least-squares slope
over hours 3..N: by hour 3 every per-table bound has filled, a table's 400 history entries at about
130 inputs an hour; the slope over hours 1..N is printed too); the page's renderer < 5 % of a core with 300 tiles (at `--speed 1`,
tournament pace, every table's first game already under way; at higher speeds the figure is printed, the page then sees `speed` times the
traffic). `--check` exits 1 when a target is missed. `--console-from DIR` runs the console (and so
the page it serves) from another checkout: the broken build, an older commit.

    .venv/bin/python bench/console_soak.py [--tables 300] [--hours 10] [--speed 30] [--check]
    .venv/bin/python bench/console_soak.py --speed 1 --hours 0.05    # the page at tournament pace
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import console_page, cpu_seconds, guarded_run, rss_mib, scratch, start_console  # noqa: E402
from rackside.hall.console.demohall.demo import Mosquitto  # noqa: E402
from rackside.hall.console.demohall.sim import compressed_rules, tournament_day  # noqa: E402
from rackside.hall.console.demohall.simfleet import SimFleet  # noqa: E402

PASSWORD = "soak-password"


def renderer_cpu_seconds(pid: int) -> float:
    """A renderer's CPU time so far; 0 once it has ended (Chromium closes renderers as it likes)."""
    try:
        return cpu_seconds(pid)
    except OSError:
        return 0.0


class PageMeter:
    """The page's cost as Chromium sees it: renderer processes' CPU time, the main thread's task
    time, the JS heap and the DOM's node count."""

    def __init__(self, browser, page) -> None:
        self.browser_cdp = browser.new_browser_cdp_session()
        self.page_cdp = page.context.new_cdp_session(page)
        self.page_cdp.send("Performance.enable")
        self.last = self._read()

    def _renderers(self) -> list[int]:
        info = self.browser_cdp.send("SystemInfo.getProcessInfo")["processInfo"]
        return [p["id"] for p in info if p["type"] == "renderer"]

    def _read(self) -> dict:
        m = {x["name"]: x["value"] for x in self.page_cdp.send("Performance.getMetrics")["metrics"]}
        return {"at": time.monotonic(), "cpu": sum(renderer_cpu_seconds(pid) for pid in self._renderers()),
                "task": m.get("TaskDuration", 0.0), "heap": m.get("JSHeapUsedSize", 0) / 2**20, "nodes": m.get("Nodes", 0)}

    def sample(self) -> dict:
        """Since the last sample: renderer CPU and main-thread task time as % of a core; now: heap, nodes."""
        now = self._read()
        span = max(now["at"] - self.last["at"], 1e-6)
        out = {"cpu": (now["cpu"] - self.last["cpu"]) / span * 100, "task": (now["task"] - self.last["task"]) / span * 100,
               "heap": now["heap"], "nodes": now["nodes"]}
        self.last = now
        return out


def main() -> int:
    return guarded_run("console soak", run)


def run(procs: list, fleet_box: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=300)
    ap.add_argument("--hours", type=float, default=10, help="simulated hours of play")
    ap.add_argument("--speed", type=float, default=30, help="how many times faster than real the day is played")
    ap.add_argument("--warmup-hours", type=float, default=3,
                    help="simulated hours for every per-table bound to fill (a table's 400 history entries: 3 h at 130 inputs an hour)")
    ap.add_argument("--idle-seconds", type=float, default=20, help="the idle baseline's length")
    ap.add_argument("--console-from", type=Path, help="run `rackside hall console` (and so its page) from this checkout")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args()
    hour_s = 3600 / args.speed
    tables = list(range(1, args.tables + 1))
    tmp = scratch("rackside-console-soak-")
    broker = Mosquitto(tmp / "broker", tables)
    broker.start()
    procs.append(broker.proc)
    console, port = start_console(broker, tmp, "demo", PASSWORD, procs, cwd=args.console_from)
    url = f"http://127.0.0.1:{port}/"

    rules = compressed_rules(args.speed)
    fleet = SimFleet("demo", "127.0.0.1", broker.port, {n: broker.devices[f"table-{n}"].login for n in tables},
                     tmp / "journals", rules=rules)
    fleet_box.append(fleet)
    fleet.connect(timeout=120)
    rng = random.Random(17)

    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser, page = console_page(p, url, PASSWORD)
        page.wait_for_function(f"() => app.tiles.size >= {len(tables)}", timeout=60_000)
        meter = PageMeter(browser, page)
        c0, t0 = cpu_seconds(console.pid), time.monotonic()
        time.sleep(args.idle_seconds)
        idle = {"hour": "idle", "inputs": fleet.inputs, "rss": rss_mib(console.pid), **meter.sample(),
                "console_cpu": (cpu_seconds(console.pid) - c0) / (time.monotonic() - t0) * 100}
        rows.append(idle)
        print_row(idle, header=True)

        for n in tables:
            fleet.script(n, tournament_day(rng, hours=args.hours, speed=args.speed, in_progress=args.speed == 1))
        fleet.start()
        start = time.monotonic()
        hours = max(1, int(round(args.hours))) if args.hours >= 1 else 1
        span = hour_s if args.hours >= 1 else args.hours * 3600 / args.speed
        for h in range(1, hours + 1):
            c0, t0 = cpu_seconds(console.pid), time.monotonic()
            time.sleep(max(0.0, start + h * span - time.monotonic()))
            row = {"hour": h, "inputs": fleet.inputs, "rss": rss_mib(console.pid), **meter.sample(),
                   "console_cpu": (cpu_seconds(console.pid) - c0) / (time.monotonic() - t0) * 100}
            rows.append(row)
            print_row(row)
            if console.poll() is not None:
                raise RuntimeError(f"the console exited with {console.returncode}")
        errors = page.evaluate("document.querySelectorAll('.tile[data-problem]').length")
        browser.close()

    played = [r for r in rows if r["hour"] != "idle"]
    print(f"console soak: {len(tables)} tables, {args.hours:g} simulated hours at {args.speed:g}x "
          f"({args.hours * hour_s / 60:.1f} min), {played[-1]['inputs']} clock inputs; tiles showing a problem at the end: {errors}")
    ok = True
    warm = [r for r in played if r["hour"] >= args.warmup_hours]
    if len(warm) >= 3:
        xs = [r["hour"] for r in warm]
        slope = statistics.linear_regression(xs, [r["rss"] for r in warm]).slope
        whole = statistics.linear_regression([r["hour"] for r in played], [r["rss"] for r in played]).slope
        per_hour = (played[-1]["inputs"] - played[0]["inputs"]) / max(1, len(played) - 1)
        kib_per_input = slope * 1024 / per_hour if per_hour else 0.0
        grow_ok = slope <= 5
        ok &= grow_ok
        print(f"console RSS growth after warm-up (hours {xs[0]}-{xs[-1]}): {slope:+.2f} MiB per simulated hour "
              f"({kib_per_input:.2f} KiB per clock input; target <= 5 MiB/h): {'PASS' if grow_ok else 'FAIL'}; "
              f"over hours 1-{played[-1]['hour']}: {whole:+.2f} MiB/h")
        print(f"  baseline: idle console {idle['rss']:.1f} MiB, end of hour 1 {played[0]['rss']:.1f} MiB, "
              f"end of hour {xs[0]} {warm[0]['rss']:.1f} MiB, end of hour {xs[-1]} {played[-1]['rss']:.1f} MiB "
              f"({played[-1]['rss'] / idle['rss']:.2f}x idle)")
        heap = statistics.linear_regression(xs, [r["heap"] for r in warm]).slope
        nodes = statistics.linear_regression(xs, [r["nodes"] for r in warm]).slope
        print(f"page growth after warm-up: JS heap {heap:+.2f} MiB/h, DOM {nodes:+.0f} nodes/h "
              f"(end: {played[-1]['heap']:.1f} MiB, {played[-1]['nodes']:.0f} nodes)")
    cpu = statistics.mean(r["cpu"] for r in played)
    task = statistics.mean(r["task"] for r in played)
    ccpu = statistics.mean(r["console_cpu"] for r in played)
    page_ok = cpu < 5 or args.speed != 1
    ok &= page_ok
    print(f"page renderer with {len(tables)} tiles: {cpu:.1f} % of a core (main thread tasks {task:.1f} %), "
          f"baseline the same page idle {idle['cpu']:.1f} % ({idle['task']:.1f} %); at {args.speed:g}x tournament pace"
          + (f" (target < 5 % at 1x): {'PASS' if page_ok else 'FAIL'}" if args.speed == 1 else " (the target is judged at --speed 1)"))
    print(f"console CPU: {ccpu:.1f} % of a core while playing, {idle['console_cpu']:.1f} % idle")
    print("targets: " + ("met" if ok else "MISSED"))
    return 0 if ok or not args.check else 1


def print_row(r: dict, header: bool = False) -> None:
    if header:
        print(f"{'hour':>5} {'inputs':>8} {'console RSS':>12} {'console CPU':>12} {'renderer':>9} {'main thread':>12} {'JS heap':>8} {'DOM nodes':>10}", flush=True)
    print(f"{r['hour']:>5} {r['inputs']:>8} {r['rss']:>9.1f} MiB {r['console_cpu']:>10.1f} % {r['cpu']:>7.1f} % {r['task']:>10.1f} % "
          f"{r['heap']:>5.1f} MiB {r['nodes']:>10.0f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
