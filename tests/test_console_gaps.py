"""The console's known gaps, closed (issue 13): the absent flag in a table's state, who sent a
command and why on the wire and in the clock's journal, a session secret that outlives a restart."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest

from rackside.game.clock import Arrive, LateStart, Rules, apply, new_clock, view
from rackside.hall.wire import commands
from rackside.hall.wire.payloads import state_payload
from rackside.hall.console.shell import auth

from support.hallclock import ack, send



def test_the_state_says_which_player_is_absent():
    """While a late start waits for player 2, the page ticks player 2's time (2.3.2(a))."""
    c = apply(new_clock(Rules()), LateStart(1_000, (2,)))
    st = json.loads(state_payload(view(c, 2_000), "game-000001", 1, 0))
    assert [p["absent"] for p in st["players"]] == [False, True]
    c = apply(c, Arrive(3_000, 2))
    st = json.loads(state_payload(view(c, 4_000), "game-000001", 2, 0))
    assert [p["absent"] for p in st["players"]] == [False, False]


def test_by_and_reason_are_optional_strings_on_any_command():
    cmd = commands.parse(json.dumps({"id": "a1", "cmd": "adjust", "player": 1, "remaining_ms": 6000,
                                     "by": "director", "reason": "clock knocked"}).encode())
    assert (cmd.by, cmd.reason) == ("director", "clock knocked")
    assert commands.parse(b'{"id":"a2","cmd":"identify"}').by is None
    with pytest.raises(commands.CommandError, match="by"):
        commands.parse(b'{"id":"a3","cmd":"identify","by":7}')
    with pytest.raises(commands.CommandError, match="reason"):
        commands.parse(json.dumps({"id": "a4", "cmd": "identify", "reason": "x" * 201}).encode())


def test_who_and_why_are_journalled_with_the_hall_input(hall_broker, table3):
    live, rec = table3
    send(hall_broker, 3, {"id": "w1", "cmd": "late_start", "players": [1], "by": "director"})
    assert ack(rec, "w1")["ok"]
    send(hall_broker, 3, {"id": "w2", "cmd": "adjust", "player": 2, "remaining_ms": 60_000,
                          "by": "director", "reason": "clock reset by a knock"})
    assert ack(rec, "w2")["ok"]
    journal = live.journal()
    assert [(j["input"], j["source"], j.get("by"), j.get("reason")) for j in journal] == [
        ("late_start", "hall", "director", None), ("adjust", "hall", "director", "clock reset by a knock")]
    events = rec.wait_for(lambda r: [e for e in r.json("event") if e.get("input") == "adjust"] or None)
    assert events[0]["by"] == "director" and events[0]["reason"] == "clock reset by a knock"
    # the clock's own audit says who and why
    audit = subprocess.run([sys.executable, "-m", "rackside", "clock", "replay", str(live.clock.store.journal_path)],
                           capture_output=True, text=True, check=True).stdout
    adjust_line = next(x for x in audit.splitlines() if "adjust 2" in x)
    assert "hall, by director, reason: clock reset by a knock" in adjust_line


def test_the_session_secret_is_made_once_owner_only(tmp_path):
    path = tmp_path / "console" / "session.key"
    first = auth.session_secret(path)
    assert len(first) >= 32 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert auth.session_secret(path) == first  # a restart signs with the same secret: no one is logged out
    path.write_text("")  # a damaged file is replaced, never used
    assert auth.session_secret(path) not in ("", first)


def _iso(seconds_ago: float) -> str:
    return datetime.fromtimestamp(time.time() - seconds_ago, timezone.utc).isoformat()


def test_late_start_takes_a_scheduled_start_in_iso_8601():
    cmd = commands.parse(json.dumps({"id": "l1", "cmd": "late_start", "players": [2], "at": "2026-11-30T10:00:00+00:00"}).encode())
    assert cmd.at_ns == int(datetime(2026, 11, 30, 10, tzinfo=timezone.utc).timestamp()) * 10**9
    assert commands.parse(b'{"id":"l2","cmd":"late_start","players":[2]}').at_ns is None
    for bad in ("10:00", "2026-11-30T10:00:00", 7):  # no date, no time zone, not text
        with pytest.raises(commands.CommandError, match="at"):
            commands.parse(json.dumps({"id": "l3", "cmd": "late_start", "players": [2], "at": bad}).encode())
    with pytest.raises(commands.CommandError, match="at"):
        commands.parse(json.dumps({"id": "l4", "cmd": "arrive", "player": 2, "at": _iso(0)}).encode())


def test_a_late_start_is_dated_from_the_scheduled_start(hall_broker, table3):
    """2.3.2(a), 2.3.3(a): the absent player's time has run since the scheduled start, not since the
    director's command reached the clock (game time 1:00 here)."""
    live, rec = table3
    send(hall_broker, 3, {"id": "s1", "cmd": "late_start", "players": [2], "at": _iso(-30)})
    a = ack(rec, "s1")
    assert a["ok"] is False and "future" in a["reason"]
    send(hall_broker, 3, {"id": "s2", "cmd": "late_start", "players": [2], "at": _iso(90)})
    a = ack(rec, "s2")
    assert a["ok"] is False and "forfeit" in a["reason"]
    assert live.journal() == []
    send(hall_broker, 3, {"id": "s3", "cmd": "late_start", "players": [2], "at": _iso(30)})
    assert ack(rec, "s3")["ok"]
    send(hall_broker, 3, {"id": "s4", "cmd": "arrive", "player": 2})
    assert ack(rec, "s4")["ok"]
    assert 28 * 10**9 <= live.runner.clock.allotted_ns[1] <= 30 * 10**9  # 30 s of lateness deducted (2.3.2(b))
    late = live.journal()[0]
    assert late["input"] == "late_start" and late["source"] == "hall" and late["scheduled_start"]  # the journal says from when
