"""The public hall under a crowd of viewers (issue 28, "Done when"): does the director still see a
press at once, and what does the hall's own machine pay, with 0, 1,000 and 10,000 phones polling?

One run: a private Mosquitto (provisioned as a real hall), `--tables` simulated tables (the real
clock core, each its own MQTT user) playing at tournament pace, the console as its own process
(`rackside hall console`) with a `[public]` listener and folder (and its live tourney.js in the same
folder), and Debian's headless Chromium showing the director's page (1920x1080) and, in a second
browser, the public page's live tables. Probe presses go to a random running table every 200 ms,
published as a clock publishes them (hall/console/demohall/sim.py); the director's page marks each tile's
change (console_bench.py's MutationObserver) and the bench pairs it with the moment the clock
applied the press.

Viewers are cheap asyncio HTTP/1.1 clients in worker processes of their own, each polling as the
public page does (static/public.js): `hall.json` every 5 s with `If-None-Match` (a 304 when nothing
changed), then each document whose version hall.json names anew, conditionally too. They are spread
over the poll period and over many loopback addresses (the listener lets 32 connections in from one
address: limits.PUBLIC). Phases, each measured for `--seconds`:

- `none`: no viewer (this run's baseline);
- `listener N`: N viewers on the console's own public listener, for each N of `--viewers` up to what
  it serves (limits.PUBLIC.connections open connections; a viewer holds one);
- `published N`: N viewers on a real static server of the published folder (Debian's nginx, its
  own ETags and 304s; `--static python`: Python's http.server, Last-Modified and 304s, one thread a
  connection): the console only writes the files, so its cost must stay flat.

Figures per phase: the console's CPU (% of a core, /proc of the real process) and RSS, the director's
press -> tile p50/p99, the director's and the public page's renderer CPU (every renderer process of
each browser, Chromium's SystemInfo and /proc), the viewers' requests answered (200s, 304s,
failures) and their p50/p99, the static server's CPU. Then the public page's frames: for each
live.json the page receives, the cards it changes, how many frames began between the response's end
and the change (the next frame: at most one, the frame whose callbacks draw it) and the delay.

Targets (`--check` exits 1 when one is missed): every viewer request answered; through the
published route the console's CPU within 1.5x and +2 % of a core of the baseline (flat); the
public page's renderer <= 5 % of a core with the tables live, and every changed card drawn at the
next frame. The director's press -> tile p99 (item 4's 150 ms, bench/console_bench.py) is printed
with its ratio to the baseline.

    .venv/bin/python bench/public_viewers.py [--tables 300] [--seconds 60] [--viewers 1000,10000] [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import CHROMIUM, CHROMIUM_ARGS, console_page, cpu_seconds, guarded_run, pct, rss_mib, scratch, start_console  # noqa: E402
from console_bench import OBSERVER  # noqa: E402 (the director's tile probe: one definition)
from console_soak import PageMeter  # noqa: E402 (a browser's renderer CPU)

from rackside.game.clock import Phase, Rules  # noqa: E402
from rackside.hall.console.common import limits  # noqa: E402
from rackside.hall.console.demohall.demo import Mosquitto, demo_t_file, free_port  # noqa: E402
from rackside.hall.console.publichall.public import POLL_S  # noqa: E402
from rackside.hall.console.demohall.sim import SimHall, playing  # noqa: E402

PASSWORD = "viewers-password"
FLAT_RATIO, FLAT_PLUS = 1.5, 2.0  # "flat": the console's CPU within 1.5x and +2 % of a core of the baseline
PAGE_CPU_MAX = 5.0  # % of a core: the public page's renderer (issue 28 item 4)
SOURCES = [f"127.0.{a}.{b}" for a in (1, 2) for b in range(1, 251)]  # 500 loopback addresses for the viewers
# The public page's frames: when each live.json arrived (the network's own timing), every frame
# begun (requestAnimationFrame, re-armed each frame), and each card's change of the state it shows.
FRAMES = """
performance.setResourceTimingBufferSize(100000);
window.__frames = [];
const frame = () => { window.__frames.push(performance.now()); requestAnimationFrame(frame); };
requestAnimationFrame(frame);
window.__parsed = [];
const json = Response.prototype.json;
Response.prototype.json = function () {
  const url = this.url;
  return json.call(this).then((v) => { if (url.endsWith('/live.json')) window.__parsed.push(performance.now()); return v; });
};
window.__cards = [];
new MutationObserver((muts) => {
  const now = performance.now();
  for (const m of muts) if (m.oldValue !== m.target.dataset.sent) window.__cards.push([m.target.dataset.table, now]);
}).observe(document.getElementById('live'), {subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ['data-sent']});
"""


# --- the viewers: a worker process ---------------------------------------------------------------


class Viewer:
    """One phone: a kept-alive HTTP/1.1 connection (opened again when the server closed it), polling
    as static/public.js does."""

    def __init__(self, crowd: "Crowd", source: str) -> None:
        self.crowd = crowd
        self.source = source
        self.reader = self.writer = None
        self.etags: dict[str, str] = {}  # file -> the server's ETag (or Last-Modified) for If-None-Match
        self.versions: dict[str, str] = {}  # file -> the version hall.json named when it was fetched

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def _once(self, name: str) -> tuple[int, dict, bytes]:
        if self.writer is None or self.reader.at_eof():
            self.close()
            self.reader, self.writer = await asyncio.open_connection(self.crowd.host, self.crowd.port, local_addr=(self.source, 0))
        tag = self.etags.get(name)
        cond = (f"If-None-Match: {tag}\r\n" if tag.startswith(('"', 'W/')) else f"If-Modified-Since: {tag}\r\n") if tag else ""
        self.writer.write(f"GET /{name} HTTP/1.1\r\nHost: hall\r\n{cond}\r\n".encode())
        line = await self.reader.readline()
        if not line:
            raise ConnectionError("closed")
        status = int(line.split()[1])
        headers = {}
        while True:
            h = await self.reader.readline()
            if h in (b"\r\n", b""):
                break
            k, _, v = h.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length") or 0)
        body = await self.reader.readexactly(n) if n and status != 304 else b""
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body

    async def get(self, name: str) -> tuple[int, dict, bytes] | None:
        c = self.crowd
        t0 = time.monotonic()
        for attempt in (0, 1):  # a kept-alive connection the server closed as we asked: once more, as a browser does
            try:
                status, headers, body = await asyncio.wait_for(self._once(name), 10)
                break
            except (OSError, ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError, IndexError):
                self.close()
                if attempt:
                    c.count("failed")
                    return None
        c.count(str(status))
        c.bytes += len(body)
        if c.counting:
            c.latencies.append((time.monotonic() - t0) * 1000)
        if status == 200:
            self.etags[name] = headers.get("etag") or headers.get("last-modified") or ""
        return status, headers, body

    async def poll(self) -> None:
        got = await self.get("hall.json")
        if got is None or got[0] != 200:
            return
        hall = json.loads(got[2])
        for name in hall["page"]["files"]:
            version = hall.get("versions", {}).get(name)
            if name != "hall.json" and (not version or version != self.versions.get(name)):
                got = await self.get(name)
                if got is not None and got[0] in (200, 304):
                    self.versions[name] = version

    async def run(self, offset: float, poll_s: float) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(offset)
        due = loop.time()
        while True:
            await self.poll()
            due += poll_s
            await asyncio.sleep(max(0.0, due - loop.time()))


class Crowd:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.counting = False
        self.answers: dict[str, int] = {}
        self.latencies: list[float] = []
        self.bytes = 0

    def count(self, what: str) -> None:
        if self.counting:
            self.answers[what] = self.answers.get(what, 0) + 1

    def start_counting(self) -> None:
        self.answers, self.latencies, self.bytes, self.counting = {}, [], 0, True


def crowd_main(args) -> int:
    """A worker: `--count` viewers from `--sources`, spread over the poll period. A line on stdin
    starts the count; stdin's end prints what was counted (one JSON line) and ends the worker."""
    host, port = args.crowd.rsplit(":", 1)
    crowd = Crowd(host, int(port))
    sources = args.sources.split(",")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def stdin() -> None:
            sys.stdin.readline()
            loop.call_soon_threadsafe(crowd.start_counting)
            sys.stdin.read()
            loop.call_soon_threadsafe(done.set)

        threading.Thread(target=stdin, daemon=True).start()
        rng = random.Random(args.count)
        tasks = [asyncio.create_task(Viewer(crowd, sources[i % len(sources)]).run(rng.uniform(0, args.poll), args.poll))
                 for i in range(args.count)]
        t0 = time.monotonic()
        await done.wait()
        span = time.monotonic() - t0
        for t in tasks:
            t.cancel()
        print(json.dumps({"answers": crowd.answers, "latencies": crowd.latencies, "bytes": crowd.bytes, "span": span}), flush=True)

    asyncio.run(main())
    return 0


