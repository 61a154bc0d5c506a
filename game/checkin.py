"""Check-in at the table (issue 27 item 2) as a pure value: inputs in, state out, no I/O, no clock.

Before the game a player types their player number (TSH's) on the clock's keypad and presses their
own button. That press is their arrival (2.3.1(b): seated, ready to play) and says which side of
the table they sit on, whichever way round the non-starter placed the clock (1.4.5). The hall's
`pairing` gives the round's two numbers and the starter TSH assigned (2.1(b)(i)); with it:

- a number in the pairing is seated on that side; once the starter's side is known (the starter
  checked in there, or the non-starter on the other side) it is marked (`starter_side`), and only
  the non-starter's press starts the starter's time (2.2): the starter's own press before the game
  is not a start (`refuses_start`);
- a number not in the pairing is not seated: the clock asks the hall (the check-in is published)
  and shows where that player plays when the hall answers `seat` (`tAbL 14`, game.render);
- a number already checked in at the other side of this table is refused, never silently: that side
  is not checked in, the clock says so on that side (`USEd` and the number, game.render) until
  the player types again, and the check-in is published like any other, so the console shows the
  conflict on the table's tile and the director can settle it (issue 40). The player who took the
  number by mistake types their own and presses again (a second check-in on a side replaces the first).

With no pairing (offline, no TSH) a check-in still records the arrival and the side.

Every input carries its monotonic-ns time (`t_ns`), like the clock core's (game.clock). Typing
is journalled key by key (`Typed`), so a power cut in the middle of a number comes back with the
digits typed so far. game.table composes this core with the call's (game.call) and says
what each input does to the clock (an arrival in a late start, 2.3.2(b)-(c), 2.3.3(b)).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

MAX_TABLE = 999  # table numbers are 1 to MAX_TABLE (a pairing's table, the clock's menu; the hall's table-N users, [hall] table, the fleet)
# The rounds of one event, at most: TSH's player lines (hall.console.scoring.tsh), the console's round, and a
# pairing's round on the clock are all this one limit (TSH events have a few dozen)
MAX_ROUND = 200

MAX_PLAYER_NUMBER = 9999  # a TSH player number as typed: 1 to 4 digits (TSH numbers players from 1)
MAX_DIGITS = len(str(MAX_PLAYER_NUMBER))
MAX_NAME_CHARS = 64  # a player's name as the pairing carries it (TSH's "Surname, Given"), cut by the console
DIGITS = "0123456789"
CLEAR_KEY = "*"  # clears the digits typed so far (before the player's button is pressed)
SIDES = (1, 2)


class CheckInError(ValueError):
    """An input that can never be valid (a number out of range, a side that is neither). Inputs
    that are valid but mean nothing now (a key after the game started) change nothing."""


# --- Inputs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Typed:
    """A keypad key the check-in used: a digit, or `CLEAR_KEY` (the keypad, game.messages.Key)."""

    t_ns: int
    key: str


@dataclass(frozen=True)
class CheckIn:
    """A player's own button pressed with their number typed: arrival (2.3.1(b)) on that side."""

    t_ns: int
    player: int  # the side: 1 left, 2 right
    number: int  # the TSH player number typed


@dataclass(frozen=True)
class Pairing:
    """The hall: this table's pairing for the round (TSH's numbers) and who starts (2.1(b)(i))."""

    t_ns: int
    round: int
    numbers: tuple[int, int]
    starter: int | None
    table: int | None = None  # this table's number (the hall knows it), shown before the game
    names: tuple[str, str] | None = None  # the two players' names as TSH has them, in `numbers`' order (issue 40)


@dataclass(frozen=True)
class Seat:
    """The hall's answer to a check-in whose number is not in this table's pairing: the table that
    player plays at this round (None: not in this round's pairings)."""

    t_ns: int
    number: int
    table: int | None


# --- State ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seating:
    """Who sits where. Build one with `Seating()`; change it only with `apply`."""

    table: int | None = None  # this table's number, from the hall's pairing
    round: int | None = None
    numbers: tuple[int, int] | None = None  # the pairing's two numbers (None: no pairing known)
    starter: int | None = None  # the starter's number (2.1(b)(i)), None: not assigned
    typed: str = ""  # digits typed and not yet taken by a player's button
    seated: tuple[int | None, int | None] = (None, None)  # each side's number, once checked in
    asked: tuple[int | None, int | None] = (None, None)  # a number not in the pairing, waiting for `seat`
    elsewhere: tuple[int | None, int | None] = (None, None)  # that side's player plays at this table (tAbL 14)
    unknown: tuple[bool, bool] = (False, False)  # that side's number is in no pairing of the round
    refused: tuple[int | None, int | None] = (None, None)  # that side typed a number the other side holds (USEd)
    names: tuple[str, str] | None = None  # the pairing's names, in `numbers`' order (a text display shows them)
    since_ns: int | None = None  # the last input's time


