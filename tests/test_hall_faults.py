"""The hall's fault tests against a real Mosquitto (issue 12): the broker stopped mid-game and
restarted, the clock SIGKILLed while offline, retained states across a broker restart.

The broker outage lasts RACKSIDE_HALL_OUTAGE_S seconds (3 by default, to keep CI short); the issue's
60 s outage is the `slow` test below, and `RACKSIDE_HALL_OUTAGE_S=60` runs the fast one at 60 s too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rackside.game.clock import NS_PER_S
from rackside.hall.wire.health import is_online  # the bare word, or the status with the health

from support.broker import Recorder
from support.hallclock import LiveClock, clock_config
from support.wait import until, wait

OUTAGE_S = float(os.environ.get("RACKSIDE_HALL_OUTAGE_S", "3"))
SUPPORT = Path(__file__).parent / "support"


def inputs(rec):
    return [e for e in rec.json("event") if e["kind"] == "input"]


def unique(events):
    return {(e["game"], e["seq"]) for e in events}


def broker_outage_mid_game(make_broker, tmp_path, outage_s):
    broker = make_broker(tables="1-2", stations=0)
    rec = Recorder(broker, client_id="director-test")
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, 1, game_time="25:00"), tmp_path / "state")
    try:
        rec.wait_for(lambda r: any(t.endswith("/status") and is_online(p) for t, p, _ in r.messages))
        live.tap("right")
        live.tap("left")
        rec.wait_for(lambda r: len(inputs(r)) == 2)
        broker.stop()
        offline_taps = 0
        t_end = time.monotonic() + outage_s
        lags = []
        while time.monotonic() < t_end:
            side = "right" if offline_taps % 2 == 0 else "left"
            before = live.runner.clock.side
            t0 = time.monotonic()
            live.tap(side)
            until(lambda: live.runner.clock.side != before, 2, poll=0.001)
            lags.append(time.monotonic() - t0)
            offline_taps += 1
            time.sleep(max(0.0, min(1.0, t_end - time.monotonic())))
        # the clock never waited on the network: each press switched the clock at once
        assert max(lags) < 0.5, lags
        broker.start()
        journal = live.journal()
        rec.wait_for(lambda r: unique(inputs(r)) >= {("game-000001", n) for n in range(1, 1 + len(journal))}, timeout=30)
        live.tap("neutralise")
        rec.wait_for(lambda r: len(unique(inputs(r))) == len(journal) + 1, timeout=10)
        events = inputs(rec)
        journal = live.journal()
        # every event arrived, in journal order, with its journal line
        assert sorted(unique(events)) == [("game-000001", j["seq"]) for j in journal]
        firsts = []
        for e in events:
            if (e["game"], e["seq"]) not in {(f["game"], f["seq"]) for f in firsts}:
                firsts.append(e)
        assert [e["t_ns"] for e in firsts] == [j["t_ns"] for j in journal]
        # none twice (duplicates would be dropped by (device, game, seq) anyway; count them)
        duplicates = len(events) - len(unique(events))
        assert duplicates == 0, f"{duplicates} duplicate(s)"
        # the clock's time is exactly what its journal says: the outage cost nobody anything
        from rackside.game.replay import fold
        from rackside.game.journal import read_journal

        assert fold(read_journal(live.clock.store.journal_path)).clock == live.runner.clock
        assert offline_taps >= 2
        return offline_taps
    finally:
        live.close()
        rec.close()


def test_broker_stopped_mid_game_and_restarted(make_broker, tmp_path):
    broker_outage_mid_game(make_broker, tmp_path, OUTAGE_S)


@pytest.mark.slow
def test_broker_stopped_60_s_mid_game_and_restarted(make_broker, tmp_path):
    if os.environ.get("RACKSIDE_SLOW") != "1":
        pytest.skip("the 60 s outage runs with RACKSIDE_SLOW=1 (CI runs the short one)")
    broker_outage_mid_game(make_broker, tmp_path, 60)


def outbox_progress(path: Path, what: str = "seq") -> int | None:
    """From the clock's outbox (hall.device.outbox), read from this process as any reader of its WAL may:
    the journal seq of the last input its publisher put there (`seq`), or how many messages wait
    for the broker's PUBACK (`pending`); None before the outbox is made."""
    import sqlite3

    if not path.exists():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        sql = "SELECT max(seq) FROM progress WHERE game LIKE 'game-%'" if what == "seq" else "SELECT count(*) FROM outbox"
        return db.execute(sql).fetchone()[0] or 0
    except sqlite3.OperationalError:  # its tables not made yet
        return None
    finally:
        db.close()


