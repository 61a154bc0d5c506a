"""The systemd units and deploy/install-pi.sh: structure always, `systemd-analyze verify` where
systemd is installed, and the installer run for real into a scratch root with a fake systemctl."""

from __future__ import annotations

import os
import pwd
import grp
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from rackside.hardware.sdnotify import Notifier

from support.deploy import REPO, UNITS, needs_venv, one, parse_unit, run_install, values


@pytest.mark.parametrize("name", ["clock", "kiosk"])
def test_unit_structure(name):
    unit = parse_unit(UNITS[name].read_text())
    assert set(unit) == {"Unit", "Service", "Install"}
    assert one(unit, "Unit", "Description")
    assert one(unit, "Unit", "StartLimitIntervalSec") == "0"  # never give up restarting
    assert one(unit, "Unit", "RequiresMountsFor") == "/var/lib/rackside"
    assert one(unit, "Service", "Type") == "notify"
    assert one(unit, "Service", "NotifyAccess") == "main"
    assert one(unit, "Service", "Restart") == "always"
    assert one(unit, "Service", "StateDirectory") == "rackside"
    assert one(unit, "Service", "ConfigurationDirectory") == "rackside"
    env = values(unit, "Service", "Environment")
    assert "RACKSIDE_STATE_DIR=/var/lib/rackside" in env and "RACKSIDE_CONFIG_DIR=/etc/rackside" in env
    watchdog = one(unit, "Service", "WatchdogSec")
    assert re.fullmatch(r"\d+", watchdog) and 5 <= int(watchdog) <= 60
    # What the program will be told, and how often it must then ping: half of it.
    assert Notifier({"WATCHDOG_USEC": str(int(watchdog) * 1_000_000)}).watchdog_period_ns() == int(watchdog) * 500_000_000
    assert one(unit, "Service", "ExecStart") == f"@REPO@/.venv/bin/rackside {name}"
    assert one(unit, "Service", "User") == "@USER@"
    for key, value in [("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("ProtectHome", "read-only"),
                       ("PrivateTmp", "yes"), ("RestrictSUIDSGID", "yes")]:
        assert one(unit, "Service", key) == value
    assert one(unit, "Install", "WantedBy") == "multi-user.target"


def test_the_update_units_install_what_the_clock_requests_as_root():
    """Updates from the console (hall/device/update.py): the clock's unit wants the path unit, which starts
    the root service when the clock's request appears in its state folder (where hall.device.update puts it)."""
    from rackside import paths
    from rackside.hall.device import update

    clock = parse_unit(UNITS["clock"].read_text())
    assert one(clock, "Unit", "Wants") == "rackside-update.path"
    path = parse_unit(UNITS["update.path"].read_text())
    request = one(path, "Path", "PathExists")
    assert request == f"{paths.SYSTEM_STATE_DIR}/updates/{update.REQUEST}"  # the clock's state folder's updates/
    assert one(path, "Path", "Unit") == "rackside-update.service"
    service = parse_unit(UNITS["update"].read_text())
    assert one(service, "Service", "Type") == "oneshot" and "User" not in dict(service["Service"])  # root
    assert one(service, "Service", "ExecStart") == f"@REPO@/.venv/bin/rackside update --request {request}"
    assert one(clock, "Service", "StateDirectory") == "rackside" and paths.SYSTEM_STATE_DIR == "/var/lib/rackside"


def test_the_recover_unit_runs_the_previous_version_before_every_service():
    """A switch that died (rackside/switch.py): at boot and before each service starts, the previous
    (known-good) version's own rackside puts `current` back, as root, only when a switch left `tentative`."""
    from rackside import switch

    unit = parse_unit(UNITS["recover"].read_text())
    base = "/" + switch.INSTALL_DIR
    assert one(unit, "Unit", "ConditionPathIsSymbolicLink") == f"{base}/{switch.TENTATIVE}"
    assert one(unit, "Service", "Type") == "oneshot" and "User" not in dict(unit["Service"])  # root
    assert one(unit, "Service", "ExecStart") == f"{base}/{switch.PREVIOUS}/.venv/bin/rackside switch --recover"
    services = [f"rackside-{s}.service" for s in switch.SERVICES]
    assert one(unit, "Unit", "Before").split() == [*services, "rackside-update.service"]
    assert one(unit, "Install", "WantedBy").split() == ["multi-user.target", *services]


def test_execstart_is_the_console_script_setup_sh_installs():
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "bin/rackside" in setuptools["script-files"]  # setup.sh's `pip install -e .` installs it as .venv/bin/rackside
    venv_script = REPO / ".venv" / "bin" / "rackside"
    if (REPO / ".venv").exists():
        assert os.access(venv_script, os.X_OK), f"{venv_script} missing: run ./setup.sh"


def test_pi_requirements_never_pair_rpigpio_with_rpi_lgpio():
    names = {line.split("==")[0].strip().lower() for line in (REPO / "requirements-pi.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")}
    assert "lgpio" in names
    assert not {"rpi.gpio", "rpi-lgpio"} <= names


@needs_venv
def test_install_is_idempotent_and_keeps_the_directors_config(tmp_path):
    root = tmp_path / "root"
    first, calls = run_install(tmp_path)
    assert first.returncode == 0, first.stderr
    for name in ("clock", "kiosk"):
        installed = (root / "etc/systemd/system" / f"rackside-{name}.service").read_text()
        assert not re.search(r"@[A-Z]+@", installed), "a placeholder was left unfilled"
        assert f"ExecStart={REPO}/.venv/bin/rackside {name}" in installed
        assert f"User={pwd.getpwuid(REPO.stat().st_uid).pw_name}" in installed
    assert (root / "etc/rackside/clock.toml").read_text() == (REPO / "firmware/clock.toml").read_text()
    assert calls == ["daemon-reload", "is-active --quiet rackside-clock.service", "enable --now rackside-clock.service"]
    assert "installed:" in first.stdout and "copied:" in first.stdout

    (root / "etc/rackside/clock.toml").write_text("# the director's own config\n")
    second, calls = run_install(tmp_path)
    assert second.returncode == 0, second.stderr
    assert "unchanged: " in second.stdout and "kept: " in second.stdout and "installed:" not in second.stdout
    assert (root / "etc/rackside/clock.toml").read_text() == "# the director's own config\n"
    assert calls == ["enable --now rackside-clock.service"]  # no reload, no restart

    # A changed unit is reinstalled, and a running service restarted.
    unit = root / "etc/systemd/system/rackside-kiosk.service"
    unit.write_text(unit.read_text() + "# edited\n")
    third, calls = run_install(tmp_path, "clock", "kiosk", active=True)
    assert third.returncode == 0, third.stderr
    assert calls == ["daemon-reload", "enable --now rackside-clock.service", "is-active --quiet rackside-kiosk.service",
                     "restart rackside-kiosk.service", "enable --now rackside-kiosk.service"]
    assert (root / "var/lib/rackside/lexicons/enable.rlex").is_file()  # the station's lexicon, in its state dir


def test_install_refuses_an_unknown_service(tmp_path):
    result, calls = run_install(tmp_path, "judge")
    assert result.returncode == 1
    assert "unknown service 'judge' (allowed: clock, kiosk, broker, hall-station, none, --help)" in result.stderr
    assert calls == []


def _filled(tmp_path: Path) -> list[Path]:
    user = pwd.getpwuid(os.getuid()).pw_name
    group = grp.getgrgid(os.getgid()).gr_name
    out = []
    for name, path in UNITS.items():
        target = tmp_path / path.name
        text = path.read_text().replace("@REPO@", str(REPO)).replace("@USER@", user).replace("@GROUPS@", group)
        # rackside-recover.service names the bundle layout's previous version: this checkout's venv stands in
        target.write_text(text.replace("/opt/rackside/previous/.venv", str(REPO / ".venv")))
        out.append(target)
    return out


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
@needs_venv
def test_systemd_analyze_verify(tmp_path):
    units = _filled(tmp_path)
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *map(str, units)],
                            capture_output=True, text=True, timeout=120)
    # verify exits 0 even for ignored settings, so any message at all is a failure.
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr


