"""The event's rules on the director's page (issue 38, item 1: "editable on the page before the first
round, audited after"), in-process through the console's ASGI app (support.console.call): the page's
data (rules, ranges from the clock's own table), a change before the first game, a refusal naming
the key and the allowed values, a change after the first game that needs a confirmation and a
reason (audited), the next new game's rules, and a restart that keeps the page's change until
console.toml's [event] itself changes."""

from __future__ import annotations

import asyncio
import json

import pytest

from rackside.game.rules_table import CLOCK_KEYS
from rackside.hall.console.shell.app import Console, build_app
from rackside.hall.console.shell.config import ConsoleConfig
from rackside.hall.console.state.event import ROUND_KEY, RULES_KEY
from rackside.hall.console.scoring.resultstore import STORE_REFUSED, ResultStore
from rackside.hall.console.shell.serve import RESULTS_DB, make_console
from rackside.hall.wire import eventrules
from rackside.hall.wire.eventrules import from_table

from support.console import call, cheap_hash, logged_in

PASSWORD = "pw"


class Page:
    """The console's app with a director logged in; the commands it sends, kept."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.sent: list[tuple[int, dict]] = []
        console.send = lambda n, cmd: self.sent.append((n, cmd))
        self.app = build_app(console, secret_key="k" * 64)
        self.headers = asyncio.run(logged_in(self.app, PASSWORD))

    def get(self) -> dict:
        status, _, body = asyncio.run(call(self.app, "GET", "/api/event-rules", self.headers))
        assert status == 200, body
        return json.loads(body)

    def post(self, path: str, body) -> tuple[int, dict]:
        status, _, out = asyncio.run(call(self.app, "POST", path, self.headers, json.dumps(body).encode()))
        return status, json.loads(out)

    def new_game_rules(self) -> dict:
        status, out = self.post("/api/command", {"cmd": "new_game", "tables": [1]})
        assert status == 200, out
        return self.sent[-1][1]

    def rule_audits(self) -> list[dict]:
        return [a for a in self.console.event.store.audit() if a["action"] == "rules"]


@pytest.fixture
def page(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    console = Console("h", cheap_hash(PASSWORD), store=store)
    console.event.set_rules(from_table({}), "console.toml [event]", "2026-12-05T09:00:00+00:00", 1)
    p = Page(console)
    yield p
    store.close()


def test_the_page_reads_the_rules_and_their_ranges_from_the_clocks_own_table(page):
    v = page.get()
    assert v["rules"] == eventrules.EventRules().as_dict() and v["started"] is False
    assert v["config"] == v["rules"]  # console.toml's [event], as last read
    fields = {f["key"]: f for f in v["fields"]}
    assert list(fields) == [*eventrules.GAME_KEYS, "challenge_rule"]
    for key in eventrules.GAME_KEYS:  # the page's ranges are the clock's (game.rules_table), never a copy
        kind, low, high, _ = CLOCK_KEYS[key]
        assert (fields[key]["kind"], fields[key]["low"], fields[key]["high"]) == (kind, low, high)
    assert [c["value"] for c in fields["challenge_rule"]["choices"]] == list(eventrules.CHALLENGE_RULES)
    assert fields["penalty_per_minute"]["clause"] == "5.3.2" and v["presets"] == eventrules.PRESETS


def test_before_the_first_game_a_change_is_free_and_the_next_new_game_runs_it(page):
    assert page.new_game_rules()["rules"]["penalty_per_minute"] == 10
    status, v = page.post("/api/event-rules", {"rules": {"penalty_per_minute": 5, "game_time": "20:00"}})
    assert status == 200 and v["changed"] is True, v
    assert v["rules"]["penalty_per_minute"] == 5 and v["rules"]["game_time"] == "20:00"
    cmd = page.new_game_rules()  # the console's next new game carries them
    assert cmd["rules"]["penalty_per_minute"] == 5 and cmd["game_time"] == 20 * 60
    assert page.console.state.round.game_time_ms == 20 * 60_000  # the round's game time is the rules'
    assert page.console.event.store.setting(RULES_KEY)["penalty_per_minute"] == 5  # kept for a restart
    (a,) = page.rule_audits()  # said in the audit too, with what changed and who
    assert a["who"] == "director"  # the session's name
    assert "penalty_per_minute 10 -> 5" in a["reason"] and "game_time 25:00 -> 20:00" in a["reason"], a
    assert page.console.snapshot()["rules"]["penalty_per_minute"] == 5  # the hall page's fallback rules


@pytest.mark.parametrize("rules, says", [
    ({"penalty_per_minute": 500}, "event.penalty_per_minute = 500: allowed are whole numbers from 0 to 100"),
    ({"penalty_per_minute": "5"}, "event.penalty_per_minute = '5': allowed are whole numbers from 0 to 100"),
    ({"game_time": "20"}, "event.game_time = '20': allowed are durations from 1:00 to 99:59"),
    ({"forfeit_overtime": "25:00"}, "event.forfeit_overtime = '25:00': allowed are durations from 1:00 to 19:59"),
    ({"challenge_rule": "7-per-word"}, "event.challenge_rule = '7-per-word': allowed are single, 5-per-word"),
    ({"penalty": 5}, "[event] has unknown key 'penalty': allowed keys are challenge_rule, courtesy_draw_after"),
    ({"preset": "naspa"}, "event.preset = 'naspa': allowed are 'wespa'"),
])
def test_bad_rules_are_refused_with_one_line_naming_the_key_and_nothing_changes(page, rules, says):
    status, out = page.post("/api/event-rules", {"rules": rules})
    assert status == 400 and out["error"].startswith(says) and "\n" not in out["error"], out
    assert page.get()["rules"] == eventrules.EventRules().as_dict() and page.rule_audits() == []


@pytest.mark.parametrize("body, says", [
    ({"rules": 5}, "rules must be an object"),
    ({"rules": {}, "by": "x"}, "unknown key 'by'"),
    ({"rules": {}, "confirm": "yes"}, "confirm must be true or false"),
    ({"rules": {}, "reason": 3}, "reason must be text"),
    ([1], "the request body must be a JSON object"),
])
def test_a_malformed_body_is_refused(page, body, says):
    status, out = page.post("/api/event-rules", body)
    assert status == 400 and says in out["error"], out


def test_after_the_first_game_a_change_needs_a_confirmation_and_a_reason_and_is_audited(page):
    status, _ = page.post("/api/round", {"number": 2})  # the event has moved on to its second round
    assert status == 200 and page.get()["started"] is True
    for body in ({"rules": {"penalty_per_minute": 5}}, {"rules": {"penalty_per_minute": 5}, "confirm": True},
                 {"rules": {"penalty_per_minute": 5}, "confirm": True, "reason": "  "},
                 {"rules": {"penalty_per_minute": 5}, "reason": "the event charges 5"}):
        status, out = page.post("/api/event-rules", body)
        assert status == 409 and "confirm" in out["error"] and "games in progress keep theirs" in out["error"], (body, out)
    assert page.console.event.rules.rules.penalty_per_minute == 10 and page.rule_audits() == []
    status, v = page.post("/api/event-rules", {"rules": {"penalty_per_minute": 5}, "confirm": True,
                                               "reason": "the event charges 5, as published"})
    assert status == 200 and v["rules"]["penalty_per_minute"] == 5, v
    (a,) = page.rule_audits()
    assert a["reason"] == "the event charges 5, as published: penalty_per_minute 10 -> 5" and a["after"]["penalty_per_minute"] == 5
    assert page.new_game_rules()["rules"]["penalty_per_minute"] == 5
    status, v = page.post("/api/event-rules", {"rules": {"penalty_per_minute": 5}})  # the same rules: nothing to confirm
    assert status == 200 and v["changed"] is False and len(page.rule_audits()) == 1


def _config(tmp_path, event: dict) -> ConsoleConfig:
    return ConsoleConfig(hall="h", url="mqtt://127.0.0.1:9", username="director", mqtt_password="x",
                         password_hash=cheap_hash(PASSWORD), state_dir=tmp_path, event=from_table(event))


def test_a_restart_keeps_the_pages_change_until_console_tomls_event_changes(tmp_path):
    console, bridge = make_console(_config(tmp_path, {"penalty_per_minute": 10}))
    page = Page(console)
    status, _ = page.post("/api/event-rules", {"rules": {"penalty_per_minute": 5, "challenge_rule": "10-per-turn"}})
    assert status == 200
    console.event.store.close()
    console.event_lock.release()  # as the product closes a console (serve.py InProcessConsole.stop)
    # the same console.toml: the page's rules win, and are the ones retained for the stations
    console, bridge = make_console(_config(tmp_path, {"penalty_per_minute": 10}))
    assert console.event.rules.rules.penalty_per_minute == 5 and console.event.rules.challenge_rule == "10-per-turn"
    assert eventrules.parse(bridge.rules).rules.penalty_per_minute == 5
    assert Page(console).get()["config"]["penalty_per_minute"] == 10  # the page says console.toml's differ
    console.event.store.close()
    console.event_lock.release()  # as the product closes a console (serve.py InProcessConsole.stop)
    # console.toml's [event] changed since: the director's new word wins, and is audited
    console, bridge = make_console(_config(tmp_path, {"penalty_per_minute": 3}))
    assert console.event.rules.rules.penalty_per_minute == 3 and console.event.rules.challenge_rule == "5-per-word"
    assert eventrules.parse(bridge.rules).rules.penalty_per_minute == 3
    audits = [a for a in console.event.store.audit() if a["action"] == "rules"]
    assert audits[0]["who"] == "console.toml [event]" and "3 points a minute" in audits[0]["reason"]
    console.event.store.close()
    console.event_lock.release()  # as the product closes a console (serve.py InProcessConsole.stop)
    assert ResultStore(console.home / RESULTS_DB).setting(RULES_KEY)["penalty_per_minute"] == 3


def test_a_result_recorded_means_the_event_has_begun(page):
    assert page.get()["started"] is False
    status, out = page.post("/api/result/3", {"slip": [400, 380], "names": ["A", "B"], "confirm": True,
                                              "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]}})
    assert status == 200, out
    assert page.get()["started"] is True


def test_once_begun_the_event_stays_begun_across_a_restart(tmp_path):
    """Round 2 marks the event begun; kept, so a console set back to round 1 (no result, no clock)
    and restarted still asks for a confirmation."""
    console, _ = make_console(_config(tmp_path, {}))
    page = Page(console)
    assert page.post("/api/round", {"number": 2})[0] == 200 and page.get()["started"] is True
    assert page.post("/api/round", {"number": 1})[0] == 200
    console.event.store.close()
    console.event_lock.release()  # as the product closes a console (serve.py InProcessConsole.stop)
    console, _ = make_console(_config(tmp_path, {}))
    page = Page(console)
    assert console.state.round.number == 1 and page.get()["started"] is True
    status, out = page.post("/api/event-rules", {"rules": {"courtesy_draw_after": "2:00"}})
    assert status == 409, out


def test_the_rules_need_the_directors_session_and_a_post_its_csrf_token(page):
    body = json.dumps({"rules": {"penalty_per_minute": 5}}).encode()
    assert asyncio.run(call(page.app, "GET", "/api/event-rules", {}))[0] == 401
    assert asyncio.run(call(page.app, "POST", "/api/event-rules", {"content-type": "application/json"}, body))[0] == 401
    no_token = {k: v for k, v in page.headers.items() if k != "x-csrf-token"}
    assert asyncio.run(call(page.app, "POST", "/api/event-rules", no_token, body))[0] == 403
    status, headers, _ = asyncio.run(call(page.app, "GET", "/rules", {}))
    assert status == 303 and headers["location"] == "/login"
    assert page.console.event.rules.rules.penalty_per_minute == 10


def test_a_change_the_store_refuses_keeps_nothing_of_it(page):
    """The page kept the round's new game time, then audited the change, then kept the rules: a store
    that refused the rules left the round's game time and an audit row of a change that never
    happened (the console said "unchanged", a restart ran the new game time). Now the three are one
    transaction. The store's real refusal: a trigger SQLite itself fails the rules' write with."""
    store = page.console.event.store
    store.db.execute(f"CREATE TEMP TRIGGER refuse BEFORE INSERT ON settings WHEN NEW.key = '{RULES_KEY}' "
                     "BEGIN SELECT RAISE(FAIL, 'disk I/O error'); END")
    before = store.setting(ROUND_KEY)
    status, out = page.post("/api/event-rules", {"rules": {"penalty_per_minute": 5, "game_time": "20:00"}})
    assert status == STORE_REFUSED and "The event's rules are unchanged." in out["error"], out
    assert page.rule_audits() == [] and store.setting(ROUND_KEY) == before  # nothing of it kept
    assert page.console.state.round.game_time_ms == 25 * 60_000 and page.console.event.rules.rules.penalty_per_minute == 10
    assert not store.db.in_transaction
    store.db.execute("DROP TRIGGER refuse")
    status, out = page.post("/api/event-rules", {"rules": {"penalty_per_minute": 5, "game_time": "20:00"}})
    assert status == 200 and len(page.rule_audits()) == 1 and store.setting(ROUND_KEY)["game_time_ms"] == 20 * 60_000


def test_the_events_rules_are_worked_out_once_at_start(tmp_path, monkeypatch):
    """make_console worked the event's rules out twice (restore_event for the round's game time, then
    Event.set_rules again): once now, passed along."""
    from rackside.hall.console.state.event import Event
    calls = []
    real = Event.rules_at_start

    def counted(self, config):
        calls.append(config)
        return real(self, config)
    monkeypatch.setattr(Event, "rules_at_start", counted)
    console, _ = make_console(_config(tmp_path, {"penalty_per_minute": 7}))
    try:
        assert len(calls) == 1 and console.event.rules.rules.penalty_per_minute == 7
        assert console.event.store.setting(RULES_KEY)["penalty_per_minute"] == 7  # kept as before
    finally:
        console.event.store.close()
        console.event_lock.release()
