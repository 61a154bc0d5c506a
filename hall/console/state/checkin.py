"""Check-in at the table (issue 27 item 2): who sits where, checked against the round's pairings. Pure.

Before the game each player types their TSH player number on the clock's keypad and presses their
own button: that press is their arrival (2.3.1(b)) and says which side they sit on, whichever way
round the non-starter placed the clock (1.4.5). The clock publishes it as the input "checkin"
(`player`: the side, `number`: the number typed; docs/hall.md). The console holds it against the
round's pairing at that table (hallplan's seat, TSH's `p12` naming the starter, 2.1(b)(i)):

- a number paired here checks that side in; the tile shows who sits where, the starter marked;
- a number already checked in at the other side of the table is refused, as the clock refuses it
  (game.checkin): the tile shows the conflict (`conflict`: the side, the number, who holds it)
  until a check-in settles it (the player who took the number types their own), so the director
  sees a player who typed their opponent's number (issue 40);
- a number not paired here is answered with the `seat` command: the table that player plays at this
  round (the clock shows "tAbL 14" on that side), or null when the round has no such player; the
  director's page lists the pair at the wrong table until that player checks in where they play.

`pairing` is the command each table gets when the round's pairings are known and again when its clock
comes online (docs/hall.md, `pairing`). `absent_sides` is what the one confirmation at the scheduled
start offers: the sides not checked in at each table whose game has not begun (2.3.2(a), 2.3.3(a)).

Bounded: one check-in per side of each table (MAX_TABLE tables), and the latest MAX_WRONG wrong-table
check-ins. The console's event loop owns it; nothing here does I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from rackside.game.checkin import MAX_NAME_CHARS, seated_after

MAX_WRONG = 100  # wrong-table check-ins shown to the director (the oldest forgotten first)


@dataclass
class Seated:
    """A table's check-ins in one clock game: side -> TSH number, and when."""

    game: str
    numbers: dict = field(default_factory=dict)  # side (1, 2) -> TSH player number
    at: dict = field(default_factory=dict)  # side -> the clock's time of the press (ISO), if it sent one
    refused: dict = field(default_factory=dict)  # side -> the number it typed that the other side holds

    def settle(self) -> None:
        """A refusal stands while the other side holds its number (game.checkin._settled)."""
        self.refused = {s: x for s, x in self.refused.items() if self.numbers.get(3 - s) == x}


def pairing(seat: dict) -> dict:
    """The `pairing` command's fields for a seat (hallplan.Seat.as_dict): the round, the two TSH
    numbers and the starter TSH names (null: the players draw for it, 2.1(a))."""
    fields = {"cmd": "pairing", "round": seat["round"], "numbers": list(seat["numbers"]), "starter": seat.get("starter")}
    names = seat.get("names")
    if isinstance(names, (list, tuple)) and len(names) == 2 and all(isinstance(n, str) for n in names):
        fields["names"] = [n[:MAX_NAME_CHARS] for n in names]  # a text display shows them (issue 40)
    return fields


def where_plays(number: int, seat: dict | None, seats: dict[int, dict]) -> int | None:
    """The table `number` plays at in this round: among the seats of the same division and round as
    `seat` (TSH numbers are a division's own); for a table TSH seats no game at, the one table whose
    seat has that number in any division, if only one has. None: not in this round's pairings."""
    if seat is not None:
        same = [n for n, s in seats.items() if s and s["division"] == seat["division"] and s["round"] == seat["round"]
                and number in s["numbers"]]
    else:
        same = [n for n, s in seats.items() if s and number in s["numbers"]]
    return same[0] if len(same) == 1 else None


def on_sides(seat: dict, sides: dict) -> dict:
    """The seat (hallplan's: TSH's order, its starter first) with its players in the clock's sides
    they sit at, side 1 first, from `sides` (side -> TSH number; one side is enough: the other
    player sits at the other). The one mapping from a seat to the sides: the director's tile and
    result form, the public pairings and live tables (issue 35). `seat` itself when it is already in
    side order or `sides` names none of its players."""
    for side, number in sorted(sides.items()):
        numbers = list(seat["numbers"])
        if side in (1, 2) and number in numbers:
            if numbers.index(number) + 1 == side:
                return seat
            return {**seat, "numbers": numbers[::-1], "names": list(seat["names"])[::-1]}
    return seat


def recorded_sides(final: dict | None) -> dict:
    """Side -> TSH number of a recorded result (event.tile_final's `numbers`, by side): the sides a
    game was recorded with, when no check-in says them (a console restarted keeps none)."""
    numbers = (final or {}).get("numbers") or ()
    return {s: x for s, x in zip((1, 2), numbers) if x is not None}


def name_of(number: int, seat: dict | None) -> str:
    if seat and number in seat["numbers"]:
        return seat["names"][list(seat["numbers"]).index(number)]
    return ""


