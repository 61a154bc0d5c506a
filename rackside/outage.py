"""Log a fault once per outage, not once per attempt.

A failing SD card, an unplugged display, a broker that went away: each is retried on every input or
every few hundred milliseconds, and logging every attempt would flood the journal of a clock that
must keep counting. An `Outage` logs the first failure as an error, counts the rest at debug level,
and logs one warning when the thing works again, saying how many attempts failed in between.
Imports nothing of Rackside.
"""

from __future__ import annotations

import logging


class Outage:
    """One thing that can fail and recover: `failed(reason)` on every failed attempt,
    `recovered()` on every good one. Both are cheap when nothing changes."""

    __slots__ = ("log", "what", "reason", "failures")

    def __init__(self, log: logging.Logger, what: str):
        self.log = log
        self.what = what  # e.g. "journal", "display 'left'", "hall broker"
        self.reason: str | None = None  # the first failure of the current outage
        self.failures = 0  # attempts failed during the current outage

    @property
    def active(self) -> bool:
        return self.reason is not None

    def failed(self, reason: object) -> bool:
        """Record a failed attempt; True when this began the outage (and was logged)."""
        self.failures += 1
        if self.reason is None:
            self.reason = str(reason)
            self.log.error("%s failed: %s (logged once until it works again)", self.what, self.reason)
            return True
        self.log.debug("%s failed again: %s (failure %d of this outage)", self.what, reason, self.failures)
        return False

    def recovered(self) -> bool:
        """Record a good attempt; True when this ended an outage (and was logged)."""
        if self.reason is None:
            return False
        self.log.warning("%s works again (after %d failed: %s)", self.what, self.failures, self.reason)
        self.reason, self.failures = None, 0
        return True
