"""One owning thread per piece of the hall output's state (issue 16 item 1), checked: a real clock on
the real broker plays, takes commands and resends; every unit was touched only by its own thread,
and touching one from another thread fails at once (hall.device.owner)."""

from __future__ import annotations

import logging

import pytest

from rackside.game.clock import Press
from rackside.firmware.outputs import Applied
from rackside.hall.device.owner import OwnershipError

from support.hallclock import ack, send


def test_every_unit_of_the_hall_output_is_touched_by_its_own_thread_only(hall_broker, table3, caplog):
    caplog.set_level(logging.WARNING)
    live, rec = table3
    live.tap("right")
    live.tap("left")
    send(hall_broker, 3, {"id": "t-adj", "cmd": "adjust", "player": 1, "remaining_ms": 30_000})
    send(hall_broker, 3, {"id": "t-id", "cmd": "identify", "seconds": 1})
    send(hall_broker, 3, {"id": "t-bad", "cmd": "adjust", "player": 9, "remaining_ms": 1})
    for cid in ("t-adj", "t-id", "t-bad"):
        ack(rec, cid)
    game = next(e["game"] for e in rec.json("event") if e["kind"] == "input")
    send(hall_broker, 3, {"id": "t-rs", "cmd": "resend", "game": game, "from_seq": 1})
    assert ack(rec, "t-rs")["ok"] is True
    live.command("end")
    rec.wait_for(lambda r: any(e["kind"] == "result" for e in r.json("event")))
    hall = live.hall
    owners = {
        "runner side": hall.owner.name,
        "worker": hall.worker.owner.name,
        "command intake": hall.worker.intake.owner.name,
        "outbox publisher": hall.publisher.owner.name,
    }
    assert owners == {"runner side": "runner", "worker": "hall-publisher", "command intake": "hall-publisher",
                      "outbox publisher": "hall-publisher"}
    assert not [r for r in caplog.records if "owned by thread" in r.getMessage()]


def test_a_unit_touched_from_another_thread_fails_at_once(hall_broker, table3):
    live, rec = table3
    live.tap("right")
    rec.wait_for(lambda r: r.json("event"))
    hall = live.hall
    with pytest.raises(OwnershipError, match="owned by thread 'hall-publisher'"):
        hall.publisher.deliver()  # as paho's callbacks once did: they may only post to its inbox
    with pytest.raises(OwnershipError, match="owned by thread 'hall-publisher'"):
        hall.worker.intake.receive(b'{"id": "x", "cmd": "identify"}', None, None)
    clock = live.runner.clock
    with pytest.raises(OwnershipError, match="owned by thread 'runner'"):
        hall.applied(Applied(Press(clock.since_ns, 1), 99, "game-000001", None, {}, clock, clock.since_ns))
