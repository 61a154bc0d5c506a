"""Contact debounce from edge timestamps: pure, one instance per button, no clock of its own.

A press is accepted on its FIRST falling edge, so it costs no latency and is charged at the exact
moment the contact closed, but only if the line had been released (high) for at least `settle_ns`
before that edge. Everything else is bounce and is ignored:

- the toggling right after a press (the line is high for less than `settle_ns` between edges);
- the toggling of a release (same);
- a button held down, however long: it never repeats.

The button counts as released once its line has been high for `settle_ns` without a break; the
release is dated at that last rising edge. A settle time of 15 ms rejects the 1-10 ms of bounce that
real push buttons produce while still accepting more than 30 deliberate presses a second.

The price of accepting the first edge is that a lone spike on an idle line (a few microseconds of
interference) would count as a press; the buttons are wired to ground against the Pi's pull-ups on
short leads, which makes that very unlikely, and the core ignores a press from the side not running.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_SETTLE_NS = 15_000_000

_LONG_AGO = -(1 << 62)


@dataclass
class Debouncer:
    """The debounced state of one button, fed the raw edges of its line in time order."""

    settle_ns: int = DEFAULT_SETTLE_NS
    raw_down: bool = False  # the line's level: True while the contact is closed (pin low)
    raw_since_ns: int = _LONG_AGO  # when the line last changed level
    down: bool = False  # an accepted press not yet released
    down_since_ns: int | None = None  # the edge the accepted press is dated at

    def __post_init__(self) -> None:
        if self.settle_ns < 0:
            raise ValueError(f"settle_ns must not be negative, got {self.settle_ns}")
        # A button already held when we start is not a press: it must be released first.
        self.down = False

    def edge(self, t_ns: int, down: bool) -> bool:
        """The line changed to `down` (closed) or up (open) at `t_ns`. True when this edge is an
        accepted press. A repeated level (an edge the back-end reported twice) changes nothing;
        an edge dated before the previous one (never from a sorted batch) is treated as simultaneous."""
        if down == self.raw_down:
            return False
        t_ns = max(t_ns, self.raw_since_ns)
        accepted = down and t_ns - self.raw_since_ns >= self.settle_ns  # released long enough
        self.raw_down, self.raw_since_ns = down, t_ns
        if accepted:
            self.down, self.down_since_ns = True, t_ns
        return accepted

    def held(self, t_ns: int) -> bool:
        """Is the accepted press still held at `t_ns` (not released for `settle_ns`)?"""
        return self.down and (self.raw_down or t_ns - self.raw_since_ns < self.settle_ns)

    def release_due_ns(self) -> int | None:
        """When the pending release becomes final (if the line stays high), or None."""
        if self.down and not self.raw_down:
            return self.raw_since_ns + self.settle_ns
        return None

    def poll(self, t_ns: int) -> int | None:
        """If the accepted press has been released by `t_ns`, forget it and return the release
        time (the last rising edge); otherwise None."""
        if self.down and not self.held(t_ns):
            self.down, self.down_since_ns = False, None
            return self.raw_since_ns
        return None
