"""The pure debouncer: first-edge acceptance, bounce rejection, no repeat while held."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rackside.firmware.debounce import Debouncer

from support.bench import load_bench

MS = 1_000_000
SETTLE = 15 * MS
contact_edges = load_bench().contact_edges  # the same contact model as the full 10,000-press run


def test_first_falling_edge_is_the_press_at_its_exact_time():
    d = Debouncer(SETTLE)
    assert d.edge(1_000 * MS + 123, True) is True
    assert d.down_since_ns == 1_000 * MS + 123
    assert d.held(1_000 * MS + 5 * MS)


def test_bounce_after_a_press_is_ignored():
    d = Debouncer(SETTLE)
    assert d.edge(100 * MS, True)
    for i, t in enumerate(range(101, 110)):
        assert d.edge(t * MS, i % 2 == 1) is False  # up, down, up ...
    assert d.held(112 * MS)


def test_release_is_final_only_after_the_settle_time_and_is_dated_at_the_last_rising_edge():
    d = Debouncer(SETTLE)
    d.edge(100 * MS, True)
    d.edge(300 * MS, False)
    d.edge(302 * MS, True)
    d.edge(304 * MS, False)
    assert d.release_due_ns() == 304 * MS + SETTLE
    assert d.poll(304 * MS + SETTLE - 1) is None
    assert d.poll(304 * MS + SETTLE) == 304 * MS
    assert not d.down


def test_a_new_press_needs_the_line_released_for_the_settle_time():
    d = Debouncer(SETTLE)
    d.edge(100 * MS, True)
    d.edge(200 * MS, False)
    assert d.edge(200 * MS + SETTLE - 1, True) is False  # release bounce, not a press
    d.edge(201 * MS + SETTLE, False)
    assert d.edge(201 * MS + 2 * SETTLE, True) is True


def test_a_held_button_never_repeats():
    d = Debouncer(SETTLE)
    assert d.edge(0, True)
    assert d.held(3_600_000 * MS)  # an hour later
    assert d.poll(3_600_000 * MS) is None
    assert d.edge(3_600_000 * MS, True) is False  # the same level reported again


def test_a_button_held_at_start_up_is_not_a_press_until_released():
    d = Debouncer(SETTLE, raw_down=True)
    assert not d.held(0)
    assert d.edge(10 * MS, True) is False
    d.edge(50 * MS, False)
    assert d.edge(50 * MS + SETTLE, True) is True


def test_negative_settle_refused():
    with pytest.raises(ValueError, match="settle_ns"):
        Debouncer(-1)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), presses=st.integers(1, 40))
def test_random_bounce_never_doubles_or_misses_a_press(seed, presses):
    """Issue 5 in miniature: 1-10 ms of toggling on both press and release, presses at least
    the settle time apart after a release settles: exactly one accepted press each, dated at the
    press's first edge."""
    rng = random.Random(seed)
    d = Debouncer(SETTLE)
    t = 0
    accepted, expected = [], []
    for _ in range(presses):
        t += SETTLE + rng.randint(0, 200 * MS)
        expected.append(t)
        press = contact_edges(t, True, rng)
        t += rng.randint(30 * MS, 400 * MS)  # held
        release = contact_edges(t, False, rng)
        for when, level in press + release:
            d.poll(when)
            if d.edge(when, level):
                accepted.append(when)
        t = release[-1][0]
    assert accepted == expected
