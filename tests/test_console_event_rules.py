"""The event's rules set once, at the console (issue 38), through the real console, three real
simulated clocks (firmware.cli.Clock with its hall output, tests/support/hallclock.py) on a real
broker, and a station (`rackside hall station`'s publisher beside a real kiosk under SDL's dummy
driver): an event at 20 minutes a player and 5 points a minute. Each clock's clock.toml says WESPA's
10 points a minute and 1:00, the fallback of a clock with no hall; every game the console starts runs
the event's rules, a clock offline while they change gets them when it comes back, penalties and a
slip with no clock record are reckoned with them, and a change of rules mid-round leaves the games in
progress as they were."""

from __future__ import annotations

import csv
import io
import json
import time

import pytest

from rackside.firmware.requests import RULES_NOTICE
from rackside.hall.console.shell.auth import hash_password
from rackside.hall.console.shell.config import ConsoleConfig, load_credentials
from rackside.hall.console.rules import rulespage
from rackside.hall.console.demohall.demo import demo_t_file, free_port
from rackside.hall.console.shell.serve import ConsoleServer
from rackside.hall.device.station import StationPublisher
from rackside.hall.net import config as hall_config
from rackside.hall.wire import topics
from rackside.hall.wire.eventrules import from_table

from support.broker import Recorder
from support.browser import have_chromium, login
from support.console import Http
from support.hallclock import LiveClock, clock_config
from support.kiosk_rig import make_app
from support.wait import wait

TABLES = (1, 2, 3)
PASSWORD = "pw-for-the-test"
EVENT = {"game_time": "20:00", "penalty_per_minute": 5, "challenge_rule": "10-per-turn"}


@pytest.fixture
def broker(make_broker):
    return make_broker(tables="1-3", stations=1)


class Hall:
    """The console (started again with other rules when asked, on the same state) and the clocks."""

    def __init__(self, broker, tmp_path) -> None:
        self.broker, self.tmp = broker, tmp_path
        (tmp_path / "a.t").write_text(demo_t_file(list(TABLES)))
        self.server = None
        self.clocks: dict[int, LiveClock] = {}

    def console(self, event: dict) -> "Hall":
        if self.server is not None:
            self.server.stop()
        user, pw = load_credentials(self.broker.credentials("director"))
        cfg = ConsoleConfig(hall=self.broker.hall, url=self.broker.url, username=user, mqtt_password=pw,
                            password_hash=hash_password(PASSWORD), listen_port=free_port(), tsh=[self.tmp / "a.t"],
                            state_dir=self.tmp / "console", event=from_table(event))
        (self.tmp / "console").mkdir(exist_ok=True)
        self.server = ConsoleServer(cfg).start()
        self.http = Http(self.server.url)
        self.token = self.http.login(PASSWORD)
        return self

    @property
    def tables(self):
        return self.server.console.state.tables

    def post(self, path: str, body: dict):
        status, data, _ = self.http.call("POST", path, body, {"X-CSRF-Token": self.token})
        assert status == 200, data
        return json.loads(data)

    def get(self, path: str):
        status, data, _ = self.http.call("GET", path)
        assert status == 200, data
        return data

    def start_clock(self, n: int) -> LiveClock:
        self.clocks[n] = LiveClock(clock_config(self.tmp / f"clock-{n}.toml", self.broker, n, game_time="1:00"), self.tmp / f"state-{n}")
        wait(lambda: n in self.tables and self.tables[n].status == "online" and self.tables[n].state)
        return self.clocks[n]

    def stop_clock(self, n: int) -> None:
        self.clocks.pop(n).close()
        wait(lambda: self.tables[n].status == "offline")

    def new_games(self) -> dict[int, str]:
        sent = self.post("/api/command", {"cmd": "new_game", "tables": list(TABLES)})["sent"]
        return {x["table"]: x["id"] for x in sent}

    def ack(self, n: int, cid: str) -> dict:
        return wait(lambda: next((x for x in self.tables[n].history if x["kind"] == "ack" and (x["command"] or {}).get("id") == cid), None),
                    timeout=30)

    def rules(self, n: int) -> dict:
        return self.tables[n].state["rules"]

    def play_into_overtime(self, n: int) -> None:
        """Side 1's time runs; a director's adjustment leaves it 0.3 s; the game ends 1.5 s later:
        more than a second of overtime, one minute or part thereof (5.3)."""
        live = self.clocks[n]
        if self.tables[n].state["phase"] != "running":
            live.tap("right")
            wait(lambda: self.tables[n].state["phase"] == "running")
        self.post("/api/command", {"cmd": "adjust", "tables": [n], "player": 1, "remaining_ms": 300, "reason": "test"})
        wait(lambda: [x for x in self.tables[n].history if x["kind"] == "ack" and (x["command"] or {}).get("cmd") == "adjust"])
        live.command("end", at_ns=time.monotonic_ns() + 1_500_000_000)
        wait(lambda: self.tables[n].result)

    def csv_row(self, n: int) -> list[str]:
        rows = list(csv.reader(io.StringIO(self.get("/api/export/round.csv").decode())))
        return next(r for r in rows[1:] if r[2] == str(n))

    def ready(self) -> dict:
        return json.loads(self.get("/api/ready"))

    def close(self) -> None:
        for live in self.clocks.values():
            live.close()
        if self.server is not None:
            self.server.stop()


