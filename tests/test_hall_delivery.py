"""End-to-end delivery from the clock's side (issue 17 item 5), against the real broker: the result
retained on its own topic, `resend` answered from the journal (bounded, rate-limited), a command
acknowledged to the broker only once it is journalled, `new_game` and `identify` applied once across
restarts, and the game's rules in the state."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from rackside.hall.device import intake
from rackside.hall.director import dynsec
from rackside.hall.wire import commands, resend, topics
from rackside.hall.wire.health import is_online  # the bare word, or the status with the health

from support.broker import Recorder
from support.hallclock import LiveClock, ack, clock_config, clock_process, send, stop
from support.wait import wait


@pytest.fixture
def table1(make_broker, tmp_path):
    """Table 1's clock on a broker of its own (nothing retained from other tests)."""
    broker = make_broker(tables="1-2", stations=0)
    rec = Recorder(broker, client_id="director-delivery")
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, 1), tmp_path / "state")
    rec.wait_for(lambda r: any(t.endswith("table/1/status") and is_online(p) for t, p, _ in r.messages))
    yield broker, live, rec
    live.close()
    rec.close()


def play(live, presses: int) -> None:
    for i in range(presses):
        live.tap("right" if i % 2 == 0 else "left")


def inputs(rec) -> list[dict]:
    return [e for e in rec.json("event") if e["kind"] == "input"]


# --- a. the result, retained ------------------------------------------------------------------


def test_the_result_topic_is_in_the_topic_tree_and_the_tables_acl():
    assert "result" in topics.TABLE_TOPICS
    assert topics.table("h", 3, "result") == "rackside/v1/h/table/3/result"
    role = dynsec.device_role("h", "table-3")  # the table's role in the broker's dynamic-security plugin
    assert {"acltype": "publishClientSend", "topic": "rackside/v1/h/table/3/result", "allow": True} in role["acls"]


def test_a_restarted_console_gets_the_games_result_retained(table1):
    broker, live, rec = table1
    play(live, 3)
    live.command("end")
    event = rec.wait_for(lambda r: next((e for e in r.json("event") if e["kind"] == "result"), None))
    # the broker has it on the result topic (published after the event) before a late subscriber comes,
    # so what that subscriber gets is the retained copy, not the live one (a race on a loaded machine)
    rec.wait_for(lambda r: any(t.endswith("table/1/result") for t, _, _ in r.messages))
    # a subscriber that comes later (a console restarted) still gets it: retained, same JSON
    late = Recorder(broker, topics.table(broker.hall, 1, "result"))
    try:
        retained = late.wait_for(lambda r: [(json.loads(p), kept) for t, p, kept in r.messages])
    finally:
        late.close()
    assert retained == [(event, True)]


# --- b. resend ---------------------------------------------------------------------------------


def test_resend_is_a_command_with_a_game_and_a_range():
    cmd = commands.parse(b'{"id": "r1", "cmd": "resend", "game": "game-000003", "from_seq": 12}')
    assert (cmd.name, cmd.game, cmd.from_seq, cmd.to_seq) == ("resend", "game-000003", 12, None)
    cmd = commands.parse(b'{"id": "r2", "cmd": "resend", "game": "game-000003", "from_seq": 1, "to_seq": 4}')
    assert (cmd.from_seq, cmd.to_seq) == (1, 4)
    for bad, why in [
        ({"game": "../../etc/passwd", "from_seq": 1}, "game"),
        ({"game": "game-000003"}, "from_seq"),
        ({"game": "game-000003", "from_seq": 0}, "from_seq"),
        ({"game": "game-000003", "from_seq": True}, "from_seq"),
        ({"game": "game-000003", "from_seq": 5, "to_seq": 4}, "to_seq"),
    ]:
        with pytest.raises(commands.CommandError, match=why):
            commands.parse(json.dumps({"id": "r3", "cmd": "resend", **bad}).encode())


