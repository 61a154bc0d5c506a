#!/usr/bin/env python3
"""Keypad latency: from a key's contact closing to the clock's runner handling its `Key` (issue 27 item 1).

    .venv/bin/python bench/keypad_latency.py              # 300 presses of each
    .venv/bin/python bench/keypad_latency.py --presses 50

The clock is assembled as `rackside clock --simulate` assembles it (`firmware.cli.Clock`, config
`[keypad] enabled = true`), on gpiozero's MockFactory pins, its runner and the keypad's scanner on
their own threads as on a Pi. Each round closes a contact on the mock pins, dated just before, and
waits until the runner's thread has handled what it made:

- key-to-runner: a keypad key: the column's edge wakes the scanner's thread, which scans the rows,
  debounces, and queues a `Key` the runner handles;
- the baseline, in the same run: a player's button, whose edge goes straight into the queue.

Then key-to-display: before the game a digit is typed for check-in (issue 27, docs/table.md), so
the displays show it: each round clears what was typed (`*`), closes a digit's contact and waits
until the (recording) displays are told the digit: the scanner, the runner, the journal's write
ahead of applying it, the render. A real display adds its own time (bench/clock_latency.py). Also printed: how far a key's timestamp is from
the moment its contact closed (it should be the edge's time, not the scan's), and one scan's
duration on the mock pins (a Pi's lgpio pins cost differently: measure there).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=300, help="presses of each kind (default 300)")
    args = parser.parse_args(argv)

    from gpiozero.pins.mock import MockFactory

    from rackside.firmware.cli import Clock

    with tempfile.TemporaryDirectory(prefix="rackside-keypad-bench-") as tmp:
        config = Path(tmp) / "clock.toml"
        config.write_text("[keypad]\nenabled = true\n")
        ns = argparse.Namespace(config=config, state_dir=Path(tmp) / "state", simulate=True, hall=None,
                                hall_credentials=None, hall_join=None, device_id=None)
        clock = Clock(ns, pin_factory=MockFactory())
        runner, board, keypad = clock.runner, clock.board, clock.keypad
        handled = threading.Event()
        seen: dict[str, int] = {}
        key_stamp: list[int] = []
        original_key, original_edge = runner._key, runner._edge

        def on_key(m, t):  # the runner's own handling, timed on its thread
            if m.down:
                seen["at"] = time.monotonic_ns()
                key_stamp.append(m.t_ns)
                handled.set()
            original_key(m, t)

        def on_edge(button, down, t):
            if down:
                seen["at"] = time.monotonic_ns()
                handled.set()
            original_edge(button, down, t)

        runner._key, runner._edge = on_key, on_edge
        clock.start()
        thread = threading.Thread(target=runner.run, name="runner", daemon=True)
        thread.start()
        results: dict[str, list[float]] = {"keypad key": [], "button (baseline)": []}
        stamp_error: list[float] = []
        try:
            for i in range(args.presses):
                for kind in results:
                    handled.clear()
                    key = "0123456789*#"[i % 12]
                    t0 = time.monotonic_ns()
                    if kind == "keypad key":
                        keypad.drive(key, True)
                    else:
                        board.drive("neutralise", True)
                    if not handled.wait(10):
                        raise SystemExit(f"bench/keypad_latency.py: a {kind} was never handled")
                    results[kind].append((seen["at"] - t0) / 1e6)
                    if kind == "keypad key":
                        stamp_error.append((key_stamp[-1] - t0) / 1e6)
                        keypad.drive(key, False)
                    else:
                        board.drive("neutralise", False)
                    time.sleep(0.04)  # released and settled (15 ms) before the next press
            # Key to display: a digit typed before the game (check-in) shown on both displays.
            shown = threading.Event()
            want: dict[str, str] = {}
            left = clock.displays[0]
            left.watchers.append(lambda: shown.set() if want.get("text") is not None and want["text"](left.text) else None)

            def until_shown(test) -> None:
                want["text"] = test
                if not test(left.text):
                    if not shown.wait(10):
                        raise SystemExit("bench/keypad_latency.py: the displays never showed the key")
                want["text"] = None
                shown.clear()

            results["keypad digit to display"] = []
            for i in range(args.presses):
                keypad.drive("*", True)
                until_shown(lambda text: ":" in text)  # nothing typed: the time again
                keypad.drive("*", False)
                time.sleep(0.04)
                digit = "123456789"[i % 9]
                shown.clear()
                t0 = time.monotonic_ns()
                keypad.drive(digit, True)
                until_shown(lambda text, d=digit: text == f"{d:>4}")
                results["keypad digit to display"].append((time.monotonic_ns() - t0) / 1e6)
                keypad.drive(digit, False)
                time.sleep(0.04)
            # One scan, on the mock pins, with nothing down (what an edge costs the scanner's thread).
            t0 = time.perf_counter()
            n = 200
            for _ in range(n):
                keypad._scan()
            scan_ms = (time.perf_counter() - t0) / n * 1e3
        finally:
            runner.stop()
            thread.join(timeout=5)
            clock.close()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; {args.presses} presses of each")
    base = statistics.median(results["button (baseline)"])
    print(f"{'contact closed -> runner handled it':<38} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8} {'p50 vs baseline':>16}")
    for kind, values in results.items():
        p50 = statistics.median(values)
        print(f"{kind:<38} {p50:>8.3f} {_pct(values, 90):>8.3f} {_pct(values, 99):>8.3f} {max(values):>8.3f} {p50 / base if base else 0:>15.1f}x")
    print(f"key timestamp minus contact closing:  p50 {statistics.median(stamp_error):.3f} ms, p99 {_pct(stamp_error, 99):.3f} ms, "
          f"max {max(stamp_error):.3f} ms "
          "(the column's edge, not the scan; a preemption between dating and closing the contact adds to it)")
    print(f"one scan of the 4 rows on MockFactory pins: {scan_ms:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
