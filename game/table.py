"""The table beside the clock: check-in (game.checkin) and the director's call (game.call),
composed, with what each of their inputs does to the clock. Pure: no I/O, no clock read.

The clock core (game.clock) times the game; these cores know who sits where and whether the
director was called. Their inputs are journalled in the game's journal like the clock's
(`JOURNAL_INPUTS`: the name, the class, the fields, as game.journal writes them), and one
function folds any of them, `step(table, clock, input) -> (table, clock)`, on the runner as in the
replay and the restore, so all three give the same table and the same clock:

- a check-in that seats a player whose side the director started late is their arrival
  (2.3.1(b)): the clock core's `Arrive` (2.3.2(b)-(c), 2.3.3(b)), in the same journal line;
- a call on a running clock neutralises it (1.4.3), in the same line.

Another flow of the table (the signed slip) adds its state as a field of `Table` and its inputs to
`JOURNAL_INPUTS` beside these.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from rackside.game import call as call_core
from rackside.game import checkin as checkin_core
from rackside.game.call import Call, CallAck, CallError, CallResolve, Calls, OpenCall
from rackside.game.checkin import CheckIn, CheckInError, Pairing, Seat, Seating, Typed
from rackside.game.checkin import MAX_TABLE
from rackside.game.clock import Arrive, Clock, ClockInputError, Neutralise, Phase, apply as clock_apply, phase_at, settle


class TableInputError(ValueError):
    """A table input that cannot apply (the message says why)."""


@dataclass(frozen=True)
class Table:
    """Everything the table knows beside the clock. `Table()` before anything happened."""

    seating: Seating = Seating()
    calls: Calls = Calls()


# input name -> (class, the fields after t_ns, in the order they are written); None values are left out
JOURNAL_INPUTS: dict[str, tuple[type, tuple[str, ...]]] = {
    "key": (Typed, ("key",)),
    "checkin": (CheckIn, ("player", "number")),
    "pairing": (Pairing, ("round", "numbers", "starter", "table", "names")),
    "seat": (Seat, ("number", "table")),
    "call": (Call, ("player", "call", "how")),
    "call_ack": (CallAck, ("call",)),
    "call_resolve": (CallResolve, ("call", "reason")),
}
INPUT_TYPES = tuple(cls for cls, _ in JOURNAL_INPUTS.values())
_NAMES = {cls: name for name, (cls, _) in JOURNAL_INPUTS.items()}
OPTIONAL = {("pairing", "starter"), ("pairing", "table"), ("pairing", "names"), ("seat", "table"), ("call", "player"), ("call", "how")}


def is_table_input(event: object) -> bool:
    return type(event) in _NAMES


def _before_game(clock: Clock, t: int) -> bool:
    phase = phase_at(clock, t) if clock.since_ns is not None and t >= clock.since_ns else clock.phase
    return phase in (Phase.SETUP, Phase.LATE)


def step(table: Table, clock: Clock, event: Any) -> tuple[Table, Clock]:
    """The table and the clock after a table input. Raises TableInputError when it cannot apply."""
    t = max(event.t_ns, clock.since_ns or event.t_ns)
    try:
        # the time up to a table input is accounted, as for any input, once a time runs: before the
        # first press (SETUP) nothing runs, and a pairing or a check-in then must not date the clock,
        # or a late start from the round's scheduled start (2.3.2(a)) would be dated from it instead
        if clock.phase is not Phase.SETUP:
            clock = settle(clock, t)
        if isinstance(event, (Call, CallAck, CallResolve)):
            calls = call_core.apply(table.calls, event)
            if isinstance(event, Call) and clock.phase is Phase.RUNNING:
                clock = clock_apply(clock, Neutralise(t))  # 1.4.3: the times stop while the director comes
            return replace(table, calls=calls), clock
        before = _before_game(clock, t)
        seating = checkin_core.apply(table.seating, event, before_game=before)
    except (CallError, CheckInError, ClockInputError) as e:
        raise TableInputError(str(e)) from None
    if isinstance(event, CheckIn) and checkin_core.checked_in(seating, event.player) and before:
        if clock.phase is Phase.LATE and clock.absent[event.player - 1]:
            clock = clock_apply(clock, Arrive(t, event.player))  # 2.3.1(b), 2.3.2(b)-(c), 2.3.3(b)
    return replace(table, seating=seating), clock


# --- the journal's lines ---------------------------------------------------------------------------


def input_to_dict(event: Any) -> dict:
    name = _NAMES[type(event)]
    d: dict[str, Any] = {"t_ns": event.t_ns, "input": name}
    for key in JOURNAL_INPUTS[name][1]:
        value = getattr(event, key)
        if value is None and (name, key) in OPTIONAL:
            continue
        d[key] = list(value) if isinstance(value, tuple) else value
    return d


def _whole(v: Any, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _names_ok(v: Any) -> bool:
    try:
        checkin_core.check_names(v)
    except CheckInError:
        return False
    return True


def input_from_dict(name: str, d: dict) -> Any:
    """The table input a journal object holds; ValueError saying what is wrong."""
    cls, keys = JOURNAL_INPUTS[name]
    values = []
    for key in keys:
        if key not in d:
            if (name, key) in OPTIONAL:
                values.append(None)
                continue
            raise ValueError(f"{name!r} input lacks the {key!r} field")
        v = d[key]
        ok = {
            "key": lambda: isinstance(v, str) and len(v) == 1 and (v in checkin_core.DIGITS or v == checkin_core.CLEAR_KEY),
            "player": lambda: v in (1, 2) and not isinstance(v, bool) or (v is None and (name, key) in OPTIONAL),
            "number": lambda: _whole(v, 1, checkin_core.MAX_PLAYER_NUMBER),
            "round": lambda: _whole(v, 1, checkin_core.MAX_ROUND),
            "numbers": lambda: isinstance(v, list) and len(v) == 2 and all(_whole(n, 1, checkin_core.MAX_PLAYER_NUMBER) for n in v) and v[0] != v[1],
            "starter": lambda: v is None or _whole(v, 1, checkin_core.MAX_PLAYER_NUMBER),
            "table": lambda: v is None or _whole(v, 1, MAX_TABLE),
            "call": lambda: isinstance(v, str) and bool(call_core.CALL_ID.match(v)),
            "reason": lambda: isinstance(v, str) and 0 < len(v) <= call_core.MAX_REASON_CHARS,
            "how": lambda: v in call_core.CALL_HOW or v is None,  # absent in a journal written before calls said how
            "names": lambda: v is None or _names_ok(v),  # absent in a journal written before pairings carried names
        }[key]()
        if not ok:
            raise ValueError(f"{name!r} input: {key} {v!r} is not allowed")
        values.append(tuple(v) if isinstance(v, list) else v)
    return cls(d["t_ns"], *values)


# --- the checkpoint's copy -------------------------------------------------------------------------


def to_dict(table: Table) -> dict:
    """The table as JSON values (a checkpoint's `table_state`)."""
    s = table.seating
    seating = {f.name: (list(getattr(s, f.name)) if isinstance(getattr(s, f.name), tuple) else getattr(s, f.name)) for f in fields(Seating)}
    c = table.calls
    calls = {"made": c.made, "open": None if c.open is None else {f.name: getattr(c.open, f.name) for f in fields(OpenCall)}}
    return {"seating": seating, "calls": calls}


def from_dict(d: Any) -> Table:
    """A Table from `to_dict`'s output; ValueError for anything else (then the journal decides)."""
    if not isinstance(d, dict) or not isinstance(d.get("seating"), dict) or not isinstance(d.get("calls"), dict):
        raise ValueError("table state: not an object with seating and calls")
    raw = d["seating"]
    # a checkpoint written before refusals and names were kept (issue 40)
    raw = {"refused": [None, None], "names": None, **raw}
    if set(raw) != {f.name for f in fields(Seating)}:
        raise ValueError("table state: seating's fields are not a Seating's")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    seating = Seating(**values)
    # every field checked by folding it the way the core would: a damaged state is refused whole
    for n in (seating.numbers or ()):
        checkin_core.check_number(n)
    for pair in (seating.seated, seating.asked, seating.elsewhere, seating.refused):
        if len(pair) != 2 or any(x is not None and not _whole(x, 1, checkin_core.MAX_PLAYER_NUMBER) for x in pair):
            raise ValueError("table state: a side's number is not a player number")
    if not isinstance(seating.typed, str) or len(seating.typed) > checkin_core.MAX_DIGITS or not all(k in checkin_core.DIGITS for k in seating.typed):
        raise ValueError("table state: typed is not digits")
    if len(seating.unknown) != 2 or not all(isinstance(x, bool) for x in seating.unknown):
        raise ValueError("table state: unknown is not two flags")
    for name, lo, hi in (("table", 1, MAX_TABLE), ("round", 1, checkin_core.MAX_ROUND), ("starter", 1, checkin_core.MAX_PLAYER_NUMBER),
                         ("since_ns", 0, 2**63)):
        v = getattr(seating, name)
        if v is not None and not _whole(v, lo, hi):
            raise ValueError(f"table state: {name} is not a whole number from {lo} to {hi}")
    if not _names_ok(seating.names):
        raise ValueError("table state: names are not two player names")
    if seating.numbers is not None and len(seating.numbers) != 2:
        raise ValueError("table state: numbers is not two player numbers")
    c = d["calls"]
    made, open_ = c.get("made"), c.get("open")
    if not _whole(made, 0, call_core.MAX_CALLS):
        raise ValueError("table state: calls made is not a count")
    opened = None
    if open_ is not None:
        if not isinstance(open_, dict) or set(open_) != {f.name for f in fields(OpenCall)}:
            raise ValueError("table state: the open call is not a call")
        opened = OpenCall(**open_)
        call_core.check_id(opened.call)
        if (opened.player not in (None, 1, 2) or isinstance(opened.player, bool) or not _whole(opened.t_ns, 0, 2**63)
                or (opened.acked_ns is not None and not _whole(opened.acked_ns, 0, 2**63))):
            raise ValueError("table state: the open call's side or times are not a call's")
    return Table(seating=seating, calls=Calls(made=made, open=opened))


def describe(event: Any) -> str:
    """One input as the replay prints it."""
    if isinstance(event, Typed):
        return f"key {event.key}"
    if isinstance(event, CheckIn):
        return f"checkin {event.player}: #{event.number}"
    if isinstance(event, Pairing):
        starter = f", starts #{event.starter}" if event.starter is not None else ""
        return f"pairing r{event.round} #{event.numbers[0]}-#{event.numbers[1]}{starter}"
    if isinstance(event, Seat):
        return f"seat #{event.number}: " + (f"table {event.table}" if event.table is not None else "not paired")
    if isinstance(event, Call):
        if event.player is not None:
            return f"{event.call} by {event.player}"
        return event.call + (f" by the {event.how}" if event.how is not None else "")
    if isinstance(event, CallAck):
        return f"{event.call} acknowledged"
    if isinstance(event, CallResolve):
        return f"{event.call} resolved"
    return type(event).__name__.lower()


def summary(table: Table) -> dict:
    """The table's final state for `rackside clock replay --json`."""
    s = table.seating
    return {
        "round": s.round,
        "pairing": list(s.numbers) if s.numbers is not None else None,
        "starter": s.starter,
        "starter_side": checkin_core.starter_side(s),
        "seated": list(s.seated),
        "elsewhere": list(s.elsewhere),
        "refused": list(s.refused),
        "typed": s.typed,
        "calls": table.calls.made,
        "open_call": None if table.calls.open is None else table.calls.open.call,
    }
