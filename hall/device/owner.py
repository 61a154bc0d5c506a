"""One owning thread per piece of state, checked (docs/architecture.md, "The hall output's threads").

Each unit of the hall's publishers (the clock output's runner side, its worker, the command intake,
the outbox publisher) holds an `Owner` and calls `check()` on entry to every method that touches its
state: the first caller becomes the owner, and a call from any other thread raises `OwnershipError`
naming both. Other threads talk to a unit only by posting messages to its queues. `release()` hands
a unit over once, before a thread of its own starts using it (the runner is started on one thread
and loops on another; `Thread.start` orders the two). The check is a thread id comparison: cheap
enough to stay on in production, where a violation is a bug logged by the unit's fault handler.
"""

from __future__ import annotations

import threading


class OwnershipError(RuntimeError):
    """A unit's state was touched by a thread that does not own it."""


class Owner:
    __slots__ = ("what", "ident", "name")

    def __init__(self, what: str) -> None:
        self.what = what
        self.ident: int | None = None
        self.name: str | None = None

    def check(self) -> None:
        me = threading.get_ident()
        if self.ident == me:
            return
        if self.ident is None:
            self.ident, self.name = me, threading.current_thread().name
            return
        raise OwnershipError(f"{self.what} is owned by thread {self.name!r}, touched by {threading.current_thread().name!r}")

    def release(self) -> None:
        self.ident = self.name = None
