"""Clocks that start with only the hall's join file (issue 19): each shows its code and waits; the
director numbers them; each reconnects as its table over TLS, shows its number and plays, and its
events reach the director. Real broker with the dynamic-security plugin, real TLS, real clocks."""

from __future__ import annotations

import json
import time

from support.broker import Recorder
from support.hallclock import LiveClock

from rackside.hall.enrolled_output import WAITING
from rackside.hall.fleet import Fleet


def wait(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError("waited %.0f s" % timeout)


def test_three_clocks_join_with_one_file_are_numbered_and_play(make_broker, tmp_path):
    broker = make_broker(tables="", stations=0, tls=True)
    join_file = broker.dir / "join.toml"
    director = broker.client("director")
    fleet = Fleet(broker.hall, director)
    rec = Recorder(broker)
    clocks = {}
    try:
        for name in ("pi-aaa1", "pi-bbb2", "pi-ccc3"):
            (tmp_path / name).mkdir()
            cfg = tmp_path / name / "clock.toml"  # its config folder holds the join file: join = "auto" finds it
            (tmp_path / name / "join.toml").write_bytes(join_file.read_bytes())
            cfg.write_text('[clock]\ngame_time = "1:00"\n\n[hall]\njoin = "auto"\n')  # the same file for all
            clocks[name] = LiveClock(cfg, tmp_path / name / "state", device_id=name)
        assert fleet.wait(lambda f: set(clocks) <= set(f.devices), 10)
        for name, live in clocks.items():
            code = fleet.devices[name].hello.code
            assert wait(lambda: live.texts() == (code, WAITING))  # its code, and waiting for a table number
        for n, name in enumerate(clocks, start=1):
            fleet.assign(name, n)
        for n, (name, live) in enumerate(clocks.items(), start=1):
            assert wait(lambda: live.texts() == (WAITING, f"{n:>4}"))  # its number, until the first press
            status = f"rackside/v1/{broker.hall}/table/{n}/status"
            assert rec.wait_for(lambda r: any(t == status and p == b"online" for t, p, _ in r.messages))
            assert wait(lambda: fleet.rows() and next(r for r in fleet.rows() if r["device"] == name)["online"])
        for live in clocks.values():
            live.tap("right")
        for n in (1, 2, 3):
            topic = f"rackside/v1/{broker.hall}/table/{n}/event"
            event = rec.wait_for(lambda r: [json.loads(p) for t, p, _ in r.messages if t == topic])[0]
            assert event["input"] == "press" and event["seq"] == 1
        for name, live in clocks.items():
            assert live.texts() != (WAITING, f"{list(clocks).index(name) + 1:>4}")  # the game's times now
    finally:
        for live in clocks.values():
            live.close()
        rec.close()
        director.disconnect()
        director.loop_stop()
