#!/usr/bin/env python3
"""Replay and restore of a 100 MB journal in constant memory (issue 9, item 8).

    .venv/bin/python bench/replay_bench.py [--mb 100] [--before /work/main]

Writes a valid journal of `--mb` megabytes into a temporary directory (one long game under the
longest rules a config allows: presses every few milliseconds, restarts after neutralising,
director adjustments, no problem line), then runs, each in a child process of its own so its
peak RSS (ru_maxrss from wait4) is its own:

- baselines, measured in the same run: `python -c pass` (the interpreter's own RSS) and reading the
  file line by line with nothing done (`for line in f: pass`), and with json.loads on each line;
- `rackside clock replay FILE --json` (the audit);
- `GameStore.start` restoring the game from a copy of the state directory (the firmware's restore),
  once with no checkpoint (it folds every line) and once after a restore that left a checkpoint,
  as a running clock leaves one every 0.9 s (the checkpoint's sha256 of the journal vouches for
  the lines before it, so only the lines after it are folded);
- with `--before DIR`, the same two on another checkout (e.g. main before the fix), for comparison.

Prints RSS in MB and lines per second, and the ratios to the baselines. The targets (issue 9):
RSS under 64 MB and at least 200,000 lines/s. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MS = 1_000_000
RSS_TARGET_MB = 64
SPEED_TARGET = 200_000


def write_journal(path: Path, megabytes: int, seed: int = 9) -> int:
    """A valid journal of about `megabytes` MB (every line usable, the game never ends: the
        director gives both players 90 minutes again every 1,000 inputs); returns its input lines."""
    sys.path.insert(0, str(ROOT))
    from rackside.game.clock import Rules
    from rackside.game.journal import dumps, make_header

    rules = Rules(game_time_ms=(99 * 60 + 59) * 1000, forfeit_overtime_ms=(19 * 60 + 59) * 1000)
    rng = random.Random(seed)
    target = megabytes * 1_000_000
    t, seq, side, lines = 5_000_000_000_000, 0, None, 0
    out = bytearray()
    with open(path, "wb") as f:
        f.write((dumps(make_header(rules, boot_id="bench", source="start")) + "\n").encode())
        size = f.tell()
        while size < target:
            t += rng.randint(150, 4000) * MS + rng.randint(0, 999_999)  # a turn: past the switch guard
            seq += 1
            r = rng.random()
            if side is None:
                d, side = {"t_ns": t, "input": "press", "player": 2}, 1
            elif r < 0.01:  # neutralise, then the restart a moment later
                d = {"t_ns": t, "input": "neutralise"}
                out += (dumps({**d, "seq": seq}) + "\n").encode()
                t += rng.randint(1, 4) * MS
                seq += 1
                d = {"t_ns": t, "input": "neutralise"}
            elif r < 0.0105:  # the director gives both players their time back, now and then
                d = {"t_ns": t, "input": "adjust", "player": rng.choice([1, 2]), "remaining_ms": 90 * 60_000}
            else:
                d, side = {"t_ns": t, "input": "press", "player": side}, 3 - side
            out += (dumps({**d, "seq": seq}) + "\n").encode()
            if len(out) > 1 << 20:
                f.write(out)
                size += len(out)
                out.clear()
            if seq % 1_000 == 0:  # keep both players' time from running out in so long a game
                for p in (1, 2):
                    seq += 1
                    t += MS
                    out += (dumps({"t_ns": t, "input": "adjust", "player": p, "remaining_ms": 90 * 60_000, "seq": seq}) + "\n").encode()
        f.write(out)
    with open(path, "rb") as f:
        lines = sum(1 for _ in f) - 1
    return lines


def child(code: str, pythonpath: Path, *args: str) -> tuple[float, float, str]:
    """Run `python -c code args` with `pythonpath` first on the path; (wall seconds, peak RSS MB, stdout)."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=pythonpath)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    # wait4's rusage for this child alone: communicate() already reaped it, so take RUSAGE_CHILDREN
    # deltas instead would mix children; the child reports its own peak instead (below).
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}): {err.decode()[-2000:]}")
    lines = out.decode().strip().splitlines()
    rss_kb = int(lines[-1])
    return wall, rss_kb / 1024, "\n".join(lines[:-1])


