"""Results: a finished game's clock result plus the two scores from the slip, penalties applied.

Pure functions, no I/O. The scorekeeper types the scores as written on the result slip (before time
penalties); the console works out what goes to the pairing program:
- time penalty: 10 points per minute or part thereof of overtime, off the offender's score (5.3),
  as the clock counted it (`penalty` in the clock's result, never recomputed here);
- overtime forfeit (5.3.3): the forfeiter loses, with 100 penalty points deducted first; the
  non-forfeiter's score is unchanged;
- lateness forfeit (2.3.4, 2.3.5): a win for the opponent by 75 points (2.3.6(a)), which the director
  may increase; exported as margin-0, since no game was played.

Exports: one CSV per round, and TSH's score-entry lines (`a ROUND DIVISION`, then `PN1 PS1 PN2 PS2`
per game) so nobody subtracts penalties by hand (docs/console.md).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

LATENESS_ENDINGS = ("lateness forfeit", "optional forfeit")
OVERTIME_FORFEIT = "overtime forfeit"
OVERTIME_FORFEIT_POINTS = 100  # 5.3.3


class ResultError(ValueError):
    """Scores that cannot be recorded (negative, not numbers, missing)."""


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

    scores: tuple[int, int]
    penalties: tuple[int, int]  # points taken off each side
    note: str
    needs_director: bool = False  # something the director must look at before confirming


def final_scores(result: ClockResult, slip: tuple[int, int] | None, margin: int | None = None) -> Final:
    """The recorded result. `slip` is the two scores from the result slip (clock side 1, side 2);
    a lateness forfeit needs none. `margin` is the director's margin for a lateness forfeit, at
    least the rules' 75 (2.3.6(a))."""
    if result.lateness_forfeit:
        base = result.lateness_margin or 75
        margin = base if margin is None else int(margin)
        if margin < base:
            raise ResultError(f"a lateness forfeit is a win by at least {base} points (2.3.6(a)), not {margin}")
        if len(result.forfeits) == 2:
            return Final((0, 0), (0, 0), "both players forfeited for lateness (2.3.5): the director records it", True)
        loser = result.forfeits[0]
        scores = (margin, 0) if loser == 2 else (0, margin)
        return Final(scores, (0, 0), f"lateness forfeit by side {loser}: a win by {margin} (2.3.6(a))")
    if slip is None:
        raise ResultError("type both scores from the result slip")
    s = tuple(_score(x) for x in slip)
    pen = result.penalties
    if result.ending == OVERTIME_FORFEIT and len(result.forfeits) == 1:
        f = result.forfeits[0]
        i = f - 1
        pen = tuple(max(p, OVERTIME_FORFEIT_POINTS) if j == i else p for j, p in enumerate(pen))
        scores = (s[0] - pen[0], s[1] - pen[1])
        note = f"overtime forfeit by side {f}: {pen[i]} points off, a loss (5.3.3)"
        if scores[i] >= scores[1 - i]:
            return Final(scores, pen, note + "; still not below the opponent: the director decides", True)
        return Final(scores, pen, note)
    scores = (s[0] - pen[0], s[1] - pen[1])
    note = "; ".join(f"side {j + 1} -{p} for {result.overtime_s[j]} s overtime (5.3)" for j, p in enumerate(pen) if p)
    return Final(scores, pen, note)


def _score(x) -> int:
    try:
        v = int(str(x).strip())
    except ValueError:
        raise ResultError(f"a score must be a whole number, not {x!r}") from None
    if v < 0 or v > 2000:
        raise ResultError(f"a score must be between 0 and 2000, not {v}")
    return v


@dataclass(frozen=True)
class Row:
    """One confirmed game of a round, ready to export."""

    division: str
    round: int
    table: int
    result: ClockResult
    slip: tuple[int, int] | None
    final: Final
    numbers: tuple[int | None, int | None] = (None, None)  # TSH player numbers, side 1 and 2
    names: tuple[str, str] = ("", "")
    confirmed_by: str = ""


CSV_HEAD = [
    "division", "round", "table",
    "player1", "name1", "slip1", "penalty1", "overtime1_s", "score1",
    "player2", "name2", "slip2", "penalty2", "overtime2_s", "score2",
    "ending", "note",
]


def to_csv(rows: list[Row]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_HEAD)
    for r in sorted(rows, key=lambda r: r.table):
        slip = r.slip or ("", "")
        w.writerow([
            r.division, r.round, r.table,
            r.numbers[0] or "", r.names[0], slip[0], r.final.penalties[0], r.result.overtime_s[0], r.final.scores[0],
            r.numbers[1] or "", r.names[1], slip[1], r.final.penalties[1], r.result.overtime_s[1], r.final.scores[1],
            r.result.ending or "", r.final.note,
        ])
    return out.getvalue()


@dataclass
class TshExport:
    text: str
    missing: list[int] = field(default_factory=list)  # tables left out: no TSH player numbers


def to_tsh(division: str, round_: int, rows: list[Row]) -> TshExport:
    """TSH's add-score mode for the division and round: `a ROUND DIVISION`, then `PN1 PS1 PN2 PS2`."""
    lines = [f"a {round_} {division}"]
    missing = []
    for r in sorted(rows, key=lambda r: r.table):
        if r.division != division or r.round != round_:
            continue
        if None in r.numbers:
            missing.append(r.table)
            continue
        lines.append(f"{r.numbers[0]} {r.final.scores[0]} {r.numbers[1]} {r.final.scores[1]}")
    return TshExport("\n".join(lines) + "\n", missing)
