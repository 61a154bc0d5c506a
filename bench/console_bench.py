"""The director's console under a 200-table hall (issue 13): input-to-tile latency in a real browser,
the console's CPU and memory, and page load to the first full render.

A private Mosquitto (provisioned as a real hall), 200 simulated tables (the real clock core,
hall payloads, each table its own MQTT user) playing at human pace, and the console as its own
process (`rackside hall console`), watched by Debian's headless Chromium. Probe inputs go to a
random running table every 200 ms; the page marks each tile's change (a MutationObserver on the
tile's data-seq) and the bench pairs it with the moment the clock applied the input.

Baselines measured in the same run, on the same broker and machine:
- latency: a plain paho subscriber (the director's user) on the same state topics: what the
  broker alone costs, so the console's own share is the difference;
- page load: the login page from the same server (no data): what a page costs at all.

Targets: p99 input -> tile <= 1,100 ms; console CPU <= 10 % of a core; first full render <= 1 s.
The bound is from when the page drew once a second (issue 17.6), a change waiting up to a second
for its frame; since issue 28.4 a change is drawn at the first frame after the next tenth of a
second (app.js's CHANGE_SLOT_MS), and
bench/console_render.py holds press to tile to p99 <= 150 ms at 300 tables, with the renderer's cost.
`--check` exits 1 when a target is missed.

    .venv/bin/python bench/console_bench.py [--tables 200] [--seconds 60] [--check]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import paho.mqtt.client as mqtt  # noqa: E402

from _common import console_page, cpu_seconds, expose_app, guarded_run, pct, rss_mib, scratch, start_console  # noqa: E402

from rackside.game.clock import Phase, Rules  # noqa: E402
from rackside.hall.console.demohall.demo import Mosquitto  # noqa: E402
from rackside.hall.wire import topics  # noqa: E402
from rackside.hall.console.demohall.sim import SimHall, playing  # noqa: E402

TILE_P99_MS = 1100  # issue 13/17.6's bound (a second's frame, then delivery); issue 28.4's is console_render.py's
# (the page keeps only the tiles on screen in its DOM, issue 28.4: a probe of a table off screen is
# never seen, and only what the director can see is timed)
OBSERVER = """
window.__seen = [];
new MutationObserver((muts) => {
  const now = performance.timeOrigin + performance.now();
  for (const m of muts) {
    if (m.attributeName === 'data-seq' && m.oldValue !== m.target.dataset.seq) window.__seen.push([Number(m.target.dataset.table), Number(m.target.dataset.seq), now]);
  }
}).observe(document.getElementById('tiles'), {subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ['data-seq']});
"""


def main() -> int:
    return guarded_run("console bench", lambda procs, _fleets: run(procs))


def run(procs: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args()
    tables = list(range(1, args.tables + 1))
    tmp = scratch("rackside-console-bench-")
    broker = Mosquitto(tmp / "broker", tables)
    broker.start()
    procs.append(broker.proc)
    password = "bench-password"
    console, port = start_console(broker, tmp, "demo", password, procs, drain=False)
    url = f"http://127.0.0.1:{port}/"

    sim = SimHall("demo", "127.0.0.1", broker.port, {n: broker.devices[f"table-{n}"].login for n in tables},
                  tmp / "journals", rules=Rules())
    applied: dict[tuple[int, int], float] = {}  # (table, seq) -> wall time the clock applied the input
    original_input = sim._input

    def timed_input(t, event, *a, **k):
        applied[(t.n, t.seq + 1)] = time.time()  # each input takes the next seq; set before it is published
        original_input(t, event, *a, **k)

    sim._input = timed_input
    sim.connect(timeout=60)
    import random

    rng = random.Random(1)
    for n in tables:
        sim.script(n, playing(rng, rng.uniform(1, 15), until_s=args.seconds + 120, mean_turn_s=30))
    sim.start()

    probes: set[tuple[int, int]] = set()
    # baseline: a plain subscriber on the same state topics, as the director's user
    raw: dict[tuple[int, int], float] = {}  # first arrival only: the 10 s refresh repeats a seq
    sub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-raw")
    sub.username_pw_set("director", broker.devices["director"].password)

    def on_msg(c, u, msg):
        now = time.time()
        n = int(msg.topic.split("/")[4])
        seq = json.loads(msg.payload)["seq"]
        if (n, seq) in probes and (n, seq) in applied and (n, seq) not in raw:
            raw[(n, seq)] = (now - applied[(n, seq)]) * 1000

    sub.on_message = on_msg
    sub.on_connect = lambda c, *a: c.subscribe(topics.table("demo", "+", "state"), qos=1)
    sub.connect("127.0.0.1", broker.port)
    sub.loop_start()

    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = console_page(p, url, password)
        time.sleep(3)  # every table has connected and sent its first state

        # page load to first full render (every tile drawn), and the same server's login page
        loads, base_loads = [], []
        for _ in range(5):
            t0 = time.perf_counter()
            page.goto(url)
            page.wait_for_function("() => document.body.dataset.ready === '1'")
            expose_app(page)
            page.wait_for_function(f"() => app.tiles.size >= {len(tables)}")
            loads.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            page.goto(url + "login")
            page.wait_for_selector("#password")
            base_loads.append((time.perf_counter() - t0) * 1000)
        page.goto(url)
        page.wait_for_function("() => document.body.dataset.ready === '1'")
        expose_app(page)
        page.wait_for_function(f"() => app.tiles.size >= {len(tables)}")
        page.evaluate(OBSERVER)

        cpu0, t0 = cpu_seconds(console.pid), time.monotonic()
        b0 = cpu_seconds(broker.proc.pid)
        rss = []
        deadline = t0 + args.seconds
        while time.monotonic() < deadline:
            running = [t for t in sim.tables.values() if t.clock.phase is Phase.RUNNING and not t.offline]
            if running:
                t = rng.choice(running)
                probes.add((t.n, t.seq + 1))
                sim.act(t.n, ("turn",))
            rss.append(rss_mib(console.pid))
            time.sleep(0.2)
        cpu = (cpu_seconds(console.pid) - cpu0) / (time.monotonic() - t0) * 100
        bcpu = (cpu_seconds(broker.proc.pid) - b0) / (time.monotonic() - t0) * 100
        time.sleep(1)
        seen = page.evaluate("window.__seen")
        browser.close()
    sub.loop_stop()
    first: dict[tuple[int, int], float] = {}
    for n, seq, at in seen:
        if (n, seq) in probes and (n, seq) in applied and (n, seq) not in first:
            first[(n, seq)] = at - applied[(n, seq)] * 1000
    lat = list(first.values())
    raw = list(raw.values())
    sim.close()
    console.terminate()
    console.wait(10)
    broker.stop()

    inputs = len(applied)
    print(f"console bench: {len(tables)} tables, {args.seconds:.0f} s, {inputs} clock inputs in all, {len(probes)} probes")
    if not lat or not raw:
        print(f"no probe reached the page ({len(lat)}) or the plain subscriber ({len(raw)}): FAIL")
        return 1
    p50, p99 = statistics.median(lat), pct(lat, 99)
    r50, r99 = statistics.median(raw), pct(raw, 99)
    print(f"input -> tile in the browser: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(lat):.1f} ms (n={len(lat)}; "
          f"target p99 <= {TILE_P99_MS} ms: the page's frame once a second, then delivery)")
    print(f"baseline input -> plain MQTT subscriber: p50 {r50:.1f} ms, p99 {r99:.1f} ms (n={len(raw)}); "
          f"the console's share: p50 {p50 - r50:+.1f} ms, p99 {p99 - r99:+.1f} ms; ratio p99 {p99 / max(r99, 0.1):.1f}x")
    print(f"console CPU: {cpu:.1f} % of a core (target <= 10 %); broker CPU {bcpu:.1f} % (baseline, same traffic)")
    print(f"console memory: RSS {statistics.median(rss):.0f} MiB median, {max(rss):.0f} MiB max")
    l50 = statistics.median(loads)
    print(f"page load to first full render ({len(tables)} tiles): median {l50:.0f} ms, max {max(loads):.0f} ms (target <= 1000 ms); "
          f"baseline login page {statistics.median(base_loads):.0f} ms; ratio {l50 / max(statistics.median(base_loads), 1):.1f}x")
    ok = p99 <= TILE_P99_MS and cpu <= 10 and max(loads) <= 1000
    print("targets: " + ("met" if ok else "MISSED"))
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
