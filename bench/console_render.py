"""The director's page at 300 tables (issue 28.4): a press to its tile, the ticking times and what the
page's renderer costs, measured together in one run against the page before.

A private Mosquitto (provisioned as a real hall), 300 simulated tables (the real clock core, each its
own MQTT user, spread over processes: hall/console/demohall/simfleet.py) playing at tournament pace (25 minutes
a side, a turn every 25 s on average, every table's game already under way), the console as its own
process (`rackside hall console`), and Debian's headless Chromium showing its page at 1920x1080 (about
100 of the 300 tiles on screen). The same hall is shown in turns by two pages, each in a browser of
its own: the page as it is, and the page before (the console's own page with `index.html`, its scripts and `style.css` as of `--base`,
served in its place by the browser: same console, same hall, same minutes), in the order A B B A ...
so that the machine's load falls on both alike. A last turn shows the page as it is with its tiles
hidden: what the event stream alone costs the renderer (every message read, nothing drawn).

For each turn, after a warm-up:
- press to tile: for every clock input of a table whose tile is on screen, from the press (the
  state's `sent_at`, the simulated clock's wall time of the input) to the tile's DOM showing its seq
  (a MutationObserver on `data-seq`), split into delivery (press to the page's event, through the
  broker, the console and the event stream) and the page's own wait (event to DOM);
- the ticking times: each on-screen tile's running time, every change with no input between: the
  interval between two changes and the step it showed (a second, or a skipped/repeated one);
- the page's renderer: its processes' CPU time (Chromium's SystemInfo.getProcessInfo and /proc), as
  % of a core, in a turn of its own right after, in a browser with nothing attached to the page
  (bench/_cdp.py: no Playwright, whose session has the renderer record every event-stream message
  for DevTools, and no observer): what a director's own browser pays. The same figure with the
  bench's instruments attached (Playwright, the observer, CDP Performance.getMetrics' main thread
  task time) is printed beside it.

Targets (issue 28.4): press to tile p99 <= 150 ms and the renderer <= 5 % of a core, both in the
same run, each page's two turns back to back. `--check` exits 1 when a target is missed.

    .venv/bin/python bench/console_render.py [--tables 300] [--seconds 60] [--rounds 2] [--base REV] [--check]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _cdp import BareChromium, console_login  # noqa: E402
from _common import CHROMIUM, CHROMIUM_ARGS, expose_app, guarded_run, pct, scratch, start_console  # noqa: E402
from console_soak import PageMeter  # noqa: E402
from rackside.hall.console.demohall.demo import Mosquitto  # noqa: E402
from rackside.hall.console.demohall.sim import MEAN_TURN_S, tournament_day  # noqa: E402
from rackside.hall.console.demohall.simfleet import SimFleet  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "render-password"
TILE_P99_MS = 150  # issue 28.4
RENDERER_PCT = 5.0  # issue 28.4: the page's renderer, % of a core
BEFORE = "b126a26"  # the last commit whose page drew once a second (FRAME_MS), before issue 28.4's renderer

# Works on either page: the page as it is has its scripts' exports as `window.app` (modules:
# bench/_common.expose_app), the page before keeps `tables`, `visible` and `updateTable` as globals.
# A state's first arrival with a new seq is noted with whether its tile was on screen then; the
# tile's data-seq showing it closes the sample. Each running time's change is noted with the tile's seq then.
INSTRUMENT = """() => {
  const clock = () => performance.timeOrigin + performance.now();
  const arrived = new Map();  // table -> [seq, sent_at, arrived, on screen]
  window.__lat = []; window.__ticks = [];
  const page = window.app || { tables, visible };
  const seq = new Map([...page.tables].map(([n, t]) => [n, t.state && t.state.seq]));
  const note = (raw) => {
    try {
      const n = raw && raw.table, st = raw && raw.state;
      if (typeof n === 'number' && st && typeof st.seq === 'number' && seq.get(n) !== st.seq) {
        seq.set(n, st.seq);
        arrived.set(n, [st.seq, Date.parse(st.sent_at), clock(), page.visible.has(n)]);
      }
    } catch (e) {}
  };
  if (window.app) {
    // each table state from the hall's stream, heard after the page's own handler (in the same
    // turn: before any frame)
    app.stream.source.addEventListener('table', (e) => note(JSON.parse(e.data)));
  } else {
    const read = updateTable;
    window.updateTable = (raw, drawNow) => { note(raw); return read(raw, drawNow); };
  }
  new MutationObserver((muts) => {
    const now = clock();
    for (const m of muts) {
      const el = m.target.nodeType === 1 ? m.target : m.target.parentNode;
      if (m.type === 'attributes') {
        const n = Number(el.dataset.table), a = arrived.get(n);
        if (a && a[0] === Number(el.dataset.seq)) { arrived.delete(n); if (a[3] && page.visible.has(n)) __lat.push([a[1], a[2], now]); }
      } else if (el.classList && el.classList.contains('time') && el.closest('.side.turn')) {
        const tile = el.closest('.tile');
        if (page.visible.has(Number(tile.dataset.table))) __ticks.push([Number(tile.dataset.table), tile.dataset.seq, now, el.textContent]);
      }
    }
  }).observe(document.getElementById('tiles'), {subtree: true, attributes: true, attributeFilter: ['data-seq'], childList: true, characterData: true});
}"""


def main() -> int:
    return guarded_run("console render bench", run)


def page_before(base: str) -> dict[str, tuple[str, str]]:
    """The page as of `base`, served by the browser in place of the console's own: its index.html (at
    the console's "/"), the scripts it loads and its style.css. {path: (body, content type)}"""
    def show(name: str) -> str:
        return subprocess.run(["git", "show", f"{base}:hall/console/static/{name}"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout

    html = show("index.html")
    files = {"/": (html, "text/html; charset=utf-8"), "/static/style.css": (show("style.css"), "text/css")}
    for name in re.findall(r'<script[^>]*src="/static/([\w.-]+)"', html):
        files[f"/static/{name}"] = (show(name), "text/javascript")
    return files


def seconds_of(text: str) -> int | None:
    """'-1:05' -> -65, '12:00' -> 720: what a tile's time shows, in whole seconds."""
    sign = -1 if text.startswith("-") else 1
    m, _, s = text.lstrip("-").partition(":")
    return sign * (int(m) * 60 + int(s)) if m.isdigit() and s.isdigit() else None


def ticking(ticks: list) -> tuple[list[float], int, int]:
    """The intervals (ms) between a tile's successive time changes with no input between, and how
    many of those steps showed other than one second (a second skipped or shown twice), of all."""
    last: dict[int, tuple] = {}
    intervals, uneven, steps = [], 0, 0
    for n, seq, at, text in ticks:
        s = seconds_of(text)
        prev = last.get(n)
        last[n] = (seq, at, s)
        if prev is None or prev[0] != seq or s is None or prev[2] is None:
            continue
        steps += 1
        intervals.append(at - prev[1])
        if prev[2] - s != 1:
            uneven += 1
    return intervals, uneven, steps


def one_turn(p, url: str, n_tables: int, old: dict[str, tuple[str, str]] | None, warmup_s: float, seconds: float) -> dict:
    """A page's press to tile and ticking times, with the bench's instruments attached."""
    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        for path, (body, ctype) in (old or {}).items():
            def serve(route, _request, body=body, ctype=ctype) -> None:  # (Playwright passes the route and its request)
                route.fulfill(status=200, body=body, content_type=ctype, headers={"Cache-Control": "no-cache"})
            page.route("**" + path, serve)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "login")
        page.fill("#password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_selector("body[data-ready='1']")
        expose_app(page)
        page.wait_for_function("n => (window.app || { tiles }).tiles.size >= n", arg=n_tables, timeout=60_000)  # (only those on screen are in the DOM)
        time.sleep(warmup_s)
        page.evaluate(INSTRUMENT)
        meter = PageMeter(browser, page)
        metrics0 = page_metrics(meter)
        time.sleep(seconds)
        cost = meter.sample()
        metrics = {k: v - metrics0.get(k, 0) for k, v in page_metrics(meter).items()}
        lat, ticks = page.evaluate("[window.__lat, window.__ticks]")
        on_screen = page.evaluate("(window.app || { visible }).visible.size")
    finally:
        browser.close()
    total = [done - sent for sent, _, done in lat]
    delivery = [arrived - sent for sent, arrived, _ in lat]
    wait = [done - arrived for _, arrived, done in lat]
    intervals, uneven, steps = ticking(ticks)
    return {"cpu": cost["cpu"], "task": cost["task"], "total": total, "delivery": delivery, "wait": wait,
            "intervals": intervals, "uneven": uneven, "steps": steps, "on_screen": on_screen, "errors": errors,
            "metrics": {k: v / seconds for k, v in metrics.items()}}


def bare_turn(url: str, n_tables: int, old: dict[str, tuple[str, str]] | None, warmup_s: float, seconds: float, floor: bool = False) -> float:
    """The page's renderer CPU (% of a core) in a browser with nothing attached to the page."""
    chromium = BareChromium(CHROMIUM, CHROMIUM_ARGS)
    try:
        s = console_login(chromium, url, PASSWORD, old)
        chromium.wait_for(s, f"(window.app || {{ tiles }}).tiles.size >= {n_tables}")
        if floor:
            # the stream alone: every message read, no tile on screen to draw (the page's CSP refuses a style tag)
            chromium.evaluate(s, "document.getElementById('tiles').style.display = 'none'; true")
        time.sleep(warmup_s)
        assert chromium.evaluate(s, "document.visibilityState") == "visible"  # (a hidden page draws no frames)
        return chromium.renderer_cpu(seconds)
    finally:
        chromium.close()


WORK = ("ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "RecalcStyleCount", "LayoutCount")


def page_metrics(meter: PageMeter) -> dict:
    """The main thread's script, style and layout time so far (s) and how many style and layout passes."""
    m = {x["name"]: x["value"] for x in meter.page_cdp.send("Performance.getMetrics")["metrics"]}
    return {k: m.get(k, 0.0) for k in WORK}


def run(procs: list, fleet_box: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=60, help="each turn's measured span")
    ap.add_argument("--warmup", type=float, default=8, help="seconds after a page's load before its turn is measured")
    ap.add_argument("--rounds", type=int, default=2, help="turns of each page (in the order A B B A ...)")
    ap.add_argument("--base", default=BEFORE, help=f"the git revision whose static/index.html, its scripts and style.css are the page before (default {BEFORE})")
    ap.add_argument("--turn-s", type=float, default=MEAN_TURN_S, help=f"a table's mean time between presses, seconds (default {MEAN_TURN_S:g}: "
                    "the issue's five presses a second on screen; a real hall's is about 80, docs/performance.md)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args()
    old = page_before(args.base)
    tables = list(range(1, args.tables + 1))
    tmp = scratch("rackside-console-render-")
    broker = Mosquitto(tmp / "broker", tables)
    broker.start()
    procs.append(broker.proc)
    _, port = start_console(broker, tmp, "demo", PASSWORD, procs)
    url = f"http://127.0.0.1:{port}/"
    fleet = SimFleet("demo", "127.0.0.1", broker.port, {n: broker.devices[f"table-{n}"].login for n in tables},
                     tmp / "journals")
    fleet_box.append(fleet)
    fleet.connect(timeout=120)
    rng = random.Random(28)
    # every turn's span at tournament pace: 4 turns a round (each page's two) and the floor's, the
    # next game started 30 s after one ends (a game in progress ends within 510-2,600 s)
    hours = (args.seconds + args.warmup + 30) * (4 * args.rounds + 1) / 3600 + 0.1
    for n in tables:
        fleet.script(n, tournament_day(rng, hours=hours, speed=1, in_progress=True, break_s=30, mean_turn_s=args.turn_s))
    fleet.start()

    from playwright.sync_api import sync_playwright

    results: dict[str, list[dict]] = {"now": [], "before": [], "floor": []}
    order = [v for r in range(args.rounds) for v in (("now", "before") if r % 2 == 0 else ("before", "now"))] + ["floor"]
    inputs0 = fleet.inputs
    t0 = time.monotonic()
    with sync_playwright() as p:
        for which in order:
            before = old if which == "before" else None
            inputs_before, turn_t0 = fleet.inputs, time.monotonic()
            r = {"cpu": None} if which == "floor" else one_turn(p, url, len(tables), before, args.warmup, args.seconds)
            r["instrumented"] = r["cpu"]
            r["cpu"] = bare_turn(url, len(tables), before, args.warmup, args.seconds, floor=which == "floor")
            results[which].append(r)
            r["rate"] = (fleet.inputs - inputs_before) / (time.monotonic() - turn_t0)
            if which == "floor":
                print(f"  turn: floor  renderer {r['cpu']:.1f} % (the event stream alone, nothing drawn)", flush=True)
                continue
            print(f"  turn: {which:6} renderer {r['cpu']:.1f} % (instrumented {r['instrumented']:.1f} %, main thread {r['task']:.1f} %), press to tile "
                  f"p50 {statistics.median(r['total']) if r['total'] else float('nan'):.0f} ms p99 "
                  f"{pct(r['total'], 99) if r['total'] else float('nan'):.0f} ms (n={len(r['total'])}), "
                  f"{r['on_screen']} tiles on screen, {r['rate']:.1f} clock inputs a second, page errors {len(r['errors'])}", flush=True)
            m = r["metrics"]
            print(f"        a second: script {m['ScriptDuration'] * 1000:.1f} ms, style {m['RecalcStyleDuration'] * 1000:.1f} ms "
                  f"({m['RecalcStyleCount']:.1f} passes), layout {m['LayoutDuration'] * 1000:.1f} ms ({m['LayoutCount']:.1f} passes)", flush=True)
    rate = (fleet.inputs - inputs0) / (time.monotonic() - t0)
    print(f"console render bench: {len(tables)} tables, a press every {args.turn_s:g} s a table on average ({rate:.1f} clock inputs a second), 1920x1080, "
          f"{args.rounds} turns of {args.seconds:g} s per page; the page before: index.html, its scripts and style.css of {args.base}")
    ok = True
    floor = results["floor"][0]
    print(f"baseline, the event stream alone (the page as it is, no tile shown): renderer {floor['cpu']:.1f} % of a core; "
          f"what drawing costs on top: the page "
          f"{statistics.mean(r['cpu'] for r in results['now']) - floor['cpu']:+.1f} %, the page before "
          f"{statistics.mean(r['cpu'] for r in results['before']) - floor['cpu']:+.1f} %")
    for which in ("now", "before"):
        rs = results[which]
        total = [x for r in rs for x in r["total"]]
        delivery = [x for r in rs for x in r["delivery"]]
        wait = [x for r in rs for x in r["wait"]]
        intervals = [x for r in rs for x in r["intervals"]]
        uneven, steps = sum(r["uneven"] for r in rs), sum(r["steps"] for r in rs)
        cpu = statistics.mean(r["cpu"] for r in rs)
        instrumented = statistics.mean(r["instrumented"] for r in rs)
        task = statistics.mean(r["task"] for r in rs)
        name = "the page" if which == "now" else "baseline, the page before"
        if not total:
            print(f"{name}: no press reached an on-screen tile: FAIL")
            ok = False
            continue
        p99 = pct(total, 99)
        print(f"{name}: press to tile p50 {statistics.median(total):.1f} ms, p99 {p99:.1f} ms, max {max(total):.0f} ms "
              f"(n={len(total)}); delivery p50 {statistics.median(delivery):.1f} / p99 {pct(delivery, 99):.1f} ms, "
              f"the page's wait p50 {statistics.median(wait):.1f} / p99 {pct(wait, 99):.1f} ms")
        if intervals:
            print(f"  {name}: times ticked every p1 {pct(intervals, 1):.0f} / p50 {statistics.median(intervals):.0f} / "
                  f"p99 {pct(intervals, 99):.0f} ms; {uneven} of {steps} steps not one second")
        turns = ", ".join(f"{r['cpu']:.1f}" for r in rs)
        print(f"  {name}: renderer {cpu:.1f} % of a core (per turn: {turns}); with the bench's instruments attached "
              f"{instrumented:.1f} % (main thread tasks {task:.1f} %)")
        if which == "now":
            lat_ok, cpu_ok = p99 <= TILE_P99_MS, cpu <= RENDERER_PCT
            ok &= lat_ok and cpu_ok
            print(f"  targets: press to tile p99 <= {TILE_P99_MS} ms: {'PASS' if lat_ok else 'FAIL'}; "
                  f"renderer <= {RENDERER_PCT:g} % of a core: {'PASS' if cpu_ok else 'FAIL'}")
        errors = [e for r in rs for e in r["errors"]]
        if errors:
            print(f"  {name}: page errors: {errors[:3]}")
    print("targets: " + ("met" if ok else "MISSED"))
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
