"""The director's console end to end: a real Mosquitto (tests/support/broker.py), simulated tables
running the real clock core, the console under uvicorn, and Debian's headless Chromium driven by
Playwright. Nothing is mocked."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import browser as chromium
from support.console import Http, demo_hall

PASSWORD = "test-director-pw"

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")

SCRIPTS = {
    1: [(-120, ("press", 2))] + [(s, ("turn",)) for s in range(3, 300, 3)],  # running normally
    2: [(-300, ("press", 2))],  # the test pulls its plug
    3: [(-1600, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))],  # side 1: 99 s overtime, penalty 20
    4: [(-1501, ("late_start", (2,)))],  # side 2 never came: lateness forfeit (2.3.5)
    5: [(-60, ("press", 2)), (0.5, ("challenge", [("QI", True), ("JOQ", False)], "UNACCEPTABLE", 1.0))],
    6: [],  # waiting to start: the command test adjusts it
    7: [(-30, ("press", 2))],
    8: [],
}


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    with demo_hall(tmp_path_factory.mktemp("console"), "1-8", list(range(1, 9)), SCRIPTS, PASSWORD) as h:
        yield h


def login(browser, hall, viewport=(1920, 1080)):
    return chromium.login(browser, hall.server.url, PASSWORD, viewport)


def test_tiles_appear_and_tick(hall, browser):
    page = login(browser, hall)
    page.wait_for_function("() => document.querySelectorAll('.tile').length === 8")
    time_1 = page.locator('.tile[data-table="1"] .side.turn .time')
    first = time_1.text_content()
    page.wait_for_function("t => document.querySelector('.tile[data-table=\"1\"] .side.turn .time').textContent !== t",
                           arg=first, timeout=4000)
    # exceptions first: the forfeit and the finished overtime game come before the running tables
    order = page.eval_on_selector_all("#tiles .tile", "ts => ts.map(t => t.dataset.cls)")
    ranks = ["offline", "forfeit", "overtime", "challenge", "call", "takeover", "neutralised", "notstarted", "finished", "running", "waiting"]
    assert [ranks.index(c) for c in order] == sorted(ranks.index(c) for c in order)
    assert page.get_attribute('.tile[data-table="4"]', "data-cls") == "forfeit"
    assert page.errors == []
    page.close()


def test_a_table_going_offline_turns_its_tile_within_5_s(hall, browser):
    page = login(browser, hall)
    page.wait_for_selector('.tile[data-table="2"].running')
    t0 = time.monotonic()
    hall.sim.act(2, ("offline",))
    page.wait_for_selector('.tile[data-table="2"].offline', timeout=5000)
    took = time.monotonic() - t0
    assert took < 5
    assert page.locator('.tile[data-table="2"] .label').text_content() == "OFFLINE"
    # a dead clock runs nobody's time: its times stay at its last state (issue 23.4), whatever the page redraws
    frozen = page.locator('.tile[data-table="2"] .s1 .time').text_content()
    for _ in range(2):
        second = page.evaluate("app.lastSecond")
        page.wait_for_function(f"() => app.lastSecond > {second}")
        assert page.locator('.tile[data-table="2"] .s1 .time').text_content() == frozen
    assert page.locator('.tile[data-table="2"] .note').text_content().startswith("offline since ")
    page.close()


def test_a_command_round_trips_and_is_logged_with_who_and_why(hall, browser):
    page = login(browser, hall)
    page.click("#open-commands")
    page.select_option("#cmd", "adjust")
    page.fill("#cmd-tables", "6")
    page.select_option("#cmd-player", "1")
    page.fill("#cmd-time", "12:00")
    page.fill("#cmd-reason", "clock was started late")
    page.click("#cmd-next")
    assert "set side 1's time to 12:00" in page.text_content("#confirm-text")
    page.click("#confirm-ok")
    page.wait_for_selector(".toast.ok >> text=table 6: adjust acknowledged", timeout=5000)
    page.wait_for_function("() => document.querySelector('.tile[data-table=\"6\"] .s1 .time').textContent === '12:00'")
    page.click('.tile[data-table="6"]')
    page.wait_for_selector("#detail-history li.h-command")
    assert "COMMAND adjust by director (reason: clock was started late)" in page.text_content("#detail-history")
    sent = [json.loads(x) for x in Path(hall.server.console_log_path).read_text().splitlines()]
    assert any(s["cmd"] == "adjust" and s["table"] == 6 and s["reason"] == "clock was started late" for s in sent)
    # a command the clock refuses shows the refusal: table 3's game is over
    page.click("#open-commands")
    page.select_option("#cmd", "arrive")
    page.fill("#cmd-tables", "3")
    page.click("#cmd-next")
    page.click("#confirm-ok")
    page.wait_for_selector(".toast.bad >> text=REFUSED", timeout=5000)
    page.close()


# Each message an EventSource hands the page, by stream: the page's own listeners see the same.
SSE_KINDS = """(() => { window.__kinds = {}; const O = window.EventSource;
  window.EventSource = function (url) { const es = new O(url); const add = es.addEventListener.bind(es);
    es.addEventListener = (kind, fn, ...rest) => add(kind, (e) => { const k = __kinds[url] || (__kinds[url] = {});
      k[kind] = (k[kind] || 0) + 1; fn(e); }, ...rest);
    return es; };
  Object.assign(window.EventSource, {CONNECTING: 0, OPEN: 1, CLOSED: 2}); })()"""


def test_a_tables_history_comes_only_to_the_page_that_has_it_open(hall, browser):
    """Issue 28.4: no page's stream carries a table's history (every second message at 300 tables,
    for a list nobody had on screen) but a page's whose drawer shows that table: the page says so
    (POST /api/events/ID/watch), and its own stream brings the history as it is, then each entry as
    it comes; closed, no more. Only the session that opened a stream can steer it."""
    page = chromium.login(browser, hall.server.url, PASSWORD, (1920, 1080), init_script=SSE_KINDS)
    other = chromium.login(browser, hall.server.url, PASSWORD, (1920, 1080), init_script=SSE_KINDS)
    page.click('.tile[data-table="1"]')
    page.wait_for_selector("#detail-history li")
    seq = page.evaluate("app.tables.get(1).state.seq")
    # table 1 turns every 3 s: its next input comes into the open history, newest first
    page.wait_for_function(f"() => /#({seq + 1}|{seq + 2}) /.test(document.querySelector('#detail-history li').textContent)", timeout=15_000)
    page.wait_for_function("() => (Object.values(__kinds)[0].table || 0) > 0")  # (a tile's state too: on a loaded machine it may follow)
    (stream,) = page.evaluate("__kinds").values()  # the page's one stream
    assert stream.get("detail") == 1 and stream.get("event", 0) >= 1 and stream.get("table", 0) > 0, stream
    other.wait_for_function(f"() => app.tables.get(1).state.seq > {seq + 1}")
    (seen,) = other.evaluate("__kinds").values()
    assert "event" not in seen and "detail" not in seen and "command" not in seen, seen
    # another session cannot steer this page's stream, nor a request without one
    sid = page.evaluate("app.stream.id")
    assert other.evaluate(f"app.post('/api/events/{sid}/watch', {{table: 2}}).then(() => 'ok', (e) => e.message)") \
        .startswith("no such event stream open for this session")
    assert Http(hall.server.url).call("POST", f"/api/events/{sid}/watch", {"table": 2})[0] in (401, 403)
    assert page.evaluate("app.post(`/api/events/${app.stream.id}/watch`, {table: 0}).then(() => 'ok', (e) => e.message)") \
        == "table must be a whole number from 1 to 999, not 0"
    # closed: its history stops coming
    page.click("#detail .close")
    seq = page.evaluate("app.tables.get(1).state.seq")
    page.wait_for_function(f"() => app.tables.get(1).state.seq > {seq}", timeout=15_000)  # (what was on its way has come)
    events, seq = page.evaluate("[Object.values(__kinds)[0].event || 0, app.tables.get(1).state.seq]")
    page.wait_for_function(f"() => app.tables.get(1).state.seq > {seq + 1}", timeout=15_000)
    assert page.evaluate("Object.values(__kinds)[0].event || 0") == events
    page.close()
    other.close()


# The page's first watch request held back half a second (a slow network), and the table of each
# detail its stream brings, in order.
SLOW_FIRST_WATCH = """(() => { const f = window.fetch; let first = true;
  window.fetch = (url, opts) => { if (first && String(url).includes('/watch')) { first = false;
    return new Promise((ok) => setTimeout(ok, 500)).then(() => f(url, opts)); } return f(url, opts); };
  window.__details = []; const O = window.EventSource;
  window.EventSource = function (url) { const es = new O(url); const add = es.addEventListener.bind(es);
    es.addEventListener = (kind, fn, ...rest) => add(kind, (e) => { if (kind === 'detail') __details.push(JSON.parse(e.data).table); fn(e); }, ...rest);
    return es; };
  Object.assign(window.EventSource, {CONNECTING: 0, OPEN: 1, CLOSED: 2}); })()"""


def test_the_drawer_watches_the_table_it_shows_whatever_order_the_requests_take(hall, browser):
    """Two tables opened in quick succession, the first request slow: the console applies a page's
    watch requests as they arrive, so the page sends one at a time, in the order it made them, and
    the stream watches the table the drawer shows (its detail the last to come). A stream the
    console does not know for this page (it ended, or another login's) is opened again, and watches."""
    page = chromium.login(browser, hall.server.url, PASSWORD, (1920, 1080), init_script=SLOW_FIRST_WATCH)
    page.click('.tile[data-table="1"]')
    page.evaluate("app.openDetail(2)")
    page.wait_for_function("() => __details.length >= 2", timeout=15_000)
    assert page.evaluate("__details") == [1, 2]
    assert page.text_content("#detail-title").startswith("Table 2")
    # a stream id the console does not know for this page (another login's): a new stream, and the
    # drawer filled
    page.evaluate("app.stream.id = 'gone'; app.watchTable(2)")
    page.wait_for_function("() => __details.length >= 3 && app.stream.id !== 'gone'", timeout=15_000)
    assert page.evaluate("__details")[-1] == 2
    assert page.errors == []
    page.close()


# The page's first watch request never answered (a connection half dead after a laptop's sleep),
# but given up as fetch gives up: when its signal says so.
LOST_FIRST_WATCH = """(() => { const f = window.fetch; let first = true;
  window.fetch = (url, opts) => { if (first && String(url).includes('/watch')) { first = false;
    return new Promise((_, fail) => { if (opts && opts.signal) opts.signal.addEventListener('abort', () => fail(opts.signal.reason)); }); }
    return f(url, opts); }; })()"""


def test_a_watch_request_never_answered_holds_up_the_next_no_longer_than_its_timeout(hall, browser):
    """The page's watch requests go one at a time: one that is never answered is given up after
    WATCH_TIMEOUT_MS, and the drawer then fills (the request after it goes, the first asked again)."""
    page = chromium.login(browser, hall.server.url, PASSWORD, (1920, 1080), init_script=LOST_FIRST_WATCH)
    timeout_ms = page.evaluate("app.WATCH_TIMEOUT_MS")
    assert timeout_ms == 10_000
    page.click('.tile[data-table="1"]')
    page.evaluate("app.openDetail(2)")
    page.wait_for_selector("#detail-history li", timeout=timeout_ms + 15_000)
    assert page.text_content("#detail-title").startswith("Table 2")
    assert page.errors == []
    page.close()


def test_pages_with_their_drawers_open_hold_one_connection_each(hall, browser):
    """A browser keeps at most six HTTP/1.1 connections to the console for all its tabs; a page
    whose drawer held a second stream took two, so three tabs with drawers open starved every other
    request (a command, a result). Four tabs of one browser, each with a drawer open: each has its
    history, and a request still goes through."""
    context = browser.new_context(viewport={"width": 1920, "height": 1080})  # one browser's tabs: one pool of connections
    first = context.new_page()
    first.goto(hall.server.url + "login")
    first.fill("#password", PASSWORD)
    first.click("button[type=submit]")
    first.wait_for_selector("body[data-ready='1']")
    pages = [first] + [context.new_page() for _ in range(3)]
    for p in pages[1:]:
        p.goto(hall.server.url)
        p.wait_for_selector("body[data-ready='1']")
    for i, p in enumerate(pages):
        p.click(f'.tile[data-table="{1 + i % 2}"]')
    for p in pages:
        p.wait_for_selector("#detail-history li", timeout=15_000)
    assert first.evaluate("fetch('/api/snapshot').then((r) => r.status)") == 200
    context.close()


def test_per_word_results_for_the_director_only(hall, browser):
    assert Http(hall.server.url).call("GET", "/api/table/5")[0] == 401
    page = login(browser, hall)
    page.wait_for_selector("#feed-list li", state="attached")
    page.click("#open-feed")
    page.click("#feed-list a >> text=table 5")
    page.wait_for_selector("#detail-challenges .words li.invalid")
    assert "JOQ: not valid" in page.text_content("#detail-challenges")
    page.close()


def replay(journal: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "rackside", "clock", "replay", "--json", str(journal)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_exports_match_the_clocks_journals(hall, browser):
    page = login(browser, hall)
    page.wait_for_selector('.tile[data-table="3"].finished')
    page.click('.tile[data-table="3"]')
    page.wait_for_selector("#detail-result:not([hidden])")
    page.fill("#slip1", "410")
    page.fill("#slip2", "388")
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#confirm[open]")
    assert "390 – 388" in page.text_content("#confirm-text")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-out >> text=recorded 390 – 388")
    # the lateness forfeit: no slip, a 75-point win, raised to 80 by the director
    page.click('.tile[data-table="4"]')
    page.wait_for_selector("#margin-label:not([hidden])")
    page.fill("#margin", "80")
    page.click("#result-form button[type=submit]")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-out >> text=recorded side 2 forfeits: 80 / -80 (TSH forfeit, not rated)")
    csv_text = page.request.get(hall.server.url + "api/export/round.csv").text()
    rows = {int(r[2]): r for r in list(csv.reader(io.StringIO(csv_text)))[1:]}

    j3 = replay(hall.workdir / "journals" / "table-3" / "game-000001.jsonl")
    p1 = j3["players"][0]
    assert (p1["overtime_s"], p1["penalty"]) == (99, 20)  # 1599 s played of 1500
    assert rows[3][6:9] == [str(p1["penalty"]), str(p1["overtime_s"]), str(410 - p1["penalty"])]
    j4 = replay(hall.workdir / "journals" / "table-4" / "game-000001.jsonl")
    assert j4["ending"] == "lateness forfeit" and j4["forfeits"] == [2] and j4["lateness_margin"] == 75
    assert rows[4][8] == "80" and rows[4][14] == "-80" and rows[4][15:17] == ["lateness forfeit", "no"]  # not rated (2.3.6(b))
    assert rows[3][3:5] == ["5", rows[3][4]] and "," in rows[3][4]  # TSH player 5, "Surname, Given"
    tsh_text = page.request.get(hall.server.url + "api/export/tsh.txt").text()
    # the demo's TSH file: table k seats 2k-1 v 2k; the forfeit as TSH records one (a bye each, the spread)
    assert tsh_text == "pair 7 0 1 demo\npair 8 0 1 demo\na 1 demo\n5 390 6 388\n7 80\n8 -80\n\n"
    page.close()


def test_a_phone_gets_a_list(hall, browser):
    page = login(browser, hall, viewport=(390, 844))
    page.wait_for_function("() => document.querySelectorAll('.tile').length === 8")
    widths = page.eval_on_selector_all(".tile", "ts => ts.map(t => t.getBoundingClientRect().width)")
    assert min(widths) > 350
    page.close()


def send_from_dialog(page, cmd, tables, fill=None):
    page.click("#open-commands")
    page.select_option("#cmd", cmd)
    page.fill("#cmd-tables", tables)
    for selector, value in (fill or {}).items():
        if selector.startswith("check:"):
            page.check(selector[6:])
        elif selector.startswith("select:"):
            page.select_option(selector[7:], value)
        else:
            page.fill(selector, value)
    page.click("#cmd-next")
    page.click("#confirm-ok")


def test_late_start_arrival_and_next_rounds_game(hall, browser):
    page = login(browser, hall)
    send_from_dialog(page, "late_start", "8", {"check:#late2": None})  # 2.3.3(a): side 2 absent
    page.wait_for_selector(".toast.ok >> text=table 8: late_start acknowledged", timeout=5000)
    page.wait_for_function("() => document.querySelector('.tile[data-table=\"8\"] .note').textContent.startsWith('late')")
    send_from_dialog(page, "arrive", "8", {"select:#cmd-player": "2"})
    page.wait_for_selector(".toast.ok >> text=table 8: arrive acknowledged", timeout=5000)
    send_from_dialog(page, "new_game", "7-8", {"#cmd-game": "20"})
    page.wait_for_selector(".toast.ok >> text=table 7: new_game acknowledged", timeout=5000)
    page.wait_for_selector(".toast.ok >> text=table 8: new_game acknowledged", timeout=5000)
    page.wait_for_function("() => document.querySelector('.tile[data-table=\"7\"] .s1 .time').textContent === '20:00'")
    # the ack comes before the clock's next state: wait for table 8's as for table 7's, not assert at once
    page.wait_for_function("() => document.querySelector('.tile[data-table=\"8\"] .s2 .time').textContent === '20:00'")
    # the console's own log says who sent each command and why (owner-only)
    log = Path(hall.server.console_log_path)
    assert oct(log.stat().st_mode & 0o777) == "0o600"
    sent = [json.loads(x) for x in log.read_text().splitlines()]
    assert any(s["cmd"] == "late_start" and s["table"] == 8 and s["players"] == [2] and s["by"] == "director" for s in sent)
    page.close()
