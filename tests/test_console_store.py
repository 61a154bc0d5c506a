"""The results store's failures are clear and lose nothing (issue 23 item 5): a full disk under the
state directory gives the director one message (not recorded, why, what to do) and never a false
"recorded"; a results database that cannot be opened stops `rackside hall console` with one line
naming the file and how to recover, and is never replaced; the demo's simulated tables answer
`resend` from their journals as real clocks do. Real disks: a tmpfs that fills up, SQLite's own
page limit, damaged files; the real console process, broker and clock."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from rackside.hall.console.scoring.resultstore import ResultStore, StoreError
from rackside.hall.console.scoring.results import ClockResult, Final, Recorded

from support.broker import Recorder
from support.console import ConsoleProcess, Http, demo_hall
from support.disk import SmallDisk
from support.hallclock import LiveClock, clock_config, send
from support.wait import wait

TABLE = 7
PASSWORD = "store-pw"
T_FILE = "Ames, Ann 1500 2; ; board 7; p12 1;\nBell, Bob 1400 1; ; board 7; p12 2;\n"


def _recorded(i: int) -> Recorded:
    clock = ClockResult(i, f"game-{i:06}", "end", (0, 0), (0, 0), (1000, 1000), (), None)
    return Recorded.of("A", 1, i, (2 * i - 1, 2 * i), (f"P{2 * i - 1}", f"P{2 * i}"), clock, (400, 300 + i),
                       Final((400, 300 + i), (0, 0), ""), "Sam", "2026-05-01T10:00:00+00:00")


def test_a_store_whose_disk_fills_keeps_every_result_before_and_none_it_refused(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's own limit: SQLITE_FULL, as a full disk gives
    kept = 0
    with pytest.raises(StoreError) as refused:
        for i in range(1, 500):
            store.record(_recorded(i), "Sam")
            kept = i
    why = str(refused.value)
    assert "NOT recorded" in why and "the disk is full" in why and "Free space" in why and f"table {kept + 1}" in why
    assert len(store.results()) == kept and len(store.audit()) == kept  # the refused one: neither result nor audit
    store.db.execute("PRAGMA max_page_count = 1000000")  # space again: the same confirmation goes through
    assert store.record(_recorded(kept + 1), "Sam") == "confirm"
    assert len(store.results()) == kept + 1 and len(store.audit()) == kept + 1


def _start_refused(console: ConsoleProcess) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "RACKSIDE_STATE_DIR": str(console.state_dir)}
    return subprocess.run([sys.executable, "-m", "rackside", "hall", "console", "--config", str(console.config)],
                          capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("damage", ["not a database", "a damaged page"])
def test_a_results_database_that_cannot_be_opened_stops_the_console_with_one_line(make_broker, tmp_path, damage):
    broker = make_broker(tables=str(TABLE), stations=0)
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD)
    db = console.home / "console-results.sqlite"
    db.parent.mkdir(parents=True)
    if damage == "not a database":
        db.write_bytes(b"this is not SQLite " * 300)
    else:
        store = ResultStore(db)
        for i in range(1, 60):
            store.record(_recorded(i), "Sam")
        store.close()
        data = bytearray(db.read_bytes())
        page = 4096
        data[2 * page + 8: 3 * page] = b"\xff" * (page - 8)  # a b-tree page's cells overwritten
        db.write_bytes(bytes(data))
    before = db.read_bytes()
    run = _start_refused(console)
    assert run.returncode == 2, run.stderr
    lines = [x for x in run.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert str(db) in lines[0] and "cannot be opened" in lines[0] and "move it aside" in lines[0], lines[0]
    assert db.read_bytes() == before  # never replaced, never written


@pytest.mark.skipif(not SmallDisk.available(), reason="needs unshare -rm and a tmpfs mount in a user namespace")
def test_a_full_disk_says_the_result_was_not_recorded_and_the_same_confirmation_records_it_once_freed(make_broker, tmp_path):
    broker = make_broker(tables=str(TABLE), stations=0)
    (tmp_path / "a.t").write_text(T_FILE)
    folder = tmp_path / "console"
    disk = SmallDisk(folder / "state", size="4m")
    console = ConsoleProcess(broker, folder, PASSWORD, extra=f'tsh = ["{tmp_path / "a.t"}"]\n', prefix=disk.prefix())
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, TABLE, game_time="5:00"), tmp_path / "clock")
    try:
        console.start()
        disk.attach(console.proc.pid)
        h = Http(console.url)
        token = h.login(PASSWORD)
        tile = lambda: json.loads(h.call("GET", f"/api/table/{TABLE}")[1]).get("tile", {})  # noqa: E731
        wait(lambda: tile().get("status") == "online")
        live.tap("right")
        live.tap("left")
        live.command("end")
        wait(lambda: tile().get("result"))

        disk.fill()  # the state directory's disk is full
        slip = {"slip": [400, 350], "confirm": True}
        status, body, _ = h.call("POST", f"/api/result/{TABLE}", slip, {"X-CSRF-Token": token})
        why = json.loads(body)["error"]
        assert status == 507, body
        assert "NOT recorded" in why and "the disk is full" in why and "Free space" in why, why
        assert tile()["final"] is None
        assert json.loads(h.call("GET", "/api/audit")[1])["audit"] == []
        log = console.log_path.read_text()
        assert "Traceback" not in log and log.count("NOT recorded") == 1, log
        status, body, _ = h.call("POST", "/api/round", {"number": 2}, {"X-CSRF-Token": token})  # nor a round switch
        assert status == 507 and "the round was NOT recorded" in json.loads(body)["error"], body
        assert json.loads(h.call("GET", "/api/snapshot")[1])["round"]["number"] == 1  # the round as it was

        disk.free()
        status, body, _ = h.call("POST", f"/api/result/{TABLE}", slip, {"X-CSRF-Token": token})
        assert status == 200 and json.loads(body)["recorded"] == "confirm", body
        assert tile()["final"]["scores"] == [400, 350]
        assert len(json.loads(h.call("GET", "/api/audit")[1])["audit"]) == 1
    finally:
        live.close()
        console.stop()


def test_the_demos_simulated_tables_answer_resend_from_their_journals(tmp_path):
    scripts = {3: [(-100, ("press", 2)), (-60, ("press", 1)), (-30, ("press", 2)), (-10, ("end",))]}
    with demo_hall(tmp_path, "3", [3], scripts, PASSWORD) as hall:
        rec = Recorder(hall.broker)
        send(hall.broker, 3, {"id": "again-1", "cmd": "resend", "game": "game-000001", "from_seq": 1})
        ack = rec.wait_for(lambda r: next((a for a in r.json("ack") if a["id"] == "again-1"), None))
        assert ack["ok"] is True, ack
        # what the journal gives back has no wall time (`at` null): the originals, live, have theirs
        resent = lambda r: [e for e in r.json("event") if e["game"] == "game-000001" and e["at"] is None]  # noqa: E731
        events = rec.wait_for(lambda r: len(resent(r)) >= 5 and resent(r))
        assert [e["seq"] for e in events if e["kind"] == "input"] == [1, 2, 3, 4]
        result = next(e for e in events if e["kind"] == "result")
        assert result["ending"] == "end"  # replayed from the journal, as a clock does
        send(hall.broker, 3, {"id": "again-2", "cmd": "resend", "game": "game-000009", "from_seq": 1})
        ack = rec.wait_for(lambda r: next((a for a in r.json("ack") if a["id"] == "again-2"), None))
        assert ack["ok"] is False and "game-000009 is not in this clock's journals" in ack["reason"]
        rec.close()
