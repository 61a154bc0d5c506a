"""Rough edges a new director hit, each through the command the director runs (issue 26 item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def rackside(*args: str, env: dict | None = None, timeout: float = 60, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rackside", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, cwd=cwd)


@pytest.mark.skipif(os.geteuid() != 0, reason="Mosquitto drops privileges only when started as root")
def test_a_broker_provisioned_as_root_without_run_as_names_the_fix_not_openssl(tmp_path):
    """Provisioned as root without --run-as (provision's warning is easy to miss): Mosquitto drops to
    the user `mosquitto`, which cannot read the owner-only files, and printed only its own lines
    ("Dynamic security plugin config: File is not readable", "Unable to load CA certificates",
    OpenSSL's "Permission denied")."""
    from support.broker import free_port

    hall = tmp_path / "hall"
    assert rackside("hall", "provision", "--hall", "h", "--tables", "1", "--port", str(free_port()),
                    "--tls-port", str(free_port()), "--out", str(hall)).returncode == 0
    out = rackside("hall", "broker", "--config", str(hall), "--no-mdns", timeout=30)
    assert out.returncode != 0
    lines = (out.stdout + out.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert "'mosquitto'" in lines[0] and "--run-as" in lines[0] and str(hall) in lines[0]
    assert "OpenSSL" not in out.stderr


def busy_port():
    """A loopback port someone else is listening on (as a first console or demo would)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s, s.getsockname()[1]


def test_a_second_console_on_a_busy_port_says_so_in_one_line_before_any_url(hall_broker, tmp_path):
    from support.console import ConsoleProcess

    first, port = busy_port()
    try:
        proc = ConsoleProcess(hall_broker, tmp_path)
        proc.config.write_text(proc.config.read_text().replace(f"127.0.0.1:{proc.port}", f"127.0.0.1:{port}"))
        out = rackside("hall", "console", "--config", str(proc.config), env={"RACKSIDE_STATE_DIR": str(tmp_path / "state")}, timeout=60)
    finally:
        first.close()
    assert out.returncode == 1
    lines = (out.stdout + out.stderr).strip().splitlines()
    assert len(lines) == 1, lines  # not the URL and trust lines, then uvicorn's Errno 98
    assert f"port {port}" in lines[0] and "in use" in lines[0] and "listen" in lines[0]


def test_a_second_demo_on_a_busy_port_names_port_0_in_one_line(tmp_path):
    first, port = busy_port()
    try:
        out = rackside("hall", "demo", "--tables", "1", "--port", str(port), "--dir", str(tmp_path / "demo"), timeout=60)
    finally:
        first.close()
    assert out.returncode == 1
    lines = (out.stdout + out.stderr).strip().splitlines()
    assert len(lines) == 1, lines  # not a 20-line traceback
    assert f"port {port}" in lines[0] and "--port 0" in lines[0]


def test_several_simulators_from_docs_fleet_each_get_their_own_state_folder(tmp_path):
    """docs/fleet.md's `rackside clock --simulate --hall-join J --device-id sim-N`, twice on one
    machine: the second refused "another clock is using .../clock" (both chose the same folder)."""
    from support.wait import wait

    hall = tmp_path / "hall"
    assert rackside("hall", "provision", "--hall", "h", "--no-tls", "--run-as", "root", "--url", "mqtt://127.0.0.1:9",
                    "--out", str(hall)).returncode == 0
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "state"), "RACKSIDE_CONFIG_DIR": str(tmp_path / "cfg")}
    procs, logs = [], []
    try:
        for n in (1, 2):
            log = tmp_path / f"sim-{n}.log"
            logs.append(log)
            with open(log, "wb") as f:
                procs.append(subprocess.Popen([sys.executable, "-m", "rackside", "clock", "--simulate", "--headless",
                                               "--hall-join", str(hall / "join.toml"), "--device-id", f"sim-{n}"],
                                              stdout=f, stderr=f, env=env))
        for n, (proc, log) in enumerate(zip(procs, logs), 1):
            wait(lambda: f"device sim-{n}, code" in log.read_text() or proc.poll() is not None, timeout=30)
            assert proc.poll() is None, log.read_text()
        folders = {p.name for p in (tmp_path / "state" / "clock").iterdir()}
        assert {"sim-1", "sim-2"} <= folders, folders
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=20)


def start_clock(tmp_path, name, *args):
    log = tmp_path / f"{name}.log"
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "state"), "RACKSIDE_CONFIG_DIR": str(tmp_path / "cfg")}
    with open(log, "wb") as f:
        proc = subprocess.Popen([sys.executable, "-m", "rackside", "clock", "--simulate", "--headless", *args],
                                stdout=f, stderr=f, env=env)
    return proc, log


def test_url_auto_finding_no_broker_names_the_remedy(tmp_path):
    from support.wait import wait

    hall = tmp_path / "hall"
    # a hall name no broker on this network advertises; the join file's url is "auto"
    assert rackside("hall", "provision", "--hall", "nobody-advertises-this", "--no-tls", "--run-as", "root",
                    "--out", str(hall)).returncode == 0
    proc, log = start_clock(tmp_path, "auto", "--hall-join", str(hall / "join.toml"), "--device-id", "auto-1")
    try:
        line = wait(lambda: next((x for x in log.read_text().splitlines() if "no hall broker found" in x), None), timeout=60)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert "--url" in line and "[hall] url" in line and "--hall" in line, line


def test_clock_hall_url_overrides_the_join_files_url(hall_broker, tmp_path):
    """`--hall URL` says it overrides [hall] url; with a join file it was ignored: the clock kept
    trying the join file's url."""
    from support.broker import Recorder

    from rackside.hall.wire import topics

    join = tmp_path / "join.toml"
    text = (hall_broker.dir / "join.toml").read_text()
    join.write_text(text.replace(f'url = "{hall_broker.url}"', 'url = "mqtt://127.0.0.1:9"'))
    assert 'url = "mqtt://127.0.0.1:9"' in join.read_text()
    rec = Recorder(hall_broker, topics.enrol_hello(hall_broker.hall, "+"))
    proc, log = start_clock(tmp_path, "override", "--hall-join", str(join), "--hall", hall_broker.url, "--device-id", "ovr-1")
    try:
        # its hello reached the broker given by --hall (hellos are named by the device's key: read its device)
        rec.wait_for(lambda r: any(p.startswith(b"{") and json.loads(p).get("device") == "ovr-1" for _, p, _ in r.messages), timeout=30)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        rec.close()


def test_bundle_out_into_a_missing_folder_is_refused_and_creates_nothing(tmp_path):
    out = tmp_path / "nonexistent" / "dir" / "x.tar.gz"
    result = rackside("bundle", "--out", str(out), "--wheelhouse", str(tmp_path), timeout=120)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "--out" in result.stderr and "no folder" in result.stderr
    assert not (tmp_path / "nonexistent").exists()


def test_a_hall_typo_lists_join_among_the_allowed_keys(tmp_path):
    cfg = tmp_path / "clock.toml"
    cfg.write_text('[hall]\njion = "auto"\n')
    out = rackside("clock", "--simulate", "--headless", "--config", str(cfg))
    assert out.returncode == 2 and "'jion'" in out.stderr and "join" in out.stderr.split("allowed")[1], out.stderr


def test_an_unquoted_game_time_gets_a_hint_beside_tomls_error(tmp_path):
    cfg = tmp_path / "clock.toml"
    cfg.write_text("[clock]\ngame_time = 25:00\n")
    out = rackside("clock", "--simulate", "--headless", "--config", str(cfg))
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert 'line 2' in out.stderr and 'quote it: game_time = "25:00"' in out.stderr, out.stderr


def test_the_simulators_key_line_stops_offering_end_game_after_the_end(tmp_path):
    import pty

    from support.terminal import read_until

    pid, fd = pty.fork()
    if pid == 0:  # the child: the real command in a real terminal
        env = dict(os.environ, RACKSIDE_STATE_DIR=str(tmp_path / "state"), TERM="xterm")
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        os.execve(sys.executable, [sys.executable, "-m", "rackside", "clock", "--simulate", "--terminal"], env)
    try:
        assert b"e: end game" in read_until(fd, b"RIGHT PLAYER")
        os.write(fd, b"m")  # the game starts: the left player's turn LED lights
        read_until(fd, b"(*)")
        os.write(fd, b"e")  # and ends
        after = read_until(fd, b"game over")
        last = after.rsplit(b"Rackside table clock", 1)[-1]
        assert b"e: end game" not in last and b"d: director menu" in last
        os.write(fd, b"q")
        read_until(fd, b"\x1b[?25h")
    finally:
        import signal

        if os.waitpid(pid, os.WNOHANG) == (0, 0):
            os.kill(pid, signal.SIGTERM)  # a failed step must not leave the clock running
            os.waitpid(pid, 0)
        os.close(fd)


def test_lexicon_use_of_a_file_already_in_the_lexicon_folder_does_not_say_copied(tmp_path):
    from rackside.judge.lexicon import compile_lexicon

    env = {"RACKSIDE_STATE_DIR": str(tmp_path / "state")}
    src = tmp_path / "small.txt"
    src.write_text("cat\ndog\nqi\n")
    outside = tmp_path / "small.rlex"
    compile_lexicon(src, outside, "SMALL")
    first = rackside("lexicon", "use", str(outside), env=env)
    assert first.returncode == 0 and "copied to the lexicon folder" in first.stdout, first.stdout + first.stderr
    inside = tmp_path / "state" / "lexicons" / "small.rlex"
    assert inside.is_file()
    again = rackside("lexicon", "use", str(inside), env=env)
    assert again.returncode == 0 and "copied" not in again.stdout and "already in the lexicon folder" in again.stdout, again.stdout


def test_routine_events_are_logged_at_info_not_warning(tmp_path):
    """A device's code (and an assignment, mDNS advertising) is routine: at WARNING it drowned the
    faults in `journalctl -p warning`. It is still shown by default (the director reads the code there)."""
    from support.wait import wait

    hall = tmp_path / "hall"
    assert rackside("hall", "provision", "--hall", "h", "--no-tls", "--run-as", "root", "--url", "mqtt://127.0.0.1:9",
                    "--out", str(hall)).returncode == 0
    proc, log = start_clock(tmp_path, "info", "--hall-join", str(hall / "join.toml"), "--device-id", "info-1")
    try:
        line = wait(lambda: next((x for x in log.read_text().splitlines() if "device info-1, code" in x), None), timeout=30)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert " INFO " in line and "WARNING" not in line, line


def test_the_kiosk_pin_hash_has_the_consoles_form_and_an_old_one_still_works(tmp_path):
    """The kiosk's PIN hash was `scrypt$N$r$p$hex$hex`, the console's password `scrypt:N:R:P:b64:b64`."""
    import hashlib

    from rackside.hall.console.shell.auth import check_hash_form
    from rackside.kiosk.station_config import load_config, verify_pin

    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "RACKSIDE_STATE_DIR": str(tmp_path / "s"), "RACKSIDE_CONFIG_DIR": str(tmp_path / "c")}
    made = subprocess.run([sys.executable, "-m", "rackside", "kiosk", "--hash-pin"], input="4321\n", capture_output=True,
                          text=True, env=env, timeout=60)
    assert made.returncode == 0, made.stderr
    line = made.stdout.strip()
    assert line.startswith('pin_hash = "scrypt:16384:8:1:'), line
    check_hash_form(line.split('"')[1])  # the console's own check takes it
    old_salt = bytes(range(16))
    old = f"scrypt$16384$8$1${old_salt.hex()}$" + hashlib.scrypt(b"2468", salt=old_salt, n=2**14, r=8, p=1, dklen=32).hex()
    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{old}"\n')
    assert verify_pin("2468", load_config(cfg).pin_hash) and not verify_pin("2469", old)
