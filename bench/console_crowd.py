"""A crowd of half-open connections against the console (issue 25, item 4): does the director
still get answers, and does the console's memory come back?

The console as its own process (`rackside hall console`) over HTTPS with a certificate of the
hall's own CA, on a private Mosquitto. The director, signed in, asks for `/api/snapshot` over a new
TLS connection each time (a browser's worst case) and times each answer. The crowd: `--threads`
threads from 20 loopback addresses (127.0.0.2 .. 127.0.0.21) keep up to `--held` connections open,
each either half a request after its TLS handshake (`--kind headers`) or nothing at all, not even
the handshake (`--kind silent`), opening a new one as soon as one is closed.

Phases, each measured on its own: quiet (`--quiet` s: this run's baseline), the crowd (`--seconds`
s), after it (`--after` s, then the RSS once the crowd has gone).

Targets: every one of the director's requests answered 200 during the crowd, its p99 <= 1 s; the
console's RSS at most 96 MiB over the baseline during the crowd and at most 24 MiB over it after
(before issue 25: 1 answer in 36, and 36 -> 340 MiB for good). `--console-from DIR` runs the
console from another checkout (an older commit, the broken build). `--check` exits 1 when a target
is missed.

    .venv/bin/python bench/console_crowd.py [--kind headers|silent] [--held 1100] [--seconds 20] [--check]
"""

from __future__ import annotations

import argparse
import json
import socket
import ssl
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import guarded_run, pct, rss_mib, start_console  # noqa: E402
from rackside.hall.console.demo import HALL, Mosquitto  # noqa: E402
from rackside.hall.director import tlsfiles  # noqa: E402

PASSWORD = "crowd-password"
SOURCES = [f"127.0.0.{i}" for i in range(2, 22)]


class Director:
    """A signed-in director's client: a new TLS connection for each request, as a browser's
    connections are closed under it."""

    def __init__(self, base: str, context: ssl.SSLContext) -> None:
        import http.cookiejar

        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar),
                                                  urllib.request.HTTPSHandler(context=context))
        token = json.loads(self.opener.open(base + "/api/csrf", timeout=10).read())["csrf"]
        req = urllib.request.Request(base + "/api/login", data=json.dumps({"password": PASSWORD, "name": "bench"}).encode(),
                                     headers={"Content-Type": "application/json", "X-CSRF-Token": token}, method="POST")
        self.opener.open(req, timeout=10).read()

    def ask(self) -> tuple[int | str, float]:
        t0 = time.monotonic()
        try:
            with self.opener.open(self.base + "/api/snapshot", timeout=10) as r:
                r.read()
                status: int | str = r.status
        except urllib.error.HTTPError as e:
            status = e.code
        except OSError as e:
            status = type(e).__name__
        return status, time.monotonic() - t0


def crowd(port: int, context: ssl.SSLContext, kind: str, held_most: int, stop: threading.Event, k: int, opened: list) -> None:
    held: list[socket.socket] = []
    i = 0
    try:
        while not stop.is_set():
            i += 1
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(SOURCES[i % len(SOURCES)], 0))
                if kind == "headers":
                    s = context.wrap_socket(s, server_hostname="127.0.0.1")
                    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                held.append(s)
                opened[k] += 1
            except OSError:
                continue  # refused or closed at once: the console's answer to most of them
            if len(held) > held_most:
                held.pop(0).close()
    finally:
        for s in held:
            s.close()


def phase(director: Director, seconds: float) -> tuple[list, list]:
    statuses, latencies = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        status, latency = director.ask()
        statuses.append(status)
        latencies.append(latency)
        time.sleep(0.2)
    return statuses, latencies


def report(name: str, statuses: list, latencies: list, rss: float) -> None:
    ok = statuses.count(200)
    print(f"{name:6} director: {ok}/{len(statuses)} answered 200, p50 {pct(latencies, 50) * 1000:.0f} ms, "
          f"p99 {pct(latencies, 99) * 1000:.0f} ms; console RSS {rss:.0f} MiB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", choices=["headers", "silent"], default="headers",
                    help="half a request after the TLS handshake, or no handshake at all")
    ap.add_argument("--held", type=int, default=1100, help="connections the crowd keeps open")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=20, help="the crowd's length")
    ap.add_argument("--quiet", type=float, default=5, help="the baseline before the crowd")
    ap.add_argument("--after", type=float, default=5)
    ap.add_argument("--console-from", type=Path, help="run `rackside hall console` from this checkout")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args()

    def run(procs: list, fleets: list) -> int:
        tmp = Path(tempfile.mkdtemp(prefix="rackside-crowd-"))
        broker = Mosquitto(tmp / "broker", tables=[])
        broker.start()
        procs.append(broker.proc)
        tlsfiles.make(tmp / "tls", HALL, ["127.0.0.1", "localhost"])
        context = ssl.create_default_context(cafile=str(tmp / "tls" / "ca.crt"))
        console, port = start_console(broker, tmp, HALL, PASSWORD, procs, cwd=args.console_from, quiet=True,
                                      extra=f'certfile = "{tmp / "tls" / "server.crt"}"\nkeyfile = "{tmp / "tls" / "server.key"}"\n')
        deadline = time.monotonic() + 20
        while True:  # it prints its address before uvicorn has bound the port
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        director = Director(f"https://127.0.0.1:{port}", context)
        statuses, latencies = phase(director, args.quiet)
        base = rss_mib(console.pid)
        report("quiet", statuses, latencies, base)
        stop, opened = threading.Event(), [0] * args.threads
        threads = [threading.Thread(target=crowd, args=(port, context, args.kind, args.held // args.threads, stop, k, opened))
                   for k in range(args.threads)]
        for t in threads:
            t.start()
        try:
            statuses, latencies = phase(director, args.seconds)
            during = rss_mib(console.pid)
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        report("crowd", statuses, latencies, during)
        print(f"       the crowd opened {sum(opened)} connections ({args.kind}) from {len(SOURCES)} addresses")
        crowd_ok, crowd_p99 = statuses.count(200) == len(statuses), pct(latencies, 99)
        statuses, latencies = phase(director, args.after)
        after = rss_mib(console.pid)
        report("after", statuses, latencies, after)
        print(f"RSS: +{during - base:.0f} MiB during (target <= 96), +{after - base:.0f} MiB after (target <= 24)")
        missed = [name for name, ok in (("every answer 200", crowd_ok), ("p99 <= 1 s", crowd_p99 <= 1.0),
                                        ("RSS during", during - base <= 96), ("RSS after", after - base <= 24)) if not ok]
        print("targets: " + ("all met" if not missed else "MISSED " + ", ".join(missed)))
        return 1 if args.check and missed else 0

    return guarded_run("console_crowd", run)


if __name__ == "__main__":
    raise SystemExit(main())
