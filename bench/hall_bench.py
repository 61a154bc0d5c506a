"""Hall benchmark (issue 12): 200 simulated tables on one loopback Mosquitto.

Each table is the pure core (game.clock) playing scripted games at 10x speed (a move every 10 to
50 s of game time, a neutralise and restart mid-game, then the end: about 25 inputs and a result a
game), with the real hall publisher (hall.device.clock_output.HallOutput: bounded queue, its own thread,
the sqlite outbox, paho QoS 1 on a persistent session) told every input and, like the runner's
display refresh, a view every real second. Tables run in worker processes (--workers), a director
subscribes to the whole hall in this process. Figures:

- messages per second the director received;
- latency from the input being applied (the event's `at`, wall clock, ms) to the director
  receiving its event: p50 / p99 / max (target p99 <= 100 ms);
- the broker's CPU and the publishers' CPU (workers' CPU / tables), from /proc, as % of one core
  per table (target <= 0.5 %);
- the outbox's disk writes a game: sqlite transactions, and write_bytes / syscw from /proc/PID/io.

The baseline, measured in the same run on the same broker and the same scripted games: a bare paho
client per table publishing each event at QoS 1 straight away (no queue, no outbox, no thread of
its own): the cost of "nothing is lost" is the ratio between the two.

`--inject-delay-ms N` makes every outbox write N ms slower (a broken build): the latency target then
fails and the bench exits 1, which shows the harness can fail.

    .venv/bin/python bench/hall_bench.py [--tables 200] [--seconds 70] [--workers 4] [--inject-delay-ms 0]
"""

from __future__ import annotations

import argparse
import datetime
import heapq
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rackside.firmware.outputs import Output  # noqa: E402 (after the path, for a checkout without an install)
from rackside.hall.wire import topics  # noqa: E402

SPEED = 10
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- measuring ------------------------------------------------------------------------------------


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def proc_io(pid: int | str = "self") -> dict[str, int]:
    try:
        return {k: int(v) for k, v in (line.split(": ") for line in Path(f"/proc/{pid}/io").read_text().splitlines())}
    except OSError:
        return {}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


# --- a worker: K tables ---------------------------------------------------------------------------


class FakeStore:
    """A table's game number and name (what the runner tells outputs as `game`); no journal: the
    bench's publishers have nothing to resync from."""

    def __init__(self, table: int) -> None:
        self.table = table
        self.games = 0
        self.game = ""
        self.next_game()

    def next_game(self) -> None:
        self.games += 1
        self.game = f"game-{self.games:06d}"


class BareOutput(Output):
    """The baseline: publish each event at QoS 1 at once from the caller's thread; nothing on disk
    (the clock-output protocol's do-nothing `flush` is inherited: there is nothing to flush)."""

    def __init__(self, cfg, store) -> None:
        import paho.mqtt.client as mqtt

        self.store = store
        self.topic = topics.table(cfg.hall, cfg.table, "event")
        self.state_topic = topics.table(cfg.hall, cfg.table, "state")
        # the table's own client id: the broker binds each table's login to it (the phases run one after the other)
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=cfg.credentials.mqtt_client_id, protocol=mqtt.MQTTv5)
        c.username_pw_set(cfg.credentials.user, cfg.credentials.password)
        c.connect(cfg.endpoint.host, cfg.endpoint.port)
        c.loop_start()
        self.client = c
        self._last = None

    def start(self) -> None:
        """Connected in __init__; no thread of its own to start (HallOutput has one)."""

    def applied(self, entry) -> None:
        from rackside.game.journal import input_to_dict
        from rackside.hall.wire.payloads import event_payload

        self.client.publish(self.topic, event_payload(input_to_dict(entry.input), entry.game, entry.seq, time.time_ns()), qos=1)

    def view(self, frame, t_ns) -> None:
        v = frame.view
        from rackside.game.clock import Phase
        from rackside.hall.wire.payloads import result_payload, state_payload

        if v.phase is Phase.ENDED and self._last != frame.game:
            self._last = frame.game
            self.client.publish(self.topic, result_payload(v, frame.game, time.time_ns()), qos=1)
        self.client.publish(self.state_topic, state_payload(v, frame.game, 0, time.time_ns(), frame.clock.rules), qos=1, retain=True)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def game_script(rng: random.Random):
    """(game-time gap in s before the input, input kind, player): one scripted game."""
    moves = rng.randint(18, 24)
    yield rng.uniform(1, 5), "press", 2  # 2.2: the non-starter starts the starter's time
    side = 1
    for k in range(moves):
        yield rng.uniform(10, 50), "press", side
        side = 3 - side
        if k == moves // 2:
            yield rng.uniform(1, 5), "neutralise", 0  # a challenge: neutralised, then restarted
            yield rng.uniform(20, 60), "neutralise", 0
    yield rng.uniform(5, 20), "end", 0


