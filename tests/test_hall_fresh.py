"""A hall in an hour, scripted (issue 19's "done when"): a fresh hall provisioned from the command
line, its broker started as the director starts it, three simulated clocks started with nothing but
the one join file, and the director numbering them with `rackside hall devices`: each comes online
as its table over TLS, and plain MQTT is served on 127.0.0.1 only. Every step is the command a
director or a Pi runs, as its own process."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from rackside.hall.wire.health import is_online  # the bare word, or the status with the health

from support.broker import Broker, Recorder, free_port
from support.wait import until

RACKSIDE = [sys.executable, "-m", "rackside"]


def run(*args: str, env=None) -> str:
    r = subprocess.run([*RACKSIDE, *args], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_a_fresh_hall_with_three_devices_and_one_join_file(tmp_path):
    hall_dir, port, tls_port = tmp_path / "hall", free_port(), free_port()
    args = ["hall", "provision", "--hall", "fresh", "--out", str(hall_dir), "--port", str(port), "--tls-port", str(tls_port),
            "--bind", "127.0.0.1", "--host", "127.0.0.1", "--url", f"mqtts://127.0.0.1:{tls_port}"]
    if os.geteuid() == 0:
        args += ["--run-as", __import__("getpass").getuser()]
    out = run(*args)
    assert "join file" in out
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "director-state"), "RACKSIDE_CONFIG_DIR": str(tmp_path / "cfg")}
    procs = [subprocess.Popen([*RACKSIDE, "hall", "broker", "--config", str(hall_dir), "--no-mdns"], stdout=subprocess.DEVNULL,
                              stderr=open(tmp_path / "broker.log", "wb"), env=env)]
    logs = {}
    try:
        director = Broker.attach(hall_dir, "fresh", port)  # the director's login, plain MQTT on 127.0.0.1
        def recorder():
            try:
                return Recorder(director)
            except (OSError, ConnectionRefusedError, TimeoutError):  # the broker not listening yet
                return None

        rec = until(recorder, 10, poll=0.1)
        assert rec, (tmp_path / "broker.log").read_text()
        for n in (1, 2, 3):  # the same file on every device: nothing else copied
            logs[n] = tmp_path / f"clock-{n}.log"
            procs.append(subprocess.Popen(
                [*RACKSIDE, "clock", "--simulate", "--headless", "--hall-join", str(hall_dir / "join.toml"), "--device-id", f"sim-{n}",
                 "--state-dir", str(tmp_path / f"clock-{n}")],
                stdout=subprocess.DEVNULL, stderr=open(logs[n], "wb"), env={**env, "RACKSIDE_CONFIG_DIR": str(tmp_path / f"cfg-{n}")}))
        codes = {}
        devices = ["hall", "devices", "--credentials", str(hall_dir / "credentials" / "director.toml"), "--url", f"mqtt://127.0.0.1:{port}"]

        def coded():
            for n in (1, 2, 3):
                m = re.search(r"device sim-\d, code (\d{4} \d{4} \d{4})", logs[n].read_text())
                if m:
                    codes[n] = m.group(1)  # what its displays show
            return len(codes) == 3

        assert until(coded, 30, poll=0.2), {n: p.read_text()[-500:] for n, p in logs.items()}
        seen = {}

        def listed():  # the list shows each device with the code its clock shows
            seen["listing"] = run(*devices, env=env)
            return all(re.search(rf"^{codes[n]}\s+sim-{n}\s+clock\s+waiting", seen["listing"], re.M) for n in (1, 2, 3))

        assert until(listed, 30, poll=0.3), seen["listing"]
        for n in (1, 2, 3):
            assert f"the device showing {codes[n]} is table {n}" in run(*devices, "assign", codes[n], str(n), env=env)
        for n in (1, 2, 3):
            status = f"rackside/v1/fresh/table/{n}/status"
            state = f"rackside/v1/fresh/table/{n}/state"
            rec.wait_for(lambda r: any(t == status and is_online(p) for t, p, _ in r.messages), timeout=20)
            rec.wait_for(lambda r: any(t == state for t, _, _ in r.messages), timeout=20)
        listing = run(*devices, env=env)
        for n in (1, 2, 3):
            assert re.search(rf"^{codes[n]}\s+sim-{n}\s+clock\s+enrolled\s+{n}\s+yes", listing, re.M), listing
        conf = (hall_dir / "mosquitto.conf").read_text()
        assert f"listener {port} 127.0.0.1" in conf and "certfile" in conf
        rec.close()
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
