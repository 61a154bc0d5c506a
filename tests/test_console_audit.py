"""The audit is the director's (issue 36, item 2): a device's rows (its calls, its held slips) are
bounded per table, game and kind, folded into one count row beyond that, and never push a
director's row out of `/api/audit`; the audit reads by table and kind; an older file's audit gains
its tables and kinds. The red team's flood, through the real broker and console: a copied card
sending calls with new ids at the console's own device rate (a burst of limits.DEVICE_BURST, then
about limits.DEVICE_RATE a second)."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from rackside.game.call import SIDE, Call
from rackside.game.journal import input_to_dict
from rackside.hall.console.common import limits
from rackside.hall.console.scoring.resultstore import (AUDIT_KINDS, DEVICE_GAMES, DEVICE_ROWS, MAX_AUDIT_READ, ResultStore)
from rackside.hall.wire import payloads

from support import browser as chromium
from support.console import post
from support.paperless import Hall
from support.wait import wait

DEVICE_KINDS = 2  # the kinds a device's message writes: call, slip (resultstore's bound)


def _call(store: ResultStore, table: int, game: str, i: int) -> None:
    store.note(f"2026-05-01T10:{i // 60 % 60:02}:{i % 60:02}Z", "console", "call", "A", 1, table, "side 1",
               {"call": f"call-{i}", "game": game}, kind="call", game=game, device=True)


def test_a_device_flood_is_folded_and_never_pushes_out_the_directors_rows():
    store = ResultStore(None)
    store.note("2026-05-01T10:00:00Z", "Chief TD", "call resolve", "A", 1, 1, "tile count checked", {"call": "call-1"},
               kind="call", game="game-000001")
    for i in range(MAX_AUDIT_READ + 100):
        _call(store, 2, "game-000007", i)
    rows = store.audit()
    director = [r for r in rows if not r["device"]]
    assert [(r["table"], r["who"], r["reason"]) for r in director] == [(1, "Chief TD", "tile count checked")]
    device = [r for r in rows if r["device"]]
    assert len(device) == DEVICE_ROWS + 1  # the first DEVICE_ROWS, and one count row
    folded = device[0]
    assert folded["folded"] == MAX_AUDIT_READ + 100 - DEVICE_ROWS and folded["action"] == "calls folded"
    assert f"and {folded['folded']:,} more calls" in folded["reason"], folded
    assert folded["after"]["call"] == f"call-{MAX_AUDIT_READ + 99}"  # the latest's
    assert store.audit_rows() == (1, DEVICE_ROWS + 1)


def test_a_table_keeps_its_latest_games_device_rows_and_every_directors_row():
    store = ResultStore(None)
    for g in range(3 * DEVICE_GAMES):
        game = f"game-{g:06}"
        for i in range(DEVICE_ROWS + 3):
            _call(store, 4, game, i)
        store.note("2026-05-01T11:00:00Z", "Chief TD", "call ack", "A", 1, 4, "", {"game": game}, kind="call", game=game)
    device = [r for r in store.audit(table=4) if r["device"]]
    assert sorted({r["game"] for r in device}) == [f"game-{g:06}" for g in range(2 * DEVICE_GAMES, 3 * DEVICE_GAMES)]
    assert len(device) == DEVICE_GAMES * (DEVICE_ROWS + 1)
    assert store.audit_rows() == (3 * DEVICE_GAMES, DEVICE_GAMES * (DEVICE_ROWS + 1))


def test_the_audit_reads_by_table_and_kind():
    store = ResultStore(None)
    _call(store, 2, "g", 1)
    store.note("2026-05-01T10:00:00Z", "console", "slip held", "A", 1, 3, "scores disagree", {"game": "g"},
               kind="slip", game="g", device=True)
    store.note("2026-05-01T10:00:01Z", "Chief TD", "slip set aside", "A", 1, 3, "typed", {"game": "g"}, kind="slip", game="g")
    assert [r["action"] for r in store.audit(table=3)] == ["slip set aside", "slip held"]
    assert [r["table"] for r in store.audit(kind="call")] == [2]
    assert store.audit(table=2, kind="slip") == []
    with pytest.raises(ValueError, match="allowed are result, call, slip, update, rules"):
        store.note("t", "x", "y", "A", 1, 1, kind="chat")


def test_an_older_files_audit_gains_its_tables_and_kinds(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL, action TEXT NOT NULL,
            division TEXT NOT NULL, round INTEGER NOT NULL, pn_low INTEGER NOT NULL, pn_high INTEGER NOT NULL,
            before TEXT, after TEXT, reason TEXT NOT NULL DEFAULT '');
        INSERT INTO audit (at, who, action, division, round, pn_low, pn_high, after) VALUES
            ('t1', 'Sam', 'confirm', 'A', 1, 3, 4, '{"table": 2}'),
            ('t2', 'console', 'call', 'A', 1, 0, 5, '{"game": "game-000001", "call": "call-1"}'),
            ('t3', 'Sam', 'call ack', 'A', 1, 0, 5, '{"game": "game-000001", "call": "call-1"}');
    """)
    db.commit()
    db.close()
    rows = ResultStore(path).audit()
    assert [(r["action"], r["table"], r["kind"], r["game"], r["device"]) for r in rows] == [
        ("call ack", 5, "call", "game-000001", False), ("call", 5, "call", "game-000001", True), ("confirm", 2, "result", None, False)]


