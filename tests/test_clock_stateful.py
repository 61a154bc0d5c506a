"""A Hypothesis state machine for the clock core: random games, checked after every step against the
promises of `game/clock.py`'s docstring:

- inputs in, state out: `apply` never changes the clock it was given (plain immutable values), and
  folding the same inputs again (`run`, as the replay does) gives the same clock;
- the clock stores the time each player has *played* and derives what remains: played times plus
  neutral time add up to the time elapsed on the clock's own timestamps (downtime never counts);
  between inputs only a running side's (or an absent player's) remaining time goes down, exactly as
  fast as time passes, until a time-triggered rule stops it; and nothing else changes by itself;
- time-triggered rules (the 5.3.3 overtime forfeit, the 2.3.5 lateness forfeit) are derived from
  timestamps: the clock seen later is the same whether or not anyone looked in between;
- only inputs that can never be valid raise `ClockInputError`; an ended game never changes again.
"""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from rackside.game.clock import (
    Adjust,
    Arrive,
    End,
    Forfeit,
    LateStart,
    Neutralise,
    Phase,
    Press,
    Resume,
    apply,
    new_clock,
    run,
    settle,
    view,
)

from support.clock import sample_rules

S = 1_000_000_000
MS = 1_000_000

RULES = sample_rules()
gaps = st.one_of(st.integers(0, 150 * MS), st.integers(0, 120 * S), st.just(0))
players = st.sampled_from([1, 2])


class ClockMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.rules = None
        self.clock = None
        self.looked = None  # the same clock, settled at random moments in between ("someone looked")
        self.inputs: list = []
        self.t = 0  # the latest input's time on the current boot's clock
        self.elapsed = 0  # time on the clock's own timestamps, downtime excluded
        self.started = False
        self.looked_since_input = False

    # --- set up -----------------------------------------------------------------------------

    @precondition(lambda self: self.clock is None)
    @rule(rules=st.sampled_from(RULES), t0=st.integers(0, 10**15))
    def start(self, rules, t0):
        self.rules, self.t = rules, t0
        self.clock = self.looked = new_clock(rules)

    # --- inputs -----------------------------------------------------------------------------

    def _feed(self, event) -> None:
        before = self.clock
        frozen = copy.deepcopy(before)
        resume = isinstance(event, Resume)  # its t_ns is on the new boot's clock
        settled = settle(before, event.t_ns) if before.since_ns is not None and not resume else None
        if isinstance(event, Resume):
            if self.started:
                self.elapsed += max(0, event.at_ns - self.t)
        elif self.started:
            self.elapsed += event.t_ns - self.t
        self.started = True
        self.looked_since_input = False
        self.t = event.t_ns
        self.clock = apply(before, event)
        self.looked = apply(self.looked, event)
        self.inputs.append(event)
        assert before == frozen  # apply never changes the clock it was given
        if settled is not None and settled.phase is Phase.ENDED:
            assert self.clock == settled  # an ended game never changes again

    @precondition(lambda self: self.clock is not None)
    @rule(gap=gaps, player=players)
    def press(self, gap, player):
        self._feed(Press(self.t + gap, player))

    @precondition(lambda self: self.clock is not None)
    @rule(gap=gaps)
    def neutralise(self, gap):
        self._feed(Neutralise(self.t + gap))

    @precondition(lambda self: self.clock is not None)
    @rule(gap=gaps)
    def end(self, gap):
        self._feed(End(self.t + gap))

    @precondition(lambda self: self.clock is not None)
    @rule(gap=gaps, player=players, fraction=st.integers(0, 1000))
    def adjust(self, gap, player, fraction):
        floor = -self.rules.forfeit_overtime_ms
        self._feed(Adjust(self.t + gap, player, floor + 1 + fraction * (self.rules.game_time_ms - floor) // 1000))

    @precondition(lambda self: self.clock is not None)
    @rule(gap=gaps, who=st.sampled_from([(1,), (2,), (1, 2)]))
    def late_start(self, gap, who):
        self._feed(LateStart(self.t + gap, who))

    @precondition(lambda self: self.clock is not None)
    @rule(gap=gaps, player=players)
    def arrive(self, gap, player):
        self._feed(Arrive(self.t + gap, player))

    @precondition(lambda self: self.clock is not None)
    @rule(gap=gaps, player=players)
    def forfeit(self, gap, player):
        self._feed(Forfeit(self.t + gap, player))

    @precondition(lambda self: self.clock is not None)
    @rule(new_boot=st.integers(0, 10**15), back=st.integers(-30 * S, 30 * S))
    def power_cut(self, new_boot, back):
        """A restart: `at_ns` is somewhere around the last input (before it must charge nothing).
        After a look it is not before the look: the look settled the clock up to there."""
        if self.looked_since_input:
            back = abs(back)
        self._feed(Resume(t_ns=new_boot, at_ns=max(0, self.t + back)))

    @precondition(lambda self: self.clock is not None and self.clock.since_ns is not None)
    @rule(gap=gaps)
    def look(self, gap):
        """Someone looks at the clock between inputs: settling it must change nothing later on."""
        self.looked = settle(self.looked, self.t + gap)
        self.looked_since_input = True
        self.t += gap  # later inputs are not before the look
        self.elapsed += gap

    # --- invariants -------------------------------------------------------------------------

    @invariant()
    def looking_in_between_changes_nothing(self):
        if self.clock is None or self.clock.since_ns is None:
            return
        for later in (0, 1, 37 * S, 20 * 60 * S):
            assert view(self.clock, self.t + later) == view(self.looked, self.t + later)

    @invariant()
    def played_plus_neutral_time_is_the_time_elapsed(self):
        if self.clock is None or self.looked.since_ns is None:
            return
        c = settle(self.looked, self.t)
        assert c.played_ns[0] + c.played_ns[1] + c.neutral_ns == self.elapsed
        assert min(c.played_ns) >= 0 and c.neutral_ns >= 0

    @invariant()
    def only_the_running_or_absent_sides_time_goes_down_and_at_the_rate_time_passes(self):
        if self.clock is None or self.clock.since_ns is None:
            return
        c, t = self.clock, self.t
        now = view(c, t)
        for d in (1, 999 * MS, 61 * S):
            later = view(c, t + d)
            if later.phase is not now.phase:  # a time-triggered rule fired (5.3.3, 2.3.5): it stops
                assert later.phase is Phase.ENDED
                assert all(b.remaining_ns >= a.remaining_ns for a, b in zip(later.players, now.players))
                continue
            for a, b in zip(now.players, later.players):
                draining = a.running or (now.phase is Phase.LATE and a.absent)
                assert b.remaining_ns == a.remaining_ns - (d if draining else 0)
            assert later.neutral_ns - now.neutral_ns == (0 if any(p.running for p in now.players) else d)

    @invariant()
    def folding_the_same_inputs_again_gives_the_same_clock(self):
        if self.clock is None:
            return
        assert run(self.inputs, self.rules) == self.clock


ClockMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestClockCore = ClockMachine.TestCase
