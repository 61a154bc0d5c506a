"""The public hall through the real `rackside hall console` process (issue 28 item 1, "Done when"): a
real Mosquitto, simulated clocks and a simulated challenge station (hall/console/demohall/sim.py, the real
clock core), a real event's TSH files (tests/data/tsh/july4-2025: round 3 paired, rounds 1 and 2
scored), the public listener ([public] listen) and folder, and Debian's headless Chromium with a
phone's viewport. Nothing is mocked.

- a phone finds a player's table by name and by number, and the standings are TSH's own ranks of
  the same files (TSH's `rrank` after round 2), then, once the director records a round-3 result,
  TSH's ranking (standings.py, held to TSH's ranks in tests/test_public.py) of the files with it;
- the live tables tick and show whose turn it is;
- every public answer has an ETag and a Cache-Control, a conditional request is a 304, and nothing
  of the director's is reachable on the public listener;
- no private field is anywhere in the public answers, by key and by value against the director's
  snapshot and tables (a challenge's words, a command's id, the station, the devices' versions, a
  clock's penalty before its result is recorded, the session's tokens), on the listener and in the folder.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from rackside.hall.console.publichall import public
from rackside.hall.console.scoring import standings, tsh
from support import browser as chromium
from support.broker import Broker, free_port
from support.console import ConsoleProcess, Http, post, tsh_files
from support.wait import wait

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")

PASSWORD = "the-public-hall"
EVENT = Path(__file__).parent / "data" / "tsh" / "july4-2025"
FILES = ("config.tsh", "a.t", "b.t")
GAME_S = 1500
PHONE = {"width": 390, "height": 844}
WORD = "ZYZZYVAX"  # the challenged word: the director's eyes only
# round 3 of the July 4 event: table 1 (A1) Lamabadusuriya v Wapnick, table 3 (A3) Sanaullah v Jighere
SCRIPTS = {
    1: [(-120, ("press", 2))] + [(s, ("turn",)) for s in range(3, 600, 3)],  # playing
    2: [(-60, ("press", 2)), (0.5, ("challenge", [(WORD, False)], "UNACCEPTABLE", 0.5))],
    3: [(-1600, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))],  # side 1 99 s over: 20 off (5.3), not recorded yet
}


def get(url: str, headers: dict | None = None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers


class Hall:
    def __init__(self, folder: Path):
        from rackside.game.clock import Rules
        from rackside.hall.console.demohall.sim import SimHall

        self.broker = Broker(folder / "broker", tables="1-3", stations=1).start()
        self.www = folder / "www"
        self.www.mkdir()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        extra = tsh_files(folder / "console", {n: (EVENT / n).read_bytes() for n in FILES}, round=3)
        extra += f'\n[public]\nlisten = "127.0.0.1:{self.port}"\nfolder = "{self.www}"\nevery_s = 1\n'
        self.console = ConsoleProcess(self.broker, folder / "console", PASSWORD, extra=extra).start()
        wait(lambda: get(self.url + "hall.json")[0] == 200, 20)
        d = self.broker.devices
        self.sim = SimHall(self.broker.hall, "127.0.0.1", self.broker.port,
                           {n: d[f"table-{n}"].login for n in SCRIPTS}, folder / "journals",
                           rules=Rules(game_time_ms=GAME_S * 1000), station=("1", *d["station-1"].login))
        self.sim.connect()
        for n, steps in SCRIPTS.items():
            self.sim.script(n, steps)
        self.sim.start()
        self.h = Http(self.console.url)
        self.h.token = self.h.login(PASSWORD, "Chief TD")

    def director(self, path: str) -> dict:
        status, body, _ = self.h.call("GET", path)
        assert status == 200, body
        return json.loads(body)

    def doc(self, name: str) -> dict:
        return json.loads(get(self.url + name)[1])

    def stop(self) -> None:
        self.sim.close()
        self.console.stop()
        self.broker.stop()


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    h = Hall(tmp_path_factory.mktemp("public"))
    try:
        yield h
    finally:
        h.stop()


def phone(browser, url: str):
    page = browser.new_page(viewport=PHONE, is_mobile=True, has_touch=True)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.errors = errors
    page.goto(url)
    page.wait_for_function("() => document.getElementById('status').textContent.startsWith('updated')")
    chromium.expose(page, chromium.PUBLIC_MODULES)
    return page


def event_divisions() -> dict[str, tsh.Division]:
    """The event's divisions as TSH reads its files (config.tsh and the .t files)."""
    cfg = tsh.parse_config((EVENT / "config.tsh").read_text())
    return {name: tsh.parse_t(tsh.decode_t((EVENT / f).read_bytes()), name, f) for name, f in cfg.divisions}


