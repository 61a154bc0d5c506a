"""The console against a real table clock on the hall (firmware.cli.Clock with its hall output,
tests/support/hallclock.py), not the simulator: the tile follows the clock, a director command is
applied and acknowledged by the clock, and the exported result matches `rackside clock replay --json`
of the clock's own journal."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time

import pytest

from rackside.hall.console.shell.auth import hash_password
from rackside.hall.console.shell.config import ConsoleConfig, load_credentials
from rackside.hall.console.demohall.demo import demo_t_file, free_port
from rackside.hall.console.shell.serve import ConsoleServer

from support.hallclock import LiveClock, clock_config
from support.console import Http
from support.wait import wait

TABLE = 7


@pytest.fixture
def broker(make_broker):
    """A broker of its own: retained states left on the session's broker would surprise other tests."""
    return make_broker(tables="7", stations=0)


@pytest.fixture
def console(broker, tmp_path):
    user, pw = load_credentials(broker.credentials("director"))
    cfg = ConsoleConfig(hall=broker.hall, url=broker.url, username=user, mqtt_password=pw,
                        password_hash=hash_password("pw-for-the-test"), listen_port=free_port())
    (tmp_path / "a.t").write_text(demo_t_file([TABLE]))  # a result is recorded for TSH's players
    cfg.tsh = [tmp_path / "a.t"]
    server = ConsoleServer(cfg).start()
    yield server
    server.stop()


def test_a_real_clock_on_the_console(broker, console, tmp_path):
    h = Http(console.url)
    token = h.login("pw-for-the-test")
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, TABLE, game_time="1:00"), tmp_path / "state")
    try:
        tables = console.console.state.tables
        wait(lambda: TABLE in tables and tables[TABLE].status == "online")
        live.tap("right")  # the starter's (left, side 1) time runs
        wait(lambda: tables[TABLE].state and tables[TABLE].state["phase"] == "running")
        # a director command through the console, applied and acked by the clock itself
        status, body, _ = h.call("POST", "/api/command", {"cmd": "adjust", "tables": [TABLE], "player": 1,
                                                          "remaining_ms": 300, "reason": "test"}, {"X-CSRF-Token": token})
        assert status == 200, body
        # this command's ack (the console's own commands to the table, its pairing, have theirs)
        acks = lambda: [x for x in tables[TABLE].history if x["kind"] == "ack" and (x["command"] or {}).get("cmd") == "adjust"]  # noqa: E731
        a = wait(acks)[-1]
        assert a["ok"] is True and a["command"]["by"] == "Sam" and a["command"]["reason"] == "test"
        # who and why reached the clock: in its own journal and in the table's history (its event)
        adj = next(j for j in live.journal() if j["input"] == "adjust")
        assert (adj["source"], adj["by"], adj["reason"]) == ("hall", "Sam", "test")
        ev = wait(lambda: [x for x in tables[TABLE].history if x.get("input") == "adjust"])[-1]
        assert (ev["by"], ev["reason"]) == ("Sam", "test")
        # the round's pairing (issue 27) went to it too: taken (a clock without a keypad shows nothing of it), and it runs on
        paired = wait(lambda: [x for x in tables[TABLE].history if x["kind"] == "ack" and (x["command"] or {}).get("cmd") == "pairing"])
        assert paired[0]["ok"] is True, paired
        # side 1: 0.3 s left, then more than a whole second of overtime (5.3): ended 1.5 s from now
        live.command("end", at_ns=time.monotonic_ns() + 1_500_000_000)
        wait(lambda: tables[TABLE].result)
        status, body, _ = h.call("POST", f"/api/result/{TABLE}", {"slip": [300, 280], "confirm": True}, {"X-CSRF-Token": token})
        assert status == 200, body
        rows = list(csv.reader(io.StringIO(h.call("GET", "/api/export/round.csv")[1].decode())))
        row = next(r for r in rows[1:] if r[2] == str(TABLE))
        journal = live.clock.store.journal_path
    finally:
        live.close()
    replay = json.loads(subprocess.run([sys.executable, "-m", "rackside", "clock", "replay", "--json", str(journal)],
                                       capture_output=True, text=True, check=True).stdout)
    p1, p2 = replay["players"]
    assert p1["overtime_s"] >= 1 and p1["penalty"] == 10
    assert row[6:9] == [str(p1["penalty"]), str(p1["overtime_s"]), str(300 - p1["penalty"])]
    assert row[12:15] == [str(p2["penalty"]), str(p2["overtime_s"]), str(280 - p2["penalty"])]


