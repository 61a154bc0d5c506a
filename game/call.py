"""Calling the director from the table (issue 27 item 3) as a pure value: no I/O, no clock.

A player holds the keypad's `CALL_KEY` (alone: a call from no side; with their own button: from
that side), or holds both player buttons and presses the centre (firmware.gestures' "call", also on
a clock without a keypad: from no side). Each call says how it was made (`how`, CALL_HOW), so the
hall can tell the keypad's call from the buttons' though neither has a side. The clock neutralises
a running game (1.4.3: both times stop while the director comes; game.table applies that to the
clock) and shows the call on both displays until the hall's director acknowledges it (`call_ack`:
"SEEn") and resolves it with a reason (`call_resolve`: the displays go back to the times). Every
call, acknowledgement and resolution is an input of the game, journalled and published
(docs/journal.md, docs/hall.md).

One call is open at a time: a second call while one waits changes nothing (the displays already
say so). Each call of a game has its own id, "call-1", "call-2", ..., the console's handle on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

CALL_KEY = "#"  # held CALL_HOLD_NS on the keypad: call the director (a tap is left to other flows)
CALL_HOLD_NS = 1_500_000_000
CALL_ID = re.compile(r"^call-[1-9][0-9]{0,5}$")
MAX_CALLS = 999_999  # calls in one game, at most (the id's digits)
# how a call was made (a call's `how`, journalled and published): `#` held alone, `#` held with a
# player's own button (the call has that side), the three buttons' gesture
KEYPAD, SIDE, BUTTONS = "keypad", "side", "buttons"
CALL_HOW = (KEYPAD, SIDE, BUTTONS)
MAX_REASON_CHARS = 200  # a resolution's reason; every reason on the hall's wire (hall.wire.commands.NOTES, messages)


class CallError(ValueError):
    """An input that cannot apply: an id that is not a call's, or not the open call."""


@dataclass(frozen=True)
class Call:
    """A player called the director: `player` is the side whose button it was (None: `#` held alone
    or the three buttons' gesture, which either side may make), `how` how it was made (CALL_HOW;
    None: a journal written before calls said). `call` is its id in the game."""

    t_ns: int
    player: int | None
    call: str
    how: str | None = None


@dataclass(frozen=True)
class CallAck:
    """The hall's director has seen the call and is coming."""

    t_ns: int
    call: str


@dataclass(frozen=True)
class CallResolve:
    """The hall's director resolved the call, saying how (`reason`, required)."""

    t_ns: int
    call: str
    reason: str


@dataclass(frozen=True)
class OpenCall:
    call: str
    player: int | None
    t_ns: int  # when it was made
    acked_ns: int | None = None  # when the director acknowledged it


@dataclass(frozen=True)
class Calls:
    """The game's calls: how many were made, and the one open (None: none)."""

    made: int = 0
    open: OpenCall | None = None


def call_id(n: int) -> str:
    return f"call-{n}"


def next_call(c: Calls, t_ns: int, how: str, player: int | None = None) -> Call | None:
    """The call a key or gesture makes now (`player` for SIDE's), or None while one is open (or the
    game has had the most)."""
    if c.open is not None or c.made >= MAX_CALLS:
        return None
    return Call(t_ns, player, call_id(c.made + 1), how)


def check_how(how: object, player: object) -> None:
    """A call's `how` is one of CALL_HOW and agrees with its side (None: an older journal's, any side)."""
    if how is None:
        return
    if how not in CALL_HOW:
        raise CallError(f"a call is made by {', '.join(CALL_HOW)}, got {how!r}")
    if (how == SIDE) != (player is not None):
        raise CallError(f"a call made by {how} has " + ("a side" if how == SIDE else "no side") + f", got side {player!r}")


def check_id(call: object) -> str:
    if not isinstance(call, str) or not CALL_ID.match(call):
        raise CallError(f"a call's id is call-N (N 1 to {MAX_CALLS}), got {call!r}")
    return call


def apply(c: Calls, event: object) -> Calls:
    """The calls after `event`. Raises CallError for an input that cannot apply."""
    if isinstance(event, Call):
        if event.player is not None and (event.player not in (1, 2) or isinstance(event.player, bool)):
            raise CallError(f"a call's side is 1, 2 or none, got {event.player!r}")
        check_how(event.how, event.player)
        if c.open is not None:
            raise CallError(f"{c.open.call} is open: one call at a time")
        if check_id(event.call) != call_id(c.made + 1):
            raise CallError(f"the next call of this game is {call_id(c.made + 1)}, not {event.call}")
        return Calls(made=c.made + 1, open=OpenCall(event.call, event.player, event.t_ns))
    if isinstance(event, (CallAck, CallResolve)):
        check_id(event.call)
        if c.open is None or c.open.call != event.call:
            raise CallError(f"{event.call} is not open on this clock" + (f" ({c.open.call} is)" if c.open else ""))
        if isinstance(event, CallAck):
            return c if c.open.acked_ns is not None else replace(c, open=replace(c.open, acked_ns=event.t_ns))
        if not isinstance(event.reason, str) or not event.reason.strip() or len(event.reason) > MAX_REASON_CHARS:
            raise CallError(f"a call is resolved with a reason of 1 to {MAX_REASON_CHARS} characters")
        return replace(c, open=None)
    raise CallError(f"not a call input: {event!r}")