def page_standings(page) -> list[tuple[int, int]]:
    """(rank, player number) of each row the page shows: the number is in the player's cell, "(A12)"."""
    rows = page.eval_on_selector_all("#standings-table tr", "rows => rows.slice(1).map(r => [r.cells[0].textContent, r.cells[1].textContent])")
    return [(int(rank), int(who.rsplit("(", 1)[1].strip(")")[1:])) for rank, who in rows]


def test_a_phone_finds_a_players_table_and_the_standings_are_tshs_ranking(hall, browser):
    page = phone(browser, hall.url)
    page.fill("#who", "Wapnick")
    page.wait_for_selector("#found .card")
    card = page.text_content("#found .card")
    assert "Wapnick, Joel (A21)" in card and "Round 3" in card and "table 1 (A1)" in card, card
    assert "against Lamabadusuriya, Harshan (A1)" in card and "you start" not in card, card
    page.fill("#who", "A23")  # by division and player number
    page.wait_for_function("() => document.querySelector('#found .card h3').textContent.includes('(A23)')")
    card = page.text_content("#found .card")
    assert "table 3 (A3)" in card and "you start" in card, card  # side 1 (TSH's p12 says 23 starts)

    # standings: division A after round 2, as TSH ranked it (its rrank in the event's tourney.js)
    page.click("#tabs button[data-tab=standings]")
    page.wait_for_selector("#standings-table tr:nth-child(2)")
    assert page.text_content("#standings p") == "after round 2"
    tshjs = {d.name: d for d in tsh.parse_tourney_js((EVENT / "tourney.js").read_text(), "tourney.js")}
    theirs = {p.number: int(p.etc["rrank"][2]) for p in tshjs["A"].players.values() if p.active}
    shown = page_standings(page)
    assert {n: r for r, n in shown} == theirs

    # the director records table 3's round-3 game from its clock (side 1 20 points off, 5.3)
    wait(lambda: hall.director("/api/table/3")["tile"]["result"], 30)
    status, out = post(hall.h, "/api/result/3", {"slip": [420, 380], "confirm": True})
    assert status == 200 and out["confirmed"], out
    assert out["scores"] == [400, 380]
    page.wait_for_function("() => document.querySelector('#standings p').textContent === 'after round 3'", timeout=20000)
    # TSH's division once the director enters the console's TSH export of round 3 (results.to_tsh):
    # the game's scores, and each round-3 bye at the event's bye spread
    cfg = tsh.parse_config((EVENT / "config.tsh").read_text())
    a = event_divisions()["A"]
    players = dict(a.players)
    for n, score in zip((23, 2), out["scores"]):
        players[n] = replace(players[n], scores=players[n].scores[:2] + (score,))
    for n, p in a.players.items():
        if len(p.opponents) > 2 and p.opponents[2] == 0:
            players[n] = replace(p, scores=p.scores[:2] + (cfg.bye_spread,))
    expected = [(r["rank"], r["number"]) for r in standings.ranked(replace(a, players=players))]
    assert page_standings(page) == expected
    assert page.errors == []


