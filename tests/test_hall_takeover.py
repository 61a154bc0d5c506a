"""A spare clock takes over a table's game (issue 19): table 5's clock, joined with the join file,
plays and is SIGKILLed mid-game; the director gives table 5 to a spare that joined the same way; the
spare starts with exactly the last published times (to the millisecond of the state, 1.4.1(b)), its
journal says so, `rackside clock replay` of that journal shows it, it plays on as table 5, and the
old device is refused."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from support.broker import Recorder
from support.hallclock import LiveClock, clock_process, do
from support.wait import wait

from rackside.hall.director import takeover
from rackside.hall.wire import topics
from rackside.hall.device.enrol import CREDENTIALS_FILE
from rackside.hall.director.fleet import Fleet
from rackside.hall.wire.health import is_online  # the bare word, or the status with the health


def code_of(fleet, name):
    """The code the device `name` shows, once it is listed."""
    assert fleet.wait(lambda f: any(r["device"] == name for r in fleet.rows()), 10)
    return next(r["code"] for r in fleet.rows() if r["device"] == name)


def director_fleet(broker):
    director = broker.client("director")
    return director, Fleet(broker.hall, director, connect_as=lambda cid: broker.client("director", client_id=cid, persistent=True))


def test_a_spare_continues_a_killed_clocks_game_with_its_last_times(make_broker, tmp_path):
    broker = make_broker(tables="", stations=0, tls=True)
    join_file = broker.dir / "join.toml"
    director, fleet = director_fleet(broker)
    rec = Recorder(broker)
    old = spare = None
    try:
        cfg = tmp_path / "clock.toml"
        cfg.write_text(f'[clock]\ngame_time = "5:00"\npenalty_per_minute = 10\n\n[hall]\njoin = "{join_file}"\n')
        old = clock_process(cfg, tmp_path / "old", "pi-old")
        fleet.assign(code_of(fleet, "pi-old"), 5)
        state_topic = topics.table(broker.hall, 5, "state")
        rec.wait_for(lambda r: any(t == topics.table(broker.hall, 5, "status") and is_online(p) for t, p, _ in r.messages))
        do(old, "tap right")  # player 1's time runs
        time.sleep(1.3)
        do(old, "tap left")  # player 2's
        time.sleep(0.7)
        do(old, "tap neutralise")
        # the last state it published: the neutralised one (the state after the third input)
        last = rec.wait_for(lambda r: [s for s in (json.loads(p) for t, p, _ in r.messages if t == state_topic)
                                       if s["seq"] >= 3 and s["phase"] == "neutralised"])[-1]
        assert last["players"][0]["remaining_ms"] < 300_000
        assert last["to_move"] == 2  # player 2's time was running when the director neutralised
        old.send_signal(signal.SIGKILL)
        old.wait(5)

        spare_cfg = tmp_path / "spare.toml"
        spare_cfg.write_text(f'[hall]\njoin = "{join_file}"\n')  # a spare from the cupboard: default rules
        spare = LiveClock(spare_cfg, tmp_path / "spare", device_id="pi-spare")
        assert fleet.assign(code_of(fleet, "pi-spare"), 5, replace=True) == "table-5"

        def adjusts():
            lines = spare.journal() if spare.clock.store.journal_path else []
            return [x for x in lines if x.get("input") == "adjust"]

        got = wait(lambda: len(adjusts()) == 2 and adjusts(), 30)
        taken = wait(lambda: [x for x in spare.journal() if x.get("input") == "takeover"], 10)
        assert taken[0]["player"] == 2 and "takeover of table 5 from device pi-old" in taken[0]["reason"]
        from rackside.game.clock import Phase, view

        wait(lambda: spare.runner.clock.phase is Phase.NEUTRALISED, 5)  # 1.4.1(b): neutralised, as the old clock was
        now = view(spare.runner.clock, time.monotonic_ns())
        assert now.to_move == 2 and [p.remaining_ms for p in now.players] == [p["remaining_ms"] for p in last["players"]]
        for line, p in zip(got, last["players"]):
            assert line["remaining_ms"] == p["remaining_ms"]  # to the millisecond of the state
            assert line["source"] == "hall" and "takeover of table 5 from device pi-old" in line["reason"]
            assert f"{last['game']}, seq {last['seq']}" in line["reason"]  # the old device's last seq
        journal_path = spare.clock.store.journal_path
        header = json.loads(journal_path.read_text().splitlines()[0])
        assert header["config"]["game_time_ms"] == 300_000  # the game's own rules (5:00), not the spare's default 25:00
        assert "takeover of table 5" in json.dumps(header)  # its new game says why it began
        replay = subprocess.run([sys.executable, "-m", "rackside", "clock", "replay", str(journal_path), "--json"],
                                capture_output=True, text=True, timeout=30)
        assert replay.returncode == 0, replay.stderr
        final = json.loads(replay.stdout)
        assert [p["remaining_ms"] for p in final["players"]] == [p["remaining_ms"] for p in last["players"]]
        assert final["phase"] == "neutralised"
        text = subprocess.run([sys.executable, "-m", "rackside", "clock", "replay", str(journal_path)],
                              capture_output=True, text=True, timeout=30).stdout
        assert "takeover of table 5" in text and "takeover: neutralised, player 2 to move" in text
        # the game goes on as table 5: the centre press resumes player 2's time, as after the neutralisation
        events = topics.table(broker.hall, 5, "event")
        n_before = len(rec.messages)
        spare.tap("neutralise")
        rec.wait_for(lambda r: any(t == events and json.loads(p).get("input") == "neutralise" for t, p, _ in r.messages[n_before:]))
        rec.wait_for(lambda r: any(t == state_topic and json.loads(p)["running"] == 2 for t, p, _ in r.messages[n_before:]))
        # the old device, back with its own stored credentials, is refused
        from rackside.hall.net.config import load_credentials

        creds = load_credentials(tmp_path / "old" / CREDENTIALS_FILE) if (tmp_path / "old" / CREDENTIALS_FILE).exists() else None
        if creds is not None:
            import ssl

            import paho.mqtt.client as mqtt

            c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=creds.mqtt_client_id, protocol=mqtt.MQTTv5)
            c.username_pw_set(creds.user, creds.password)
            c.tls_set(ca_certs=creds.tls_ca, tls_version=ssl.PROTOCOL_TLS_CLIENT)
            got_rc = []
            c.on_connect = lambda cl, u, f, rc, p: got_rc.append(rc)
            c.connect("127.0.0.1", broker.tls_port)
            c.loop_start()
            wait(lambda: got_rc, 5)
            c.loop_stop()
            assert got_rc[0].is_failure
    finally:
        if old is not None and old.poll() is None:
            old.kill()
            old.wait()
        if spare is not None:
            spare.close()
        rec.close()
        director.disconnect()
        director.loop_stop()


def test_a_takeover_from_the_command_line_survives_the_command_ending(make_broker, tmp_path):
    """Issue 24 item 4: `rackside hall devices assign --replace` ends as soon as the spare is
    numbered; the takeover was a thread of that process, which died with it, so the spare started
    afresh and the game's times were lost. Now the commands wait for the spare in its session."""
    broker = make_broker(tables="", stations=0, tls=True)
    join_file = broker.dir / "join.toml"
    director = broker.client("director")
    fleet = Fleet(broker.hall, director)  # only to read the list; the assignment is the CLI's
    rec = Recorder(broker)
    old = spare = None
    try:
        cfg = tmp_path / "clock.toml"
        cfg.write_text(f'[clock]\ngame_time = "5:00"\n\n[hall]\njoin = "{join_file}"\n')
        old = clock_process(cfg, tmp_path / "old", "pi-old")
        fleet.assign(code_of(fleet, "pi-old"), 5)
        state_topic = topics.table(broker.hall, 5, "state")
        rec.wait_for(lambda r: any(t == topics.table(broker.hall, 5, "status") and is_online(p) for t, p, _ in r.messages))
        do(old, "tap right")
        time.sleep(0.5)
        do(old, "tap neutralise")
        rec.wait_for(lambda r: [p for t, p, _ in r.messages if t == state_topic and json.loads(p)["phase"] == "neutralised"])
        rec.ping()  # everything the broker routed before: the neutralised state is the last one
        last = [json.loads(p) for t, p, _ in rec.messages if t == state_topic][-1]
        old.send_signal(signal.SIGKILL)
        old.wait(5)
        spare_cfg = tmp_path / "spare.toml"
        spare_cfg.write_text(f'[hall]\njoin = "{join_file}"\n')
        spare = LiveClock(spare_cfg, tmp_path / "spare", device_id="pi-spare")
        code = code_of(fleet, "pi-spare")
        r = subprocess.run([sys.executable, "-m", "rackside", "hall", "devices", "--credentials", str(broker.credentials("director")),
                            "--url", f"mqtt://127.0.0.1:{broker.port}", "assign", code, "5", "--replace"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert "is table 5" in r.stdout  # the command has ended; the spare comes online after it

        def adjusts():
            return [x for x in spare.journal() if x.get("input") == "adjust"] if spare.clock.store.journal_path else []

        got = wait(lambda: len(adjusts()) == 2 and adjusts(), 30)
        assert [x["remaining_ms"] for x in got] == [p["remaining_ms"] for p in last["players"]]
        assert wait(lambda: [x for x in spare.journal() if x.get("input") == "takeover"], 10)
    finally:
        if old is not None and old.poll() is None:
            old.kill()
            old.wait()
        if spare is not None:
            spare.close()
        rec.close()
        director.disconnect()
        director.loop_stop()

_GOOD = {"seq": 7, "game": "game-000003", "phase": "running", "running": 1, "to_move": 1,
         "players": [{"player": 1, "remaining_ms": 600000, "overtime_s": 0, "penalty": 0, "forfeit": False},
                     {"player": 2, "remaining_ms": 500000, "overtime_s": 0, "penalty": 0, "forfeit": False}],
         "ending": None, "sent_at": "2026-12-02T10:00:00+00:00"}


def test_nothing_to_take_over_before_a_game_or_after_it():
    state = {**_GOOD, "seq": 0, "game": "game-000001", "phase": "setup", "running": None, "to_move": None,
             "players": [{**p, "remaining_ms": 1} for p in _GOOD["players"]]}
    for phase in ("setup", "ended", "late"):
        try:
            takeover.commands(json.dumps({**state, "phase": phase}).encode(), table=1, old_device="a", new_device="b", stamp="s")
        except takeover.NothingToTakeOver as e:
            assert phase in str(e)
        else:
            raise AssertionError(phase)
    cmds = takeover.commands(json.dumps({**state, "phase": "running", "running": 1, "rules": {"game_time_ms": 1_500_000, "penalty_per_minute": 5,
                                                                                "forfeit_overtime_ms": 600_000}}).encode(),
                             table=1, old_device="a", new_device="b", stamp="s")
    from rackside.hall.wire import commands

    parsed = [commands.parse(json.dumps(c).encode()) for c in cmds]  # every command passes the clock's own check
    assert [c.name for c in parsed] == ["new_game", "adjust", "adjust", "takeover"]
    assert parsed[0].rules.game_time_ms == 1_500_000 and parsed[0].rules.penalty_per_minute == 5
    assert parsed[3].player == 1


def test_the_spare_is_neutralised_with_the_side_to_move_of_the_last_state():
    from rackside.game.clock import Neutralise, Phase, Takeover, apply, new_clock, view
    from rackside.hall.wire import commands

    players = [{**_GOOD["players"][0], "remaining_ms": 61_000}, {**_GOOD["players"][1], "remaining_ms": 42_000}]
    for state, to_move in (({"phase": "running", "running": 1}, 1),  # killed while player 1's time ran
                           ({"phase": "neutralised", "running": None, "to_move": 2}, 2)):  # neutralised first
        payload = json.dumps({**_GOOD, "seq": 9, "game": "game-000003", "players": players, "to_move": None, **state}).encode()
        cmds = [commands.parse(json.dumps(c).encode()) for c in takeover.commands(payload, table=3, old_device="a", new_device="b", stamp="s")]
        assert cmds[-1].name == "takeover" and cmds[-1].player == to_move
        c = new_clock()
        for t, cmd in enumerate(cmds[1:], start=1):
            c = apply(c, cmd.clock_input(t))
        v = view(c, 10)
        assert v.phase is Phase.NEUTRALISED and v.to_move == to_move and [p.remaining_ms for p in v.players] == [61_000, 42_000]
        v = view(apply(c, Neutralise(10)), 1_000_000_010)  # the centre press restarts the side to move (4.1)
        assert v.players[to_move - 1].running and v.players[to_move - 1].remaining_ms == [61_000, 42_000][to_move - 1] - 1000
    # a takeover after the spare's first press changes nothing: that game is its own
    from rackside.game.clock import Press

    c = apply(new_clock(), Press(1, 2))
    assert apply(c, Takeover(2, 2)).phase is Phase.RUNNING



def test_a_takeover_reads_the_last_state_with_the_states_own_schema():
    """The takeover's commands come from the table's last state; a state the console itself would refuse
    (hall.wire.messages.STATE) gives none. Before, the takeover checked a few fields by hand and took a
    game name that is no game's into its reason, sides out of order, and times beyond any game."""
    assert [c["cmd"] for c in takeover.commands(json.dumps(_GOOD).encode(), table=3, old_device="a", new_device="b",
                                                  stamp="s")] == ["new_game", "adjust", "adjust", "takeover"]
    bad = [
        {**_GOOD, "game": "x) seq 1, state"},
        {**_GOOD, "players": list(reversed(_GOOD["players"]))},
        {**_GOOD, "players": [{**_GOOD["players"][0], "remaining_ms": 10**15}, _GOOD["players"][1]]},
        {**_GOOD, "seq": -1},
        {**_GOOD, "sent_at": "yesterday"},
    ]
    for state in bad:
        try:
            takeover.commands(json.dumps(state).encode(), table=3, old_device="a", new_device="b", stamp="s")
        except takeover.NothingToTakeOver as e:
            assert "not a clock's state" in str(e), state
        else:
            raise AssertionError(f"took over from {state}")


def test_the_spare_continues_the_game_under_every_rule_its_state_carries():
    """The state carries every game rule of the event's (hall.wire.messages.STATE_RULES, issue 38: 2.3.4's
    optional forfeit and 3.10.6(a)'s courtesy draw too): the spare's game runs under them all, not under
    its own clock.toml's. Before, the takeover's new_game named four of them, and the spare took the
    other two from its own card."""
    from rackside.game.clock import Rules
    from rackside.hall.wire import commands

    rules = {"game_time_ms": 1_200_000, "penalty_per_minute": 5, "forfeit_overtime_ms": 300_000,
             "lateness_forfeit_margin": 50, "optional_forfeit_below_ms": 600_000, "courtesy_draw_after_ms": 30_000}
    cmds = takeover.commands(json.dumps({**_GOOD, "rules": rules}).encode(), table=3, old_device="a", new_device="b", stamp="s")
    spare = Rules(switch_guard_ms=250)  # the spare's own clock.toml: WESPA's game rules, its own buttons' guard
    got = commands.parse(json.dumps(cmds[0]).encode(), spare).rules
    assert {k: getattr(got, k) for k in rules} == rules
    assert got.switch_guard_ms == 250  # the device's own, never the game's
