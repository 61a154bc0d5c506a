"""The signed result (issue 27 item 4; 5.4.1, 5.4.2): what the console does with a clock's slip. Pure.

After the game the winner types both scores from the score sheets (5.4.2), the clock adds its own
time penalties, and both players sign with their own button; the clock then publishes the event
"slip" (docs/hall.md: `scores` by side, the clock's `penalties`, `final`, the check-in `numbers`).
The console records it only when it agrees with what the console already knows:

- the round's pairing at that table: both players' numbers checked in, and they are the two TSH
  paired here (the sides may be either way round: 1.4.5);
- the clock's own result of that game: the game it ended, with the same time penalties (5.3);
- the rules (results.py, through event.Event.result): an overtime forfeit the loser is still not
  behind in, or a double lateness forfeit, is the director's (5.3.3, 2.3.5); a lateness forfeit's
  scores are its margin (2.3.6(a)).

A slip that agrees is recorded, or held for the scorekeeper's one click when the director's setting
says so (`[console] slips = "hold"`, SLIPS); one that disagrees is held with why. A game recorded
already is never changed by a slip: a signed result sheet is final (5.4.1), so only the director
changes a recorded result, with a reason (5.4.1(b) for reversed scores, corrected on petition;
5.4.1(a), the players' correction by agreement, is before both sign: on the clock, `*` clears the
slip): the slip is refused, saying so. The console answers every slip with
`slip_outcome` (recorded, held or refused, and why). A slip of a game the table's clock is not on
and the console never bound to it is ignored (paperless.py: not held, audited or answered).
A held slip stays until the director records the game from the form (a correction or a decision,
with a reason) and sets it aside, or records it with one click when it agrees; a real clock's
final slip is never typed again (game.slip: FINAL), so the same slip comes again only as a
resend or a redelivery, answered again and audited once. Bounded: one held slip a table, its latest game's (an earlier game's held slip is replaced: it is in
the audit and the table's history), at most MAX_HELD = MAX_TABLE. A held slip is its game's
binding's (`bound`): a later game reusing the id at the table is not its game (Held.of_game).
"""

from __future__ import annotations

from collections import OrderedDict

from rackside.game.checkin import MAX_TABLE

from ..state.checkin import on_sides
from ..scoring.results import LATENESS_ENDINGS

RECORD, HOLD = "record", "hold"
SLIPS = (RECORD, HOLD)  # [console] slips: what the console does with a slip that agrees
MAX_HELD = MAX_TABLE  # one a table


def signed_numbers(slip: dict, seat: dict | None, clock_result: dict | None) -> list:
    """The TSH numbers at side 1 and side 2 as the slip has them; a side that never checked in
    because its player forfeited for lateness (2.3.5: never arrived) is the seat's other player."""
    numbers = list(slip["numbers"])
    if seat is None or numbers.count(None) != 1 or clock_result is None:
        return numbers
    absent = numbers.index(None) + 1
    present = numbers[2 - absent]
    late = clock_result.get("ending") in LATENESS_ENDINGS and list(clock_result.get("forfeits") or []) == [absent]
    if late and present in seat["numbers"]:
        numbers[absent - 1] = next(x for x in seat["numbers"] if x != present)
    return numbers


def disagreement(slip: dict, seat: dict | None, clock_result: dict | None) -> str | None:
    """Why the slip cannot be recorded as it is (None: it agrees with the pairing and the clock)."""
    numbers = signed_numbers(slip, seat, clock_result)
    if seat is None:
        return "no TSH game is seated at this table this round: record it by hand from the slip"
    if None in numbers:
        side = numbers.index(None) + 1
        return f"side {side} did not check in: the slip does not say who played there"
    if sorted(numbers) != sorted(seat["numbers"]):
        return (f"the slip's players {numbers[0]} and {numbers[1]} are not the pair TSH has at this table "
                f"({seat['numbers'][0]} and {seat['numbers'][1]}, round {seat['round']})")
    if clock_result is None:
        return f"the console has no clock result of the slip's game {slip['game']}"
    if clock_result.get("game") != slip["game"]:
        return f"the slip is of game {slip['game']}, the clock's result of game {clock_result.get('game')}"
    pen = [p["penalty"] for p in clock_result["players"]]
    if list(slip["penalties"]) != pen:
        return f"the slip's time penalties {slip['penalties'][0]}/{slip['penalties'][1]} are not the clock's {pen[0]}/{pen[1]} (5.3)"
    return None


def twice_why(twice: str, disagrees: str | None) -> str:
    """Why a slip of a game in which the table's identity was used twice is held (issue 36)."""
    return (f"held for the director: {twice}; a copied card could have sent this slip: ask both players what they signed"
            + (f" (and it does not agree: {disagrees})" if disagrees else ""))


def seat_as_signed(seat: dict, numbers: list) -> dict:
    """The seat with its players in the order they signed (side 1, side 2): the slip's sides
    (checkin.on_sides, the one mapping from a seat to the sides)."""
    return on_sides(seat, dict(zip((1, 2), numbers)))


class Held:
    """The slips waiting for the scorekeeper or the director: one a table, its latest game's."""

    def __init__(self) -> None:
        self.slips: OrderedDict[int, dict] = OrderedDict()  # table -> held, the latest held last

    def hold(self, n: int, slip: dict, why: str, agrees: bool, suspect: bool = False, bound: str | None = None) -> dict:
        """`suspect`: held because the table's identity was used twice (issue 36): never recorded but
        by the director, and not replaced by a later slip that is recorded. `bound`: the binding of
        the slip's game when it was held (paperless.Paperless.binding): a later game that reuses the
        id at this table is another game (hallstate.HallState._renewed), not this slip's."""
        self.slips.pop(n, None)  # the table's earlier held slip (another game's, or this one's before)
        held = self.slips[n] = {"table": n, "slip": slip, "why": why, "agrees": agrees, "suspect": suspect, "bound": bound}
        while len(self.slips) > MAX_HELD:  # only a store from elsewhere: tables are at most MAX_TABLE
            self.slips.popitem(last=False)
        return held

    def take(self, n: int, game: str) -> dict | None:
        return self.slips.pop(n) if self.get(n, game) is not None else None

    def get(self, n: int, game: str) -> dict | None:
        """Table `n`'s held slip of game id `game`, whichever game bore that id (the director's list)."""
        held = self.slips.get(n)
        return held if held is not None and held["slip"]["game"] == game else None

    def of_game(self, n: int, game: str, bound: str | None) -> dict | None:
        """Table `n`'s held slip of the game that now bears id `game` (bound since `bound`): not an
        earlier game's that had the same id. A row kept before bindings were (no "bound"), or either
        side's binding unknown, matches."""
        held = self.get(n, game)
        if held is None or None in (held.get("bound"), bound):
            return held
        return held if held["bound"] == bound else None

    def view(self) -> list[dict]:
        return list(self.slips.values())

    def rows(self) -> list[dict]:
        return self.view()

    def restore(self, rows) -> None:
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, dict) and isinstance(row.get("table"), int) and isinstance(row.get("slip"), dict) \
                    and isinstance(row["slip"].get("game"), str):
                self.slips.pop(row["table"], None)  # one a table: a later row (an older console kept more) wins
                self.slips[row["table"]] = row
        while len(self.slips) > MAX_HELD:
            self.slips.popitem(last=False)
