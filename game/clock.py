"""The WESPA table clock as a pure value: inputs in, state out, no I/O, no threads, no system clock.

Every input carries its own timestamp (monotonic nanoseconds). The clock stores the time each player
has *played* and derives the time *remaining*; nothing is decremented per tick. `apply(clock, input)`
returns the next clock, `view(clock, t_ns)` says what the clock shows at `t_ns`. Time-triggered rules
(the 10-minute overtime forfeit, the lateness forfeit) are derived from timestamps, so a state seen
later is the same whether or not anyone looked in between.

Clauses (WESPA Game Rules v2.0, and the v5.1 summary for parts 4-6):
- 1.4.2(a): count down from the game time to 0:00, then count overtime up in minutes and seconds.
- 1.4.3, 4.1: the centre button neutralises: both times stop.
- 2.3.2(b)-(c), 2.3.3(b): while waiting for latecomers the arrivals are single presses at the table:
  with both absent the first to arrive presses their own button (their side stops, the second runs
  on); the centre press neutralises when the (last) latecomer arrives. Each is assigned the time
  showing on their side, exactly as displayed (rounded up to the second).
- 1.4.1(b): the director may adjust either player's remaining time; a spare clock taking over a
  table's game (`Takeover`) starts neutralised, the side to move restarting at the centre press.
- 2.2: the non-starter starts the starter's time.
- 2.3.2-2.3.6: late arrivals, optional and compulsory lateness forfeits (75 points to the opponent).
- 3.1.1(c), 3.4.1: pressing your own button ends your turn and starts your opponent's time.
- 3.10.3(c), 3.10.6: restart after a challenge; the courtesy draw one minute after pressing, cleared
  whenever the clock is neutralised (the play may come off the board, 3.10.15(a)).
- 5.1.2, 5.1.3: playing out neutralises; the player may then restart the opponent's time.
- 5.3, 5.3.3: 10 points per minute or part thereof of overtime, in whole seconds; 10 minutes of
  overtime is an immediate forfeit, with 100 penalty points.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Union

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000
PLAYERS = (1, 2)


class ClockInputError(ValueError):
    """An input that can never be valid (an unknown player, time running backwards, a director
    adjustment past the forfeit line). Inputs that are valid but mean nothing in the current state
    (a press from the side not running) are not errors: they change nothing."""


@dataclass(frozen=True)
class Rules:
    """The tournament's timing rules. WESPA's are the defaults; another body's are a config change."""

    game_time_ms: int = 25 * 60_000  # 5.3.5: 25 minutes a player
    penalty_per_minute: int = 10  # 5.3.2: points per minute or part thereof
    forfeit_overtime_ms: int = 10 * 60_000  # 5.3.3: overtime that forfeits the game
    lateness_forfeit_margin: int = 75  # 2.3.6(a): the opponent wins by this margin
    optional_forfeit_below_ms: int = 15 * 60_000  # 2.3.4: a late player may forfeit below this
    courtesy_draw_after_ms: int = 60_000  # 3.10.6(a): one minute after pressing
    switch_guard_ms: int = 100  # both buttons within this of a switch: the first edge wins

    def __post_init__(self) -> None:
        for name in ("game_time_ms", "forfeit_overtime_ms", "courtesy_draw_after_ms"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("penalty_per_minute", "lateness_forfeit_margin", "optional_forfeit_below_ms", "switch_guard_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative, got {getattr(self, name)}")


# 5.3.3: an overtime forfeit costs the forfeiter at least this many penalty points. Not a `Rules`
# field (the clock counts only the time penalty); the console's results apply it to the slip.
OVERTIME_FORFEIT_POINTS = 100


# --- Inputs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Press:
    """A player's own button (3.1.1(c))."""

    t_ns: int
    player: int


@dataclass(frozen=True)
class Neutralise:
    """The centre button (1.4.3): stops a running clock, or restarts the side that was stopped."""

    t_ns: int


@dataclass(frozen=True)
class End:
    """The end-of-game gesture: stop for good and show final times and penalties."""

    t_ns: int


@dataclass(frozen=True)
class Adjust:
    """The director sets a player's remaining time (1.4.1(b)); negative means overtime."""

    t_ns: int
    player: int
    remaining_ms: int


@dataclass(frozen=True)
class LateStart:
    """The director starts the absent players' sides at the scheduled start (2.3.2(a), 2.3.3(a))."""

    t_ns: int
    players: tuple[int, ...]


@dataclass(frozen=True)
class Arrive:
    """A late player is seated, ready to play (2.3.1(b)); they are assigned the game time less
    their own lateness (2.3.2(b)-(c), 2.3.3(b))."""

    t_ns: int
    player: int


@dataclass(frozen=True)
class Forfeit:
    """A late player elects to forfeit because their assigned time is under 15 minutes (2.3.4)."""

    t_ns: int
    player: int


@dataclass(frozen=True)
class Resume:
    """The firmware restarted after a power cut. The clock is settled at `at_ns` (the last time the
    old process recorded, on the old boot's monotonic clock), comes back neutralised, and carries on
    from `t_ns` on the new clock: the downtime is never charged to anyone."""

    t_ns: int
    at_ns: int


@dataclass(frozen=True)
class Takeover:
    """A spare clock continues a table's game (1.4.1(b), 1.4.3): from before its first press it
    becomes neutralised with `player` to move, so the centre button restarts `player`'s time (4.1)
    and `player`'s own press restarts the opponent's (5.1.3), exactly as after a neutralisation on
    the old clock. The times come from the director's adjustments beside it."""

    t_ns: int
    player: int


Input = Union[Press, Neutralise, End, Adjust, LateStart, Arrive, Forfeit, Resume, Takeover]


# --- State ---------------------------------------------------------------------------------------


class Phase(enum.Enum):
    SETUP = "setup"  # before the first press (2.2)
    LATE = "late"  # waiting for absent players (2.3.2, 2.3.3)
    RUNNING = "running"
    NEUTRALISED = "neutralised"
    ENDED = "ended"


class Ending(enum.Enum):
    END = "end"  # the end-of-game gesture
    OVERTIME_FORFEIT = "overtime forfeit"  # 5.3.3
    LATENESS_FORFEIT = "lateness forfeit"  # 2.3.5: not arrived before assigned time expired
    OPTIONAL_FORFEIT = "optional forfeit"  # 2.3.4


@dataclass(frozen=True)
class Clock:
    """Everything the clock knows. Build one with `new_clock`; change it only with `apply`."""

    rules: Rules = field(default_factory=Rules)
    phase: Phase = Phase.SETUP
    side: int | None = None  # RUNNING: whose time runs; NEUTRALISED: whose time restarts
    since_ns: int | None = None  # time accounted up to here (the last input's timestamp)
    origin_ns: int | None = None  # the first input's timestamp
    played_ns: tuple[int, int] = (0, 0)  # time each player's clock has run in play
    allotted_ns: tuple[int, int] = (0, 0)  # game time, less lateness, plus director adjustments
    neutral_ns: int = 0  # time nobody's clock ran: setup, neutralised, waiting for latecomers
    absent: tuple[bool, bool] = (False, False)
    late_since_ns: int | None = None  # the scheduled start, when the director started the clock
    late: tuple[bool, bool] = (False, False)  # arrived late: may elect to forfeit (2.3.4)
    switched_ns: int | None = None  # when the running side last changed, for the switch guard
    pressed: tuple[int, int] | None = None  # (player, t_ns) of the last turn-ending press (3.10.6)
    ending: Ending | None = None
    forfeits: tuple[int, ...] = ()
    restored: bool = False  # came back from a power cut; cleared by the next input


_new = object.__new__
_RUNNING = Phase.RUNNING  # a global, not an attribute of a global, for `apply`'s fast path


def _with(c: Clock, **changes) -> Clock:
    """`dataclasses.replace` for the core's hot path (issue 11: it was most of the work per press):
    a copy of `c`'s fields with `changes`, without replace's per-call introspection and __init__
    (a frozen dataclass's __init__ sets each field through object.__setattr__). Clock has no
    __post_init__ and no derived fields, so the copy is exactly what replace would build. Plain
    __dict__ instances, not __slots__: copying one dict is faster than setting 17 slots."""
    n = _new(Clock)
    d = n.__dict__
    d.update(c.__dict__)
    d.update(changes)
    return n


def _make(cls, **values):
    """A frozen View/PlayerView without its __init__ (every field given, no __post_init__)."""
    n = _new(cls)
    n.__dict__.update(values)
    return n


def new_clock(rules: Rules | None = None) -> Clock:
    rules = rules or Rules()
    allotted = rules.game_time_ms * NS_PER_MS
    return Clock(rules=rules, allotted_ns=(allotted, allotted))


# --- Pure helpers --------------------------------------------------------------------------------


def opponent(player: int) -> int:
    return 3 - player


def _check_player(player: int) -> int:
    if player not in PLAYERS:
        raise ClockInputError(f"player must be 1 or 2, got {player!r}")
    return player


def _set(pair: tuple, player: int, value) -> tuple:
    return (value, pair[1]) if player == 1 else (pair[0], value)


def overtime_seconds(remaining_ns: int) -> int:
    """Overtime in whole seconds, fractions ignored (5.3): 0.9 s over is 0, 1.0 s over is 1."""
    return max(0, -remaining_ns) // NS_PER_S


def penalty_points(overtime_s: int, per_minute: int = Rules.penalty_per_minute) -> int:
    """10 points per minute or part thereof (5.3): 0 s → 0, 1 s → 10, 60 s → 10, 61 s → 20."""
    return -(-overtime_s // 60) * per_minute


def display_text(remaining_ns: int) -> str:
    """What a time display shows (1.4.2(a)). Remaining time is rounded *up* to the second, so the
    display never shows 0:00 while time remains; overtime counts up in whole seconds past 0:00 with
    a minus sign, fractions ignored (5.3), so the penalty can be read off the display: the first
    0.999 s of overtime is no whole second and still shows 0:00 (penalty 0), 1 s shows -0:01."""
    if remaining_ns > 0:
        seconds, sign = -(-remaining_ns // NS_PER_S), ""
    else:
        seconds = overtime_seconds(remaining_ns)
        sign = "-" if seconds else ""
    return f"{sign}{seconds // 60}:{seconds % 60:02d}"


def _lateness_ns(c: Clock, player: int, t_ns: int) -> int:
    """Time an absent player has lost so far to lateness (2.3.2, 2.3.3)."""
    if not c.absent[player - 1] or c.late_since_ns is None:
        return 0
    return t_ns - c.late_since_ns


def _remaining_ns(c: Clock, player: int, t_ns: int) -> int:
    i = player - 1
    return c.allotted_ns[i] - c.played_ns[i] - _lateness_ns(c, player, t_ns)


# --- Settling time -------------------------------------------------------------------------------


def settle(c: Clock, t_ns: int) -> Clock:
    """Account the time from the last input to `t_ns`, applying any rule that time alone triggers:
    the overtime forfeit (5.3.3) and the compulsory lateness forfeit (2.3.5)."""
    if c.since_ns is None:
        return _with(c, since_ns=t_ns, origin_ns=t_ns)
    dt = t_ns - c.since_ns
    if dt <= 0:
        # Nothing to account: the same clock will do (it is a value). Not while waiting for
        # latecomers: an adjustment may have left an absent player's time at or below 0:00, which
        # expires at once (2.3.5). A running side cannot be at the forfeit line (adjust refuses it).
        if dt == 0 and c.phase is not Phase.LATE:
            return c
        if dt < 0:
            raise ClockInputError(f"time went backwards: {t_ns} ns after {c.since_ns} ns")
    if c.phase is Phase.RUNNING:
        i = c.side - 1
        limit = c.allotted_ns[i] + c.rules.forfeit_overtime_ms * NS_PER_MS  # played time that forfeits
        if c.played_ns[i] + dt >= limit:
            run = limit - c.played_ns[i]
            return _with(
                c,
                phase=Phase.ENDED,
                played_ns=_set(c.played_ns, c.side, limit),
                neutral_ns=c.neutral_ns + dt - run,
                since_ns=t_ns,
                ending=Ending.OVERTIME_FORFEIT,
                forfeits=(c.side,),
            )
        return _with(c, played_ns=_set(c.played_ns, c.side, c.played_ns[i] + dt), since_ns=t_ns)
    if c.phase is Phase.LATE:
        # when each absent player's assigned time runs out (now, if it already has)
        due = {p: c.since_ns + max(0, _remaining_ns(c, p, c.since_ns)) for p in PLAYERS if c.absent[p - 1]}
        expiry = min(due.values(), default=None)
        if expiry is not None and expiry <= t_ns:
            expired = tuple(p for p in due if due[p] == expiry)
            stopped = _stop_lateness(c, expiry)  # anyone else absent is charged up to that moment
            allotted = stopped.allotted_ns
            for p in expired:  # the time stops where it ran out: at 0:00, or where a director
                # adjustment had already put it at or below 0:00 (remaining never rises by itself)
                stop = min(0, _remaining_ns(c, p, c.since_ns))
                allotted = _set(allotted, p, c.played_ns[p - 1] + stop)
            return _with(
                stopped,
                phase=Phase.ENDED,
                allotted_ns=allotted,
                neutral_ns=c.neutral_ns + dt,
                since_ns=t_ns,
                ending=Ending.LATENESS_FORFEIT,
                forfeits=expired,
            )
    return _with(c, neutral_ns=c.neutral_ns + dt, since_ns=t_ns)


def phase_at(c: Clock, t_ns: int) -> Phase:
    """The phase `settle(c, t_ns).phase` would give, without building the settled clock (the
    runner asks this several times per wake-up). Only a running clock (5.3.3) and one waiting
    for latecomers (2.3.5) change phase with time alone."""
    if c.since_ns is None:
        return c.phase
    if c.phase is Phase.RUNNING:
        if t_ns < c.since_ns:
            raise ClockInputError(f"time went backwards: {t_ns} ns after {c.since_ns} ns")
        i = c.side - 1
        limit = c.allotted_ns[i] + c.rules.forfeit_overtime_ms * NS_PER_MS
        return Phase.ENDED if c.played_ns[i] + (t_ns - c.since_ns) >= limit else Phase.RUNNING
    if c.phase is Phase.LATE:
        return settle(c, t_ns).phase
    if t_ns < c.since_ns:
        raise ClockInputError(f"time went backwards: {t_ns} ns after {c.since_ns} ns")
    return c.phase


# --- Applying inputs -----------------------------------------------------------------------------


def apply(c: Clock, event: Input) -> Clock:
    """The clock after `event`. Raises ClockInputError only for inputs that can never be valid.

    A replay or a restore is millions of these, nearly all presses and neutralisations on a
    running clock (issue 9, item 8), so those are settled and changed in one step, one copy of the
    clock instead of two; every other case takes the general path (`_apply_general`), which gives
    the same clock (test_clock_core holds the two to each other)."""
    kind = type(event)
    if (kind is Press or kind is Neutralise) and c.phase is _RUNNING and not c.restored:
        t = event.t_ns
        dt = t - c.since_ns
        side = c.side
        played = c.played_ns
        i = side - 1
        played_i = played[i] + dt
        rules = c.rules
        # past the forfeit line (5.3.3), time going backwards or a player who is neither: general path
        if dt >= 0 and played_i < c.allotted_ns[i] + rules.forfeit_overtime_ms * NS_PER_MS:
            if dt:
                played = (played_i, played[1]) if i == 0 else (played[0], played_i)
            if kind is Neutralise:  # 1.4.3; 3.10.6: a neutralised clock clears the courtesy draw
                return _with(c, played_ns=played, since_ns=t, phase=Phase.NEUTRALISED, pressed=None)
            player = event.player
            if player == side:  # 3.1.1(c), 3.4.1 (and the switch guard, as `_press`)
                switched = c.switched_ns
                if switched is None or t - switched >= rules.switch_guard_ms * NS_PER_MS:
                    # `_with`, written out: this is the line a replay runs for nearly every input
                    n = _new(Clock)
                    d = n.__dict__
                    d.update(c.__dict__)
                    d["played_ns"] = played
                    d["since_ns"] = t
                    d["side"] = 3 - player
                    d["switched_ns"] = t
                    d["pressed"] = (player, t)
                    return n
            elif player != 1 and player != 2:
                return _apply_general(c, event)
            return c if not dt else _with(c, played_ns=played, since_ns=t)
    return _apply_general(c, event)


def _apply_general(c: Clock, event: Input) -> Clock:
    """`apply` for every input, by the book: settle to the input's time, then apply it."""
    if isinstance(event, Resume):
        return _resume(c, event)
    c = settle(c, event.t_ns)
    n = _apply_settled(c, event)
    if n.restored and n != c:  # the "restored" notice stays until an input changes something
        n = _with(n, restored=False)
    return n


def _apply_settled(c: Clock, event: Input) -> Clock:
    if c.phase is Phase.ENDED:
        return c
    t = event.t_ns
    if isinstance(event, Press):
        return _press(c, _check_player(event.player), t)
    if isinstance(event, Neutralise):
        if c.phase is Phase.RUNNING:  # 1.4.3, 3.10.3(a)(ii), 5.1.2
            # 3.10.6: the courtesy draw belongs to a turn that stood; a challenge (or anything
            # else that neutralises) may take the play off the board (3.10.15(a))
            return _with(c, phase=Phase.NEUTRALISED, pressed=None)
        if c.phase is Phase.NEUTRALISED:  # 3.10.3(c), 4.1: restart the side that was stopped
            return _with(c, phase=Phase.RUNNING, switched_ns=t)
        if c.phase is Phase.LATE:  # 2.3.2(c), 2.3.3(b): neutralised when the (last) latecomer arrives
            for p in PLAYERS:
                if c.absent[p - 1]:
                    c = _arrive(c, p, t)
        return c
    if isinstance(event, End):
        return _with(_stop_lateness(c, t), phase=Phase.ENDED, ending=Ending.END)
    if isinstance(event, Adjust):
        return _adjust(c, _check_player(event.player), event.remaining_ms, t)
    if isinstance(event, LateStart):
        return _late_start(c, event.players, t)
    if isinstance(event, Takeover):  # only before the spare's first press: a game under way is its own
        player = _check_player(event.player)
        return _with(c, phase=Phase.NEUTRALISED, side=player) if c.phase is Phase.SETUP else c
    if isinstance(event, Arrive):
        return _arrive(c, _check_player(event.player), t)
    if isinstance(event, Forfeit):
        return _optional_forfeit(c, _check_player(event.player), t)
    raise ClockInputError(f"unknown input {event!r}")


def _press(c: Clock, player: int, t: int) -> Clock:
    if c.phase is Phase.SETUP:  # 2.2: the non-starter starts the starter's time
        return _with(c, phase=Phase.RUNNING, side=opponent(player), switched_ns=t, late=(False, False))
    if c.phase is Phase.RUNNING and c.side == player:  # 3.1.1(c), 3.4.1
        if c.switched_ns is not None and t - c.switched_ns < c.rules.switch_guard_ms * NS_PER_MS:
            # This side's time started a moment ago: both buttons went down together. The running
            # player's edge has already switched the clock; the opponent's is part of the collision.
            return c
        return _with(c, side=opponent(player), switched_ns=t, pressed=(player, t))
    if c.phase is Phase.NEUTRALISED and c.side == player:  # 5.1.3: restart the opponent's time
        return _with(c, phase=Phase.RUNNING, side=opponent(player), switched_ns=t)
    if c.phase is Phase.LATE and all(c.absent):  # 2.3.2(b): the first to arrive stops their own
        return _arrive(c, player, t)  # side and the second side runs on
    return c  # the side not running: nothing happens


def _adjust(c: Clock, player: int, remaining_ms: int, t: int) -> Clock:
    floor_ms = -c.rules.forfeit_overtime_ms
    if not isinstance(remaining_ms, int) or remaining_ms <= floor_ms:
        raise ClockInputError(f"remaining_ms must be an integer above {floor_ms} (the forfeit line), got {remaining_ms!r}")
    i = player - 1
    allotted = remaining_ms * NS_PER_MS + c.played_ns[i] + _lateness_ns(c, player, t)
    return _with(c, allotted_ns=_set(c.allotted_ns, player, allotted))


def _late_start(c: Clock, players, t: int) -> Clock:
    players = tuple(sorted({_check_player(p) for p in players}))
    if c.phase is not Phase.SETUP or not players:
        return c  # only before the game, and only for somebody
    absent = tuple(p in players for p in PLAYERS)
    return _with(c, phase=Phase.LATE, absent=absent, late_since_ns=t)


def _stop_lateness(c: Clock, t: int) -> Clock:
    """Charge each absent player's lateness so far to their allotted time and stop it running, so
    ending the game while someone is absent never gives their lost time back (2.3.2, 2.3.3)."""
    allotted = c.allotted_ns
    for p in PLAYERS:
        allotted = _set(allotted, p, allotted[p - 1] - _lateness_ns(c, p, t))
    return _with(c, allotted_ns=allotted, absent=(False, False))


def shown_ns(remaining_ns: int) -> int:
    """The remaining time as the display shows it (`display_text`), in nanoseconds: rounded up to
    the second while time remains, overtime truncated to the whole second."""
    if remaining_ns > 0:
        return -(-remaining_ns // NS_PER_S) * NS_PER_S
    return -overtime_seconds(remaining_ns) * NS_PER_S


def _arrive(c: Clock, player: int, t: int) -> Clock:
    """2.3.2(b)-(c), 2.3.3(b): the player is assigned the time showing on their side, exactly as
    the display shows it (rounded up to the second), so 14:59.5 left is an assigned 15:00 and
    no optional forfeit (2.3.4)."""
    if c.phase is not Phase.LATE or not c.absent[player - 1]:
        return c
    i = player - 1
    assigned = shown_ns(_remaining_ns(c, player, t))
    c = _with(
        c,
        allotted_ns=_set(c.allotted_ns, player, c.played_ns[i] + assigned),
        absent=_set(c.absent, player, False),
        late=_set(c.late, player, True),
    )
    if not any(c.absent):  # 2.3.2(c), 2.3.3(b): everyone is here; the game proceeds as usual (2.2)
        c = _with(c, phase=Phase.SETUP)
    return c


def _may_forfeit(c: Clock, player: int, t: int) -> bool:
    """2.3.4: a late player who has arrived (2.3.1(b)), before play starts (also while the opponent
    is still absent, 2.3.2(b)), whose assigned time is less than 15 minutes."""
    i = player - 1
    return (
        c.phase in (Phase.SETUP, Phase.LATE)
        and c.late[i]
        and not c.absent[i]
        and _remaining_ns(c, player, t) < c.rules.optional_forfeit_below_ms * NS_PER_MS
    )


def _optional_forfeit(c: Clock, player: int, t: int) -> Clock:
    """2.3.4: the late player elects to forfeit; the opponent wins by the lateness margin (2.3.6)."""
    if not _may_forfeit(c, player, t):
        return c
    return _with(_stop_lateness(c, t), phase=Phase.ENDED, ending=Ending.OPTIONAL_FORFEIT, forfeits=(player,))


def _resume(c: Clock, event: Resume) -> Clock:
    if c.since_ns is None:
        return _with(c, since_ns=event.t_ns, origin_ns=event.t_ns, restored=True)
    c = settle(c, max(event.at_ns, c.since_ns))
    shift = event.t_ns - c.since_ns  # move every stored timestamp onto the new boot's clock

    def moved(t: int | None) -> int | None:
        return None if t is None else t + shift

    return _with(
        c,
        phase=Phase.NEUTRALISED if c.phase is Phase.RUNNING else c.phase,
        since_ns=event.t_ns,
        origin_ns=moved(c.origin_ns),
        late_since_ns=moved(c.late_since_ns),
        switched_ns=moved(c.switched_ns),
        # 3.10.6: a restored clock is neutralised, and a neutralised clock clears the courtesy draw
        pressed=None if c.phase is Phase.RUNNING or c.pressed is None else (c.pressed[0], c.pressed[1] + shift),
        restored=True,
    )


# --- What the clock shows ------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerView:
    player: int
    remaining_ns: int
    text: str  # what this player's display shows
    overtime_s: int
    penalty: int
    running: bool
    absent: bool
    forfeit: bool
    may_forfeit: bool  # 2.3.4: late and assigned under 15 minutes, before play starts
    courtesy_draw: bool  # 3.10.6: may draw replacement tiles while the opponent holds

    @property
    def remaining_ms(self) -> int:
        """Remaining milliseconds, truncated toward zero (negative in overtime)."""
        r = self.remaining_ns
        return -(-r // NS_PER_MS) if r < 0 else r // NS_PER_MS


@dataclass(frozen=True)
class View:
    t_ns: int
    phase: Phase
    players: tuple[PlayerView, PlayerView]
    ending: Ending | None
    forfeits: tuple[int, ...]
    restored: bool
    neutral_ns: int
    lateness_margin: int | None  # 2.3.6(a): a lateness forfeit is a win by this margin
    to_move: int | None  # running: whose time runs; neutralised: whose time the centre press restarts

    @property
    def neutralised(self) -> bool:
        return self.phase is Phase.NEUTRALISED

    def winner_by_forfeit(self) -> int | None:
        if len(self.forfeits) == 1:
            return opponent(self.forfeits[0])
        return None


def view(c: Clock, t_ns: int) -> View:
    """What the clock shows at `t_ns` (which must not be before the last input).

    Called several times per press and per display change (issue 11), so it is written out flat:
    the same values as `_remaining_ns`, `_may_forfeit`, `overtime_seconds`, `penalty_points` and
    `display_text` (test_clock_properties and test_clock_stateful hold it to them)."""
    if c.since_ns is not None:
        c = settle(c, t_ns)
    phase, rules = c.phase, c.rules
    running = c.side if phase is Phase.RUNNING else None
    courtesy = None  # 3.10.6: the player who pressed, once the interval has passed
    pressed = c.pressed
    if running is not None and pressed is not None and pressed[0] != running:
        if t_ns - pressed[1] >= rules.courtesy_draw_after_ms * NS_PER_MS:
            courtesy = pressed[0]
    before_play = phase is Phase.SETUP or phase is Phase.LATE
    forfeit_below = rules.optional_forfeit_below_ms * NS_PER_MS
    per_minute = rules.penalty_per_minute
    late_since = c.late_since_ns
    players = []
    for i in (0, 1):
        p = i + 1
        absent = c.absent[i]
        remaining = c.allotted_ns[i] - c.played_ns[i]
        if absent and late_since is not None:
            remaining -= t_ns - late_since
        if remaining > 0:
            overtime = 0
            shown = -(-remaining // NS_PER_S)
            text = f"{shown // 60}:{shown % 60:02d}"
        else:
            overtime = -remaining // NS_PER_S
            text = f"{'-' if overtime else ''}{overtime // 60}:{overtime % 60:02d}"
        players.append(
            _make(
                PlayerView,
                player=p,
                remaining_ns=remaining,
                text=text,
                overtime_s=overtime,
                penalty=-(-overtime // 60) * per_minute,
                running=running == p,
                absent=absent,
                forfeit=p in c.forfeits,
                may_forfeit=before_play and c.late[i] and not absent and remaining < forfeit_below,
                courtesy_draw=courtesy == p,
            )
        )
    ending = c.ending
    return _make(
        View,
        t_ns=t_ns,
        phase=phase,
        players=(players[0], players[1]),
        ending=ending,
        forfeits=c.forfeits,
        restored=c.restored,
        neutral_ns=c.neutral_ns,
        lateness_margin=rules.lateness_forfeit_margin
        if ending is Ending.LATENESS_FORFEIT or ending is Ending.OPTIONAL_FORFEIT
        else None,
        to_move=c.side if phase is Phase.RUNNING or phase is Phase.NEUTRALISED else None,
    )


def run(inputs, rules: Rules | None = None, clock: Clock | None = None) -> Clock:
    """Fold a sequence of inputs into a clock: the whole game, as the replay audits it."""
    c = clock or new_clock(rules)
    for event in inputs:
        c = apply(c, event)
    return c
