"""Any game can be recorded from what the director has (issue 23 item 2), through `rackside hall
console` as its own process, a real Mosquitto and simulated clocks running the real clock core:

- a game whose clock sent no result (a clock that broke, a table without a clock, a lost journal)
  is recorded from the result slip (5.4.1): the form says so, a reason is required and audited, the
  result is marked "no clock record" in the store, the CSV and the page, and the time penalties
  written on the slip (5.3, 5.3.3) are typed in, bounded by the rules and checked by the console;
- a hall without TSH files records results by table (player names optional) and exports them as
  CSV; TSH's score entry says it needs TSH files, before anything is confirmed.
"""

from __future__ import annotations

import csv
import io
import json

import pytest


from support import browser as chromium
from support.console import ConsoleProcess, Http, post, sim_clocks, tsh_files
from support.wait import wait

PASSWORD = "slip-day"
GAME_S = 1500
CONFIG_TSH = "# one division\ndivision A a.t\nconfig max_rounds = 2\n"
A_T = ("Adams, Ann             1500 2 3; ; board 1 2; p12 1 2\n"
       "Baker, Bob             1400 1 4; ; board 1 1; p12 2 1\n"
       "Cole, Cy               1300 4 1; ; board 2 2; p12 1 1\n"
       "Dunn, Di               1200 3 2; ; board 2 1; p12 2 2\n")
END = [(-1600, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))]  # side 1 99 s over: 20 off (5.3)
RUNNING = [(-300, ("press", 2))]  # a clock that broke mid-game: it never sends a result


class Day:
    def __init__(self, broker, console, sim, folder, extra):
        self.broker, self.console, self.sim, self.dir, self.extra = broker, console, sim, folder, extra

    def http(self, name="Chief TD"):
        h = Http(self.console.url)
        h.token = h.login(PASSWORD, name)
        return h

    def restart(self):
        self.console.proc.kill()  # SIGKILL: nothing is flushed on the way out
        self.console.proc.wait()
        self.console = ConsoleProcess(self.broker, self.dir / "console", PASSWORD, extra=self.extra).start()


def start_day(folder, scripts: dict, tsh: bool) -> Day:
    from support.broker import Broker

    broker = Broker(folder / "broker", tables="1-3", stations=0).start()
    extra = tsh_files(folder / "console", {"config.tsh": CONFIG_TSH, "a.t": A_T.encode("latin-1")}) if tsh else ""
    console = ConsoleProcess(broker, folder / "console", PASSWORD, extra=extra).start()
    sim = sim_clocks(broker, scripts, folder / "journals", GAME_S)
    return Day(broker, console, sim, folder, extra)


def stop_day(day: Day) -> None:
    day.sim.close()
    day.console.stop()
    day.broker.stop()


@pytest.fixture(scope="module")
def tsh_day(tmp_path_factory):
    """Division A on tables 1 and 2: table 1's clock plays to the end; table 2 has no clock."""
    day = start_day(tmp_path_factory.mktemp("tshday"), {1: END}, tsh=True)
    yield day
    stop_day(day)


@pytest.fixture(scope="module")
def club_night(tmp_path_factory):
    """No TSH files: table 1's clock plays to the end, table 2's broke mid-game."""
    day = start_day(tmp_path_factory.mktemp("club"), {1: END, 2: RUNNING}, tsh=False)
    yield day
    stop_day(day)


def tile(h, n):
    snap = json.loads(h.call("GET", "/api/snapshot")[1])
    return next((t for t in snap["tables"] if t["table"] == n), None)


def csv_rows(h, query=""):
    status, raw, headers = h.call("GET", "/api/export/round.csv" + query)
    assert status == 200, raw
    return list(csv.DictReader(io.StringIO(raw.decode()))), headers


# --- a slip with no clock record ---------------------------------------------------------------


