"""TSH's files read as TSH reads them (issue 18): real events' `tourney.js`, `.t` files held against
what TSH's own reader (TFile.pm, run under perl) read from the same bytes, and `config.tsh`.
The data and where it comes from: tests/data/tsh/README.md."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rackside.hall.console.scoring import jsliteral, tsh
from rackside.hall.console.scoring.tsh import TshError

DATA = Path(__file__).parent / "data" / "tsh"
EVENTS = {"july4-2025": ["A", "B"], "albany-2024": ["A", "B", "C"]}


def read_t(rel: str, encoding: str = tsh.DEFAULT_ENCODING, inline: bool = False) -> tsh.Division:
    path = DATA / rel
    return tsh.parse_t(tsh.decode_t(path.read_bytes(), encoding), path.stem.upper(), rel, inline)


def tsh_reference(name: str) -> tuple[list[dict], str | None]:
    """What TSH's TFile.pm read (tests/data/tsh/reference): its players, and its error if it stopped."""
    players, error = [], None
    for line in (DATA / "reference" / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "error" in row:
            error = row["error"]
        else:
            players.append(row)
    return players, error


def as_tsh_holds(p: tsh.Player) -> dict:
    """One of our players in the shape TFile.pm's ReadLine returns (numbers as text, 00 as null)."""
    text = lambda xs: [None if x is None else str(x) for x in xs]  # noqa: E731
    return {"id": p.number, "name": p.name, "rating": p.rating, "pairings": text(p.opponents),
            "scores": text(p.scores), "etc": {k: list(v) for k, v in p.etc.items()}}


REFERENCES = [
    ("july4-2025/a.t", "july4-2025_a.t.jsonl", "latin-1", False),
    ("july4-2025/b.t", "july4-2025_b.t.jsonl", "latin-1", False),
    ("albany-2024/a.t", "albany-2024_a.t.jsonl", "latin-1", False),
    ("albany-2024/b.t", "albany-2024_b.t.jsonl", "latin-1", False),
    ("albany-2024/c.t", "albany-2024_c.t.jsonl", "latin-1", False),
    ("edge/latin1.t", "edge_latin1.t.jsonl", "latin-1", False),
    ("edge/bom-comment-utf8.t", "edge_bom-comment-utf8.t.jsonl", "latin-1", False),
    ("edge/bom-comment-utf8.t", "edge_bom-comment-utf8.t.utf8.jsonl", "utf8", False),
    ("edge/inline-hash.t", "edge_inline-hash.t.jsonl", "latin-1", False),
    ("edge/inline-hash.t", "edge_inline-hash.t.inline.jsonl", "latin-1", True),
    ("edge/noboard.t", "edge_noboard.t.jsonl", "latin-1", False),
    ("edge/disagree.t", "edge_disagree.t.jsonl", "latin-1", False),
]


@pytest.mark.parametrize("rel,ref,encoding,inline", REFERENCES, ids=[r[1] for r in REFERENCES])
def test_t_file_reads_as_tsh_reads_it(rel, ref, encoding, inline):
    """Player by player (and so round by round: opponents, scores, boards, who starts), exactly what
    TSH's TFile.pm held for the same bytes; where TSH stops on a line, that line is our problem."""
    div = read_t(rel, encoding, inline)
    players, error = tsh_reference(ref)
    ours = [as_tsh_holds(div.players[n]) for n in sorted(div.players)]
    assert ours[: len(players)] == players
    if error:
        line = int(error.split("Can't parse line ")[1].split()[0])  # TSH numbers player lines
        assert any(f"player {line} cannot be read" in p for p in div.problems), div.problems
    else:
        assert not div.problems and len(ours) == len(players)


def test_bom_and_a_leading_comment_make_no_phantom_player():
    div = read_t("edge/bom-comment-utf8.t", "utf8")
    assert [p.name for p in div.players.values()] == ["König, Jürgen", "Sánchez, Ana", "O´Brien, Sean"]
    assert div.players[1].opponents == (2, 3)


def test_an_unknown_encoding_is_refused_by_name():
    with pytest.raises(TshError, match="'klingon' is not an encoding"):
        tsh.decode_t(b"x 1 0;", "klingon")


def test_latin1_is_tsh_default():
    assert read_t("edge/latin1.t").players[2].name == "Núñez, María"


def test_a_hash_after_the_first_column_is_data_unless_configured():
    div = read_t("edge/inline-hash.t")
    assert div.players[1].first(0) == 2  # p12 after the '#' is kept, as TSH keeps it
    (game,), _, _ = div.round_plan(1)
    assert (game.first.number, game.second.number) == (2, 1)


def test_every_unplaceable_game_is_reported_with_file_and_line():
    div = read_t("edge/disagree.t")
    assert div.problems == ["edge/disagree.t:3: player 3 cannot be read (TSH wants 'NAME RATING OPPONENTS; "
                            "SCORES; ...'): 'this line is not a player'"]
    assert [p.number for p in div.players.values()] == [1, 2, 4, 5]  # the players after it keep their numbers
    games, byes, problems = div.round_plan(1)
    assert [(g.board, g.first.number, g.second.number) for g in games] == [(1, 1, 2)]
    assert problems == ["edge/disagree.t:4: division DISAGREE round 1: players 4 and 5 disagree on their board (2 and 3)"]
    games, byes, problems = div.round_plan(2)
    assert [(g.board, g.first.number, g.second.number) for g in games] == [(2, 4, 5)]
    assert problems == ["edge/disagree.t:1: division DISAGREE round 2: player 1 (Adams, Ann) is paired with 3, who is not in the division",
                        "edge/disagree.t:2: division DISAGREE round 2: player 2 (Baker, Bob) has opponent 5, but 5 (Dunn, Di) has 4"]
    games, byes, problems = div.round_plan(3)
    assert byes == [2] and len(games) == 1 and len(problems) == 1 and "paired with 9" in problems[0]


def test_no_board_is_reported_not_dropped():
    div = read_t("edge/noboard.t")
    games, _, problems = div.round_plan(1)
    assert [(g.board, g.first.number, g.second.number) for g in games] == [(2, 3, 4)]  # one side's board will do
    assert problems == ["edge/noboard.t:1: division NOBOARD round 1: players 1 and 2 have no board, so no table: give them one in TSH"]
    games, _, problems = div.round_plan(2)
    assert [(g.board, g.first.number, g.second.number) for g in games] == [(1, 1, 3)]
    assert len(problems) == 1 and "players 2 and 4 have no board" in problems[0]


@pytest.mark.parametrize("event", sorted(EVENTS))
def test_real_tourney_js_loads_every_division_and_matches_its_t_files(event):
    text = (DATA / event / "tourney.js").read_text(encoding="utf-8")
    assert text.count("undefined") > 100  # as TSH writes it
    divisions = tsh.parse_tourney_js(text, f"{event}/tourney.js")
    assert [d.name for d in divisions] == EVENTS[event]
    for d in divisions:
        assert not d.problems
        t = read_t(f"{event}/{d.name.lower()}.t")
        assert len(d.players) == len(t.players)
        for n, p in d.players.items():
            q = t.players[n]
            assert (p.name, p.opponents, p.scores) == (q.name, q.opponents, q.scores)
            assert (p.annotation("board"), p.annotation("p12")) == (q.annotation("board"), q.annotation("p12"))


@pytest.mark.parametrize("event", sorted(EVENTS))
def test_no_player_is_silently_dropped_in_any_round(event):
    """Every round of every division: each paired player is in a game, has a bye, or is named in a problem."""
    for d in tsh.parse_tourney_js((DATA / event / "tourney.js").read_text(encoding="utf-8"), event):
        for r in range(1, d.rounds + 1):
            games, byes, problems = d.round_plan(r)
            placed = {p.number for g in games for p in (g.first, g.second)} | set(byes)
            paired = {p.number for p in d.players.values() if r - 1 < len(p.opponents) and p.opponents[r - 1] is not None}
            missing = paired - placed
            assert all(any(f"player {n} " in p or f"players {n} " in p or f" and {n} " in p for p in problems) for n in missing)


def test_real_events_byes_and_a_division_not_yet_paired():
    july4 = {d.name: d for d in tsh.parse_tourney_js((DATA / "july4-2025/tourney.js").read_text(encoding="utf-8"))}
    games, byes, problems = july4["A"].round_plan(1)
    assert len(games) == 25 and byes == [35] and not problems
    assert july4["B"].rounds == 0 and july4["B"].round_plan(1) == ([], [], [])  # a division without boards yet
    albany = {d.name: d for d in tsh.parse_tourney_js((DATA / "albany-2024/tourney.js").read_text(encoding="utf-8"))}
    assert albany["C"].round_plan(1)[1] == [25]


def test_reformatted_tourney_js_reads_too():
    """Live-coverage sites pass tourney.js on reformatted: unquoted keys, trailing commas, // comments."""
    divisions = tsh.parse_tourney_js((DATA / "reformatted-tourney.js").read_text(encoding="utf-8"))
    assert len(divisions) == 2 and all(d.players and not d.problems for d in divisions)


def test_config_tsh_divisions_tables_and_options():
    cfg = tsh.parse_config((DATA / "july4-2025/config.tsh").read_text(encoding="utf-8"))
    assert cfg.divisions == [("A", "a.t"), ("B", "b.t")]
    assert cfg.tables("a")[:5] == ["A1", "A2", "A3", "A4", "A4"] and cfg.tables("B")[:2] == ["B1", "B2"]
    assert cfg.tables("C") is None
    assert cfg.max_score == 1499 and cfg.encoding == "latin-1" and not cfg.inline_comments
    cfg = tsh.parse_config("\ufeff# c\r\ndivision x x.t\r\nconfig max_score = 999\r\nconfig tfile_encoding = 'utf8'\r\n"
                                "config inline_comments = 1\r\nconfig tables = { 'X' => [1..3, 7], y => [qw(9 10)] }\r\nautopair x 0 1 rr x\r\n")
    assert (cfg.max_score, cfg.encoding, cfg.inline_comments) == (999, "utf8", True)
    assert cfg.tables("X") == ["1", "2", "3", "7"] and cfg.options["tables"]["y"] == [9, 10]
    with pytest.raises(TshError, match="no 'division NAME FILE' line"):
        tsh.parse_config("config max_rounds = 7\n")
    bad = tsh.parse_config("division a a.t\ndivision a b.t\ndivision c\nconfig tables = {'a' => [1..]\n", "ev/config.tsh")
    assert bad.divisions == [("a", "a.t")] and len(bad.problems) == 3
    assert all(p.startswith("ev/config.tsh:") for p in bad.problems)


def test_js_literal_reads_what_tsh_writes_and_refuses_the_rest():
    v = jsliteral.parse("newt={'a':undefined,b:[1,-2.5e3,0x1F,],c:'x\\'y',d:null,e:NaN}; // end\n")
    assert v["a"] is jsliteral.UNDEFINED and v["b"] == [1, -2500.0, 31] and v["c"] == "x'y" and v["d"] is None
    assert math.isnan(v["e"])
    for bad, where in [("{a:1", ":1:5:"), ("{a:1} x", ":1:7:"), ("[" * 70 + "]" * 70, "levels of nesting"),
                       ('{"a":"b\n"}', "closing"), ("newt = ", "a value"), ("", "a value")]:
        with pytest.raises(jsliteral.JsLiteralError, match=where.replace("(", r"\(")):
            jsliteral.parse(bad)
    with pytest.raises(TshError, match="not TSH's tourney.js"):
        tsh.parse_tourney_js("newt={config:{}};")


def test_t_file_that_is_no_t_file_is_refused_whole():
    with pytest.raises(TshError, match="no player lines"):
        tsh.parse_t("# only a comment\n", "a")


@pytest.mark.parametrize("rel,ref", [(r[0], r[1]) for r in REFERENCES if r[0].split("/")[0] in EVENTS])
def test_each_round_pairs_as_tsh_pairs_it(rel, ref):
    """Round by round, the games and byes we seat are the pairings TSH itself read from the file."""
    players, _ = tsh_reference(ref)
    div = read_t(rel)
    rounds = max((len(p["pairings"]) for p in players), default=0)
    for r in range(1, rounds + 1):
        theirs = {tuple(sorted((p["id"], int(p["pairings"][r - 1])))) for p in players
                  if len(p["pairings"]) >= r and p["pairings"][r - 1] not in (None, "0")}
        byes = sorted(p["id"] for p in players if len(p["pairings"]) >= r and p["pairings"][r - 1] == "0")
        games, our_byes, problems = div.round_plan(r)
        assert {tuple(sorted((g.first.number, g.second.number))) for g in games} == theirs, (rel, r)
        assert our_byes == byes and problems == [], (rel, r)


def test_tsh_table_labels_of_a_real_event_are_shown():
    from rackside.hall.console.scoring import hallplan

    cfg = tsh.parse_config((DATA / "july4-2025/config.tsh").read_text(encoding="utf-8"))
    divisions = tsh.parse_tourney_js((DATA / "july4-2025/tourney.js").read_text(encoding="utf-8"))
    seats, problems = hallplan.plan(divisions, cfg, 1)
    assert not problems and sorted(seats) == list(range(1, 26))  # B is not paired yet
    assert [seats[n].label for n in (1, 3, 4, 5, 6)] == ["A1", "A3", "A4", "A4", "A5"]  # TSH's labels, as the event had them


def test_tsh_table_labels_from_tourney_js_alone():
    """tourney.js carries TSH's own `config.tables` (issue 23.4): without a config.tsh the labels are
    the same as with it, and a config.tsh's `config tables` still decides when both are given."""
    from rackside.hall.console.scoring import hallplan

    divisions = tsh.parse_tourney_js((DATA / "july4-2025/tourney.js").read_text(encoding="utf-8"))
    a = {d.name: d for d in divisions}["A"]
    assert a.tables[:5] == ["A1", "A2", "A3", "A4", "A4"]
    seats, problems = hallplan.plan(divisions, None, 1)
    assert not problems and [seats[n].label for n in (1, 3, 4, 5, 6)] == ["A1", "A3", "A4", "A4", "A5"]
    assert seats[4].tsh_table == "A4"
    cfg = tsh.parse_config("division A a.t\nconfig tables = {'A' => ['X1', 'X2']}\n")
    seats, _ = hallplan.plan(divisions, cfg, 1)
    assert (seats[1].label, seats[2].label, seats[3].label) == ("X1", "X2", "board 3")
    assert seats[3].tsh_table == ""  # TSH names no table for board 3: the console's own "board 3" is no TSH table
    # a whole number in tourney.js's tables is the hall's table, as in config.tsh
    js = ('newt={"config":{"tables":{"Z":[5,"Z2"]}},"divisions":[{"name":"Z","players":[undefined,'
          '{"id":1,"name":"A, B","rating":1,"pairings":[2],"scores":[],"etc":{"board":[1],"p12":[1]}},'
          '{"id":2,"name":"C, D","rating":1,"pairings":[1],"scores":[],"etc":{"board":[1],"p12":[2]}}]}]};')
    seats, _ = hallplan.plan(tsh.parse_tourney_js(js), None, 1)
    assert list(seats) == [5] and seats[5].tsh_table == "5"
    # tables that are not TSH's shape are a problem, never a crash
    bad = tsh.parse_tourney_js(js.replace('{"Z":[5,"Z2"]}', '{"Z":"A1"}'))
    assert bad[0].tables is None and any("config.tables" in p for p in bad[0].problems)
