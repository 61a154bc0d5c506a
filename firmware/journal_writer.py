"""Appending to a journal: each line written at once (`write`, so a crash of the process cannot lose
it), fsync'd at once or by a later `sync()`, a torn last line closed before the next, and a sha256
of every byte kept for the checkpoint to vouch with (firmware.checkpoint). The line format is
game.journal's; which journal is written, and when, is `GameStore`'s (firmware.persist).

Every call on the card goes through `disk`, an object with the `os` module's file functions
(`rackside.atomic.Disk`: `open`, `write`, `fsync`, `close`, and for an atomic write `fchmod`,
`replace`, `unlink`).
It is `os` itself in the clock; a test hands in one that fails like a full or failing card
(tests/support/disk.py) instead of patching `os` for the whole process.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from rackside.atomic import Disk
from rackside.game import journal as journal_format
from rackside.game.journal import dumps

log = logging.getLogger(__name__)


class JournalWriter:
    """Appends lines to one journal: each append is written at once, and fsync'd at once or by a
    later `sync()`."""

    def __init__(self, path: Path, disk: Disk = os) -> None:
        self.path = path
        self.disk = disk
        self._fd = disk.open(path, os.O_WRONLY | os.O_APPEND)
        self.size = self.lines = 0  # bytes, and complete lines so far, header included
        # sha256 of every byte in the file: a checkpoint records it, so a restore can tell that the
        # journal up to the checkpoint is exactly what this store wrote, and read only what follows
        self.digest = hashlib.sha256()
        last = b"\n"
        with open(path, "rb") as f:  # counted in chunks: a long journal is never held whole
            while chunk := f.read(journal_format.READ_BLOCK):
                self.digest.update(chunk)
                self.size += len(chunk)
                self.lines += chunk.count(b"\n")
                last = chunk[-1:]
        self.torn = last != b"\n"
        self.unsynced = False  # bytes were written since the last successful fsync

    def append(self, obj: dict, *, sync: bool = True) -> int:
        """Write one line (and fsync it when `sync`); returns its line number. A torn last line
        left by a crash is first closed with a newline, so it stays a single reported bad line and
        never swallows this one."""
        payload = (b"\n" if self.torn else b"") + (dumps(obj) + "\n").encode("ascii")
        view = memoryview(payload)
        try:
            while view:
                view = view[self.disk.write(self._fd, view) :]
        except OSError:
            # A failed write (a full or failing card) may have left part of the line: start the
            # next append on a fresh line, so only this one is lost. The caller hears of it. If
            # nothing reached the file, it ends as it did (torn or not) for the next append.
            written = len(payload) - len(view)
            if written:
                self.size += written
                self.digest.update(payload[:written])
                self.lines += payload.count(b"\n", 0, written)
                self.torn = not payload[:written].endswith(b"\n")
                self.unsynced = True
            raise
        self.size += len(payload)
        self.digest.update(payload)
        self.lines += payload.count(b"\n")
        self.torn = False
        self.unsynced = True
        if sync:
            self.sync()
        return self.lines

    def sync(self) -> None:
        """fsync what was written since the last fsync; nothing to do if nothing was. A failed
        fsync raises, and the next call tries again."""
        if self.unsynced:
            self.disk.fsync(self._fd)
            self.unsynced = False

    def close(self) -> None:
        if self._fd >= 0:
            try:
                self.sync()
            except OSError as e:
                log.error("journal %s not fsync'd at close: %s", self.path, e)
            self.disk.close(self._fd)
            self._fd = -1
