"""An update from the console (issue 20, item 3; docs/fleet.md, "Updates from the console"): the
clock's side, `Updater` (the names and bounds both ends share, and the console's check of a bundle's
own SHA256SUMS, are hall.wire.update's).

The director uploads a bundle to the console (hall/console/fleet/updates.py), which checks it and sends
each chosen table's clock an `update` command on its own cmd topic (hall.wire.commands), carrying the
version, the bundle's SHA-256, the console's URL and a token for that table alone. The clock's
`Updater`, on a thread of its own (never the runner's, never the hall worker's), fetches the file
from the console with the token (HTTP(S) GET, at most MAX_BUNDLE_BYTES, over TLS checked against
the hall's CA), checks its SHA-256, and runs `rackside update FILE --sha256 HEX` as a child process:
install side by side, switch only between games (`--wait`), roll back if not ready
(rackside.update, rackside.switch). Its outcome is the command's ack.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rackside import atomic
from rackside.hall.wire.update import MAX_BUNDLE_BYTES, MAX_WHY_CHARS, TOKEN_HEADER, UpdateError

log = logging.getLogger(__name__)

FETCH_TIMEOUT_S = 30.0  # no byte from the console for this long: the download has failed
EXIT_WAITING = 75  # rackside update: installed, not switched (a game was still in progress)


# --- the clock's side ------------------------------------------------------------------------------


def fetch(url: str, token: str, dest: Path, sha256: str, ca_file: str | None) -> None:
    """GET `url` with `token` into `dest` (written beside, renamed when whole), at most
    MAX_BUNDLE_BYTES, its SHA-256 `sha256`; UpdateError saying why not (nothing left behind)."""
    context = None
    if url.startswith("https://"):
        context = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
    request = urllib.request.Request(url, headers={TOKEN_HEADER: token})
    partial = dest.with_name(dest.name + ".partial")
    h = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S, context=context) as r, open(partial, "wb") as out:
            while chunk := r.read(1024 * 1024):
                size += len(chunk)
                if size > MAX_BUNDLE_BYTES:
                    raise UpdateError(f"the download is over {MAX_BUNDLE_BYTES} bytes")
                h.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if h.hexdigest() != sha256:
            raise UpdateError(f"the download's SHA-256 is {h.hexdigest()}, the console announced {sha256}: refused")
        os.replace(partial, dest)
    except urllib.error.HTTPError as e:
        raise UpdateError(f"the console answered {e.code} for {url}") from None
    except (urllib.error.URLError, OSError) as e:
        raise UpdateError(f"cannot fetch {url}: {getattr(e, 'reason', None) or e}") from None
    finally:
        partial.unlink(missing_ok=True)


REQUEST, RESULT = "request.json", "result.json"  # in the clock's updates/ folder (docs/fleet.md)
RESULT_LINES = 20  # the install's last lines kept in result.json
POLL_S = 1.0  # how often the clock looks for the result while the update service works
INSTALL_S = 3600  # an install and its switch's readiness checks take well under this
UPDATE_PATH_UNIT = "/etc/systemd/system/rackside-update.path"


def outcome_of(status: int, output: str) -> tuple[bool, str, str]:
    """(ok, outcome, why) of `rackside update`'s exit status and output (its last line, or the one saying why)."""
    lines = output.strip().splitlines()
    last = lines[-1] if lines else f"exit status {status}"
    if status == 0:
        return True, "switched", last
    if status == EXIT_WAITING:
        return False, "not switched", last
    return False, "failed", next((ln for ln in reversed(lines) if "did not become ready" in ln or "rackside update:" in ln), last)


def write_json(path: Path, data: dict) -> None:
    """Whole or not at all, and on the card (rackside.atomic); readable by the other side of the
    request (the clock's user and root's update service), as the file was before."""
    atomic.write_atomic(path, json.dumps(data), mode=0o644)


