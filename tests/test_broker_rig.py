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


def test_a_test_on_the_shared_broker_leaves_nothing_retained_for_the_next(tmp_path):
    """The session's `hall_broker` is shared: what one test leaves retained there (a table's state,
    its status, an enrolment hello) a later test's console or recorder receives first, as if its own
    clock had published it (a retained table-3 state of another game hid a later test's table-3
    result). Each test leaves nothing retained under the hall, whatever it published and however it ended."""
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""
        from support.broker import Recorder

        def leave_retained(hall_broker):
            t3 = hall_broker.client("table-3")
            for leaf, payload in (("state", b'{"game": "game-left-behind"}'), ("status", b"online")):
                t3.publish(f"rackside/v1/{hall_broker.hall}/table/3/{leaf}", payload, qos=1, retain=True).wait_for_publish(5)
            t3.disconnect()
            t3.loop_stop()

        def test_one_leaves_retained_state(hall_broker):
            leave_retained(hall_broker)

        def test_two_fails_after_leaving_retained_state(hall_broker):
            leave_retained(hall_broker)
            raise AssertionError("a test that fails cleans up too")

        def test_three_finds_nothing_retained(hall_broker):
            rec = Recorder(hall_broker)
            rec.ping()
            rec.close()
            assert [t for t, _, retained in rec.messages if retained] == []
    """))
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "support.broker", "-p", "no:cacheprovider",
                          str(tmp_path / "test_inner.py")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "1 failed, 2 passed" in run.stdout and "test_two_fails" in run.stdout, run.stdout + run.stderr



def test_a_ping_returns_once_the_subscriber_has_every_message_routed_before_it(hall_broker):
    """support.broker.ping, the barrier tests assert absence after (tests/test_waits.py): messages
    published with QoS 1, their PUBACKs in, while the subscriber is held in its first on_message;
    let go, the recorder's ping returns once it has them all, more than the broker's in-flight window
    (50: it holds the rest back until the first are acknowledged, and one round trip overtakes them)."""
    import threading

    from support.broker import Recorder, ping

    topic = f"rackside/v1/{hall_broker.hall}/table/8/event"
    rec = Recorder(hall_broker, topic)
    held = threading.Lock()
    record = rec.client.on_message

    def slow(client, userdata, msg):  # the subscriber busy: paho reads nothing more meanwhile
        with held:
            record(client, userdata, msg)

    rec.client.on_message = slow
    sender = hall_broker.client("table-8")
    try:
        for round_ in range(3):
            with held:
                infos = [sender.publish(topic, b"%d-%d" % (round_, i), qos=1) for i in range(N_PINGED)]
                for info in infos:
                    info.wait_for_publish(10)
            rec.ping()
            assert [p for _, p, _ in rec.messages][-N_PINGED:] == [b"%d-%d" % (round_, i) for i in range(N_PINGED)]
    finally:
        sender.disconnect()
        sender.loop_stop()
        rec.close()
    with __import__("pytest").raises(ConnectionError):
        ping(rec.client)  # a client that is not connected: no barrier to be had


N_PINGED = 300