def _check_side(player: object) -> int:
    if player not in SIDES or isinstance(player, bool):
        raise CheckInError(f"side must be 1 or 2, got {player!r}")
    return player  # type: ignore[return-value]


def check_number(number: object) -> int:
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= MAX_PLAYER_NUMBER:
        raise CheckInError(f"a player number is a whole number from 1 to {MAX_PLAYER_NUMBER}, got {number!r}")
    return number


def check_names(names: object) -> tuple[str, str] | None:
    """A pairing's names: None, or two texts of at most MAX_NAME_CHARS characters."""
    if names is None:
        return None
    if (not isinstance(names, (tuple, list)) or len(names) != 2
            or not all(isinstance(n, str) and len(n) <= MAX_NAME_CHARS for n in names)):
        raise CheckInError(f"a pairing's names are two texts of at most {MAX_NAME_CHARS} characters, got {names!r}")
    return (names[0], names[1])


def name_of(s: Seating, number: int | None) -> str | None:
    """The name the pairing gives `number` (None: no names, or not paired here)."""
    if s.names is None or s.numbers is None or number not in s.numbers:
        return None
    return s.names[s.numbers.index(number)]


def _set(pair: tuple, side: int, value) -> tuple:
    return (value, pair[1]) if side == 1 else (pair[0], value)


def starter_side(s: Seating) -> int | None:
    """The side TSH's starter sits on (2.1), once known: where the starter checked in, or the side
    opposite the non-starter's; not while a check-in is refused for a number the other side holds
    (which of the two typed it wrongly is not known)."""
    if s.numbers is None or s.starter is None:
        return None
    if any(r is not None for r in s.refused):
        return None  # a number both sides claim (USEd) says nothing of who sits where (issue 40)
    for side in SIDES:
        if s.seated[side - 1] == s.starter:
            return side
    other = next(n for n in s.numbers if n != s.starter) if s.starter in s.numbers else None
    for side in SIDES:
        if other is not None and s.seated[side - 1] == other:
            return 3 - side
    return None


def refuses_start(s: Seating, player: int) -> bool:
    """Before the game, is `player`'s press not a start? The non-starter starts the starter's time
    (2.2): once the starter's side is known, the starter's own press starts nothing."""
    return starter_side(s) == player


def taking_digits(s: Seating) -> bool:
    """Digits are typed: the next press of a player's button is a check-in, not a start."""
    return bool(s.typed)


def apply(s: Seating, event: object, *, before_game: bool = True) -> Seating:
    """The seating after `event`. `before_game`: the clock's game has not started (setup or waiting
    for latecomers); keys and check-ins change nothing after that. Raises CheckInError only for an
    input that can never be valid."""
    t = event.t_ns  # type: ignore[attr-defined]
    if s.since_ns is not None and t < s.since_ns:
        t = s.since_ns  # a late-delivered key is dated at the last input, as the runner dates edges
    if isinstance(event, Pairing):
        return _pairing(s, event, t)
    if isinstance(event, Seat):
        return _seat(s, check_number(event.number), event.table, t)
    if isinstance(event, Typed):
        if event.key not in DIGITS and event.key != CLEAR_KEY:
            raise CheckInError(f"check-in keys are the digits and {CLEAR_KEY!r}, got {event.key!r}")
        if not before_game:
            return s
        if event.key == CLEAR_KEY:
            return replace(s, typed="", since_ns=t)
        typed = (s.typed + event.key).lstrip("0")  # TSH numbers from 1: a leading 0 is nothing
        return replace(s, typed=typed[-MAX_DIGITS:] if len(typed) > MAX_DIGITS else typed, since_ns=t)
    if isinstance(event, CheckIn):
        return _check_in(s, _check_side(event.player), check_number(event.number), t, before_game)
    raise CheckInError(f"not a check-in input: {event!r}")