# --- the red team's flood, through the broker and the console -----------------------------------------


def test_a_flood_of_calls_at_the_device_rate_never_displaces_a_directors_correction(tmp_path):
    hall = Hall(tmp_path)
    try:
        # the director's correction at table 6 (no clock there: typed from the paper slip, then corrected)
        body = {"slip": [390, 410], "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]}, "confirm": True}
        assert post(hall.h, "/api/result/6", body)[0] == 200
        body = {**body, "slip": [410, 390], "correction": "scores were reversed on the slip (5.4.1(b))"}
        status, out = post(hall.h, "/api/result/6", body)
        assert status == 200, out
        two = hall.clock(2)  # the copied card: table 2's credentials, calls with new ids as fast as the console takes them
        wait(lambda: hall.tile(2)["status"] == "online")
        burst, rate, seconds = limits.DEVICE_BURST, limits.DEVICE_RATE, 4
        sent = 0

        def call() -> None:
            nonlocal sent
            sent += 1
            line = input_to_dict(Call(two.after(0.001), 1, f"call-{sent}", SIDE))
            with two.lock:
                two.seq += 1
                two._publish("event", payloads.event_payload(line, two.game, two.seq, time.time_ns()), wait=False)

        for _ in range(burst):
            call()
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            call()
            time.sleep(1 / rate)
        # the console has taken the burst: the table's open call is one of its last
        wait(lambda: any(c["table"] == 2 and int(c["call"][5:]) > burst for c in hall.paperless()["calls"]), timeout=60)
        calls = json.loads(hall.h.call("GET", "/api/audit?table=2&kind=call")[1])["audit"]
        assert len(calls) == DEVICE_ROWS + 1 and all(r["table"] == 2 and r["kind"] == "call" for r in calls)
        assert calls[0]["folded"] > burst - DEVICE_ROWS and "more calls" in calls[0]["reason"], calls[0]
        for query in ("", "?table=6", "?kind=result", "?division=A"):
            rows = json.loads(hall.h.call("GET", "/api/audit" + query)[1])["audit"]
            assert [r["reason"] for r in rows if r["action"] == "correct" and r["table"] == 6] == [
                "scores were reversed on the slip (5.4.1(b))"], query
        assert all(r["table"] == 6 for r in json.loads(hall.h.call("GET", "/api/audit?table=6")[1])["audit"])
        status, raw, _ = hall.h.call("GET", "/api/audit?kind=chat")
        assert status == 400 and "allowed are " + ", ".join(AUDIT_KINDS) in json.loads(raw)["error"]
        status, raw, _ = hall.h.call("GET", "/api/audit?table=0")
        assert status == 400 and "table" in json.loads(raw)["error"]
        # the store within its documented bound: the devices' rows, whatever was sent
        db = sqlite3.connect(f"file:{hall.console.home / 'console-results.sqlite'}?mode=ro", uri=True)
        device_rows = db.execute("SELECT COUNT(*) FROM audit WHERE who='console'").fetchone()[0]
        db.close()
        assert device_rows <= DEVICE_GAMES * DEVICE_KINDS * (DEVICE_ROWS + 1), device_rows
        if chromium.have_chromium():
            _the_pages_audit_view_filters(hall)
    finally:
        hall.close()


def _the_pages_audit_view_filters(hall) -> None:
    """The console's audit page (/audit, linked from the hall page): its table and kind filters."""
    from playwright.sync_api import sync_playwright

    from support.paperless import PASSWORD

    with sync_playwright() as p:
        b = chromium.launch(p)
        page = chromium.login(b, hall.console.url, PASSWORD)
        page.click("a[href='/audit']")
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#audit tbody tr[data-table='6'] td", has_text="scores were reversed").count() == 1
        page.fill("#table", "2")
        page.select_option("#kind", "call")
        page.click("#filters button")
        page.wait_for_selector("body[data-ready='1']")
        rows = page.locator("#audit tbody tr")
        assert rows.count() == DEVICE_ROWS + 1
        assert page.locator("#audit tbody tr[data-table='2'][data-kind='call']").count() == DEVICE_ROWS + 1
        assert "calls folded (device)" in rows.first.inner_text() and "more calls" in rows.first.inner_text()
        page.fill("#table", "6")
        page.select_option("#kind", "result")
        page.click("#filters button")
        page.wait_for_selector("body[data-ready='1']")
        assert [r.get_attribute("data-table") for r in page.locator("#audit tbody tr").all()] == ["6", "6"]
        assert "table=6&kind=result" in page.url
        assert page.errors == []
