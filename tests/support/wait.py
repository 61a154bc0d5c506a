"""Waiting on a condition instead of sleeping a guessed time (issue 16 item 6): a test that sleeps
and then asserts fails on a loaded machine and wastes time on an idle one."""

from __future__ import annotations

import time
from typing import Any, Callable


def until(predicate: Callable[[], Any], timeout: float = 10.0, poll: float = 0.005) -> Any:
    """`predicate()` once it is truthy (polled every `poll` s), or its last value after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()) and time.monotonic() < deadline:
        time.sleep(poll)
    return value


def wait(predicate: Callable[[], Any], timeout: float = 15.0) -> Any:
    """`predicate()` once it is truthy (polled every 50 ms); TimeoutError after `timeout` s, for a
    test whose next step needs the value."""
    value = until(predicate, timeout, poll=0.05)
    if not value:
        raise TimeoutError(f"waited {timeout:.0f} s")
    return value
