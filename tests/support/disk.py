"""A card that fails on cue: the `disk` a GameStore, its JournalWriter and rackside.atomic make
their file calls through (`rackside.atomic.Disk`), so a test injects a full or failing card there
instead of patching `os.write` / `os.fsync` for the whole process (and every thread in it).

    disk = Disk()
    store = GameStore(tmp_path, Rules(), disk=disk)
    disk.fail("write", lambda fd, data: disk.path_of(fd) == store.journal_path, errno.ENOSPC)

Every call is logged in `calls` as (name, path) in order, and told to each of `listeners` as it is
made (a test notes what else was true at that moment); the real call is made unless a fault says
otherwise. Paths are those the descriptor was opened with (`path_of`).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Callable

MESSAGES = {errno.ENOSPC: "No space left on device", errno.EIO: "Input/output error", errno.EROFS: "Read-only file system"}


class Disk:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Path | None]] = []
        self.listeners: list[Callable[[str, Path | None], None]] = []
        self._paths: dict[int, Path] = {}
        self._faults: dict[str, Callable[..., int | None]] = {}

    # -- what a test sets --

    def fail(self, call: str, when: Callable[..., bool], err: int = errno.EIO, *, partial: int = 0) -> None:
        """From now on `call` ("open", "write", "fsync", "replace", "fsync_dir") raises OSError(`err`)
        whenever `when(*args)` is true. With `partial`, a failing write first gets that many bytes
        of its data onto the file, once (a short write, then errors: a card filling up)."""
        left = {"partial": partial}

        def fault(*args):
            if not when(*args):
                return None
            if call == "write" and left["partial"]:
                n, left["partial"] = left["partial"], 0
                return os.write(args[0], bytes(args[1][:n]))
            raise OSError(err, MESSAGES.get(err, os.strerror(err)))

        self._faults[call] = fault

    def heal(self, call: str | None = None) -> None:
        """The card works again (for `call`, or for every call)."""
        if call is None:
            self._faults.clear()
        else:
            self._faults.pop(call, None)

    def path_of(self, fd: int) -> Path | None:
        return self._paths.get(fd)

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    # -- the os file calls (rackside.atomic.Disk) --

    def _log(self, name: str, path: Path | None) -> None:
        self.calls.append((name, path))
        for listener in self.listeners:
            listener(name, path)

    def _fault(self, call: str, *args) -> int | None:
        fault = self._faults.get(call)
        return fault(*args) if fault else None

    def open(self, path, flags: int, mode: int = 0o777) -> int:
        path = Path(path)
        self._log("open", path)
        self._fault("open", path)
        fd = os.open(path, flags, mode)
        self._paths[fd] = path  # descriptors are reused: the latest open wins
        return fd

    def write(self, fd: int, data) -> int:
        self._log("write", self.path_of(fd))
        done = self._fault("write", fd, data)
        return done if done is not None else os.write(fd, data)

    def fsync(self, fd: int) -> None:
        """Logged (and failed) as "fsync_dir" on a folder: rackside.atomic.fsync_dir's."""
        path = self.path_of(fd)
        is_dir = path is not None and path.is_dir()
        self._log("fsync_dir" if is_dir else "fsync", path)
        self._fault("fsync_dir" if is_dir else "fsync", fd)
        os.fsync(fd)

    def close(self, fd: int) -> None:
        self._paths.pop(fd, None)
        os.close(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        os.fchmod(fd, mode)

    def replace(self, src, dst) -> None:
        self._log("replace", Path(dst))
        self._fault("replace", Path(src), Path(dst))
        os.replace(src, dst)

    def unlink(self, path) -> None:
        os.unlink(path)


class SmallDisk:
    """A real disk that fills up: a tmpfs of `size` mounted on `where` for one child process, which
    `prefix()` starts in a user and mount namespace of its own (unshare: no root needed, nothing
    mounted on the test machine). `attach(pid)` once it runs; `fill()` takes every byte left (a
    file written through /proc/PID/root, the child's own view of its mounts) and `free()` gives
    them back. `available()` says whether this machine allows it."""

    FILLER = "zz-filler"

    def __init__(self, where: Path, size: str = "8m") -> None:
        self.where = Path(where)
        self.size = size
        self.pid: int | None = None

    @staticmethod
    def available() -> bool:
        import shutil
        import subprocess

        if shutil.which("unshare") is None:
            return False
        probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                               capture_output=True)
        return probe.returncode == 0

    def prefix(self) -> list[str]:
        self.where.mkdir(parents=True, exist_ok=True)
        return ["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o "size=$1,mode=700" tmpfs "$2" && shift 2 && exec "$@"',
                "sh", self.size, str(self.where)]

    def attach(self, pid: int) -> None:
        self.pid = pid

    def _inside(self) -> Path:
        return Path(f"/proc/{self.pid}/root") / self.where.relative_to("/") / self.FILLER

    def fill(self) -> int:
        """Write until the disk says it is full; the bytes written."""
        done = 0
        with open(self._inside(), "ab", buffering=0) as f:
            block = bytes(64 * 1024)
            while True:
                try:
                    done += f.write(block)
                except OSError as e:
                    if e.errno != errno.ENOSPC:
                        raise
                    block = block[: len(block) // 2]
                    if not block:
                        return done
        return done

    def free(self) -> None:
        self._inside().unlink()
