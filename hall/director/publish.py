"""`rackside hall publish DEST`: the console's published public view (a folder of static files: JSON
and index.html) copied to any web host or object storage with rclone (Debian's package `rclone`), so
a CDN or a static host serves any number of viewers while the hall's own cost stays flat.

    rackside hall publish DEST [--from FOLDER] [--watch [--every SECONDS]]

DEST is any rclone remote (`remote:bucket/path`, set up with `rclone config`; an on-the-fly
`:backend,option=value:path` too) or a local folder. Once (the default): one `rclone sync`, exit 0,
or one line saying why not and exit 1. `--watch`: runs until stopped, syncing when the folder
changes, at most once every `--every` seconds; a failing sync is said once per outage (and once
when it works again) and retried at that rate, never given up.

rclone itself decides what to copy (size and modification time, as its docs say for `sync`), so an
unchanged file is not uploaded again; files whose name starts with "." are never copied (the
temporary files of an atomic write: rackside.atomic). A folder without index.html is not synced:
an empty or half-made folder would otherwise make `sync` delete the published site.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from rackside import paths
from rackside.outage import Outage

INDEX = "index.html"  # the page: without it the folder is not (yet) a public view
DEFAULT_EVERY_S = 5.0  # at most one sync in this many seconds (--every)
MIN_EVERY_S, MAX_EVERY_S = 1.0, 3600.0
POLL_S = 0.5  # how often --watch looks at the folder (a stat of each file: microseconds for a view's few hundred)
MAX_FILES = 20_000  # a public view is a page and a JSON file per division and round: far fewer
SYNC_TIMEOUT_S = 600.0  # one rclone run; its own --timeout below ends a stalled transfer long before
# rclone's own retries off (we retry, at --every): a failure is then one run, reported at once. A
# dead host fails its connection in 10 s and a stalled transfer in 60 s, not rclone's 1 min / 5 min.
RCLONE_FLAGS = ("--retries", "1", "--low-level-retries", "2", "--contimeout", "10s", "--timeout", "60s", "--log-level", "ERROR")
HIDDEN = ("--exclude", ".*", "--exclude", ".*/**")  # for `sync` (a `copy` names its files: never these)
# rclone's own remote names: letters, digits, "_", "-", ".", "+", "@" and spaces, not starting with "-" or a space
REMOTE = re.compile(r"^([\w.+@-][\w.+@ -]*):")
LOG_STAMP = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (?:ERROR : )?")


class PublishError(ValueError):
    """A DEST, FOLDER or setting that cannot be used: one line naming it and what is allowed."""


def default_folder() -> Path:
    return paths.public_dir()


def register(hs) -> None:
    p = hs.add_parser("publish", help="copy the console's public view to a web host or object storage (rclone)",
                      description="Copy the console's public view (static JSON and index.html) to any rclone remote "
                                  "or local folder, once or on every change (docs/publish.md).")
    p.add_argument("dest", metavar="DEST", help='an rclone remote ("remote:bucket/path", from `rclone config`) or a local folder')
    p.add_argument("--from", dest="folder", type=Path, metavar="FOLDER",
                   help=f"the public view's folder (default: {paths.public_dir()}, where the console writes it)")
    p.add_argument("--watch", action="store_true", help="keep running: sync on every change, at most once every --every seconds")
    p.add_argument("--every", type=float, default=DEFAULT_EVERY_S, metavar="SECONDS",
                   help=f"with --watch: the shortest time between two syncs (default {DEFAULT_EVERY_S:g}; "
                        f"{MIN_EVERY_S:g} to {MAX_EVERY_S:g})")
    p.set_defaults(func=run, logging=False)


def say(line: str) -> None:
    print(f"rackside hall publish: {line}", file=sys.stderr, flush=True)


class _Say:
    """The `log` an Outage reports to: the failure and the recovery as lines of this command's own
    (it prints rather than logs: a director runs it in a terminal or under systemd, which stamps time).
    Each further failed attempt only with `rackside -v`."""

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = verbose

    def error(self, msg, args):
        say(msg % args)

    warning = error

    def debug(self, msg, *args):
        if self.verbose:
            say(msg % args)


def is_remote(dest: str) -> bool:
    """rclone's own rule: a name and a colon before any "/" is a remote (":backend,...:" too); a path
    starting with "/" or "." is local."""
    return not dest.startswith(("/", ".")) and (dest.startswith(":") or REMOTE.match(dest) is not None)


def check(dest: str, folder: Path, every: float, rclone: str) -> None:
    """PublishError for a DEST or setting that can never work. A remote that is merely unreachable
    is not checked here: that is an outage, retried."""
    if not MIN_EVERY_S <= every <= MAX_EVERY_S:
        raise PublishError(f"--every {every:g}: allowed are {MIN_EVERY_S:g} to {MAX_EVERY_S:g} seconds")
    if not dest.strip() or dest.startswith("-") or "\n" in dest or "\0" in dest:  # "-...": rclone would take it for a flag
        raise PublishError(f"DEST {dest!r}: allowed are an rclone remote (\"remote:bucket/path\") or a local folder")
    if folder.exists() and not folder.is_dir():
        raise PublishError(f"--from {folder}: not a folder (allowed is the folder the console writes its public view to)")
    if is_remote(dest):
        if dest.startswith(":"):
            return  # an on-the-fly remote (":webdav,url=...:path"): rclone says what is wrong with it
        name = REMOTE.match(dest).group(1)
        known = configured_remotes(rclone)
        if name not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise PublishError(f"DEST {dest!r}: rclone has no remote {name!r} (configured: {listed}); "
                               "set it up with `rclone config`, or give a local folder")
        return
    target = Path(dest).absolute()
    source = folder.absolute()
    if target == source or target.is_relative_to(source) or source.is_relative_to(target):
        raise PublishError(f"DEST {dest!r}: inside --from {folder} or holding it (allowed is a folder apart from it)")
    if target.exists() and not target.is_dir():
        raise PublishError(f"DEST {dest!r}: not a folder (allowed is a folder, made if missing, or an rclone remote)")


def configured_remotes(rclone: str) -> set[str]:
    """The remotes rclone knows (its config file, and RCLONE_CONFIG_<NAME>_TYPE in the environment)."""
    r = subprocess.run([rclone, "listremotes"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise PublishError(f"`rclone listremotes` failed: {last_line(r.stderr) or r.returncode}")
    return {line.strip().rstrip(":") for line in r.stdout.splitlines() if line.strip()}


def last_line(text: str) -> str:
    """rclone's last error line, without its date and level (what a director needs to read)."""
    lines = [LOG_STAMP.sub("", line).strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if not line.startswith("NOTICE")]
    return (errors or lines or [""])[-1][:500]