def test_the_rackside_command_imports_no_re_before_rackside_runs(tmp_path):
    """pip's generated entry-point wrapper imports `re` (6-7 ms of every command); bin/rackside
    does not, so `rackside judge --lexicon FILE WORD` imports no `re` at all (issue 11)."""
    import sys

    words = tmp_path / "w.txt"
    words.write_text("CAT\nDOG\n")
    lexicon = tmp_path / "w.rlex"
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "state")}
    subprocess.run([sys.executable, str(REPO / "bin" / "rackside"), "lexicon", "compile", str(words), "-o", str(lexicon),
                    "--name", "W"], check=True, capture_output=True, env=env, timeout=60)
    out = subprocess.run([sys.executable, "-X", "importtime", str(REPO / "bin" / "rackside"), "judge", "--lexicon",
                          str(lexicon), "CAT"], capture_output=True, text=True, env=env, timeout=60)
    assert (out.returncode, out.stdout) == (0, "ACCEPTABLE\n")
    imported = [line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if "|" in line]
    assert "rackside.judge.lexicon" in imported and "re" not in imported and "argparse" not in imported


@pytest.mark.skipif(shutil.which("systemctl") is None or os.path.isdir("/run/systemd/system"),
                    reason="needs systemctl, and no systemd running (as in a chroot preparing an image)")
@needs_venv
def test_without_a_running_systemd_the_services_are_enabled_on_disk_not_started(tmp_path):
    """An image being prepared: `systemctl --root` enables the unit (the wants link), and nothing is
    reloaded or started (`systemctl daemon-reload` would fail: no manager to talk to)."""
    root = tmp_path / "root"
    env = {k: v for k, v in os.environ.items() if k != "RACKSIDE_SYSTEMCTL"}
    env["RACKSIDE_DESTDIR"] = str(root)
    result = subprocess.run(["bash", str(REPO / "deploy" / "install-pi.sh"), "clock"], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "enabled: rackside-clock.service (systemd is not running here: it starts at the next boot)" in result.stdout
    assert "reloaded systemd" not in result.stdout and "started" not in result.stdout.replace("not started", "")
    wants = root / "etc/systemd/system/multi-user.target.wants/rackside-clock.service"
    assert wants.is_symlink() and os.readlink(wants) == "/etc/systemd/system/rackside-clock.service"
    assert not (root / "etc/systemd/system/multi-user.target.wants/rackside-kiosk.service").exists()