INPUTS_PER_GAME = statistics.mean(sum(1 for _ in game_script(random.Random(i))) for i in range(500))


def worker(args) -> int:
    from rackside.game.clock import End, Neutralise, Phase, Press, Rules, apply, new_clock, view
    from rackside.hall.net import config as hall_config

    tables = [int(x) for x in args.worker_tables.split(",")]
    hall_dir = Path(args.hall_dir)
    outdir = Path(args.outbox_dir)
    t0_real = time.monotonic_ns()

    def vclock() -> int:  # the tables' monotonic clock, at 10x speed
        return t0_real + (time.monotonic_ns() - t0_real) * SPEED

    if args.inject_delay_ms:
        from rackside.hall.device import outbox as outbox_mod

        original = outbox_mod.Outbox.put

        def slow_put(self, rows, progress=None, answered=None):  # the deliberately broken build
            time.sleep(args.inject_delay_ms / 1000)
            return original(self, rows, progress, answered)

        outbox_mod.Outbox.put = slow_put

    from rackside.firmware.outputs import Applied, Frame

    def frame(tab, v):  # what the runner hands its outputs each refresh
        return Frame(v, ("", ""), tab["clock"], False, tab["store"].game)

    rules = Rules()
    tabs = []
    for n in tables:
        cfg = hall_config.from_table({"url": args.url, "credentials": str(hall_dir / "credentials" / f"table-{n}.toml")}, "table")
        store = FakeStore(n)
        if args.phase == "hall":
            from rackside.hall.device.clock_output import HallOutput

            out = HallOutput(cfg, None, lambda message: None, outbox_path=outdir / f"outbox-{n}.sqlite", clock_ns=vclock)
        else:
            out = BareOutput(cfg, store)
        out.start()
        rng = random.Random(n)
        tabs.append({"n": n, "store": store, "out": out, "clock": new_clock(rules), "rng": rng, "script": game_script(rng), "seq": 1, "games": 0})
    time.sleep(1.0)  # every table connected
    start_real = time.monotonic()
    end_real = start_real + args.seconds
    due: list[tuple[float, int]] = []
    for i, tab in enumerate(tabs):
        heapq.heappush(due, (start_real + (i % 50) * 0.02, i))
    next_view = start_real + 1.0
    events = 0
    cpu0, io0 = os.times(), proc_io()
    while True:
        now = time.monotonic()
        if now >= end_real:
            break
        if now >= next_view:  # the runner's display refresh: a view a second
            for tab in tabs:
                t = vclock()
                tab["out"].view(frame(tab, view(tab["clock"], max(t, tab["clock"].since_ns or t))), t)
            next_view += 1.0
        when, i = due[0]
        if when > now:
            time.sleep(min(when, next_view) - now)
            continue
        heapq.heappop(due)
        tab = tabs[i]
        try:
            gap, kind, player = next(tab["script"])
        except StopIteration:  # a new game
            tab["store"].next_game()
            tab["clock"] = new_clock(rules)
            tab["seq"] = 1
            tab["games"] += 1
            tab["script"] = game_script(tab["rng"])
            heapq.heappush(due, (now + 0.5, i))
            continue
        t = vclock()
        inp = {"press": lambda: Press(t, player), "neutralise": lambda: Neutralise(t), "end": lambda: End(t)}[kind]()
        tab["clock"] = apply(tab["clock"], inp)
        tab["seq"] += 1
        tab["out"].applied(Applied(inp, tab["seq"], tab["store"].game, None, {}, tab["clock"], t))
        tab["out"].view(frame(tab, view(tab["clock"], t)), t)  # the runner's refresh after the input (the result after the end)
        tab["out"].flush(t)  # the end of the runner's loop iteration
        events += 1
        heapq.heappush(due, (now + gap / SPEED, i))
    cpu1, io1 = os.times(), proc_io()
    commits = 0
    drained = True
    for tab in tabs:
        out = tab["out"]
        if args.phase == "hall":
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and out.queue.qsize():
                time.sleep(0.05)
            drained &= not out.queue.qsize()
    for tab in tabs:
        tab["out"].close()  # the hall output's worker delivers what is in flight first (its drain)
        if args.phase == "hall" and tab["out"].worker.outbox is not None:
            commits += tab["out"].worker.outbox.commits  # read once its thread has stopped
    finished = sum(1 for tab in tabs for _ in range(tab["games"])) + sum(1 for tab in tabs if tab["clock"].phase is Phase.ENDED)
    cpu = (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)
    print(json.dumps({
        "tables": len(tabs), "events": events, "cpu_s": cpu, "commits": commits, "games": finished,
        "write_bytes": io1.get("write_bytes", 0) - io0.get("write_bytes", 0), "syscw": io1.get("syscw", 0) - io0.get("syscw", 0),
        "drained": drained,
    }), flush=True)
    return 0


