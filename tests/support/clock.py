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