def test_live_tables_tick_and_say_whose_turn_it_is(hall, browser):
    page = phone(browser, hall.url)
    page.click("#tabs button[data-tab=live]")
    sel = '.live-table[data-table="1"] .side'
    page.wait_for_function(f"() => [...document.querySelectorAll('{sel}')].some(s => /\\d:\\d\\d$/.test(s.textContent))")
    before = page.eval_on_selector_all(sel, "s => s.map(x => x.textContent)")
    page.wait_for_function(f"(b) => JSON.stringify([...document.querySelectorAll('{sel}')].map(x => x.textContent)) !== JSON.stringify(b)",
                           arg=before, timeout=10000)
    assert page.eval_on_selector_all(f"{sel}.turn", "s => s.length") == 1
    assert page.text_content('.live-table[data-table="1"] h3') == "Table 1 (A1)"  # TSH's table, as seated
    assert "Lamabadusuriya, Harshan" in " ".join(before)
    assert page.errors == []


def test_a_new_live_json_redraws_the_changed_card_in_place_and_nothing_else(hall, browser):
    """The page's renderer held to issue 28 item 4 (bench/public_viewers.py: 300 live tables within 5 %
    of a core): a table's press redraws its own card, in place; the other cards, the pairings and the
    standings are not built again."""
    page = phone(browser, hall.url)
    page.click("#tabs button[data-tab=live]")
    page.wait_for_selector('.live-table[data-table="1"] .side.turn')
    version = page.evaluate("""() => {
      for (const c of document.querySelectorAll('.live-table')) c.kept = true;
      document.querySelector('#pairings table').kept = true;
      document.querySelector('#standings-table table').kept = true;
      return app.etags['live.json'];
    }""")
    # table 1 presses every 3 s: a new live.json reaches the page, which draws it at its next frame
    page.wait_for_function("(v) => app.etags['live.json'] !== v", arg=version, timeout=20000)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    kept = page.evaluate("""() => ({cards: [...document.querySelectorAll('.live-table')].map(c => c.kept === true),
      pairings: document.querySelector('#pairings table').kept === true,
      standings: document.querySelector('#standings-table table').kept === true})""")
    assert all(kept["cards"]) and kept["pairings"] and kept["standings"], kept
    assert page.errors == []