def test_a_game_without_a_clock_result_is_recorded_from_the_slip_with_a_reason(tsh_day):
    h = tsh_day.http()
    wait(lambda: (tile(h, 2) or {}).get("names") == ["Cole, Cy", "Dunn, Di"])
    # without saying there is no clock record, the console says what is missing, and how to go on
    status, out = post(h, "/api/result/2", {"slip": [400, 380]})
    assert status == 400 and "no clock result" in out["error"] and "reason" in out["error"], out
    # the reason is required (it is audited)
    status, out = post(h, "/api/result/2", {"slip": [400, 380], "no_clock": {"reason": "  ", "penalties": [0, 0]}})
    assert status == 400 and "reason" in out["error"], out
    # the penalties come from the slip, as the rules count them: whole tens, at most 100 (5.3, 5.3.3)
    for bad in ([15, 0], [110, 0], [-10, 0], ["10", 0], [10], [True, 0]):
        status, out = post(h, "/api/result/2", {"slip": [400, 380], "no_clock": {"reason": "the clock broke", "penalties": bad}})
        assert status == 400 and "penalt" in out["error"], (bad, out)
    status, out = post(h, "/api/result/2", {"slip": [400, 380], "no_clock": {"reason": "x" * 20, "penalties": [0, 0],
                                                                             "ending": "resigned"}})
    assert status == 400 and "ending" in out["error"], out
    body = {"slip": [400, 380], "no_clock": {"reason": "the clock broke", "penalties": [10, 0]}}
    status, out = post(h, "/api/result/2", body)
    assert status == 200 and out["scores"] == [390, 380] and out["penalties"] == [10, 0], out
    assert "no clock record" in out["note"] and "the clock broke" in out["note"]
    assert out.get("no_clock") == "the clock broke"
    status, out = post(h, "/api/result/2", {**body, "confirm": True})
    assert status == 200 and out["recorded"] == "slip", out

    # marked in the store (the audit), the CSV and the page; and it goes to TSH like any result
    audit = json.loads(h.call("GET", "/api/audit")[1])["audit"]
    slip = [a for a in audit if a["action"] == "slip"]
    assert len(slip) == 1 and slip[0]["reason"] == "the clock broke" and slip[0]["who"] == "Chief TD"
    assert slip[0]["after"]["no_clock"] == "the clock broke"
    rows, _ = csv_rows(h, "?division=A&round=1")
    (row,) = [r for r in rows if r["table"] == "2"]
    assert (row["clock_record"], row["penalty1"], row["score1"], row["overtime1_s"]) == ("no clock record", "10", "390", "")
    assert wait(lambda: (tile(h, 2)["final"] or {}).get("no_clock")) == "the clock broke"
    tsh_text = h.call("GET", "/api/export/tsh.txt?division=A&round=1")[1].decode()
    assert "3 390 4 380" in tsh_text

    # a correction of it needs its own reason (5.4.1(a)), not the slip's: said when it is worked
    # out, before any confirmation is asked
    for confirm in (False, True):
        status, out = post(h, "/api/result/2", {**body, "slip": [401, 380], "confirm": confirm})
        assert status == 400 and "correction needs a reason" in out["error"], out


def test_an_overtime_forfeit_written_on_the_slip_is_a_loss_with_100_off_5_3_3(tsh_day):
    h = tsh_day.http()
    wait(lambda: tile(h, 1) and tile(h, 1)["result"])
    # a game with a clock result takes the clock's penalties, never typed ones
    status, out = post(h, "/api/result/1", {"slip": [400, 380], "no_clock": {"reason": "r", "penalties": [0, 0]}})
    assert status == 400 and "clock result" in out["error"], out
    h2 = tsh_day.http("Deputy")
    status, out = post(h2, "/api/result/2", {"slip": [300, 420], "correction": "the slip was read wrong",
                                             "no_clock": {"reason": "the clock broke", "penalties": [0, 0],
                                                          "ending": "overtime forfeit", "forfeit": 2}})
    assert status == 200 and out["scores"] == [300, 320] and out["penalties"] == [0, 100], out
    assert "5.3.3" in out["note"]


def test_a_clock_result_still_records_as_before_and_is_marked_from_the_clock(tsh_day):
    h = tsh_day.http()
    wait(lambda: tile(h, 1) and tile(h, 1)["result"])
    status, out = post(h, "/api/result/1", {"slip": [410, 388], "confirm": True})
    assert status == 200 and out["scores"] == [390, 388], out
    rows, _ = csv_rows(h, "?division=A&round=1")
    (row,) = [r for r in rows if r["table"] == "1"]
    assert row["clock_record"] == "clock" and row["overtime1_s"] == "99"