def test_resend_republishes_the_journals_events_with_their_seq_and_the_result(table1):
    broker, live, rec = table1
    play(live, 4)
    live.command("end")
    rec.wait_for(lambda r: any(e["kind"] == "result" for e in r.json("event")))
    first = inputs(rec)
    game = first[0]["game"]
    journal = live.journal()
    assert [e["seq"] for e in first] == [j["seq"] for j in journal] == [1, 2, 3, 4, 5]
    send(broker, 1, {"id": "rs1", "cmd": "resend", "game": game, "from_seq": 3})
    a = ack(rec, "rs1")
    assert a["ok"] is True and a["queued"] == 4  # seq 3, 4, 5 and the result
    again = rec.wait_for(lambda r: (lambda e: e if len(e) == len(first) + 3 else None)(inputs(r)))[len(first):]
    assert [e["seq"] for e in again] == [3, 4, 5]
    for sent, resent in zip(first[2:], again):  # the same event, from the journal (its `at` is not kept there)
        assert {k: v for k, v in resent.items() if k != "at"} == {k: v for k, v in sent.items() if k != "at"}
    results = rec.wait_for(lambda r: (lambda x: x if len(x) == 2 else None)([e for e in r.json("event") if e["kind"] == "result"]))
    assert {k: v for k, v in results[1].items() if k != "at"} == {k: v for k, v in results[0].items() if k != "at"}
    # to_seq bounds it; an unknown game is refused saying so
    send(broker, 1, {"id": "rs2", "cmd": "resend", "game": game, "from_seq": 1, "to_seq": 2})
    assert ack(rec, "rs2")["queued"] == 2
    send(broker, 1, {"id": "rs3", "cmd": "resend", "game": "game-000099", "from_seq": 1})
    refused = ack(rec, "rs3")
    assert refused["ok"] is False and "game-000099" in refused["reason"]


def test_resend_is_bounded_and_rate_limited(table1, monkeypatch):
    broker, live, rec = table1
    monkeypatch.setattr(resend, "RESEND_MAX_EVENTS", 2)
    monkeypatch.setattr(intake, "RESEND_EVERY_S", 60.0)  # no turn comes back during the test
    play(live, 5)
    rec.wait_for(lambda r: len(inputs(r)) == 5)
    game = inputs(rec)[0]["game"]
    send(broker, 1, {"id": "b1", "cmd": "resend", "game": game, "from_seq": 1})
    a = ack(rec, "b1")
    assert a["ok"] is True and a["queued"] == 2 and "at most 2" in a["reason"]
    for i in range(intake.RESEND_BURST):  # b1 was the first of the burst
        send(broker, 1, {"id": f"q{i}", "cmd": "resend", "game": game, "from_seq": 5})
    answers = [ack(rec, f"q{i}") for i in range(intake.RESEND_BURST)]
    assert all(a["ok"] for a in answers[:-1])
    assert answers[-1]["ok"] is False and "at most" in answers[-1]["reason"] and "retry" in answers[-1]["reason"]


def test_resend_never_blocks_the_runner(table1, monkeypatch):
    """The journal is read on the publisher's thread: a slow read never delays a press. The read is
    held until the press is journalled, so the press cannot have waited for it."""
    broker, live, rec = table1
    play(live, 2)
    rec.wait_for(lambda r: len(inputs(r)) == 2)
    game = inputs(rec)[0]["game"]
    real = resend.read_journal
    reading, release = threading.Event(), threading.Event()

    def slow(path):
        reading.set()
        release.wait(30)
        return real(path)

    monkeypatch.setattr(resend, "read_journal", slow)
    try:
        send(broker, 1, {"id": "slow1", "cmd": "resend", "game": game, "from_seq": 1})
        assert reading.wait(10)  # the publisher's thread is in the read
        live.tap("right")
        assert wait(lambda: len(live.journal()) == 3)  # journalled while the read still waits
        assert [j["input"] for j in live.journal()][-1] == "press"
        assert not release.is_set()
    finally:
        release.set()
    assert ack(rec, "slow1")["ok"] is True


# --- c, d. acknowledged after journalling; new_game and identify once across restarts ---------


def journals(state: Path) -> list[list[dict]]:
    return [[json.loads(x) for x in p.read_text().splitlines() if x.strip()] for p in sorted((state / "journals").glob("game-*.jsonl"))]


def online(rec, table: int) -> None:
    """The clock is connected and subscribed (it says online after subscribing: the test below)."""
    rec.wait_for(lambda r: any(t.endswith(f"table/{table}/status") and is_online(p) for t, p, _ in r.messages))


def test_a_device_says_online_only_once_its_commands_can_reach_it(make_broker):
    """Its SUBSCRIBE goes before its "online": the broker handles one connection's packets in order,
    so a command sent on seeing "online" (the console, a takeover's adjusts) finds the subscription
    in place. Online first, a command sent at once to a clock's first session was dropped."""
    from rackside.hall.net import config as hall_config
    from rackside.hall.net.link import Link

    broker = make_broker(tables="1", stations=0)
    cfg = hall_config.from_table({"url": broker.url, "credentials": str(broker.credentials("table-1"))}, "table")
    link = Link(cfg, topics.table(broker.hall, 1, "status"), subscribe=(topics.table(broker.hall, 1, "cmd"),))
    sent = []  # the packets paho writes, in the order it writes them
    link.client.on_log = lambda client, userdata, level, buf: sent.append(buf.split()[1]) if buf.startswith("Sending ") else None
    link.start(cfg.endpoint)
    try:
        assert link.connected.wait(10)
    finally:
        link.close()
    assert sent[:3] == ["CONNECT", "SUBSCRIBE", "PUBLISH"], sent


