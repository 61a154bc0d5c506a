"""The console's pure parts: TSH in, results with penalties, exports, login hashing and lockout,
and the hall state built from the broker's messages."""

import json
import os
from pathlib import Path

import pytest

from rackside.hall.console.shell import auth
from rackside.hall.console.common import limits
from rackside.hall.console.scoring import tsh
from rackside.hall.console.state.hallstate import HallState
from rackside.hall.console.scoring.results import ClockResult, ResultError, final_scores
from support.console import cheap_hash

DATA = Path(__file__).parent / "data" / "console"


# --- TSH in --------------------------------------------------------------------------------------


def load_tsh(path):
    """As the console reads a TSH file (event.Event.import_files): tsh itself is pure."""
    if path.name.endswith(".js"):
        return tsh.parse_tourney_js(path.read_text(encoding="utf-8"), str(path))
    return [tsh.parse_t(tsh.decode_t(path.read_bytes()), path.stem, str(path))]


def test_t_file_players_tables_and_who_starts():
    (div,) = load_tsh(DATA / "a.t")
    assert div.name == "a"
    assert div.players[1].name == "Brown, Ann" and div.players[1].rating == "1500"
    assert div.problems == [f"{DATA / 'a.t'}:8: player 7 cannot be read (TSH wants 'NAME RATING OPPONENTS; "
                            "SCORES; ...'): 'this line has no rating'"]
    games, byes, problems = div.round_plan(3)
    assert {g.board: (g.first.name, g.second.name) for g in games} == {
        1: ("Brown, Ann", "Evans, Dara"),
        2: ("Fofana, Eli", "Castro, Bola"),  # p12: Eli goes first, so sits at clock side 1
        3: ("Dubois, Chen", "Gupta, Femi"),
    }
    assert byes == [] and problems == []


def test_tourney_js_divisions():
    (div,) = load_tsh(DATA / "tourney.js")
    assert div.name == "b"
    games, _, _ = div.round_plan(1)
    assert {g.board: (g.first.number, g.second.number) for g in games} == {5: (2, 1), 6: (3, 4)}


def test_not_tsh_is_refused_whole(tmp_path):
    with pytest.raises(tsh.TshError, match="not TSH's tourney.js"):
        tsh.parse_tourney_js("newt = {not json};", "x.js")
    with pytest.raises(tsh.TshError, match="no player lines"):
        tsh.parse_t("# only a comment\n", "a")


# --- results --------------------------------------------------------------------------------------
# The rules' clauses (2.3.6, 5.3, 5.3.3, TSH's limits) are tested in tests/test_console_results.py.


def clock_result(ending="end", penalties=(0, 0), overtime=(0, 0), forfeits=(), margin=None):
    return ClockResult(4, "g", ending, penalties, overtime, (0, 0), forfeits, margin)


def test_time_penalty_comes_off_the_offender():
    f = final_scores(clock_result(penalties=(20, 0), overtime=(95, 0)), (410, 388))
    assert f.scores == (390, 388) and f.penalties == (20, 0)
    assert "95 s overtime" in f.note and not f.needs_director


def test_bad_scores_are_refused():
    with pytest.raises(ResultError, match="whole number"):
        final_scores(clock_result(), ("4x0", 300))
    with pytest.raises(ResultError, match="both scores"):
        final_scores(clock_result(), None)


# --- login ----------------------------------------------------------------------------------------


def test_password_hash_round_trip_and_form():
    h = auth.hash_password("correct horse")
    assert auth.verify_password("correct horse", h)
    assert not auth.verify_password("wrong", h)
    with pytest.raises(auth.HashError, match="scrypt:N:R:P:SALT:HASH"):
        auth.verify_password("x", "plaintext")


