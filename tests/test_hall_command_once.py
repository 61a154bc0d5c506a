"""A director's command is applied once, even across a clock restart (issue 12: nothing is lost,
none twice), and a late start's scheduled start a little in the future is taken as now."""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

import pytest

from rackside.hall.wire import commands, topics
from rackside.hall.wire.health import is_online  # the bare word, or the status with the health

from support.broker import Recorder
from support.hallclock import clock_config, clock_process, do


def journal(state: Path) -> list[dict]:
    path = sorted((state / "journals").glob("game-*.jsonl"))[-1]
    lines = [json.loads(x) for x in path.read_text().splitlines()[1:] if x.strip()]
    return [x for x in lines if "state" not in x]  # inputs only, not the checkpoints


def test_a_command_redelivered_after_the_clock_was_killed_is_acked_but_not_applied_again(make_broker, tmp_path):
    broker = make_broker(tables="1-2", stations=0)
    rec = Recorder(broker, client_id="director-once")
    config = clock_config(tmp_path / "clock.toml", broker, 1, game_time="25:00")
    state = tmp_path / "state"
    # killed once the adjust is applied and journalled, before the broker has its PUBACK and
    # before the clock's ack is written anywhere (tests/support/hallclock.py)
    clock = clock_process(config, state, RACKSIDE_TEST_DIE_AFTER_APPLYING="adj1")
    try:
        do(clock, "tap right")  # the left player's time runs
        rec.wait_for(lambda r: any(e["kind"] == "input" for e in r.json("event")))
        director = broker.client("director")
        cmd = {"id": "adj1", "cmd": "adjust", "player": 1, "remaining_ms": 300_000}
        director.publish(topics.table(broker.hall, 1, "cmd"), json.dumps(cmd), qos=1).wait_for_publish(5)
        director.disconnect()
        director.loop_stop()
        assert clock.wait(15) == -9  # SIGKILLed with the adjust applied
    finally:
        clock.kill()
    assert [j["input"] for j in journal(state)] == ["press", "adjust"]
    assert not [a for a in rec.json("ack") if a["id"] == "adj1"]  # never acked: the broker redelivers

    clock = clock_process(config, state)  # the same session: the broker redelivers adj1
    try:
        ack = rec.wait_for(lambda r: next((a for a in r.json("ack") if a["id"] == "adj1"), None), timeout=20)
        lines = journal(state)
        adjusts = [j for j in lines if j["input"] == "adjust"]
        assert len(adjusts) == 1, lines  # applied once: the player's time is not set back again
        assert adjusts[0]["command"] == "adj1" and adjusts[0]["source"] == "hall"
        assert ack["ok"] is True and ack["seq"] == adjusts[0]["seq"]  # acked with the input's seq
        # the barrier: a command sent now is applied after anything the redelivery could still do,
        # and its ack comes after any second ack of adj1 (the clock answers in order)
        director = broker.client("director")
        after = {"id": "after", "cmd": "adjust", "player": 2, "remaining_ms": 200_000}
        director.publish(topics.table(broker.hall, 1, "cmd"), json.dumps(after), qos=1).wait_for_publish(5)
        director.disconnect()
        director.loop_stop()
        rec.wait_for(lambda r: any(a["id"] == "after" for a in r.json("ack")), timeout=20)
        # no second adjust, nothing else but the restart's own line (the game is restored neutralised)
        lines = journal(state)
        assert [j["input"] for j in lines] == ["press", "adjust", "resume", "adjust"] and lines[-1]["command"] == "after", lines
        assert len([a for a in rec.json("ack") if a["id"] == "adj1"]) == 1
    finally:
        clock.stdin.write("quit\n")
        clock.stdin.flush()
        try:
            clock.wait(10)
        except subprocess.TimeoutExpired:
            clock.kill()
        rec.close()


def late_start(at_offset_s: float, now_ns: int = 1_800_000_000 * 10**9) -> commands.Command:
    at = datetime.datetime.fromtimestamp(now_ns / 1e9 + at_offset_s, datetime.timezone.utc).isoformat()
    return commands.parse(json.dumps({"id": "l1", "cmd": "late_start", "players": [2], "at": at}).encode())


WALL = 1_800_000_000 * 10**9
MONO = 5_000 * 10**9


@pytest.mark.parametrize("ahead_s", [0.5, 3.0, 5.0])
def test_a_scheduled_start_a_little_in_the_future_is_taken_as_now(ahead_s):
    # the director's machine and the Pi's clocks differ by a little: up to 5 s ahead is "now"
    assert commands.dated(late_start(ahead_s), MONO, WALL, (60_000, 60_000)) == MONO


@pytest.mark.parametrize("ahead_s", [5.5, 60.0])
def test_a_scheduled_start_further_in_the_future_is_refused_saying_why(ahead_s):
    with pytest.raises(commands.CommandError, match="in the future"):
        commands.dated(late_start(ahead_s), MONO, WALL, (60_000, 60_000))


def test_a_scheduled_start_in_the_past_dates_the_late_start_from_it():
    assert commands.dated(late_start(-2.0), MONO, WALL, (60_000, 60_000)) == MONO - 2 * 10**9


def test_the_clock_acks_a_late_start_scheduled_a_moment_ahead_and_refuses_one_far_ahead(make_broker, tmp_path):
    from support.hallclock import LiveClock

    broker = make_broker(tables="1-2", stations=0)
    rec = Recorder(broker, client_id="director-late")
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, 2), tmp_path / "state")
    try:
        rec.wait_for(lambda r: any(t.endswith("table/2/status") and is_online(p) for t, p, _ in r.messages))
        director = broker.client("director")
        now = datetime.datetime.now(datetime.timezone.utc)
        for cid, ahead in (("far", 60), ("near", 2)):
            at = (now + datetime.timedelta(seconds=ahead)).isoformat()
            cmd = {"id": cid, "cmd": "late_start", "players": [2], "at": at}
            director.publish(topics.table(broker.hall, 2, "cmd"), json.dumps(cmd), qos=1).wait_for_publish(5)
        director.disconnect()
        director.loop_stop()
        far = rec.wait_for(lambda r: next((a for a in r.json("ack") if a["id"] == "far"), None))
        near = rec.wait_for(lambda r: next((a for a in r.json("ack") if a["id"] == "near"), None))
        assert far["ok"] is False and "in the future" in far["reason"] and "5 s allowed" in far["reason"]
        assert near["ok"] is True, near
        assert [j["input"] for j in live.journal()] == ["late_start"]
    finally:
        live.close()
        rec.close()
