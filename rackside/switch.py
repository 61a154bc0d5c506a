"""Side-by-side versions and the switch between them: `rackside switch VERSION`.

A bundle's install.sh (deploy/bundle-install.sh) installs each version into its own folder and
then runs the new version's `rackside switch`:

    /opt/rackside/0.1.0+g1a2b3c4/    source, its own .venv, `.installed` once complete
    /opt/rackside/0.1.0+g5d6e7f8/
    /opt/rackside/current  -> 0.1.0+g5d6e7f8     what the services run (their units name this link)
    /opt/rackside/previous -> 0.1.0+g1a2b3c4     the known-good version the last switch left
    /opt/rackside/tentative -> 0.1.0+g5d6e7f8   only while a switch to it is unfinished

A successful switch removes every other version folder (`prune`): a Pi keeps two versions, and a
third only while it failed or waits to be switched to.

The switch, in order:

1. **Only between games.** The table's clock checkpoints its game at least once a second
   (firmware/persist.py: `checkpoint.json` in the journals folder, /var/lib/rackside/clock).
   A checkpoint in phase running, neutralised or late is a game in progress, and the switch waits
   for it to end (`--wait SECONDS`), else leaves the link alone and exits 75 (EX_TEMPFAIL) saying
   so; setup or ended, or no checkpoint, is between games. A checkpoint that cannot be read is
   treated as a game in progress (never restart a clock we cannot read). `--force` skips this
   (a restarted clock comes back neutralised from its journal, as after a power cut).
2. **Atomically, and tentatively.** `previous` is pointed at the running (known-good) version and
   `tentative` at the new one, and only then `current` at the new one: each a new link beside
   the old, renamed over it (rename(2) is atomic) and the folder fsync'd, so a service starting at
   any moment finds the old version or the new one, never none, and a power cut keeps the order.
3. **Ready, or back.** The new version must report READY=1 (sd_notify, as systemd's Type=notify
   units wait for) within `--ready-timeout` seconds. With systemd running, that is the services
   themselves, restarted and watched until active. In a root with no running systemd (an image
   being prepared, a test root) it is the new version's clock on simulated pins, started through
   the `current` link as the unit would, with NOTIFY_SOCKET on a socket this process listens on
   (`simulated_ready`). Not ready: the link goes back, the old version is started (or checked)
   again, and the switch exits 1. Ready: `tentative` is removed, and that is the commit point
   ("mark good", as RAUC's `rauc status mark-good` and systemd's boot counting's
   systemd-bless-boot): until then the new version is on trial.

**Surviving its own death** (issue 25, item 3). The switch holds an flock on
/opt/rackside/.switch.lock while it runs, which the kernel releases however it ends (SIGKILL, OOM,
a power cut). A `tentative` link with no switch holding the lock is a switch that died before the
new version was marked good: `rackside switch --recover` (and every switch, before it starts) points
`current` back at `previous` and removes `tentative`. rackside-recover.service runs that at boot and
before each rackside service starts, from the *previous* version's own venv (the new one may be
what is broken); while a switch runs, its own readiness check restarts those services, and the
recovery, finding the lock held, leaves everything alone. tests/test_bundle_switch_death.py kills
the switch at every step (RACKSIDE_SWITCH_KILL_AT, for tests) and during its readiness check.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rackside.atomic import fsync_dir

INSTALL_DIR = "opt/rackside"  # under the root
CURRENT, PREVIOUS = "current", "previous"
TENTATIVE = "tentative"  # -> the version a switch is trying: present from before `current` moves until it is ready
LOCK_FILE = ".switch.lock"  # flock'd by the running switch (a dot name: prune leaves it)
# The switch's steps, in order; `good` is after the commit point (the new version marked good).
STEPS = ("previous", "tentative", "current", "checking", "ready", "good")
KILL_AT_ENV = "RACKSIDE_SWITCH_KILL_AT"  # for tests: the switch SIGKILLs itself at this step
INSTALLED_MARK = ".installed"  # written last by install.sh: the version folder is complete
JOURNALS_DIR = "var/lib/rackside/clock"  # the clock service's (RACKSIDE_STATE_DIR=/var/lib/rackside)
SERVICES = ("clock", "kiosk", "broker", "hall-station")
EX_TEMPFAIL = 75
READY_TIMEOUT_S = 90.0  # the clock unit's TimeoutStartSec=
MAX_NOTIFY_BYTES = 4096  # one sd_notify datagram; longer is cut (we only look for READY=1)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "switch",
        help="point /opt/rackside/current at an installed version, between games, rolling back if it is not ready",
        description="Point /opt/rackside/current at an installed version (docs/deploy.md: updates).",
    )
    p.add_argument("version", metavar="VERSION", nargs="?", help="a folder in /opt/rackside (see `ls /opt/rackside`)")
    p.add_argument("--recover", action="store_true",
                   help="only go back to the previous version if a switch died before the new one was ready (rackside-recover.service)")
    p.add_argument("--root", type=Path, default=Path("/"), metavar="DIR", help="the system's root (an image, a test root); default /")
    p.add_argument("--force", action="store_true", help="switch even while a game is in progress")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="wait this long for the game in progress to end")
    p.add_argument("--ready-timeout", type=float, default=READY_TIMEOUT_S, metavar="SECONDS",
                   help=f"how long the new version has to report READY=1 (default {READY_TIMEOUT_S:g})")
    p.set_defaults(func=run, logging=False)


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.wait <= 24 * 3600 or not 1 <= args.ready_timeout <= 3600:
        print("rackside switch: --wait is 0 to 86400 seconds, --ready-timeout 1 to 3600", file=sys.stderr)
        return 2
    layout = Layout(args.root)
    if args.recover:
        if args.version is not None:
            print("rackside switch: --recover takes no VERSION", file=sys.stderr)
            return 2
        return recover_at_start(layout)
    if args.version is None:
        print("rackside switch: give the VERSION to switch to (or --recover)", file=sys.stderr)
        return 2
    checker = SystemdServices() if systemd_running(args.root) else SimulatedClock()
    return switch(layout, args.version, checker, force=args.force, wait_s=args.wait,
                  ready_timeout_s=args.ready_timeout)


def say(message: str) -> None:
    print(f"switch: {message}", flush=True)


@dataclass(frozen=True)
class Layout:
    root: Path

    @property
    def base(self) -> Path:
        return self.root / INSTALL_DIR

    @property
    def current(self) -> Path:
        return self.base / CURRENT

    def version_dir(self, version: str) -> Path:
        return self.base / version

    def installed(self, version: str) -> bool:
        return bool(version) and "/" not in version and version not in (CURRENT, PREVIOUS, TENTATIVE) \
            and (self.version_dir(version) / INSTALLED_MARK).is_file()

    def current_version(self) -> str | None:
        try:
            return os.readlink(self.current)
        except OSError:
            return None

    def point(self, name: str, version: str) -> None:
        """`name` -> `version`, atomically: a new link renamed over the old one."""
        link = self.base / name
        tmp = self.base / f".{name}.{os.getpid()}"
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        os.symlink(version, tmp)  # relative: the same link works in an image and on the Pi
        os.replace(tmp, link)
        fsync_dir(self.base)  # the rename survives a power cut

    def link(self, name: str) -> str | None:
        try:
            return os.readlink(self.base / name)
        except OSError:
            return None

    def remove(self, name: str) -> None:
        try:
            (self.base / name).unlink()
        except FileNotFoundError:
            return
        fsync_dir(self.base)

    def journals(self) -> Path:
        return self.root / JOURNALS_DIR


# --- Between games -------------------------------------------------------------------------------


def game_in_progress(journals: Path) -> str | None:
    """Why a game is in progress on this table's clock (to say to the director), or None between games."""
    from rackside.game.clock import Phase
    from rackside.firmware.persist import parse_checkpoint

    path = journals / "checkpoint.json"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None  # this clock never played, or the Pi is a station
    except OSError as e:
        return f"cannot read {path} ({e.strerror}); taken as a game in progress"
    try:
        phase = parse_checkpoint(data).clock.phase
    except ValueError as e:
        return f"{path} cannot be read ({e}); taken as a game in progress"
    if phase in (Phase.SETUP, Phase.ENDED):
        return None
    return f"the clock's game is {phase.value} ({path})"


