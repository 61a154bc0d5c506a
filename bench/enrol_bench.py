"""200 devices joining a hall at once (issue 19): time from a device's hello to it being online as
its table, and the broker's and the console's CPU while it happens.

A hall provisioned as a director provisions it (TLS, the dynamic-security plugin), its broker, and
the console as its own process (`rackside hall console`). Devices (hall.device.enrol.Enrolment, the same
code a clock runs) start all at once in worker processes with only the join file; a script logs in
to the console and assigns each device a table through the Devices page's own API as soon as it is
listed, by the code the device shows; each device, told its number (its login sealed to its own
key), logs in over TLS as its table. A device's time is from its
hello being sent to its table's login being accepted.

Baseline, measured in the same run on the same broker: the same number of TLS logins at once with
the join secret (what the broker and the TLS handshakes alone cost).

Target: p99 hello -> online <= 10 s for 200 devices at once. `--inject-delay-ms N` makes every
device take N ms more to act on its reply (a slow build) and shows the harness failing.

    .venv/bin/python bench/enrol_bench.py [--devices 200] [--workers 4] [--inject-delay-ms 0]
"""

from __future__ import annotations

import argparse
import getpass
import http.cookiejar
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import paho.mqtt.client as mqtt  # noqa: E402

from _common import cpu_seconds, guarded_run, scratch  # noqa: E402

TARGET_P99_S = 10.0


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] if s else float("nan")


def tls_login(host: str, port: int, ca: str, user: str, password: str, client_id: str, done) -> mqtt.Client:
    """A TLS login; `done(ok)` is called on its CONNACK (paho's thread)."""
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    c.username_pw_set(user, password)
    c.tls_set(ca_certs=ca, tls_version=ssl.PROTOCOL_TLS_CLIENT)
    c.on_connect = lambda cl, u, f, rc, p: done(not rc.is_failure)
    c.connect_async(host, port)
    c.loop_start()
    return c


# --- a worker process: its share of the devices ------------------------------------------------------


def worker(args) -> int:
    from rackside.hall.device import joinfile as join
    from rackside.hall.net.config import parse_url
    from rackside.hall.device.enrol import Enrolment

    joinfile = join.load(args.join)
    endpoint = parse_url(joinfile.url)
    folder = Path(args.folder)
    names = [f"bench-{i:04d}" for i in range(args.first, args.first + args.count)]
    lock = threading.Lock()
    hello: dict[str, float] = {}
    online: dict[str, float] = {}
    logins: list = []
    finished = threading.Event()

    def make(name: str) -> Enrolment:
        e = Enrolment(joinfile, folder / name, "clock", device=name, version="bench", on_change=lambda user, cfg: changed(name, cfg))
        on_connect = e.client.on_connect

        def stamped(*a):
            with lock:
                hello.setdefault(name, time.time())  # the hello goes out in this callback
            on_connect(*a)

        e.client.on_connect = stamped
        return e

    def changed(name: str, cfg) -> None:
        if cfg is None:
            return
        if args.inject_delay_ms:
            time.sleep(args.inject_delay_ms / 1000)  # the deliberately slow build

        def done(ok: bool) -> None:
            if ok:
                with lock:
                    online.setdefault(name, time.time())
                    if len(online) == len(names):
                        finished.set()

        c = cfg.credentials
        logins.append(tls_login(endpoint.host, endpoint.port, c.tls_ca, c.user, c.password, c.mqtt_client_id, done))

    enrolments = [make(n) for n in names]
    print("ready", flush=True)
    sys.stdin.readline()  # "go": every worker's devices start together
    for e in enrolments:
        e.start()
    finished.wait(args.timeout)
    with lock:
        rows = [{"device": n, "hello": hello.get(n), "online": online.get(n)} for n in names]
    print(json.dumps(rows), flush=True)
    for c in logins:
        c.disconnect()
        c.loop_stop()
    for e in enrolments:
        e.close()
    return 0


def baseline(host: str, port: int, ca: str, secret: str, n: int) -> list[float]:
    """n TLS logins with the join secret at once: each one's connect -> CONNACK, in seconds."""
    times: list[float] = []
    lock = threading.Lock()
    all_done = threading.Event()
    clients = []
    for i in range(n):
        t0 = time.time()

        def done(ok, t0=t0):
            with lock:
                times.append(time.time() - t0)
                if len(times) == n:
                    all_done.set()

        clients.append(tls_login(host, port, ca, "join", secret, f"baseline-{i}", done))
    all_done.wait(60)
    for c in clients:
        c.disconnect()
        c.loop_stop()
    return times


# --- the director's script: the console's Devices API ------------------------------------------------


