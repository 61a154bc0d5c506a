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

Exports: CSV and TSH's score entry (`a ROUND DIVISION`, then `PN1 PS1 PN2 PS2` per game, the first
player first) per division and round, from the results store (resultstore.py).
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, field

from rackside.firmware.clock import OVERTIME_FORFEIT_POINTS, Ending, Rules

from . import tsh

# A result's `ending` is the clock core's Ending, by value (the page has these from the snapshot)
LATENESS_ENDINGS = (Ending.LATENESS_FORFEIT.value, Ending.OPTIONAL_FORFEIT.value)  # 2.3.5, 2.3.4
OVERTIME_FORFEIT = Ending.OVERTIME_FORFEIT.value
LATENESS_MARGIN = Rules.lateness_forfeit_margin  # 2.3.6(a): WESPA's, when the clock's result says none
TSH_MAX_SCORE = tsh.DEFAULT_MAX_SCORE  # TSH's Addscore: `config max_score`, else this
TSH_MIN_SCORE = tsh.MIN_SCORE  # TSH's Addscore: lower limit of a game score
MAX_REASON = 300  # characters of a director's reason kept


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
    """TSH's score limits for the event (`config max_score` in config.tsh)."""

    max_score: int = TSH_MAX_SCORE
    min_score: int = TSH_MIN_SCORE

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
        base = result.lateness_margin or LATENESS_MARGIN
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
    note = "; ".join(f"side {j + 1} -{p} for {result.overtime_s[j]} s overtime (5.3)" for j, p in enumerate(pen) if p)
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


def _whole(x, what: str) -> int:
    if isinstance(x, bool):
        raise ResultError(f"{what} must be a whole number, not {x!r}")
    try:
        return int(str(x).strip())
    except ValueError:
        raise ResultError(f"{what} must be a whole number, not {x!r}") from None


@dataclass(frozen=True)
class Recorded:
    """One confirmed result, as the store keeps it (keyed by division, round and the two players)."""

    division: str
    round: int
    table: int
    numbers: tuple[int | None, int | None]  # TSH player numbers at clock side 1 and 2
    names: tuple[str, str]
    slip: tuple[int, int] | None
    scores: tuple[int, int]
    penalties: tuple[int, int]
    overtime_s: tuple[int, int]
    ending: str
    note: str
    forfeits: tuple[int, ...] = ()
    decision: str = ""
    by: str = ""
    at: str = ""  # when confirmed (ISO 8601, UTC), given by the caller

    @classmethod
    def of(cls, division: str, round_: int, table: int, numbers, names, result: ClockResult, slip, final: Final,
           by: str, at: str) -> "Recorded":
        return cls(division, int(round_), int(table), tuple(numbers), tuple(names),
                   None if slip is None else tuple(int(x) for x in slip), tuple(final.scores), tuple(final.penalties),
                   tuple(result.overtime_s), result.ending or "", final.note, tuple(final.forfeits), final.decision, by, at)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Recorded":
        tup = lambda v: None if v is None else tuple(v)  # noqa: E731
        return cls(**{**d, "numbers": tup(d["numbers"]), "names": tup(d["names"]), "slip": tup(d.get("slip")),
                      "scores": tup(d["scores"]), "penalties": tup(d["penalties"]), "overtime_s": tup(d["overtime_s"]),
                      "forfeits": tup(d.get("forfeits") or ())})

    def same_result(self, other: "Recorded") -> bool:
        """The same recorded outcome (who confirmed it and when aside)."""
        keep = lambda r: {k: v for k, v in r.as_dict().items() if k not in ("by", "at")}  # noqa: E731
        return keep(self) == keep(other)

    @property
    def rated(self) -> bool:
        return not self.forfeits  # a lateness forfeit does not count towards ratings (2.3.6(b))


CSV_HEAD = [
    "division", "round", "table",
    "player1", "name1", "slip1", "penalty1", "overtime1_s", "score1",
    "player2", "name2", "slip2", "penalty2", "overtime2_s", "score2",
    "ending", "rated", "note", "director", "confirmed_by",
]


def to_csv(rows: list[Recorded]) -> str:
    """One line a result; for a forfeit, score1/score2 are the spreads TSH records."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_HEAD)
    for r in sorted(rows, key=lambda r: (r.division, r.round, r.table)):
        slip = r.slip or ("", "")
        w.writerow([
            r.division, r.round, r.table,
            r.numbers[0] or "", r.names[0], slip[0], r.penalties[0], r.overtime_s[0], r.scores[0],
            r.numbers[1] or "", r.names[1], slip[1], r.penalties[1], r.overtime_s[1], r.scores[1],
            r.ending, "yes" if r.rated else "no", r.note, r.decision, r.by,
        ])
    return out.getvalue()


@dataclass
class TshExport:
    text: str
    missing: list[int] = field(default_factory=list)  # tables left out: no TSH player numbers


def to_tsh(division: str, round_: int, rows: list[Recorded]) -> TshExport:
    """What to type (or feed) into TSH for one division's round: first the PAIR commands that turn
    each lateness forfeit into TSH's forfeit (a bye for each player), then add-score mode
    `a ROUND DIVISION`, one `PN1 PS1 PN2 PS2` a game (the first player first) and `PN SPREAD` a
    forfeit, and an empty line that leaves add-score mode."""
    pairs: list[str] = []
    lines = [f"a {round_} {division}"]
    missing = []
    for r in sorted(rows, key=lambda r: r.table):
        if r.division != division or r.round != round_:
            continue
        if None in r.numbers:
            missing.append(r.table)
            continue
        if r.forfeits:
            for side in (1, 2):
                pairs.append(f"pair {r.numbers[side - 1]} 0 {round_} {division}")
                lines.append(f"{r.numbers[side - 1]} {r.scores[side - 1]}")  # no "+": TSH would store it as text
            continue
        lines.append(f"{r.numbers[0]} {r.scores[0]} {r.numbers[1]} {r.scores[1]}")
    return TshExport("\n".join(pairs + lines) + "\n\n", missing)