class ClockProcess:
    def __init__(self, config: Path, state: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(SUPPORT.parent)}
        self.proc = subprocess.Popen(
            [sys.executable, str(SUPPORT / "hallclock.py"), str(config), str(state)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )
        assert self.proc.stdout.readline().strip() == "ready"

    def do(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "ok"

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(5)

    def quit(self) -> None:
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(10)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            self.proc.kill()


def test_clock_killed_while_offline_delivers_its_outbox_after_restart(make_broker, tmp_path):
    broker = make_broker(tables="1-2", stations=0)
    rec = Recorder(broker, client_id="director-test")
    config = clock_config(tmp_path / "clock.toml", broker, 2, game_time="25:00")
    state = tmp_path / "state"
    clock = ClockProcess(config, state)
    clock.do("tap right")
    rec.wait_for(lambda r: len(inputs(r)) == 1)
    # the first press acknowledged to the clock too (else it is sent again after the restart: a
    # duplicate, which QoS 1 allows but the order below does not count)
    wait(lambda: outbox_progress(state / "hall-outbox.sqlite", "pending") == 0)
    broker.stop()
    for side in ("left", "right", "left", "neutralise"):
        clock.do(f"tap {side}")
    wait(lambda: (outbox_progress(state / "hall-outbox.sqlite") or 0) >= 5)  # all five inputs are in the outbox
    clock.kill()  # SIGKILL while offline: nothing of the last four was ever published
    outbox = state / "hall-outbox.sqlite"
    assert outbox.exists()
    broker.start()
    clock = ClockProcess(config, state)
    try:
        lines = [json.loads(x) for x in sorted((state / "journals").glob("*.jsonl"))[-1].read_text().splitlines()[1:]]
        assert [x["input"] for x in lines] == ["press", "press", "press", "press", "neutralise", "resume"]
        rec.wait_for(lambda r: len(unique(inputs(r))) == len(lines), timeout=30)
        events = inputs(rec)
        assert sorted(unique(events)) == [("game-000001", x["seq"]) for x in lines]
        assert [e["input"] for e in sorted(events, key=lambda e: e["seq"])][:5] == ["press", "press", "press", "press", "neutralise"]
    finally:
        clock.quit()
        rec.close()


def test_retained_states_survive_a_broker_restart_with_persistence(make_broker, tmp_path):
    broker = make_broker(tables="1-2", stations=0)
    rec = Recorder(broker)
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, 1), tmp_path / "state")
    try:
        live.tap("right")
        rec.wait_for(lambda r: any(s["phase"] == "running" for s in r.json("state")))
    finally:
        live.close()
        rec.close()
    broker.stop()
    broker.start()
    later = Recorder(broker)  # a director's console started after the restart
    try:
        got = later.wait_for(lambda r: {t.rsplit("/", 1)[1]: p for t, p, retained in r.messages if retained}.keys() >= {"state", "status"} and r)
        retained = {t.rsplit("/", 1)[1]: p for t, p, keep in got.messages if keep}
        state = json.loads(retained["state"])
        assert state["game"] == "game-000001" and state["phase"] in ("running", "neutralised")
        assert retained["status"] == b"offline"  # it closed cleanly before the restart
    finally:
        later.close()


def test_a_full_publisher_queue_never_blocks_the_clock_and_loses_nothing(hall_broker, tmp_path, caplog):
    """The runner's side only ever put_nowait()s: with a queue of 3 and the publisher not yet
    running, ten inputs are all accepted at once, the overflow is logged once, and every input
    still reaches the director (recovered from the journal)."""
    import logging

    from rackside.game.clock import Press, Rules, apply
    from rackside.firmware.persist import GameStore
    from rackside.hall.net import config as hall_config
    from rackside.hall.device.clock_output import HallOutput

    store = GameStore(tmp_path / "state", Rules(), boot_id="test")
    t = 10**12
    clock = store.start(t)
    cfg = hall_config.from_table({"url": hall_broker.url, "credentials": str(hall_broker.credentials("table-6"))}, "table")
    out = HallOutput(cfg, store.journal_dir, lambda message: None, outbox_path=tmp_path / "outbox.sqlite", queue_size=3)
    caplog.set_level(logging.DEBUG, logger="rackside.hall.device.clock_output")
    from rackside.game.clock import view
    from rackside.firmware.outputs import Applied, Frame

    out.view(Frame(view(clock, t), ("", ""), clock, False, "game-000001"), t)  # the runner's first refresh: game 1
    for i in range(10):
        t += NS_PER_S
        inp = Press(t, 2 if i % 2 == 0 else 1)
        clock = apply(clock, inp)
        out.applied(Applied(inp, store.record(inp), store.game, None, {}, clock, t))
        out.flush(t)
    full = [r for r in caplog.records if "queue full" in r.getMessage() and r.levelno >= logging.ERROR]
    assert len(full) == 1  # once per outage, not once per input
    rec = Recorder(hall_broker, f"rackside/v1/{hall_broker.hall}/table/6/#")
    out.start()
    try:
        rec.wait_for(lambda r: unique(inputs(r)) >= {("game-000001", n) for n in range(1, 11)})
        assert [e["seq"] for e in inputs(rec)] == list(range(1, 11))  # in order, none twice
    finally:
        out.close()
        store.close()
        rec.close()
