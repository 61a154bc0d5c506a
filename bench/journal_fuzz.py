#!/usr/bin/env python3
"""Mutation fuzzing of the journal reader, the replay and the restore (issue 9, item 7).

    .venv/bin/python bench/journal_fuzz.py [--mutations 3000] [--seed 9]

Takes the real journals in tests/data/journals (and one this script records with sequence numbers
and a state line, as a full card leaves it), damages each at random, many times over (bit flips;
bytes deleted, inserted, duplicated or zeroed; lines dropped, repeated, swapped or cut; numbers
swapped for 1e400, -0, huge integers or NaN; values swapped for deep nesting or other types), and
for every mutant checks that:

- reading it raises nothing but JournalError, and only for a bad header (line 1);
- `rackside clock replay FILE [--json]` exits 0 or 2 (a bad header) and never raises;
- the clock's restore (`GameStore.start`) never raises: a bad header starts a fresh journal and
  keeps the damaged one; otherwise the clock it returns can be shown and pressed.

Prints the counts and exits 1 on any failure, printing the mutant. tests/test_journal.py runs a few
hundred of the same mutations in CI.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rackside.game.clock import Neutralise, Press, Rules, apply, view  # noqa: E402
from rackside.game.journal import JournalError, parse_journal  # noqa: E402
from rackside.firmware.persist import GameStore  # noqa: E402
from rackside.game.replay import fold, run  # noqa: E402

DATA = ROOT / "tests" / "data" / "journals"
S = 1_000_000_000

NASTY = [b"1e400", b"-1e400", b"NaN", b"Infinity", b"-0", b"1" * 5000, b"99999999999999999999999999", b"null",
         b"true", b'"x"', b"[]", b"{}", b"[" * 3000 + b"]" * 3000, b"[" * 100_000, b"-1", b"0.5", b"\xff\xfe"]


def recorded_journal() -> bytes:
    """A journal as the store writes it now: sequence numbers, lost inputs, a state line, a resume."""
    with tempfile.TemporaryDirectory() as tmp:
        store = GameStore(tmp, Rules(), boot_id="fuzz")
        clock = store.start(0)
        for i, t in enumerate(range(1, 12)):
            event = Press(t * S, 2 if i % 2 == 0 else 1)
            if i not in (5, 6):
                store.record(event)
            else:
                store._seq += 1  # as a full card leaves it: numbered, acted on, not written
                store._lost.append([store._seq, store._seq])
            clock = apply(clock, event)
        store.checkpoint(clock, 12 * S)
        store.close()
        again = GameStore(tmp, Rules(), boot_id="fuzz")
        again.start(20 * S)
        path = again.journal_path
        again.close()
        return path.read_bytes()


def seeds() -> list[tuple[str, bytes]]:
    found = [(p.name, p.read_bytes()) for p in sorted(DATA.glob("*.jsonl"))]
    try:
        return found + [("recorded-with-seq.jsonl", recorded_journal())]
    except AttributeError:  # a build from before sequence numbers (`--before` comparisons)
        return found


def mutate(raw: bytes, rng: random.Random) -> bytes:
    """One to four random kinds of damage."""
    data = bytearray(raw)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(10)
        n = len(data)
        if n == 0:
            data += rng.choice(NASTY)
            continue
        i = rng.randrange(n)
        if kind == 0:  # flip a bit
            data[i] ^= 1 << rng.randrange(8)
        elif kind == 1:  # delete a run of bytes
            del data[i : i + rng.randint(1, 40)]
        elif kind == 2:  # insert random bytes
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 20)))
        elif kind == 3:  # zero a run (what a power cut leaves in a block)
            j = min(n, i + rng.randint(1, 64))
            data[i:j] = b"\0" * (j - i)
        elif kind == 4:  # cut the file short
            del data[i:]
        else:
            lines = bytes(data).split(b"\n")
            k = rng.randrange(len(lines))
            if kind == 5:  # drop a line
                del lines[k]
            elif kind == 6:  # repeat a line
                lines.insert(k, lines[k])
            elif kind == 7:  # swap two lines
                m = rng.randrange(len(lines))
                lines[k], lines[m] = lines[m], lines[k]
            else:  # put a nasty value where a number or value was
                line = lines[k]
                spots = [j for j in range(len(line)) if line[j : j + 1] == b":"]
                if spots:
                    j = rng.choice(spots) + 1
                    end = j
                    while end < len(line) and line[end : end + 1] not in (b",", b"}"):
                        end += 1
                    lines[k] = line[:j] + rng.choice(NASTY) + line[end:]
            data = bytearray(b"\n".join(lines))
    return bytes(data)


class Args:
    def __init__(self, file: Path, json: bool) -> None:
        self.file, self.json = file, json


def check(mutant: bytes, workdir: Path) -> str | None:
    """None if every reader behaved; else what went wrong."""
    try:
        journal = parse_journal(mutant, "mutant.jsonl")
    except JournalError:
        journal = None
    except Exception:  # noqa: BLE001 - that is the finding
        return "parse_journal raised: " + traceback.format_exc(limit=3)
    if journal is not None:
        try:
            fold(journal)
        except Exception:  # noqa: BLE001
            return "fold raised: " + traceback.format_exc(limit=3)
    path = workdir / "mutant.jsonl"
    path.write_bytes(mutant)
    for as_json in (False, True):
        try:
            code = run(Args(path, as_json), stdout=io.StringIO(), stderr=io.StringIO())
        except Exception:  # noqa: BLE001
            return f"replay (json={as_json}) raised: " + traceback.format_exc(limit=3)
        if code not in (0, 2) or (code == 2) != (journal is None):
            return f"replay (json={as_json}) exited {code}"
    state = workdir / "state"
    (state / "journals").mkdir(parents=True, exist_ok=True)
    for old in (state / "journals").iterdir():
        old.unlink()
    (state / "checkpoint.json").unlink(missing_ok=True)
    (state / "journals" / "game-000001.jsonl").write_bytes(mutant)
    store = GameStore(state, Rules(), boot_id="fuzz")
    try:
        clock = store.start(10**15)
        t = max(10**15, clock.since_ns or 0)
        view(clock, t)
        for event in (Press(t + S, 1), Press(t + 2 * S, 2), Neutralise(t + 3 * S)):
            store.record(event)
            clock = apply(clock, event)
        view(clock, t + 4 * S)
    except Exception:  # noqa: BLE001
        return "restore raised: " + traceback.format_exc(limit=4)
    finally:
        store.close()
    kept = (state / "journals" / "game-000001.jsonl").read_bytes()
    if not kept.startswith(mutant):
        return "the restore did not keep the damaged journal as it was"
    return None


def fuzz(mutations: int, seed: int = 9, progress=None) -> tuple[dict, list[tuple[str, bytes, str]]]:
    rng = random.Random(seed)
    corpus = seeds()
    counts = {"mutants": 0, "bad_header": 0}
    failures: list[tuple[str, bytes, str]] = []
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(prefix="rackside-fuzz-", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None) as tmp:
        for i in range(mutations):
            name, raw = corpus[i % len(corpus)]
            mutant = mutate(raw, rng)
            counts["mutants"] += 1
            try:
                parse_journal(mutant)
            except JournalError:
                counts["bad_header"] += 1
            except Exception:  # noqa: BLE001 - check() reports it
                pass
            problem = check(mutant, Path(tmp))
            if problem:
                failures.append((name, mutant, problem))
            if progress and (i + 1) % 500 == 0:
                progress(f"{i + 1} mutants, {len(failures)} failures")
    return counts, failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutations", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=9)
    args = ap.parse_args(argv)
    import logging

    logging.disable(logging.CRITICAL)  # every mutant logs its damage; the counts are the output
    counts, failures = fuzz(args.mutations, args.seed, progress=lambda s: print("  " + s, flush=True))
    print(f"mutants: {counts['mutants']} of {len(seeds())} journals; bad headers (refused whole, exit 2, a fresh "
          f"journal at restore): {counts['bad_header']}; failures: {len(failures)}")
    for name, mutant, problem in failures[:5]:
        print(f"FAIL {name}: {problem}\n  mutant: {mutant[:300]!r}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
