"""Power loss (issue 5), fault test with a reduced count for CI: a real firmware process is
SIGKILLed at random moments 50-300 ms after it starts, and every restart is checked (state
restored neutralised with the last record's times, the running player lost no more than 1 s, the
journal readable by the replay). Two drivers: the real `firmware.runner.Runner` loop on mock pins
fed scripted presses (its write-ahead, display, fsync-per-batch order), and `GameStore` driven
directly. `bench/power_loss.py` runs the full 200 kills.

This is a fault-injection run: it necessarily uses real time (a real process being killed),
bounded to a few seconds. The restore logic itself is unit-tested with injected time in
tests/test_persist.py.
"""

from __future__ import annotations

import random

import pytest

from rackside.game.clock import Press, Rules, apply
from rackside.firmware.persist import GameStore

from support.bench import load_bench

S = 1_000_000_000


harness = load_bench("power_loss")


@pytest.mark.slow
@pytest.mark.parametrize("driver, kills", [("runner", 16), ("store", 20)])
def test_sigkill_at_random_moments_every_restart_is_restored_within_the_bound(tmp_path, driver, kills):
    r = harness.run_kills(kills, tmp_path, seed=20261129, min_ms=50, max_ms=300, interval_ms=100, tear=0.4, driver=driver)
    figures = (f"{driver}: checked {r.checked}, died before reporting {r.died_before_report}, tears {r.tears}, "
               f"restored running {r.restored_running}, from checkpoint {r.from_checkpoint}, "
               f"stalls {r.stalls}, losses from kill {sorted(r.losses_ns)[-3:]}, "
               f"from heartbeat {sorted(r.alive_losses_ns)[-3:]}")
    assert r.failures == [], f"{r.failures[:5]} {figures}"
    assert r.kills == kills
    assert r.checked >= kills // 2, figures  # most restarts got as far as reporting (some die mid-start)
    assert r.tears >= 1, figures  # the power also went mid-append at least once (fixed seed)
    # from the kill (stalls excepted: the machine did not let the process run) and from the last
    # moment the process demonstrably ran: never more than 1 s, never negative (downtime charged)
    assert r.alive_losses_ns and 0 <= min(r.alive_losses_ns) and max(r.alive_losses_ns) <= harness.LOSS_BOUND_NS, figures
    assert r.losses_ns and min(r.losses_ns) >= 0, figures
    assert r.restored_running >= 1 and r.from_checkpoint >= 1, figures  # a running clock was cut (fixed seed)
    assert r.stalls <= r.kills // 2, "the machine was too loaded to run the clock at all: " + figures


def _snapshot_of_a_running_game(tmp_path, kill_ns):
    state = tmp_path / "state"
    store = GameStore(state, Rules(), boot_id="boot")
    clock = store.start(0)
    for event in [Press(1 * S, 2), Press(5 * S, 1)]:  # player 2 running since 5 s
        store.record(event)
        clock = apply(clock, event)
    store.checkpoint(clock, 6 * S)
    store.close()
    return state, harness.snapshot(state, kill_ns)


def test_the_checker_accepts_a_correct_restore(tmp_path):
    state, snap = _snapshot_of_a_running_game(tmp_path, kill_ns=6 * S + 300_000_000)
    report = {"pid": 1, "t_ns": 10 * S, "journal": "game-000001.jsonl", "restored": True, "phase": "neutralised",
              "side": 2, "remaining_ns": [1496 * S, 1499 * S], "at_ns": 6 * S, "from_checkpoint": True}
    results = harness.Results()
    harness.check_restart(report, snap, state, results)
    assert results.failures == [] and results.losses_ns == [300_000_000]


