"""A bundle's install.sh into a temporary root (issue 20): install v1, update to v2 beside it (only
between games), and a deliberately broken v3 that never reports READY=1 rolls back to v2. No
systemd runs in the root, so the readiness check is the new version's clock on simulated pins
sending READY=1 to the switch's notify socket (rackside/switch.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


from rackside import signing, switch
from rackside.game.clock import End, Press, Rules, apply
from rackside.firmware.persist import GameStore
from rackside.hall.wire.join import join_text
from support.bundle import RACKSIDE, build_bundle, copy_checkout, install, needs_root, unpack
from support.deploy import fake_systemctl

S = 1_000_000_000
pytestmark = needs_root


def make_bundles(tmp: Path, wheels: Path) -> dict[str, Path]:
    """v1, v2 and v3 (whose sd_notify never says READY=1), unpacked, each signed with the hall's update key."""
    from rackside import signing

    out = {}
    public = signing.make_key(tmp / "update-signing.key")
    for label in ("v1", "v2", "v3"):
        src = copy_checkout(tmp / f"src-{label}")
        if label == "v3":
            notify = src / "hardware" / "sdnotify.py"
            text = notify.read_text()
            broken = text.replace('return self.notify("READY=1"', 'return False and self.notify("READY=1"')
            assert broken != text
            notify.write_text(broken)
        archive = tmp / f"rackside-{label}.tar.gz"
        join = []
        if label == "v1":  # v1 brings the hall's join file
            (tmp / "join.toml").write_text(join_text("open2026", "auto", "s" * 32, None, public))
            join = ["--hall-join", str(tmp / "join.toml")]
        result = build_bundle(src, wheels, archive, label, *join, "--sign-key", str(tmp / "update-signing.key"))
        assert result.returncode == 0, result.stderr
        out[label] = unpack(archive, tmp / f"unpacked-{label}")
    return out


def checkpoint(journals: Path, *, ended: bool) -> None:
    """The clock's checkpoint as a real clock writes it: a game running, or ended."""
    store = GameStore(journals, Rules(), boot_id="b")
    clock = store.start(0)
    for event in [Press(1 * S, 2)] + ([End(2 * S)] if ended else []):
        store.record(event)
        clock = apply(clock, event)
    assert store.checkpoint(clock, 3 * S)
    store.close()


