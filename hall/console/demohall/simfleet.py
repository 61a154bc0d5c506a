"""Simulated tables spread over processes, so that a demo or a bench can run a 999-table hall.

paho's network loop waits with `select()`, which takes only descriptors below 1024, and each paho
client holds three (its socket and a wake-up pair): one process stops at about 340 tables. A
`SimFleet` gives each group of at most `PER_PROCESS` tables its own process running a `SimHall`
(`python -m rackside.hall.console.demohall.simfleet`), and offers the calls a caller makes of one hall:
`connect`, `script`, `start`, `act`, `close`.

The parent talks to each process over its stdin, one JSON line a message (the spec first, then
`script`, `start`, `act`); the process answers on stdout: `ready` once its tables are connected,
then every `STATS_EVERY_S` the inputs its tables have applied. Closing its stdin (the parent's
`close`, or the parent dying) closes its tables and ends it; Ctrl-C at a terminal reaches the
parent only, which closes them all.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from rackside.game import clock as C

PER_PROCESS = 200  # 3 descriptors a table: 600, well below select()'s 1024
STATS_EVERY_S = 2.0


def _rules_dict(rules: C.Rules) -> dict:
    return dict(rules.__dict__)


class _Worker:
    def __init__(self, spec: dict) -> None:
        self.tables = {int(n) for n in spec["tables"]}
        self.proc = subprocess.Popen([sys.executable, "-m", "rackside.hall.console.demohall.simfleet"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lock = threading.Lock()  # one writer at a time on the pipe
        self.ready = threading.Event()
        self.failed: str | None = None
        self.inputs = 0
        self.send(spec)
        self.reader = threading.Thread(target=self._read, name="simfleet-reader", daemon=True)
        self.reader.start()

    def send(self, msg: dict) -> None:
        with self.lock:
            self.proc.stdin.write(json.dumps(msg, separators=(",", ":")) + "\n")
            self.proc.stdin.flush()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "ready" in msg:
                self.ready.set()
            elif "failed" in msg:
                self.failed = msg["failed"]
                self.ready.set()
            elif "inputs" in msg:
                self.inputs = msg["inputs"]
        if not self.ready.is_set():
            self.failed = self.failed or f"exited with {self.proc.wait()}"
            self.ready.set()

    def close(self, timeout: float = 15.0) -> None:
        try:
            with self.lock:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class SimFleet:
    """`tables`: {n: (user, password, client id)} and `station`, as for SimHall; the station goes with the first group."""

    def __init__(self, hall: str, host: str, port: int, tables: dict[int, tuple[str, str, str]], journal_dir: Path, *,
                 rules: C.Rules | None = None, station: tuple[str, str, str, str] | None = None,
                 per_process: int = PER_PROCESS, faults: dict[int, tuple[str, ...]] | None = None) -> None:
        order = sorted(tables)
        groups = [order[i:i + per_process] for i in range(0, len(order), per_process)] or [[]]
        rules = rules or C.Rules()
        self.workers: list[_Worker] = []
        for i, group in enumerate(groups):
            self.workers.append(_Worker({
                "hall": hall, "host": host, "port": port, "journal_dir": str(journal_dir), "rules": _rules_dict(rules),
                "tables": {str(n): list(tables[n]) for n in group}, "station": list(station) if station and i == 0 else None,
                "faults": {str(n): list((faults or {}).get(n, ())) for n in group if (faults or {}).get(n)},
            }))
        self.by_table = {n: w for w in self.workers for n in w.tables}

    def connect(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        for w in self.workers:
            w.ready.wait(max(0.0, deadline - time.monotonic()))
            if w.failed or not w.ready.is_set():
                self.close()
                raise TimeoutError(f"simulated tables {min(w.tables)}-{max(w.tables)}: {w.failed or 'not connected in time'}")

    def script(self, n: int, steps: list) -> None:
        self.by_table[n].send({"script": [n, steps]})

    def start(self) -> None:
        for w in self.workers:
            w.send({"start": True})

    def act(self, n: int, action: tuple) -> None:
        self.by_table[n].send({"act": [n, action]})

    @property
    def inputs(self) -> int:
        """Inputs applied by every table so far (as of each process's last report)."""
        return sum(w.inputs for w in self.workers)

    @property
    def pids(self) -> list[int]:
        return [w.proc.pid for w in self.workers]

    def close(self) -> None:
        for w in self.workers:
            w.close()


# --- one process of the fleet --------------------------------------------------------------------


def _serve() -> int:
    from .sim import SimHall

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the parent's to handle: it closes us
    spec = json.loads(sys.stdin.readline())
    tables = {int(n): tuple(up) for n, up in spec["tables"].items()}
    sim = SimHall(spec["hall"], spec["host"], spec["port"], tables, Path(spec["journal_dir"]),
                  rules=C.Rules(**spec["rules"]), station=tuple(spec["station"]) if spec["station"] else None,
                  faults={int(n): tuple(f) for n, f in spec.get("faults", {}).items()})
    out = threading.Lock()

    def say(msg: dict) -> None:
        with out:
            sys.stdout.write(json.dumps(msg) + "\n")
            sys.stdout.flush()

    try:
        sim.connect(timeout=60)
    except TimeoutError as e:
        say({"failed": str(e)})
        sim.close()
        return 1
    say({"ready": len(tables)})
    done = threading.Event()

    def report() -> None:
        while not done.wait(STATS_EVERY_S):
            # a count read off the scheduler's tables for a report, never written here
            say({"inputs": sum(t.inputs for t in list(sim.tables.values()))})

    threading.Thread(target=report, name="simfleet-stats", daemon=True).start()
    try:
        for line in sys.stdin:
            msg = json.loads(line)
            if "script" in msg:
                n, steps = msg["script"]
                sim.script(int(n), [(s, tuple(a)) for s, a in steps])
            elif "act" in msg:
                n, action = msg["act"]
                sim.act(int(n), tuple(action))
            elif "start" in msg:
                sim.start()
    finally:
        done.set()
        sim.close()
    return 0


if __name__ == "__main__":
    sys.exit(_serve())
