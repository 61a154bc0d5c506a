"""Benchmark the lexicon core against a plain Python set and raw marisa-trie, in the same run.

    .venv/bin/python bench/lexicon_bench.py [--runs N] [--lookups N]

For each word list it compiles a Rackside lexicon and a marisa-trie file from the same words,
then measures every contender in fresh subprocesses (so RSS and open time are not polluted by
the others): time from opening the file to the first lookup answered (Rackside's includes its
full integrity check), RSS added (VmRSS after open minus before), file size, and lookups per
second for hits and for misses. Each figure is printed with its ratio to the set, and Rackside's
with its ratio to marisa-trie, followed by pass/fail against the targets of issue 3.

Word lists: ../shared/lexicons/enable.txt and scowl-large.txt (relative to the repository) when
that folder exists; otherwise only the ENABLE list shipped in judge/data.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "lexicons"
sys.path.insert(0, str(REPO))

CONTENDERS = ("set", "marisa-mmap", "marisa-load", "rackside")
PASSES = 7  # best of several passes: the machine is shared, and a busy neighbour only ever slows a pass
LABELS = {
    "set": "Python set (from text)",
    "marisa-mmap": "marisa-trie mmap (no check)",
    "marisa-load": "marisa-trie load (no check)",
    "rackside": "Rackside Lexicon.open",
}


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def _samples(word_file: str, n: int) -> tuple[list[str], list[str]]:
    """`n` words of the list (hits) and `n` one-letter-changed non-words (realistic misses)."""
    with open(word_file) as f:
        words = [w for w in f.read().split() if 2 <= len(w) <= 15 and w.isalpha() and w.isascii()]
    words = [w.upper() for w in words]
    known = set(words)
    rng = random.Random(2024)
    hits = [rng.choice(words) for _ in range(n)]
    misses: list[str] = []
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    while len(misses) < n:
        w = rng.choice(words)
        i = rng.randrange(len(w))
        candidate = w[:i] + rng.choice(letters) + w[i + 1 :]
        if candidate not in known:
            misses.append(candidate)
    return hits, misses


def _rate(container, sample: list[str], expect: bool) -> float:
    best = float("inf")
    for _ in range(PASSES):
        start = time.perf_counter()
        found = 0
        for w in sample:
            if w in container:
                found += 1
        best = min(best, time.perf_counter() - start)
        wanted = len(sample) if expect else 0
        if found != wanted:
            raise SystemExit(f"wrong answers: {found} of {len(sample)} found, expected {wanted}")
    return len(sample) / best


def _open(kind: str, path: str):
    import marisa_trie

    from rackside.judge.lexicon import Lexicon

    if kind == "set":
        with open(path) as f:
            return set(f.read().split())
    if kind == "marisa-mmap":
        trie = marisa_trie.Trie()
        trie.mmap(path)
        return trie
    if kind == "marisa-load":
        trie = marisa_trie.Trie()
        trie.load(path)
        return trie
    if kind == "rackside":
        return Lexicon.open(path)
    raise SystemExit(f"unknown contender {kind}")


def worker(kind: str, path: str, word_file: str, first: str, lookups: int) -> None:
    """One measurement in this fresh process; prints a JSON object. With `lookups` 0 it measures
    open time and RSS added; otherwise lookup rates, with the samples built before the open so
    that their memory is not counted, and how much RSS the lookups themselves add."""
    import gc

    import marisa_trie  # noqa: F401  (imports are not part of the open time)

    import rackside.judge.lexicon  # noqa: F401

    samples = _samples(word_file, lookups) if lookups else None
    gc.collect()
    rss0 = _rss_kb()
    start = time.perf_counter_ns()
    container = _open(kind, path)
    ok = first in container
    elapsed = time.perf_counter_ns() - start
    rss1 = _rss_kb()
    if not ok:
        raise SystemExit(f"{kind}: first lookup of {first} failed")
    if samples is None:
        print(json.dumps({"open_ms": elapsed / 1e6, "rss_kb": rss1 - rss0}))
        return
    hits, misses = samples
    result = {"hits_per_s": _rate(container, hits, True), "misses_per_s": _rate(container, misses, False)}
    result["lookup_rss_kb"] = _rss_kb() - rss1
    print(json.dumps(result))


def _run_worker(*args: str) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--worker", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{args[0]} worker failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def measure(kind: str, path: Path, word_file: Path, first: str, runs: int, lookups: int) -> dict:
    """Median open time and RSS over `runs` fresh processes, then lookup rates in one more."""
    opens = [_run_worker(kind, str(path), str(word_file), first, "0") for _ in range(runs)]
    summary = _run_worker(kind, str(path), str(word_file), first, str(lookups))
    summary["open_ms"] = statistics.median(r["open_ms"] for r in opens)
    summary["rss_kb"] = statistics.median(r["rss_kb"] for r in opens)
    summary["size"] = path.stat().st_size
    return summary


def prepare(name: str, text_file: Path, tmp: Path) -> dict[str, Path]:
    import marisa_trie

    from rackside.judge.lexicon import compile_lexicon, parse_word_list

    rlex = tmp / f"{name}.rlex"
    start = time.perf_counter()
    report = compile_lexicon(text_file, rlex, name)
    compile_s = time.perf_counter() - start
    words, _ = parse_word_list(text_file.read_text())
    marisa = tmp / f"{name}.marisa"
    marisa_trie.Trie(words).save(str(marisa))
    print(f"\n== {name}: {text_file} ({text_file.stat().st_size:,} bytes), {report.words:,} words of 2-15 letters "
          f"kept, {sum(report.skipped.values()):,} lines skipped; compiled in {compile_s:.2f} s")
    return {"set": text_file, "marisa-mmap": marisa, "marisa-load": marisa, "rackside": rlex}


def _fmt_ratio(value: float, base: float) -> str:
    if not base:
        return "-"
    r = value / base
    return f"1/{1 / r:.0f}" if r < 0.5 and r > 0 else f"{r:.2f}x"


def report(name: str, results: dict[str, dict]) -> list[tuple[str, bool, str]]:
    base = results["set"]
    header = (f"{'contender':<29} {'open→1st lookup':>16} {'vs set':>7} {'RSS added':>10} {'vs set':>7} "
              f"{'file size':>11} {'vs set':>7} {'hits/s':>11} {'vs set':>7} {'misses/s':>11} {'vs set':>7}")
    print(header)
    print("-" * len(header))
    for kind in CONTENDERS:
        r = results[kind]
        print(f"{LABELS[kind]:<29} {r['open_ms']:>13.3f} ms {_fmt_ratio(r['open_ms'], base['open_ms']):>7} "
              f"{r['rss_kb'] / 1024:>7.2f} MB {_fmt_ratio(r['rss_kb'], base['rss_kb']):>7} "
              f"{r['size'] / 1e6:>8.2f} MB {_fmt_ratio(r['size'], base['size']):>7} "
              f"{r['hits_per_s'] / 1e6:>7.2f} M/s {_fmt_ratio(r['hits_per_s'], base['hits_per_s']):>7} "
              f"{r['misses_per_s'] / 1e6:>7.2f} M/s {_fmt_ratio(r['misses_per_s'], base['misses_per_s']):>7}")
    rs, mm, ml = results["rackside"], results["marisa-mmap"], results["marisa-load"]
    print("RSS added by the lookups themselves (pages of the file touched): " + ", ".join(
        f"{LABELS[k].split(' (')[0]} {results[k]['lookup_rss_kb'] / 1024:.2f} MB" for k in CONTENDERS))
    print(f"Rackside vs marisa-trie mmap: open {_fmt_ratio(rs['open_ms'], mm['open_ms'])}, "
          f"RSS {_fmt_ratio(rs['rss_kb'], mm['rss_kb'] or 1)}, file {_fmt_ratio(rs['size'], mm['size'])}, "
          f"hits {_fmt_ratio(rs['hits_per_s'], mm['hits_per_s'])}, misses {_fmt_ratio(rs['misses_per_s'], mm['misses_per_s'])}"
          f"; vs marisa-trie load: open {_fmt_ratio(rs['open_ms'], ml['open_ms'])}")
    checks = [
        (f"{name}: open-to-first-lookup ≤ 2 ms", rs["open_ms"] <= 2.0, f"{rs['open_ms']:.3f} ms"),
        (f"{name}: open-to-first-lookup ≤ 1/30 of the set's load", rs["open_ms"] <= base["open_ms"] / 30,
         f"{rs['open_ms']:.3f} ms vs {base['open_ms'] / 30:.3f} ms (set {base['open_ms']:.1f} ms)"),
        (f"{name}: RSS added ≤ 1/10 of the set's", rs["rss_kb"] <= base["rss_kb"] / 10,
         f"{rs['rss_kb'] / 1024:.2f} MB vs {base['rss_kb'] / 10240:.2f} MB"),
        (f"{name}: ≥ 1M lookups/s (hits)", rs["hits_per_s"] >= 1e6, f"{rs['hits_per_s'] / 1e6:.2f} M/s"),
        (f"{name}: ≥ 1M lookups/s (misses)", rs["misses_per_s"] >= 1e6, f"{rs['misses_per_s'] / 1e6:.2f} M/s"),
    ]
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per contender for open time and RSS")
    parser.add_argument("--lookups", type=int, default=100_000, help="hits and misses per lookup pass")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, path, word_file, first, lookups = args.worker
        worker(kind, path, word_file, first, int(lookups))
        return 0

    import marisa_trie  # noqa: F401  (fail early if the venv lacks it)

    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; median of {args.runs} fresh processes for "
          f"open time and RSS; best of {PASSES} passes over {args.lookups:,} hits and {args.lookups:,} misses")
    with tempfile.TemporaryDirectory(prefix="rackside-bench-") as tmpdir:
        tmp = Path(tmpdir)
        lists: list[tuple[str, Path]] = []
        if SHARED.is_dir():
            for name, file in (("ENABLE", "enable.txt"), ("SCOWL-large", "scowl-large.txt")):
                if (SHARED / file).is_file():
                    lists.append((name, SHARED / file))
        if not lists:
            print(f"{SHARED} not found: benchmarking the ENABLE list shipped in judge/data only")
            from rackside.judge.lexicon import DEFAULT_SOURCE

            text = tmp / "enable.txt"
            text.write_bytes(lzma.decompress(DEFAULT_SOURCE.read_bytes()))
            lists.append(("ENABLE (shipped)", text))
        checks = []
        for name, text_file in lists:
            files = prepare(name.split()[0], text_file, tmp)
            first = next(w for w in text_file.read_text().split() if 2 <= len(w) <= 15).upper()
            results = {kind: measure(kind, files[kind], text_file, first, args.runs, args.lookups)
                       for kind in CONTENDERS}
            checks += report(name, results)
    print("\n== Targets (issue 3), Rackside against the set")
    for label, passed, detail in checks:
        print(f"{'PASS' if passed else 'FAIL'}  {label}: {detail}")
    failed = sum(not passed for _, passed, _ in checks)
    print(f"{len(checks) - failed} of {len(checks)} targets met")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
