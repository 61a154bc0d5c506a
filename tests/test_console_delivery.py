"""Every event of every game reaches the console, end to end (issue 17.5): the console detects gaps
in each table's (game, seq) and asks the clock to resend them from its journal (rate-limited), and
takes the retained result. Against a real broker, real table clocks and the real console process."""

from __future__ import annotations

import json

import pytest

from rackside.hall.console.common import limits
from rackside.hall.console.shell.app import Console
from rackside.hall.console.state.hallstate import Game

from support.broker import Recorder
from support.console import ConsoleProcess, Http, cheap_hash
from support.hallclock import LiveClock, clock_config
from support.wait import until

PASSWORD = "delivery-pw"


def test_a_game_remembers_its_highest_seq_and_its_gaps_not_every_event():
    g = Game()
    assert [g.accept(s) for s in (1, 2, 2, 5, 3, 3, 9)] == [True, True, False, True, True, False, True]
    assert g.missing == [[4, 4], [6, 8]] and g.first_missing() == (4, 4)
    for s in (4, 6, 7, 8):
        assert g.accept(s)
    assert g.missing == [] and g.first_missing() is None
    g.known = 12  # the clock's state says there are 12
    assert g.first_missing() == (10, None)
    g.accept(12)
    g.ended = True
    assert g.first_missing() == (10, 11)
    g.accept(10), g.accept(11)
    assert g.first_missing() == (13, None)  # ended, and no result yet: ask for what follows, with the result
    g.result = True
    assert g.first_missing() is None
    wide = Game()
    for s in range(1, 4 * limits.MAX_GAP, 2):  # every other seq: a gap each time
        wide.accept(s)
    assert len(wide.missing) == limits.MAX_GAP  # bounded: the oldest gaps given up on


def test_resend_requests_are_rate_limited_per_table_and_back_off_on_refusal():
    console = Console("h", cheap_hash("pw"))
    sent = []
    console.send = lambda n, cmd: sent.append((n, cmd))
    for n in (3, 4):
        console.on_message(f"rackside/v1/h/table/{n}/status", b"online")
        ev = {"kind": "input", "game": "game-000001", "seq": 5, "t_ns": 1, "input": "press", "player": 1, "at": None}
        console.on_message(f"rackside/v1/h/table/{n}/event", json.dumps(ev).encode())
    assert console.ask_for_gaps(100.0) == []  # a gap younger than GAP_GRACE_S may still fill
    asked = console.ask_for_gaps(100.0 + limits.GAP_GRACE_S)
    assert [(c["table"], c["cmd"], c["game"], c["from_seq"], c["to_seq"]) for c in asked] == [
        (3, "resend", "game-000001", 1, 4), (4, "resend", "game-000001", 1, 4)]
    assert console.ask_for_gaps(101.0 + limits.GAP_GRACE_S) == []  # not again before RESEND_EVERY_S
    ack = {"id": sent[0][1]["id"], "ok": False, "reason": "resend: busy", "seq": None, "at": None}
    console.on_message("rackside/v1/h/table/3/ack", json.dumps(ack).encode())
    later = 100.0 + limits.GAP_GRACE_S + limits.RESEND_EVERY_S
    assert [c["table"] for c in console.ask_for_gaps(later)] == [3, 4]
    assert [c["table"] for c in console.ask_for_gaps(later + limits.RESEND_EVERY_S)] == [4]  # 3 refused: it waits twice as long
    console.on_message("rackside/v1/h/table/4/status", b"offline")
    # an offline clock is not asked (the request would wait in its session, one every 10 s)
    assert [c["table"] for c in console.ask_for_gaps(later + 10 * limits.RESEND_EVERY_S)] == [3]
    assert console.state.tables[3].history[-1]["seq"] == 5  # the console's own requests are in no table's history


@pytest.fixture
def hall(make_broker, tmp_path):
    broker = make_broker(tables="1-2", stations=0)
    clocks = [LiveClock(clock_config(tmp_path / f"clock{n}.toml", broker, n, game_time="5:00"), tmp_path / f"state{n}")
              for n in (1, 2)]
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD)
    yield broker, clocks, console
    console.stop()
    for c in clocks:
        c.close()


def _history(h: Http, n: int) -> dict:
    status, body, _ = h.call("GET", f"/api/table/{n}")
    return json.loads(body) if status == 200 else {}


def test_a_console_down_while_the_broker_lost_its_events_ends_with_every_event(hall):
    broker, clocks, console = hall
    console.start()
    h = Http(console.url)
    h.login(PASSWORD)
    assert until(lambda: all(_history(h, n).get("tile", {}).get("status") == "online" for n in (1, 2)), 15), "the clocks never came online"
    console.stop()  # the console is down: the broker queues the games' events for its session

    rec = Recorder(broker)  # sees the events reach the broker (so the clocks' outboxes let them go)
    for i in range(7):
        for c in clocks:
            c.tap("right" if i % 2 == 0 else "left")
    clocks[1].command("end")
    rec.wait_for(lambda r: any(e["kind"] == "result" for e in r.json("event")), timeout=15)
    want = {n: [j["seq"] for j in c.journal() if "seq" in j] for n, c in zip((1, 2), clocks)}
    assert want[1] == list(range(1, 8)) and want[2] == list(range(1, 9))  # table 2's 8th: the end
    rec.wait_for(lambda r: len([e for e in r.json("event") if e["kind"] == "input"]) >= 15, timeout=15)
    rec.close()
    broker.kill()  # before its autosave: the events queued for the console are gone, and the retained result
    broker.start()

    console.start()
    h = Http(console.url)
    h.login(PASSWORD)

    def complete():
        got = {n: sorted(e["seq"] for e in _history(h, n).get("history", []) if e.get("kind") == "input") for n in (1, 2)}
        return got == want and _history(h, 2)["tile"]["result"] is not None

    assert until(complete, limits.GAP_GRACE_S + limits.RESEND_EVERY_S + 10, poll=0.2), \
        {n: [e.get("seq") for e in _history(h, n).get("history", [])] for n in (1, 2)}
    result = _history(h, 2)["tile"]["result"]
    assert result["game"] == clocks[1].clock.store.journal_path.stem and result["ending"] == "end"


def test_a_resent_event_goes_back_in_its_place_in_the_history():
    console = Console("h", cheap_hash("pw"))
    console.on_message("rackside/v1/h/table/3/status", b"online")
    for seq in (1, 2, 5, 6, 3, 4):
        ev = {"kind": "input", "game": "game-000001", "seq": seq, "t_ns": seq, "input": "press", "player": 1, "at": None}
        console.on_message("rackside/v1/h/table/3/event", json.dumps(ev).encode())
    assert [e["seq"] for e in console.state.tables[3].history] == [1, 2, 3, 4, 5, 6]
    from collections import deque

    from rackside.hall.console.state.hallstate import _insert_in_order

    full = deque(({"kind": "input", "game": "g", "seq": s} for s in (10, 11, 13)), maxlen=3)
    _insert_in_order(full, {"kind": "input", "game": "g", "seq": 12})
    assert [e["seq"] for e in full] == [11, 12, 13]  # bounded: the oldest goes
    _insert_in_order(full, {"kind": "input", "game": "g", "seq": 2})
    assert [e["seq"] for e in full] == [11, 12, 13]  # older than anything kept: not kept
