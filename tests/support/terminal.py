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