def test_start_absent_players_clocks_from_the_rounds_scheduled_start(broker, console, tmp_path):
    """2.3.2(a), 2.3.3(a): the console sends the round's scheduled start; the clock dates the late
    start from it, and the state says who is absent, so the tile ticks their time."""
    h = Http(console.url)
    token = h.login("pw-for-the-test")
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, TABLE, game_time="1:00"), tmp_path / "state")
    try:
        tables = console.console.state.tables
        wait(lambda: TABLE in tables and tables[TABLE].status == "online")
        status, body, _ = h.call("POST", "/api/round", {"start": time.time() - 20}, {"X-CSRF-Token": token})
        assert status == 200, body
        status, body, _ = h.call("POST", "/api/command", {"cmd": "late_start", "tables": [TABLE], "players": [2]},
                                 {"X-CSRF-Token": token})
        assert status == 200, body
        a = wait(lambda: [x for x in tables[TABLE].history if x["kind"] == "ack" and (x["command"] or {}).get("cmd") == "late_start"])[-1]
        assert a["ok"] is True, a
        st = wait(lambda: tables[TABLE].state if tables[TABLE].state and tables[TABLE].state["phase"] == "late" else None)
        assert [p["absent"] for p in st["players"]] == [False, True]
        assert 38_000 <= st["players"][1]["remaining_ms"] <= 41_000  # 20 s gone since the scheduled start
        # the round's pairing (issue 27) came first, and dated nothing: the late start is from the scheduled start
        late = next(j for j in live.journal() if j["input"] == "late_start")
        assert (late["by"], bool(late["scheduled_start"])) == ("Sam", True)
    finally:
        live.close()


def test_the_start_absent_confirmation_offers_only_tables_whose_clock_has_a_keypad(broker, console, tmp_path):
    """2.3.2(a): a clock without a keypad can never check anyone in, so its players, present or not,
    are not the confirmation's to start late; a clock with one says so in its state, and is offered."""
    h = Http(console.url)
    token = h.login("pw-for-the-test")
    tables = console.console.state.tables
    status, body, _ = h.call("POST", "/api/round", {"start": time.time() - 20}, {"X-CSRF-Token": token})
    assert status == 200, body
    plain = LiveClock(clock_config(tmp_path / "clock.toml", broker, TABLE), tmp_path / "state")
    try:
        wait(lambda: TABLE in tables and tables[TABLE].status == "online" and (tables[TABLE].state or {}).get("phase") == "setup")
        wait(lambda: [x for x in tables[TABLE].history if x["kind"] == "ack" and (x["command"] or {}).get("cmd") == "pairing"])
        assert tables[TABLE].state.get("keypad") is False, tables[TABLE].state
        assert json.loads(h.call("GET", "/api/start-absent")[1])["tables"] == []
    finally:
        plain.close()
    wait(lambda: tables[TABLE].status == "offline")
    keypad = LiveClock(clock_config(tmp_path / "keypad.toml", broker, TABLE, keypad=True), tmp_path / "keypad-state")
    try:
        wait(lambda: tables[TABLE].status == "online" and (tables[TABLE].state or {}).get("keypad") is True)
        plan = json.loads(h.call("GET", "/api/start-absent")[1])["tables"]
        assert [(x["table"], x["players"]) for x in plan] == [(TABLE, [1, 2])]
    finally:
        keypad.close()
