"""Results under the rules and TSH (issue 18): lateness forfeits (2.3.6), the 5.3.3 director's
decision, TSH's score limits, the durable store with its audit trail (5.4.1), every division on
hall-wide tables, and the exports fed to a model of TSH's own score entry (support/tshmodel.py;
every division shape and real event: tests/test_tsh_scoreentry.py)."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from pathlib import Path

import pytest

from rackside.hall.console.scoring import hallplan, results, tsh
from rackside.hall.console.common import limits
from rackside.hall.console.state.event import Event
from rackside.hall.console.state.hallstate import HallState
from rackside.hall.console.scoring.resultstore import ResultStore
from rackside.hall.console.scoring.results import ClockResult, Limits, ResultError, decide, final_scores
from support.tshmodel import Tsh

DATA = Path(__file__).parent / "data" / "tsh"

TWO_DIVISIONS = {
    "config.tsh": b"# two divisions in one hall\ndivision A a.t\ndivision B b.t\nconfig max_rounds = 3\n",
    "a.t": (b"Adams, Ann   1500 2 3; 400; board 1 2; p12 1 2\nBaker, Bob   1400 1 4; 380; board 1 1; p12 2 1\n"
            b"Cole, Cy     1300 4 1; 390; board 2 2; p12 1 1\nDunn, Di     1200 3 2; 370; board 2 1; p12 2 2\n"),
    "b.t": (b"M\xfcller, Jo  1600 2 0; ; board 1 0; p12 2 0\nNoor, Ida    1550 1 3; ; board 1 1; p12 1 1\n"
            b"Ortiz, Al    1500 0 2; ; board 0 1; p12 0 2\n"),
}


def clock_result(ending="end", penalties=(0, 0), overtime=(0, 0), forfeits=(), margin=None):
    return ClockResult(4, "g", ending, penalties, overtime, (0, 0), forfeits, margin)


def result_event(ending="end", penalties=(0, 0), forfeits=(), margin=None, game="g1"):
    """A clock's result event as docs/hall.md has it (contract.py checks it)."""
    players = [{"player": p, "remaining_ms": 1000, "overtime_s": penalties[p - 1] // 10 * 60, "penalty": penalties[p - 1],
                "forfeit": p in forfeits} for p in (1, 2)]
    return {"kind": "result", "game": game, "seq": 0, "ending": ending, "players": players, "forfeits": list(forfeits),
            "winner_by_forfeit": None, "lateness_margin": margin, "at": "2026-11-30T11:02:40.008+00:00"}


@pytest.fixture
def hall(tmp_path):
    """An event with two divisions, seated for round 1, a real store on disk."""
    event = Event(ResultStore(tmp_path / "results.sqlite"))
    assert event.import_files(TWO_DIVISIONS) == []
    state = HallState("h")
    seats, problems = event.seating(1)
    state.set_seats(seats, event.finals(1))
    return event, state


def finish(state: HallState, n: int, **kw) -> None:
    state.on_message(f"rackside/v1/h/table/{n}/event", json.dumps(result_event(**kw)).encode())
    assert state.tables[n].result is not None, state.tables[n].problems


# --- every division in one hall --------------------------------------------------------------------


def test_divisions_boards_are_hall_wide_tables_and_tiles_name_their_division(hall):
    event, state = hall
    tiles = {n: state.tables[n].tile() for n in sorted(state.tables)}
    assert {n: (t["division"], t["names"]) for n, t in tiles.items()} == {
        1: ("A", ["Adams, Ann", "Baker, Bob"]),
        2: ("A", ["Cole, Cy", "Dunn, Di"]),
        3: ("B", ["Noor, Ida", "Müller, Jo"]),  # division B's board 1, after A's two boards; Latin-1 read as TSH does
    }


def test_tsh_tables_config_maps_boards_to_tables_and_a_clash_is_reported():
    divs = [tsh.parse_t(tsh.decode_t(TWO_DIVISIONS["a.t"]), "A", "a.t"), tsh.parse_t(tsh.decode_t(TWO_DIVISIONS["b.t"]), "B", "b.t")]
    cfg = tsh.parse_config("division A a.t\ndivision B b.t\nconfig tables = {'A' => [11, 12], 'B' => [12]}\n")
    seats, problems = hallplan.plan(divs, cfg, 1)
    assert {n: (s.division, s.board) for n, s in seats.items()} == {11: ("A", 1), 12: ("A", 2)}
    assert problems == ["b.t:2: division B round 1: players 2 and 1 (board 1) would play at table 12, "
                        "where division A board 2 plays: not placed"]
    labelled = tsh.parse_config("division A a.t\nconfig tables = {'A' => ['A1', 'A2']}\n")
    seats, _ = hallplan.plan(divs[:1], labelled, 1)
    assert [(n, s.label) for n, s in sorted(seats.items())] == [(1, "A1"), (2, "A2")]


def test_real_event_three_divisions_share_the_hall():
    divs = tsh.parse_tourney_js((DATA / "albany-2024/tourney.js").read_text(encoding="utf-8"))
    seats, problems = hallplan.plan(divs, None, 1)
    assert not problems and len(seats) == 12 + 14 + 17
    by_div = {}
    for n, s in seats.items():
        by_div.setdefault(s.division, []).append(n)
    assert [min(by_div[d]) for d in "ABC"] == [1, 13, 27]  # each division's boards after the one before's


def test_a_division_change_leaves_no_stale_players_or_notes(hall):
    event, state = hall
    finish(state, 3, game="g-b")
    out = event.result(state.tables[3], {"slip": [400, 350], "confirm": True}, "td", "2026-01-01T10:00:00Z")
    assert out["recorded"] == "confirm" and state.tables[3].tile()["final"]["scores"] == [400, 350]
    seats, _ = event.seating(2)  # round 2: B plays 2 v 3 on board 1 (table 3 again), A's boards 1 and 2
    state.set_seats(seats, event.finals(2))
    t3 = state.tables[3].tile()
    assert t3["names"] == ["Noor, Ida", "Ortiz, Al"] and t3["final"] is None and t3["result"] is None
    seats, _ = event.seating(1)  # back to round 1: the result is there again, from the store
    state.set_seats(seats, event.finals(1))
    assert state.tables[3].tile()["final"]["scores"] == [400, 350] and state.tables[3].tile()["result"] is not None


def test_a_result_that_came_before_the_tsh_files_belongs_to_the_game_then_seated(tmp_path):
    event, state = Event(ResultStore(None)), HallState("h")
    finish(state, 1)  # the clocks play before the director imports TSH's files
    assert state.tables[1].tile()["result"] is not None and state.tables[1].tile()["names"] == ["", ""]
    event.import_files(TWO_DIVISIONS)
    seats, _ = event.seating(1)
    state.set_seats(seats, event.finals(1))
    assert event.result(state.tables[1], {"slip": [400, 380], "confirm": True}, "td", "t")["recorded"] == "confirm"
    seats, _ = event.seating(2)
    state.set_seats(seats, event.finals(2))
    assert state.tables[1].tile()["result"] is None  # round 2's game here has no result yet


# --- 2.3.6: lateness forfeits --------------------------------------------------------------------


def test_lateness_forfeit_is_a_75_point_win_the_director_may_increase_2_3_6_a():
    r = clock_result("lateness forfeit", forfeits=(2,), margin=75)
    assert final_scores(r, None).scores == (75, -75) and final_scores(r, None).forfeits == (2,)
    assert final_scores(r, None, margin=100).scores == (100, -100)
    with pytest.raises(ResultError, match=r"at least 75 points \(2.3.6\(a\)\)"):
        final_scores(r, None, margin=50)


def test_lateness_forfeit_goes_to_tsh_as_its_forfeit_and_is_not_rated_2_3_6_b(hall):
    event, state = hall
    finish(state, 2, ending="lateness forfeit", forfeits=(2,), margin=75)
    event.result(state.tables[2], {"margin": 100, "confirm": True}, "td", "t")
    finish(state, 1, penalties=(10, 0))
    event.result(state.tables[1], {"slip": [412, 388], "confirm": True}, "td", "t")
    rows = event.export_rows("A", 1)
    ex = results.to_tsh("A", 1, rows)
    assert ex.text == "pair 3 0 1 A\npair 4 0 1 A\na 1 A\n1 402 2 388\n3 100\n4 -100\n\n"
    csv = results.to_csv(rows).splitlines()
    assert ",lateness forfeit,no," in csv[2] and ",end,yes," in csv[1]  # rated: no (2.3.6(b))
    assert event.tsh_export("A", 1).text == ex.text  # division A has no byes
    tsh_now = Tsh.load(event.divisions.values(), event.config.options, scored_rounds=0)  # a.t has round 1's scores
    assert [m for m in tsh_now.feed(ex.text) if m.error] == [] and tsh_now.unscored("A", 1) == []


def test_both_players_late_needs_the_director_2_3_5():
    f = final_scores(clock_result("lateness forfeit", forfeits=(1, 2), margin=75), None)
    assert f.needs_director and f.forfeits == (1, 2)
    d = decide(f, "both absent at the end of the game time")
    assert d.scores == (-75, -75) and not d.needs_director and d.decision


# --- 5.3.3: overtime forfeit, the director's decision -----------------------------------------------


def test_overtime_forfeit_is_a_loss_with_100_points_off_5_3_3():
    f = final_scores(clock_result("overtime forfeit", (0, 100), (0, 600), (2,)), (450, 300))
    assert f.scores == (450, 200) and not f.needs_director


def test_a_5_3_3_case_needing_the_director_cannot_be_confirmed_until_decided(hall):
    event, state = hall
    finish(state, 1, ending="overtime forfeit", penalties=(100, 0), forfeits=(1,))
    preview = event.result(state.tables[1], {"slip": [480, 300]}, "td", "t")
    assert preview["needs_director"] and preview["scores"] == [380, 300]
    with pytest.raises(results.NeedsDirector, match="director's decision with a reason first"):
        event.result(state.tables[1], {"slip": [480, 300], "confirm": True}, "td", "t")
    with pytest.raises(ResultError, match="needs a reason"):
        event.result(state.tables[1], {"slip": [480, 300], "confirm": True, "decision": {"scores": [299, 300]}}, "td", "t")
    out = event.result(state.tables[1], {"slip": [480, 300], "confirm": True,
                                          "decision": {"scores": [299, 300], "reason": "forfeit stands: a loss by 1 (5.3.3)"}},
                       "Chief TD", "2026-01-01T12:00:00Z")
    assert out["recorded"] == "decide" and out["scores"] == [299, 300]
    (audit,) = event.store.audit("A")
    assert (audit["action"], audit["who"], audit["after"]["decision"]) == ("decide", "Chief TD", "forfeit stands: a loss by 1 (5.3.3)")
    assert "forfeit stands" in results.to_csv(event.export_rows("A", 1))
    assert results.to_tsh("A", 1, event.export_rows("A", 1)).text == "a 1 A\n1 299 2 300\n\n"


def test_a_decision_is_refused_where_none_is_needed(hall):
    event, state = hall
    finish(state, 1)
    with pytest.raises(ResultError, match="needs no decision"):
        event.result(state.tables[1], {"slip": [400, 300], "decision": {"scores": [1, 2], "reason": "x"}}, "td", "t")


# --- TSH's score limits ----------------------------------------------------------------------------


def test_score_limits_follow_tsh_default_and_its_config():
    with pytest.raises(ResultError, match=r"between -149 and 1499 \(TSH's limits"):
        final_scores(clock_result(), (1500, 300))
    assert final_scores(clock_result(), (1499, 0)).scores == (1499, 0)
    assert final_scores(clock_result(), (1800, 300), limits=Limits(max_score=2000)).scores == (1800, 300)
    with pytest.raises(ResultError, match="cannot be negative"):
        final_scores(clock_result(), (-5, 300))
    cfg = tsh.parse_config("division a a.t\nconfig max_score = 2000\n")
    assert cfg.max_score == 2000


def test_a_t_file_sent_as_text_is_not_decoded_twice_and_comes_back_after_a_restart(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    event = Event(store)
    assert event.import_files({"b.t": TWO_DIVISIONS["b.t"].decode("latin-1")}) == []
    assert event.divisions["b"].players[1].name == "Müller, Jo"
    again = Event(ResultStore(tmp_path / "r.sqlite"))
    assert again.restore() == [] and again.divisions["b"].players[1].name == "Müller, Jo"


def test_event_takes_max_score_from_config_tsh(tmp_path):
    event = Event(ResultStore(None))
    event.import_files({**TWO_DIVISIONS, "config.tsh": TWO_DIVISIONS["config.tsh"] + b"config max_score = 999\n"})
    assert event.limits.max_score == 999


# --- the store: durable, audited, keyed by game ------------------------------------------------------


def test_store_is_wal_synchronous_and_survives_reopening(tmp_path, hall):
    event, state = hall
    finish(state, 1)
    event.result(state.tables[1], {"slip": [400, 380], "confirm": True}, "td", "t1")
    db = sqlite3.connect(tmp_path / "results.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert event.store.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    again = ResultStore(tmp_path / "results.sqlite")
    (r,) = again.results("A", 1)
    assert (r.numbers, r.scores, r.by) == ((1, 2), (400, 380), "td")


def test_a_correction_needs_a_reason_and_is_audited_5_4_1(hall):
    event, state = hall
    finish(state, 1)
    event.result(state.tables[1], {"slip": [400, 380], "confirm": True}, "td", "t1")
    assert event.result(state.tables[1], {"slip": [400, 380], "confirm": True}, "td", "t2")["recorded"] == "same"
    with pytest.raises(ResultError, match=r"correction needs a reason \(5.4.1\)"):
        event.result(state.tables[1], {"slip": [380, 400], "confirm": True}, "td", "t3")
    out = event.result(state.tables[1], {"slip": [380, 400], "confirm": True, "correction": "scores reversed on the slip"},
                       "Chief TD", "t4")
    assert out["recorded"] == "correct"
    correct, confirm = event.store.audit("A", 1)
    assert (confirm["action"], confirm["before"], confirm["after"]["scores"]) == ("confirm", None, [400, 380])
    assert (correct["action"], correct["who"], correct["reason"]) == ("correct", "Chief TD", "scores reversed on the slip")
    assert (correct["before"]["scores"], correct["after"]["scores"]) == ([400, 380], [380, 400])


def test_results_of_every_division_and_round_stay_and_export_separately(hall):
    event, state = hall
    finish(state, 1)
    finish(state, 3)
    event.result(state.tables[1], {"slip": [400, 380], "confirm": True}, "td", "t")
    event.result(state.tables[3], {"slip": [410, 390], "confirm": True}, "td", "t")
    assert results.to_tsh("A", 1, event.export_rows("A", 1)).text == "a 1 A\n1 400 2 380\n\n"
    assert event.tsh_export("B", 1).text == "a 1 B\n2 410 1 390\n3 50\n\n"  # Ortiz's bye, at TSH's bye spread
    tsh_now = Tsh.load(event.divisions.values(), event.config.options)
    assert [m for m in tsh_now.feed(event.tsh_export("B", 1).text) if m.error] == [] and tsh_now.unscored("B", 1) == []


def test_the_same_t_file_imported_from_many_folders_is_kept_once_and_a_restart_still_reads_it(tmp_path):
    # A director imports the round's .t file again and again during a day, from wherever it was
    # saved: the kept copy is the division's file, not one per folder (it grew past MAX_FILES and
    # the console then refused to start).
    from rackside.hall.console.state.event import MAX_FILES

    store = ResultStore(tmp_path / "r.sqlite")
    event = Event(store)
    for i in range(MAX_FILES + 5):
        assert event.import_files({f"/home/director/round{i}/b.t": TWO_DIVISIONS["b.t"]}) == []
    assert len(store.setting("tsh_files")) == 1
    again = Event(ResultStore(tmp_path / "r.sqlite"))
    assert again.restore() == [] and again.divisions["b"].players[1].name == "Müller, Jo"


def test_kept_files_that_cannot_be_read_again_are_a_problem_not_a_console_that_will_not_start(tmp_path):
    from rackside.hall.console.state.event import FILES_KEY, MAX_FILES

    store = ResultStore(tmp_path / "r.sqlite")
    store.put_setting(FILES_KEY, {f"d{i}.t": {"text": "Ann 1500 2;\n"} for i in range(MAX_FILES + 1)})
    problems = Event(store).restore()
    assert len(problems) == 1 and "kept TSH files" in problems[0] and str(MAX_FILES) in problems[0]
    store.put_setting(FILES_KEY, {"a.t": "not base64!"})
    assert "kept TSH files" in Event(store).restore()[0]


def test_the_same_file_imported_again_from_elsewhere_is_kept_once(tmp_path):
    """Kept by file name: the console's state never grows with every import of the same event."""
    store = ResultStore(tmp_path / "r.sqlite")
    event = Event(store)
    for folder in ("/one", "/two", "C:\\\\three"):
        event.import_files({f"{folder}/a.t": TWO_DIVISIONS["a.t"]})
    assert list(store.setting("tsh_files")) == ["a.t"]


def clock_state(game: str, seq: int, phase: str = "running", remaining=(600_000, 900_000)) -> bytes:
    players = [{"player": p, "remaining_ms": remaining[p - 1], "overtime_s": 0, "penalty": 0, "forfeit": False} for p in (1, 2)]
    return json.dumps({"seq": seq, "game": game, "phase": phase, "running": 1 if phase == "running" else None,
                       "sent_at": "2026-11-30T11:02:40.008+00:00", "players": players, "ending": None}).encode()


def seat_round(event: Event, state: HallState, rnd: int) -> None:
    """The director moves the hall to round `rnd`, as the console does (app.Console.apply_pairings)."""
    state.round.number = rnd
    seats, _ = event.seating(rnd)
    state.set_seats(seats, event.finals(rnd))


def test_an_earlier_round_shows_its_own_games_as_they_ended_not_the_clocks_current_one(hall):
    """Issue 23.4: a tile of an earlier round is that round's game (its last state, its result and
    what was recorded), while its clock plays another; the result form offers that round's result."""
    event, state = hall
    t = state.tables[1]
    state.on_message("rackside/v1/h/table/1/state", clock_state("g1", 40, "ended", (-99_000, 1000)))
    finish(state, 1, penalties=(20, 0), game="g1")
    seat_round(event, state, 2)  # round 2 seated; the clock still has round 1's game
    tile = t.tile()
    assert tile["names"] == ["Baker, Bob", "Dunn, Di"] and tile["earlier"] is True
    assert tile["state"] is None and tile["result"] is None and tile["clock_on"] == {"division": "A", "round": 1}
    with pytest.raises(ResultError, match="no clock result"):
        event.result(t, {"slip": [400, 380]}, "Sam", "2026-11-30T12:00:00Z")  # round 1's result is not round 2's
    state.on_message("rackside/v1/h/table/1/state", clock_state("g2", 1))  # round 2's game begins
    tile = t.tile()
    assert tile["earlier"] is False and tile["state"]["game"] == "g2" and tile["clock_on"] is None

    seat_round(event, state, 1)  # back to round 1: its game as it ended, and its result
    tile = t.tile()
    assert tile["earlier"] is True and tile["clock_on"] == {"division": "A", "round": 2}
    assert tile["state"]["game"] == "g1" and [p["remaining_ms"] for p in tile["state"]["players"]] == [-99_000, 1000]
    assert tile["result"]["game"] == "g1" and tile["names"] == ["Adams, Ann", "Baker, Bob"]
    out = event.result(t, {"slip": [410, 388], "confirm": True}, "Sam", "2026-11-30T12:00:00Z")
    assert out["confirmed"] and out["round"] == 1 and out["scores"] == [390, 388]
    rec = event.store.results("A", 1)[0]
    assert rec.remaining_ms == (1000, 1000) and rec.tsh_table == ""  # the clock result's final times
    assert t.tile()["final"]["remaining_ms"] == [1000, 1000]

    # a result resent for a game the clock has left goes with that game, not the current one
    state.on_message("rackside/v1/h/table/2/state", clock_state("h1", 3))
    seat_round(event, state, 2)
    state.on_message("rackside/v1/h/table/2/state", clock_state("h2", 1))
    finish_late = dict(result_event(game="h1"), seq=0)
    state.on_message("rackside/v1/h/table/2/event", json.dumps(finish_late).encode())
    assert state.tables[2].current_result() is None  # round 2's game h2 has no result
    seat_round(event, state, 1)
    assert state.tables[2].current_result()["game"] == "h1"

    # bounded: the latest GAMES_REMEMBERED games a table
    for i in range(10):
        state.on_message("rackside/v1/h/table/2/state", clock_state(f"x{i}", 1))
    assert len(state.tables[2].past) <= limits.GAMES_REMEMBERED


def test_tsh_table_labels_go_into_the_result_and_the_csv(tmp_path):
    event = Event(ResultStore(tmp_path / "results.sqlite"))
    files = dict(TWO_DIVISIONS, **{"config.tsh": TWO_DIVISIONS["config.tsh"] + b"config tables = {'A' => ['A7', 'A9']}\n"})
    assert event.import_files(files) == []
    state = HallState("h")
    seat_round(event, state, 1)
    assert state.tables[1].tile()["tsh_table"] == "A7" and state.tables[3].tile()["tsh_table"] == ""
    finish(state, 2)
    out = event.result(state.tables[2], {"slip": [400, 380], "confirm": True}, "Sam", "2026-11-30T12:00:00Z")
    assert out["tsh_table"] == "A9"
    rows = list(csv.DictReader(io.StringIO(results.to_csv(event.export_rows("A", 1)))))
    assert [(r["table"], r["tsh_table"]) for r in rows] == [("2", "A9")]


def test_a_result_that_comes_after_the_round_moved_on_belongs_to_its_games_round(hall):
    """Round 2 set while round 1's game still plays: its result, when it comes, is round 1's (shown
    and offered there), never round 2's."""
    event, state = hall
    state.on_message("rackside/v1/h/table/1/state", clock_state("g1", 30))
    seat_round(event, state, 2)
    finish(state, 1, game="g1")
    assert state.tables[1].current_result() is None
    seat_round(event, state, 1)
    assert state.tables[1].current_result()["game"] == "g1"
# --- a slip with no clock record (issue 23 item 2) ---------------------------------------------------


def test_a_slips_penalties_follow_the_clocks_rules_5_3():
    from rackside.hall.console.state.contract import default_rules
    from rackside.hall.console.scoring.results import slip_result

    wespa = default_rules()
    assert final_scores(slip_result(2, "end", None, [20, 0], wespa), (400, 380)).scores == (380, 380)
    for bad in (15, 110, -10):
        with pytest.raises(ResultError, match=r"10 points a minute or part thereof of overtime, 0 to 100 \(5.3, 5.3.3\)"):
            slip_result(2, "end", None, [bad, 0], wespa)
    fives = {**wespa, "penalty_per_minute": 5}  # another body's rules: the same check, its numbers
    assert slip_result(2, "end", None, [15, 0], fives).penalties == (15, 0)
    with pytest.raises(ResultError, match="0 to 50"):
        slip_result(2, "end", None, [55, 0], fives)
    r = slip_result(2, "lateness forfeit", 1, [0, 0], wespa)  # 2.3.5 on the slip: no scores, a 75-point win
    assert final_scores(r, None).scores == (-75, 75) and final_scores(r, None).forfeits == (1,)
    with pytest.raises(ResultError, match="side that forfeited"):
        slip_result(2, "overtime forfeit", None, [0, 0], wespa)


def test_a_slip_result_is_marked_and_its_overtime_is_not_known(hall):
    event, state = hall
    out = event.result(state.tables[2], {"slip": [400, 380], "no_clock": {"reason": "lost journal", "penalties": [0, 30]},
                                         "confirm": True}, "td", "t", 1)
    assert out["recorded"] == "slip" and out["scores"] == [400, 350]
    (row,) = [r for r in event.export_rows("A", 1) if r.table == 2]
    assert (row.no_clock, row.overtime_s) == ("lost journal", (None, None)) and row.note.startswith("no clock record (lost journal)")
    again = ResultStore(event.store.path)
    assert [r.no_clock for r in again.results("A", 1)] == ["lost journal"]


def test_a_slip_with_no_clock_record_is_reckoned_with_the_events_rules_not_the_defaults(hall):
    """Issue 38: an event that charges 5 points a minute ([event]) takes a slip's 15 points, which
    the built-in 10 a minute refused ("10 points a minute ... not 15"); its lateness margin is the
    event's; a change of the event's rules is audited."""
    from rackside.hall.wire.eventrules import from_table

    event, state = hall
    assert event.set_rules(from_table({"penalty_per_minute": 5, "lateness_forfeit_margin": 50}), "console.toml [event]",
                           "2026-12-05T09:00:00Z", 1)
    assert [a for a in event.store.audit() if a["action"] == "rules"] == []  # the first rules kept: nothing changed
    out = event.result(state.tables[2], {"slip": [400, 380], "no_clock": {"reason": "clock broke", "penalties": [15, 0]},
                                         "confirm": True}, "td", "t", 1)
    assert out["scores"] == [385, 380]
    (row,) = [r for r in event.export_rows("A", 1) if r.table == 2]
    assert row.penalties == (15, 0)
    with pytest.raises(ResultError, match=r"5 points a minute or part thereof of overtime, 0 to 50"):
        event.result(state.tables[2], {"slip": [400, 380], "no_clock": {"reason": "x", "penalties": [20, 3]}}, "td", "t", 1)
    late = event.result(state.tables[1], {"no_clock": {"reason": "x", "ending": "lateness forfeit", "forfeit": 1}}, "td", "t", 1)
    assert late["scores"] == [-50, 50]  # 2.3.6(a) at the event's margin
    assert event.set_rules(from_table({"penalty_per_minute": 10}), "console.toml [event]", "2026-12-05T11:00:00Z", 2)
    (audit,) = [a for a in event.store.audit() if a["action"] == "rules"]
    assert "10 points a minute" in audit["reason"] and audit["who"] == "console.toml [event]"
    assert not event.set_rules(from_table({"penalty_per_minute": 10}), "console.toml [event]", "2026-12-05T12:00:00Z", 2)


def test_a_change_of_the_events_rules_is_audited_as_the_rules_not_as_a_call(hall):
    """The audit's kinds (issue 36) and the event's rules (issue 38): a change of [event] is its own kind,
    found by `?kind=rules`, never among a table's calls. Before, it was written with note()'s default
    kind, "call", so the Audit page listed it as a call and `?kind=rules` was refused."""
    from rackside.hall.console.scoring.resultstore import AUDIT_KINDS
    from rackside.hall.wire.eventrules import from_table

    event, _ = hall
    event.set_rules(from_table({"penalty_per_minute": 5}), "console.toml [event]", "2026-12-05T09:00:00Z", 1)
    event.set_rules(from_table({"penalty_per_minute": 10}), "console.toml [event]", "2026-12-05T11:00:00Z", 2)
    assert "rules" in AUDIT_KINDS
    assert [a["action"] for a in event.store.audit(kind="rules")] == ["rules"]
    assert event.store.audit(kind="call") == []


def test_a_results_body_is_checked_once_at_the_request_and_the_event_works_with_what_it_left(hall, monkeypatch):
    """hall.console.state.requests.result_body checks (and puts in their one form) the types of a result's
    body: the slip's two scores, a margin, a decision, the names typed for a game by table. The
    event's result works the result out from that body and checks none of them again."""
    from rackside.hall.console.state import requests

    body = {"slip": ["410", 388], "names": ["  Ann \x07 Adams ", ""], "decision": {"scores": ["1", 2], "reason": "x"}, "margin": "80"}
    requests.result_body(body)
    assert body == {"slip": [410, 388], "names": ["Ann Adams", ""], "decision": {"scores": [1, 2], "reason": "x"}, "margin": 80}
    for bad, says in [({"slip": [1]}, "type both scores"), ({"names": "Ann"}, "names must be two texts"),
                      ({"decision": "yes"}, "decision must be {scores"), ({"correction": 3}, "correction must be")]:
        with pytest.raises(ValueError, match=re.escape(says)):
            requests.result_body(bad)
    event, state = hall

    def checked_again(*a, **kw):
        raise AssertionError("typed names checked a second time")

    monkeypatch.setattr(results, "typed_names", checked_again)
    t = state.new_table(9)  # no TSH game here: recorded by table, with the names as result_body left them
    body = {"slip": [300, 280], "names": ["Ida", "Al"], "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]}}
    out = event.result(t, body, "td", "t", 1)
    assert out["scores"] == [300, 280] and out["by_table"]