def header_config(live: LiveClock) -> dict:
    """The game-start record: the journal's header, with the rules the game runs under."""
    return json.loads(live.clock.store.journal_path.read_text().splitlines()[0])["config"]


@pytest.fixture
def hall(broker, tmp_path):
    h = Hall(broker, tmp_path)
    yield h
    h.close()


def test_an_event_at_20_minutes_and_5_points_a_minute_runs_end_to_end(hall, broker, tmp_path, monkeypatch):
    hall.console(EVENT)
    app, _ = make_app(tmp_path / "kiosk", monkeypatch)
    station = StationPublisher(hall_config.from_table({"url": broker.url, "credentials": str(broker.credentials("station-1"))}, "station"),
                               tmp_path / "kiosk" / "log.jsonl", tmp_path / "station-outbox.sqlite",
                               settings_path=tmp_path / "kiosk" / "station.json").start()
    try:
        for n in TABLES:
            hall.start_clock(n)
        # readiness: every clock's game runs its clock.toml's rules (WESPA's 10 a minute), not the event's
        v = hall.ready()
        assert v["event_rules"]["penalty_per_minute"] == 5 and v["event_rules"]["game_time"] == "20:00"
        assert all(r["rules_differ"] for r in v["tables"]), v["tables"]
        assert [(g["event"], g["tables"]) for g in v["rules_groups"]] == [(False, [1, 2, 3])]
        hall.stop_clock(3)  # offline while the event's rules go out
        sent = hall.new_games()
        for n in (1, 2):
            assert hall.ack(n, sent[n])["ok"] is True
            wait(lambda: hall.rules(n)["penalty_per_minute"] == 5)
            assert hall.rules(n)["game_time_ms"] == 20 * 60_000 and hall.tables[n].state["players"][0]["remaining_ms"] == 20 * 60_000
            config = header_config(hall.clocks[n])  # journalled: the game-start record holds the event's rules
            assert (config["game_time_s"], config["penalty_per_minute"], config["forfeit_overtime_ms"]) == (1200, 5, 600_000)
            # the clock shows, before the first press, that its game runs the hall's rules and not its card's
            assert hall.clocks[n].runner.requests.notice[:2] == RULES_NOTICE
        live3 = hall.start_clock(3)  # back: the new game sent while it was away starts with the event's rules
        assert hall.ack(3, sent[3])["ok"] is True
        wait(lambda: hall.rules(3)["penalty_per_minute"] == 5 and hall.rules(3)["game_time_ms"] == 20 * 60_000)
        assert header_config(live3)["penalty_per_minute"] == 5
        v = hall.ready()
        assert not any(r["rules_differ"] for r in v["tables"]) and [(g["event"], g["tables"]) for g in v["rules_groups"]] == [(True, [1, 2, 3])]
        # the station judges with the event's challenge rule (3.10.15), taken at its idle screen
        wait(lambda: app.step() or app.station.rule_value == "10-per-turn")
        assert app.service.rule.value == "10-per-turn"
        # a clock's penalty: 5 points for a minute or part thereof, recorded and exported as such
        hall.play_into_overtime(1)
        assert hall.tables[1].result["players"][0]["penalty"] == 5
        hall.post("/api/result/1", {"slip": [300, 280], "confirm": True})
        row = hall.csv_row(1)
        assert (row[6], row[8]) == ("5", "295"), row
        # a slip with no clock record: 15 points is three minutes at this event (refused at 10 a minute)
        out = hall.post("/api/result/2", {"slip": [400, 380], "no_clock": {"reason": "the clock broke", "penalties": [15, 0]},
                                          "confirm": True})
        assert out["scores"] == [385, 380]
        status, body, _ = hall.http.call("POST", "/api/result/3", {"slip": [400, 380], "confirm": True, "no_clock": {
            "reason": "x", "penalties": [0, 12]}}, {"X-CSRF-Token": hall.token})
        assert status == 400 and "5 points a minute or part thereof of overtime, 0 to 50" in body.decode()
        assert hall.csv_row(2)[6:9][0] == "15"
        tsh = hall.get("/api/export/tsh.txt").decode()
        assert " 295" in tsh and " 385" in tsh, tsh
        # the page's fallback rules are the event's
        snap = json.loads(hall.get("/api/snapshot"))
        assert snap["rules"]["penalty_per_minute"] == 5 and snap["event_rules"]["challenge_rule"] == "10-per-turn"
    finally:
        station.close()
        app.shutdown()


