"""An event owns its state (issue 35): each event's results, audit and sessions in a folder of its
own, one console an event, a store of another event refused whole, the demo apart from the real
events, the next event one command away. Through the processes a director runs: `rackside hall
console`, `rackside hall event`, `rackside hall demo`, on a real Mosquitto."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

from support.broker import end_process
from support.console import ConsoleProcess, Http, get_json, post
from support.wait import wait

PASSWORD = "director-pw"
SLIP = {"slip": [412, 389], "names": ["Bigall, Vera", "Krafchick, Joey"], "confirm": True,
        "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]}}


def _rackside(state, *args, timeout=60) -> subprocess.CompletedProcess:
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "rackside", *args], capture_output=True, text=True, env=env, timeout=timeout)


def _audit(console: ConsoleProcess) -> list:
    h = Http(console.url)
    h.login(PASSWORD)
    return json.loads(h.call("GET", "/api/audit")[1])["audit"]


def _record(console: ConsoleProcess, table: int = 24) -> None:
    h = Http(console.url)
    h.token = h.login(PASSWORD)
    status, out = post(h, f"/api/result/{table}", SLIP)
    assert status == 200, out


def test_a_second_console_on_one_event_is_refused_naming_the_first_and_a_killed_one_holds_nothing(make_broker, tmp_path):
    broker = make_broker(tables="1", stations=0)
    first = ConsoleProcess(broker, tmp_path / "first", PASSWORD, event="open-1").start()
    second = ConsoleProcess(broker, tmp_path / "second", PASSWORD, event="open-1", state_dir=first.state_dir)
    try:
        run = _rackside(second.state_dir, "hall", "console", "--config", str(second.config))
        assert run.returncode == 2, run.stdout + run.stderr
        lines = [x for x in run.stderr.splitlines() if x.strip()]
        assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
        assert "'open-1' is already open in another console" in lines[0], lines[0]
        assert f"pid {first.proc.pid}" in lines[0] and f"127.0.0.1:{first.port}" in lines[0], lines[0]
        # another event on the same machine and state folder is its own: it starts
        other = ConsoleProcess(broker, tmp_path / "other", PASSWORD, event="open-2", state_dir=first.state_dir).start()
        other.stop()
        # a console killed outright holds nothing: the next one on its event starts
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(10)
        second.start()
        assert _audit(second) == []
    finally:
        first.stop()
        second.stop()


def test_practice_then_the_event_on_one_laptop_never_mix_and_the_next_event_is_one_command(make_broker, tmp_path):
    broker = make_broker(tables="24", stations=0)
    state = tmp_path / "state"
    assert _rackside(state, "hall", "event", "new", "practice").returncode == 0
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD, event=None, state_dir=state).start()
    try:
        _record(console)  # a practice result
        assert [a["action"] for a in _audit(console)] == ["slip"]
        # the next event while the console still serves the practice: refused, nothing moved
        busy = _rackside(state, "hall", "event", "new", "open-day1")
        assert busy.returncode == 2 and "is open in a console" in busy.stderr, busy.stderr
    finally:
        console.stop()
    run = _rackside(state, "hall", "event", "new", "open-day1")
    assert run.returncode == 0, run.stderr
    assert "archived" in run.stdout and "open-day1 is the current event" in run.stdout, run.stdout
    console.start()  # the same config, no event named: the current one
    try:
        assert _audit(console) == []  # the practice's result is not this event's
        h = Http(console.url)
        h.login(PASSWORD)
        status, csv, _ = h.call("GET", "/api/export/round.csv?by=table")
        assert b"Bigall" not in csv, csv
    finally:
        console.stop()
    listed = _rackside(state, "hall", "event").stdout
    assert "* open-day1" in listed and "practice-" in listed and "(archived)" in listed, listed


def test_a_store_of_another_event_is_refused_whole_with_one_line(make_broker, tmp_path):
    broker = make_broker(tables="24", stations=0)
    state = tmp_path / "state"
    a = ConsoleProcess(broker, tmp_path / "a", PASSWORD, event="open-a", state_dir=state).start()
    try:
        _record(a)
    finally:
        a.stop()
    b = ConsoleProcess(broker, tmp_path / "b", PASSWORD, event="open-b", state_dir=state)
    b.home.mkdir(parents=True)
    for f in (a.home).glob("console-results.sqlite*"):  # another event's store, copied in by hand
        shutil.copy(f, b.home / f.name)
    run = _rackside(state, "hall", "console", "--config", str(b.config))
    assert run.returncode == 2, run.stdout + run.stderr
    lines = [x for x in run.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert "belongs to hall" in lines[0] and "'open-a'" in lines[0] and "'open-b'" in lines[0], lines[0]
    from rackside.hall.console.scoring.resultstore import ResultStore

    kept = ResultStore(b.home / "console-results.sqlite", identity={"hall": broker.hall, "event": "open-a"})
    assert [r.names for r in kept.results()] == [("Bigall, Vera", "Krafchick, Joey")]  # left as it was


def test_the_demo_beside_a_real_console_on_one_laptop_never_touches_its_event(make_broker, tmp_path):
    broker = make_broker(tables="24", stations=0)
    state = tmp_path / "state"
    real = ConsoleProcess(broker, tmp_path / "real", PASSWORD, event="open-1", state_dir=state).start()
    demo = None
    try:
        _record(real)
        before = sorted(p.relative_to(state) for p in state.rglob("*") if "console.lock" != p.name)
        env = {**os.environ, "RACKSIDE_STATE_DIR": str(state)}
        log = tmp_path / "demo.log"
        with open(log, "wb") as out:
            demo = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "demo", "--tables", "2", "--port", "0"],
                                    stdout=out, stderr=subprocess.STDOUT, env=env)
        wait(lambda: "Ctrl-C stops the demo" in log.read_text() or demo.poll() is not None, timeout=60)
        assert demo.poll() is None, log.read_text()  # the real console's lock is not the demo's: it runs
        demo.send_signal(signal.SIGINT)
        assert demo.wait(30) == 0, log.read_text()
        demo = None
        after = sorted(p.relative_to(state) for p in state.rglob("*") if "console.lock" != p.name)
        assert [str(p) for p in after if p not in before] == []  # nothing of the demo's in the machine's state
        assert [a["after"]["names"] for a in _audit(real)] == [["Bigall, Vera", "Krafchick, Joey"]]
        assert sorted(p.name for p in (state / "events").iterdir()) == ["open-1"]
    finally:
        if demo is not None:
            end_process(demo)
        real.stop()


# --- a new event starts clean on the clocks too (issue 35.2) ---------------------------------------


def _tile(h: Http, n: int) -> dict:
    status, body, _ = h.call("GET", f"/api/table/{n}")
    return json.loads(body) if status == 200 else {}


def _new_game(h: Http, tables: list[int]) -> None:
    status, out = post(h, "/api/command", {"cmd": "new_game", "game_time": "5:00", "tables": tables})
    assert status == 200, out


def test_a_new_event_on_a_broker_holding_the_last_events_retained_states_shows_none_of_them(make_broker, tmp_path):
    from support.hallclock import LiveClock, clock_config

    broker = make_broker(tables="1,3", stations=0)
    state = tmp_path / "state"
    last = ConsoleProcess(broker, tmp_path / "last", PASSWORD, event="july-3", state_dir=state).start()
    clocks = {n: LiveClock(clock_config(tmp_path / f"clock{n}.toml", broker, n, game_time="5:00"), tmp_path / f"clock{n}")
              for n in (1, 3)}
    try:
        h = Http(last.url)
        h.token = h.login(PASSWORD)
        wait(lambda: all(_tile(h, n).get("tile", {}).get("status") == "online" for n in (1, 3)))
        _new_game(h, [1, 3])  # the last event's games, started by its console
        wait(lambda: all((_tile(h, n)["tile"].get("state") or {}).get("event") == "july-3" for n in (1, 3)))
        for live in clocks.values():
            live.tap("right")  # under way: "24:47 / 25:00"
        wait(lambda: all((_tile(h, n)["tile"].get("state") or {}).get("phase") == "running" for n in (1, 3)))
        clocks[3].command("end")  # table 3's game ended: its result retained too
        wait(lambda: _tile(h, 3)["tile"].get("result"))
    finally:
        for live in clocks.values():
            live.close()  # the clocks go off with the last event's games retained on the broker
        last.stop()
    assert _rackside(state, "hall", "event", "new", "july-4").returncode == 0
    new = ConsoleProcess(broker, tmp_path / "new", PASSWORD, event=None, state_dir=state).start()
    try:
        h = Http(new.url)
        h.token = h.login(PASSWORD)
        # the retained states arrive at once; each is named as another event's, and none is shown
        tiles = wait(lambda: (t := [_tile(h, n).get("tile", {}) for n in (1, 3)]) and all(x.get("problems") for x in t) and t)
        for tile in tiles:
            assert tile["state"] is None and tile["result"] is None, tile
            assert any("event 'july-3', not this event's (july-4)" in p for p in tile["problems"]), tile["problems"]
        assert all(_tile(h, n)["history"] == [] for n in (1, 3))
    finally:
        new.stop()


def test_a_practice_game_stays_out_and_the_events_new_game_archives_it_saying_so(make_broker, tmp_path):
    from support.hallclock import LiveClock, clock_config

    broker = make_broker(tables="3", stations=0)
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD, event="open-1").start()
    (tmp_path / "alone.toml").write_text('[clock]\ngame_time = "5:00"\n')  # no [hall]: the clock stand-alone
    practice = LiveClock(tmp_path / "alone.toml", tmp_path / "clock")
    for button in ("right", "left", "right", "neutralise"):  # a practice game, paused
        practice.tap(button)
    game = practice.clock.store.journal_path.stem
    practice.close()
    live = None
    try:
        h = Http(console.url)
        h.token = h.login(PASSWORD)
        # the same clock, now with the hall's credentials: its journal's practice game comes up
        live = LiveClock(clock_config(tmp_path / "clock.toml", broker, 3, game_time="5:00"), tmp_path / "clock")
        detail = wait(lambda: (d := _tile(h, 3)) and d.get("tile", {}).get("problems") and d)
        assert detail["tile"]["state"] is None and detail["tile"]["result"] is None, detail["tile"]
        assert any(f"{game}: a practice game, played without the hall" in p for p in detail["tile"]["problems"])
        _new_game(h, [3])  # the round's game from the console: the practice game is archived, and the ack says so
        ack = wait(lambda: next((e for e in _tile(h, 3)["history"] if e.get("kind") == "ack"), None))
        assert ack["ok"] and f"{game} of no event" in ack["reason"] and "archived" in ack["reason"], ack
        state = wait(lambda: (s := _tile(h, 3)["tile"].get("state")) and s["game"] != game and s)
        assert state["event"] == "open-1" and state["phase"] == "setup", state
        live.tap("right")
        wait(lambda: (_tile(h, 3)["tile"].get("state") or {}).get("phase") == "running")
        history = _tile(h, 3)["history"]
        assert history and all(e.get("game") in (None, state["game"]) for e in history), history  # none of the practice's
    finally:
        if live is not None:
            live.close()
        console.stop()


def test_a_public_folder_holding_the_last_events_view_is_not_shown_for_the_next_event(make_broker, tmp_path):
    """[public] folder with a delay: a console restarted answers the folder's last view until its own
    is old enough (docs/public.md), but only its own event's: the last event's is never shown."""
    from support.broker import free_port

    broker = make_broker(tables="1", stations=0)
    state, www = tmp_path / "state", tmp_path / "www"
    www.mkdir()

    def start(event: str, delay_s: int) -> tuple[ConsoleProcess, str]:
        port = free_port()
        conf = f'[public]\nlisten = "127.0.0.1:{port}"\nfolder = "{www}"\ndelay_s = {delay_s}\nevery_s = 1\n'
        return (ConsoleProcess(broker, tmp_path / event, PASSWORD, event=event, state_dir=state, extra=conf).start(),
                f"http://127.0.0.1:{port}/hall.json")

    last, _ = start("open-a", 0)
    try:
        wait(lambda: (www / "hall.json").exists(), 20)
    finally:
        last.stop()
    assert (www / ".rackside-event").read_text().strip() == "open-a"
    for p in www.iterdir():  # down ten minutes: the view is old enough for the next console's delay
        os.utime(p, (p.stat().st_mtime - 600,) * 2)
    nxt, url = start("open-b", 60)
    try:
        def answered():
            try:
                return get_json(url)
            except OSError:
                return None
        hall = wait(answered, 20)
        assert hall.get("back_at"), hall  # the waiting page, not the last event's view
        wait(lambda: "holds the view of event 'open-a', not of 'open-b'" in nxt.log_path.read_text(errors="replace"))
    finally:
        nxt.stop()


def test_two_consoles_of_two_events_with_one_login_each_stay_on_the_broker_and_each_get_every_event(make_broker, tmp_path):
    """Two events served at once from the director's one MQTT login (a second hall room's event, the
    next day's opened early) had one client id: Mosquitto closed each console's connection when the
    other connected, over and over, and their one session gave each only some of the hall's events.
    The id is the hall's and the event's too: both stay connected and each gets every event."""
    broker = make_broker(tables="1", stations=0)
    a = ConsoleProcess(broker, tmp_path / "a", PASSWORD, event="room-a").start()
    b = ConsoleProcess(broker, tmp_path / "b", PASSWORD, event="room-b").start()
    clock = None
    try:
        pages = [Http(c.url) for c in (a, b)]
        for h in pages:
            h.login(PASSWORD)
        clock = broker.client("table-1")
        players = [{"player": p, "remaining_ms": 60_000, "overtime_s": 0, "penalty": 0, "forfeit": False} for p in (1, 2)]
        state = {"seq": 0, "game": "game-000001", "phase": "setup", "running": None, "players": players, "ending": None,
                 "sent_at": "2026-05-01T10:00:00+00:00"}
        clock.publish(f"rackside/v1/{broker.hall}/table/1/state", json.dumps(state), qos=1, retain=True).wait_for_publish(5)
        wait(lambda: all((_tile(h, 1).get("tile") or {}).get("state") for h in pages))  # both subscribed
        for seq in range(1, 11):
            event = {"kind": "input", "game": "game-000001", "seq": seq, "t_ns": seq, "input": "press", "player": 1,
                     "at": f"2026-05-01T10:00:{seq:02d}+00:00"}
            clock.publish(f"rackside/v1/{broker.hall}/table/1/event", json.dumps(event), qos=1).wait_for_publish(5)

        def seqs(h: Http) -> list:
            return [e["seq"] for e in _tile(h, 1).get("history", []) if e.get("kind") == "input"]
        wait(lambda: all(seqs(h) == list(range(1, 11)) for h in pages), 20)
        assert "already connected, closing old connection" not in broker.log_path.read_text()
    finally:
        if clock is not None:
            clock.loop_stop()
            clock.disconnect()
        a.stop()
        b.stop()
