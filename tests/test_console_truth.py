"""The screen tells the truth (issue 23.4), end to end: a real Mosquitto, simulated clocks running the
real clock core, `rackside hall console` as its own process reading a TSH `tourney.js` whose
`config.tables` names TSH's own tables, and Debian's headless Chromium.

- an OFFLINE table's times stop at its clock's last state (what a spare takes over, docs/fleet.md)
  and its tile says since when;
- an earlier round shows that round's games as they ended: their final times and results, not the
  clocks' current games;
- TSH's table labels are on the tiles, the result form, its confirmation, the Results list and the CSV.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime

import pytest


from support import browser as chromium
from support.console import ConsoleProcess, Http, sim_clocks, tsh_files

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")

PASSWORD = "the-screen-tells-the-truth"
GAME_S = 1500


def player(n: int, name: str, opponents: list[int], boards: list[int], p12: list[int]) -> dict:
    return {"id": n, "name": name, "rating": 1500, "pairings": opponents, "scores": [],
            "etc": {"board": boards, "p12": p12}}


# TSH's JSON command's shape (newt={...}; player 0 undefined), as tests/data/tsh/july4-2025/tourney.js
# has it, with that event's kind of `config.tables`: TSH's labels for division A's boards 1 and 2.
PLAYERS = [player(1, "Adams, Ann", [2, 3], [1, 1], [1, 1]), player(2, "Baker, Bob", [1, 4], [1, 2], [2, 1]),
           player(3, "Cole, Cy", [4, 1], [2, 1], [1, 2]), player(4, "Dunn, Di", [3, 2], [2, 2], [2, 2])]
TOURNEY_JS = ("newt=" + json.dumps({"config": {"tables": {"A": ["A7", "A9"]}, "max_rounds": 2},
                                    "divisions": [{"name": "A", "players": ["UNDEF"] + PLAYERS}]}).replace('"UNDEF"', "undefined")
              + ";\n")

SCRIPTS = {
    1: [(-1600, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))],  # board 1: side 1 99 s over, 20 off (5.3)
    2: [(-300, ("press", 2))],  # board 2: side 1's time running; the test pulls its plug
}


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    from support.broker import Broker

    d = tmp_path_factory.mktemp("truth")
    broker = Broker(d / "broker", tables="1-2", stations=0).start()
    console = ConsoleProcess(broker, d / "console", PASSWORD, extra=tsh_files(d / "console", {"tourney.js": TOURNEY_JS})).start()
    sim = sim_clocks(broker, SCRIPTS, d / "journals", GAME_S)
    h = type("Hall", (), {})()
    h.broker, h.console, h.sim, h.dir = broker, console, sim, d
    yield h
    sim.close()
    h.console.stop()
    broker.stop()


def tile(page, n: int, part: str) -> str:
    return page.text_content(f'#tiles .tile[data-table="{n}"] {part}')


def times(page, n: int) -> tuple[str, str]:
    return tile(page, n, ".s1 .time"), tile(page, n, ".s2 .time")


def clock_text(ms: int) -> str:
    """What a clock's display shows (the page's clockText): remaining rounded up, overtime whole seconds."""
    s, sign = (-(-ms // 1000), "") if ms > 0 else ((-ms) // 1000, "-" if ms <= -1000 else "")
    return f"{sign}{s // 60}:{s % 60:02d}"


def two_redraws(page) -> None:
    """The page draws once a second (app.js `tick`): wait until it has drawn twice more."""
    second = page.evaluate("app.lastSecond")
    page.wait_for_function(f"() => app.lastSecond >= {second + 2}", timeout=5000)


def test_tsh_labels_an_offline_table_and_an_earlier_round(hall, browser):
    page = chromium.login(browser, hall.console.url, PASSWORD)
    page.wait_for_selector('#tiles .tile[data-table="1"].finished', timeout=20000)
    page.wait_for_selector('#tiles .tile[data-table="2"].running', timeout=20000)

    # TSH's own table labels (tourney.js config.tables) on every tile
    assert tile(page, 1, ".where") == "A7" and tile(page, 2, ".where") == "A9"  # TSH's "A7" says division A too
    assert page.get_attribute('#tiles .tile[data-table="1"] .where', "title") == "division A, TSH table A7"

    # ... on the result form and its confirmation
    page.click('#tiles .tile[data-table="1"]')
    page.wait_for_selector("#detail-result:not([hidden])")
    assert "TSH table A7" in page.text_content("#detail-title")
    page.fill("#slip1", "410")
    page.fill("#slip2", "388")
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#confirm[open]")
    assert "table 1 (TSH table A7): 390 – 388" in page.text_content("#confirm-text")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-out >> text=recorded 390 – 388")
    page.click("#detail .close")

    # ... in the Results list and the CSV export
    page.click("#open-results")
    page.wait_for_selector("#results[open]")
    first = "#results-table tbody tr:first-child"
    assert (page.text_content(f'{first} td[data-key="table"]'), page.text_content(f'{first} td[data-key="tsh_table"]')) == ("1", "A7")
    page.click("#results button[value=close]")
    h = Http(hall.console.url)
    token = h.login(PASSWORD, "Chief TD")
    rows = list(csv.DictReader(io.StringIO(h.call("GET", "/api/export/round.csv?division=A&round=1")[1].decode())))
    assert [(r["table"], r["tsh_table"]) for r in rows] == [("1", "A7")]

    # an offline table's times stop at its clock's last state, and its tile says since when
    page.wait_for_function("() => /^\\d+:\\d\\d$/.test(document.querySelector('#tiles .tile[data-table=\"2\"] .s1 .time').textContent)")
    hall.sim.act(2, ("offline",))
    page.wait_for_selector('#tiles .tile[data-table="2"].offline', timeout=5000)
    last = json.loads(h.call("GET", "/api/table/2")[1])["tile"]["state"]  # the retained state a spare takes over
    frozen = times(page, 2)
    assert frozen == tuple(clock_text(p["remaining_ms"]) for p in sorted(last["players"], key=lambda p: p["player"]))
    two_redraws(page)
    assert times(page, 2) == frozen
    two_redraws(page)
    assert times(page, 2) == frozen
    since = page.evaluate(f"new Date(Date.parse({json.dumps(last['sent_at'])})).toTimeString().slice(0, 8)")
    assert tile(page, 2, ".note") == f"offline since {since}"
    assert datetime.strptime(since, "%H:%M:%S")

    # round 1's games as they ended: table 1's final times, while its clock plays round 2's game
    ended = json.loads(h.call("GET", "/api/table/1")[1])["tile"]["result"]
    final_times = tuple(clock_text(p["remaining_ms"]) for p in sorted(ended["players"], key=lambda p: p["player"]))
    assert times(page, 1) == final_times and final_times[0].startswith("-1:3")  # 99 s over
    assert h.call("POST", "/api/round", {"number": 2}, {"X-CSRF-Token": token})[0] == 200
    page.wait_for_selector('#tiles .tile[data-table="1"] .s1 .name[title="Adams, Ann"]')
    page.wait_for_selector('#tiles .tile[data-table="1"] .s2 .name[title="Cole, Cy"]')
    assert tile(page, 1, ".where") == "A7"
    status, body, _ = h.call("POST", "/api/command", {"cmd": "new_game", "tables": [1]}, {"X-CSRF-Token": token})
    assert status == 200, body
    page.wait_for_function("() => document.querySelector('#tiles .tile[data-table=\"1\"] .s1 .time').textContent === '25:00'")
    hall.sim.act(1, ("press", 2))  # round 2's game runs
    page.wait_for_selector('#tiles .tile[data-table="1"].running')
    assert "recorded" not in tile(page, 1, ".note")

    assert h.call("POST", "/api/round", {"number": 1}, {"X-CSRF-Token": token})[0] == 200
    page.wait_for_selector('#tiles .tile[data-table="1"] .s2 .name[title="Baker, Bob"]')
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="recorded 390–388"')
    assert page.get_attribute('#tiles .tile[data-table="1"]', "data-cls") == "finished"
    assert times(page, 1) == final_times
    two_redraws(page)
    assert times(page, 1) == final_times  # round 1's game is over: nothing of round 2's ticks here
    # and its detail offers round 1's clock result, not round 2's game
    page.click('#tiles .tile[data-table="1"]')
    page.wait_for_selector("#detail-result:not([hidden])")
    assert "overtime 99 s, penalty 20" in page.text_content("#detail-clock-result")
    page.click("#detail .close")

    # back to round 2: the clock's current game, ticking
    assert h.call("POST", "/api/round", {"number": 2}, {"X-CSRF-Token": token})[0] == 200
    page.wait_for_selector('#tiles .tile[data-table="1"] .s2 .name[title="Cole, Cy"]')
    page.wait_for_selector('#tiles .tile[data-table="1"].running')
    running = tile(page, 1, ".s1 .time")
    page.wait_for_function("t => document.querySelector('#tiles .tile[data-table=\"1\"] .s1 .time').textContent !== t",
                           arg=running, timeout=4000)
    assert not page.errors, page.errors
    page.close()

    # the console killed and started again: round 1's final times come from the results store
    hall.console.proc.kill()
    hall.console.proc.wait()
    hall.console = ConsoleProcess(hall.broker, hall.dir / "console", PASSWORD,
                                  extra='tsh = ["tsh/tourney.js"]\nround = 1\n').start()
    h = Http(hall.console.url)
    token = h.login(PASSWORD)
    assert h.call("POST", "/api/round", {"number": 1}, {"X-CSRF-Token": token})[0] == 200
    page = chromium.login(browser, hall.console.url, PASSWORD)
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="recorded 390–388"', timeout=20000)
    assert times(page, 1) == final_times
    assert page.get_attribute('#tiles .tile[data-table="1"]', "data-cls") == "finished"
    assert not page.errors, page.errors
    page.close()