# --- a hall without TSH files --------------------------------------------------------------------


def test_a_hall_without_tsh_records_by_table_and_exports_csv(club_night):
    h = club_night.http()
    wait(lambda: tile(h, 1) and tile(h, 1)["result"])
    wait(lambda: tile(h, 2) and (tile(h, 2)["state"] or {}).get("phase") == "running")
    status, out = post(h, "/api/result/1", {"slip": [410, 388], "names": ["Ann Adams", ""], "confirm": True})
    assert status == 200 and out["recorded"] == "confirm" and out["scores"] == [390, 388], out
    body = {"slip": [350, 360], "no_clock": {"reason": "the clock's buttons stopped working", "penalties": [0, 20]}}
    status, out = post(h, "/api/result/2", {**body, "confirm": True})
    assert status == 200 and out["recorded"] == "slip" and out["scores"] == [350, 340], out
    for bad in (["x" * 500, ""], "Ann", [1, 2], ["Ann"]):  # names: two texts, bounded
        status, out = post(h, "/api/result/1", {"slip": [410, 388], "names": bad})
        assert status == 400 and "names" in out["error"], (bad, out)

    rows, headers = csv_rows(h)  # no division to name: the hall's tables
    assert "tables-round1.csv" in headers["Content-Disposition"]
    assert [(r["table"], r["division"], r["name1"], r["name2"], r["score1"], r["score2"], r["clock_record"]) for r in rows] == [
        ("1", "", "Ann Adams", "", "390", "388", "clock"), ("2", "", "", "", "350", "340", "no clock record")]
    # TSH's score entry needs TSH files: it says so, and exports nothing
    status, raw, _ = h.call("GET", "/api/export/tsh.txt")
    assert status == 400 and "TSH files" in json.loads(raw)["error"]
    assert wait(lambda: tile(h, 2)["final"] and tile(h, 2)["final"]["scores"]) == [350, 340]

    # the console killed and started again: the results by table are still on their tiles
    club_night.restart()
    h = club_night.http()
    assert wait(lambda: (tile(h, 1) or {}).get("final") and tile(h, 1)["final"]["scores"]) == [390, 388]
    assert wait(lambda: (tile(h, 2) or {}).get("final") and tile(h, 2)["final"]["no_clock"])
    assert len(csv_rows(h)[0]) == 2
    # a result by table is corrected like any other, with its own reason (5.4.1(a))
    status, out = post(h, "/api/result/2", {**body, "slip": [350, 370], "confirm": True})
    assert status == 400 and "correction needs a reason" in out["error"], out
    status, out = post(h, "/api/result/2", {**body, "slip": [350, 370], "names": ["Cy", "Di"], "confirm": True,
                                            "correction": "side 2's total was added wrong"})
    assert status == 200 and out["recorded"] == "correct" and out["scores"] == [350, 350], out
    (after,) = [r for r in csv_rows(h)[0] if r["table"] == "2"]
    assert (after["name1"], after["score2"], after["clock_record"]) == ("Cy", "350", "no clock record")