@pytest.mark.parametrize(
    "change, complaint",
    [
        ({"remaining_ns": [1496 * S, 1498 * S]}, "differ from the last record"),  # downtime charged
        ({"at_ns": 5 * S, "remaining_ns": [1496 * S, 1500 * S]}, "last record is"),  # checkpoint ignored
        ({"phase": "running"}, "came back running"),
        ({"restored": False}, "was not restored"),
    ],
)
def test_the_checker_flags_a_bad_restore(tmp_path, change, complaint):
    state, snap = _snapshot_of_a_running_game(tmp_path, kill_ns=6 * S + 300_000_000)
    report = {"pid": 1, "t_ns": 10 * S, "journal": "game-000001.jsonl", "restored": True, "phase": "neutralised",
              "side": 2, "remaining_ns": [1496 * S, 1499 * S], "at_ns": 6 * S, "from_checkpoint": True, **change}
    results = harness.Results()
    harness.check_restart(report, snap, state, results)
    assert any(complaint in f for f in results.failures), results.failures


REPORT = {"pid": 1, "t_ns": 10 * S, "journal": "game-000001.jsonl", "restored": True, "phase": "neutralised",
          "side": 2, "remaining_ns": [1496 * S, 1499 * S], "at_ns": 6 * S, "from_checkpoint": True}


def test_the_checker_flags_a_loss_over_one_second(tmp_path):
    state, snap = _snapshot_of_a_running_game(tmp_path, kill_ns=8 * S)  # 2 s after the checkpoint
    results = harness.Results()
    # the process was alive until 7.9 s, so it should have checkpointed after 6 s: a real loss
    harness.check_restart(REPORT, snap, state, results, alive_ns=7_900_000_000, interval_ns=S // 10)
    assert any("lost 2000.0 ms from the kill" in f for f in results.failures)
    assert any("lost 1900.0 ms from the last heartbeat" in f for f in results.failures)


def test_a_machine_stall_is_counted_and_checked_from_the_last_heartbeat(tmp_path):
    state, snap = _snapshot_of_a_running_game(tmp_path, kill_ns=8 * S)
    results = harness.Results()
    # last seen alive at 6.05 s, then not run for 1.95 s before the kill: a stall, not a store fault
    harness.check_restart(REPORT, snap, state, results, alive_ns=6_050_000_000, interval_ns=S // 10)
    assert results.failures == [] and results.stalls == 1
    assert results.alive_losses_ns == [50_000_000] and results.losses_ns == [2 * S]


def test_the_checker_flags_a_restore_dated_after_the_process_died(tmp_path):
    state, snap = _snapshot_of_a_running_game(tmp_path, kill_ns=6 * S + 300_000_000)
    results = harness.Results()
    harness.check_restart(REPORT, snap, state, results, killed_by_ns=5 * S)
    assert any("after the process was dead" in f for f in results.failures)


def test_a_torn_append_is_what_a_power_cut_leaves(tmp_path):
    state, _ = _snapshot_of_a_running_game(tmp_path, kill_ns=7 * S)
    before = (state / "journals" / "game-000001.jsonl").read_bytes()
    harness.tear_journal(state, random.Random(3), 7 * S)
    after = (state / "journals" / "game-000001.jsonl").read_bytes()
    assert after.startswith(before) and len(after) > len(before) and not after.endswith(b"\n")


@pytest.mark.slow
@pytest.mark.parametrize("driver", ["runner", "store"])
def test_the_harness_fails_a_build_that_acts_on_a_press_without_journalling_it(tmp_path, driver):
    """Issue 9, item 11: the harness records every input the clock acted on (the driver tells it
    through its pipe, which survives the SIGKILL) and checks after every kill, restarts killed
    before reporting included, that each one is in the journal. A deliberately broken build of
    the driver (every other press acted on, not journalled) must fail it."""
    r = harness.run_kills(6, tmp_path, seed=7, min_ms=400, max_ms=900, interval_ms=100, tear=0.0, early=0.0,
                          driver=driver, broken=True)
    assert r.acted > 0, r
    assert any("acted on before the kill but not in the journal" in f for f in r.failures), r.failures[:5]
