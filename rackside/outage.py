"""Log a fault once per outage, not once per attempt.

A failing SD card, an unplugged display, a broker that went away: each is retried on every input or
every few hundred milliseconds, and logging every attempt would flood the journal of a clock that
must keep counting. An `Outage` logs the first failure as an error, counts the rest at debug level,
and logs one warning when the thing works again, saying how many attempts failed in between.
Imports nothing of Rackside.
"""

from __future__ import annotations

# Not `from typing import TYPE_CHECKING`: this module is on the station's path to its first frame,
# and typing costs milliseconds there (the standard library uses the same idiom).
TYPE_CHECKING = False
if TYPE_CHECKING:  # any object with error/warning/debug will do: a module may make its logger lazily
    import logging


FAILED = "%(what)s failed: %(reason)s (logged once until it works again)"
RECOVERED = "%(what)s works again (after %(failures)d failed: %(reason)s)"


class Outage:
    """One thing that can fail and recover: `failed(reason)` on every failed attempt,
    `recovered()` on every good one. Both are cheap when nothing changes.

    `failed_msg` / `recovered_msg` reword the two log lines for a user who reads them (the journal's
    say what the clock does meanwhile); they are %-templates over `what`, `reason`, `failures` and
    any keyword given to `recovered` (e.g. how many inputs went unwritten)."""

    __slots__ = ("log", "what", "reason", "failures", "failed_msg", "recovered_msg")

    def __init__(self, log: logging.Logger, what: str, *, failed_msg: str = FAILED, recovered_msg: str = RECOVERED):
        self.log = log
        self.what = what  # e.g. "journal", "display 'left'", "hall broker"
        self.reason: str | None = None  # the first failure of the current outage
        self.failures = 0  # attempts failed during the current outage
        self.failed_msg = failed_msg
        self.recovered_msg = recovered_msg

    @property
    def active(self) -> bool:
        return self.reason is not None

    def failed(self, reason: object) -> bool:
        """Record a failed attempt; True when this began the outage (and was logged)."""
        self.failures += 1
        if self.reason is None:
            self.reason = str(reason)
            self.log.error(self.failed_msg, {"what": self.what, "reason": self.reason, "failures": self.failures})
            return True
        self.log.debug("%s failed again: %s (failure %d of this outage)", self.what, reason, self.failures)
        return False

    def recovered(self, **details: object) -> bool:
        """Record a good attempt; True when this ended an outage (and was logged)."""
        if self.reason is None:
            return False
        self.log.warning(self.recovered_msg, {"what": self.what, "reason": self.reason, "failures": self.failures, **details})
        self.reason, self.failures = None, 0
        return True
