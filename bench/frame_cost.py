"""What a frame costs this machine's headless Chromium, apart from the console's page (issue 28.4).

The director's page's renderer target (<= 5 % of a core at 300 tables, bench/console_render.py) is
spent on frames: one a second for the ~100 running times, and one for each press on screen (about
4.5 a second). This bench measures, in one run and in a browser with nothing attached (bench/_cdp.py),
the renderer's CPU (% of a core, its processes' /proc times) for:

- an empty page, and a page that changes one word five times a second: the browser's own cost of a
  frame, whatever the page;
- the console's page at 300 tables with its event stream and its drawing stopped, then driven by
  the bench: (a) nothing; (b) five frames a second, each changing one tile's time (the presses);
  (c) one frame a second changing every on-screen tile's running time (the tick).

Each case is measured in turns (A B C ... then backwards), and the figures are printed with the
cost of one frame worked out from them. Nothing here is a target: it says what part of the page's
figure a page cannot save, on this machine.

    .venv/bin/python bench/frame_cost.py [--seconds 20] [--rounds 2]
"""

from __future__ import annotations

import argparse
import http.server
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _cdp import BareChromium, console_login  # noqa: E402
from _common import CHROMIUM, CHROMIUM_ARGS, guarded_run, scratch, start_console  # noqa: E402
from rackside.hall.console.demohall.demo import Mosquitto  # noqa: E402
from rackside.hall.console.demohall.sim import tournament_day  # noqa: E402
from rackside.hall.console.demohall.simfleet import SimFleet  # noqa: E402

PASSWORD = "frame-password"
WORD = "<!doctype html><body style='background:#101418;color:#eee;font:15px sans-serif'><span id=t>9:59</span>{}</body>"
CHANGE = ("<script>setInterval(() => requestAnimationFrame(() => { const t = document.getElementById('t');"
          " t.textContent = t.textContent === '9:59' ? '9:58' : '9:59'; }), 200);</script>")
# the console's page, its stream closed and its own drawing stopped: its frames are asked for with
# the window's requestAnimationFrame, which now asks for none (the bench's drive keeps the browser's
# own, window.__raf); the page's scripts are modules, app.js's exports as window.app (bench/_cdp.py)
STOP = ("app.stream.source.close(); window.__raf = window.requestAnimationFrame.bind(window);"
        " window.requestAnimationFrame = () => 0; true")
PRESSES = """(() => { const ds = [...app.visible].slice(0, 60).map((n) => app.tiles.get(n)); let i = 0;
  setInterval(() => __raf(() => { const t = ds[i++ % ds.length].parts.rows[0].time;
    t.textContent = t.textContent === '9:59' ? '9:58' : '9:59'; }), 200); return true; })()"""
TICK = """(() => { const ds = [...app.visible].map((n) => app.tiles.get(n));
  setInterval(() => __raf(() => { for (const d of ds) { const t = d.parts.rows[1].time;
    t.textContent = t.textContent === '8:59' ? '8:58' : '8:59'; } }), 1000); return ds.length; })()"""


def main() -> int:
    return guarded_run("frame cost bench", run)


def measure(chromium: BareChromium, warmup_s: float, seconds: float) -> float:
    time.sleep(warmup_s)
    return chromium.renderer_cpu(seconds)


def run(procs: list, fleet_box: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tables", type=int, default=300)
    args = ap.parse_args()

    pages = {"/empty.html": WORD.format(""), "/word.html": WORD.format(CHANGE)}

    class Static(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = pages.get(self.path, "").encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a) -> None:  # no line a request on the bench's output
            pass

    static = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Static)
    threading.Thread(target=static.serve_forever, daemon=True).start()
    static_url = f"http://127.0.0.1:{static.server_port}"

    tables = list(range(1, args.tables + 1))
    tmp = scratch("rackside-frame-cost-")
    broker = Mosquitto(tmp / "broker", tables)
    broker.start()
    procs.append(broker.proc)
    _, port = start_console(broker, tmp, "demo", PASSWORD, procs, quiet=True)
    url = f"http://127.0.0.1:{port}/"
    fleet = SimFleet("demo", "127.0.0.1", broker.port, {n: broker.devices[f"table-{n}"].login for n in tables}, tmp / "journals")
    fleet_box.append(fleet)
    fleet.connect(timeout=120)
    rng = random.Random(28)
    hours = (args.seconds + 15) * args.rounds * 5 / 3600 + 0.1
    for n in tables:
        fleet.script(n, tournament_day(rng, hours=hours, speed=1, in_progress=True))
    fleet.start()

    def plain(path: str) -> float:
        chromium = BareChromium(CHROMIUM, CHROMIUM_ARGS)
        try:
            s = chromium.page(static_url + path)
            chromium.wait_for(s, "document.readyState === 'complete'")
            return measure(chromium, 3, args.seconds)
        finally:
            chromium.close()

    def console(drive: str | None) -> float:
        chromium = BareChromium(CHROMIUM, CHROMIUM_ARGS)
        try:
            s = console_login(chromium, url, PASSWORD)
            chromium.wait_for(s, f"app.tiles.size >= {len(tables)}")
            time.sleep(3)
            chromium.evaluate(s, STOP)
            if drive:
                chromium.evaluate(s, drive)
            return measure(chromium, 3, args.seconds)
        finally:
            chromium.close()

    cases = {"empty page": lambda: plain("/empty.html"), "a word changed 5/s": lambda: plain("/word.html"),
             "console, stopped": lambda: console(None), "console, 5 one-tile frames/s": lambda: console(PRESSES),
             "console, the tick 1/s": lambda: console(TICK)}
    got: dict[str, list[float]] = {k: [] for k in cases}
    for r in range(args.rounds):
        for name in (list(cases) if r % 2 == 0 else list(cases)[::-1]):
            got[name].append(cases[name]())
            print(f"  {name:30} {got[name][-1]:.2f} % of a core", flush=True)
    mean = {k: statistics.mean(v) for k, v in got.items()}
    print(f"frame cost bench: headless Chromium ({' '.join(CHROMIUM_ARGS)}), 1920x1080 (the console's {args.tables} tables), "
          f"{args.rounds} turns of {args.seconds:g} s each; renderer CPU, % of a core:")
    for k, v in got.items():
        print(f"  {k:30} {mean[k]:.2f} %  (turns: {', '.join(f'{x:.2f}' for x in v)})")
    word = (mean["a word changed 5/s"] - mean["empty page"]) / 5 * 10  # % of a core per frame a second -> ms a frame
    press = (mean["console, 5 one-tile frames/s"] - mean["console, stopped"]) / 5 * 10
    tick = (mean["console, the tick 1/s"] - mean["console, stopped"]) * 10
    print(f"one frame: {word:.1f} ms of renderer CPU for a word on an empty page; {press:.1f} ms for one tile's time on "
          f"the console's page; {tick:.1f} ms for the tick's frame (every running time on screen)")
    static.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
