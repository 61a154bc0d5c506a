"""Issue 5's bouncing and mashed buttons through gpiozero's mock pins, reduced to 500 presses for
CI (bench/bounce.py runs the full 10,000 with the same scenario)."""

from support.bench import load_bench


def test_500_bouncing_presses_switch_exactly_once_each_and_charge_exact_time():
    r = load_bench().run_bounce(500, seed=7)  # state on tmpfs when there is one: fsync is not the subject
    assert r["switches"] == 500
    assert r["double_or_missed"] == 0
    assert r["charged_exact"], (r["charged_ns"], r["expected_ns"])
    assert r["journal_lines"] == 500 + r["mashes"] + 1
    assert r["mashes"] > 50  # the waiting player really did mash their button


def test_the_harness_fails_when_debouncing_is_switched_off():
    """Issue 9, item 12: a harness that cannot fail proves nothing. With the debouncer disabled
    (settle time 0: every bounce edge is a press), the run must report double presses and fail."""
    bench = load_bench()
    r = bench.run_bounce(300, seed=7, settle_ns=0)
    assert r["double_or_missed"] > 0, r
    assert r["extra_presses"] > 0 and not bench.passed(r)
