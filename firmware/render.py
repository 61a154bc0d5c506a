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
====================  ==========================================================================

A running display never alternates: its time is always visible. Alternating displays change every
second and colons every half second, on the monotonic clock's own grid, so both displays change
together.
"""

from __future__ import annotations

from rackside.firmware.clock import NS_PER_S, Clock, Phase, View

BLINK_NS = 500_000_000
SLOT_NS = 1_000_000_000

COURTESY = "drAu"
ABSENT = "LAtE"
MAY_FORFEIT = "oPt"
ENDED = "End"
FORFEIT = "ForF"
RESTORED = "rStd"
HOLD = "HOLd"  # neutralised: legible from across the table


def penalty_text(points: int) -> str:
    return f"P{points:>3}" if points < 1000 else "P---"


def no_colon(text: str) -> str:
    """The same digits with the colon off (right-aligned, so the digits do not move)."""
    return text.replace(":", "")


def texts(v: View, t_ns: int, *, restored_until_ns: int | None = None) -> tuple[str, str]:
    """(left, right) texts at `t_ns` for the clock's view `v` (player 1 left, player 2 right)."""
    out = []
    slot = t_ns // SLOT_NS
    colon_off = v.phase is Phase.NEUTRALISED and (t_ns // BLINK_NS) % 2 == 1
    banner = restored_until_ns is not None and t_ns < restored_until_ns
    for p in v.players:
        time = no_colon(p.text) if colon_off else p.text
        if p.running:
            out.append(time)
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
        if v.phase is Phase.NEUTRALISED:
            flags.append(HOLD)
        if banner:
            flags = [RESTORED]
        frames = [time, *flags]
        out.append(frames[slot % len(frames)])
    return out[0], out[1]


def animated(v: View, t_ns: int, restored_until_ns: int | None = None) -> bool:
    """Do the texts change with time alone (blinking or alternating)?"""
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


def next_change_ns(c: Clock, v: View, t_ns: int, *, restored_until_ns: int | None = None) -> int | None:
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
    if animated(v, t_ns, restored_until_ns):
        times.append((t_ns // BLINK_NS + 1) * BLINK_NS)
    return min(times) if times else None