def test_a_table_without_a_clock_in_a_hall_without_tsh_is_recorded_from_its_slip(club_night):
    """No clock and no TSH game: the console has never heard of table 3. Its slip makes it known
    once recorded (working it out adds no tile); a table the hall cannot have is still refused."""
    h = club_night.http()
    body = {"slip": [300, 280], "names": ["Ida", "Al"], "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]}}
    status, out = post(h, "/api/result/3", body)
    assert status == 200 and out["scores"] == [300, 280] and out["by_table"], out
    assert tile(h, 3) is None
    status, out = post(h, "/api/result/3", {"slip": [300, 280]})
    assert status == 400 and "no clock result" in out["error"], out
    assert tile(h, 3) is None
    status, out = post(h, "/api/result/3", {**body, "confirm": True})
    assert status == 200 and out["recorded"] == "slip", out
    assert tile(h, 3)["final"]["names"] == ["Ida", "Al"] and tile(h, 3)["final"]["no_clock"] == "no clock at this table"
    assert [r["clock_record"] for r in csv_rows(h)[0] if r["table"] == "3"] == ["no clock record"]
    assert post(h, "/api/result/1000", {**body, "confirm": True})[0] == 404
    club_night.restart()  # known from its result, after a restart too
    h = club_night.http()
    assert wait(lambda: (tile(h, 3) or {}).get("final"))["names"] == ["Ida", "Al"]


# --- the form, in Chromium --------------------------------------------------------------------------


pytest_browser = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")


def open_form(page, n):
    page.click(f'#tiles .tile[data-table="{n}"]')
    page.wait_for_selector("#detail-result:not([hidden])")
    return page.text_content("#result-can")


@pytest_browser
def test_the_form_says_up_front_what_it_records_for_a_game_with_no_clock_result(tsh_day, browser):
    page = chromium.login(browser, tsh_day.console.url, PASSWORD)
    page.wait_for_selector('#tiles .tile[data-table="2"]')
    # before anything is typed or confirmed: no clock result, what is needed, and how it is marked
    can = open_form(page, 2)
    assert "No clock result" in can and "no clock record" in can and "reason" in can, can
    assert page.is_visible("#no-clock-row") and page.is_visible("#slip-pen1") and not page.is_visible("#names-row")
    # no reason: the console refuses before any confirmation is asked
    page.fill("#slip1", "402")
    page.fill("#slip2", "380")
    page.fill("#no-clock-reason", "")
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#result-out >> text=reason")
    assert not page.is_visible("#confirm")
    page.fill("#no-clock-reason", "no clock at this table")
    page.fill("#slip-pen1", "0")
    page.fill("#slip-pen2", "10")
    # already recorded (the test before): the form said so up front, and a change without its
    # reason is refused before any confirmation (5.4.1(a))
    assert "Already recorded" in can and page.is_visible("#correction-row")
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#result-out >> text=correction needs a reason")
    assert not page.is_visible("#confirm")
    page.fill("#correction", "typed again from the slip")
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#confirm[open]")
    asked = page.text_content("#confirm-text")
    assert "no clock record" in asked and "402 – 370" in asked, asked
    page.click("#confirm-ok")
    page.wait_for_selector("#result-out >> text=recorded")
    page.click("#detail .close")
    page.wait_for_selector('#tiles .tile[data-table="2"] .note >> text="recorded 402–370 (no clock record)"')
    # a game with its clock result says so, and asks for no reason or penalties
    can = open_form(page, 1)
    assert "clock" in can and "No clock result" not in can, can
    assert not page.is_visible("#no-clock-row") and not page.is_visible("#slip-pen1")
    page.click("#detail .close")
    page.screenshot(path=str(tsh_day.dir / "tiles.png"))
    assert not page.errors, page.errors
    page.close()


@pytest_browser
def test_the_form_of_a_hall_without_tsh_says_it_records_by_table_and_what_tsh_needs(club_night, browser):
    page = chromium.login(browser, club_night.console.url, PASSWORD)
    page.wait_for_selector('#tiles .tile[data-table="1"]')
    can = open_form(page, 1)
    assert "No TSH game" in can and "by table" in can and "TSH files" in can, can
    assert page.is_visible("#names-row")
    page.click("#detail .close")
    page.click("#open-results")
    page.wait_for_selector("#results[open]")
    links = page.text_content("#export-links")
    assert "CSV" in links and "TSH files" in links, links
    assert page.get_attribute("#export-links a", "href").startswith("/api/export/round.csv")
    # a table with no clock and no tile: opened by number, recorded from its slip
    page.fill("#slip-table", "5")
    page.click("#slip-table-open")
    page.wait_for_selector("#detail-result:not([hidden])")
    can = page.text_content("#result-can")
    assert "No TSH game" in can and "No clock result" in can, can
    page.fill("#name1", "Eve")
    page.fill("#slip1", "333")
    page.fill("#slip2", "222")
    page.fill("#no-clock-reason", "no clock at this table")
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#confirm[open]")
    assert "by table 5 (no clock record): 333 – 222" in page.text_content("#confirm-text")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-out >> text=recorded")
    page.click("#detail .close")
    page.wait_for_selector('#tiles .tile[data-table="5"] .note >> text="recorded 333–222 (no clock record)"')
    assert page.get_attribute('#tiles .tile[data-table="5"] .s1 .name', "title") == "Eve"
    assert not page.errors, page.errors
    page.close()
