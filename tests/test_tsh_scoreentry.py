"""The console's TSH score entry against TSH's own add-score state (issue 23 item 1).

tests/support/tshmodel.py is TSH 3.340's PAIR and Addscore as its code keeps them: who is paired,
who is scored, and what each line does (ScoreBye, CheckRoundNumber, InputBye, CheckScores). Every
round of every real event in tests/data/tsh, and every division shape a hall has (byes in every
round, an odd division, several byes at once, a lateness forfeit next to a bye, both players late,
a 5.3.3 decision, a correction, each of TSH's entry systems), is exported and fed to it: each
round ends with every player scored, and the next round's `a ROUND DIVISION` is accepted. The
export as it was before (no byes) is shown refused."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from rackside.hall.console.scoring import results, tsh
from rackside.hall.console.state.event import Event
from rackside.hall.console.state.hallstate import HallState
from rackside.hall.console.scoring.resultstore import ResultStore
from rackside.hall.console.scoring.results import Recorded
from support.tshmodel import Tsh

DATA = Path(__file__).parent / "data" / "tsh"


def errors(msgs) -> list[str]:
    return [str(m) for m in msgs if m.error]


# --- the model refuses what TSH refuses -------------------------------------------------------------


def model(t_text: str, options: dict | None = None, name: str = "A") -> Tsh:
    return Tsh.load([tsh.parse_t(t_text, name)], options)


FOUR = "Ann 1500 2; ; board 1\nBob 1400 1; ; board 1\nCy 1300 0;\nDi 1200 0;\nEd 1100 0;\nFay 1000 0;\n"


def test_the_model_refuses_what_tsh_refuses():
    ok = model("Ann 1500 2; \nBob 1400 1;\nCy 1300 0;\n")
    assert errors(ok.feed("a 1 A\n1 400 2 380\n\n")) == [] and ok.unscored("A", 1) == []  # the lone bye: ScoreBye
    assert [m.code for m in ok.messages] == ["iscoredbye"]
    refused = {
        "a 1 A\n1 1500 2 380\n\n": "ebadscore",  # over 1499 (config max_score unset)
        "a 1 A\n1 -150 2 380\n\n": "ebadscore",
        "a 1 A\n1 400 3 380\n\n": "eanotopp",
        "a 1 A\n1 75\n\n": "enotabye",
        "a 1 A\n1 400 2 380 20\n\n": "eahuh",  # entry 'scores' reads four words
        "a 1 A\n1 0 2 50\n\n": "eabbye",  # 0 against the bye spread: a bye typed as a game
        "a 2 A\n\n": "emisss",  # round 1 is not complete
        "a 1 A\n1 400 2 380\n": "eopen",  # never leaves add-score mode
        "1 400 2 380\n": "ebadcmd",  # at TSH's main prompt
        "pair 9 0 1 A\n": "enosuchp",
    }
    for text, code in refused.items():
        m = model("Ann 1500 2; \nBob 1400 1;\nCy 1300 0;\n")
        assert code in [x.code for x in m.feed(text) if x.error], (text, code, m.messages)
    plus = model("Ann 1500 0;\nBob 1400 0;\n")  # two byes: TSH scores neither itself
    assert "eplus" in [x.code for x in plus.feed("a 1 A\n1 +75\n\n")]  # stored as typed: its .t reader cannot read it back
    again = model("Ann 1500 2; 400\nBob 1400 1; 380\nCy 1300 0; 50\n")
    assert [m.code for m in again.feed("a 1 A\n1 400 2 380\n\n")] == ["eallsin", "ebadcmd"]  # entered twice
    both = model("Ann 1500 2; \nBob 1400 1;\n", {"entry": "both"})
    assert errors(both.feed("a 1 A\n1 400 2 380 20\n\n")) == []
    assert "easa" in [m.code for m in model("Ann 1500 2; \nBob 1400 1;\n", {"entry": "both"}).feed("a 1 A\n1 400 2 380 21\n\n")]


def test_scorebye_scores_a_bye_only_when_it_is_the_one_unpaired_player():
    """TSH's ScoreBye: with four byes (or a bye next to a forfeit) TSH scores none of them, and then
    refuses the next round (CheckRoundNumber): the case issue 23 found at a real event."""
    m = model(FOUR)
    assert errors(m.feed("a 1 A\n1 400 2 380\n\n")) == [] and m.unscored("A", 1) == [3, 4, 5, 6]
    assert [x.code for x in m.feed("a 2 A\n1 400 2 380\n\n")] == ["emisss", "ebadcmd"]  # the game falls to the main prompt
    forfeit = model("Ann 1500 2; \nBob 1400 1;\nCy 1300 0;\n")
    assert errors(forfeit.feed("pair 1 0 1 A\npair 2 0 1 A\na 1 A\n1 75\n2 -75\n\n")) == []
    assert forfeit.unscored("A", 1) == [3]  # three unpaired now: TSH leaves the bye alone
    assert errors(forfeit.feed("a 1 A\n3 50\n\n")) == [] and forfeit.unscored("A", 1) == []


def test_pair_with_a_bye_unpairs_the_old_opponent_as_tsh_division_pair_does():
    m = model("Ann 1500 2 3; 400\nBob 1400 1 4; 380\nCy 1300 4 1; 390\nDi 1200 3 2; 370\n")
    m.feed("pair 1 0 2 A\n")
    a, c = m.division("A")[1], m.division("A")[3]
    assert a.pairings == [2, 0] and c.pairings == [4]  # round 2 was Cy's last pairing: dropped
    m.feed("pair 3 0 2 A\n")
    assert c.pairings == [4, 0]


# --- every round of every real event -------------------------------------------------------------------


def real_events():
    for event in ("albany-2024", "july4-2025"):
        cfg = tsh.parse_config((DATA / event / "config.tsh").read_text(encoding="utf-8"))
        for name, fname in cfg.divisions:
            div = tsh.parse_t(tsh.decode_t((DATA / event / fname).read_bytes(), cfg.encoding), name, fname)
            yield event, cfg, div


def as_before_round(div: tsh.Division, round_: int, bye_spread: int) -> tsh.Division:
    """The division as TSH has it before `round_` is entered: earlier rounds scored; in `round_`,
    only what the director entered in TSH by hand (a player paired with a bye who lost it by
    forfeit, as the event's file records: a score other than the bye spread)."""
    i = round_ - 1
    players = {}
    for n, p in div.players.items():
        keep = list(p.scores[:i])
        opp = p.opponents[i] if i < len(p.opponents) else None
        if opp == 0 and i < len(p.scores) and p.scores[i] is not None and p.scores[i] != bye_spread:
            keep.append(p.scores[i])
        players[n] = replace(p, scores=tuple(keep))
    return tsh.Division(div.name, div.source, players)


def recorded_games(div: tsh.Division, round_: int) -> list[Recorded]:
    """The round's games as the hall records them, with the event's own scores (the slips)."""
    games, _, problems = div.round_plan(round_)
    assert not problems
    out = []
    for g in games:
        s = tuple(p.scores[round_ - 1] if round_ - 1 < len(p.scores) else None for p in (g.first, g.second))
        if None in s:
            continue  # not played yet in the file
        out.append(Recorded(div.name, round_, g.board, (g.first.number, g.second.number), (g.first.name, g.second.name),
                            s, s, (0, 0), (0, 0), "end", ""))
    return out


@pytest.mark.parametrize("event,cfg,div", [pytest.param(*e, id=f"{e[0]}-{e[2].name}") for e in real_events()])
def test_every_round_of_every_real_event_ends_with_every_player_scored(event, cfg, div):
    """Round after round, from no scores: each export leaves TSH with every player of the round
    scored as the event's file has it (games, byes at TSH's bye spread), and the next round opens."""
    if div.rounds == 0:
        pytest.skip(f"{event} division {div.name} is not paired yet")
    bye = cfg.bye_spread
    assert (cfg.entry, bye) == ("both", 50)  # both events' TSH config: entry 'both', the default bye spread
    m = Tsh.load([as_before_round(div, 1, bye)], cfg.options)
    played = 0
    for rnd in range(1, div.rounds + 1):
        before = as_before_round(div, rnd, bye)
        for n, p in before.players.items():  # what the director entered by hand in TSH (a forfeited bye)
            if len(p.scores) == rnd:
                m.division(div.name)[n].scores[rnd - 1:] = [p.scores[-1]]
        rows = recorded_games(div, rnd)
        ex = results.to_tsh(div.name, rnd, rows, before, cfg)
        assert ex.missing == [] and ex.problems == []
        assert errors(m.feed(ex.text)) == [], (rnd, ex.text)
        if any(len(p.scores) < rnd or p.scores[rnd - 1] is None for p in div.players.values()):
            # july4-2025 A round 3: paired, not yet played: only the games wait
            assert m.unscored(div.name, rnd) == ex.unscored and ex.byes and not rows
            break
        assert m.unscored(div.name, rnd) == [] and ex.unscored == []
        assert {n: p.scores[rnd - 1] for n, p in m.division(div.name).items()} == \
               {n: p.scores[rnd - 1] for n, p in div.players.items()}  # TSH holds what the event recorded
        played += 1
    assert played >= 2


def export_before_issue_23(division: str, round_: int, rows: list[Recorded]) -> str:
    """The console's TSH export as it was before issue 23 (results.to_tsh at 199fedf), word for word."""
    pairs, lines = [], [f"a {round_} {division}"]
    for r in sorted(rows, key=lambda r: r.table):
        if r.division != division or r.round != round_ or None in r.numbers:
            continue
        if r.forfeits:
            for side in (1, 2):
                pairs.append(f"pair {r.numbers[side - 1]} 0 {round_} {division}")
                lines.append(f"{r.numbers[side - 1]} {r.scores[side - 1]}")
            continue
        lines.append(f"{r.numbers[0]} {r.scores[0]} {r.numbers[1]} {r.scores[1]}")
    return "\n".join(pairs + lines) + "\n\n"


def test_the_model_refuses_the_export_as_it_was():
    """Issue 23's findings, on the export as it was: at Albany (config entry 'both') TSH refuses
    every game line and leaves the round open; with entry 'scores', four byes stay unscored and
    the next round is refused; a bye next to a lateness forfeit is never scored."""
    (_, cfg, div), = [(e, c, d) for e, c, d in real_events() if e == "albany-2024" and d.name == "A"]
    m = Tsh.load([as_before_round(div, 1, 50)], cfg.options)
    codes = [x.code for x in m.feed(export_before_issue_23("A", 1, recorded_games(div, 1))) if x.error]
    assert codes == ["eahuh"] * 12 and len(m.unscored("A", 1)) == 24
    four = model(FOUR)
    rows = [Recorded("A", 1, 1, (1, 2), ("Ann", "Bob"), (400, 380), (400, 380), (0, 0), (0, 0), "end", "")]
    assert errors(four.feed(export_before_issue_23("A", 1, rows))) == [] and four.unscored("A", 1) == [3, 4, 5, 6]
    assert [x.code for x in four.feed("a 2 A\n\n") if x.error] == ["emisss"]
    lone = model("Ann 1500 2; \nBob 1400 1;\nCy 1300 0;\n")
    late = [Recorded("A", 1, 1, (1, 2), ("Ann", "Bob"), None, (75, -75), (0, 0), (0, 0), "lateness forfeit", "", (2,))]
    assert errors(lone.feed(export_before_issue_23("A", 1, late))) == [] and lone.unscored("A", 1) == [3]


def test_albany_round_17_needs_its_byes_entered_or_tsh_refuses_round_18():
    """Albany A round 17: four players paired with a bye (two byes, two forfeited). Without the
    division's byes (`to_tsh` not given the division) the two byes stay unscored, so TSH refuses
    `a 18 A` and round 18's games fall to its main prompt; with them, round 18 opens."""
    (_, cfg, div), = [(e, c, d) for e, c, d in real_events() if e == "albany-2024" and d.name == "A"]
    before = as_before_round(div, 17, 50)
    old = results.to_tsh("A", 17, recorded_games(div, 17), None, cfg)
    m = Tsh.load([before], cfg.options)
    assert errors(m.feed(old.text)) == [] and m.unscored("A", 17) == [1, 4]
    nxt = results.to_tsh("A", 18, recorded_games(div, 18), as_before_round(div, 18, 50), cfg)
    codes = [x.code for x in m.feed(nxt.text) if x.error]
    assert codes[0] == "emisss" and set(codes[1:]) == {"ebadcmd"}
    m = Tsh.load([before], cfg.options)
    new = results.to_tsh("A", 17, recorded_games(div, 17), before, cfg)
    assert new.byes == [1, 4] and errors(m.feed(new.text)) == [] and m.unscored("A", 17) == []
    assert errors(m.feed(nxt.text)) == []


# --- every division shape, through the console's Event and its store ------------------------------------

# Division E: five players (odd), a bye every round; round 3 puts a lateness forfeit next to the bye.
# Division F: six players, four byes in round 1 (late entries), all paired in round 2.
HALL = {
    "config.tsh": b"division E e.t\ndivision F f.t\nconfig max_rounds = 3\n",
    "e.t": (b"Ames, Al     1500 2 3 5; ; board 1 1 1; p12 1 1 2\nBell, Bo     1400 1 5 4; ; board 1 2 2; p12 2 1 1\n"
            b"Cruz, Cy     1300 4 1 0; ; board 2 1 0; p12 1 2 0\nDahl, Di     1200 3 0 2; ; board 2 0 2; p12 2 0 2\n"
            b"Egan, Ed     1100 0 2 1; ; board 0 2 1; p12 0 2 1\n"),
    "f.t": (b"Fox, Fi      1500 2 3; ; board 1 1; p12 1 1\nGray, Gus    1400 1 4; ; board 1 2; p12 2 1\n"
            b"Hale, Hu     1300 0 1; ; board 0 1; p12 0 2\nIbsen, Ivo   1200 0 2; ; board 0 2; p12 0 2\n"
            b"Jones, Jo    1100 0 6; ; board 0 3; p12 0 1\nKemp, Kit    1000 0 5; ; board 0 3; p12 0 2\n"),
}


def clock_event(game: str, ending="end", penalties=(0, 0), forfeits=(), margin=None) -> dict:
    players = [{"player": p, "remaining_ms": 1000, "overtime_s": penalties[p - 1] // 10 * 60,
                "penalty": penalties[p - 1], "forfeit": p in forfeits} for p in (1, 2)]
    return {"kind": "result", "game": game, "seq": 0, "ending": ending, "players": players, "forfeits": list(forfeits),
            "winner_by_forfeit": None, "lateness_margin": margin, "at": "2026-11-30T11:02:40.008+00:00"}


class Hall:
    def __init__(self, tmp_path, files=HALL):
        self.event = Event(ResultStore(tmp_path / "results.sqlite"))
        assert self.event.import_files(files) == []
        self.state = HallState("h")
        self.round = 0
        self.games = 0

    def seat(self, rnd: int) -> None:
        self.round = self.state.round.number = rnd  # the hall moves to the round, as the console does
        seats, problems = self.event.seating(rnd)
        assert problems == []
        self.state.set_seats(seats, self.event.finals(rnd))

    def table(self, division: str, first: int) -> int:
        (n,) = [n for n, t in self.state.tables.items() if t.seat and t.seat["division"] == division
                and t.seat["numbers"][0] == first]
        return n

    def record(self, division: str, first: int, body: dict, **clock) -> dict:
        n = self.table(division, first)
        self.games += 1
        game = f"{division}-r{self.round}-t{n}-{self.games}"
        self.state.on_message(f"rackside/v1/h/table/{n}/event", json.dumps(clock_event(game, **clock)).encode())
        return self.event.result(self.state.tables[n], {**body, "confirm": True}, "td", "2026-01-01T10:00:00Z")

    def export(self, division: str, rnd: int) -> results.TshExport:
        return self.event.tsh_export(division, rnd)


def test_an_odd_division_with_a_bye_every_round_and_a_forfeit_next_to_one(tmp_path):
    h = Hall(tmp_path)
    m = Tsh.load(list(h.event.divisions.values()), h.event.config.options)
    h.seat(1)
    h.record("E", 1, {"slip": [420, 380]})
    h.record("E", 3, {"slip": [401, 399]})
    ex = h.export("E", 1)
    assert ex.text == "a 1 E\n1 420 2 380\n3 401 4 399\n5 50\n\n" and ex.byes == [5]
    msgs = m.feed(ex.text)  # TSH scores the lone bye itself (ScoreBye): the explicit line is its "already has"
    assert errors(msgs) == [] and m.unscored("E", 1) == [] and "whass" in [x.code for x in msgs]
    h.seat(2)
    h.record("E", 1, {"slip": [452, 350]}, penalties=(10, 0))  # Al (first) v Cy; Al 10 off (5.3)
    h.record("E", 2, {"slip": [300, 400]})  # Bo v Ed
    assert errors(m.feed(h.export("E", 2).text)) == [] and m.unscored("E", 2) == []
    h.seat(3)
    h.record("E", 5, {}, ending="lateness forfeit", forfeits=(2,), margin=75)  # Ed (first) v Al: Al never came
    h.record("E", 2, {"slip": [377, 388]})  # Bo v Di
    ex = h.export("E", 3)
    assert ex.text == "pair 5 0 3 E\npair 1 0 3 E\na 3 E\n2 377 4 388\n5 75\n1 -75\n3 50\n\n"
    assert errors(m.feed(ex.text)) == [] and m.unscored("E", 3) == []
    assert [p.scores for p in m.division("E").values()] == [[420, 442, -75], [380, 300, 377], [401, 350, 50],
                                                              [399, 50, 388], [50, 400, 75]]
    old = Tsh.load([tsh.parse_t(tsh.decode_t(HALL["e.t"]), "E")], {})
    old.feed(results.to_tsh("E", 1, h.event.export_rows("E", 1)).text + results.to_tsh("E", 2, h.event.export_rows("E", 2)).text)
    assert errors(old.feed(results.to_tsh("E", 3, h.event.export_rows("E", 3)).text)) == [] and old.unscored("E", 3) == [3]


def test_four_byes_at_once_then_a_full_round(tmp_path):
    h = Hall(tmp_path)
    m = Tsh.load(list(h.event.divisions.values()), h.event.config.options)
    h.seat(1)
    h.record("F", 1, {"slip": [410, 390]})
    ex = h.export("F", 1)
    assert ex.text == "a 1 F\n1 410 2 390\n3 50\n4 50\n5 50\n6 50\n\n" and ex.unscored == []
    assert errors(m.feed(ex.text)) == [] and m.unscored("F", 1) == []
    h.seat(2)
    h.record("F", 1, {"slip": [300, 500]})
    h.record("F", 2, {"slip": [400, 401]})
    partial = h.export("F", 2)
    assert partial.unscored == [5, 6]  # Jo v Kit not recorded yet: named, not guessed
    h.record("F", 5, {"slip": [333, 444]})
    assert errors(m.feed(h.export("F", 2).text)) == [] and m.unscored("F", 2) == []


def test_5_3_3_decision_correction_and_both_players_late(tmp_path):
    h = Hall(tmp_path)
    m = Tsh.load(list(h.event.divisions.values()), h.event.config.options)
    h.seat(1)
    decided = {"slip": [480, 300], "decision": {"scores": [299, 300], "reason": "forfeit stands (5.3.3)"}}
    assert h.record("E", 1, decided, ending="overtime forfeit", penalties=(100, 0), forfeits=(1,))["recorded"] == "decide"
    both_late = {"decision": {"scores": [-75, -75], "reason": "both absent (2.3.5)"}}
    assert h.record("E", 3, both_late, ending="lateness forfeit", forfeits=(1, 2), margin=75)["recorded"] == "decide"
    ex = h.export("E", 1)
    assert ex.text == "pair 3 0 1 E\npair 4 0 1 E\na 1 E\n1 299 2 300\n3 -75\n4 -75\n5 50\n\n"
    assert errors(m.feed(ex.text)) == [] and m.unscored("E", 1) == []
    # a correction before the round goes to TSH: the export has the corrected game once
    n = h.table("F", 1)
    h.state.on_message(f"rackside/v1/h/table/{n}/event", json.dumps(clock_event("F-1")).encode())
    h.event.result(h.state.tables[n], {"slip": [400, 380], "confirm": True}, "td", "t1")
    h.event.result(h.state.tables[n], {"slip": [380, 400], "confirm": True, "correction": "slip reversed"}, "td", "t2")
    ex = h.export("F", 1)
    assert ex.text.count("\n1 ") == 1 and "1 380 2 400\n" in ex.text
    assert errors(m.feed(ex.text)) == [] and m.unscored("F", 1) == []
    # after TSH has the round, the export typed again is refused whole (TSH corrects with editscore)
    assert [x.code for x in m.feed(ex.text) if x.error][0] == "eallsin"


@pytest.mark.parametrize("entry,line", [("scores", "1 420 2 380"), ("both", "1 420 2 380 40"),
                                        ("board", "1 1 420 2 380 40"), ("spread", "1 2 40")])
def test_each_tsh_entry_system_gets_the_words_it_reads(tmp_path, entry, line):
    files = {**HALL, "config.tsh": HALL["config.tsh"] + f"config entry = '{entry}'\n".encode()}
    h = Hall(tmp_path, files)
    m = Tsh.load(list(h.event.divisions.values()), h.event.config.options)
    h.seat(1)
    h.record("E", 1, {"slip": [420, 380]})
    h.record("E", 3, {"slip": [401, 399]})
    ex = h.export("E", 1)
    assert ex.text.splitlines()[1] == line
    assert errors(m.feed(ex.text)) == [] and m.unscored("E", 1) == []


def test_a_game_tsh_will_refuse_is_named_not_hidden(tmp_path):
    """A game 50-0 with TSH's bye spread 50: TSH takes it for a bye typed as a game (eabbye)."""
    h = Hall(tmp_path)
    h.seat(1)
    h.record("E", 1, {"slip": [50, 0]})
    ex = h.export("E", 1)
    assert ex.problems == ["table 1: TSH refuses a game scored 50-0 (0 against its bye spread, 50) as a bye typed "
                           "as a game: enter it in TSH by hand"]
    m = Tsh.load(list(h.event.divisions.values()), h.event.config.options)
    assert [x.code for x in m.feed(ex.text) if x.error] == ["eabbye"]


def test_bye_spread_and_entry_follow_tsh_config_and_realm():
    assert (tsh.parse_config("division A a.t\n").bye_spread, tsh.parse_config("division A a.t\n").entry) == (50, "scores")
    assert tsh.parse_config("division A a.t\nconfig realm = 'wespa'\n").bye_spread == 100
    absp = tsh.parse_config("division A a.t\nconfig realm = 'absp'\n")
    assert (absp.bye_spread, absp.entry) == (100, "both")
    assert tsh.parse_config("division A a.t\nconfig realm = 'absp'\nconfig bye_spread = 75\n").bye_spread == 75
    with pytest.raises(results.ResultError, match=r"config entry = 'tagged'.*enter this round in TSH by hand"):
        results.to_tsh("A", 1, [], None, tsh.parse_config("division A a.t\nconfig entry = 'tagged'\n"))


def test_a_realm_bye_spread_reaches_the_export(tmp_path):
    files = {**HALL, "config.tsh": HALL["config.tsh"] + b"config realm = 'wespa'\n"}
    h = Hall(tmp_path, files)
    m = Tsh.load(list(h.event.divisions.values()), h.event.config.options)
    h.seat(1)
    h.record("F", 1, {"slip": [410, 390]})
    ex = h.export("F", 1)
    assert ex.text.endswith("3 100\n4 100\n5 100\n6 100\n\n")
    assert errors(m.feed(ex.text)) == [] and m.unscored("F", 1) == []


def test_a_hall_with_only_tourney_js_exports_in_the_events_entry_form(tmp_path):
    """TSH writes its config into tourney.js: an event run on `entry` 'both' (both real events
    here) gets its games with the spread, though no config.tsh was imported."""
    h = Hall(tmp_path, {"tourney.js": (DATA / "albany-2024" / "tourney.js").read_bytes()})
    h.seat(1)
    t = min(n for n, t in h.state.tables.items() if t.seat and t.seat["division"] == "C")
    n1, n2 = h.state.tables[t].seat["numbers"]
    h.record("C", n1, {"slip": [400, 350]})
    ex = h.export("C", 1)
    assert ex.text == f"a 1 C\n{n1} 400 {n2} 350 50\n\n"  # the file has the whole event scored: no bye to add
    m = Tsh.load([as_before_round(h.event.divisions["C"], 1, 50)], {"entry": "both"})
    assert errors(m.feed(ex.text)) == []
    assert errors(Tsh.load([as_before_round(h.event.divisions["C"], 1, 50)], {}).feed(ex.text)) != []  # not 'scores'


# --- through the console process, as the director downloads it ------------------------------------


def test_the_console_process_exports_byes_and_forfeits_as_tsh_completes_them(hall_broker, tmp_path):
    """`rackside hall console` with config.tsh and its .t files: two clocks' results arrive over
    the broker, the director records them, and /api/export/tsh.txt gives each division's round as
    TSH finishes it: division E's lateness forfeit next to its bye, division F's four byes."""
    from support.console import ConsoleProcess, Http
    from support.wait import wait

    folder = tmp_path / "console"
    (folder / "tsh").mkdir(parents=True)
    for name, data in HALL.items():
        (folder / "tsh" / name).write_bytes(data)
    console = ConsoleProcess(hall_broker, folder, "pw", extra='tsh = ["tsh/config.tsh", "tsh/e.t", "tsh/f.t"]\nround = 1\n').start()
    try:
        h = Http(console.url)
        token = h.login("pw", "Chief TD")
        clocks = {1: clock_event("e1"), 2: clock_event("e2", "lateness forfeit", forfeits=(2,), margin=75), 3: clock_event("f1")}
        for n, ev in clocks.items():
            c = hall_broker.client(f"table-{n}")
            c.publish(f"rackside/v1/{hall_broker.hall}/table/{n}/event", json.dumps(ev), qos=1).wait_for_publish(5)
            c.disconnect()
            c.loop_stop()
        slips = {1: {"slip": [420, 380]}, 2: {}, 3: {"slip": [410, 390]}}
        for n, body in slips.items():  # each once the console has its clock's result
            wait(lambda: h.call("POST", f"/api/result/{n}", body, {"X-CSRF-Token": token})[0] == 200)
            status, out, _ = h.call("POST", f"/api/result/{n}", {**body, "confirm": True}, {"X-CSRF-Token": token})
            assert status == 200 and json.loads(out)["recorded"] == "confirm", out
        _, e, e_headers = h.call("GET", "/api/export/tsh.txt?division=E&round=1")
        _, f, _ = h.call("GET", "/api/export/tsh.txt?division=F&round=1")
        assert e.decode() == "pair 3 0 1 E\npair 4 0 1 E\na 1 E\n1 420 2 380\n3 75\n4 -75\n5 50\n\n"
        assert f.decode() == "a 1 F\n1 410 2 390\n3 50\n4 50\n5 50\n6 50\n\n"
        assert "X-Rackside-Unscored-Players" not in e_headers
        m = Tsh.load([tsh.parse_t(tsh.decode_t(HALL[name]), d) for d, name in (("E", "e.t"), ("F", "f.t"))])
        assert errors(m.feed(e.decode() + f.decode())) == [] and m.unscored("E", 1) == m.unscored("F", 1) == []
        assert errors(m.feed("a 2 E\n\na 2 F\n\n")) == []  # TSH opens round 2 of both
        csv = h.call("GET", "/api/export/round.csv?division=E&round=1")[1].decode().splitlines()
        assert csv[0].startswith("division,round,table") and len(csv) == 3  # the CSV: one line a recorded result
    finally:
        console.stop()
