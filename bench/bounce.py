"""Bouncing and mashed buttons, the full run (issue 5): 10,000 presses through gpiozero's mock pins.

Each turn-ending press and its release toggle the contact for a random 1-10 ms (edges 50 us to
2 ms apart), as worn push buttons do, and while one player thinks the other sometimes mashes their
own (not running) button, with bounce too. Everything goes through the real firmware path: MockPin
edges -> the board's queue -> the runner's debounce, gestures and core -> the journal (fsync'd).

Checked: every press the players made reached the clock's core exactly once, dated at its first
edge, and nothing else did (read from the journal, which holds every input the clock acted on: a
bounce taken for a press is an extra press even when the core ignores it, as it ignores presses
from the side not running); every press switches the clock exactly once (no double switch, no
missed press); no mashing ever changes anything; and each player is charged exactly the sum of
their turns measured edge to edge, to the nanosecond.

The harness tests itself (issue 9): after the run it runs again, shorter, with the debouncer
switched off (settle time 0) and must see that run fail; if it does not, the harness is blind and
the script fails. The mock pins are dated by a fake clock the script advances, so
the run takes as long as the computer needs, not as long as the games would.

    .venv/bin/python bench/bounce.py [--presses 10000] [--seed 1] [--self-test-presses 500]

tests/test_bounce.py runs the same scenario with 500 presses.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MS = 1_000_000
T0 = 1_000 * 1_000_000_000
PINS = {"left": 17, "right": 27, "neutralise": 22}
SETTLE_MARGIN = 20 * MS  # a player presses again no sooner than this after their button settled


def contact_edges(t0: int, down: bool, rng: random.Random) -> list[tuple[int, bool]]:
    """A contact change at `t0` with 1-10 ms of toggling; the line ends at `down`."""
    bounce = rng.randint(1 * MS, 10 * MS)
    edges, t, level = [(t0, down)], t0, down
    while True:
        t += rng.randint(50_000, 2 * MS)
        if t >= t0 + bounce:
            break
        level = not level
        edges.append((t, level))
    if level != down:
        edges.append((t0 + bounce, down))
    return edges


def run_bounce(presses: int, seed: int = 1, state_dir: Path | None = None, settle_ns: int | None = None) -> dict:
    import gpiozero.pins.mock as mock
    from gpiozero.pins.mock import MockFactory

    from rackside.game.clock import Rules
    from rackside.firmware.persist import GameStore
    from rackside.firmware.display_output import DisplaysOutput
    from rackside.firmware.runner import Runner
    from rackside.hardware.board import Board
    from rackside.hardware.display import RecordingDisplay

    rng = random.Random(seed)
    now = [T0]
    saved_monotonic = mock.monotonic
    mock.monotonic = lambda: now[0] / 1e9
    tmp = None
    if state_dir is None:
        # tmpfs when there is one: this run is about debouncing, not about the disk's fsync speed
        shm = Path("/dev/shm")
        tmp = tempfile.TemporaryDirectory(prefix="rackside-bounce-", dir=shm if shm.is_dir() else None)
        state_dir = Path(tmp.name)
    board = store = runner = None
    try:
        rules = Rules(game_time_ms=99 * 60_000, forfeit_overtime_ms=99 * 60_000)  # long enough for any run
        board = Board(PINS, pin_factory=MockFactory(), clock_ns=lambda: now[0])
        displays = [RecordingDisplay("left"), RecordingDisplay("right")]
        store = GameStore(state_dir, rules, boot_id="bench")
        runner = Runner(rules=rules, store=store, outputs=[DisplaysOutput(displays)], events=board.events, clock_ns=lambda: now[0],
                        **({} if settle_ns is None else {"settle_ns": settle_ns}))
        runner.start()

        # The whole timeline first, then every edge of every button played in time order (as the
        # contacts would produce them), the runner handling each as it comes.
        timeline: list[tuple[int, str, bool]] = []
        last_settled = {"left": 0, "right": 0}  # when each line was last released and settled

        def add(edges: list[tuple[int, bool]], button: str) -> int:
            timeline.extend((t, button, down) for t, down in edges)
            return edges[-1][0]

        # The right player's press starts the left player's time (2.2).
        first = now[0] + 10 * MS
        end_press = add(contact_edges(first, True, rng), "right")
        last_settled["right"] = add(contact_edges(end_press + 60 * MS, False, rng), "right") + SETTLE_MARGIN
        running, turn_start = 1, first
        expected = [0, 0]
        switches_expected = [first]
        presses_made = [(first, 2)]  # (first edge, player): what the core must be given, once each
        mashes = 0
        for _ in range(presses):
            button = "left" if running == 1 else "right"
            waiting_button = "right" if running == 1 else "left"
            press_t = max(turn_start + rng.randint(150 * MS, 3000 * MS), last_settled[button])
            m0 = max(turn_start, last_settled[waiting_button]) + rng.randint(0, 2000 * MS)
            if rng.random() < 0.3 and m0 + 30 * MS < press_t:  # the waiting player mashes their own button
                end_mash = add(contact_edges(m0, True, rng), waiting_button)
                presses_made.append((m0, 3 - running))
                last_settled[waiting_button] = add(contact_edges(end_mash + rng.randint(20 * MS, 80 * MS), False, rng), waiting_button) + SETTLE_MARGIN
                mashes += 1
            end_press = add(contact_edges(press_t, True, rng), button)
            presses_made.append((press_t, running))
            last_settled[button] = add(contact_edges(end_press + rng.randint(20 * MS, 250 * MS), False, rng), button) + SETTLE_MARGIN
            expected[running - 1] += press_t - turn_start
            switches_expected.append(press_t)
            running, turn_start = 3 - running, press_t
        timeline.sort(key=lambda e: e[0])

        switches: list[int] = []
        worst = 0.0
        t_wall = time.perf_counter()
        def record_switch() -> None:
            s = runner.clock.switched_ns
            if s is not None and (not switches or switches[-1] != s):
                switches.append(s)

        for t, button, down in timeline:
            while (due := runner.next_due_ns(now[0])) is not None and due <= t:  # wake as the loop would
                now[0] = max(now[0], due)
                runner.pump()
                record_switch()
            now[0] = t
            board.drive(button, down)
            t1 = time.perf_counter()
            runner.pump()
            worst = max(worst, time.perf_counter() - t1)
            record_switch()
        now[0] = timeline[-1][0] + 100 * MS
        runner.pump()
        wall = time.perf_counter() - t_wall
        played = list(runner.clock.played_ns)  # accounted up to the last press, as `expected` is
        ok_time = played == expected
        matched = sum(1 for a, b in zip(switches, switches_expected) if a == b)
        # every press the core was given, from the journal (it holds every input acted on)
        from collections import Counter

        from rackside.game.clock import Press
        from rackside.game.journal import read_journal

        store.sync()
        acted = Counter((e.t_ns, e.player) for line in read_journal(store.journal_path).iter_lines()
                        if isinstance(e := line.event, Press))
        made = Counter(presses_made)
        extra = sum((acted - made).values())  # a bounce (or anything else) taken for a press
        missed = sum((made - acted).values())
        return {
            "presses": presses,
            "switches": len(switches) - 1,
            "extra_presses": extra,
            "missed_presses": missed,
            "double_or_missed": abs(len(switches) - len(switches_expected)) + (len(switches_expected) - matched) + extra + missed,
            "mashes": mashes,
            "edges": len(timeline),
            "charged_exact": ok_time,
            "charged_ns": played,
            "expected_ns": expected,
            "journal_lines": len(store.journal_path.read_text().splitlines()) - 1,
            "wall_s": wall,
            "worst_pump_ms": worst * 1000,
        }
    finally:
        mock.monotonic = saved_monotonic
        if runner is not None:
            runner.close()
        if board is not None:
            board.close()
        if store is not None:
            store.close()
        if tmp is not None:
            tmp.cleanup()


def passed(r: dict) -> bool:
    want = r["presses"] + r["mashes"] + 1
    return r["double_or_missed"] == 0 and r["charged_exact"] and r["journal_lines"] == want


def report(r: dict) -> None:
    print(f"presses:              {r['presses']}")
    print(f"edges driven:         {r['edges']} (bounce on press and release, 1-10 ms)")
    print(f"mashes by the waiting player: {r['mashes']}")
    print(f"clock switches:       {r['switches']}")
    print(f"presses the core was given beyond those made (bounce taken for a press): {r['extra_presses']}; "
          f"presses made that never reached it: {r['missed_presses']}")
    print(f"double or missed:     {r['double_or_missed']}")
    want = r["presses"] + r["mashes"] + 1
    print(f"journal inputs:       {r['journal_lines']} (expected 1 start + 1 per press + 1 per mash = {want})")
    print(f"charged time exact:   {r['charged_exact']} (player 1 {r['charged_ns'][0] / 1e9:.9f} s, player 2 {r['charged_ns'][1] / 1e9:.9f} s)")
    print(f"wall time:            {r['wall_s']:.1f} s; slowest batch {r['worst_pump_ms']:.2f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presses", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--self-test-presses", type=int, default=500, help="presses of the run with debouncing off (0: skip)")
    args = ap.parse_args()
    r = run_bounce(args.presses, args.seed)
    report(r)
    ok = passed(r)
    print("PASS" if ok else "FAIL")
    if args.self_test_presses:
        print(f"\nself-test of the harness: {args.self_test_presses} presses with the debouncer switched off (settle 0 ms)")
        broken = run_bounce(args.self_test_presses, args.seed, settle_ns=0)
        report(broken)
        if passed(broken):
            print("SELF-TEST FAILED: the harness passed a clock with no debouncing; it cannot see bounce")
            ok = False
        else:
            print("self-test: FAIL as it must be (the harness sees a clock with no debouncing)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
