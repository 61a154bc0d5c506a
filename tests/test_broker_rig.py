"""The tests' own Mosquitto rig (tests/support/broker.py) leaves no broker running.

A module fixture that started a broker and then failed never reached its `broker.stop()`: its
mosquitto outlived the test run (found on this machine: brokers hours old from earlier runs)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_a_broker_whose_fixture_failed_is_stopped_when_the_session_ends(tmp_path):
    pid_file = tmp_path / "pid"
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(f"""
        import pytest
        from support.broker import Broker

        @pytest.fixture(scope="module")
        def hall(tmp_path_factory):
            broker = Broker(tmp_path_factory.mktemp("b"), tables="1", stations=0).start()
            open({str(pid_file)!r}, "w").write(str(broker.proc.pid))
            raise RuntimeError("the console did not start")  # before any broker.stop()

        def test_uses_it(hall):
            pass
    """))
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "support.broker", "-p", "no:cacheprovider",
                          str(tmp_path / "test_inner.py")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "1 error" in run.stdout, run.stdout + run.stderr
    pid = int(pid_file.read_text())
    alive = Path(f"/proc/{pid}").exists() and "mosquitto" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    if alive:
        os.kill(pid, 9)
    assert not alive, "the broker outlived the test session"