class Viewers:
    """`count` viewers of host:port in `processes` worker processes (this script with --crowd)."""

    def __init__(self, host: str, port: int, count: int, processes: int, procs: list) -> None:
        self.workers = []
        share = [count // processes + (1 if i < count % processes else 0) for i in range(processes)]
        for i, n in enumerate(share):
            mine = SOURCES[i::processes]
            p = subprocess.Popen([sys.executable, __file__, "--crowd", f"{host}:{port}", "--count", str(n), "--poll", str(POLL_S),
                                  "--sources", ",".join(mine)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            procs.append(p)
            self.workers.append(p)

    def start_counting(self) -> None:
        for p in self.workers:
            p.stdin.write("count\n")
            p.stdin.flush()

    def cpu(self) -> float:
        return sum(cpu_seconds(p.pid) for p in self.workers)

    def finish(self) -> dict:
        out = {"answers": {}, "latencies": [], "bytes": 0}
        for p in self.workers:
            p.stdin.close()
        for p in self.workers:
            line = p.stdout.readline()
            p.wait(30)
            got = json.loads(line) if line.strip() else {"answers": {"failed": -1}, "latencies": [], "bytes": 0}
            for k, v in got["answers"].items():
                out["answers"][k] = out["answers"].get(k, 0) + v
            out["latencies"] += got["latencies"]
            out["bytes"] += got["bytes"]
        return out


# --- the static server of the published folder -----------------------------------------------------


NGINX_CONF = """worker_processes 2;
worker_rlimit_nofile 30000;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 15000; }}
http {{
  access_log off;
  sendfile on;
  keepalive_timeout 65;
  keepalive_requests 100000;
  types {{ application/json json; text/html html; text/javascript js; text/css css; }}
  client_body_temp_path {dir}/body; proxy_temp_path {dir}/proxy; fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi; scgi_temp_path {dir}/scgi;
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    root {root};
    add_header Cache-Control "public, max-age={max_age}";
  }}
}}
"""


def static_server(kind: str, root: Path, folder: Path, procs: list) -> tuple[subprocess.Popen, int, str]:
    """A real static server of `root` on a free loopback port: (process, port, what it is)."""
    port = free_port()
    if kind == "nginx":
        exe = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(exe).exists():
            raise RuntimeError("nginx is not installed (apt-get install nginx-light), or give --static python")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "nginx.conf").write_text(NGINX_CONF.format(dir=folder, port=port, root=root, max_age=limits.PUBLIC_MAX_AGE_S))
        proc = subprocess.Popen([exe, "-p", str(folder), "-c", str(folder / "nginx.conf")], stderr=subprocess.DEVNULL)
        version = subprocess.run([exe, "-v"], capture_output=True, text=True).stderr.strip()
        what = f"Debian's {version.split(': ')[-1]}"
    else:
        proc = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(root), str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        what = "Python's http.server (ThreadingHTTPServer)"
    procs.append(proc)
    deadline = time.monotonic() + 10
    import socket

    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port, what
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def tree_cpu(pid: int) -> float:
    """A process's CPU time and its children's (nginx's workers)."""
    total = cpu_seconds(pid)
    try:
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            total += cpu_seconds(int(child))
    except OSError:
        pass
    return total


# --- the run -----------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=60, help="each phase's measured length")
    ap.add_argument("--viewers", default="1000,10000", help="viewer counts (comma-separated) after the 0-viewer baseline")
    ap.add_argument("--static", choices=["nginx", "python"], default="nginx", help="the static server of the published folder")
    ap.add_argument("--processes", type=int, default=0, help="viewer worker processes (default: one a 2,500 viewers, 1 to 4)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    # a viewer worker (the bench starts these itself)
    ap.add_argument("--crowd", help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--poll", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--sources", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.crowd:
        return crowd_main(args)
    return guarded_run("public viewers bench", lambda procs, fleets: run(args, procs, fleets))


def run(args, procs: list, fleets: list) -> int:
    counts = [int(x) for x in args.viewers.split(",") if x.strip()]
    tables = list(range(1, args.tables + 1))
    tmp = scratch("rackside-public-viewers-")
    tmp.chmod(0o755)  # nginx's workers (its `user`, nobody) read the published folder, as a web host's would
    www = tmp / "www"
    www.mkdir(mode=0o755)
    broker = Mosquitto(tmp / "broker", tables)
    broker.start()
    procs.append(broker.proc)
    (tmp / "demo.t").write_text(demo_t_file(tables))
    public_port = free_port()
    extra = (f'tsh = ["demo.t"]\ndivision = "demo"\ntourney_js = "{www}"\n'
             f'[public]\nlisten = "127.0.0.1:{public_port}"\nfolder = "{www}"\n')
    console, port = start_console(broker, tmp, "demo", PASSWORD, procs, extra=extra)
    url = f"http://127.0.0.1:{port}/"
    public_url = f"http://127.0.0.1:{public_port}/"

    sim = SimHall("demo", "127.0.0.1", broker.port, {n: broker.devices[f"table-{n}"].login for n in tables},
                  tmp / "journals", rules=Rules())
    fleets.append(sim)
    applied: dict[tuple[int, int], float] = {}  # (table, seq) -> wall time the clock applied the input
    original_input = sim._input

    def timed_input(t, event, *a, **k):
        applied[(t.n, t.seq + 1)] = time.time()  # each input takes the next seq; set before it is published
        original_input(t, event, *a, **k)

    sim._input = timed_input
    sim.connect(timeout=120)
    rng = random.Random(1)
    phases_n = 1 + sum(1 for n in counts if n <= limits.PUBLIC.connections) + len(counts) + 1
    until = phases_n * (args.seconds + 3 * POLL_S + 20) + 120
    for n in tables:
        sim.script(n, playing(rng, rng.uniform(1, 15), until_s=until, mean_turn_s=30))
    sim.start()
    nginx, static_port, static_what = static_server(args.static, www, tmp / "static", procs)

    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser, page = console_page(p, url, PASSWORD)
        page.wait_for_function(f"() => app.tiles.size >= {len(tables)}", timeout=60_000)
        page.evaluate(OBSERVER)
        director = PageMeter(browser, page)
        pbrowser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ppage = pbrowser.new_page(viewport={"width": 1920, "height": 1080})
        ppage.goto(public_url)
        ppage.wait_for_function("() => document.getElementById('status').textContent.startsWith('updated')", timeout=60_000)
        ppage.click("#tabs button[data-tab=live]")
        ppage.wait_for_function(f"() => document.querySelectorAll('.live-table').length >= {len(tables)}", timeout=60_000)
        public_meter = PageMeter(pbrowser, ppage)

        def phase(name: str, route: str, count: int, host_port: tuple[str, int] | None) -> dict:
            viewers = None
            if count:
                procs_n = args.processes or max(1, min(4, round(count / 2500)))
                viewers = Viewers(*host_port, count, procs_n, procs)
                time.sleep(POLL_S + 5)  # every viewer has made its first poll (spread over one period) and fetched every file
                viewers.start_counting()
            page.evaluate("window.__seen.splice(0)")
            director.sample()
            public_meter.sample()
            c0, s0, v0, t0 = cpu_seconds(console.pid), tree_cpu(nginx.pid), viewers.cpu() if viewers else 0.0, time.monotonic()
            probes: set[tuple[int, int]] = set()
            rss = []
            while time.monotonic() < t0 + args.seconds:
                running = [t for t in sim.tables.values() if t.clock.phase is Phase.RUNNING and not t.offline]
                if running:
                    t = rng.choice(running)
                    probes.add((t.n, t.seq + 1))
                    sim.act(t.n, ("turn",))
                rss.append(rss_mib(console.pid))
                time.sleep(0.2)
            span = time.monotonic() - t0
            row = {"phase": name, "route": route, "viewers": count,
                   "console_cpu": (cpu_seconds(console.pid) - c0) / span * 100, "rss": statistics.median(rss),
                   "static_cpu": (tree_cpu(nginx.pid) - s0) / span * 100,
                   "viewer_cpu": ((viewers.cpu() - v0) / span * 100) if viewers else 0.0,
                   "director_cpu": director.sample()["cpu"], "public_cpu": public_meter.sample()["cpu"]}
            time.sleep(1.2)  # the last probes' frame
            first: dict[tuple[int, int], float] = {}
            for n, seq, at in page.evaluate("window.__seen.splice(0)"):
                if (n, seq) in probes and (n, seq) in applied and (n, seq) not in first:
                    first[(n, seq)] = at - applied[(n, seq)] * 1000
            lat = list(first.values())
            row.update(probes=len(probes), seen=len(lat), p50=statistics.median(lat) if lat else float("nan"),
                       p99=pct(lat, 99) if lat else float("nan"))
            if viewers:
                got = viewers.finish()
                a = got["answers"]
                asked = sum(v for v in a.values())
                row.update(answers=a, asked=asked, ok=a.get("200", 0) + a.get("304", 0), r304=a.get("304", 0), failed=asked - a.get("200", 0) - a.get("304", 0),
                           rate=asked / span, mib_s=got["bytes"] / span / 2**20,
                           v50=pct(got["latencies"], 50) if got["latencies"] else float("nan"),
                           v99=pct(got["latencies"], 99) if got["latencies"] else float("nan"))
                if console.poll() is not None:
                    raise RuntimeError(f"the console exited with {console.returncode}")
            print_row(row, header=not rows)
            rows.append(row)
            return row

        base = phase("none", "-", 0, None)
        for n in counts:
            if n <= limits.PUBLIC.connections:
                phase(f"listener {n}", "listener", n, ("127.0.0.1", public_port))
            else:
                print(f"  listener {n}: beyond what it serves (limits.PUBLIC: {limits.PUBLIC.connections} connections, a viewer holds one): "
                      f"these viewers are the published folder's", flush=True)
        for n in counts:
            phase(f"published {n}", "published", n, ("127.0.0.1", static_port))

        frames = public_frames(ppage, args.seconds)
        pbrowser.close()
        browser.close()
    console.terminate()  # before the broker (guarded_run ends what is left in start order): no "broker failed" at the end
    console.wait(10)

    print(f"\npublic viewers bench: {len(tables)} tables, {args.seconds:g} s a phase, {len(applied)} clock inputs; "
          f"published folder served by {static_what}; viewers poll every {POLL_S} s (If-None-Match)")
    ok = True
    for r in rows[1:]:
        ratio = r["console_cpu"] / max(base["console_cpu"], 0.1)
        flat = r["console_cpu"] <= max(base["console_cpu"] * FLAT_RATIO, base["console_cpu"] + FLAT_PLUS)
        served = r.get("failed", 0) == 0 and r.get("asked", 0) > 0
        note = ""
        if r["route"] == "published":
            ok &= flat
            note = f" (flat: within {FLAT_RATIO}x and +{FLAT_PLUS:g} %: {'PASS' if flat else 'FAIL'})"
        ok &= served
        print(f"  {r['phase']:>16}: console CPU {r['console_cpu']:.1f} % = {ratio:.2f}x the baseline's {base['console_cpu']:.1f} %{note}; "
              f"press -> tile p99 {r['p99']:.0f} ms = {r['p99'] / max(base['p99'], 0.1):.2f}x ({base['p99']:.0f} ms), "
              f"p50 {r['p50']:.0f} ms ({base['p50']:.0f}); viewers' requests {r['ok']}/{r['asked']} answered "
              f"({'PASS' if served else 'FAIL'}: {r.get('answers')})")
    pcpu = base["public_cpu"]
    page_ok = pcpu <= PAGE_CPU_MAX
    ok &= page_ok and frames["ok"]
    print(f"  the director's page's renderer, {len(tables)} tiles: {base['director_cpu']:.1f} % of a core (no viewers); "
          f"press -> tile p50 {base['p50']:.0f} ms, p99 {base['p99']:.0f} ms (item 4's target p99 <= 150 ms, bench/console_bench.py)")
    print(f"  the public page's renderer, {len(tables)} live tables: {pcpu:.1f} % of a core with no viewers "
          f"(target <= {PAGE_CPU_MAX:g} %): {'PASS' if page_ok else 'FAIL'}")
    print(f"  the public page's changed cards: {frames['cards']} changes from {frames['arrivals']} live.json answers; "
          f"drawn at the next frame: {frames['next']} of {frames['cards']} ({'PASS' if frames['ok'] else 'FAIL'}); "
          f"its last byte -> drawn p50 {frames['p50']:.1f} ms, p99 {frames['p99']:.1f} ms; most frames begun between the JSON read and a change: {frames['most']}")
    print("targets: " + ("met" if ok else "MISSED"))
    return 0 if ok or not args.check else 1


def public_frames(ppage, seconds: float) -> dict:
    """The public page's changed cards against its frames: for each live.json the page has read (its
    JSON parsed: the data has arrived), the cards changed after it and before the next, the frames
    begun in between (the next frame: at most one, the one whose callbacks draw them), and the delay
    from the response's last byte (the network's timing) to the change."""
    ppage.evaluate(FRAMES)
    time.sleep(max(seconds / 2, 3 * POLL_S))
    got = ppage.evaluate("""() => ({frames: window.__frames.splice(0), cards: window.__cards.splice(0), parsed: window.__parsed.splice(0),
      ends: performance.getEntriesByType('resource').filter(e => e.name.endsWith('/live.json')).map(e => e.responseEnd)})""")
    frames, parsed, ends = got["frames"], sorted(got["parsed"]), sorted(got["ends"])
    begun, delays, cards = [], [], 0
    for i, a in enumerate(parsed):
        end = parsed[i + 1] if i + 1 < len(parsed) else float("inf")
        net = max([e for e in ends if e <= a], default=a)
        for _table, at in got["cards"]:
            if a <= at < end:
                cards += 1
                begun.append(sum(1 for f in frames if a < f < at))
                delays.append(at - net)
    nxt = sum(1 for b in begun if b <= 1)
    return {"arrivals": len(parsed), "cards": cards, "next": nxt, "most": max(begun, default=0), "ok": cards > 0 and nxt == cards,
            "p50": pct(delays, 50) if delays else float("nan"), "p99": pct(delays, 99) if delays else float("nan")}


def print_row(r: dict, header: bool = False) -> None:
    if header:
        print(f"{'phase':>16} {'console CPU':>11} {'RSS':>8} {'tile p50':>9} {'tile p99':>9} {'director':>9} {'public pg':>9} "
              f"{'req/s':>7} {'answered':>15} {'304s':>6} {'MiB/s':>6} {'req p50':>8} {'req p99':>8} {'static':>7} {'viewers':>8}", flush=True)
    v = r.get("asked")
    print(f"{r['phase']:>16} {r['console_cpu']:>9.1f} % {r['rss']:>4.0f} MiB {r['p50']:>6.0f} ms {r['p99']:>6.0f} ms "
          f"{r['director_cpu']:>7.1f} % {r['public_cpu']:>7.1f} % "
          + (f"{r['rate']:>7.0f} {r['ok']:>7}/{v:<7} {r['r304'] / max(v, 1) * 100:>5.0f}% {r['mib_s']:>6.1f} {r['v50']:>5.1f} ms {r['v99']:>5.0f} ms "
             f"{r['static_cpu']:>5.1f} % {r['viewer_cpu']:>6.0f} %" if v else f"{'-':>7} {'-':>15} {'-':>6} {'-':>6} {'-':>8} {'-':>8} {r['static_cpu']:>5.1f} % {'-':>8}"),
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
