"""The real `rackside hall console`, started as a process against a broker that already holds the
hall (issue 17.1): retained states of running tables, offline tables, finished games and a station's
status. In 7 of 9 starts the console used to show an empty hall: the MQTT bridge was started before
the event loop existed and the retained messages that arrive on connect were dropped. A finished or
dead clock never publishes again, so nothing would ever bring its tile back.

Three starts in CI; the issue's 20 in a row with RACKSIDE_SLOW=1."""

from __future__ import annotations

import json
import os

import pytest

from support.console import ConsoleProcess, Http
from support.wait import until

STARTS = 20 if os.environ.get("RACKSIDE_SLOW") else 3


def _state(game: str, seq: int, phase: str, running, ending=None) -> bytes:
    players = [{"player": p, "remaining_ms": 600_000 - p, "overtime_s": 0, "penalty": 0, "forfeit": False, "absent": False}
               for p in (1, 2)]
    return json.dumps({"seq": seq, "game": game, "phase": phase, "running": running, "players": players,
                       "ending": ending, "sent_at": "2026-11-30T10:31:02.417+00:00"}).encode()


@pytest.fixture
def held_hall(make_broker):
    """A broker holding, retained: tables 1-3 running, table 4 offline mid-game, tables 5-6 finished
    (their clocks have gone quiet), table 7 offline with no state, station 1 online."""
    broker = make_broker(tables="1-8", stations=1)
    c = broker.client("director")
    root = f"rackside/v1/{broker.hall}"
    msgs = []
    for n in (1, 2, 3):
        msgs += [(f"{root}/table/{n}/status", b"online"), (f"{root}/table/{n}/state", _state("game-000001", 4, "running", 1))]
    msgs += [(f"{root}/table/4/status", b"offline"), (f"{root}/table/4/state", _state("game-000002", 9, "running", 2))]
    for n in (5, 6):
        msgs += [(f"{root}/table/{n}/status", b"online"), (f"{root}/table/{n}/state", _state("game-000001", 80, "ended", None, "end"))]
    msgs += [(f"{root}/table/7/status", b"offline"), (f"{root}/station/1/status", b"online")]
    for topic, payload in msgs:
        c.publish(topic, payload, qos=1, retain=True).wait_for_publish(5)
    c.disconnect()
    c.loop_stop()
    return broker


def _snapshot(h: Http) -> dict:
    status, body, _ = h.call("GET", "/api/snapshot")
    assert status == 200, body
    return json.loads(body)


def test_the_hall_is_shown_on_every_start(held_hall, tmp_path):
    want = {1: ("online", "running"), 2: ("online", "running"), 3: ("online", "running"), 4: ("offline", "running"),
            5: ("online", "ended"), 6: ("online", "ended"), 7: ("offline", None)}
    for i in range(STARTS):
        proc = ConsoleProcess(held_hall, tmp_path / "console", "pw-startup").start()
        try:
            h = Http(proc.url)
            h.login("pw-startup")
            seen = {}

            def shown():
                snap = seen["snap"] = _snapshot(h)
                seen["got"] = {t["table"]: (t["status"], (t["state"] or {}).get("phase")) for t in snap["tables"]}
                return seen["got"] == want and snap["stations"] == {"1": "online"}

            until(shown, 15, poll=0.1)
            got, snap = seen["got"], seen["snap"]
            assert got == want, f"start {i + 1} of {STARTS}: {got}"
            assert snap["stations"] == {"1": "online"}
        finally:
            proc.stop()
