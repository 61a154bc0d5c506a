"""Every division in one hall: which game of which division plays at which table, for a round.

Pure. The hall's tables are the clocks' numbers (`rackside/v1/<hall>/table/<n>`), one game each,
numbered hall-wide. A division's board becomes a table:
- TSH's own mapping first: `config tables = {'A' => [...]}` in config.tsh lists the table of each of
  a division's boards (board N at the Nth entry); an entry that is a whole number is that table;
- otherwise the divisions are laid end to end in config.tsh's order (or the order they were
  imported): a division's board N is table N plus the boards of the divisions before it (each
  division's highest board in any round its file has, so a division keeps its tables all event).
  An entry that is a label (TSH prints "A4") is kept as the table's label, shown on the tile;
- a tourney.js has the same mapping in its `config.tables` (tsh.Division.tables): used for a
  division config.tsh gives none for.
Two games on one table in a round cannot both be placed: the second is a problem, never dropped
silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .tsh import Config, Division


@dataclass(frozen=True)
class Seat:
    """One game of the round at one table; `numbers[0]` starts (clock side 1)."""

    table: int
    label: str  # TSH's table for the board ("A4", "12"), or "board N"
    division: str
    round: int
    board: int
    numbers: tuple[int, int]
    names: tuple[str, str]
    tsh_table: str = ""  # TSH's own table for the board (`tables`), "" when TSH names none
    # who TSH says starts (its `p12`, 2.1(b)(i)): numbers[0], or None when TSH's file does not say
    # (the lower number is then put first, but the players draw tiles, 2.1(a))
    starter: int | None = None

    def as_dict(self) -> dict:
        return {"table": self.table, "label": self.label, "division": self.division, "round": self.round,
                "board": self.board, "numbers": list(self.numbers), "names": list(self.names),
                "tsh_table": self.tsh_table, "starter": self.starter}


def span(div: Division) -> int:
    """The highest board a division uses in any round its file has."""
    best = 0
    for p in div.players.values():
        for b in p.annotation("board"):
            if b is not None and b > best:
                best = b
    return best


def plan(divisions: list[Division], config: Config | None, round_: int) -> tuple[dict[int, Seat], list[str]]:
    """The hall's seating for round `round_`: table -> seat, and the problems (unplaceable games,
    with file and line)."""
    order = list(divisions)
    if config is not None:
        rank = {name.lower(): i for i, (name, _) in enumerate(config.divisions)}
        order.sort(key=lambda d: rank.get(d.name.lower(), len(rank)))
    seats: dict[int, Seat] = {}
    problems: list[str] = []
    offset = 0
    for div in order:
        labels = (config.tables(div.name) if config is not None else None) or div.tables
        games, _byes, div_problems = div.round_plan(round_)
        problems.extend(div_problems)
        for g in games:
            label = labels[g.board - 1] if labels and g.board <= len(labels) else None
            if label is not None and re.fullmatch(r"\d+", label) and int(label) > 0:
                table = int(label)
            else:
                table = offset + g.board
            seat = Seat(table, label or f"board {g.board}", div.name, round_, g.board,
                        (g.first.number, g.second.number), (g.first.name, g.second.name), label or "",
                        g.first.number if g.starter_known else None)
            taken = seats.get(table)
            if taken is not None:
                where = f"{div.source}:{g.first.line}" if g.first.line else div.source
                problems.append(f"{where}: division {div.name} round {round_}: players {g.first.number} and "
                                f"{g.second.number} (board {g.board}) would play at table {table}, where division "
                                f"{taken.division} board {taken.board} plays: not placed")
                continue
            seats[table] = seat
        offset += span(div)
    return seats, problems