def test_wrong_passwords_back_off_per_address_and_per_name():
    """Five free tries, then a back-off that doubles (2 s, 4 s, ...), for the address and for the
    name, each on its own: another address is not held by them (issue 17.4: one global lock let an
    outsider keep the director out)."""
    now = [100.0]
    t = auth.Throttle(clock=lambda: now[0])
    for _ in range(4):
        t.failed("10.0.0.9", "director")
    assert t.wait("10.0.0.9", "director") == 0
    t.failed("10.0.0.9", "director")
    assert t.wait("10.0.0.9", "director") == limits.LOGIN_BACKOFF_S
    assert t.wait("10.0.0.9", "sam") == limits.LOGIN_BACKOFF_S  # the address is held, whatever name it types
    assert t.wait("10.0.0.2", "director") == 0  # the director elsewhere is not held by the name
    now[0] += limits.LOGIN_BACKOFF_S
    t.failed("10.0.0.9", "director")
    assert t.wait("10.0.0.9", "director") == 2 * limits.LOGIN_BACKOFF_S
    for _ in range(20):
        t.failed("10.0.0.9", "director")
    assert t.wait("10.0.0.9", "director") == limits.LOGIN_BACKOFF_MAX_S
    # guessing one name from many addresses: each address that has failed is held by the name's back-off
    for i in range(5):
        t.failed(f"10.0.1.{i}", "guessed")
    assert t.wait("10.0.1.0", "guessed") > 0 and t.wait("10.0.2.1", "guessed") == 0
    t.succeeded("10.0.0.9", "director")
    assert t.wait("10.0.0.9", "director") == 0
    now[0] += limits.LOGIN_FORGET_S + 1  # long quiet: forgotten
    assert t.wait("10.0.1.0", "guessed") == 0


def test_sessions_are_kept_by_the_console_and_logout_ends_them(tmp_path):
    path = tmp_path / "sessions.json"
    s = auth.Sessions(path)
    sid = s.new("Sam")
    assert s.get(sid).user == "Sam" and os.stat(path).st_mode & 0o777 == 0o600
    assert auth.Sessions(path).get(sid).user == "Sam"  # a restart keeps it
    s.revoke(sid)
    assert s.get(sid) is None and auth.Sessions(path).get(sid) is None
    many = [s.new(f"u{i}") for i in range(limits.MAX_SESSIONS + 3)]
    assert s.get(many[0]) is None and s.get(many[-1]) is not None and len(s.live) == limits.MAX_SESSIONS
    path.write_text("[[[[")  # damaged: everyone logs in again, nothing breaks
    assert auth.Sessions(path).live == {}


# --- hall state -----------------------------------------------------------------------------------

P = "rackside/v1/h/"


def state(seq, game="g1", phase="running", sent_at="2026-01-01T00:00:00+00:00"):
    players = [{"player": p, "remaining_ms": 1000 * p, "overtime_s": 0, "penalty": 0, "forfeit": False} for p in (1, 2)]
    return json.dumps({"seq": seq, "game": game, "phase": phase, "running": 1, "sent_at": sent_at,
                       "players": players, "ending": None}).encode()


def test_events_are_kept_once_and_late_states_ignored():
    h = HallState("h")
    ev = json.dumps({"kind": "input", "seq": 1, "game": "g1", "t_ns": 5, "input": "press", "player": 2, "at": None}).encode()
    assert h.on_message(P + "table/3/event", ev)
    assert h.on_message(P + "table/3/event", ev) == []  # QoS 1 delivered it twice
    h.on_message(P + "table/3/state", state(5, sent_at="2026-01-01T00:00:05+00:00"))
    # an older state of the same game, sent after the latest: one clock's states go out in order, so
    # two devices publish as this table (issue 36): not taken, and the table is marked, once
    assert [k for k, _ in h.on_message(P + "table/3/state", state(4, sent_at="2026-01-01T00:00:06+00:00"))] == ["twice", "table"]
    assert h.tables[3].state["seq"] == 5 and "jumped back" in h.tables[3].tile()["twice"]["why"]
    assert h.on_message(P + "table/3/state", state(3, sent_at="2026-01-01T00:00:07+00:00")) == []
    h.on_message(P + "table/3/status", b"offline")
    assert h.tables[3].tile()["status"] == "offline"
    assert h.on_message("rackside/v1/other/table/3/status", b"online") == []