# --- the director and the run ------------------------------------------------------------------


class Director:
    def __init__(self, host: str, port: int, creds) -> None:
        import paho.mqtt.client as mqtt

        self.lat_ms: list[float] = []
        self.msgs = 0
        self.events = 0
        self.results = 0
        self.seen: set = set()
        self.dups = 0
        self.lock = threading.Lock()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        c.username_pw_set(creds.user, creds.password)
        ok = threading.Event()
        c.on_connect = lambda *a: c.subscribe(topics.hall_root(creds.hall) + "/#", qos=1)
        c.on_subscribe = lambda *a: ok.set()
        c.on_message = self.on_message
        c.connect(host, port)
        c.loop_start()
        assert ok.wait(10), "director not subscribed"
        self.client = c
        self.counting = False

    def on_message(self, client, userdata, msg) -> None:
        now = time.time()
        if not self.counting:
            return
        with self.lock:
            self.msgs += 1
            if not msg.topic.endswith("/event"):
                return
            d = json.loads(msg.payload)
            key = (msg.topic, d["game"], d["seq"])
            if key in self.seen:
                self.dups += 1
                return
            self.seen.add(key)
            if d.get("kind") == "result":
                self.results += 1
            else:
                self.events += 1
            if d.get("at"):
                at = datetime.datetime.fromisoformat(d["at"]).timestamp()
                self.lat_ms.append((now - at) * 1000)

    def reset(self) -> None:
        with self.lock:
            self.lat_ms, self.msgs, self.events, self.results, self.seen, self.dups = [], 0, 0, 0, set(), 0

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def run_phase(phase: str, args, hall_dir: Path, url: str, broker_pid: int, director: Director, tmp: Path) -> dict:
    director.reset()
    director.counting = True
    tables = list(range(1, args.tables + 1))
    groups = [tables[i:: args.workers] for i in range(args.workers)]
    outdir = tmp / f"outbox-{phase}"
    outdir.mkdir()
    b0, w0 = proc_cpu_s(broker_pid), time.monotonic()
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", "--phase", phase, "--worker-tables", ",".join(map(str, g)),
             "--hall-dir", str(hall_dir), "--url", url, "--outbox-dir", str(outdir), "--seconds", str(args.seconds),
             "--inject-delay-ms", str(args.inject_delay_ms if phase == "hall" else 0)],
            stdout=subprocess.PIPE, text=True,
        )
        for g in groups
    ]
    results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    b1, w1 = proc_cpu_s(broker_pid), time.monotonic()
    time.sleep(0.5)
    director.counting = False
    wall = args.seconds  # the tables played for this long; connection set-up and drain excluded
    total = {k: sum(r[k] for r in results) for k in ("events", "cpu_s", "commits", "games", "write_bytes", "syscw")}
    # per game: measured per input, times the scripted games' mean inputs (a phase may end mid-game)
    per_game = INPUTS_PER_GAME / max(1, total["events"])
    with director.lock:
        lat = list(director.lat_ms)
        return {
            "phase": phase,
            "msgs_per_s": director.msgs / (w1 - w0),
            "events_sent": total["events"],
            "events_received": director.events,
            "results": director.results,
            "duplicates": director.dups,
            "p50": pct(lat, 0.5), "p99": pct(lat, 0.99), "max": max(lat) if lat else float("nan"),
            "broker_cpu_pct_per_table": 100 * (b1 - b0) / (w1 - w0) / args.tables,
            "broker_cpu_pct": 100 * (b1 - b0) / (w1 - w0),
            "publisher_cpu_pct_per_table": 100 * total["cpu_s"] / wall / args.tables,
            "games": total["games"],
            "commits_per_game": total["commits"] * per_game,
            "write_kib_per_game": total["write_bytes"] / 1024 * per_game,
            "syscw_per_game": total["syscw"] * per_game,
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=70, help="how long each phase plays (real seconds)")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--inject-delay-ms", type=float, default=0, help="a broken build: every outbox write this much slower")
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--phase", default="hall", help=argparse.SUPPRESS)
    ap.add_argument("--worker-tables", help=argparse.SUPPRESS)
    ap.add_argument("--hall-dir", help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--outbox-dir", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    from rackside.hall.net import config as hall_config
    from rackside.hall.director import provision as prov
    from rackside.hall.director.broker import mosquitto_binary

    tmp = Path(tempfile.mkdtemp(prefix="hall-bench-"))
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        hall_dir = tmp / "hall"
        run_as = "root" if os.geteuid() == 0 else None
        prov.provision(hall_dir, "bench", list(range(1, args.tables + 1)), 0, port=port, bind="127.0.0.1", run_as=run_as, tls=False)
        broker = subprocess.Popen([mosquitto_binary(), "-c", str(hall_dir / "mosquitto.conf")], stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        url = f"mqtt://127.0.0.1:{port}"
        director = Director("127.0.0.1", port, hall_config.load_credentials(hall_dir / "credentials" / "director.toml"))
        load = os.getloadavg()
        print(f"hall bench: {args.tables} tables at {SPEED}x speed, {args.workers} worker processes, {args.seconds:.0f} s a phase; "
              f"Mosquitto on 127.0.0.1:{port}; load average {load[0]:.2f} on {os.cpu_count()} cores")
        if args.inject_delay_ms:
            print(f"BROKEN BUILD: every outbox write delayed by {args.inject_delay_ms:.0f} ms")
        phases = ([] if args.skip_baseline else ["bare"]) + ["hall"]
        out = {p: run_phase(p, args, hall_dir, url, broker.pid, director, tmp) for p in phases}
        director.close()
        broker.terminate()
        broker.wait(10)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    rows = [
        ("messages/s received by the director", "msgs_per_s", "{:.0f}"),
        ("events sent / received (deduplicated)", None, None),
        ("results received", "results", "{:d}"),
        ("duplicates dropped by (device, game, seq)", "duplicates", "{:d}"),
        ("latency input -> director p50 (ms)", "p50", "{:.1f}"),
        ("latency input -> director p99 (ms)", "p99", "{:.1f}"),
        ("latency input -> director max (ms)", "max", "{:.1f}"),
        ("broker CPU, % of a core (all tables)", "broker_cpu_pct", "{:.1f}"),
        ("broker CPU, % of a core per table", "broker_cpu_pct_per_table", "{:.3f}"),
        ("publisher CPU, % of a core per table", "publisher_cpu_pct_per_table", "{:.3f}"),
        ("games finished", "games", "{:d}"),
        (f"outbox transactions per game ({INPUTS_PER_GAME:.1f} inputs)", "commits_per_game", "{:.1f}"),
        ("disk write_bytes per game (KiB, /proc io)", "write_kib_per_game", "{:.1f}"),
        ("write syscalls per game (/proc io syscw)", "syscw_per_game", "{:.0f}"),
    ]
    hall = out["hall"]
    base = out.get("bare")
    print(f"\n{'':46} {'hall (outbox)':>14} {'baseline (bare)':>16} {'ratio':>7}")
    for label, key, fmt in rows:
        if key is None:
            h = f"{hall['events_sent']}/{hall['events_received']}"
            b = f"{base['events_sent']}/{base['events_received']}" if base else "-"
            print(f"{label:46} {h:>14} {b:>16}")
            continue
        h = fmt.format(hall[key])
        b = fmt.format(base[key]) if base else "-"
        ratio = f"{hall[key] / base[key]:.2f}" if base and isinstance(base[key], (int, float)) and base[key] else ""
        print(f"{label:46} {h:>14} {b:>16} {ratio:>7}")

    failures = []
    if not hall["p99"] <= 100:
        failures.append(f"latency p99 {hall['p99']:.1f} ms > 100 ms")
    if not hall["publisher_cpu_pct_per_table"] <= 0.5:
        failures.append(f"publisher CPU {hall['publisher_cpu_pct_per_table']:.3f} % of a core per table > 0.5 %")
    if not hall["broker_cpu_pct_per_table"] <= 0.5:
        failures.append(f"broker CPU {hall['broker_cpu_pct_per_table']:.3f} % of a core per table > 0.5 %")
    if hall["events_received"] != hall["events_sent"]:
        failures.append(f"{hall['events_sent'] - hall['events_received']} event(s) lost")
    print()
    for f in failures:
        print(f"FAIL: {f}")
    if not failures:
        print("PASS: p99 <= 100 ms, CPU <= 0.5 % of a core per table (broker and publisher), every event delivered once")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