def wait_between_games(journals: Path, wait_s: float, *, sleep=time.sleep, now=time.monotonic) -> str | None:
    """None once no game is in progress; the reason if one still is after `wait_s` seconds."""
    deadline = now() + wait_s
    reason = game_in_progress(journals)
    told = False
    while reason is not None and now() < deadline:
        if not told:
            say(f"waiting up to {wait_s:g} s for the game to end: {reason}")
            told = True
        sleep(1.0)  # the clock checkpoints at least once a second
        reason = game_in_progress(journals)
    return reason


# --- Ready? --------------------------------------------------------------------------------------


class SimulatedClock:
    """The readiness check where no systemd runs: the `current` version's clock on simulated pins,
    started as its unit starts it (through the link), must send READY=1 to our notify socket."""

    name = "the clock on simulated pins"

    def start_and_check(self, layout: Layout, timeout_s: float) -> tuple[bool, str]:
        return simulated_ready(layout.current / ".venv" / "bin" / "rackside", timeout_s)

    def start_enabled(self, layout: Layout) -> None:
        """Nothing to start where no systemd runs: the services start at the next boot."""


def simulated_ready(rackside: Path, timeout_s: float) -> tuple[bool, str]:
    """Run `rackside clock --simulate --headless` with its own empty config and state, and wait
    up to `timeout_s` for READY=1 on a notify socket; then stop it. (True, status) or (False, why)."""
    with tempfile.TemporaryDirectory(prefix="rackside-ready-") as tmp:
        address = os.path.join(tmp, "notify")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(address)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RACKSIDE_", "WATCHDOG_", "NOTIFY_"))}
        env.update(NOTIFY_SOCKET=address, RACKSIDE_CONFIG_DIR=os.path.join(tmp, "config"),
                   RACKSIDE_STATE_DIR=os.path.join(tmp, "state"), PYTHONUNBUFFERED="1")
        err_path = os.path.join(tmp, "stderr")
        try:
            with open(err_path, "wb") as err:
                proc = subprocess.Popen([str(rackside), "clock", "--simulate", "--headless"], env=env,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        except OSError as e:
            sock.close()
            return False, f"cannot run {rackside}: {e.strerror}"
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False, f"no READY=1 within {timeout_s:g} s{_tail(err_path)}"
                sock.settimeout(min(left, 0.5))
                try:
                    message = sock.recv(MAX_NOTIFY_BYTES).decode("utf-8", "replace").splitlines()
                except socket.timeout:
                    if proc.poll() is not None:
                        return False, f"it exited with status {proc.returncode} before READY=1{_tail(err_path)}"
                    continue
                if "READY=1" in message:
                    status = next((m[len("STATUS="):] for m in message if m.startswith("STATUS=")), "ready")
                    return True, status
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            sock.close()


def _tail(path: str) -> str:
    try:
        lines = Path(path).read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return f": {lines[-1]}" if lines else ""


class SystemdServices:
    """The readiness check on a running system: restart each enabled rackside service and wait
    until systemd has it active (a Type=notify unit is active only after READY=1)."""

    name = "the services"

    def __init__(self, systemctl: tuple[str, ...] = ("systemctl",), poll_s: float = 0.5) -> None:
        self.systemctl = systemctl
        self.poll_s = poll_s

    def enabled(self, layout: Layout) -> list[str]:
        units = [f"rackside-{s}.service" for s in SERVICES]
        return [u for u in units if subprocess.run([*self.systemctl, "is-enabled", "--quiet", u]).returncode == 0]

    def start_enabled(self, layout: Layout) -> None:
        """Start the enabled services that are not running (a service just enabled by install.sh
        on a version that is already current); running ones are left alone."""
        for unit in self.enabled(layout):
            subprocess.run([*self.systemctl, "start", "--no-block", unit], check=False)

    def start_and_check(self, layout: Layout, timeout_s: float) -> tuple[bool, str]:
        units = self.enabled(layout)
        if not units:
            return True, "no rackside service is enabled"
        for unit in units:
            subprocess.run([*self.systemctl, "restart", "--no-block", unit], check=False)
        deadline = time.monotonic() + timeout_s
        waiting = list(units)
        while waiting:
            for unit in list(waiting):
                state = subprocess.run([*self.systemctl, "is-active", unit], capture_output=True, text=True).stdout.strip()
                if state == "active":
                    waiting.remove(unit)
                elif state == "failed":
                    return False, f"{unit} failed (journalctl -u {unit})"
            if waiting and time.monotonic() > deadline:
                return False, f"{', '.join(waiting)} not ready within {timeout_s:g} s (journalctl -u {waiting[0]})"
            if waiting:
                time.sleep(self.poll_s)
        return True, f"{', '.join(units)} active"


def systemd_running(root: Path) -> bool:
    """systemd manages this system (sd_booted(3)), and the root is this system's."""
    return root.resolve() == Path("/") and os.path.isdir("/run/systemd/system")


# --- A switch that died --------------------------------------------------------------------------


def hold_lock(layout: Layout) -> int | None:
    """The switch lock's fd, held (the kernel lets go when this process ends, however it ends), or
    None while another process holds it. Not inherited by children (the readiness check's clock)."""
    layout.base.mkdir(parents=True, exist_ok=True)
    fd = os.open(layout.base / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def recover(layout: Layout) -> None:
    """With the lock held: a `tentative` link means the switch that made it died before its version
    was marked good. Back to `previous`, the known-good version it recorded before moving `current`."""
    trying = layout.link(TENTATIVE)
    if trying is None:
        return
    good = layout.link(PREVIOUS)
    if good is not None and good != trying and layout.installed(good):
        if layout.current_version() != good:
            layout.point(CURRENT, good)
        say(f"a switch to {trying} did not finish (it ended before {trying} was ready): {layout.current} -> {good}")
    else:
        say(f"a switch to {trying} did not finish, and there is no earlier version to go back to: {layout.current} "
            f"stays on {layout.current_version()}")
    layout.remove(TENTATIVE)


def recover_at_start(layout: Layout) -> int:
    """`rackside switch --recover`: what rackside-recover.service runs before the services start."""
    if not layout.base.is_dir():
        return 0
    fd = hold_lock(layout)
    if fd is None:
        say("a switch is running: its own readiness check starts the services; nothing to recover")
        return 0
    try:
        recover(layout)
    finally:
        os.close(fd)
    return 0


def _step(name: str) -> None:
    """Each step of the switch, for tests that kill it there (a real SIGKILL: no finally runs)."""
    if os.environ.get(KILL_AT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


# --- The switch ----------------------------------------------------------------------------------


def prune(layout: Layout, keep: set[str | None]) -> list[str]:
    """Remove every version folder but `keep` (the current and the previous one): each is ~100 MB
    on an SD card, so a Pi holds at most three (current, previous, and one that failed or waits
    to be switched to) however many updates it gets. Returns the names removed."""
    removed = []
    for entry in sorted(layout.base.iterdir()):
        if entry.name in keep or entry.name.startswith(".") or entry.is_symlink() or not entry.is_dir():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry.name)
    return removed


def switch(layout: Layout, version: str, checker: Any, *, force: bool = False, wait_s: float = 0.0,
           ready_timeout_s: float = READY_TIMEOUT_S, between_games: Callable[[Path, float], str | None] = wait_between_games) -> int:
    if not layout.installed(version):
        say(f"{version} is not installed in {layout.base} (no {INSTALLED_MARK}): run its install.sh")
        return 1
    fd = hold_lock(layout)
    if fd is None:
        say(f"another switch is running in {layout.base}: try again when it has finished")
        return 1
    try:
        recover(layout)  # a switch that died before this one: back to the known-good version first
        return _switch(layout, version, checker, force=force, wait_s=wait_s, ready_timeout_s=ready_timeout_s,
                       between_games=between_games)
    finally:
        os.close(fd)


def _switch(layout: Layout, version: str, checker: Any, *, force: bool, wait_s: float, ready_timeout_s: float,
            between_games: Callable[[Path, float], str | None]) -> int:
    old = layout.current_version()
    if old == version:
        checker.start_enabled(layout)
        say(f"{version} is already current")
        return 0
    if not force:
        reason = between_games(layout.journals(), wait_s)
        if reason is not None:
            say(f"not switched: {reason}. {version} stays installed beside {old}; switch between games with "
                f"`sudo {layout.base}/{version}/.venv/bin/rackside switch {version}` (or --wait SECONDS)")
            return EX_TEMPFAIL
    can_go_back = old is not None and layout.installed(old)
    if can_go_back:
        layout.point(PREVIOUS, old)  # the known-good version, before anything else moves
    _step("previous")
    layout.point(TENTATIVE, version)  # on trial until it reports ready
    _step("tentative")
    layout.point(CURRENT, version)
    _step("current")
    say(f"{layout.current} -> {version} (was {old or 'nothing'})")
    _step("checking")
    ok, detail = checker.start_and_check(layout, ready_timeout_s)
    if ok:
        _step("ready")
        layout.remove(TENTATIVE)  # marked good: the commit point
        _step("good")
        say(f"{version} is current: {checker.name} reported READY=1 ({detail})")
        for gone in prune(layout, keep={version, old}):
            say(f"removed {gone} (only the current and the previous version are kept)")
        return 0
    say(f"{version} did not become ready: {detail}")
    if not can_go_back:
        layout.remove(TENTATIVE)
        say(f"no earlier version to go back to; {layout.current} stays on {version}")
        return 1
    layout.point(CURRENT, old)
    layout.remove(TENTATIVE)
    say(f"rolled back: {layout.current} -> {old}")
    ok, detail = checker.start_and_check(layout, ready_timeout_s)
    say(f"{old} {'is current again: ' + checker.name + ' reported READY=1' if ok else 'did not become ready either'} ({detail})")
    return 1