class CheckIns:
    def __init__(self) -> None:
        self.tables: dict[int, Seated] = {}
        # (table, side, number) -> the wrong-table check-in as the page shows it, latest last
        self.wrong: OrderedDict[tuple, dict] = OrderedDict()

    def check_in(self, n: int, event: dict, seat: dict | None, seats: dict[int, dict]) -> dict | None:
        """A "checkin" input at table `n` (checked by the contract: `player`, `number`), against
        `seat` (the round's game here) and the round's `seats` (table -> seat). Returns the `seat`
        command's fields to answer with when the number is not paired here, else None."""
        side, number, game = event.get("player"), event.get("number"), event["game"]
        if side not in (1, 2) or number is None:
            return None
        here = self.tables.get(n)
        if here is None or here.game != game:
            here = self.tables[n] = Seated(game)
        if seat is None or number not in seat["numbers"]:
            here.numbers.pop(side, None)  # that side is not checked in (the clock says where to go)
            here.refused.pop(side, None)  # nor refused: the clock's USEd on that side is gone (game.checkin)
            here.settle()
            goes_to = where_plays(number, seat, seats)
            goes = seats.get(goes_to) if goes_to is not None else None
            self.wrong.pop((n, side, number), None)
            self.wrong[(n, side, number)] = {"table": n, "side": side, "number": number, "goes_to": goes_to,
                                             "name": name_of(number, goes), "at": event.get("at"), "game": game}
            while len(self.wrong) > MAX_WRONG:
                self.wrong.popitem(last=False)
            return {"cmd": "seat", "number": number, "table": goes_to}
        # the clock's own rule (game.checkin): a number is at one side only, the first side keeps it
        before = (here.numbers.get(1), here.numbers.get(2))
        after = seated_after(before, side, number)
        here.numbers = {s: x for s, x in zip((1, 2), after) if x is not None}
        if after != before:
            here.at[side] = event.get("at")
        here.refused.pop(side, None)
        if before[2 - side] == number:
            here.refused[side] = number  # refused at the clock too: the conflict is the director's to see
        here.settle()
        for key in [k for k in self.wrong if k[2] == number and self.wrong[k]["goes_to"] == n]:
            del self.wrong[key]  # found their table
        return None

    def forget_other_games(self, n: int, game: str | None) -> bool:
        """The table's clock is on another game (a new round's): its check-ins were the last game's."""
        here = self.tables.get(n)
        if here is not None and game is not None and here.game != game:
            del self.tables[n]
            return True
        return False

    def sides(self, n: int) -> dict:
        """Side -> TSH number checked in at table `n` (empty: nobody yet)."""
        here = self.tables.get(n)
        return dict(here.numbers) if here else {}

    def view(self, n: int, seat: dict | None) -> dict:
        """What the tile shows: each checked-in side's number and name, the starter TSH names marked."""
        here = self.tables.get(n)
        starter = (seat or {}).get("starter")
        sides = {}
        if here is not None:
            for side, number in sorted(here.numbers.items()):
                sides[str(side)] = {"number": number, "name": name_of(number, seat), "starter": number == starter,
                                    "at": here.at.get(side)}
        # the seat's names by side (on_sides), for the tile's two rows: the page maps nothing itself
        names = list(on_sides(seat, here.numbers)["names"]) if seat and here is not None else None
        conflict = None
        if here is not None and here.refused:
            side, number = min(here.refused.items())
            conflict = {"side": side, "number": number, "name": name_of(number, seat), "held_by": 3 - side}
        return {"table": n, "game": here.game if here else None, "sides": sides, "starter": starter, "names": names,
                "conflict": conflict}

    def wrong_tables(self) -> list[dict]:
        return list(reversed(self.wrong.values()))


def absent_sides(tables: dict, checked: CheckIns, round_number: int) -> list[dict]:
    """The late starts the one confirmation at the scheduled start offers: for each table with a
    game of this round seated, its clock online, with a keypad (its state's `keypad`: at a clock
    without one nobody ever checks in) and in setup (no press yet), the sides not checked in: both
    (2.3.2(a)) or the one (2.3.3(a)); a side whose check-in was refused has its player there, so is
    not one. `tables`: hallstate's tables."""
    out = []
    for n, t in sorted(tables.items()):
        if not t.seat or t.seat.get("round") != round_number or t.status != "online":
            continue
        st = t.state or {}
        if st.get("phase") != "setup" or st.get("keypad") is not True:
            continue  # begun; or nobody can check in at it, so who is absent is not known (2.3.2(a))
        here = checked.tables.get(n)
        same = here is not None and here.game == st.get("game")
        sides = dict(here.numbers) if same else {}
        # a side whose check-in was refused (USEd) has its player there, typing: not absent (issue 40)
        absent = [s for s in (1, 2) if s not in sides and not (same and s in here.refused)]
        if absent:
            out.append({"table": n, "players": absent, "names": [name_of(x, t.seat) for x in sides.values()]})
    return out
