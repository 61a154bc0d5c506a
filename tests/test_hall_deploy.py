"""The hall's systemd unit and the installer's hall parts: the broker service, and the clock
allowed on the network only when clock.toml has a [hall] section (issue 12)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from support.deploy import REPO, needs_venv, one, parse_unit, run_install

BROKER_UNIT = REPO / "deploy" / "rackside-broker.service"
STATION_UNIT = REPO / "deploy" / "rackside-hall-station.service"


def test_hall_station_unit_runs_rackside_hall_station():
    unit = parse_unit(STATION_UNIT.read_text())
    assert one(unit, "Service", "ExecStart") == "@REPO@/.venv/bin/rackside hall station"
    assert one(unit, "Service", "Restart") == "always"


def test_broker_unit_runs_rackside_hall_broker_with_the_provisioned_config():
    unit = parse_unit(BROKER_UNIT.read_text())
    assert one(unit, "Service", "ExecStart") == "@REPO@/.venv/bin/rackside hall broker --config /etc/rackside/hall"
    assert one(unit, "Service", "User") == "@USER@"
    assert one(unit, "Service", "Restart") == "always"
    assert one(unit, "Unit", "Conflicts") == "mosquitto.service"
    assert one(unit, "Unit", "ConditionPathExists") == "/etc/rackside/hall/mosquitto.conf"


@needs_venv
def test_installer_installs_the_broker_and_opens_the_network_to_a_clock_on_a_hall(tmp_path):
    root = tmp_path / "root"
    first, calls = run_install(tmp_path, "broker", "hall-station")
    assert first.returncode == 0, first.stderr
    assert (root / "etc/systemd/system/rackside-broker.service").is_file()
    assert "enable --now rackside-broker.service" in calls and "enable --now rackside-hall-station.service" in calls
    assert "enable --now rackside-clock.service" not in calls
    dropin = root / "etc/systemd/system/rackside-clock.service.d/hall.conf"
    assert not dropin.exists()  # the default clock.toml has no [hall]: AF_UNIX only
    clock_toml = root / "etc/rackside/clock.toml"
    clock_toml.write_text(clock_toml.read_text() + '\n[hall]\nurl = "auto"\ncredentials = "/etc/rackside/hall-credentials.toml"\n')
    second, calls = run_install(tmp_path)
    assert second.returncode == 0, second.stderr
    assert "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK" in dropin.read_text()
    assert calls[0] == "daemon-reload"
    third, calls = run_install(tmp_path)
    assert "installed:" not in third.stdout and calls == ["enable --now rackside-clock.service"]
    clock_toml.write_text("[clock]\n")
    fourth, calls = run_install(tmp_path)
    assert not dropin.exists() and "removed:" in fourth.stdout


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
@needs_venv
def test_systemd_analyze_verifies_the_broker_unit(tmp_path):
    import os
    import pwd

    targets = []
    for unit in (BROKER_UNIT, STATION_UNIT):
        target = tmp_path / unit.name
        target.write_text(unit.read_text().replace("@REPO@", str(REPO)).replace("@USER@", pwd.getpwuid(os.getuid()).pw_name))
        targets.append(str(target))
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *targets], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr
