"""The public hall's pure parts and its feed (issue 28 item 1 and item 2's static files): standings
ranked as TSH ranks them, held to the ranks TSH itself wrote (`rrank`) for every player and round of
two real events; what the view holds and never holds; the delay; the folder; [public]'s keys.
The page and the listener through the real `rackside hall console`: tests/test_console_public.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rackside.hall.console.shell import config
from rackside.hall.console.publichall import public, publicserve
from rackside.hall.console.scoring import standings, tsh
from rackside.hall.console.shell.app import Console
from rackside.hall.console.state.event import Event
from rackside.hall.console.scoring.resultstore import ResultStore
from support.console import cheap_hash

DATA = Path(__file__).parent / "data" / "tsh"


def tsh_ranks(d: tsh.Division, rnd: int) -> dict[int, int]:
    return {p.number: int(p.etc["rrank"][rnd]) for p in d.players.values()
            if rnd < len(p.etc.get("rrank", ())) and p.etc["rrank"][rnd] is not None}


# Every real tourney.js the tests hold (tests/data/tsh/README.md), and how many ranks TSH wrote in it
REAL_EVENTS = {"albany-2024": 2000, "july4-2025": 100, "ccc-may2026": 66, "botb-2025": 160}


def imported(event: str) -> tuple[Console, public.Hall]:
    """A console that imported the event's tourney.js alone, and the public view's makings of it."""
    c = Console("open", cheap_hash("x"))
    assert c.import_tsh({"tourney.js": (DATA / event / "tourney.js").read_bytes()}) == []
    return c, publicserve.hall_of(publicserve.gather(c.public_sources(), 0, slow=True))


@pytest.mark.parametrize("event", sorted(REAL_EVENTS))
def test_every_rank_is_the_rank_tsh_wrote_for_every_player_and_round(event):
    """TSH writes each player's rank after every round into tourney.js (`etc.rrank`, 1-based by
    round, TSH::Division::ComputeRanks). A player who withdrew later (`off`) was ranked while still
    playing: TSH kept ranks for them up to the round before (their rrank's length says to when).
    The event comes in as a tourney.js alone, with TSH's options in its `config` object, which the
    public view ranks with (issue 35: `spread_cap` was dropped, so ccc-may2026's spreads were
    uncapped and 7 of its ranks differed); its standings.json is that ranking after the last round."""
    c, h = imported(event)
    checked = 0
    for d in h.divisions:
        for rnd in range(1, standings.last_scored_round(d) + 2):
            among = {p.number for p in d.players.values() if p.active or len(p.etc.get("rrank", ())) > rnd + 1}
            ours = {r["number"]: r["rank"] for r in standings.ranked(d, rnd - 1, h.options, among=among)}
            theirs = tsh_ranks(d, rnd)
            assert {n: ours[n] for n in theirs if n in ours} == {n: r for n, r in theirs.items() if n in ours}, (d.name, rnd)
            checked += len(theirs)
    assert checked >= REAL_EVENTS[event]
    shown = public.view(h)["standings.json"]["divisions"]
    assert shown == [public.division_standings(d, h.options) for d in h.divisions]
    assert [x["rows"] for x in shown] == [standings.ranked(d, None, h.options) for d in h.divisions]


def test_config_tsh_rank_options_reach_the_public_standings():
    """From config.tsh as from tourney.js: `spread_cap` holds Al's +400 and Cy's +90 to +50 each, so the
    two share rank 1 (TSH's ComputeRanks: the same wins, losses and spread)."""
    t = "Al 1500 2; 500; board 1\nBo 1600 1; 100; board 1\nCy 1400 4; 390; board 2\nDi 1300 3; 300; board 2\n"
    ranks = {}
    for cap in ("", "config spread_cap = 50\n"):
        c = Console("open", cheap_hash("x"))
        assert c.import_tsh({"config.tsh": f"division A a.t\n{cap}".encode(), "a.t": t.encode()}) == []
        rows = built(c)["standings.json"]["divisions"][0]["rows"]
        ranks[cap] = {r["name"]: (r["rank"], r["spread"]) for r in rows}
    assert ranks[""]["Al"] == (1, 400) and ranks[""]["Cy"] == (2, 90)
    assert ranks["config spread_cap = 50\n"]["Al"] == (1, 50) == ranks["config spread_cap = 50\n"]["Cy"]


def test_the_rank_options_come_from_tourney_js_config_and_bad_values_are_left_out():
    text = ("newt={config:{spread_cap:[250],oppless_spread:undefined,spread_bad:1,sum_before_spread:'x'.repeat,"
            "zero_byes_tie:true,all_byes_tie:{a:1},entry:'both'},divisions:[]};")
    assert tsh.tourney_js_options(text.replace("'x'.repeat", "0")) == {
        "spread_cap": [250], "spread_bad": 1, "sum_before_spread": 0, "zero_byes_tie": 1, "entry": "both"}
    # a yes-or-no option is JavaScript's true/false in tourney.js, Perl's 1/0 in config.tsh; no other key takes one
    flags = "newt={config:{oppless_spread:true,spread_bad:false,spread_cap:true,entry:true,max_score:false},divisions:[]};"
    assert tsh.tourney_js_options(flags) == {"oppless_spread": 1, "spread_bad": 0}


def test_tourney_js_true_and_false_options_change_the_standings():
    """TSH's tourney.js carries its config's yes-or-no options as `true`/`false`; they were dropped as
    no value, so `spread_bad: true` (less spread ranks higher) and `oppless_spread: true` (a game's
    spread is the player's score alone) ranked as if not set. A small tourney.js of one round: Al
    beat Bo 400-300, Cy beat Di 350-340."""
    def tourney(options: str) -> bytes:
        return ("newt={config:{" + options + "},divisions:[{name:'A',players:[null,"
                "{id:1,name:'Al',rating:1500,pairings:[2],scores:[400],etc:{board:[1]}},"
                "{id:2,name:'Bo',rating:1600,pairings:[1],scores:[300],etc:{board:[1]}},"
                "{id:3,name:'Cy',rating:1400,pairings:[4],scores:[350],etc:{board:[2]}},"
                "{id:4,name:'Di',rating:1300,pairings:[3],scores:[340],etc:{board:[2]}}]}]};").encode()
    spreads = {}
    for options in ("", "oppless_spread:false,spread_bad:false", "oppless_spread:true", "spread_bad:true"):
        c = Console("open", cheap_hash("x"))
        assert c.import_tsh({"tourney.js": tourney(options)}) == []
        rows = built(c)["standings.json"]["divisions"][0]["rows"]
        spreads[options] = [(r["name"], r["spread"]) for r in rows]
    assert spreads[""] == spreads["oppless_spread:false,spread_bad:false"] == [("Al", 100), ("Cy", 10), ("Di", -10), ("Bo", -100)]
    assert spreads["oppless_spread:true"] == [("Al", 400), ("Cy", 350), ("Di", 340), ("Bo", 300)]  # the scores alone
    assert spreads["spread_bad:true"] == [("Cy", 10), ("Al", 100), ("Bo", -100), ("Di", -10)]  # less spread first


def test_a_tourney_js_replaces_the_event_an_earlier_import_left():
    """Importing a single-division tourney.js leaves no division, config.tsh or file of an earlier
    import beside it (issue 35): TSH writes every division into tourney.js, so it is the whole event,
    after a restart too; a failed import changes nothing."""
    store = ResultStore(None)
    ev = Event(store)
    ev.import_files({n: (DATA / "albany-2024" / n).read_bytes() for n in ("config.tsh", "a.t", "b.t", "c.t")})
    assert list(ev.divisions) == ["A", "B", "C"] and ev.config is not None
    one = (DATA / "ccc-may2026" / "tourney.js").read_bytes()
    with pytest.raises(tsh.TshError):
        ev.import_files({"tourney.js": b"newt={divisions:["})
    assert list(ev.divisions) == ["A", "B", "C"]
    ev.import_files({"tourney.js": one})
    assert list(ev.divisions) == ["A"] and len(ev.divisions["A"].players) == 33
    assert ev.config is None and ev.options()["spread_cap"] == [250]
    again = Event(store)
    again.restore()
    assert list(again.divisions) == ["A"] and len(again.divisions["A"].players) == 33
    assert again.options()["spread_cap"] == [250]


def test_ranking_follows_tsh_wins_then_losses_then_spread_and_shares_ties():
    # (TSH's names are two characters at least: its line pattern's `(.+?\S)`)
    d = tsh.parse_t("Al 1500 2 0; 400 50\nBo 1600 1 3; 300 300\nCy 1400 4 2; 380 380\nDi 1300 3 0; 380 -50\n", "A")
    rows = standings.ranked(d)
    # Al: a win and a +50 bye; Bo: two losses; Cy: a tie and a win; Di: a tie and a -50 bye (a loss)
    assert [(r["name"], r["rank"], r["wins"], r["losses"], r["spread"]) for r in rows] == [
        ("Al", 1, 2, 0, 150), ("Cy", 2, 1.5, 0.5, 80), ("Di", 3, 0.5, 1.5, -50), ("Bo", 4, 0, 2, -180)]
    tied = tsh.parse_t("Al 1500 2; 400\nBo 1600 1; 400\n", "T")  # a tie: half a win each, one shared rank
    assert [(r["name"], r["rank"], r["wins"]) for r in standings.ranked(tied)] == [("Bo", 1, 0.5), ("Al", 1, 0.5)]
    two = tsh.parse_t("Al 1500 2; 400\nBo 1600 1; 300\nCy 1400 4; 420\nDi 1300 3; 300\n", "S")
    assert [r["name"] for r in standings.ranked(two)][:2] == ["Cy", "Al"]  # the same wins: more spread first
    assert [r["name"] for r in standings.ranked(two, options={"spread_bad": 1})][:2] == ["Al", "Cy"]


def test_a_penalty_annotation_counts_in_the_spread_as_tsh_synch():
    d = tsh.parse_t("Al 1500 2; 400; penalty -10\nBo 1600 1; 390\n", "P")
    assert {r["name"]: r["spread"] for r in standings.ranked(d)} == {"Al": 0, "Bo": -10}


# --- the view: what it holds, and what never ------------------------------------------------------

A_T = ("Adams, Ann   1500 2 3; 400; board 1 1; p12 1 1\n"
       "Baker, Bob   1450 1 4; 350; board 1 2; p12 2 1\n"
       "Cole, Cy     1400 4 1; 380; board 2 1; p12 1 2\n"
       "Dunn, Di     1350 3 2; 300; board 2 2; p12 2 2\n")


def a_console() -> Console:
    c = Console("open", cheap_hash("x"))
    c.import_tsh({"config.tsh": b"division A a.t\n", "a.t": A_T.encode()})
    c.state.round.number = 2
    c.apply_pairings()
    return c


def built(c: Console, delay_s: int = 0) -> dict:
    return public.view(publicserve.hall_of(publicserve.gather(c.public_sources(), delay_s, slow=True)))


def test_find_my_table_this_round_and_the_next_when_paired():
    c = a_console()
    c.state.round.number = 1
    c.apply_pairings()
    players = {p["name"]: p for p in built(c)["players.json"]["players"]}
    adams = players["Adams, Ann"]
    assert adams["now"] == {"round": 1, "table": 1, "label": "board 1", "first": True,
                            "opponent": {"number": 2, "name": "Baker, Bob"}}
    assert adams["next"]["round"] == 2 and adams["next"]["table"] == 1 and adams["next"]["opponent"]["number"] == 3
    c.state.round.number = 2
    assert built(c)["players.json"]["players"][0]["next"] is None  # round 3 is not paired


def test_standings_are_of_the_recorded_results_too():
    c = a_console()
    before = {r["name"]: r["wins"] for r in built(c)["standings.json"]["divisions"][0]["rows"]}
    assert before == {"Adams, Ann": 1, "Cole, Cy": 1, "Baker, Bob": 0, "Dunn, Di": 0}
    t = c.state.tables[1]  # round 2, table 1: Adams v Cole, recorded from the slip
    out = c.event.result(t, {"slip": [420, 400], "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]},
                             "confirm": True}, "TD", "2026-07-04T10:00:00+00:00", 2)
    assert out["confirmed"]
    view = built(c)
    rows = view["standings.json"]["divisions"][0]
    assert rows["after_round"] == 2 and rows["rows"][0]["name"] == "Adams, Ann" and rows["rows"][0]["wins"] == 2
    c.state.set_seats(c.event.seating(2)[0], c.event.finals(2))  # what the result endpoint's adopt shows
    game = next(g for g in built(c)["pairings.json"]["rounds"][0]["games"] if g["table"] == 1)
    assert game["result"] == [420, 400]


def checked_in(c: Console, table: int, side: int, number: int, game: str = "g1", seq: int = 1) -> None:
    """A player's check-in at the clock (issue 27): their number typed and their own button pressed."""
    c.on_message(f"rackside/v1/open/table/{table}/event", json.dumps(
        {"kind": "input", "game": game, "seq": seq, "t_ns": seq, "input": "checkin", "at": None,
         "player": side, "number": number}).encode())


def recorded(c: Console, table: int, slip: list[int]) -> dict:
    """The director's result, as the result endpoint records it (resultspage.result): the players in the sides
    they sit at (Paperless.in_checkin_order), the slip's scores side 1 then side 2."""
    t = c.state.tables[table]
    seated = c.paperless.in_checkin_order(t)
    out = c.event.result(seated, {"slip": slip, "no_clock": {"reason": "r", "penalties": [0, 0]}, "confirm": True},
                         "TD", "2026-07-04T10:00:00+00:00", c.state.round.number)
    t.final = seated.final
    return out


@pytest.mark.parametrize("starter_side", [1, 2])
def test_every_name_is_on_the_side_and_score_it_played_for_both_seatings_of_the_starter(starter_side):
    """Issue 35: where TSH's starter checked in on side 2, the public pairings showed the second
    player with the starter's score and the live card the starter's time under the other's name
    (public.py paired TSH's seat order with the sides). Round 2, table 1: Adams (#1, TSH's starter)
    v Cole (#3). Adams sits at `starter_side` with 59 s left, wins 398-380: on every document each
    name has its own time and score, as the director's tile and result form have them."""
    c = a_console()
    other = 3 - starter_side
    times = {starter_side: 59000, other: 1200000}
    state = {**RUNNING, "running": starter_side, "to_move": starter_side,
             "players": [{**RUNNING["players"][i], "remaining_ms": times[i + 1]} for i in range(2)]}
    c.on_message("rackside/v1/open/table/1/state", json.dumps(state).encode())
    checked_in(c, 1, starter_side, 1)
    live = next(t for t in built(c)["live.json"]["tables"] if t["table"] == 1)
    names = {starter_side: "Adams, Ann", other: "Cole, Cy"}
    assert live["names"] == [names[1], names[2]]
    assert {p["player"]: p["remaining_ms"] for p in live["state"]["players"]} == {starter_side: 59000, other: 1200000}
    assert live["state"]["running"] == starter_side  # Adams's time runs, on Adams's side
    slip = [398, 380] if starter_side == 1 else [380, 398]
    assert recorded(c, 1, slip)["confirmed"]
    docs = built(c)
    live = next(t for t in docs["live.json"]["tables"] if t["table"] == 1)
    assert live["names"] == [names[1], names[2]] and live["result"] == slip
    game = next(g for g in docs["pairings.json"]["rounds"][0]["games"] if g["table"] == 1)
    assert [p["name"] for p in game["players"]] == ["Adams, Ann", "Cole, Cy"] and game["result"] == [398, 380]
    rows = {r["name"]: r for r in docs["standings.json"]["divisions"][0]["rows"]}
    assert (rows["Adams, Ann"]["wins"], rows["Cole, Cy"]["losses"]) == (2, 1)
    director = c.state.tables[1].final  # the tile's recorded result: its names and numbers by side
    assert director["names"] == [names[1], names[2]] and director["scores"] == slip
    assert c.paperless.checkins.view(1, c.state.tables[1].seat)["names"] == [names[1], names[2]]


def test_a_recorded_result_keeps_its_sides_after_a_restart_with_no_check_in():
    """The console keeps no check-in across a restart; the recorded result keeps the players it was
    recorded for at each side, which the director's tile and the public view pair its scores and
    final times with."""
    c = a_console()
    c.on_message("rackside/v1/open/table/1/state", json.dumps(RUNNING).encode())
    checked_in(c, 1, 2, 1)
    recorded(c, 1, [380, 398])
    c.paperless.checkins.tables.clear()  # as a restarted console has them
    assert c.state.tables[1].tile()["names"] == ["Cole, Cy", "Adams, Ann"]  # the director's tile, as recorded
    docs = built(c)
    live = next(t for t in docs["live.json"]["tables"] if t["table"] == 1)
    assert live["names"] == ["Cole, Cy", "Adams, Ann"] and live["result"] == [380, 398]
    game = next(g for g in docs["pairings.json"]["rounds"][0]["games"] if g["table"] == 1)
    assert game["result"] == [398, 380]


# What only the director may see, as values: a challenge's word and station, a command's id, who sent
# it and why, a device's version
PRIVATE_VALUES = {"SECRETWORD", "cmd-abc123", "clock-7f3e", "penalty-note", "TD Sam", "0.0.0-private"}


def test_no_private_field_by_key_or_value_in_any_document():
    """Every document built from a hall whose state holds a challenge with per-word results, a
    command awaiting its ack, a device's status, version and health, a live penalty and overtime,
    and a recorded result with its note and who recorded it. A side's time in overtime is shown, as
    the table's own display shows it (negative remaining_ms); its penalty points never are, by key
    (`penalty`, `overtime_s`) or in any field, before the result is recorded (docs/public.md). What the
    director's tile shows everyone at the table sees too, and the public page shows it as the tile
    does (issue 35): a forfeit and how the game ended, a challenge in progress (that there is one:
    not its station, words or verdict), a clock offline."""
    c = a_console()
    hall = "open"
    state = {"seq": 9, "game": "g1", "phase": "running", "running": 1, "to_move": 1, "sent_at": "2026-07-04T10:00:00+00:00",
             "players": [{"player": 1, "remaining_ms": -65000, "overtime_s": 65, "penalty": 20, "forfeit": False},
                         {"player": 2, "remaining_ms": 100000, "overtime_s": 0, "penalty": 0, "forfeit": False}],
             "ending": None, "rules": {"game_time_ms": 1500000}, "version": "0.0.0-private"}
    c.on_message(f"rackside/v1/{hall}/table/1/state", json.dumps(state).encode())
    c.on_message(f"rackside/v1/{hall}/table/1/status", json.dumps({"status": "online", "version": "0.0.0-private"}).encode())
    c.state.command_sent(1, {"id": "cmd-abc123", "cmd": "identify", "by": "TD Sam", "reason": "penalty-note"})
    challenge = {"id": "c1", "table": 1, "verdict": "pending", "words": 1, "time": "2026-07-04T10:00:00+00:00"}
    c.on_message(f"rackside/v1/{hall}/station/clock-7f3e/challenge", json.dumps(challenge).encode())
    c.on_message(f"rackside/v1/{hall}/station/clock-7f3e/detail",
                 json.dumps({"id": "c1", "words": [{"word": "SECRETWORD", "valid": False}]}).encode())
    director = json.dumps(c.snapshot()) + json.dumps(c.state.detail(1))
    assert "SECRETWORD" in director and "cmd-abc123" in director  # the director's snapshot has them
    docs = built(c)
    text = json.dumps(docs)
    for value in PRIVATE_VALUES:
        assert value not in text, value
    private_keys = {"penalty", "overtime_s", "word_results", "words", "command", "history",
                    "status", "version", "health", "health_problems", "problems", "note", "by", "decision", "no_clock",
                    "station", "stations", "feed", "csrf", "user", "thresholds", "health_thresholds", "tsh_problems"}

    def keys(v):
        if isinstance(v, dict):
            for k, x in v.items():
                yield k
                yield from keys(x)
        elif isinstance(v, list):
            for x in v:
                yield from keys(x)

    assert set(keys(docs)) & private_keys == set()
    live = next(t for t in docs["live.json"]["tables"] if t["table"] == 1)
    assert live["state"]["players"][0] == {"player": 1, "remaining_ms": -65000, "absent": False, "forfeit": False}  # -1:05
    assert live["challenge"] is True and live["offline"] is False
    assert c.state.tables[1].state["players"][0]["penalty"] == 20  # (the director's, from the clock: 5.3)
    assert live["state"]["running"] == 1 and live["state"]["sent_at"] == state["sent_at"]


# --- the feed: ETags, the delay, the folder -------------------------------------------------------


def feed_of(c: Console, tmp_path: Path | None, delay_s: int = 0) -> publicserve.Feed:
    return publicserve.Feed(c.public_sources(), config.PublicConfig(folder=tmp_path, delay_s=delay_s, every_s=1))


def test_an_unchanged_document_keeps_its_etag_and_a_changed_one_gets_a_new_one():
    async def go():
        c = a_console()
        f = feed_of(c, None)
        await f.build(0.0)
        first = dict(f.latest)
        await f.build(1.0)
        assert f.latest["standings.json"] is first["standings.json"]
        c.event.result(c.state.tables[1], {"slip": [420, 400], "no_clock": {"reason": "r", "penalties": [0, 0]},
                                           "confirm": True}, "TD", "2026-07-04T10:00:00+00:00", 2)
        c.public_out = f
        c.tsh_changed()  # what the result endpoint does: the feed is told
        await f.build(2.0)
        assert f.latest["standings.json"].etag != first["standings.json"].etag
        assert f.latest["players.json"] is first["players.json"]  # nobody's table changed
        assert json.loads(f.latest["hall.json"].body)["versions"]["standings.json"] == f.latest["standings.json"].etag
    asyncio.run(go())


def test_live_json_built_alone_keeps_each_tables_seat():
    """Between results only live.json is built (the seating is not worked out again): its tables
    still say their division, TSH's table and players (a defect: they came out with none)."""
    async def go():
        c = a_console()
        c.on_message("rackside/v1/open/table/1/state", json.dumps({
            "seq": 1, "game": "g1", "phase": "running", "running": 1, "sent_at": "2026-07-04T10:00:00+00:00",
            "players": [{"player": 1, "remaining_ms": 1000, "overtime_s": 0, "penalty": 0, "forfeit": False},
                        {"player": 2, "remaining_ms": 1000, "overtime_s": 0, "penalty": 0, "forfeit": False}],
            "ending": None}).encode())
        f = feed_of(c, None)
        await f.build(0.0)
        await f.build(1.0)  # nothing changed but the clocks: live.json alone
        table = json.loads(f.latest["live.json"].body)["tables"][0]
        assert (table["label"], table["division"], table["names"]) == ("board 1", "A", ["Adams, Ann", "Cole, Cy"])
    asyncio.run(go())


def test_not_modified_reads_if_none_match_as_rfc_9110():
    assert publicserve.not_modified('"a", W/"b"', '"b"') and publicserve.not_modified("*", '"x"')
    assert not publicserve.not_modified('"a"', '"b"') and not publicserve.not_modified(None, '"b"')


def test_the_delay_shows_the_hall_as_it_was_and_nothing_newer(tmp_path):
    """With delay_s 600, the view of t=0 is shown from t=600 on, and the view of t=300 not before 900."""
    async def go():
        c = a_console()
        f = feed_of(c, tmp_path, delay_s=600)
        await f.build(0.0)
        old = f.latest
        assert f.due(599.0) is None  # nothing is old enough yet: nothing is shown
        c.event.result(c.state.tables[1], {"slip": [420, 400], "no_clock": {"reason": "r", "penalties": [0, 0]},
                                           "confirm": True}, "TD", "2026-07-04T10:00:00+00:00", 2)
        f.changed()
        await f.build(300.0)
        assert f.due(600.0) is old  # the hall as it was at t=0, not the result recorded at t=300
        assert f.due(899.0) is None
        shown = f.due(900.0)
        assert shown["standings.json"].etag != old["standings.json"].etag
        assert json.loads(old["live.json"].body)["delay_s"] == 600
        assert f.every_s == max(1, 600 / publicserve.MAX_DELAYED)
    asyncio.run(go())


def test_the_delayed_views_are_bounded():
    async def go():
        f = feed_of(a_console(), None, delay_s=3600)
        for i in range(publicserve.MAX_DELAYED + 50):
            await f.build(float(i))
        assert len(f.delayed) == publicserve.MAX_DELAYED
    asyncio.run(go())


def test_the_folder_gets_every_file_whole_and_only_what_changed(tmp_path):
    async def go():
        c = a_console()
        f = feed_of(c, tmp_path)
        task = asyncio.create_task(f.run())
        await asyncio.wait_for(f.shown.wait(), 10)  # set once the folder has the view
        task.cancel()
        names = sorted(p.name for p in tmp_path.iterdir())
        assert names == sorted(public.FILES + public.PAGE_FILES)
        assert json.loads((tmp_path / "hall.json").read_text())["hall"] == "open"
        assert (tmp_path / "index.html").read_bytes() == (publicserve.STATIC / "public.html").read_bytes()
        assert oct((tmp_path / "standings.json").stat().st_mode & 0o777) == "0o644"
        mtime = (tmp_path / "standings.json").stat().st_mtime_ns
        await f.folder.write(f.current)  # the same view again: nothing rewritten
        assert (tmp_path / "standings.json").stat().st_mtime_ns == mtime
    asyncio.run(go())


# --- a restart with a delay: the folder's last view, read back whole --------------------------------

DOWN_S = 600  # how long the console was down, in these tests (the folder's files are dated back by this)


def a_written_folder(tmp_path: Path, delay_s: int = 60) -> tuple[Console, dict]:
    """A console's folder as a console with `delay_s` left it: its last delayed view, written
    DOWN_S ago. The folder's files (name -> bytes)."""
    import os
    import time

    async def go():
        c = a_console()
        f = feed_of(c, tmp_path, delay_s=delay_s)
        await f.build(0.0)
        f.current = {**f.page, **f.due(float(delay_s))}
        await f.folder.write(f.current)
        return c
    c = asyncio.run(go())
    back = time.time() - DOWN_S
    for p in tmp_path.iterdir():
        os.utime(p, (back, back))
    return c, {p.name: p.read_bytes() for p in tmp_path.iterdir()}


def resumed(c: Console, folder: Path | None, delay_s: int = 60) -> publicserve.Feed:
    f = feed_of(c, folder, delay_s=delay_s)
    asyncio.run(f.resume())
    return f


def test_a_restarted_console_shows_the_folders_last_delayed_view_until_its_own_is_old_enough(tmp_path, caplog):
    """[public] delay_s with a folder: the views waiting out the delay were in memory, but the folder
    holds the last one shown. Read back whole, it is what the listener answers (with its ETags: a
    page's conditional request is a 304 still) until a view of this run is delay_s old."""
    c, files = a_written_folder(tmp_path)
    f = resumed(c, tmp_path)
    for name in public.FILES:
        assert f.current[name].body == files[name] and f.current[name].etag == publicserve.Doc.of(name, files[name]).etag
    assert json.loads(f.current["hall.json"].body)["round"] == 2 and "back_at" not in json.loads(f.current["hall.json"].body)
    assert f.current["index.html"] is f.page["index.html"]
    assert f.folder.written == {n: publicserve.Doc.of(n, files[n]).etag for n in public.FILES}  # not written again
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]

    async def own_view_due():
        await f.build(0.0)
        return f.due(60.0)
    assert asyncio.run(own_view_due()) is not None  # (run() shows it then, in place of the folder's)


def _truncated(files):
    return {"players.json": files["players.json"][:-7]}


def _not_finite(files):
    return {"standings.json": b'{"divisions": [NaN]}'}


def _not_an_object(files):
    return {"live.json": b"[]"}


def _not_utf8(files):
    return {"pairings.json": b'{"rounds": "\xff"}'}


def _newer_than_hall_json(files):  # a document of the next view written, the console killed before its hall.json
    return {"live.json": files["live.json"].replace(b'"round":2', b'"round":2,"x":1', 1)}


def _another_halls(files):
    hall = json.loads(files["hall.json"])
    return {"hall.json": json.dumps({**hall, "hall": "elsewhere"}).encode()}


def _versions_missing(files):
    hall = json.loads(files["hall.json"])
    return {"hall.json": json.dumps({k: v for k, v in hall.items() if k != "versions"}).encode()}


@pytest.mark.parametrize("damage, says", [
    (_truncated, "players.json: not JSON"), (_not_finite, "standings.json: not JSON"), (_not_an_object, "live.json: not a JSON object"),
    (_not_utf8, "pairings.json: not JSON"), (_newer_than_hall_json, "live.json is not the one hall.json names"),
    (_another_halls, "of the hall 'elsewhere', not 'open'"), (_versions_missing, "hall.json: names no versions"),
    (lambda files: {"standings.json": None}, "standings.json is missing"),
])
def test_a_damaged_folder_is_refused_whole_with_one_line(tmp_path, caplog, damage, says):
    import os

    c, files = a_written_folder(tmp_path)
    for name, body in damage(files).items():
        if body is None:
            os.unlink(tmp_path / name)
        else:
            (tmp_path / name).write_bytes(body)
    f = resumed(c, tmp_path)
    assert json.loads(f.current["hall.json"].body)["round"] is None and "back_at" in json.loads(f.current["hall.json"].body)
    assert set(f.current) == set(public.PAGE_FILES) | {"hall.json"}  # the waiting page: nothing of the folder's
    lines = [r.getMessage() for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert len(lines) == 1 and says in lines[0] and "\n" not in lines[0], lines
    assert {p.name for p in tmp_path.iterdir()} == set(files) - {n for n, b in damage(files).items() if b is None}  # left as it is


def test_a_folder_document_larger_than_its_bound_is_refused(tmp_path, caplog, monkeypatch):
    from rackside.hall.console.common import limits

    c, files = a_written_folder(tmp_path)
    monkeypatch.setattr(limits, "PUBLIC_DOC_BYTES", max(len(files[n]) for n in public.FILES) - 1)
    f = resumed(c, tmp_path)
    assert json.loads(f.current["hall.json"].body)["round"] is None
    lines = [r.getMessage() for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert len(lines) == 1 and "bytes, at most" in lines[0], lines


def read_view_promptly(folder: Path, delay_s: int = 60):
    """read_view in a thread of its own (a daemon: a read that blocks must not hang the tests):
    what it returned or raised, or a failure if it has not finished in 30 s."""
    import threading

    out = {}

    def run():
        try:
            out["view"] = publicserve.read_view(folder, "open", delay_s)
        except BaseException as e:  # noqa: BLE001 (handed to the test)
            out["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "read_view did not finish (blocked on a file of the folder)"
    return out


def _a_fifo(path: Path) -> None:
    import os

    os.unlink(path)
    os.mkfifo(path)


def _a_symlink_to(target: str | None):
    def make(path: Path) -> None:
        import os

        kept = path.with_name(path.name + ".kept")
        os.rename(path, kept)
        os.symlink(target or kept, path)  # (None: to the genuine document, moved aside)
    return make


@pytest.mark.parametrize("name", ["hall.json", "players.json"])
@pytest.mark.parametrize("make, says", [
    (_a_fifo, "not a regular file"), (_a_symlink_to("/dev/zero"), "a symbolic link"), (_a_symlink_to(None), "a symbolic link"),
])
def test_a_folder_document_that_is_no_regular_file_is_refused_promptly(tmp_path, name, make, says):
    """A FIFO in the folder would block a plain read for ever (the public feed never started), a
    link to /dev/zero read without bound: each is refused at once, in one line naming the file."""
    a_written_folder(tmp_path)
    make(tmp_path / name)
    out = read_view_promptly(tmp_path)
    assert isinstance(out.get("error"), publicserve.FolderViewError), out
    line = str(out["error"])
    assert line.startswith(name) and says in line and "\n" not in line, line


def test_a_folder_read_back_whole_promptly_is_shown(tmp_path):
    _, files = a_written_folder(tmp_path)
    view = read_view_promptly(tmp_path)["view"]
    assert {n: d.body for n, d in view.items()} == {n: files[n] for n in public.FILES}


def test_a_folders_view_younger_than_the_delay_is_not_shown(tmp_path, caplog):
    """The folder's view was shown delayed by 60 s and written DOWN_S ago: at least DOWN_S + 60 s
    old now. Under a delay longer than that it is still too new: the waiting page, said in one line."""
    c, _ = a_written_folder(tmp_path)
    f = resumed(c, tmp_path, delay_s=DOWN_S + 120)
    assert json.loads(f.current["hall.json"].body)["round"] is None
    lines = [r.getMessage() for r in caplog.records if r.levelname in ("WARNING", "ERROR", "INFO") and "public folder" in r.getMessage()]
    assert len(lines) == 1 and "too new" in lines[0], lines
    assert json.loads(resumed(c, tmp_path, delay_s=DOWN_S + 30).current["hall.json"].body)["round"] == 2  # 60 + 600 s old: shown


def test_an_empty_folder_or_none_is_the_waiting_page_and_no_complaint(tmp_path, caplog):
    c = a_console()
    for folder in (tmp_path, None):
        assert json.loads(resumed(c, folder).current["hall.json"].body)["round"] is None
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert resumed(c, None, delay_s=0).current == {}  # no delay: the first view built is shown at once, as before


# --- [public]'s keys, each checked with one clear line -----------------------------------------------

BASE = '[console]\nhall = "h"\nurl = "mqtt://127.0.0.1:1883"\nusername = "d"\nmqtt_password = "p"\npassword = "{pw}"\nlisten = "127.0.0.1:8080"\n'


@pytest.mark.parametrize("section, says", [
    ('[public]\nlisten = "0.0.0.0:8080"\n', "[public] listen = '0.0.0.0:8080': allowed is a port other than the director's"),
    ('[public]\nlisten = "nohost"\n', "[public] listen = 'nohost': allowed is HOST:PORT with a port from 1 to 65535"),
    ('[public]\nfolder = "missing"\n', "[public] folder must be the path of a folder the console can write"),
    ('[public]\nfolder = "."\ndelay_s = 3601\n', "[public] delay_s = 3601: allowed are whole seconds from 0 to 3600"),
    ('[public]\nfolder = "."\ndelay_s = -1\n', "[public] delay_s = -1: allowed are whole seconds from 0 to 3600"),
    ('[public]\nfolder = "."\ndelay_s = 1.5\n', "[public] delay_s = 1.5: allowed are whole seconds from 0 to 3600"),
    ('[public]\nfolder = "."\nevery_s = 0\n', "[public] every_s = 0: allowed are whole seconds from 1 to 60"),
    ('[public]\nfolder = "."\ndelay = 60\n', "[public] has unknown key 'delay': allowed keys are listen, folder, delay_s, every_s"),
    ('[public]\ndelay_s = 60\n', "[public] needs listen (its own listener), folder (static files) or both"),
])
def test_a_bad_public_key_is_one_line_naming_it_and_what_is_allowed(tmp_path, section, says):
    path = tmp_path / "hall.toml"
    path.write_text(BASE.format(pw=cheap_hash("x")) + section)
    with pytest.raises(config.ConfigError) as e:
        config.load(path)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_good_public_keys(tmp_path):
    path = tmp_path / "hall.toml"
    (tmp_path / "www").mkdir()
    path.write_text(BASE.format(pw=cheap_hash("x")) + '[public]\nlisten = "0.0.0.0:8081"\nfolder = "www"\ndelay_s = 900\n')
    p = config.load(path).public
    assert (p.listen_host, p.listen_port, p.folder, p.delay_s, p.every_s) == ("0.0.0.0", 8081, tmp_path / "www", 900, 2)
    path.write_text(BASE.format(pw=cheap_hash("x")))
    assert config.load(path).public is None


def test_hall_json_names_each_documents_etag_and_an_idle_hall_changes_nothing():
    """A page polls hall.json alone: it names the others' ETags. With no press and no result,
    nothing changes, live.json included (its build time moves on only with a change)."""
    async def go():
        f = feed_of(a_console(), None)
        await f.build(0.0)
        first = dict(f.latest)
        versions = json.loads(first["hall.json"].body)["versions"]
        assert versions == {n: first[n].etag for n in public.FILES if n != "hall.json"}
        await f.build(1.0)
        assert {n: d.etag for n, d in f.latest.items()} == {n: d.etag for n, d in first.items()}
    asyncio.run(go())


# --- no device in the view (a table's status, a clock at a table TSH did not seat) ---------------------

RUNNING = {"seq": 1, "game": "g1", "phase": "running", "running": 1, "to_move": 1, "sent_at": "2026-07-04T10:00:00+00:00",
           "players": [{"player": 1, "remaining_ms": 1000, "overtime_s": 0, "penalty": 0, "forfeit": False},
                       {"player": 2, "remaining_ms": 1000, "overtime_s": 0, "penalty": 0, "forfeit": False}],
           "ending": None}


def test_a_clock_going_offline_is_shown_as_the_director_sees_it():
    """Issue 35: a real table whose clock quit was OFFLINE on the director's page and 25:00 / 25:00
    as normal on the public one. Its Last Will marks the live table offline (the page freezes its
    times as of its last state and says since when, static/tilestate.js), and nothing else of the
    device (its version, health, name) is in any document; online again, it is as before."""
    c = a_console()
    c.on_message("rackside/v1/open/table/1/state", json.dumps(RUNNING).encode())
    c.on_message("rackside/v1/open/table/1/status", json.dumps({"status": "online"}).encode())
    online = built(c)
    c.on_message("rackside/v1/open/table/1/status", json.dumps({"status": "offline"}).encode())
    assert c.state.tables[1].status == "offline"
    offline = built(c)
    table = next(t for t in offline["live.json"]["tables"] if t["table"] == 1)
    assert table["offline"] is True and table["state"]["sent_at"] == RUNNING["sent_at"]
    was = next(t for t in online["live.json"]["tables"] if t["table"] == 1)
    assert {**table, "offline": False} == was
    c.on_message("rackside/v1/open/table/1/status", json.dumps({"status": "online"}).encode())
    assert publicserve._without_time(built(c)["live.json"]) == publicserve._without_time(online["live.json"])
    assert online["hall.json"]["page"]["stale_s"] == public.stale_s(1)


def test_a_clock_at_a_table_tsh_did_not_seat_is_not_shown():
    """Only the tables with a seat (a TSH pairing) are live tables: a clock that speaks from table 9,
    where nobody is seated, shows no table (a defect: it was listed, which showed a device was there)."""
    c = a_console()
    c.on_message("rackside/v1/open/table/9/state", json.dumps(RUNNING).encode())
    assert 9 in c.state.tables
    tables = [t["table"] for t in built(c)["live.json"]["tables"]]
    assert tables == [1, 2]
