"""A switch that survives its own death (issue 25, item 3; defect 6): the new version is tentative
until it reports ready, so a `rackside switch` killed at any step leaves the old version running at
the next start (`rackside switch --recover`, what rackside-recover.service runs before the services).

The versions here are stand-ins, not bundles: each is an /opt/rackside/<version>/ folder whose
`.venv/bin/rackside` is a small script that the switch's readiness check runs as it runs a real
clock (SimulatedClock: no systemd in a test root). `old` reports READY=1; `hangs` never does. The
switch itself is the real `rackside switch` process, killed with SIGKILL (a real death: no finally,
no atexit), at each of its steps (RACKSIDE_SWITCH_KILL_AT) or from outside while it waits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rackside import switch
from support.bundle import RACKSIDE
from support.wait import wait


def fake_version(base: Path, name: str, *, ready: bool = True) -> None:
    """An installed version whose clock writes its pid to $FAKE_STARTED_DIR/<name>.pid, reports
    READY=1 (or never does) and runs until it is stopped."""
    bin_dir = base / name / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "rackside"
    script.write_text(
        f"#!{sys.executable}\n"
        "import os, socket, time\n"
        f"open(os.path.join(os.environ['FAKE_STARTED_DIR'], {name!r} + '.pid'), 'w').write(str(os.getpid()))\n"
        f"if {ready!r}:\n"
        "    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "    s.sendto(b'READY=1\\nSTATUS=stand-in', os.environ['NOTIFY_SOCKET'])\n"
        "while True:\n"
        "    time.sleep(60)\n"
    )
    script.chmod(0o755)
    (base / name / switch.INSTALLED_MARK).touch()


def layout_with(tmp_path: Path, **versions: bool) -> tuple[Path, Path]:
    root = tmp_path / "root"
    base = root / switch.INSTALL_DIR
    for name, ready in versions.items():
        fake_version(base, name, ready=ready)
    switch.Layout(root).point(switch.CURRENT, "old")
    return root, base


def run_switch(root: Path, tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RACKSIDE, "switch", *args, "--root", str(root)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "FAKE_STARTED_DIR": str(tmp_path), **env})


def link(base: Path, name: str) -> str | None:
    try:
        return os.readlink(base / name)
    except FileNotFoundError:
        return None


def stop_stray_clock(pid_file: Path) -> None:
    """The readiness check's clock outlives a killed switch (as a unit's process would): stop it."""
    try:
        os.kill(int(pid_file.read_text()), signal.SIGTERM)
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass


def test_a_switch_killed_during_its_readiness_check_leaves_the_old_version_at_the_next_start(tmp_path):
    """Defect 6 as it was found: killed while the new version had not yet reported ready."""
    root, base = layout_with(tmp_path, old=True, hangs=False)
    proc = subprocess.Popen([*RACKSIDE, "switch", "hangs", "--root", str(root), "--force", "--ready-timeout", "600"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "FAKE_STARTED_DIR": str(tmp_path)})
    try:
        wait(lambda: (tmp_path / "hangs.pid").exists(), 60)  # the check has started the new version
        # While the switch lives, a start of the services (its own check restarts them) changes nothing.
        alive = run_switch(root, tmp_path, "--recover")
        assert alive.returncode == 0 and "a switch is running" in alive.stdout, alive.stdout + alive.stderr
        assert link(base, switch.CURRENT) == "hangs"
    finally:
        proc.kill()
        proc.wait()
        stop_stray_clock(tmp_path / "hangs.pid")
    assert link(base, switch.PREVIOUS) == "old"  # the known-good version, recorded before `current` moved
    started = run_switch(root, tmp_path, "--recover")  # the next start
    assert started.returncode == 0, started.stdout + started.stderr
    assert link(base, switch.CURRENT) == "old" and link(base, switch.TENTATIVE) is None
    assert "did not finish" in started.stdout and "-> old" in started.stdout


@pytest.mark.parametrize("step", switch.STEPS)
def test_a_switch_killed_at_any_step_leaves_the_old_version_at_the_next_start(tmp_path, step):
    """Killed at each step: the old version is current at the next start, until the new one was
    marked good (the last step, `good`, is after that: it stays)."""
    root, base = layout_with(tmp_path, old=True, new=True)
    killed = run_switch(root, tmp_path, "new", "--force", **{switch.KILL_AT_ENV: step})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    stop_stray_clock(tmp_path / "new.pid")

    started = run_switch(root, tmp_path, "--recover")
    assert started.returncode == 0, started.stdout + started.stderr
    assert link(base, switch.CURRENT) == ("new" if step == "good" else "old"), started.stdout
    assert link(base, switch.TENTATIVE) is None

    again = run_switch(root, tmp_path, "new", "--force")  # and the next switch does it whole
    assert again.returncode == 0, again.stdout + again.stderr
    assert link(base, switch.CURRENT) == "new" and link(base, switch.PREVIOUS) == "old"


def test_the_next_switch_first_goes_back_from_one_that_died(tmp_path):
    """No start in between (no boot, no recover unit): the next `rackside switch` recovers first."""
    root, base = layout_with(tmp_path, old=True, new=True, later=True)
    killed = run_switch(root, tmp_path, "new", "--force", **{switch.KILL_AT_ENV: "current"})
    assert killed.returncode == -signal.SIGKILL and link(base, switch.CURRENT) == "new"
    done = run_switch(root, tmp_path, "later", "--force")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "did not finish" in done.stdout
    assert link(base, switch.CURRENT) == "later" and link(base, switch.PREVIOUS) == "old"
