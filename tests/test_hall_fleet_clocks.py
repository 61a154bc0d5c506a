"""Clocks that start with only the hall's join file (issue 19): each shows its code and waits; the
director numbers them; each reconnects as its table over TLS, shows its number and plays, and its
events reach the director. Real broker with the dynamic-security plugin, real TLS, real clocks."""

from __future__ import annotations

import json

from support.broker import Recorder
from support.hallclock import LiveClock
from support.wait import wait

from rackside.hall.device.enrolled_output import WAITING
from rackside.hall.director.fleet import Fleet
from rackside.hall.wire.health import is_online  # the bare word, or the status with the health
from rackside.hall.wire import join


def row(fleet, name):
    return next((r for r in fleet.rows() if r["device"] == name), None)


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
        assert fleet.wait(lambda f: set(clocks) <= {r["device"] for r in fleet.rows()}, 10)
        codes = {name: row(fleet, name)["code"] for name in clocks}
        for name, live in clocks.items():
            pages = join.code_pages(codes[name])
            assert len(pages) == 3 and "".join(pages) == codes[name]
            for i, page in enumerate(pages):  # its code, a page at a time, and waiting for a table number
                assert wait(lambda: live.texts() == (page, f"{WAITING[:3]}{i + 1}"), 10)
        for n, name in enumerate(clocks, start=1):
            fleet.assign(codes[name], n)
        for n, (name, live) in enumerate(clocks.items(), start=1):
            assert wait(lambda: live.texts() == (WAITING, f"{n:>4}"), 10)  # its number, until the first press
            status = f"rackside/v1/{broker.hall}/table/{n}/status"
            assert rec.wait_for(lambda r: any(t == status and is_online(p) for t, p, _ in r.messages))
            assert wait(lambda: fleet.rows() and next(r for r in fleet.rows() if r["device"] == name)["online"], 10)
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


def test_the_clocks_menu_asks_for_a_table_and_the_director_confirms_it(make_broker, tmp_path):
    """The director's menu on a joining clock offers tAbL: 1, tens up to 11, units up to 12, asks;
    the hello carries the request, the fleet lists it, and nothing is numbered until the director
    assigns it."""
    from rackside.firmware import menu

    broker = make_broker(tables="", stations=0, tls=True)
    director = broker.client("director")
    fleet = Fleet(broker.hall, director)
    cfg = tmp_path / "clock.toml"
    cfg.write_text(f'[hall]\njoin = "{broker.dir / "join.toml"}"\n')
    live = LiveClock(cfg, tmp_path / "state", device_id="pi-menu")
    try:
        assert fleet.wait(lambda f: row(fleet, "pi-menu"), 10)
        live.command("menu")
        wait(lambda: live.runner.menu is not None, 10)
        labels = [i.label for i in live.runner.menu.items]
        assert "tAbL" in labels
        for _ in range(labels.index("tAbL")):
            live.tap("right")
        live.tap("neutralise")  # open: the tens blink, at 1
        live.tap("right")  # 11
        live.tap("neutralise")  # to the units
        live.tap("right")  # 12
        live.tap("neutralise")  # ask
        assert fleet.wait(lambda f: row(fleet, "pi-menu")["asks"] == 12, 10)
        asked = row(fleet, "pi-menu")
        assert asked["asks"] == 12 and asked["state"] == "waiting"  # asked, not numbered
        fleet.assign(asked["code"], asked["asks"])  # the director confirms the code it reads and the number
        wait(lambda: live.texts() == (WAITING, "  12"), 10)
    finally:
        live.close()
        director.disconnect()
        director.loop_stop()
    from rackside.game.clock import new_clock, view

    m = menu.open_menu(view(new_clock(), 0), 1_500_000, 600_000)
    assert "tAbL" not in [i.label for i in m.items]  # a clock not joining a hall is not offered it
