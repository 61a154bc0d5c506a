"""What the live tourney.js costs the console's event loop (issue 28 item 3): one gather
(on the loop: the results read from the store) and one render (on a thread: the results applied,
TSH's writer; hall/console/scoring/tshlive.py) of each real
event in tests/data/tsh and of a made-up big division (1,000 players, 30 rounds, a result for every
game), against a same-run baseline: the stdlib's C `json.dumps` of the same players' data. They run
at most once every tshlive.WRITE_EVERY_S, so the gather's time over that interval is the loop's
share; the render's is a thread's (it holds the GIL in slices, so the loop still runs between).

    .venv/bin/python bench/tourney_js_bench.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rackside.hall.console.scoring import results, tsh, tshlive  # noqa: E402
from rackside.hall.console.state.event import Event  # noqa: E402
from rackside.hall.console.scoring.resultstore import ResultStore  # noqa: E402

DATA = ROOT / "tests" / "data" / "tsh"


def timed(f, n: int = 9) -> float:
    """The median of n runs, in ms."""
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def big_event(players: int = 1000, rounds: int = 30) -> Event:
    # player n plays n+1 (n odd) every round, at board (n+1)/2: a made-up hall, every game recorded
    text = "\n".join(f"Player {n:04d}, Some {2000 - n} {' '.join([str(((n - 1) ^ 1) + 1)] * rounds)}; ; "
                     f"board {' '.join(str((n - 1) // 2 + 1) for _ in range(rounds))}; p12 {' '.join(['1' if n % 2 else '2'] * rounds)}"
                     for n in range(1, players + 1))
    ev = Event(ResultStore(None))
    ev.import_files({"config.tsh": "division A a.t\nconfig max_rounds = 30\n", "a.t": text.encode("latin-1")})
    for r in range(1, rounds + 1):
        for n in range(1, players + 1, 2):
            ev.store.record(results.Recorded("A", r, (n + 1) // 2, (n, n + 1), ("", ""), (400, 380), (400, 380), (0, 0),
                                             (0, 0), "end", ""), "bench")
    return ev


def main() -> int:
    rows = []
    for event in ("july4-2025", "albany-2024"):
        folder = DATA / event
        cfg = tsh.parse_config((folder / "config.tsh").read_text("utf-8"))
        ev = Event(ResultStore(None))
        ev.import_files({n: (folder / n).read_bytes() for n in ["config.tsh", *[f for _, f in cfg.divisions]]})
        rows.append((f"{event} (config.tsh, .t)", ev))
        js = Event(ResultStore(None))
        js.import_files({"tourney.js": (folder / "tourney.js").read_bytes()})
        rows.append((f"{event} (tourney.js)", js))
    rows.append(("1,000 players x 30 rounds, 15,000 results", big_event()))
    print(f"{'event':46} {'first ms':>9} {'gather ms':>10} {'render ms':>10} {'json.dumps ms':>14} {'bytes':>10} {'loop share':>11}")
    for name, ev in rows:
        carried, kept = tshlive.Carried(), tshlive.Rows()
        tshlive.render(tshlive.gather(ev, kept), carried)
        cold = timed(lambda: tshlive.gather(ev), 3)  # every result decoded (the first gather)
        gms = timed(lambda: tshlive.gather(ev, kept))  # as at every change: only what changed
        gathered = tshlive.gather(ev, kept)
        ms = timed(lambda: tshlive.render(gathered, carried))
        data = [{n: [p.name, p.rating, p.opponents, p.scores, p.etc] for n, p in d.players.items()} for d in ev.divisions.values()]
        base = timed(lambda: json.dumps(data, default=list))
        text, _ = tshlive.render(tshlive.gather(ev), carried)
        print(f"{name:46} {cold:9.1f} {gms:10.1f} {ms:10.1f} {base:14.1f} {len(text.encode()):10d} {gms / (tshlive.WRITE_EVERY_S * 10):10.2f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