def test_rules_changed_mid_round_leave_the_games_in_progress_as_they_were(hall):
    hall.console(EVENT)
    for n in TABLES:
        hall.start_clock(n)
    sent = hall.new_games()
    for n in TABLES:
        assert hall.ack(n, sent[n])["ok"] is True
        wait(lambda: hall.rules(n)["penalty_per_minute"] == 5)
    for n in (1, 2):  # their games begin
        hall.clocks[n].tap("right")
        wait(lambda: hall.tables[n].state["phase"] == "running")
    hall.stop_clock(3)
    hall.console({**EVENT, "game_time": "22:00", "penalty_per_minute": 3})  # the director changes [event] and restarts
    audit = json.loads(hall.get("/api/audit"))["audit"]  # the change is audited
    assert any(a["action"] == "rules" and "3 points a minute" in a["reason"] for a in audit), audit
    assert hall.ready()["event_rules"]["penalty_per_minute"] == 3
    sent = hall.new_games()
    for n in (1, 2):  # refused by the clock: a game in progress keeps its rules (never changed under the players)
        a = hall.ack(n, sent[n])
        assert a["ok"] is False and "running" in a["reason"] and "next game runs these" in a["reason"], a
        assert (hall.rules(n)["penalty_per_minute"], hall.rules(n)["game_time_ms"]) == (5, 20 * 60_000)
        assert header_config(hall.clocks[n])["penalty_per_minute"] == 5
    hall.start_clock(3)  # away while the rules changed: its next game runs the new ones
    assert hall.ack(3, sent[3])["ok"] is True
    wait(lambda: hall.rules(3)["penalty_per_minute"] == 3 and hall.rules(3)["game_time_ms"] == 22 * 60_000)
    groups = [(g["event"], g["tables"]) for g in hall.ready()["rules_groups"]]
    assert groups == [(True, [3]), (False, [1, 2])], groups
    # table 1's game, begun under 5 a minute, ends under them: its penalty is its own rules'
    hall.play_into_overtime(1)
    assert hall.tables[1].result["players"][0]["penalty"] == 5
    hall.post("/api/result/1", {"slip": [300, 280], "confirm": True})
    assert hall.csv_row(1)[6] == "5"
    # its next game, started from the clock's own menu (rSEt, yES), runs the rules the refused new game brought
    live = hall.clocks[1]
    live.command("menu")
    for button in ("right", "neutralise", "left", "neutralise"):
        live.tap(button)
    wait(lambda: hall.tables[1].state["phase"] == "setup" and hall.rules(1)["penalty_per_minute"] == 3)
    assert hall.rules(1)["game_time_ms"] == 22 * 60_000 and header_config(live)["penalty_per_minute"] == 3