def director_sends(broker, table: int, cmd: dict) -> None:
    c = broker.client("director")
    c.publish(topics.table(broker.hall, table, "cmd"), json.dumps(cmd), qos=1).wait_for_publish(5)
    c.disconnect()
    c.loop_stop()


def test_a_clock_killed_before_journalling_a_command_gets_it_again(make_broker, tmp_path):
    broker = make_broker(tables="1-2", stations=0)
    rec = Recorder(broker, client_id="director-unjournalled")
    config = clock_config(tmp_path / "clock.toml", broker, 1, game_time="25:00")
    state = tmp_path / "state"
    # SIGKILLed once paho's callback has returned, before the runner journals the command
    clock = clock_process(config, state, RACKSIDE_TEST_DIE_BEFORE_APPLYING="adj2")
    try:
        online(rec, 1)
        director_sends(broker, 1, {"id": "adj2", "cmd": "adjust", "player": 1, "remaining_ms": 300_000})
        assert clock.wait(15) == -9
    finally:
        if clock.poll() is None:
            clock.kill()
    assert [j.get("input") for j in journals(state)[-1][1:]] == []  # not journalled
    clock = clock_process(config, state)  # the broker never had the PUBACK: it delivers adj2 again
    try:
        a = rec.wait_for(lambda r: next((a for a in r.json("ack") if a["id"] == "adj2"), None), timeout=20)
        assert a["ok"] is True
        lines = [j for j in journals(state)[-1][1:] if j.get("input") == "adjust"]
        assert len(lines) == 1 and lines[0]["command"] == "adj2"
    finally:
        stop(clock)
        rec.close()


@pytest.mark.parametrize("cmd", [
    {"id": "ng1", "cmd": "new_game", "game_time": "20:00"},
    {"id": "id1", "cmd": "identify", "seconds": 5},
])
def test_new_game_and_identify_redelivered_after_a_kill_are_acked_not_done_again(make_broker, tmp_path, cmd):
    broker = make_broker(tables="1-2", stations=0)
    rec = Recorder(broker, client_id="director-once-more")
    config = clock_config(tmp_path / "clock.toml", broker, 1)
    state = tmp_path / "state"
    clock = clock_process(config, state, RACKSIDE_TEST_DIE_AFTER_APPLYING=cmd["id"])
    try:
        online(rec, 1)
        director_sends(broker, 1, cmd)
        assert clock.wait(15) == -9  # killed with it applied, before any ack
    finally:
        if clock.poll() is None:
            clock.kill()
    before = journals(state)
    assert len(before) == (2 if cmd["cmd"] == "new_game" else 1)
    clock = clock_process(config, state)
    try:
        a = rec.wait_for(lambda r: next((a for a in r.json("ack") if a["id"] == cmd["id"]), None), timeout=20)
        assert a["ok"] is True
        # the barrier: a command the runner applies after it; had the redelivery reached the runner
        # too, it was applied before this one is acked
        director_sends(broker, 1, {"id": "after", "cmd": "adjust", "player": 2, "remaining_ms": 30_000})
        ack(rec, "after")
        assert len(journals(state)) == len(before)  # no second new game
        if cmd["cmd"] == "new_game":
            assert journals(state)[-1][0]["command"] == "ng1"  # the new game's journal names its command
        else:  # identify: acked, the displays not flashing again
            clock.stdin.write("identifying\n")
            clock.stdin.flush()
            assert clock.stdout.readline().strip() == "no"
            assert clock.stdout.readline().strip() == "ok"
    finally:
        stop(clock)
        rec.close()


# --- e. the game's rules in the state ------------------------------------------------------------


def test_the_state_carries_the_games_rules(table1):
    broker, live, rec = table1
    state = rec.wait_for(lambda r: next((s for s in r.json("state") if "rules" in s), None))
    assert state["rules"] == {"game_time_ms": 60_000, "penalty_per_minute": 10, "forfeit_overtime_ms": 600_000,
                              "lateness_forfeit_margin": 75, "optional_forfeit_below_ms": 900_000,
                              "courtesy_draw_after_ms": 60_000}
    live.command("end")  # in the runner's queue before the command below, which comes through the broker
    send(broker, 1, {"id": "n5", "cmd": "new_game", "game_time": "30:00", "rules": {"penalty_per_minute": 5}})
    assert ack(rec, "n5")["ok"]
    state = rec.wait_for(lambda r: next((s for s in reversed(r.json("state")) if s["game"] == "game-000002"), None))
    assert state["rules"]["penalty_per_minute"] == 5 and state["rules"]["game_time_ms"] == 30 * 60_000