def test_a_late_state_resent_or_retained_from_before_is_ignored_not_a_second_device():
    """QoS 1 brings a state again: paho re-sends the clock's unacknowledged states after a Wi-Fi blip,
    the broker its unacknowledged ones to the console after the console's reconnect, and a broker
    restarted from its last autosave (30 s) gives the console its older retained state. Each is the
    clock's own earlier state, sent before the latest: ignored as before issue 36, the table not marked."""
    h = HallState("h")
    h.on_message(P + "table/3/state", state(10, sent_at="2026-01-01T00:00:10+00:00"))
    h.on_message(P + "table/3/state", state(11, sent_at="2026-01-01T00:00:11+00:00"))
    assert h.on_message(P + "table/3/state", state(10, sent_at="2026-01-01T00:00:10+00:00")) == []  # re-sent
    h.on_message(P + "table/3/state", state(11, sent_at="2026-01-01T00:00:11+00:00"))  # and the next again
    h.on_message(P + "table/3/state", state(40, sent_at="2026-01-01T00:00:40+00:00"))
    assert h.on_message(P + "table/3/state", state(12, sent_at="2026-01-01T00:00:12+00:00")) == []  # the restored retained one
    t = h.tables[3]
    assert t.twice is None and t.tile()["twice"] is None and t.state["seq"] == 40


def test_bad_messages_are_noted_not_raised():
    h = HallState("h")
    assert h.on_message(P + "table/x/state", b"{}") == [("problem", "rackside/v1/h/table/x/state: table 'x': allowed are 1 to 999")]
    assert h.on_message(P + "table/2/state", b"not json")[0][0] == "problem"
    assert len(h.problems) == 2 and h.tables == {}


def test_per_word_results_only_in_the_detail():
    h = HallState("h")
    h.on_message(P + "table/7/status", b"online")
    h.on_message(P + "station/1/challenge", json.dumps({"id": "c1", "table": 7, "verdict": None}).encode())
    assert h.tables[7].challenge is not None
    h.on_message(P + "station/1/challenge", json.dumps({"id": "c1", "table": 7, "verdict": "UNACCEPTABLE"}).encode())
    h.on_message(P + "station/1/detail", json.dumps({"id": "c1", "table": 7, "words": [{"word": "JOQ", "valid": False}]}).encode())
    assert h.tables[7].challenge is None
    assert "JOQ" not in json.dumps(h.snapshot())
    assert h.detail(7)["challenges"][0]["word_results"] == [{"word": "JOQ", "valid": False}]


def test_a_real_stations_payloads():
    from rackside.hall.wire.payloads import challenge_payloads as payloads

    summary, detail = payloads({"id": "c9", "time": "2026-01-01T10:00:00", "table": 4, "words": ["QI", "JOQ"],
                                "per_word": [True, False], "acceptable": False, "lexicon_name": "ENABLE"}, "2")
    h = HallState("h")
    h.on_message(P + "table/4/status", b"online")
    h.on_message(P + "station/2/detail", detail)  # the two may arrive in either order
    h.on_message(P + "station/2/challenge", summary)
    (c,) = h.feed
    assert c["verdict"] == "UNACCEPTABLE" and c["word_count"] == 2 and c["table"] == 4 and "word_results" not in c
    assert h.detail(4)["challenges"][0]["word_results"][1] == {"word": "JOQ", "valid": False}
    assert "JOQ" not in json.dumps(h.snapshot())


def test_the_snapshot_carries_the_events_rules_for_the_page():
    """The page's fallback rules (a state carries its game's own) are the event's ([event], issue 38),
    WESPA's when it says nothing, never a copy of the clock core's defaults."""
    from rackside.game.clock import Rules
    from rackside.hall.console.shell.app import Console
    from rackside.hall.wire.eventrules import from_table

    console = Console("h", cheap_hash("pw"))
    rules = console.snapshot()["rules"]
    assert rules == {"game_time_ms": Rules().game_time_ms, "penalty_per_minute": Rules().penalty_per_minute,
                     "forfeit_overtime_ms": Rules().forfeit_overtime_ms,
                     "lateness_forfeit_margin": Rules().lateness_forfeit_margin,
                     "optional_forfeit_below_ms": Rules().optional_forfeit_below_ms,
                     "courtesy_draw_after_ms": Rules().courtesy_draw_after_ms}
    console.event.set_rules(from_table({"game_time": "20:00", "penalty_per_minute": 5}), "test", "2026-12-05T10:00:00+00:00", 1)
    snap = console.snapshot()
    assert (snap["rules"]["game_time_ms"], snap["rules"]["penalty_per_minute"]) == (20 * 60_000, 5)
    assert snap["event_rules"]["penalty_per_minute"] == 5 and snap["event_rules"]["challenge_rule"] == "5-per-word"


