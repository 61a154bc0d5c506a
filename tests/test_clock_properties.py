"""Hypothesis properties of the clock core, for any input sequence with non-decreasing times.

- the players' played times plus neutral time add up to the total elapsed (downtime excluded);
- remaining time rises only by director adjustment (1.4.1(b)), or at a late arrival to the whole
  second the display showed (2.3.3(b): the time showing is the time assigned); the display itself
  never rises but by adjustment;
- the penalty formula holds at every moment (5.3: 10 points per minute or part thereof of
  overtime in whole seconds), and the display agrees with it;
- presses from the side not running change nothing (3.4.1): the result equals `settle(clock, t)`;
  while waiting for latecomers only a press while both are absent acts (2.3.2(b): an arrival).
- the clock seen at t2 is the same whether or not anyone looked at it in between.

Short games (1 minute) are mixed in so overtime, the 5.3.3 forfeit and lateness forfeits happen.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rackside.game.clock import (
    Adjust,
    Arrive,
    End,
    Ending,
    Forfeit,
    LateStart,
    Neutralise,
    Phase,
    Press,
    Resume,
    Rules,
    _apply_general,
    apply,
    new_clock,
    phase_at,
    settle,
    shown_ns,
    view,
)

from support.clock import sample_rules

S = 1_000_000_000
MS = 1_000_000

RULES = sample_rules()

gaps = st.one_of(
    st.integers(0, 150 * MS),  # button mashing and the switch guard
    st.integers(0, 90 * S),  # real turns
    st.just(0),  # simultaneous inputs
)
player = st.sampled_from([1, 2])
kinds = st.one_of(
    st.tuples(st.just("press"), player),
    st.tuples(st.just("press"), player),
    st.tuples(st.just("press"), player),
    st.tuples(st.just("neutralise")),
    st.tuples(st.just("adjust"), player, st.integers(0, 3_000_000)),
    st.tuples(st.just("late_start"), st.sampled_from([(1,), (2,), (1, 2)])),
    st.tuples(st.just("arrive"), player),
    st.tuples(st.just("forfeit"), player),
    st.tuples(st.just("resume"), st.integers(-30 * S, 30 * S)),
    st.tuples(st.just("end")),
)
games = st.tuples(st.sampled_from(RULES), st.lists(st.tuples(gaps, kinds), max_size=40))


def build(rules: Rules, steps) -> list:
    """Concrete inputs with non-decreasing timestamps. A resume's `at_ns` is somewhere around the
    previous input (it may be before it: the core must then charge nothing extra)."""
    t, events = 0, []
    for gap, kind in steps:
        t += gap
        name = kind[0]
        if name == "press":
            events.append(Press(t, kind[1]))
        elif name == "neutralise":
            events.append(Neutralise(t))
        elif name == "end":
            events.append(End(t))
        elif name == "adjust":
            # somewhere above the forfeit line: from just above it to the game time and more
            floor = -rules.forfeit_overtime_ms
            events.append(Adjust(t, kind[1], floor + 1 + kind[2] * (rules.game_time_ms - floor) // 1_500_000))
        elif name == "late_start":
            events.append(LateStart(t, kind[1]))
        elif name == "arrive":
            events.append(Arrive(t, kind[1]))
        elif name == "forfeit":
            events.append(Forfeit(t, kind[1]))
        else:
            events.append(Resume(t_ns=t, at_ns=max(0, t - gap) + kind[1]))
    return events


def remaining(c, t):
    return [p.remaining_ns for p in view(c, t).players]


FAST = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(games)
def test_played_times_plus_neutral_time_add_up_to_the_total(game):
    rules, steps = game
    c = new_clock(rules)
    total = 0
    last = None  # the previous input's time on the current boot's clock
    for event in build(rules, steps):
        if isinstance(event, Resume):
            if last is not None:
                total += max(0, event.at_ns - last)  # up to the last moment known; downtime never
            last = event.t_ns
        else:
            if last is not None:
                total += event.t_ns - last
            last = event.t_ns
        c = apply(c, event)
        assert c.played_ns[0] + c.played_ns[1] + c.neutral_ns == total
        assert c.since_ns - c.origin_ns == total
        assert min(c.played_ns) >= 0 and c.neutral_ns >= 0


@FAST
@given(games, st.integers(0, 20 * 60 * S))
def test_remaining_time_rises_only_by_director_adjustment(game, later):
    rules, steps = game
    c = new_clock(rules)
    for event in build(rules, steps):
        before = remaining(c, c.since_ns if c.since_ns is not None else event.t_ns)
        nxt = apply(c, event)
        after = remaining(nxt, nxt.since_ns)
        for p in (1, 2):
            if isinstance(event, Adjust) and event.player == p:
                assert after[p - 1] == event.remaining_ms * MS or c.phase is Phase.ENDED or (
                    settle(c, event.t_ns).phase is Phase.ENDED
                )
                continue
            if after[p - 1] > before[p - 1]:  # only an arrival, and only up to the time showing
                arrived = c.phase is Phase.LATE and c.absent[p - 1] and not nxt.absent[p - 1] and nxt.phase is not Phase.ENDED
                assert arrived and after[p - 1] == shown_ns(before[p - 1]), (event, p, before, after)
        # and time alone never gives time back
        assert all(a >= b for a, b in zip(after, remaining(nxt, nxt.since_ns + later)))
        c = nxt


@FAST
@given(games, st.integers(0, 20 * 60 * S))
def test_the_penalty_formula_holds_and_the_display_shows_it(game, later):
    rules, steps = game
    c = new_clock(rules)
    for event in build(rules, steps):
        c = apply(c, event)
        for t in (c.since_ns, c.since_ns + later):
            v = view(c, t)
            for p in v.players:
                over_s = max(0, -p.remaining_ns) // S  # whole seconds, fractions ignored (5.3)
                assert p.overtime_s == over_s
                assert p.penalty == -(-over_s // 60) * rules.penalty_per_minute
                minutes, seconds = p.text.lstrip("-").split(":")
                shown = int(minutes) * 60 + int(seconds)
                if p.remaining_ns > 0:  # never 0:00 while time remains; rounded up
                    assert not p.text.startswith("-") and shown == -(-p.remaining_ns // S) > 0
                else:  # overtime readable off the display
                    assert shown == over_s and p.text.startswith("-") == (over_s > 0)
                assert p.overtime_s * S <= rules.forfeit_overtime_ms * MS  # the clock stops at the forfeit
            if v.ending is Ending.OVERTIME_FORFEIT:
                (loser,) = v.forfeits
                forfeit_s = rules.forfeit_overtime_ms // 1000
                assert v.players[loser - 1].overtime_s == forfeit_s
                assert v.players[loser - 1].penalty == -(-forfeit_s // 60) * rules.penalty_per_minute


@FAST
@given(games, gaps, player)
def test_presses_from_the_side_not_running_change_nothing(game, gap, p):
    rules, steps = game
    c = new_clock(rules)
    checked = 0
    for event in build(rules, steps) + [Neutralise(0)]:
        if c.since_ns is not None:
            t = c.since_ns + gap
            late = c.phase is Phase.LATE and not all(settle(c, t).absent)
            if late or c.phase is Phase.ENDED or (c.phase in (Phase.RUNNING, Phase.NEUTRALISED) and p != c.side):
                assert apply(c, Press(t, p)) == settle(c, t)
                checked += 1
        if event.t_ns < (c.since_ns or 0):
            break
        c = apply(c, event)


@FAST
@given(games)
def test_an_ended_game_never_changes_again(game):
    rules, steps = game
    c = new_clock(rules)
    for event in build(rules, steps):
        settled = settle(c, event.t_ns) if c.since_ns is not None else None
        nxt = apply(c, event)
        if settled is not None and settled.phase is Phase.ENDED and not isinstance(event, Resume):
            assert nxt == settled
        c = nxt


@FAST
@given(games, st.integers(0, 30 * 60 * S), st.floats(0, 1))
def test_looking_at_the_clock_in_between_changes_nothing(game, later, fraction):
    """Time-triggered rules (5.3.3, 2.3.5) are derived from timestamps: the clock seen at t2 is the
    same whether or not it was settled at some t1 in between."""
    rules, steps = game
    c = new_clock(rules)
    for event in build(rules, steps):
        c = apply(c, event)
        t2 = c.since_ns + later
        t1 = c.since_ns + int(later * fraction)
        assert view(settle(c, t1), t2) == view(c, t2)


@FAST
@given(games, st.integers(0, 30 * 60 * S))
def test_phase_at_is_the_phase_of_the_settled_clock(game, later):
    """The runner's cheap question (issue 11) has the core's answer."""
    rules, steps = game
    c = new_clock(rules)
    assert phase_at(c, later) is c.phase
    for event in build(rules, steps):
        c = apply(c, event)
        for t in (c.since_ns, c.since_ns + later):
            assert phase_at(c, t) is settle(c, t).phase


def _outcome(f, c, event):
    try:
        return f(c, event)
    except Exception as e:  # noqa: BLE001 - the error itself is the outcome compared
        return (type(e), str(e))


@FAST
@given(games, st.lists(gaps, min_size=1, max_size=3))
def test_the_fast_path_of_apply_is_the_general_path(game, probes):
    """`apply` settles and applies a press or a neutralisation on a running clock in one step
    (issue 9, item 8: replay speed); it must give exactly the clock (or the error) that settling
    and then applying gives, for every clock a game reaches and every input after it, including
    one too early (time going backwards) and one past the forfeit line (5.3.3)."""
    rules, steps = game
    c = new_clock(rules)
    for event in build(rules, steps):
        t0 = c.since_ns or 0
        for gap in probes + [-1, (rules.game_time_ms + rules.forfeit_overtime_ms) * MS]:
            t = t0 + gap
            for probe in (Press(t, 1), Press(t, 2), Press(t, 3), Neutralise(t)):
                assert _outcome(apply, c, probe) == _outcome(_apply_general, c, probe)
        c = apply(c, event)