def snapshot(folder: Path) -> tuple | None:
    """What the folder holds, to see a change: (path, size, mtime) of each file not starting with ".",
    sorted; None when it is not a public view yet (no folder, no index.html) or is far too big."""
    found = []
    try:
        if not (folder / INDEX).is_file():
            return None
        for d, dirs, files in os.walk(folder):
            dirs[:] = [x for x in dirs if not x.startswith(".")]
            for f in files:
                if f.startswith(".") or "\n" in f or "\r" in f:  # a line each in rclone's --files-from-raw
                    continue
                try:
                    st = os.stat(os.path.join(d, f))
                except FileNotFoundError:  # replaced between the listing and the stat: seen next time
                    continue
                found.append((os.path.relpath(os.path.join(d, f), folder), st.st_size, st.st_mtime_ns))
                if len(found) > MAX_FILES:
                    return None
    except OSError:
        return None
    return tuple(sorted(found))


class Publisher:
    """Copies the folder to DEST. `synced` is what the last good sync copied: a file that changed since
    is uploaded whatever rclone's comparison says (`copy --no-check-dest`), because a host that keeps
    no modification times (WebDAV, FTP) is compared by size alone, and a JSON file whose times tick
    from 742113 to 741113 keeps its size. `sync` then deletes what the folder no longer holds; it
    runs when something went or nothing was synced yet (a first sync also clears what DEST held)."""

    def __init__(self, rclone: str, folder: Path, dest: str) -> None:
        self.rclone = rclone
        self.folder = folder
        self.dest = dest
        self.synced: dict[str, tuple[int, int]] | None = None  # path -> (size, mtime) at the last good sync
        self.stop = threading.Event()
        self.proc: subprocess.Popen | None = None

    def sync(self, snap: tuple) -> str | None:
        """Bring DEST to `snap` (a snapshot taken just before): None when it worked, else why not (one line)."""
        now = {path: (size, mtime) for path, size, mtime in snap}
        before = self.synced or {}
        changed = [path for path, seen in now.items() if before.get(path) != seen]
        if changed:
            reason = self._rclone("copy", "--no-check-dest", "--files-from-raw", "-", stdin="\n".join(changed) + "\n")
            if reason is not None:
                return reason
        if self.synced is None or set(before) - set(now):
            reason = self._rclone("sync", *HIDDEN)
            if reason is not None:
                return reason
        self.synced = now
        return None

    def _rclone(self, verb: str, *flags: str, stdin: str | None = None) -> str | None:
        # The folder absolute: "a:b" would be a remote to rclone, "/x/a:b" is a path.
        command = [self.rclone, verb, str(self.folder.absolute()), self.dest, *RCLONE_FLAGS, *flags]
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            _, err = self.proc.communicate(stdin, timeout=SYNC_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            return f"rclone did not finish in {SYNC_TIMEOUT_S:g} s"
        except OSError as e:
            return f"cannot run rclone: {e}"
        finally:
            code = self.proc.returncode if self.proc is not None else None
            self.proc = None
        if code == 0 or self.stop.is_set():  # ended by our own SIGTERM: not a failure of the destination
            return None if code == 0 else "stopped"
        return f"rclone exited {code}: {last_line(err) or 'no message'}"

    def watch(self, every: float, verbose: bool = False) -> int:
        outage = Outage(_Say(verbose), self.dest, failed_msg="sync to %(what)s failed: %(reason)s; retrying (said once until it works again)",
                        recovered_msg="sync to %(what)s works again (after %(failures)d failed attempt(s): %(reason)s)")
        last = None  # monotonic time of the last attempt
        waiting_said = False
        while not self.stop.is_set():
            snap = snapshot(self.folder)
            now = time.monotonic()
            if snap is None:
                if not waiting_said:
                    say(f"waiting for {self.folder / INDEX} (the console writes the public view there)")
                    waiting_said = True
            elif (self.synced is None or snap != self.synced_snapshot() or outage.active) and (last is None or now - last >= every):
                waiting_said = False
                last = now
                reason = self.sync(snap)
                if self.stop.is_set():
                    break
                if reason is None:
                    if not outage.recovered() and verbose:
                        say(f"synced {len(snap)} file(s) to {self.dest}")
                else:
                    outage.failed(reason)
            self.stop.wait(POLL_S)  # a change waiting for --every is taken up within POLL_S of its time
        return 0

    def synced_snapshot(self) -> tuple:
        return tuple(sorted((path, size, mtime) for path, (size, mtime) in (self.synced or {}).items()))

    def end(self) -> None:
        self.stop.set()
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.terminate()


def run(args: argparse.Namespace) -> int:
    folder = args.folder if args.folder is not None else default_folder()
    rclone = shutil.which("rclone")
    if rclone is None:
        say("rclone is not installed: sudo apt install rclone (./setup.sh --dev does)")
        return 1
    try:
        check(args.dest, folder, args.every, rclone)
    except PublishError as e:
        say(str(e))
        return 2
    publisher = Publisher(rclone, folder, args.dest)
    if not args.watch:
        snap = snapshot(folder)
        if snap is None:
            say(f"--from {folder}: no {INDEX} there, so nothing to publish (the console writes the public view there)")
            return 1
        reason = publisher.sync(snap)
        if reason is not None:
            say(f"sync to {args.dest} failed: {reason}")
            return 1
        print(f"published {folder} to {args.dest}")
        return 0
    previous = signal.signal(signal.SIGTERM, lambda *_: publisher.end())
    say(f"publishing {folder} to {args.dest} on every change, at most once every {args.every:g} s (Ctrl-C stops)")
    try:
        return publisher.watch(args.every, verbose=bool(getattr(args, "verbose", 0)))
    except KeyboardInterrupt:
        publisher.end()
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