# --- config ---------------------------------------------------------------------------------------


def test_config_loads_credentials_and_names_a_bad_key(tmp_path):
    from rackside.hall.console.shell import config

    (tmp_path / "director.toml").write_text('hall = "h"\nuser = "director"\npassword = "s3cret"\n')
    good = auth.hash_password("pw")
    path = tmp_path / "hall.toml"
    path.write_text(f'[console]\nhall = "h"\nurl = "mqtt://127.0.0.1:1883"\ncredentials = "director.toml"\npassword = "{good}"\n'
                    'listen = "0.0.0.0:8081"\n')
    cfg = config.load(path)
    assert (cfg.username, cfg.mqtt_password, cfg.listen_host, cfg.listen_port) == ("director", "s3cret", "0.0.0.0", 8081)
    path.write_text('[console]\nhall = "h"\nurl = "mqtt://x"\ncredentials = "director.toml"\npassword = "hunter2"\n')
    with pytest.raises(config.ConfigError, match=r"\[console\] password must be 'scrypt:N:R:P:SALT:HASH'"):
        config.load(path)
    path.write_text(f'[console]\nhall = "h"\nurl = "mqtt://x"\ncredentials = "director.toml"\npassword = "{good}"\nlisten = "8080"\n')
    with pytest.raises(config.ConfigError, match="listen = .8080.: allowed is HOST:PORT"):
        config.load(path)


@pytest.mark.parametrize("event, says", [
    ('penalty_per_minute = 500', r"event.penalty_per_minute = 500: allowed are whole numbers from 0 to 100"),
    ('penalty_per_minute = "5"', r"event.penalty_per_minute = '5': allowed are whole numbers from 0 to 100"),
    ('game_time = "25"', r"event.game_time = '25': allowed are durations from 1:00 to 99:59"),
    ('forfeit_overtime = "30:00"', r"event.forfeit_overtime = '30:00': allowed are durations from 1:00 to 19:59"),
    ('challenge_rule = "triple"', r"event.challenge_rule = 'triple': allowed are single, 5-per-word, .* \(3.10.15\)"),
    ('preset = "naspa"', r"event.preset = 'naspa': allowed are 'wespa'"),
    ('switch_guard_ms = 50', r"\[event\] has unknown key 'switch_guard_ms': allowed keys are challenge_rule, "),
])
def test_the_events_rules_are_checked_where_they_enter_naming_the_key(tmp_path, event, says):
    """Issue 38: [event] holds the event's rules; each is checked by the clock's own table
    (game.rules_table: one range, one default), and a bad one is one line naming the key."""
    from rackside.hall.console.shell import config

    path = tmp_path / "hall.toml"
    path.write_text(f'[console]\nhall = "h"\nurl = "mqtt://x"\nusername = "d"\nmqtt_password = "p"\n'
                    f'password = "{auth.hash_password("pw")}"\n[event]\n{event}\n')
    with pytest.raises(config.ConfigError, match=says):
        config.load(path)


