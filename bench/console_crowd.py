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

`--network netns` puts the console and its broker in a network namespace of their own (the
director's machine, 10.25.0.1) and the crowd and the director in another (the hall's network: the
director at 10.25.0.100, the crowd at 10.25.0.2 .. 10.25.0.21), joined by a veth pair
(tests/support/netns.py; needs root): on loopback every address is the machine's own, which a
firewall rightly never limits. `--nft FILE` loads that rule set on the director's machine first
(deploy/rackside-console.nft, its port set to the console's).

Targets: every one of the director's requests answered 200 during the crowd, its p99 <= 1 s; the
console's RSS at most 96 MiB over the baseline during the crowd and at most 24 MiB over it after
(before issue 25: 1 answer in 36, and 36 -> 340 MiB for good). `--console-from DIR` runs the
console from another checkout (an older commit, the broken build). `--check` exits 1 when a target
is missed.

    .venv/bin/python bench/console_crowd.py [--kind headers|silent] [--held 1100] [--seconds 20] [--check]
        [--network netns [--nft deploy/rackside-console.nft]]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import guarded_run, pct, rss_mib, scratch, start_console  # noqa: E402
from rackside.hall.console.demohall.demo import HALL, Mosquitto  # noqa: E402
from rackside.hall.director import tlsfiles  # noqa: E402

PASSWORD = "crowd-password"
SOURCES = [f"127.0.0.{i}" for i in range(2, 22)]
HALL_DIRECTOR, HALL_SOURCES = "10.25.0.100", [f"10.25.0.{i}" for i in range(2, 22)]  # --network netns


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


def crowd(host: str, port: int, sources: list[str], context: ssl.SSLContext, kind: str, held_most: int, stop: threading.Event,
          k: int, opened: list, where) -> None:
    """`where()`: where this thread's sockets are made (the hall's network namespace, or here)."""
    held: list[socket.socket] = []
    i = 0
    with where():
        try:
            while not stop.is_set():
                i += 1
                try:
                    s = socket.create_connection((host, port), timeout=2, source_address=(sources[i % len(sources)], 0))
                    if kind == "headers":
                        s = context.wrap_socket(s, server_hostname=host)
                        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                    held.append(s)
                    opened[k] += 1
                except OSError:
                    continue  # refused, dropped or closed at once: the console's (or the firewall's) answer to most of them
                if len(held) > held_most:
                    held.pop(0).close()
        finally:
            for s in held:
                s.close()


def phase(director: Director, seconds: float, where=contextlib.nullcontext) -> tuple[list, list]:
    statuses, latencies = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with where():
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
    ap.add_argument("--network", choices=["loopback", "netns"], default="loopback",
                    help="the crowd on loopback addresses, or from another network namespace over a veth pair (root)")
    ap.add_argument("--nft", type=Path, metavar="FILE", help="with --network netns: load this nftables rule set on the director's machine")
    ap.add_argument("--director", choices=["hall", "machine"], default="hall",
                    help="with --network netns: the director's browser on the hall's network (10.25.0.100), or on the console's machine")
    args = ap.parse_args()
    if args.nft and args.network != "netns":
        ap.error("--nft needs --network netns (on loopback every address is the machine's own)")

    def run(procs: list, fleets: list) -> int:
        with contextlib.ExitStack() as stack:
            return run_in(procs, stack)

    def run_in(procs: list, stack: contextlib.ExitStack) -> int:
        tmp = scratch("rackside-crowd-")
        host, sources, where, net = "127.0.0.1", SOURCES, contextlib.nullcontext, None
        if args.network == "netns":
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
            from support import netns

            why = netns.available()
            if why:
                raise SystemExit(f"console_crowd: --network netns: {why}")
            net = stack.enter_context(netns.TwoMachines([HALL_DIRECTOR, *HALL_SOURCES]))  # the first: the director's source
            stack.enter_context(net.on_the_machine())  # this thread, and every process it starts, on the director's machine
            host, sources, where = net.machine_address, HALL_SOURCES, net.on_hall
        director_at = where if args.director == "hall" else contextlib.nullcontext
        broker = Mosquitto(tmp / "broker", tables=[])
        broker.start()
        procs.append(broker.proc)
        tlsfiles.make(tmp / "tls", HALL, ["127.0.0.1", "localhost", host])
        context = ssl.create_default_context(cafile=str(tmp / "tls" / "ca.crt"))
        console, port = start_console(broker, tmp, HALL, PASSWORD, procs, cwd=args.console_from, quiet=True,
                                      host="0.0.0.0" if args.network == "netns" else "127.0.0.1",
                                      extra=f'certfile = "{tmp / "tls" / "server.crt"}"\nkeyfile = "{tmp / "tls" / "server.key"}"\n')
        if args.nft:
            rules = args.nft.read_text().replace("define console_port = 8443\n", f"define console_port = {port}\n")
            if f"define console_port = {port}\n" not in rules:
                raise SystemExit(f"console_crowd: {args.nft} has no line 'define console_port = 8443' to set the console's port in")
            (tmp / "rules.nft").write_text(rules)
            subprocess.run(["nft", "-f", str(tmp / "rules.nft")], check=True)
            print(f"nftables: {args.nft} loaded on the director's machine (console_port = {port})")

        def nft_dropped() -> int:
            listed = json.loads(subprocess.run(["nft", "-j", "list", "table", "inet", "rackside_console"], check=True,
                                               capture_output=True, text=True).stdout)["nftables"]
            return sum(e["counter"]["packets"] for r in listed if "rule" in r for e in r["rule"]["expr"] if "counter" in e)
        deadline = time.monotonic() + 20
        while True:  # it prints its address before uvicorn has bound the port
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        with director_at():
            director = Director(f"https://{host}:{port}", context)
        statuses, latencies = phase(director, args.quiet, director_at)
        base = rss_mib(console.pid)
        report("quiet", statuses, latencies, base)
        stop, opened = threading.Event(), [0] * args.threads
        threads = [threading.Thread(target=crowd, args=(host, port, sources, context, args.kind, args.held // args.threads, stop, k,
                                                        opened, where))
                   for k in range(args.threads)]
        for t in threads:
            t.start()
        try:
            statuses, latencies = phase(director, args.seconds, director_at)
            during = rss_mib(console.pid)
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        report("crowd", statuses, latencies, during)
        print(f"       the crowd opened {sum(opened)} connections ({args.kind}) from {len(sources)} addresses ({args.network})")
        if net is not None:  # the director's machine's own counters: new connections its full listening queue dropped
            tcp = net.netstat()
            print(f"       listening queue: {tcp.get('ListenOverflows', 0)} overflows, {tcp.get('ListenDrops', 0)} drops"
                  + (f"; the rule set dropped {nft_dropped()} connection attempts" if args.nft else ""))
        crowd_ok, crowd_p99 = statuses.count(200) == len(statuses), pct(latencies, 99)
        statuses, latencies = phase(director, args.after, director_at)
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