def test_every_public_answer_is_cacheable_and_a_conditional_request_is_a_304(hall):
    for name in ("", *public.FILES, "public.js", "public.css"):
        status, body, headers = get(hall.url + name)
        assert status == 200 and body, name
        etag, cache = headers["ETag"], headers["Cache-Control"]
        assert etag.startswith('"') and cache.startswith("public, max-age="), (name, etag, cache)
        status, again, headers = get(hall.url + name, {"If-None-Match": etag})
        if status == 200:  # live.json moved on between the two (a press): its new ETag is asked again
            status, again, headers = get(hall.url + name, {"If-None-Match": headers["ETag"]})
        assert status == 304 and again == b"" and headers["ETag"], name
    req = urllib.request.Request(hall.url + "hall.json", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 405
    for path in ("api/snapshot", "api/events", "api/table/1", "login", "static/app.js", "api/export/tourney.js", "ready"):
        assert get(hall.url + path)[0] == 404, path


def keys_of(v):
    if isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from keys_of(x)
    elif isinstance(v, list):
        for x in v:
            yield from keys_of(x)


def test_no_private_field_is_in_any_public_answer_by_key_or_by_value(hall):
    status, out = post(hall.h, "/api/command", {"cmd": "identify", "tables": [1]})
    assert status == 200, out
    command_id = out["sent"][0]["id"]
    detail = wait(lambda: (d := hall.director("/api/table/2"))["challenges"] and d["challenges"][0].get("word_results") and d, 30)
    ended = wait(lambda: (t := hall.director("/api/table/3")["tile"])["result"] and t, 30)
    snapshot = hall.director("/api/snapshot")
    words = [w["word"] for c in detail["challenges"] for w in c["word_results"]]
    assert WORD in words
    versions = {t["version"] for t in snapshot["tables"] if t.get("version")}  # (the simulated clocks send none)
    devices = {x for d in hall.broker.devices.values() for x in (d.user, d.password, d.client_id) if x}  # who each device is
    cookies = {c.value for c in hall.h.jar}
    private = {WORD, command_id, hall.h.token, *cookies, *versions, *devices, "Chief TD"}  # (a station's id, "1", is checked by key)
    assert any(p["penalty"] for p in ended["state"]["players"])  # a penalty the clock has, not yet recorded

    answers = {name: get(hall.url + name)[1].decode() for name in public.FILES}
    folder = {p.name: p.read_text() for p in hall.www.iterdir() if p.suffix == ".json"}
    assert set(folder) == set(public.FILES)
    for where, texts in (("listener", answers), ("folder", folder)):
        for name, text in texts.items():
            for value in private:
                assert value not in text, (where, name, value)
            found = set(keys_of(json.loads(text))) & {
                "penalty", "overtime_s", "word_results", "words", "word_count", "verdict",
                "command", "history", "status", "version", "health", "health_problems", "problems", "note", "by",
                "decision", "no_clock", "station", "stations", "feed", "csrf", "user", "thresholds", "tsh_problems"}
            assert found == set(), (where, name, found)
    live = {t["table"]: t for t in json.loads(answers["live.json"])["tables"]}
    # what the director's tile shows is on the public card too (issue 35): a forfeit, how the game
    # ended, that a challenge is on (a flag: not its station, words or verdict), a clock offline
    assert live[3]["state"]["players"][0].keys() == {"player", "remaining_ms", "absent", "forfeit"}
    assert all(isinstance(t["challenge"], bool) and isinstance(t["offline"], bool) for t in live.values())
    # side 1's 99 s in overtime is shown as its clock's display shows it, the 20 points never (5.3)
    side1 = next(p for p in ended["state"]["players"] if p["player"] == 1)
    assert live[3]["state"]["players"][0]["remaining_ms"] == side1["remaining_ms"] < 0 and side1["penalty"] == 20


def test_the_public_listener_has_its_own_caps_and_a_crowd_there_leaves_the_director_alone(hall):
    """One address gets at most limits.PUBLIC.per_source connections to the public listener (the
    rest closed at once), more than the director's listener allows one address: the caps are its own;
    and the director, on his own listener, is served throughout."""
    import socket
    import time

    from rackside.hall.console.common import limits
    from support.wait import until

    def closed(s: socket.socket) -> bool:
        s.settimeout(0.01)
        try:
            return s.recv(1) == b""
        except (TimeoutError, BlockingIOError):
            return False
        except OSError:
            return True

    assert limits.PUBLIC.per_source > limits.DIRECTOR.per_source
    held = []
    t_first = time.monotonic()
    try:
        for _ in range(limits.PUBLIC.per_source + 10):
            s = socket.create_connection(("127.0.0.1", hall.port), timeout=5, source_address=("127.0.0.6", 0))
            s.sendall(b"GET /hall.json HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            held.append(s)
        assert hall.h.call("GET", "/api/snapshot")[0] == 200
        assert until(lambda: sum(closed(s) for s in held) >= 10, limits.HEADER_TIMEOUT_S)
        open_past_directors_cap = sum(not closed(s) for s in held[:limits.DIRECTOR.per_source + 1])
        assert time.monotonic() - t_first < limits.HEADER_TIMEOUT_S  # at once, before any header deadline
        assert open_past_directors_cap == limits.DIRECTOR.per_source + 1  # the director's cap is not this listener's
    finally:
        for s in held:
            s.close()
    assert get(hall.url + "hall.json")[0] == 200


def test_the_delay_is_applied_where_the_files_are_built(tmp_path):
    """[public] delay_s = 3, folder only: the console writes nothing for the first 3 s, and every
    file it writes shows the hall as it was at least 3 s before it was written."""
    import os
    from datetime import datetime

    broker = Broker(tmp_path / "broker", tables="1", stations=0).start()
    www = tmp_path / "www"
    www.mkdir()
    extra = tsh_files(tmp_path / "console", {n: (EVENT / n).read_bytes() for n in FILES}, round=3)
    extra += f'\n[public]\nfolder = "{www}"\ndelay_s = 3\nevery_s = 1\n'
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD, extra=extra).start()
    try:
        started = datetime.now().astimezone()
        assert not (www / "live.json").exists()  # the console listens at once, but shows nothing younger than 3 s
        wait(lambda: (www / "hall.json").exists(), 20)
        live = json.loads((www / "live.json").read_text())
        built = datetime.fromisoformat(live["built_at"])
        written = datetime.fromtimestamp(os.stat(www / "live.json").st_mtime).astimezone()
        assert live["delay_s"] == 3 and json.loads((www / "hall.json").read_text())["delay_s"] == 3
        assert (written - built).total_seconds() >= 3, (built, written)
        assert (written - started).total_seconds() >= 2  # (the first view was built as the console started)
    finally:
        console.stop()
        broker.stop()


def test_a_console_started_with_a_delay_says_when_the_hall_is_back(tmp_path, browser):
    """[public] delay_s = 3600, listener only (a console restarted: its queue of delayed views was in
    memory). Until the first view is an hour old the listener serves the page and a hall.json with
    the hall's name, the delay and when the hall is back, nothing of the hall as it is now; the page
    says so (a defect: every answer was a 503 for an hour)."""
    from datetime import datetime, timedelta

    broker = Broker(tmp_path / "broker", tables="1", stations=0).start()
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    extra = tsh_files(tmp_path / "console", {n: (EVENT / n).read_bytes() for n in FILES}, round=3)
    extra += f'\n[public]\nlisten = "127.0.0.1:{port}"\ndelay_s = 3600\nevery_s = 1\n'
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD, extra=extra).start()
    try:
        started = datetime.now().astimezone()
        status, body, headers = wait(lambda: (r := get(url + "hall.json"))[0] == 200 and r, 20)
        hall = json.loads(body)
        assert hall["delay_s"] == 3600 and hall["round"] is None and hall["divisions"] == [], hall
        assert hall["page"]["files"] == ["hall.json"] and hall["versions"] == {}
        back = datetime.fromisoformat(hall["back_at"])
        assert timedelta(minutes=59) < back - started < timedelta(minutes=61), (started, back)
        assert headers["ETag"] and get(url + "hall.json", {"If-None-Match": headers["ETag"]})[0] == 304
        for name in public.FILES[1:]:
            status, _, headers = get(url + name)
            assert status == 503 and headers["Retry-After"], name  # nothing of the hall as it is now
        assert get(url)[0] == 200
        page = browser.new_page(viewport=PHONE, is_mobile=True)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.wait_for_function("() => document.getElementById('status').textContent.includes('back at')")
        assert "60 min behind" in page.text_content("#status") and errors == []
    finally:
        console.stop()
        broker.stop()


