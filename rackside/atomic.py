"""Replace a file whole or not at all: write a temporary file beside it, fsync, rename, fsync the
folder. A power cut leaves either the old file or the new one, never half of each, which is what a
director needs from a lexicon, a settings file, an export or a checkpoint. Imports nothing of Rackside.

`disk` is the seam for the card's faults: an object with the `os` module's file functions (`Disk`),
`os` itself unless a test hands in one that fails like a full or failing card.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol


class Disk(Protocol):
    """The `os` file calls a journal, a checkpoint or an atomic write makes; `os` is one."""

    def open(self, path: str | os.PathLike, flags: int, mode: int = 0o777) -> int: ...
    def write(self, fd: int, data: bytes | memoryview) -> int: ...
    def fsync(self, fd: int) -> None: ...
    def close(self, fd: int) -> None: ...
    def fchmod(self, fd: int, mode: int) -> None: ...
    def replace(self, src: str | os.PathLike, dst: str | os.PathLike) -> None: ...
    def unlink(self, path: str | os.PathLike) -> None: ...


def write_atomic(path: str | os.PathLike, data: bytes | str, mode: int = 0o600, *, disk: Disk = os) -> Path:
    """Write `data` to `path` atomically with permissions `mode` (owner-only by default)."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = disk.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        try:
            disk.fchmod(fd, mode)  # O_CREAT's mode is masked by the umask; the caller's mode is meant
            view = memoryview(data)
            while view:
                view = view[disk.write(fd, view):]
            disk.fsync(fd)
        finally:
            disk.close(fd)
        disk.replace(tmp, path)
    except BaseException:
        try:
            disk.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent, disk=disk)
    return path


def fsync_dir(folder: str | os.PathLike, *, disk: Disk = os) -> None:
    """Make a rename or a new file in `folder` durable. Raises OSError when it cannot be: the
    caller (a journal, a checkpoint) must not believe a file is on the card when it may not be."""
    fd = disk.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        disk.fsync(fd)
    finally:
        disk.close(fd)
