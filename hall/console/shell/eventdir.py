"""An event's own folder: the console's results store, audit, command log, sessions and session key,
kept challenges, updates and live tourney.js belong to one event (issue 35), never to the machine.

    STATE/events/NAME/           one event's files (console-results.sqlite, console-sessions.json, ...)
    STATE/events/NAME/console.lock   held (flock) by the console serving it: pid, host, listen address
    STATE/events/current         the current event's name (`rackside hall event new NAME`)
    STATE/events-archive/NAME-STAMP/   an event archived, as it was

Which event a console serves: `[console] event = "NAME"`, else the current one, else one made at
its first start, named after the hall and the day (`open2026-2026-07-04`) and made current. The
folder name is the event's id: the results store records it with the hall (resultstore.py's
identity) and refuses a store of another hall or event whole, and the clocks' games carry it
(docs/hall.md, "Events").

One console an event: the lock is an flock on `console.lock`, so a console killed (SIGKILL, a power
cut) leaves nothing held; a second console on the event is refused with one line naming the
first's pid, host and address (`EventError`). `rackside hall event new NAME` archives the current
event (refused while a console holds it) and makes NAME current; `rackside hall event archive`
archives it and makes none current; `rackside hall event` lists them.

Adapter: files and flock. The demo never comes here with the machine's state folder: its console's
state folder is the demo's own (demo.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

from rackside.atomic import write_atomic
from rackside.hall.wire.topics import EVENT as NAME
from rackside.paths import EVENTS

ARCHIVE = "events-archive"
CURRENT = "current"
LOCK = "console.lock"
NAME_SAYS = "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"


class EventError(ValueError):
    """An event that cannot be used (a bad name, held by another console, archived): one line."""


def check_name(name) -> str:
    if not isinstance(name, str) or not NAME.match(name) or name == CURRENT:
        raise EventError(f"event {name!r}: allowed is a name of {NAME_SAYS} (not {CURRENT!r})")
    return name


def events_dir(state: Path) -> Path:
    return Path(state) / EVENTS


def folder(state: Path, name: str) -> Path:
    return events_dir(state) / check_name(name)


def current(state: Path) -> str | None:
    """The current event's name, or None (none made yet, or the last archived)."""
    try:
        name = (events_dir(state) / CURRENT).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if NAME.match(name) else None


def _set_current(state: Path, name: str | None) -> None:
    events_dir(state).mkdir(parents=True, exist_ok=True)
    path = events_dir(state) / CURRENT
    if name is None:
        path.unlink(missing_ok=True)
    else:
        write_atomic(path, name + "\n")


def archived(state: Path, name: str) -> list[Path]:
    d = Path(state) / ARCHIVE
    return sorted(p for p in d.glob(f"{name}-*") if p.is_dir() and p.name[len(name) + 1:].isdigit()) if d.is_dir() else []


def default_name(hall: str) -> str:
    name = f"{hall}-{time.strftime('%Y-%m-%d')}"[:64]
    return name if NAME.match(name) else f"event-{time.strftime('%Y-%m-%d')}"


def choose(state: Path, configured: str | None, hall: str, *, make: bool = True) -> tuple[str, Path]:
    """The event this console serves and its folder: [console] event, else the current one, else a
    new one (made current). `make` False (`rackside hall ready`): nothing is created."""
    name = configured or current(state)
    if name is None:
        name = default_name(hall)
        if make and not archived(state, name):
            _set_current(state, name)
    check_name(name)
    where = folder(state, name)
    if not where.is_dir() and archived(state, name):
        raise EventError(f"event {name!r} was archived ({archived(state, name)[-1]}): name a new event "
                         f"([console] event, or `rackside hall event new NAME`)")
    if make:
        where.mkdir(parents=True, exist_ok=True, mode=0o700)
    return name, where


class Lock:
    """The one console serving an event: an flock the process holds for its life (released by the
    kernel when it ends, however it ends), and who holds it, written into the file."""

    def __init__(self, where: Path, name: str, listen: str) -> None:
        self.path = Path(where) / LOCK
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = holder_line(self.path)
            os.close(self.fd)
            raise EventError(f"event {name!r} is already open in another console ({holder}): stop that one first, "
                             f"or give this one another event ([console] event)") from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "listen": listen,
                                       "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}).encode() + b"\n", 0)
        os.fsync(self.fd)

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def holder_line(path: Path) -> str:
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        return f"pid {int(d['pid'])} on {str(d['host'])[:64]}, listening on {str(d['listen'])[:80]}, since {str(d['since'])[:32]}"
    except (OSError, ValueError, KeyError, TypeError):
        return "its pid and address not written yet"


def held(where: Path) -> str | None:
    """Who holds the event's lock (one line), or None when no console does."""
    path = Path(where) / LOCK
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return holder_line(path)
        return None
    finally:
        os.close(fd)


def archive(state: Path, name: str) -> Path:
    """Move the event's folder into the archive, as it is; refused while a console holds it."""
    where = folder(state, name)
    if not where.is_dir():
        raise EventError(f"event {name!r}: no such event in {events_dir(state)}")
    who = held(where)
    if who is not None:
        raise EventError(f"event {name!r} is open in a console ({who}): stop it first, then archive")
    to = Path(state) / ARCHIVE / f"{name}-{time.strftime('%Y%m%d%H%M%S')}"
    to.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    where.rename(to)
    if current(state) == name:
        _set_current(state, None)
    return to


def new(state: Path, name: str) -> tuple[Path, Path | None]:
    """The next event: the current one archived (if any), NAME made and current."""
    where = folder(state, name)  # (EventError: not a name)
    if where.exists() or archived(state, name):
        raise EventError(f"event {name!r} exists already (in {events_dir(state)} or {Path(state) / ARCHIVE}): "
                         "choose a new name")
    was = current(state)
    old = archive(state, was) if was is not None and folder(state, was).is_dir() else None
    where.mkdir(parents=True, mode=0o700)
    _set_current(state, name)
    return where, old


def listing(state: Path) -> list[str]:
    cur = current(state)
    lines = []
    d = events_dir(state)
    for p in sorted(d.iterdir()) if d.is_dir() else []:
        if p.is_dir() and NAME.match(p.name):
            who = held(p)
            lines.append(f"{'*' if p.name == cur else ' '} {p.name}{f'  (open: {who})' if who else ''}")
    a = Path(state) / ARCHIVE
    for p in sorted(a.iterdir()) if a.is_dir() else []:
        lines.append(f"  {p.name}  (archived)")
    return lines