def test_a_restarted_console_with_a_delay_shows_the_folders_last_view_and_never_a_damaged_one(tmp_path):
    """[public] delay_s with a folder and a listener: the console stopped, down ten minutes (its
    files dated back), started again with a delay of a minute: the listener answers the folder's
    last delayed view, the same bytes and ETags, not "back at" (a defect: the waiting page for
    delay_s). A damaged document is refused with the whole view, in one line of the log."""
    import os

    broker = Broker(tmp_path / "broker", tables="1", stations=0).start()
    www = tmp_path / "www"
    www.mkdir()
    extra = tsh_files(tmp_path / "console", {n: (EVENT / n).read_bytes() for n in FILES}, round=3)

    def start(delay_s: int) -> tuple[ConsoleProcess, str]:
        port = free_port()
        conf = extra + f'\n[public]\nlisten = "127.0.0.1:{port}"\nfolder = "{www}"\ndelay_s = {delay_s}\nevery_s = 1\n'
        return ConsoleProcess(broker, tmp_path / "console", PASSWORD, extra=conf).start(), f"http://127.0.0.1:{port}/"

    def down_for(s: float) -> None:
        back = time.time() - s
        for p in www.iterdir():
            os.utime(p, (back, back))

    console, url = start(2)
    try:
        wait(lambda: (www / "hall.json").exists(), 20)
    finally:
        console.stop()
    files = {n: (www / n).read_bytes() for n in public.FILES}
    assert json.loads(files["hall.json"])["round"] == 3
    down_for(600)
    console, url = start(60)
    try:
        status, body, headers = wait(lambda: (r := get(url + "hall.json"))[0] == 200 and r, 20)
        assert body == files["hall.json"] and "back_at" not in json.loads(body), body[:200]
        assert get(url + "hall.json", {"If-None-Match": headers["ETag"]})[0] == 304  # a page's ETag from before the restart
        for name in public.FILES[1:]:
            status, body, _ = get(url + name)
            assert status == 200 and body == files[name], name
        assert {n: (www / n).read_bytes() for n in public.FILES} == files  # the folder keeps what it holds
    finally:
        console.stop()
    (www / "players.json").write_bytes(files["players.json"][:100])  # a torn file (a full disk, a bad copy)
    down_for(600)
    log_before = console.log_path.read_text(errors="replace")
    console, url = start(60)
    try:
        status, body, _ = wait(lambda: (r := get(url + "hall.json"))[0] == 200 and r, 20)
        hall = json.loads(body)
        assert hall["round"] is None and hall["back_at"], hall  # the waiting page: nothing of the damaged view
        for name in public.FILES[1:]:
            assert get(url + name)[0] == 503, name
        lines = [x for x in console.log_path.read_text(errors="replace")[len(log_before):].splitlines() if "public folder" in x]
        assert len(lines) == 1 and "players.json: not JSON" in lines[0], lines
        assert (www / "players.json").read_bytes() == files["players.json"][:100]  # left as it is
    finally:
        console.stop()
        broker.stop()