def version_of(root: Path) -> str:
    out = subprocess.run([str(root / "opt/rackside/current/.venv/bin/rackside"), "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout.strip()


def test_install_update_between_games_and_roll_back(offline_wheels, tmp_path):
    bundles = make_bundles(tmp_path, offline_wheels)
    root = tmp_path / "root"
    root.mkdir()
    base = root / "opt/rackside"

    # v1 on a fresh root: installed, units and defaults in place, enabled but not started.
    result, calls = install(bundles["v1"], root, tmp=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every file matches SHA256SUMS" in result.stdout
    assert "systemd is not running in" in result.stdout and "enabled, not started" in result.stdout
    assert calls == ["daemon-reload", "enable rackside-clock.service", "enable --quiet rackside-recover.service"]
    assert os.readlink(base / "current") == "0.1.0+v1" and version_of(root) == "rackside 0.1.0+v1"
    unit = (root / "etc/systemd/system/rackside-clock.service").read_text()
    assert "ExecStart=/opt/rackside/current/.venv/bin/rackside clock" in unit
    assert (root / "etc/rackside/clock.toml").is_file()
    joined = root / "etc/rackside/join.toml"  # where hall.device.joinfile.find looks first
    assert joined.read_text() == (tmp_path / "join.toml").read_text() and joined.stat().st_mode & 0o777 == 0o640
    key = root / "etc/rackside/update-key.pem"  # its update_key, root's: the root updater trusts only it
    assert key.read_text() == signing.public_key(tmp_path / "update-signing.key") and key.stat().st_mode & 0o777 == 0o644
    assert key.stat().st_uid == 0 and signing.trusted_key(root) == key.read_text()
    assert "switch: 0.1.0+v1 is current: the clock on simulated pins reported READY=1" in result.stdout

    # v2 while a game runs: installed beside v1, not switched (exit 75); the director's config kept.
    (root / "etc/rackside/clock.toml").write_text("# the director's own\n")
    journals = root / "var/lib/rackside/clock"
    checkpoint(journals, ended=False)
    result, _ = install(bundles["v2"], root, tmp=tmp_path)
    assert result.returncode == switch.EX_TEMPFAIL, result.stdout + result.stderr
    assert "not switched: the clock's game is running" in result.stdout
    assert (base / "0.1.0+v2/.installed").is_file() and os.readlink(base / "current") == "0.1.0+v1"

    # The game ends: the same install switches to v2, v1 stays beside it as `previous`.
    (journals / "checkpoint.json").unlink()
    checkpoint(journals, ended=True)
    result, _ = install(bundles["v2"], root, tmp=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "already installed" in result.stdout
    assert os.readlink(base / "current") == "0.1.0+v2" and os.readlink(base / "previous") == "0.1.0+v1"
    assert version_of(root) == "rackside 0.1.0+v2"
    assert (root / "etc/rackside/clock.toml").read_text() == "# the director's own\n"

    # v3 never reports READY=1: the link goes back to v2, which reports ready again; exit 1.
    result, _ = install(bundles["v3"], root, "--ready-timeout", "5", tmp=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "0.1.0+v3 did not become ready: no READY=1 within 5 s" in result.stdout
    assert "rolled back: " in result.stdout and "0.1.0+v2 is current again" in result.stdout
    assert os.readlink(base / "current") == "0.1.0+v2" and version_of(root) == "rackside 0.1.0+v2"
    assert sorted(p.name for p in base.iterdir()) == [".switch.lock", "0.1.0+v1", "0.1.0+v2", "0.1.0+v3", "current", "previous"]

    # A bundle with a changed file changes nothing.
    (bundles["v1"] / "source" / "game" / "clock.py").write_text("# tampered\n")
    result, calls = install(bundles["v1"], root, tmp=tmp_path)
    assert result.returncode == 1 and "do not match SHA256SUMS" in result.stderr and calls == []
    assert os.readlink(base / "current") == "0.1.0+v2"


def test_what_counts_as_between_games(tmp_path):
    journals = tmp_path / "clock"
    assert switch.game_in_progress(journals) is None  # never played
    checkpoint(journals, ended=False)
    assert "the clock's game is running" in switch.game_in_progress(journals)
    (journals / "checkpoint.json").write_text("{}")
    assert "taken as a game in progress" in switch.game_in_progress(journals)
    (journals / "checkpoint.json").unlink()
    checkpoint(journals, ended=True)
    assert switch.game_in_progress(journals) is None


def test_waiting_for_the_game_to_end(tmp_path):
    journals = tmp_path / "clock"
    checkpoint(journals, ended=False)
    clock = [0.0]

    def sleep(s):  # the game ends while the switch waits
        clock[0] += s
        if clock[0] >= 3:
            (journals / "checkpoint.json").unlink(missing_ok=True)

    assert switch.wait_between_games(journals, 10, sleep=sleep, now=lambda: clock[0]) is None
    checkpoint(journals, ended=False)
    clock[0] = 100.0
    assert switch.wait_between_games(journals, 2, sleep=lambda s: clock.__setitem__(0, clock[0] + s), now=lambda: clock[0])


def test_the_switch_refuses_a_version_that_is_not_installed(tmp_path, capsys):
    layout = switch.Layout(tmp_path)
    (tmp_path / "opt/rackside/half").mkdir(parents=True)  # cut short: no .installed
    assert switch.switch(layout, "half", switch.SimulatedClock()) == 1
    assert "half is not installed" in capsys.readouterr().out
    assert switch.switch(layout, "../etc", switch.SimulatedClock()) == 1


def test_with_systemd_the_services_themselves_must_become_active(tmp_path, capsys):
    """SystemdServices: restart each enabled unit and wait for `active` (a Type=notify unit is
    active only after READY=1); here systemctl is a script whose clock is active only on a good
    version, stuck `activating` on `slow` and `failed` on `crash`."""
    base = tmp_path / "opt/rackside"
    for v in ("good1", "good2", "slow", "crash"):
        (base / v).mkdir(parents=True)
        (base / v / switch.INSTALLED_MARK).touch()
    log = tmp_path / "calls"
    systemctl = tmp_path / "systemctl"
    systemctl.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{log}"\n'
        'case "$1" in\n'
        '  is-enabled) [ "$3" = rackside-clock.service ] && exit 0; exit 1;;\n'
        f'  is-active) case "$(readlink "{base}/current")" in slow) echo activating; exit 3;; crash) echo failed; exit 3;;'
        ' *) echo active; exit 0;; esac;;\n'
        "esac\n"
    )
    systemctl.chmod(0o755)
    layout = switch.Layout(tmp_path)
    services = switch.SystemdServices((str(systemctl),), poll_s=0.05)
    layout.point(switch.CURRENT, "good1")

    assert switch.switch(layout, "slow", services, ready_timeout_s=0.5) == 1
    out = capsys.readouterr().out
    assert "rackside-clock.service not ready within 0.5 s" in out and "rolled back" in out
    assert layout.current_version() == "good1"

    assert switch.switch(layout, "crash", services, ready_timeout_s=30) == 1
    assert "rackside-clock.service failed" in capsys.readouterr().out and layout.current_version() == "good1"

    assert switch.switch(layout, "good2", services, ready_timeout_s=5) == 0
    assert layout.current_version() == "good2" and os.readlink(base / "previous") == "good1"
    assert "restart --no-block rackside-clock.service" in log.read_text().splitlines()
    assert "restart --no-block rackside-kiosk.service" not in log.read_text()  # not enabled

    log.unlink()
    assert switch.switch(layout, "good2", services) == 0  # already current: start what is enabled, nothing else
    assert log.read_text().splitlines() == [f"is-enabled --quiet rackside-{s}.service" for s in switch.SERVICES] + [
        "start --no-block rackside-clock.service"]


def test_rackside_update_checks_the_sha256_then_installs(offline_wheels, tmp_path):
    archive = tmp_path / "rackside.tar.gz"
    assert build_bundle(copy_checkout(tmp_path / "src"), offline_wheels, archive, "u1").returncode == 0
    root = tmp_path / "root"
    root.mkdir()
    systemctl, _ = fake_systemctl(tmp_path)
    env = {**os.environ, "RACKSIDE_SYSTEMCTL": systemctl, "RACKSIDE_PYTHON": sys._base_executable}

    def update(*args):
        return subprocess.run([*RACKSIDE, "update", str(archive), "--root", str(root), "--user", "root", *args],
                              capture_output=True, text=True, env=env, timeout=600)

    wrong = update("--sha256", "0" * 64)
    assert wrong.returncode == 1 and "not the bundle that was built" in wrong.stderr
    assert not list((root / "opt/rackside").iterdir())  # refused before anything was unpacked (the copy is gone)
    bad = update("--sha256", "xyz")
    assert bad.returncode == 1 and "--sha256: 'xyz' is not a SHA-256" in bad.stderr

    done = update()  # the digest from rackside.tar.gz.sha256 beside it
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SHA-256" in done.stdout and "matches" in done.stdout and "done: rackside 0.1.0+u1 is current" in done.stdout
    assert sorted(p.name for p in (root / "opt/rackside").iterdir()) == [".switch.lock", "0.1.0+u1", "current"]  # the unpacked copy is gone


def test_a_successful_switch_keeps_only_the_current_and_previous_versions(tmp_path, monkeypatch):
    base = tmp_path / "opt/rackside"
    for v in ("a", "b", "c", "failed"):
        (base / v).mkdir(parents=True)
        (base / v / switch.INSTALLED_MARK).touch()
    (base / "cut-short").mkdir()  # an install that never finished
    (base / ".incoming-12").mkdir()  # `rackside update` unpacking a bundle right now
    layout = switch.Layout(tmp_path)
    layout.point(switch.CURRENT, "b")

    class Ready:
        name = "stand-in"

        def __init__(self, ok):
            self.ok = ok

        def start_and_check(self, layout, timeout_s):
            return self.ok, "stand-in"

    assert switch.switch(layout, "failed", Ready(False)) == 1  # a failed switch removes nothing
    # (`previous` -> b, the known-good version, was recorded before `current` moved)
    assert sorted(p.name for p in base.iterdir()) == [".incoming-12", ".switch.lock", "a", "b", "c", "current", "cut-short",
                                                      "failed", "previous"]
    assert switch.switch(layout, "c", Ready(True)) == 0
    assert sorted(p.name for p in base.iterdir()) == [".incoming-12", ".switch.lock", "b", "c", "current", "previous"]
    assert os.readlink(base / "current") == "c" and os.readlink(base / "previous") == "b"
