"""Results: a finished game's clock result plus the two scores from the slip, penalties applied.

Pure functions, no I/O. The scorekeeper types the scores as written on the result slip (before time
penalties); the console works out what goes to the pairing program:
- time penalty: 10 points per minute or part thereof of overtime, off the offender's score (5.3),
  as the clock counted it (`penalty` in the clock's result, never recomputed here);
- overtime forfeit (5.3.3): the forfeiter loses, with 100 penalty points deducted first; the
  non-forfeiter's score is unchanged. If the forfeiter is still not behind, the result needs the
  director: it cannot be recorded until the director enters a decision with a reason (`decide`);
- lateness forfeit (2.3.4, 2.3.5): a win for the opponent by 75 points, which the director may
  increase (2.3.6(a)); it does not count towards ratings (2.3.6(b)), so it goes to TSH the way TSH
  records a forfeit: each player paired with a bye (`pair PN 0 ROUND DIVISION`, TSH's PAIR command)
  and given the spread (`PN +75` / `PN -75` in add-score mode, TSH's bye-or-forfeit entry). TSH rates
  no game against opponent 0. Both players forfeiting (2.3.5) is the director's to record.
- score limits: TSH's Addscore refuses a score above `config max_score` (1499 when not set) or
  below -149; a slip outside them is refused here with the same limits.
- a game with no clock result (a clock that broke, a table without a clock, a journal lost): the
  signed result slip is the record (5.4.1), so the slip is recorded alone, marked "no clock record"
  with the director's reason; its time penalties are those written on the slip, typed in and
  checked against the rules (`slip_result`: whole multiples of the penalty a minute, at most the
  forfeit's, 5.3, 5.3.3), and an overtime or lateness forfeit on the slip is worked out as the
  clock's would be.
- a game with no TSH players (no TSH files, or a table TSH does not seat) is recorded by its table,
  the player names as typed (optional); it exports as CSV, never to TSH (no player numbers).

Exports: CSV and TSH's score entry per division and round, from the results store (resultstore.py):
the forfeits' PAIR lines, `a ROUND DIVISION`, each game in TSH's `config entry` form (the first
player first), the forfeits' spreads and every bye at TSH's bye spread, so that TSH ends the round
with every player scored (`to_tsh`; docs/console.md "TSH score entry").
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, field
from typing import Callable

from rackside.game.clock import OVERTIME_FORFEIT_POINTS, Ending, Rules

from . import tsh

# A result's `ending` is the clock core's Ending, by value (the page has these from the snapshot)
LATENESS_ENDINGS = (Ending.LATENESS_FORFEIT.value, Ending.OPTIONAL_FORFEIT.value)  # 2.3.5, 2.3.4
OVERTIME_FORFEIT = Ending.OVERTIME_FORFEIT.value
LATENESS_MARGIN = Rules.lateness_forfeit_margin  # 2.3.6(a): WESPA's, when the clock's result says none
TSH_MAX_SCORE = tsh.DEFAULT_MAX_SCORE  # TSH's Addscore: `config max_score`, else this
TSH_MIN_SCORE = tsh.MIN_SCORE  # TSH's Addscore: lower limit of a game score
MAX_REASON = 300  # characters of a director's reason kept
MAX_NAME = 60  # characters of a player's name typed for a game recorded by table
NO_CLOCK = "no clock record"  # how a result recorded from the slip alone is marked (store, CSV, page)
BY_TABLE = ""  # the division of a game recorded by table: no TSH players (resultstore.py keys it by table)
SLIP_ENDINGS = ("end", OVERTIME_FORFEIT, LATENESS_ENDINGS[0])  # how a slip may say its game ended
# How a result's scores came (issue 27): typed by the scorekeeper from the paper slip, or signed by
# both players at the clock's keypad (5.4.1); a result kept before issue 27 has "" (it was typed).
TYPED = "typed from a slip"
SIGNED = "signed at the clock"
ENTRIES = (TYPED, SIGNED)


class ResultError(ValueError):
    """Scores that cannot be recorded (negative, not numbers, missing, outside TSH's limits)."""


class NeedsDirector(ResultError):
    """A result the rules leave to the director (5.3.3, 2.3.5): not recorded without a decision."""


@dataclass(frozen=True)
class ClockResult:
    """What a clock published at the end of a game (the `result` event of docs/hall.md)."""

    table: int
    game: str
    ending: str | None
    penalties: tuple[int, int]
    overtime_s: tuple[int, int]
    remaining_ms: tuple[int, int]
    forfeits: tuple[int, ...]
    lateness_margin: int | None

    @classmethod
    def from_event(cls, table: int, game: str, r: dict) -> "ClockResult":
        players = {p["player"]: p for p in r["players"]}
        pair = lambda key: (int(players[1].get(key) or 0), int(players[2].get(key) or 0))  # noqa: E731
        return cls(
            table=table,
            game=str(game),
            ending=r.get("ending"),
            penalties=pair("penalty"),
            overtime_s=pair("overtime_s"),
            remaining_ms=pair("remaining_ms"),
            forfeits=tuple(int(p) for p in r.get("forfeits") or ()),
            lateness_margin=r.get("lateness_margin"),
        )

    @property
    def lateness_forfeit(self) -> bool:
        return self.ending in LATENESS_ENDINGS and bool(self.forfeits)


def slip_result(table: int, ending: str | None, forfeit, penalties, rules: dict) -> ClockResult:
    """A game with no clock result, as its result slip has it: how it ended (`SLIP_ENDINGS`), the
    side that forfeited (for a forfeit) and the time penalties written on it (5.3). `rules` are the
    event's ([event], hall.wire.eventrules; as a state carries them: penalty_per_minute,
    forfeit_overtime_ms, lateness_forfeit_margin): a penalty is whole minutes of overtime at the
    penalty a minute, at most the forfeit's (WESPA's 10 minutes: 100 points, 5.3.3). Overtime and times are not known: None."""
    ending = ending or "end"
    if ending not in SLIP_ENDINGS:
        raise ResultError(f"the slip's ending {str(ending)[:30]!r}: allowed are {', '.join(SLIP_ENDINGS)}")
    per_minute = int(rules["penalty_per_minute"])
    most = -(-int(rules["forfeit_overtime_ms"]) // 60_000) * per_minute
    if not isinstance(penalties, (list, tuple)) or len(penalties) != 2:
        raise ResultError("the slip's penalties: two whole numbers, side 1 and side 2 (0 for none)")
    pen = []
    for p in penalties:
        if isinstance(p, bool) or not isinstance(p, int):
            raise ResultError(f"a slip penalty must be a whole number of points, not {p!r}")
        if not 0 <= p <= most or (per_minute and p % per_minute):
            raise ResultError(f"a slip penalty is {per_minute} points a minute or part thereof of overtime, "
                              f"0 to {most} (5.3, 5.3.3), not {p}")
        pen.append(p)
    forfeits: tuple[int, ...] = ()
    if ending != "end":
        if forfeit not in (1, 2) or isinstance(forfeit, bool):
            raise ResultError(f"a {ending} on the slip needs the side that forfeited (1 or 2), not {forfeit!r}")
        forfeits = (forfeit,)
    margin = int(rules["lateness_forfeit_margin"]) if ending in LATENESS_ENDINGS else None
    return ClockResult(int(table), "", ending, tuple(pen), (None, None), (None, None), forfeits, margin)


@dataclass(frozen=True)
class Final:
    """The scores that go to the pairing program, and how they were reached."""

    scores: tuple[int, int]  # clock side 1, side 2 (for a forfeit: the spreads, +margin / -margin)
    penalties: tuple[int, int]  # points taken off each side
    note: str
    needs_director: bool = False  # cannot be recorded until the director decides (5.3.3, 2.3.5)
    forfeits: tuple[int, ...] = ()  # sides that lost by lateness forfeit: exported as TSH forfeits, unrated
    decision: str = ""  # the director's reason, when the director decided


@dataclass(frozen=True)
class Limits:
    """TSH's score limits for the event (`config max_score` in config.tsh), and the event's
    lateness margin (2.3.6(a), [event]: hall.wire.eventrules) for a result that carries none."""

    max_score: int = TSH_MAX_SCORE
    min_score: int = TSH_MIN_SCORE
    lateness_margin: int = LATENESS_MARGIN

    def check(self, v: int, what: str = "a score") -> int:
        if not self.min_score <= v <= self.max_score:
            raise ResultError(f"{what} must be between {self.min_score} and {self.max_score} "
                              f"(TSH's limits, config max_score), not {v}")
        return v


def final_scores(result: ClockResult, slip: tuple | None, margin: int | None = None,
                 limits: Limits = Limits()) -> Final:
    """The recorded result. `slip` is the two scores from the result slip (clock side 1, side 2);
    a lateness forfeit needs none. `margin` is the director's margin for a lateness forfeit, at
    least the rules' 75 (2.3.6(a))."""
    if result.lateness_forfeit:
        base = result.lateness_margin or limits.lateness_margin
        margin = base if margin is None else _whole(margin, "the margin")
        if margin < base:
            raise ResultError(f"a lateness forfeit is a win by at least {base} points (2.3.6(a)), not {margin}")
        limits.check(margin, "the margin")
        if len(result.forfeits) == 2:
            return Final((-margin, -margin), (0, 0), "both players forfeited for lateness (2.3.5): the director decides",
                         True, (1, 2))
        loser = result.forfeits[0]
        spreads = (margin, -margin) if loser == 2 else (-margin, margin)
        return Final(spreads, (0, 0), f"lateness forfeit by side {loser}: a win by {margin} (2.3.6(a)), "
                     "not rated (2.3.6(b))", False, (loser,))
    if slip is None:
        raise ResultError("type both scores from the result slip")
    if len(slip) != 2:
        raise ResultError("type both scores")
    s = tuple(limits.check(_whole(x, "a score"), "a slip score") for x in slip)
    if any(v < 0 for v in s):
        raise ResultError(f"a slip score cannot be negative, not {min(s)}")
    pen = result.penalties
    if result.ending == OVERTIME_FORFEIT and len(result.forfeits) == 1:
        f = result.forfeits[0]
        i = f - 1
        pen = tuple(max(p, OVERTIME_FORFEIT_POINTS) if j == i else p for j, p in enumerate(pen))
        scores = (s[0] - pen[0], s[1] - pen[1])
        note = f"overtime forfeit by side {f}: {pen[i]} points off, a loss (5.3.3)"
        if scores[i] >= scores[1 - i]:
            return Final(scores, pen, note + "; still not below the opponent: the director decides", True)
        return Final(tuple(limits.check(v, "a recorded score") for v in scores), pen, note)
    scores = (s[0] - pen[0], s[1] - pen[1])
    note = "; ".join(f"side {j + 1} -{p} for {result.overtime_s[j]} s overtime (5.3)" if result.overtime_s[j] is not None
                     else f"side {j + 1} -{p} as the slip says (5.3)" for j, p in enumerate(pen) if p)
    return Final(tuple(limits.check(v, "a recorded score") for v in scores), pen, note)


def decide(final: Final, reason: str, scores: tuple | None = None, limits: Limits = Limits()) -> Final:
    """The director's decision on a result that needs one (5.3.3 still ahead, 2.3.5 both late):
    the recorded scores (or, for a double lateness forfeit, the spreads) and a reason, both kept."""
    reason = " ".join(str(reason or "").split())[:MAX_REASON]
    if not reason:
        raise ResultError("the director's decision needs a reason (it is recorded and exported)")
    if final.forfeits == (1, 2):  # 2.3.5: each loses by forfeit, spreads as the director rules
        spreads = final.scores if scores is None else tuple(_whole(x, "a spread") for x in scores)
        if len(spreads) != 2 or any(v > 0 for v in spreads):
            raise ResultError("both players forfeited: each spread is a loss (zero or less)")
        return Final(tuple(limits.check(v, "a spread") for v in spreads), final.penalties,
                     f"{final.note}; director: {reason}", False, (1, 2), reason)
    if scores is None or len(scores) != 2:
        raise ResultError("the director's decision needs both recorded scores")
    s = tuple(limits.check(_whole(x, "a score"), "a recorded score") for x in scores)
    return Final(s, final.penalties, f"{final.note}; director: {reason}", False, final.forfeits, reason)


def typed_names(v) -> tuple[str, str]:
    """The players' names typed for a game recorded by table (optional: None is two blanks): two
    texts, each at most MAX_NAME characters, control characters and runs of spaces dropped."""
    if v is None:
        return ("", "")
    if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(isinstance(x, str) for x in v):
        raise ResultError("names must be two texts, side 1 and side 2 (either may be empty)")
    out = tuple(" ".join("".join(c for c in x if c.isprintable()).split()) for x in v)
    if any(len(x) > MAX_NAME for x in out):
        raise ResultError(f"names: at most {MAX_NAME} characters each")
    return out


def _whole(x, what: str) -> int:
    if isinstance(x, bool):
        raise ResultError(f"{what} must be a whole number, not {x!r}")
    try:
        return int(str(x).strip())
    except ValueError:
        raise ResultError(f"{what} must be a whole number, not {x!r}") from None


@dataclass(frozen=True)
class Recorded:
    """One confirmed result, as the store keeps it (keyed by division, round and the two players;
    a game with no TSH players, division "" and numbers None, by round and table)."""

    division: str
    round: int
    table: int
    numbers: tuple[int | None, int | None]  # TSH player numbers at clock side 1 and 2 (None: recorded by table)
    names: tuple[str, str]
    slip: tuple[int, int] | None
    scores: tuple[int, int]
    penalties: tuple[int, int]
    overtime_s: tuple[int | None, int | None]  # None: not known (no clock record)
    ending: str
    note: str
    forfeits: tuple[int, ...] = ()
    decision: str = ""
    by: str = ""
    at: str = ""  # when confirmed (ISO 8601, UTC), given by the caller
    tsh_table: str = ""  # TSH's own table for the game's board (config tables), "" when TSH names none
    remaining_ms: tuple[int, int] | None = None  # the clock's final times: what an earlier round's tile shows
    no_clock: str = ""  # recorded from the slip alone: why the game has no clock record ("" : the clock's)
    entry: str = ""  # TYPED or SIGNED (issue 27); "" : kept before it, typed

    @classmethod
    def of(cls, division: str, round_: int, table: int, numbers, names, result: ClockResult, slip, final: Final,
           by: str, at: str, tsh_table: str = "", no_clock: str = "", entry: str = TYPED) -> "Recorded":
        # a slip with no clock record has no clock times (None, None): nothing to show for them
        remaining = None if None in tuple(result.remaining_ms) else tuple(result.remaining_ms)
        return cls(division, int(round_), int(table), tuple(numbers), tuple(names),
                   None if slip is None else tuple(int(x) for x in slip), tuple(final.scores), tuple(final.penalties),
                   tuple(result.overtime_s), result.ending or "", final.note, tuple(final.forfeits), final.decision, by, at,
                   tsh_table, remaining, no_clock, entry)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Recorded":
        tup = lambda v: None if v is None else tuple(v)  # noqa: E731
        return cls(**{**d, "numbers": tup(d["numbers"]), "names": tup(d["names"]), "slip": tup(d.get("slip")),
                      "scores": tup(d["scores"]), "penalties": tup(d["penalties"]), "overtime_s": tup(d["overtime_s"]),
                      "forfeits": tup(d.get("forfeits") or ()), "remaining_ms": tup(d.get("remaining_ms"))})

    def same_result(self, other: "Recorded") -> bool:
        """The same recorded outcome (who confirmed it and when, where TSH put the table, the clock's
        final times and whether it was typed or signed aside)."""
        keep = lambda r: {k: v for k, v in r.as_dict().items() if k not in ("by", "at", "tsh_table", "remaining_ms", "entry")}  # noqa: E731
        return keep(self) == keep(other)

    @property
    def rated(self) -> bool:
        return not self.forfeits  # a lateness forfeit does not count towards ratings (2.3.6(b))


@dataclass(frozen=True)
class Column:
    """One column of a results table: `key` heads the CSV and names the value in the page's JSON,
    `heading` is what the page's table says above it, `kind` how a cell is drawn ("text", or
    "number": right-aligned), `value` the cell from a recorded result (a plain value: text, a whole
    number or None, written empty), `page` whether the director's page draws it too (the CSV writes
    every column)."""

    key: str
    heading: str
    value: Callable[["Recorded"], str | int | None]
    kind: str = "text"
    page: bool = True

    def as_dict(self) -> dict:
        return {"key": self.key, "heading": self.heading, "kind": self.kind, "page": self.page}


def _side(i: int) -> tuple[Column, ...]:
    """A side's columns (i: 0 for side 1, 1 for side 2); for a forfeit, the score is the spread TSH
    records; the overtime of a result from the slip alone is empty (not known)."""
    n = i + 1
    return (
        Column(f"player{n}", f"TSH player {n}", lambda r: r.numbers[i] or "", "number", page=False),
        Column(f"name{n}", f"Side {n}", lambda r: r.names[i]),
        Column(f"slip{n}", f"Slip {n}", lambda r: (r.slip or ("", ""))[i], "number", page=False),
        Column(f"penalty{n}", f"Penalty {n}", lambda r: r.penalties[i], "number"),
        Column(f"overtime{n}_s", f"Overtime {n} (s)", lambda r: r.overtime_s[i], "number", page=False),
        Column(f"score{n}", f"Score {n}", lambda r: r.scores[i], "number"),
    )


# The results of a round, one line a result: the CSV export and the page's Results table are this
# one list (round_view). A new column is one entry here: the CSV and the page both show it.
RESULT_COLUMNS: tuple[Column, ...] = (
    Column("division", "Division", lambda r: r.division),
    Column("round", "Round", lambda r: r.round, "number", page=False),
    Column("table", "Table", lambda r: r.table, "number"),
    *_side(0),
    *_side(1),
    Column("ending", "Ending", lambda r: r.ending),
    Column("rated", "Rated", lambda r: "yes" if r.rated else "no", page=False),  # 2.3.6(b)
    Column("note", "Note", lambda r: r.note),
    Column("director", "Director's decision", lambda r: r.decision, page=False),
    Column("confirmed_by", "Confirmed by", lambda r: r.by, page=False),
    Column("tsh_table", "TSH table", lambda r: r.tsh_table),
    Column("clock_record", "Clock", lambda r: NO_CLOCK if r.no_clock else "clock"),
    Column("entry", "Entry", lambda r: r.entry or TYPED),
)


@dataclass(frozen=True)
class View:
    """A table as plain values: its columns and its rows (each a list, in the columns' order)."""

    columns: tuple[Column, ...]
    rows: list[list]

    def as_dict(self) -> dict:
        return {"columns": [c.as_dict() for c in self.columns], "rows": self.rows}


def round_view(rows: list[Recorded]) -> View:
    """The results table, by division, round and table: what the CSV writes (to_csv) and the page's
    Results table draws (GET /api/results, static/viewtable.js)."""
    cols = RESULT_COLUMNS
    return View(cols, [[c.value(r) for c in cols] for r in sorted(rows, key=lambda r: (r.division, r.round, r.table))])


def to_csv(rows: list[Recorded]) -> str:
    """One line a result (round_view), headed by the columns' keys. `clock_record` is "clock" or
    "no clock record" (from the slip alone: overtime empty, the reason in `note`); `entry` says how
    the scores came: typed from a slip, or signed at the clock (issue 27)."""
    view = round_view(rows)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([c.key for c in view.columns])
    w.writerows(view.rows)
    return out.getvalue()


# Addscore's entry systems (TSH's `config entry`) the export can write: each a game line's words.
# 'tagged' needs a tag per game and 'sudoku' has one player a game: the hall has neither.
TSH_ENTRIES = ("scores", "both", "board", "spread")


@dataclass
class TshExport:
    text: str
    missing: list[int] = field(default_factory=list)  # tables left out: no TSH player numbers
    byes: list[int] = field(default_factory=list)  # players given TSH's bye spread
    unscored: list[int] = field(default_factory=list)  # players TSH still has no score for once it is entered
    problems: list[str] = field(default_factory=list)  # lines left out, and why


def to_tsh(division: str, round_: int, rows: list[Recorded], players: tsh.Division | None = None,
           config: tsh.Config | None = None) -> TshExport:
    """What to type (or feed) into TSH for one division's round, so that TSH ends the round with
    every player scored (docs/console.md "TSH score entry"; TSH 3.340's PAIR and Addscore):

    1. `pair PN 0 ROUND DIVISION` for both players of each lateness forfeit (TSH's forfeit is a
       player paired with a bye);
    2. `a ROUND DIVISION`: add-score mode, which TSH opens only while every earlier round is
       scored (its CheckRoundNumber);
    3. one line a game in the form TSH's `config entry` reads (`scores`: `PN1 PS1 PN2 PS2`;
       `both`: and the spread; `board`: the board first; `spread`: `PN1 PN2 SPREAD`), the first
       player first;
    4. `PN SPREAD` for each forfeit, then `PN BYE_SPREAD` for every player of `players` (the
       division as TSH's files have it) paired with a bye this round and not yet scored there:
       TSH scores a bye by itself only when it is the division's one unpaired player (ScoreBye),
       so a division with several byes, or a bye next to a forfeit, is left unfinished otherwise;
    5. an empty line, which leaves add-score mode."""
    entry = config.entry if config is not None else tsh.DEFAULT_ENTRY
    if entry not in TSH_ENTRIES:
        raise ResultError(f"config entry = '{entry}' in config.tsh: the TSH export writes games for entry "
                          f"{', '.join(repr(e) for e in TSH_ENTRIES)} only; enter this round in TSH by hand")
    bye_spread = config.bye_spread if config is not None else tsh.DEFAULT_BYE_SPREAD
    i = round_ - 1
    pairs: list[str] = []
    games: list[str] = []
    forfeits: list[str] = []
    out = TshExport("")
    entered: set[int] = set()
    for r in sorted(rows, key=lambda r: r.table):
        if r.division != division or r.round != round_:
            continue
        if None in r.numbers:
            out.missing.append(r.table)
            continue
        if r.forfeits:
            for side in (1, 2):
                pairs.append(f"pair {r.numbers[side - 1]} 0 {round_} {division}")
                forfeits.append(f"{r.numbers[side - 1]} {r.scores[side - 1]}")  # no "+": TSH would store it as text
            entered.update(r.numbers)
            continue
        line = _game_line(entry, r, players, i)
        if line is None:
            out.problems.append(f"table {r.table}: players {r.numbers[0]} and {r.numbers[1]} have no board in "
                                f"TSH's file for round {round_}, which config entry = 'board' needs: not exported")
            out.missing.append(r.table)
            continue
        if entry != "spread" and ((r.scores[0] == 0 and r.scores[1] == bye_spread) or
                                   (r.scores[1] == 0 and r.scores[0] == bye_spread)):
            # TSH's CheckScores (eabbye) refuses this score as a bye typed as a game
            out.problems.append(f"table {r.table}: TSH refuses a game scored {r.scores[0]}-{r.scores[1]} (0 against "
                                f"its bye spread, {bye_spread}) as a bye typed as a game: enter it in TSH by hand")
        games.append(line)
        entered.update(r.numbers)
    if players is not None:
        for p in sorted(players.players.values(), key=lambda p: p.number):
            if not p.active or p.number in entered or (i < len(p.scores) and p.scores[i] is not None):
                continue  # withdrawn (TSH scores them when it pairs), in this export, or scored in TSH already
            if (p.opponents[i] if i < len(p.opponents) else None) == 0:
                out.byes.append(p.number)
            else:
                out.unscored.append(p.number)
    lines = pairs + [f"a {round_} {division}"] + games + forfeits + [f"{n} {bye_spread}" for n in out.byes]
    out.text = "\n".join(lines) + "\n\n"
    return out


def _game_line(entry: str, r: Recorded, players: tsh.Division | None, i: int) -> str | None:
    (n1, n2), (s1, s2) = r.numbers, r.scores
    if entry == "both":
        return f"{n1} {s1} {n2} {s2} {s1 - s2}"
    if entry == "spread":
        return f"{n1} {n2} {s1 - s2}"
    if entry == "board":
        p = players.players.get(n1) if players is not None else None
        board = p.board(i) if p is not None else None
        return None if board is None else f"{board} {n1} {s1} {n2} {s2} {s1 - s2}"
    return f"{n1} {s1} {n2} {s2}"