def test_a_stale_state_ticks_no_further_than_stale_s_past_its_sent_at(hall, browser):
    """A clock that stopped sending (its state is republished every STATE_EVERY_S while it runs) is
    not ticked for ever: the page ticks a state at most hall.json's page.stale_s past its sent_at,
    and a state of the earlier game (`frozen`) not at all. No device status is needed for it."""
    page = phone(browser, hall.url)
    stale_s = hall.doc("hall.json")["page"]["stale_s"]
    left = page.evaluate("""(stale) => {
      const sent = new Date(Date.now() - 3600e3).toISOString();
      const st = {phase: "running", running: 1, to_move: 1, sent_at: sent, frozen: false,
                  players: [{player: 1, remaining_ms: 600000, absent: false}, {player: 2, remaining_ms: 600000, absent: false}]};
      const fresh = {...st, sent_at: new Date(Date.now() - 3000).toISOString()};
      const m = (s) => app.modelOf({ state: s }, {}).state; // the card's model of a live table (tilestate.js's)
      const at = app.viewNow();
      return [app.remainingAt(m(st), st.players[0], at), app.remainingAt(m({...st, frozen: true}), st.players[0], at),
              app.remainingAt(m(fresh), fresh.players[0], at)];
    }""", stale_s)
    assert left[0] == 600000 - stale_s * 1000, left
    assert left[1] == 600000 and 596000 <= left[2] <= 597000, left
    assert page.errors == []


# Every EventSource the page opens, by URL.
COUNT_STREAMS = """(() => { window.__streams = []; const O = window.EventSource;
  window.EventSource = function (url) { __streams.push(url); return new O(url); };
  Object.assign(window.EventSource, {CONNECTING: 0, OPEN: 1, CLOSED: 2}); })()"""


def test_the_console_process_brings_the_open_tables_history_on_the_pages_one_stream(hall, browser):
    """Through `rackside hall console` as the director runs it (this module's hall: its own process,
    the event's TSH files): the director's drawer on a table fills with its history, which comes on
    the page's one event stream (POST /api/events/ID/watch), and another session cannot steer it."""
    page = chromium.login(browser, hall.console.url, PASSWORD, (1920, 1080), init_script=COUNT_STREAMS)
    page.click('.tile[data-table="1"]')
    page.wait_for_selector("#detail-history li")
    assert page.evaluate("__streams") == ["/api/events"]
    sid = page.evaluate("app.stream.id")
    status, body, _ = hall.h.call("POST", f"/api/events/{sid}/watch", {"table": 2}, {"X-CSRF-Token": hall.h.token})
    assert status == 410, body  # the module's own director session: not the page's stream
    assert page.errors == []
    page.close()
