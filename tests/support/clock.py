"""The one fake monotonic clock every test drives by hand.

Pure cores and adapters take a `clock_ns` callable instead of reading the system clock, so a test
hands them a FakeClock, moves `ns` itself, and knows the exact nanosecond everything happened.
"""

from __future__ import annotations

NS_PER_S = 1_000_000_000
T0 = 1_000 * NS_PER_S  # fake clocks start at 1000 s: well clear of zero, like a real monotonic clock


class FakeClock:
    """A monotonic-ns clock the test moves by setting `ns` or calling `advance`."""

    def __init__(self, ns: int = T0) -> None:
        self.ns = ns

    def __call__(self) -> int:
        return self.ns

    def seconds(self) -> float:
        """The same time in float seconds, for code that reads `time.monotonic` (gpiozero's MockPin)."""
        return self.ns / NS_PER_S

    def advance(self, seconds: float) -> None:
        self.ns += round(seconds * NS_PER_S)


def sample_rules():
    """The clock rules the core's property tests play under: WESPA's defaults, a short game whose
    lateness, forfeit and courtesy-draw lines are all reached, and a game with no switch guard."""
    from rackside.game.clock import Rules

    return [
        Rules(),
        Rules(game_time_ms=60_000, forfeit_overtime_ms=60_000, optional_forfeit_below_ms=45_000, courtesy_draw_after_ms=5_000),
        Rules(game_time_ms=90_000, penalty_per_minute=5, forfeit_overtime_ms=150_000, switch_guard_ms=0),
    ]
