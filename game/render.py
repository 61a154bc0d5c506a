"""What each display is told: the clock's `View` turned into two 4-digit 7-segment texts. Pure.

Every text is one a 4-digit clock module with a centre colon can show (`hardware.sevenseg`). The
indicators, chosen so each is legible on seven segments and none hides a running time:

====================  ==========================================================================
State                 What the displays show
====================  ==========================================================================
running               the running side counts; both show their time, colon steady
overtime              a minus sign and the time past 0:00, in whole seconds: ``-1:05`` (5.3)
neutralised           both colons blink (half a second on, half off) and both displays alternate
                      their time with ``HOLd``; the turn LEDs blink too (1.4.3)
courtesy draw         the waiting player's display alternates its time with ``drAu`` (3.10.6)
absent (late)         the absent player's display alternates its draining time with ``LAtE``
may forfeit           a late player assigned under 15:00 alternates with ``oPt`` (2.3.4)
ended                 each display cycles: final time, ``End``, penalty ``P 20`` (5.3)
forfeit               the forfeiter's display cycles: final time, ``ForF``, ``P100`` (5.3.3)
restored              after a power cut both alternate with ``rStd`` for a few seconds
director called       both alternate their time with ``CALL``, then ``SEEn`` once the director
                      has acknowledged it, until it is resolved (1.4.3; game.call)
====================  ==========================================================================

With a keypad, before the game (check-in, game.checkin):

====================  ==========================================================================
digits typed          both displays show them, steady: ``  12`` (the player then presses their button)
not checked in        the side alternates its time with its table: ``t 14``
checked in            the side alternates its time with the player's number ``  12``; the
                      starter's side (2.1) also with ``1St``
waiting for the hall  a number not in this table's pairing: the time and ``----``
at another table      ``tAbL`` and the table to go to, ``  14`` (the time is not shown)
in no pairing         the time and ``nonE``
number taken          ``USEd`` and the number typed, ``   9``: the other side already checked in
                      with it, so this side is not checked in (type your own number again)
====================  ==========================================================================

A running display never alternates: its time is always visible. Alternating displays change every
second and colons every half second, on the monotonic clock's own grid, so both displays change
together.
"""

from __future__ import annotations

from rackside.game import checkin
from rackside.game.clock import NS_PER_S, Clock, Phase, View

BLINK_NS = 500_000_000
SLOT_NS = 1_000_000_000

COURTESY = "drAu"
ABSENT = "LAtE"
MAY_FORFEIT = "oPt"
ENDED = "End"
FORFEIT = "ForF"
RESTORED = "rStd"
HOLD = "HOLd"  # neutralised: legible from across the table
CALL = "CALL"  # the director was called (game.call)
CALL_SEEN = "SEEn"  # ... and has acknowledged the call
TABLE_WORD = "tAbL"  # at another table: tAbL, then its number
STARTER = "1St"  # the starter's side (2.1), before the game
ASKED = "----"  # the hall is asked where this number plays
NOT_PAIRED = "nonE"  # in no pairing of the round
USED = "USEd"  # the number typed is checked in at the other side already (issue 40): USEd, then it
WHERE_WORDS = (TABLE_WORD, USED)  # flags that replace the side's time: what the player must do


def table_text(n: int) -> str:
    return f"t{n:>3}"


def number_text(n: int) -> str:
    return f"{n:>4}"


def table_frames(v: View, table, *, keypad: bool) -> tuple[str | None, tuple[list[str], list[str]]]:
    """What the table (game.table.Table) adds to the displays: (the digits typed, shown on both,
    or None; each side's flags). A side's flags that begin with tAbL replace its time: where to go."""
    flags: tuple[list[str], list[str]] = ([], [])
    if table is None:
        return None, flags
    open_call = table.calls.open
    if open_call is not None:
        for f in flags:
            f.append(CALL_SEEN if open_call.acked_ns is not None else CALL)
    if not keypad or v.phase not in (Phase.SETUP, Phase.LATE):
        return None, flags
    s = table.seating
    if s.typed and open_call is None:
        return f"{s.typed:>4}", flags
    starter = checkin.starter_side(s)
    for i, f in enumerate(flags):
        side = i + 1
        if s.refused[i] is not None:
            f += [USED, number_text(s.refused[i])]
        elif s.elsewhere[i] is not None:
            f += [TABLE_WORD, number_text(s.elsewhere[i])]
        elif s.unknown[i]:
            f.append(NOT_PAIRED)
        elif s.asked[i] is not None:
            f.append(ASKED)
        elif s.seated[i] is not None:
            f.append(number_text(s.seated[i]))
            if starter == side:
                f.append(STARTER)
        elif s.table is not None:
            f.append(table_text(s.table))
    return None, flags


