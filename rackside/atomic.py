"""Replace a file whole or not at all: write a temporary file beside it, fsync, rename, fsync the
folder. A power cut leaves either the old file or the new one, never half of each, which is what a
director needs from a lexicon, a settings file, an export or a checkpoint. Imports nothing of Rackside.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: str | os.PathLike, data: bytes | str, mode: int = 0o600) -> Path:
    """Write `data` to `path` atomically with permissions `mode` (owner-only by default)."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        try:
            os.fchmod(fd, mode)  # O_CREAT's mode is masked by the umask; the caller's mode is meant
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)
    return path


def fsync_dir(folder: str | os.PathLike) -> None:
    """Make a rename or a new file in `folder` durable. Raises OSError when it cannot be: the
    caller (a journal, a checkpoint) must not believe a file is on the card when it may not be."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
