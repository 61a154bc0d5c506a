"""A tournament day through the real `rackside hall console` process (issue 23, "Done when"): a real
Mosquitto, simulated clocks running the real clock core (hall/console/demohall/sim.py, answering `resend`
from their journals as a clock does), TSH files, and Debian's headless Chromium.

The hall with TSH (division A, six players, two rounds on tables 1 to 3):

- table 1's clock plays round 1 to the end (side 1 99 s over: 20 off, 5.3): recorded from the clock;
- table 2's clock dies mid-game: its tile goes OFFLINE with its times frozen at its last state,
  and its game is recorded from the slip with no clock record (5.4.1), a reason given;
- table 3 is still playing round 1 when the director moves to round 2; its game ends in round 2,
  the console is SIGKILLed mid-round, and once started again asks the clock to resend the game
  (its state says it ended, the console has none of its events): the round-1 result it brings is
  never offered for round 2's players, and is recorded for round 1's once round 1 is on screen;
- round 2 is played and recorded (a clock result, a slip for the dead clock's table).

Every result is checked in the store's CSV and in TSH's score entry (the model of TSH's add-score
state, tests/support/tshmodel.py, ends each round with every player scored), and every tile on
the page says what is true at each step.

A hall without TSH files (a club night, a second console and broker) records by table, across a
round switch, and says what TSH's export needs.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from rackside.hall.console.scoring import tsh

from support import browser as chromium
from support.console import ConsoleProcess, Http, post, sim_clocks, tsh_files
from support.tshmodel import Tsh
from support.wait import wait

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")

PASSWORD = "a-day-at-the-hall"
GAME_S = 1500
CONFIG_TSH = "division A a.t\nconfig max_rounds = 2\n"
# round 1: Adams v Baker (table 1), Cole v Dunn (2), Eng v Fox (3); round 2: Adams v Cole (1),
# Baker v Eng (2), Dunn v Fox (3)
A_T = ("Adams, Ann   1500 2 3; ; board 1 1; p12 1 1\n"
       "Baker, Bob   1450 1 5; ; board 1 2; p12 2 1\n"
       "Cole, Cy     1400 4 1; ; board 2 1; p12 1 2\n"
       "Dunn, Di     1350 3 6; ; board 2 3; p12 2 1\n"
       "Eng, Ed      1300 6 2; ; board 3 2; p12 1 2\n"
       "Fox, Flo     1250 5 4; ; board 3 3; p12 2 2\n")
SCRIPTS = {
    1: [(-1600, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))],  # side 1 99 s over: 20 off (5.3)
    2: [(-300, ("press", 2))],  # the clock that dies mid-game
    3: [(-1200, ("press", 2))],  # still playing round 1 when the director moves on
}


def clock_text(ms: int) -> str:
    """What a clock's display shows (the page's clockText): remaining rounded up, overtime whole seconds."""
    s, sign = (-(-ms // 1000), "") if ms > 0 else ((-ms) // 1000, "-" if ms <= -1000 else "")
    return f"{sign}{s // 60}:{s % 60:02d}"


def shown_times(page, n: int) -> tuple[str, str]:
    return (page.text_content(f'#tiles .tile[data-table="{n}"] .s1 .time'),
            page.text_content(f'#tiles .tile[data-table="{n}"] .s2 .time'))


def note(page, n: int) -> str:
    return page.text_content(f'#tiles .tile[data-table="{n}"] .note')


def two_redraws(page) -> None:
    """The page draws once a second (app.js `tick`): wait until it has drawn twice more."""
    second = page.evaluate("app.lastSecond")
    page.wait_for_function(f"() => app.lastSecond >= {second + 2}", timeout=5000)


def times_of(players: list[dict]) -> tuple[str, str]:
    return tuple(clock_text(p["remaining_ms"]) for p in sorted(players, key=lambda p: p["player"]))


class Hall:
    def __init__(self, folder, scripts: dict, with_tsh: bool, tables: str):
        from support.broker import Broker

        self.dir = folder
        self.broker = Broker(folder / "broker", tables=tables, stations=0).start()
        self.extra = tsh_files(folder / "console", {"config.tsh": CONFIG_TSH, "a.t": A_T}) if with_tsh else ""
        self.console = ConsoleProcess(self.broker, folder / "console", PASSWORD, extra=self.extra).start()
        self.sim = sim_clocks(self.broker, scripts, folder / "journals", GAME_S)
        self.h = self.http()

    def http(self) -> Http:
        h = Http(self.console.url)
        h.token = h.login(PASSWORD, "Chief TD")
        return h

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        return post(self.h, path, body)

    def round(self, number: int) -> None:
        status, out = self.post("/api/round", {"number": number})
        assert status == 200 and out["number"] == number, out

    def command(self, cmd: str, table: int) -> None:
        status, out = self.post("/api/command", {"cmd": cmd, "tables": [table]})
        assert status == 200, out

    def tile(self, n: int) -> dict:
        status, body, _ = self.h.call("GET", f"/api/table/{n}")
        return json.loads(body)["tile"] if status == 200 else {}

    def history(self, n: int) -> list[dict]:
        return json.loads(self.h.call("GET", f"/api/table/{n}")[1])["history"]

    def csv(self, query: str) -> list[dict]:
        status, raw, _ = self.h.call("GET", "/api/export/round.csv" + query)
        assert status == 200, raw
        return list(csv.DictReader(io.StringIO(raw.decode())))

    def sigkill(self) -> None:
        self.console.proc.kill()  # nothing is flushed on the way out
        self.console.proc.wait(10)
        self.console = ConsoleProcess(self.broker, self.dir / "console", PASSWORD, extra=self.extra).start()
        self.h = self.http()

    def close(self) -> None:
        self.sim.close()
        self.console.stop()
        self.broker.stop()


def record_in_form(page, n: int, slip: tuple[int, int], *, reason: str | None = None) -> str:
    """Open table n's result form, type the slip (and, with no clock result, the reason), confirm;
    returns what the form said up front."""
    page.click(f'#tiles .tile[data-table="{n}"]')
    page.wait_for_selector("#detail-result:not([hidden])")
    can = page.text_content("#result-can")
    page.fill("#slip1", str(slip[0]))
    page.fill("#slip2", str(slip[1]))
    if reason is not None:
        page.fill("#no-clock-reason", reason)
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#confirm[open]")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-out >> text=recorded")
    page.click("#detail .close")
    return can


@pytest.fixture
def tsh_hall(tmp_path):
    hall = Hall(tmp_path, SCRIPTS, with_tsh=True, tables="1-3")
    yield hall
    hall.close()


def test_a_day_with_a_dead_clock_a_sigkill_a_resend_and_round_switches(tsh_hall, browser):
    hall = tsh_hall
    page = chromium.login(browser, hall.console.url, PASSWORD)
    page.wait_for_selector('#tiles .tile[data-table="1"].finished', timeout=20000)
    page.wait_for_selector('#tiles .tile[data-table="2"].running', timeout=20000)
    page.wait_for_selector('#tiles .tile[data-table="3"].running', timeout=20000)

    # table 1: the clock's result, recorded from the slip: 410 less the clock's 20 (5.3)
    can = record_in_form(page, 1, (410, 388))
    assert "From the clock's result" in can, can
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="recorded 390–388"')
    round1_final_times = times_of(hall.tile(1)["result"]["players"])
    assert round1_final_times[0].startswith("-1:3")  # 99 s over

    # table 2: its clock dies mid-game. The tile freezes at the clock's last state and says since when
    page.wait_for_function("() => /^\\d+:\\d\\d$/.test(document.querySelector('#tiles .tile[data-table=\"2\"] .s1 .time').textContent)")
    hall.sim.act(2, ("offline",))
    page.wait_for_selector('#tiles .tile[data-table="2"].offline', timeout=10000)
    last = hall.tile(2)["state"]
    frozen = shown_times(page, 2)
    assert frozen == times_of(last["players"])
    two_redraws(page)
    assert shown_times(page, 2) == frozen
    since = page.evaluate(f"new Date(Date.parse({json.dumps(last['sent_at'])})).toTimeString().slice(0, 8)")
    assert note(page, 2) == f"offline since {since}"
    # ... and its game is recorded from the slip, with no clock record and the reason
    can = record_in_form(page, 2, (350, 360), reason="the clock died mid-game")
    assert "No clock result" in can and "no clock record" in can, can
    assert hall.tile(2)["final"]["no_clock"] == "the clock died mid-game"
    assert note(page, 2) == f"offline since {since}"  # still offline: its times are still as of then

    # round 2: table 3 is still on its round-1 game; table 1 begins round 2's
    hall.round(2)
    page.wait_for_selector('#tiles .tile[data-table="1"] .s2 .name[title="Cole, Cy"]')
    page.wait_for_selector('#tiles .tile[data-table="3"] .s1 .name[title="Dunn, Di"]')
    page.wait_for_selector('#tiles .tile[data-table="3"] .note >> text="clock on A round 1\'s game"')
    assert hall.tile(3)["earlier"] is True and hall.tile(3)["state"] is None  # nothing of round 1's game on round 2's tile
    hall.command("new_game", 1)
    page.wait_for_function("() => document.querySelector('#tiles .tile[data-table=\"1\"] .s1 .time').textContent === '25:00'")
    hall.sim.act(1, ("press", 2))
    page.wait_for_selector('#tiles .tile[data-table="1"].running')
    assert "recorded" not in note(page, 1)

    # table 3's round-1 game ends while round 2 is on screen: not round 2's players' result
    hall.sim.act(3, ("end",))
    wait(lambda: any(e.get("kind") == "result" for e in hall.history(3)))
    assert hall.tile(3)["result"] is None and hall.tile(3)["clock_on"] == {"division": "A", "round": 1}
    page.click('#tiles .tile[data-table="3"]')
    page.wait_for_selector("#detail-result:not([hidden])")
    assert "This table's clock is on A round 1's game" in page.text_content("#result-can")
    page.click("#detail .close")
    status, out = hall.post("/api/result/3", {"slip": [420, 300], "confirm": True})
    assert status == 400 and "no clock result" in out["error"] and "round 1" in out["error"], out
    page.close()

    # the console is SIGKILLed mid-round (table 1's round-2 game running) and started again
    hall.sigkill()
    # table 3's state says its game ended; the console has none of its events: it asks the clock
    result = wait(lambda: next((e for e in hall.history(3) if e.get("kind") == "result"), None), timeout=30)
    asked = [json.loads(line) for line in (hall.console.home / "console-commands.jsonl").read_text().splitlines()]
    assert {"table": 3, "cmd": "resend", "game": "game-000001", "from_seq": 1} in [
        {k: c.get(k) for k in ("table", "cmd", "game", "from_seq")} for c in asked], asked[-3:]
    assert result["game"] == "game-000001" and result["at"] is None  # from the journal: a resend's, not the original
    wait(lambda: hall.tile(3).get("clock_on") == {"division": "A", "round": 1})
    assert hall.tile(3)["result"] is None and hall.tile(3)["names"] == ["Dunn, Di", "Fox, Flo"]  # round 2's: not theirs
    wait(lambda: (hall.tile(1).get("state") or {}).get("phase") == "running")
    assert hall.tile(1)["earlier"] is False and hall.tile(1)["final"] is None

    # back to round 1: each table shows its round-1 game as it ended, and table 3's result is offered
    page = chromium.login(browser, hall.console.url, PASSWORD)
    hall.round(1)
    page.wait_for_selector('#tiles .tile[data-table="3"] .s1 .name[title="Eng, Ed"]')
    page.wait_for_selector('#tiles .tile[data-table="3"].finished')
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="recorded 390–388"')
    assert shown_times(page, 1) == round1_final_times
    two_redraws(page)
    assert shown_times(page, 1) == round1_final_times  # round 2's game ticks on its clock, not here
    assert page.get_attribute('#tiles .tile[data-table="1"]', "data-cls") == "finished"
    can = record_in_form(page, 3, (420, 300))
    assert "From the clock's result" in can, can
    page.wait_for_selector('#tiles .tile[data-table="3"] .note >> text="recorded 420–300"')
    assert page.get_attribute('#tiles .tile[data-table="2"]', "data-cls") == "offline"

    # round 2 is played and recorded
    hall.round(2)
    page.wait_for_selector('#tiles .tile[data-table="3"] .s1 .name[title="Dunn, Di"]')
    page.wait_for_selector('#tiles .tile[data-table="1"].running')
    hall.sim.act(1, ("end",))
    page.wait_for_selector('#tiles .tile[data-table="1"].finished')
    record_in_form(page, 1, (400, 380))
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="recorded 400–380"')
    record_in_form(page, 2, (300, 310), reason="no clock at this table: its clock died in round 1")
    hall.command("new_game", 3)
    wait(lambda: (hall.tile(3).get("state") or {}).get("game") == "game-000002")
    hall.sim.act(3, ("press", 2))
    hall.sim.act(3, ("end",))
    page.wait_for_selector('#tiles .tile[data-table="3"].finished')
    record_in_form(page, 3, (377, 388))
    page.wait_for_selector('#tiles .tile[data-table="3"] .note >> text="recorded 377–388"')
    assert not page.errors, page.errors
    page.screenshot(path=str(hall.dir / "round2.png"))
    page.close()

    # every result right: the CSV of each round, and TSH's score entry leaves every player scored
    def rows(rnd):
        return [(r["table"], r["name1"], r["name2"], r["score1"], r["score2"], r["clock_record"])
                for r in hall.csv(f"?division=A&round={rnd}")]
    assert rows(1) == [("1", "Adams, Ann", "Baker, Bob", "390", "388", "clock"),
                       ("2", "Cole, Cy", "Dunn, Di", "350", "360", "no clock record"),
                       ("3", "Eng, Ed", "Fox, Flo", "420", "300", "clock")]
    assert rows(2) == [("1", "Adams, Ann", "Cole, Cy", "400", "380", "clock"),
                       ("2", "Baker, Bob", "Eng, Ed", "300", "310", "no clock record"),
                       ("3", "Dunn, Di", "Fox, Flo", "377", "388", "clock")]
    model = Tsh.load([tsh.parse_t(A_T, "A")], {})
    for rnd in (1, 2):
        status, raw, _ = hall.h.call("GET", f"/api/export/tsh.txt?division=A&round={rnd}")
        assert status == 200, raw
        assert [str(m) for m in model.feed(raw.decode()) if m.error] == [] and model.unscored("A", rnd) == []
    assert [p.scores for p in model.division("A").values()] == [[390, 400], [388, 300], [350, 380], [360, 377],
                                                                [420, 310], [300, 388]]
    audit = json.loads(hall.h.call("GET", "/api/audit")[1])["audit"]
    assert sorted(a["action"] for a in audit) == ["confirm"] * 4 + ["slip"] * 2
    # and every tile of round 2 true, also in the snapshot a page starts from
    tiles = {t["table"]: t for t in json.loads(hall.h.call("GET", "/api/snapshot")[1])["tables"]}
    assert {n: (t["names"], t["final"]["scores"], t["final"]["no_clock"] != "") for n, t in tiles.items()} == {
        1: (["Adams, Ann", "Cole, Cy"], [400, 380], False), 2: (["Baker, Bob", "Eng, Ed"], [300, 310], True),
        3: (["Dunn, Di", "Fox, Flo"], [377, 388], False)}


@pytest.fixture
def club_night(tmp_path):
    hall = Hall(tmp_path, {1: SCRIPTS[1]}, with_tsh=False, tables="1-2")
    yield hall
    hall.close()


def test_a_club_night_without_tsh_records_by_table_across_a_round_switch(club_night, browser):
    hall = club_night
    page = chromium.login(browser, hall.console.url, PASSWORD)
    page.wait_for_selector('#tiles .tile[data-table="1"].finished', timeout=20000)
    page.click('#tiles .tile[data-table="1"]')
    page.wait_for_selector("#detail-result:not([hidden])")
    can = page.text_content("#result-can")
    assert "No TSH game" in can and "by table" in can and "TSH files" in can, can
    page.fill("#name1", "Ann")
    page.fill("#name2", "Bob")
    page.fill("#slip1", "410")
    page.fill("#slip2", "388")
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#confirm[open]")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-out >> text=recorded")
    page.click("#detail .close")
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="recorded 390–388"')
    # table 2 has no clock: opened by number, recorded from its slip
    page.click("#open-results")
    page.wait_for_selector("#results[open]")
    assert "TSH files" in page.text_content("#export-links")
    page.fill("#slip-table", "2")
    page.click("#slip-table-open")
    page.wait_for_selector("#detail-result:not([hidden])")
    page.fill("#slip1", "333")
    page.fill("#slip2", "222")
    page.fill("#no-clock-reason", "no clock at this table")
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#confirm[open]")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-out >> text=recorded")
    page.click("#detail .close")
    page.wait_for_selector('#tiles .tile[data-table="2"] .note >> text="recorded 333–222 (no clock record)"')

    # round 2: table 1's clock is still on round 1's game, and says so; nothing of round 1 is round 2's
    hall.round(2)
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="clock on round 1\'s game"')
    assert hall.tile(1)["final"] is None and hall.tile(1)["result"] is None
    status, out = hall.post("/api/result/1", {"slip": [1, 2]})
    assert status == 400 and "round 1" in out["error"], out
    hall.command("new_game", 1)
    wait(lambda: (hall.tile(1).get("state") or {}).get("game") == "game-000002")
    hall.sim.act(1, ("press", 2))
    hall.sim.act(1, ("end",))
    page.wait_for_selector('#tiles .tile[data-table="1"].finished')
    status, out = hall.post("/api/result/1", {"slip": [300, 301], "names": ["Cy", "Di"], "confirm": True})
    assert status == 200 and out["recorded"] == "confirm" and out["round"] == 2, out
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="recorded 300–301"')
    assert not page.errors, page.errors
    page.close()

    def rows(rnd):
        return [(r["table"], r["name1"], r["name2"], r["score1"], r["score2"], r["clock_record"])
                for r in hall.csv(f"?by=table&round={rnd}")]
    assert rows(1) == [("1", "Ann", "Bob", "390", "388", "clock"), ("2", "", "", "333", "222", "no clock record")]
    assert rows(2) == [("1", "Cy", "Di", "300", "301", "clock")]
    status, raw, _ = hall.h.call("GET", "/api/export/tsh.txt")
    assert status == 400 and "TSH files" in json.loads(raw)["error"]