class Console:
    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.csrf = None

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **({"X-CSRF-Token": self.csrf} if self.csrf else {})}
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        with self.opener.open(req, timeout=30) as r:
            return json.loads(r.read())

    def login(self, password: str) -> None:
        self.csrf = self.call("GET", "/api/csrf")["csrf"]
        self.csrf = self.call("POST", "/api/login", {"password": password, "name": "bench"})["csrf"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=200)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--inject-delay-ms", type=int, default=0, help="each device acts on its reply this much later (shows a FAIL)")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--join", help=argparse.SUPPRESS)
    ap.add_argument("--folder", help=argparse.SUPPRESS)
    ap.add_argument("--first", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    from rackside.hall.wire import topics

    if not 1 <= args.devices <= topics.MAX_TABLE:
        ap.error(f"--devices: 1 to {topics.MAX_TABLE} (one table each)")
    return guarded_run("enrol bench", lambda procs, _fleets: run(args, procs))  # (the workers end first, then the console, then the broker)


def run(args, procs: list) -> int:
    from rackside.hall.device import joinfile as join
    from rackside.hall.director import provision
    from rackside.hall.console.shell.auth import hash_password
    from rackside.hall.console.demohall.demo import free_port

    tmp = scratch("rackside-enrol-bench-")
    port, tls_port, web = free_port(), free_port(), free_port()
    hall_dir = tmp / "hall"
    provision.provision(hall_dir, "bench", [], 0, port=port, tls_port=tls_port, bind="127.0.0.1", names=["127.0.0.1"],
                        url=f"mqtts://127.0.0.1:{tls_port}", run_as=getpass.getuser() if os.geteuid() == 0 else None)
    broker = subprocess.Popen([shutil.which("mosquitto") or "/usr/sbin/mosquitto", "-c", str(hall_dir / "mosquitto.conf")],
                              stdout=subprocess.DEVNULL, stderr=open(tmp / "mosquitto.log", "wb"))
    procs.append(broker)
    password = "bench-password"
    cfg = tmp / "hall.toml"
    cfg.write_text(f'[console]\nhall = "bench"\nurl = "mqtt://127.0.0.1:{port}"\n'
                   f'credentials = "{hall_dir / "credentials" / "director.toml"}"\npassword = "{hash_password(password)}"\n'
                   f'listen = "127.0.0.1:{web}"\n')
    console = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "console", "--config", str(cfg)],
                               env={**os.environ, "RACKSIDE_STATE_DIR": str(tmp / "state")}, stdout=subprocess.PIPE, text=True,
                               stderr=open(tmp / "console.log", "wb"))
    procs.append(console)
    console.stdout.readline()
    director = Console(f"http://127.0.0.1:{web}")
    deadline = time.monotonic() + 20
    while True:
        try:
            director.login(password)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    director.call("GET", "/api/devices")  # the console's fleet connects now, not during the measurement

    joinfile = join.load(hall_dir / "join.toml")
    ca = str(hall_dir / "tls" / "ca.crt")
    base = baseline("127.0.0.1", tls_port, ca, joinfile.secret, args.devices)

    share = -(-args.devices // args.workers)
    for w in range(args.workers):
        count = min(share, args.devices - w * share)
        if count <= 0:
            break
        procs.append(subprocess.Popen(
            [sys.executable, __file__, "--worker", "--join", str(hall_dir / "join.toml"), "--folder", str(tmp / "devices"),
             "--first", str(w * share + 1), "--count", str(count), "--timeout", str(args.timeout),
             "--inject-delay-ms", str(args.inject_delay_ms)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, stderr=open(tmp / f"worker-{w}.log", "wb")))
    workers = procs[2:]
    for w in workers:
        assert w.stdout.readline().strip() == "ready"
    cpu0 = {"broker": cpu_seconds(broker.pid), "console": cpu_seconds(console.pid)}
    t0 = time.time()
    for w in workers:
        w.stdin.write("go\n")
        w.stdin.flush()

    assign_ms: list[float] = []  # each assignment's round trip through the console
    assigned: set[str] = set()  # the director's script: number every device as soon as it is listed
    deadline = time.monotonic() + args.timeout
    while len(assigned) < args.devices and time.monotonic() < deadline:
        for row in director.call("GET", "/api/devices")["devices"]:
            if row["state"] == "waiting" and row["device"] not in assigned:
                n = int(row["device"].split("-")[1])
                a0 = time.perf_counter()
                director.call("POST", "/api/devices/assign", {"code": row["code"], "number": n})  # the code it shows
                assign_ms.append((time.perf_counter() - a0) * 1000)
                assigned.add(row["device"])
        time.sleep(0.2)
    rows = []
    for w in workers:
        rows += json.loads(w.stdout.readline())
    wall = time.time() - t0
    cpu = {k: (cpu_seconds(p.pid) - cpu0[k]) / wall * 100 for k, p in (("broker", broker), ("console", console))}
    times = [r["online"] - r["hello"] for r in rows if r["online"] and r["hello"]]
    missing = args.devices - len(times)

    print(f"enrol bench: {args.devices} devices at once, {args.workers} worker processes, TLS, dynamic-security plugin")
    print(f"{'':44} {'enrolment':>10} {'baseline':>10}")
    print(f"{'devices online as their table / logins':44} {len(times):>10} {len(base):>10}")
    for label, q in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
        print(f"{'hello -> online ' + label + ' (s) | TLS login':44} {pct(times, q):>10.2f} {pct(base, q):>10.2f}")
    print(f"{'all devices online after (s)':44} {wall:>10.1f}")
    print(f"{'one assignment through the console p50 / p99 (ms)':44} {pct(assign_ms, 0.5):>10.1f} {pct(assign_ms, 0.99):>10.1f}")
    print(f"{'broker CPU, % of a core (mean over the run)':44} {cpu['broker']:>10.1f}")
    print(f"{'console CPU, % of a core (mean over the run)':44} {cpu['console']:>10.1f}")
    failures = []
    if missing:
        failures.append(f"{missing} device(s) never online")
    if times and pct(times, 0.99) > TARGET_P99_S:
        failures.append(f"hello -> online p99 {pct(times, 0.99):.2f} s > {TARGET_P99_S:.0f} s")
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    print(f"PASS: every device online as its table, p99 hello -> online <= {TARGET_P99_S:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