def read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class Updater:
    """One update at a time, each on its own thread; `report(ok, outcome, why)` is called on that
    thread when it is over (outcome "switched", "not switched" (installed beside, a game still in
    progress) or "failed").

    The clock writes `updates/request.json` ({id, file, sha256, wait_s, allow_downgrade}) beside the fetched file, and
    `rackside update --request` installs it and writes `updates/result.json` ({id, status, output}).
    Who runs that: on a Pi, where the clock is an unprivileged service that may not gain privileges
    (NoNewPrivileges=, ProtectSystem=strict) and that the switch itself restarts, the root unit
    rackside-update.service, started by rackside-update.path when the request appears (the clock's
    unit wants that path unit); elsewhere (a test root, a developer's machine, run as root) the
    updater itself, as a child process. Either way the result is a file, so a clock restarted by its
    own switch (or rolled back to) finds the outcome of the command the broker delivers again."""

    def __init__(self, folder: Path, ca_file: str | None, command: list[str] | None = None) -> None:
        self.folder = folder  # the clock's state folder's updates/ (one bundle at a time)
        self.ca_file = ca_file
        # `rackside update` of the running version; a test root adds `--root DIR --user root`
        self.command = command or [sys.executable, "-m", "rackside", "update"]
        # the root service installs where the clock may not (a Pi's services); else this process's child
        self.by_service = os.geteuid() != 0 and os.path.isdir("/run/systemd/system")
        self._busy = threading.Lock()

    def start(self, cid: str, version: str, sha256: str, url: str, token: str, wait_s: int,
              report: Callable[[bool, str, str], None], allow_downgrade: bool = False) -> bool:
        """False (and nothing started) while an update is running. `allow_downgrade`: the director
        confirmed a version older than the installed one (the request says so to `rackside update`)."""
        if not self._busy.acquire(blocking=False):
            return False
        threading.Thread(target=self._run, args=(cid, version, sha256, url, token, wait_s, report, allow_downgrade),
                         name="hall-update", daemon=True).start()
        return True

    def _run(self, cid: str, version: str, sha256: str, url: str, token: str, wait_s: int, report,
             allow_downgrade: bool = False) -> None:
        try:
            ok, outcome, why = self._update(cid, version, sha256, url, token, wait_s, allow_downgrade)
        except Exception as e:  # noqa: BLE001 - whatever went wrong is the outcome the director sees
            ok, outcome, why = False, "failed", repr(e)
        finally:
            self._busy.release()
        log.info("hall update %s to %s: %s (%s)", cid, version, outcome, why)
        report(ok, outcome, why[:MAX_WHY_CHARS])

    def _update(self, cid: str, version: str, sha256: str, url: str, token: str, wait_s: int,
                allow_downgrade: bool = False) -> tuple[bool, str, str]:
        request, result = self.folder / REQUEST, self.folder / RESULT
        done = read_json(result)
        if done is not None and done.get("id") == cid:  # this command was installed before a restart
            return self._outcome(done)
        pending = read_json(request)
        if pending is None or pending.get("id") != cid:
            if self.by_service and not os.path.exists(UPDATE_PATH_UNIT):
                return False, "failed", f"{UPDATE_PATH_UNIT} is not installed: install this version's bundle by hand once"
            self.folder.mkdir(parents=True, exist_ok=True)
            for old in self.folder.iterdir():  # an earlier update's files: one bundle on the card at a time
                old.unlink(missing_ok=True)
            archive = self.folder / f"rackside-{version}.tar.gz"
            try:
                fetch(url, token, archive, sha256, self.ca_file)
            except UpdateError as e:
                return False, "failed", str(e)
            write_json(request, {"id": cid, "file": archive.name, "sha256": sha256, "wait_s": wait_s,
                                 "allow_downgrade": allow_downgrade})
            if not self.by_service:
                subprocess.run([*self.command, "--request", str(request)], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + wait_s + INSTALL_S
        while True:  # the service's result (or the child's, already there)
            done = read_json(result)
            if done is not None and done.get("id") == cid:
                return self._outcome(done)
            if time.monotonic() > deadline or not request.exists():
                done = read_json(result)  # (written just before the request was removed)
                if done is not None and done.get("id") == cid:
                    return self._outcome(done)
                return False, "failed", "the install ended without a result (journalctl -u rackside-update)"
            time.sleep(POLL_S)

    @staticmethod
    def _outcome(done: dict) -> tuple[bool, str, str]:
        status = done.get("status")
        return outcome_of(status if isinstance(status, int) else 1, str(done.get("output", "")))