@pytest.mark.skipif(not have_chromium(), reason="needs Debian's chromium")
def test_the_director_edits_the_penalty_on_the_rules_page_and_the_next_new_game_runs_it(hall, broker, browser):
    """Issue 38, item 1 ("editable on the page before the first round, audited after"), in Chromium:
    the rules page (the console's link) shows the event's rules, refuses 500 points a minute with the
    console's one line, takes 5; the stations' retained rules say 5, the next new game's clock runs 5.
    Once that game has begun a change needs a confirmation and a reason, and the game keeps its 5."""
    hall.console({})  # console.toml's [event]: WESPA's, 10 points a minute
    hall.start_clock(1)
    rules_topic = Recorder(broker, topics.rules(broker.hall))
    page = login(browser, hall.server.url, PASSWORD)
    try:
        page.click("#open-rules")
        page.wait_for_selector("body.rules-page[data-ready='1']")
        penalty = page.locator("#rule-penalty_per_minute")
        # the clock's game has the round's pairing (journalled: bound to round 1) but no press: not begun
        assert penalty.input_value() == "10" and page.locator("#confirm-box").is_hidden()
        assert "0 to 100" in page.locator("tr[data-key='penalty_per_minute']").inner_text()  # the range, from the console's data
        penalty.fill("500")
        page.click("#save")
        page.wait_for_function("() => document.getElementById('error').textContent.includes('event.penalty_per_minute = 500')")
        assert "allowed are whole numbers from 0 to 100" in page.locator("#error").inner_text()
        assert hall.server.console.event.rules.rules.penalty_per_minute == 10
        penalty.fill("5")
        page.click("#save")
        page.wait_for_function("() => document.getElementById('out').textContent.startsWith('Saved')")
        assert page.locator("#error").inner_text() == ""
        # the stations' retained rules say so (3.10.15's rule rides with them)
        rules_topic.wait_for(lambda r: any(m["penalty_per_minute"] == 5 for m in r.json("rules")))
        # the next new game from the console: its clock runs 5 a minute, journalled
        (cid,) = hall.post("/api/command", {"cmd": "new_game", "tables": [1]})["sent"]
        assert hall.ack(1, cid["id"])["ok"] is True
        wait(lambda: hall.rules(1)["penalty_per_minute"] == 5)
        assert header_config(hall.clocks[1])["penalty_per_minute"] == 5
        # the game begins: from now on a change needs a confirmation and a reason
        hall.clocks[1].tap("right")
        wait(lambda: hall.tables[1].state["phase"] == "running")
        wait(lambda: rulespage.started(hall.server.console))
        page.reload()
        page.wait_for_selector("body.rules-page[data-ready='1']")
        assert page.locator("#confirm-box").is_visible() and penalty.input_value() == "5"
        penalty.fill("3")
        page.click("#save")
        page.wait_for_function("() => document.getElementById('error').textContent.includes('confirm')")
        assert hall.server.console.event.rules.rules.penalty_per_minute == 5 and penalty.input_value() == "3"
        page.check("#confirm")
        page.fill("#reason", "the organisers' published rate")
        page.click("#save")
        page.wait_for_function("() => document.getElementById('out').textContent.startsWith('Saved')")
        audit = [a for a in json.loads(hall.get("/api/audit"))["audit"] if a["action"] == "rules"]
        assert audit[0]["reason"] == "the organisers' published rate: penalty_per_minute 5 -> 3", audit
        assert hall.rules(1)["penalty_per_minute"] == 5  # the game in progress keeps its rules
        assert page.errors == []
    finally:
        rules_topic.close()
        page.close()