def penalty_text(points: int) -> str:
    return f"P{points:>3}" if points < 1000 else "P---"


def no_colon(text: str) -> str:
    """The same digits with the colon off (right-aligned, so the digits do not move)."""
    return text.replace(":", "")


def texts(v: View, t_ns: int, *, restored_until_ns: int | None = None, table=None, keypad: bool = False) -> tuple[str, str]:
    """(left, right) texts at `t_ns` for the clock's view `v` (player 1 left, player 2 right), with
    what the table (game.table.Table: check-in with a `keypad`, the director's call) adds."""
    typed, extra = table_frames(v, table, keypad=keypad)
    if typed is not None:
        return typed, typed
    out = []
    slot = t_ns // SLOT_NS
    colon_off = v.phase is Phase.NEUTRALISED and (t_ns // BLINK_NS) % 2 == 1
    banner = restored_until_ns is not None and t_ns < restored_until_ns
    for p in v.players:
        time = no_colon(p.text) if colon_off else p.text
        if p.running:
            out.append(time)
            continue
        if extra[p.player - 1] and extra[p.player - 1][0] in WHERE_WORDS:
            out.append(extra[p.player - 1][slot % len(extra[p.player - 1])])  # tAbL 14, USEd 9: not the time
            continue
        flags: list[str] = []
        if v.phase is Phase.ENDED:
            flags = [FORFEIT if p.forfeit else ENDED, penalty_text(p.penalty)]
        elif p.absent:
            flags = [ABSENT]
        elif p.may_forfeit:
            flags = [MAY_FORFEIT]
        elif p.courtesy_draw:
            flags = [COURTESY]
        flags = extra[p.player - 1] + flags
        if v.phase is Phase.NEUTRALISED:
            flags.append(HOLD)
        if banner:
            flags = [RESTORED]
        frames = [time, *flags]
        out.append(frames[slot % len(frames)])
    return out[0], out[1]


def animated(v: View, t_ns: int, restored_until_ns: int | None = None, table=None, keypad: bool = False) -> bool:
    """Do the texts change with time alone (blinking or alternating)?"""
    if table is not None:
        typed, extra = table_frames(v, table, keypad=keypad)
        if typed is None and any(extra):
            return True
    if v.phase in (Phase.NEUTRALISED, Phase.ENDED):
        return True
    if restored_until_ns is not None and t_ns < restored_until_ns:
        return True
    return any(not p.running and (p.absent or p.may_forfeit or p.courtesy_draw) for p in v.players)


def next_digit_change_ns(remaining_ns: int) -> int:
    """How long until a counting display's text changes (in (0, 1 s])."""
    if remaining_ns > 0:
        shown = -(-remaining_ns // NS_PER_S)  # rounded up: 0:00 only when time is up
        return remaining_ns - (shown - 1) * NS_PER_S
    over = -remaining_ns
    return (over // NS_PER_S + 1) * NS_PER_S - over


def next_change_ns(c: Clock, v: View, t_ns: int, *, restored_until_ns: int | None = None, table=None,
                   keypad: bool = False) -> int | None:
    """The next moment either display's text may change without any input, or None if it never
    will. May be early (a wake-up that changes nothing), never late."""
    times = []
    for p in v.players:
        counting = p.running or (v.phase is Phase.LATE and p.absent)
        if counting:
            times.append(t_ns + next_digit_change_ns(p.remaining_ns))
    if v.phase is Phase.RUNNING and c.pressed is not None and not any(p.courtesy_draw for p in v.players):
        due = c.pressed[1] + c.rules.courtesy_draw_after_ms * 1_000_000
        if due > t_ns:
            times.append(due)
    if restored_until_ns is not None and t_ns < restored_until_ns:
        times.append(restored_until_ns)
    if animated(v, t_ns, restored_until_ns, table, keypad):
        times.append((t_ns // BLINK_NS + 1) * BLINK_NS)
    return min(times) if times else None