def _pairing(s: Seating, p: Pairing, t: int) -> Seating:
    if isinstance(p.round, bool) or not isinstance(p.round, int) or not 1 <= p.round <= MAX_ROUND:
        raise CheckInError(f"a round is a whole number from 1 to {MAX_ROUND}, got {p.round!r}")
    numbers = tuple(check_number(n) for n in p.numbers)
    if len(numbers) != 2 or numbers[0] == numbers[1]:
        raise CheckInError(f"a pairing is two different player numbers, got {p.numbers!r}")
    if p.starter is not None and p.starter not in numbers:
        raise CheckInError(f"the starter must be one of the pairing's numbers {numbers}, got {p.starter!r}")
    if p.table is not None and (isinstance(p.table, bool) or not isinstance(p.table, int) or not 1 <= p.table <= MAX_TABLE):
        raise CheckInError(f"a table is a whole number from 1 to {MAX_TABLE}, got {p.table!r}")
    # Check-ins made before the pairing (offline) stand if their numbers are in it; the others
    # are the hall's to place (they were published: the hall answers with `seat`).
    seated = tuple(n if n in numbers else None for n in s.seated)
    asked = tuple(a if a is not None else (n if n is not None and n not in numbers else None) for a, n in zip(s.asked, s.seated))
    names = check_names(p.names)
    return _settled(replace(s, table=p.table if p.table is not None else s.table, round=p.round, numbers=numbers,  # type: ignore[arg-type]
                            starter=p.starter, seated=seated, asked=asked, names=names, since_ns=t))


def seated_after(seated: tuple[int | None, int | None], side: int, number: int) -> tuple[int | None, int | None]:
    """Who sits where after `number` (paired at this table) checks in on `side`: a number is at one
    side only, and the side it checked in at first keeps it (the player sits there: a late start
    must not start their time, 2.3.3(a)); a second check-in on a side replaces the first (the wrong
    player pressed, then the right one). The console seats its check-ins with this too."""
    if seated[2 - side] == number:
        return seated
    return _set(seated, side, number)  # type: ignore[return-value]


def _check_in(s: Seating, side: int, number: int, t: int, before_game: bool) -> Seating:
    s = replace(s, typed="", since_ns=t)  # the button took the digits, whatever it finds
    if not before_game:
        return s
    cleared = replace(s, elsewhere=_set(s.elsewhere, side, None), unknown=_set(s.unknown, side, False),
                      asked=_set(s.asked, side, None), refused=_set(s.refused, side, None))
    if s.seated[2 - side] == number:
        # the same number on both sides: the other side's stands, this one is not seated, and says so
        return replace(cleared, refused=_set(cleared.refused, side, number))
    if s.numbers is not None and number not in s.numbers:
        # not at this table: the hall says where (`seat`); this side is not checked in
        return _settled(replace(cleared, seated=_set(s.seated, side, None), asked=_set(cleared.asked, side, number)))
    return _settled(replace(cleared, seated=seated_after(s.seated, side, number)))


def _settled(s: Seating) -> Seating:
    """A refusal stands while its number is held at the other side; once that side changed its
    check-in (the player who took it typed their own), the refused side's message is gone."""
    refused = tuple(r if r is not None and s.seated[1 - i] == r else None for i, r in enumerate(s.refused))
    return s if refused == s.refused else replace(s, refused=refused)  # type: ignore[arg-type]


def conflict(s: Seating) -> tuple[int, int] | None:
    """(side, number): a side whose check-in was refused because the other side holds that number."""
    for side in SIDES:
        if s.refused[side - 1] is not None:
            return side, s.refused[side - 1]  # type: ignore[return-value]
    return None


def _seat(s: Seating, number: int, table: int | None, t: int) -> Seating:
    if table is not None and (isinstance(table, bool) or not isinstance(table, int) or not 1 <= table <= MAX_TABLE):
        raise CheckInError(f"a table is a whole number from 1 to {MAX_TABLE}, got {table!r}")
    for side in SIDES:
        if s.asked[side - 1] == number:
            if table is not None and table == s.table:
                # the hall places the player here after all (a pairing changed): seat them
                return replace(s, asked=_set(s.asked, side, None), seated=_set(s.seated, side, number), since_ns=t)
            return replace(
                s,
                asked=_set(s.asked, side, None),
                elsewhere=_set(s.elsewhere, side, table),
                unknown=_set(s.unknown, side, table is None),
                since_ns=t,
            )
    return replace(s, since_ns=t)  # an answer for nobody waiting (a check-in replaced since): nothing


def checked_in(s: Seating, side: int) -> bool:
    return s.seated[side - 1] is not None