# Each child prints its own ru_maxrss last (kilobytes on Linux): the peak of that process alone.
RSS = "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
PASS = RSS
READ = "import sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f: pass\n" + RSS
READ_JSON = "import sys, json\nwith open(sys.argv[1], 'rb') as f:\n    f.readline()\n    for line in f: json.loads(line)\n" + RSS
REPLAY = (
    "import sys, io, argparse\nfrom pathlib import Path\nfrom rackside.firmware import replay\nbuf = io.StringIO()\n"
    "code = replay.run(argparse.Namespace(file=Path(sys.argv[1]), json=True), stdout=buf)\n"
    "import json; d = json.loads(buf.getvalue()); print(d['inputs_applied'], len(d['problems']))\n" + RSS
)
RESTORE = (
    "import sys\nfrom rackside.game.clock import Rules\nfrom rackside.firmware.persist import GameStore\n"
    "from rackside.game.journal import read_journal\n"
    "rules = read_journal(sys.argv[2]).rules\n"
    "store = GameStore(sys.argv[1], rules, boot_id='bench')\nclock = store.start(10**16)\n"
    "print(store.restore_info is not None, clock.phase.value, 'from checkpoint' if store.restore_info.from_checkpoint else '')\n"
    "if len(sys.argv) > 3: store.checkpoint(clock, 10**16 + 1)  # for the next restore\n"
    "store.close()\n" + RSS
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--before", type=Path, help="another checkout to measure the same way (e.g. `git archive 683d8f8 | tar -x -C DIR`)")
    ap.add_argument("--dir", type=Path, help="where to write the journal (default: a temporary directory)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rackside-replay-bench-", dir=args.dir) as tmp:
        tmp = Path(tmp)
        journal = tmp / "game-000001.jsonl"
        t0 = time.perf_counter()
        lines = write_journal(journal, args.mb)
        size_mb = journal.stat().st_size / 1e6
        print(f"journal: {size_mb:.1f} MB, {lines:,} input lines (written in {time.perf_counter() - t0:.1f} s)")

        def restore(root: Path, checkpointed: bool = False) -> tuple[float, float, str]:
            state = tmp / "state"
            shutil.rmtree(state, ignore_errors=True)
            (state / "journals").mkdir(parents=True)
            shutil.copyfile(journal, state / "journals" / journal.name)
            if checkpointed:  # a restore that leaves a checkpoint, as a running clock would have
                child(RESTORE, root, str(state), str(journal), "checkpoint")
            return child(RESTORE, root, str(state), str(journal))

        rows = []
        for name, code, root, extra in [
            ("baseline: python -c pass", PASS, ROOT, ()),
            ("baseline: read lines", READ, ROOT, (str(journal),)),
            ("baseline: read + json.loads", READ_JSON, ROOT, (str(journal),)),
            ("replay --json", REPLAY, ROOT, (str(journal),)),
            ("restore (GameStore.start)", None, ROOT, ()),
            ("restore after a checkpoint", None, ROOT, ("checkpointed",)),
        ] + ([("before: replay --json", REPLAY, args.before, (str(journal),)), ("before: restore", None, args.before, ())] if args.before else []):
            wall, rss, out = restore(root, bool(extra)) if code is None else child(code, root, *extra)
            rows.append((name, wall, rss, out))
            print(f"  {name:<30} {wall:7.2f} s  {lines / wall:>11,.0f} lines/s  peak RSS {rss:7.1f} MB  {out.replace(chr(10), ' ')}", flush=True)
        base_rss = rows[0][2]
        read_speed = lines / rows[1][1]
        json_speed = lines / rows[2][1]
        failed = False
        for name, wall, rss, _ in rows[3:6]:
            speed = lines / wall
            ok = rss < RSS_TARGET_MB and speed >= SPEED_TARGET
            failed |= not ok
            print(f"{name}: {speed:,.0f} lines/s ({speed / read_speed:.2f} x raw line reading, {speed / json_speed:.2f} x "
                  f"json.loads of each line), peak RSS {rss:.1f} MB "
                  f"({rss - base_rss:+.1f} MB over the bare interpreter); targets: < {RSS_TARGET_MB} MB, >= {SPEED_TARGET:,} lines/s: "
                  f"{'PASS' if ok else 'FAIL'}")
        if args.before:
            for now, then in ((rows[3], rows[6]), (rows[4], rows[7])):
                print(f"{now[0]} vs before: {then[1] / now[1]:.1f}x faster, {then[2] / now[2]:.0f}x less memory")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
