"""A director's command is always acknowledged, also when the publisher's queue is full.

Events dropped from the full queue are recovered from the journal (the resync); an ack is in no
journal, so one dropped there was never sent: the director's console waited for it for ever, and a
redelivery of the same command found its id still pending and was ignored. The runner's replies to
commands now have a queue of their own (bounded by the commands being applied), never the full one."""

from __future__ import annotations

import json
import queue

from rackside.game.clock import NS_PER_S, Press, Rules, apply, view
from rackside.game.messages import Request
from rackside.firmware.outputs import Applied, Frame
from rackside.hall.device.clock_output import Wake

from support.broker import Recorder
from support.wait import wait


def test_an_ack_made_while_the_queue_is_full_is_still_sent(make_broker, tmp_path):
    hall_broker = make_broker(tables="6-7", stations=1)  # its own: no retained state left for others
    from rackside.firmware.persist import GameStore
    from rackside.hall.net import config as hall_config
    from rackside.hall.device.clock_output import HallOutput

    store = GameStore(tmp_path / "state", Rules(), boot_id="test")
    t = 10**12
    clock = store.start(t)
    cfg = hall_config.from_table({"url": hall_broker.url, "credentials": str(hall_broker.credentials("table-6"))}, "table")
    requests: list[Request] = []
    out = HallOutput(cfg, store.journal_dir, requests.append, outbox_path=tmp_path / "outbox.sqlite", queue_size=3)
    out.view(Frame(view(clock, t), ("", ""), clock, False, "game-000001"), t)
    for i in range(6):  # the publisher is not running: its queue fills
        t += NS_PER_S
        inp = Press(t, 2 if i % 2 == 0 else 1)
        clock = apply(clock, inp)
        out.applied(Applied(inp, store.record(inp), store.game, None, {}, clock, t))
        out.flush(t)
    assert out.queue.full()
    cmd_topic = f"rackside/v1/{hall_broker.hall}/table/6/cmd"
    out._on_message(cmd_topic, json.dumps({"id": "c-full", "cmd": "arrive", "player": 2}).encode())  # paho's thread
    out._on_message(cmd_topic, b"not json")  # a refused one is acked too (without an id)
    rec = Recorder(hall_broker, f"rackside/v1/{hall_broker.hall}/table/6/ack")
    out.start()
    try:
        wait(lambda: requests, 10)
        for _ in range(3):  # the runner's queue full again when it answers
            try:
                out.queue.put_nowait(Wake())
            except queue.Full:
                break
        requests[0].reply(True, "")  # the runner's answer, on its thread
        acks = rec.wait_for(lambda r: r.json("ack") if len(r.json("ack")) >= 2 else None, timeout=10)
        assert {(a["id"], a["ok"]) for a in acks} == {("c-full", True), (None, False)}
    finally:
        out.close()
        store.close()
        rec.close()


def test_a_batch_the_outbox_could_not_take_is_not_lost(make_broker, tmp_path):
    """One failed outbox write (a full or failing card, for a moment): the batch's events come back
    from the journal and its ack is sent, instead of the publisher believing them stored."""
    import sqlite3

    hall_broker = make_broker(tables="6-7", stations=1)  # its own: no retained state left for others

    from rackside.firmware.persist import GameStore
    from rackside.hall.net import config as hall_config
    from rackside.hall.device.clock_output import HallOutput

    store = GameStore(tmp_path / "state", Rules(), boot_id="test")
    t = 10**12
    clock = store.start(t)
    cfg = hall_config.from_table({"url": hall_broker.url, "credentials": str(hall_broker.credentials("table-7"))}, "table")
    requests: list[Request] = []
    out = HallOutput(cfg, store.journal_dir, requests.append, outbox_path=tmp_path / "outbox.sqlite")
    rec = Recorder(hall_broker, f"rackside/v1/{hall_broker.hall}/table/7/#")
    out.view(Frame(view(clock, t), ("", ""), clock, False, "game-000001"), t)
    out.start()
    try:
        wait(lambda: getattr(out.worker, "outbox", None) is not None, 10)
        real_put, failed = out.worker.outbox.put, []

        def put_once_failing(rows, progress=None, answered=None):
            if rows and not failed:
                failed.append(len(rows))
                raise sqlite3.OperationalError("disk I/O error")
            return real_put(rows, progress, answered)

        out.worker.outbox.put = put_once_failing
        out._on_message(f"rackside/v1/{hall_broker.hall}/table/7/cmd", json.dumps({"id": "c-io", "cmd": "arrive", "player": 2}).encode())
        wait(lambda: requests, 10)
        requests[0].reply(True, "")
        for i in range(4):
            t += NS_PER_S
            inp = Press(t, 2 if i % 2 == 0 else 1)
            clock = apply(clock, inp)
            out.applied(Applied(inp, store.record(inp), store.game, None, {}, clock, t))
            out.flush(t)
        rec.wait_for(lambda r: {(e["game"], e["seq"]) for e in r.json("event") if e["kind"] == "input"}
                     >= {("game-000001", n) for n in range(1, 5)} and any(a["id"] == "c-io" for a in r.json("ack")), timeout=15)
        assert failed  # the fault happened
    finally:
        out.close()
        store.close()
        rec.close()