def test_the_events_rules_default_to_wespas_and_take_the_clocks_keys(tmp_path):
    from rackside.game.clock import Rules
    from rackside.game.rules_table import CLOCK_KEYS
    from rackside.hall.console.shell import config
    from rackside.hall.wire import eventrules

    path = tmp_path / "hall.toml"
    head = f'[console]\nhall = "h"\nurl = "mqtt://x"\nusername = "d"\nmqtt_password = "p"\npassword = "{auth.hash_password("pw")}"\n'
    path.write_text(head)
    assert config.load(path).event == eventrules.EventRules(Rules(), "5-per-word", "wespa")  # 3.10.15(d)
    path.write_text(head + '[event]\npreset = "wespa"\ngame_time = "20:00"\npenalty_per_minute = 5\nchallenge_rule = "double"\n')
    ev = config.load(path).event
    assert (ev.rules.game_time_ms, ev.rules.penalty_per_minute, ev.rules.forfeit_overtime_ms, ev.challenge_rule) == (
        20 * 60_000, 5, 10 * 60_000, "double")
    # [console] event (the event served, issue 35) is not [event] (its rules, issue 38): both kept
    path.write_text(head + 'event = "open-day1"\n[event]\ngame_time = "20:00"\n')
    both = config.load(path)
    assert both.event_name == "open-day1" and both.event.rules.game_time_ms == 20 * 60_000
    # one home: the event's game keys are the clock's [clock] keys, less the buttons' guard (the device's)
    assert set(eventrules.GAME_KEYS) == set(CLOCK_KEYS) - {"switch_guard_ms"}
    assert set(ev.command_rules()) | {"game_time"} == set(eventrules.GAME_KEYS)
    assert eventrules.parse(eventrules.payload(ev)) == ev
    with pytest.raises(ValueError, match="rules.penalty_per_minute = -5: allowed are whole numbers from 0 to 100"):
        eventrules.parse(b'{"penalty_per_minute": -5}')


def test_a_challenge_in_a_tables_history_is_a_challenge_whatever_its_kind():
    """The station's `kind` ("self", "opponent") overwrote the history entry's "challenge", and the
    page showed it as `#undefined input` (issue 17)."""
    h = HallState("h")
    h.on_message(P + "table/3/status", b"online")
    h.on_message(P + "station/1/challenge", json.dumps({"id": "c1", "table": 3, "kind": "self", "verdict": "ACCEPTABLE"}).encode())
    (entry,) = h.detail(3)["history"]
    assert entry["kind"] == "challenge" and entry["challenge_kind"] == "self" and entry["verdict"] == "ACCEPTABLE"


