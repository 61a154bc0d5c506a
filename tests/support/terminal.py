"""Reading what a program writes to a pseudo-terminal, for tests that run the real command in one."""

import os
import select
import time


def read_until(fd, needle: bytes, timeout_s: float = 20.0) -> bytes:
    """Read the pty until `needle` appears (waiting on I/O, not on time passing)."""
    buf = b""
    deadline = time.monotonic() + timeout_s
    while needle not in buf:
        left = deadline - time.monotonic()
        assert left > 0, f"{needle!r} never appeared; got {buf[-600:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf


def reap(pid: int) -> int:
    """The wait status of the child `pid` once it has ended; a child still running (a step of the
    test failed before it was told to quit) is killed first, so a failed test never waits for ever
    on a simulator that waits for its next key (a CI run hung there)."""
    import signal

    ended, status = os.waitpid(pid, os.WNOHANG)
    if ended == 0:
        # give a clean quit its moment: the test's own "q" may be in flight (waits on the child, not on time)
        deadline = time.monotonic() + 10
        while ended == 0 and time.monotonic() < deadline:
            ready, _, _ = select.select([], [], [], 0.05)
            ended, status = os.waitpid(pid, os.WNOHANG)
        if ended == 0:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    return status