def test_a_stream_that_stops_reading_is_dropped_at_its_byte_budget_and_freed():
    import asyncio

    from rackside.hall.console.shell.hub import Hub

    async def go():
        hub = Hub()
        slow, quick = hub.open(), hub.open()
        big = {"pad": "x" * 100_000}
        for _ in range(limits.STREAM_QUEUE_BYTES // 100_000 + 2):
            hub.publish("table", big)
            quick.take()  # this page reads as it goes
        return hub, slow, quick

    hub, slow, quick = asyncio.run(go())
    assert slow.dropped and slow.bytes == 0 and not slow.items and slow not in hub.streams  # its page resyncs
    assert not quick.dropped and quick in hub.streams and hub.dropped == 1
    full = Hub()
    opened = [full.open() for _ in range(limits.MAX_STREAMS + 5)]
    assert opened.count(None) == 5


def test_a_clocks_repeated_state_is_not_sent_again_and_every_real_change_is():
    """Issue 28.4: a clock repeats its state every 10 s, its times ticked on; every page already
    works that out, so the tile is not sent again. A time that jumped, a new seq, a status: sent."""
    import asyncio

    from rackside.hall.console.shell.hub import Hub

    def tile(sent_at, p1, p2=600_000, seq=7, status="online", phase="running"):
        return {"table": 4, "status": status, "names": ["A", "B"], "problems": [],
                "state": {"game": "g", "seq": seq, "phase": phase, "running": 1, "sent_at": sent_at,
                          "players": [{"player": 1, "remaining_ms": p1}, {"player": 2, "remaining_ms": p2}]}}

    async def go():
        hub = Hub()
        page = hub.open()
        sent = []
        for t in [tile("2026-12-02T10:00:00.000+00:00", 900_000),
                  tile("2026-12-02T10:00:10.000+00:00", 890_010),  # the repeat, 10 s on: not sent
                  tile("2026-12-02T10:00:20.000+00:00", 880_000),  # and again
                  tile("2026-12-02T10:00:30.000+00:00", 875_000),  # the clock's time jumped 5 s: sent
                  tile("2026-12-02T10:00:30.000+00:00", 875_000, p2=599_000),  # the side not ticking changed: sent
                  tile("2026-12-02T10:00:40.000+00:00", 865_000, p2=599_000, status="offline"),  # a status: sent
                  tile("2026-12-02T10:00:40.000+00:00", 865_000, p2=599_000, status="offline"),  # the very same: not
                  tile("2026-12-02T10:00:41.000+00:00", 864_000, p2=599_000, seq=8),  # a new seq: sent
                  tile("2026-12-02T10:00:51.000+00:00", 864_000, p2=599_000, seq=8, phase="paused")]:  # sent
            hub.publish("table", t)
            sent.append(len(page.take()))
        hub.publish("table", {**tile("2026-12-02T10:01:01.000+00:00", 864_000, p2=599_000, seq=8, phase="paused"),
                              "problems": ["state: refused"]})  # a problem on the tile: sent
        sent.append(len(page.take()))
        return sent

    assert asyncio.run(go()) == [1, 0, 0, 1, 1, 1, 0, 1, 1, 1]


def test_a_tables_history_goes_only_to_the_streams_watching_that_table():
    """Issue 28.4: every page's stream gets tiles, rounds, the feed and acks; a table's history (its
    events and commands) goes only to the streams watching that table (the page's drawer open on
    it), first its detail as it is then, and to none once the drawer closes. A page's stream is
    steered only by the session that opened it."""
    import asyncio

    from rackside.hall.console.shell.hub import Hub

    def kinds(stream):
        return [m.split("\n", 1)[0].removeprefix("event: ") + ":" + str(json.loads(m.split("data: ", 1)[1])["table"])
                for m in stream.take()]

    async def go():
        hub = Hub()
        hall, three, four = hub.open("s1"), hub.open("s1"), hub.open("s2")
        assert hub.find(three.id, "s1") is three and hub.find(three.id, "s2") is None and hub.find("nope", "s1") is None
        assert hub.find("é", "s1") is None and hub.find("x" * 10_000, "s1") is None  # (a path's text, decoded: any)
        hub.watch(three, 3, {"history": []})
        hub.watch(four, 4, {"history": []})
        hub.publish("table", {"table": 3, "status": "online"})
        hub.publish("event", {"table": 3, "event": {"kind": "input", "seq": 1}})
        hub.publish("command", {"table": 3, "command": {"cmd": "identify"}})
        hub.publish("ack", {"table": 3, "ack": {"ok": True}, "command": {"cmd": "identify"}})
        hub.publish("event", {"table": 4, "event": {"kind": "input", "seq": 9}})
        hub.publish("challenge", {"table": 3, "station": "1"})
        got = kinds(hall), kinds(three), kinds(four)
        hub.watch(three, None, None)  # its drawer closed
        hub.publish("event", {"table": 3, "event": {"kind": "input", "seq": 2}})
        return got, kinds(three)

    (hall, three, four), closed = asyncio.run(go())
    assert hall == ["table:3", "ack:3", "challenge:3"]
    assert three == ["detail:3", "table:3", "event:3", "command:3", "ack:3", "challenge:3"]
    assert four == ["detail:4", "table:3", "ack:3", "event:4", "challenge:3"]
    assert closed == []


def test_a_held_clock_is_named_by_what_held_it_and_only_a_challenge_is_a_challenge():
    """Issue 35: every neutralised clock showed CHALLENGE (a spare's takeover, a plain centre press).
    The tile's `held` (hallstate.held, the one place) names what neutralised it."""
    h = HallState("h")

    def ev(seq, name, **more):
        return json.dumps({"kind": "input", "seq": seq, "game": "g1", "t_ns": seq, "input": name, "at": None, **more}).encode()

    h.on_message(P + "table/3/state", state(1))
    assert h.tables[3].tile()["held"] is None  # running
    h.on_message(P + "table/3/event", ev(2, "neutralise"))
    h.on_message(P + "table/3/state", state(2, phase="neutralised"))
    assert h.tables[3].tile()["held"] == "neutralised"  # a plain centre press
    h.on_message(P + "table/3/event", ev(3, "neutralise"))
    h.on_message(P + "table/3/state", state(3))
    assert h.tables[3].tile()["held"] is None
    h.on_message(P + "table/3/state", state(4, phase="neutralised"))  # the state before its event:
    assert h.tables[3].tile()["held"] == "neutralised"
    out = h.on_message(P + "table/3/event", ev(4, "call", call="call-1", how="buttons"))
    assert ("table", h.tables[3].tile()) in out and h.tables[3].tile()["held"] == "call"  # the event redraws it
    h.on_message(P + "table/4/state", state(1, phase="neutralised"))
    h.on_message(P + "table/4/event", ev(1, "takeover", player=1, reason="takeover of g0"))
    assert h.tables[4].tile()["held"] == "takeover"
    # a station's judged challenge of table 3 while its clock is held: that stop was a challenge
    h.on_message(P + "station/1/challenge", json.dumps({"id": "c1", "table": 3, "kind": "self", "verdict": "ACCEPTABLE"}).encode())
    assert h.tables[3].tile()["held"] == "challenge"
    h.on_message(P + "table/3/event", ev(5, "neutralise"))  # the players restart
    h.on_message(P + "table/3/state", state(5))
    assert h.tables[3].tile()["held"] is None
    h.on_message(P + "table/3/event", ev(6, "neutralise"))
    h.on_message(P + "table/3/state", state(6, phase="neutralised"))
    assert h.tables[3].tile()["held"] == "neutralised"  # the next stop is a stop, not the last challenge


def test_a_game_id_that_another_events_game_had_is_shown_when_its_state_says_this_event():
    """Game ids are each clock's own numbering (game-000001 on): the last event's retained state at a
    table and this event's game on a spare (or a moved clock) can share one. The state that says this
    event is this event's game: shown, never dropped as the other's (issue 35; review3's finding)."""
    h = HallState("h")
    h.event = "day-2"

    def st(seq, event, sent_at):
        d = json.loads(state(seq, game="game-000007", sent_at=sent_at))
        return json.dumps({**d, "event": event}).encode()

    h.on_message(P + "table/3/state", st(40, "day-1", "2026-01-01T00:00:40+00:00"))
    assert h.tables[3].state is None and "game-000007" in h.tables[3].foreign
    assert h.on_message(P + "table/3/state", st(1, "day-2", "2026-01-02T09:00:01+00:00"))
    t = h.tables[3]
    assert t.state is not None and t.state["event"] == "day-2" and t.state["seq"] == 1
    assert "game-000007" not in t.foreign and t.twice is None


def test_an_unsynced_clocks_own_game_is_shown_before_its_clock_syncs():
    """Issue 35 hides a retained state of before the event (the clock's own game, sent before the event
    began). A Pi has no real-time clock: until NTP syncs it, its time is the last one it saved, before
    the event's start, and its own game played now was hidden until it synced. A clock whose status
    says its time is not synchronised is not dated by it: its game is shown; a synced clock's old
    retained state is still not."""
    from datetime import datetime, timezone

    from rackside.hall.wire.health import FAULTS, status_payload, unknown
    h = HallState("h")
    h.event, h.event_since = "day-2", datetime(2026, 5, 2, 9, 0, tzinfo=timezone.utc)
    old = json.dumps({**json.loads(state(4, game="game-000001", sent_at="2026-04-30T18:00:04+00:00")), "event": ""}).encode()
    h.on_message(P + "table/3/status", status_payload({**unknown(), **FAULTS["unsynced"]}, "1.0"))
    assert h.on_message(P + "table/3/state", old)  # the clock's own game ("": no event), dated before the event
    assert h.tables[3].tile()["state"]["seq"] == 4 and not h.tables[3].problems
    h.on_message(P + "table/4/status", status_payload({**unknown(), "clock_synced": True}, "1.0"))
    h.on_message(P + "table/4/state", old)
    assert h.tables[4].tile()["state"] is None and "before event day-2 began" in h.tables[4].problems[0]
