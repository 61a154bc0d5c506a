"""The signed result slip on the clock's keypad, as a pure value: inputs in, slip out (issue 27, item 4).

No I/O, no threads, no system clock: like `game.clock`, every input carries its monotonic-ns
time, `apply(slip, input)` returns the next slip (the same object when the input changes nothing,
so the runner journals only the inputs a slip applies) and `texts` says what the two 4-digit
displays show. The runner owns one (`firmware.slip_session`), begun from the clock's own result
when the game has ended (`begin`); a restore folds the journalled inputs again (`game.replay.fold_slip`).

Clauses (WESPA Game Rules v2.0 and the v5.1 summary):
- 5.4.2: the winner fills in the result: types both scores from the score sheets (the clock does not
  know who types; the director's briefing does).
- 5.3, 5.3.2: the clock shows each player's time penalty, as its own result counted it, and the
  result after penalties.
- 5.3.3: an overtime forfeit: the scores are typed as usual; the forfeiter's penalty is at least
  `clock.OVERTIME_FORFEIT_POINTS` (100), and the slip says "ForF" on the forfeiter's side. If the
  forfeiter is still not behind, the console holds it for the director (hall.console.scoring.results.final_scores).
- 2.3.4-2.3.6: a lateness forfeit (compulsory or optional) needs no slip: the result is a win by
  the lateness margin (2.3.6(a)) from the clock's own result, and the absent player is not there to
  sign; `begin` gives None and the keypad does nothing after such an end.
- 5.4.1: a slip signed by both players is final: nothing on the clock changes it afterwards (only
  the director, on the console, 5.4.1(b)).
- 5.4.1(a): until both have signed, either player may clear it (`*` while signing): the scores and
  both signatures are dropped and it is typed again.
- 5.4.1, 1.4.3: a slip the console refused (a result is recorded for this game already, and it is not
  the one signed here: a copied card's, issue 36) shows the result recorded (`rEC`, its scores by side,
  after penalties, as the console's answer says) and `dISP` among its frames; either player's own
  button then calls the director (`disputable`; the runner makes the call, game.call).
- 5.5.1, 5.5.2: with a margin (after penalties) of 20 or less, the clock offers a recount before
  anyone can sign; the game's timers stay off (the clock has ended: nothing restarts them).

The keys (`game.messages.KEYPAD_KEYS`): digits type the score of the side whose display
blinks; `#` confirms it and moves on (side 1, side 2, then the review); `*` clears the score being
typed, or, when it is empty, goes back a side (from side 1: leaves the slip untyped). At the recount
offer `#` declines and `*` recounts (the scores stay, to be corrected). While signing each player
presses their own button; `*` clears the slip (5.4.1(a)).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Union

from rackside.game.clock import OVERTIME_FORFEIT_POINTS, Ending, Phase, View
from rackside.game.messages import KEYPAD_KEYS
from rackside.game.render import BLINK_NS, SLOT_NS, penalty_text  # the displays' grid: frames change together
# A score or a lateness margin a device or a director sends: a whole number within +-this before
# anything else looks at it (TSH's own limits are the console's results.Limits; hall.wire.messages checks with it).
SCORE_BOUND = 10_000
SLIP_WHY_CHARS = 400  # the console's reason for a slip's outcome (a refusal cites its rules), as the clock journals it

RECOUNT_MARGIN = 20  # 5.5.1: a final margin of this many points or less may be recounted
# A 4-digit display shows four digits: a score above this cannot be typed on the clock (a real
# slip's is under TSH's max_score, 1499; the console's form takes any score up to SCORE_BOUND).
MOST_SHOWN = min(SCORE_BOUND, 9999)
OUTCOMES = ("recorded", "held", "refused")  # the console's answer to a signed slip (hall "slip_outcome")
MAX_WHY = SLIP_WHY_CHARS  # the console's reason, as the journal keeps it and the hall carries it
CONFIRM, CLEAR = "#", "*"
NO_SLIP_ENDINGS = (Ending.LATENESS_FORFEIT, Ending.OPTIONAL_FORFEIT)  # 2.3.6(a): the clock's result is the result


class SlipInputError(ValueError):
    """An input that can never be valid (a key the keypad has not, a player who is neither side)."""


# --- Inputs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlipKey:
    """A keypad key pressed after the game's end (`game.messages.Key`, down)."""

    t_ns: int
    key: str


@dataclass(frozen=True)
class SlipSign:
    """A player's own button pressed while the slip waits for signatures (5.4.1)."""

    t_ns: int
    player: int


@dataclass(frozen=True)
class SlipOutcome:
    """The console's answer to the signed slip (hall command "slip_outcome")."""

    t_ns: int
    outcome: str
    why: str | None = None
    recorded: tuple[int, int] | None = None  # the result recorded instead, by side, after penalties (issue 36)


SlipInput = Union[SlipKey, SlipSign, SlipOutcome]
INPUT_TYPES = (SlipKey, SlipSign, SlipOutcome)


# --- State --------------------------------------------------------------------------------------


class Step(enum.Enum):
    UNTYPED = "untyped"  # the game has ended; no key yet
    TYPING = "typing"  # the winner types the scores (5.4.2)
    RECOUNT = "recount"  # a margin of 20 or less: a recount is offered (5.5.1)
    SIGNING = "signing"  # shown with penalties and final scores; each player signs (5.4.1)
    FINAL = "final"  # both signed: journalled and published; then the console's outcome


@dataclass(frozen=True)
class Slip:
    penalties: tuple[int, int]  # the clock's time penalties, by side (5.3)
    forfeits: tuple[int, ...] = ()  # the clock's result: an overtime forfeit's side (5.3.3)
    step: Step = Step.UNTYPED
    scores: tuple[int | None, int | None] = (None, None)  # as typed, by side
    side: int = 1  # whose score the digits go to, while typing
    recounted: bool = False  # a recount was asked for (5.5.1): not offered again
    signed: tuple[bool, bool] = (False, False)
    outcome: str | None = None  # the console's answer, once final
    why: str | None = None
    recorded: tuple[int, int] | None = None  # the result the console recorded instead (issue 36)
    since_ns: int | None = None  # the last input's time

    @property
    def charged(self) -> tuple[int, int]:
        """The points each side loses: the time penalty, and at least 100 for an overtime forfeit (5.3.3)."""
        return tuple(max(p, OVERTIME_FORFEIT_POINTS) if i + 1 in self.forfeits else p
                     for i, p in enumerate(self.penalties))

    @property
    def final(self) -> tuple[int, int] | None:
        """The result after penalties (5.3), once both scores are typed."""
        if None in self.scores:
            return None
        c = self.charged
        return (self.scores[0] - c[0], self.scores[1] - c[1])

    @property
    def margin(self) -> int | None:
        f = self.final
        return None if f is None else abs(f[0] - f[1])

    @property
    def signable(self) -> bool:
        """Presses are signatures now (the runner routes a player's button to the slip)."""
        return self.step is Step.SIGNING


def disputable(s: Slip | None) -> bool:
    """Signed here and refused by the console (a result of this game recorded that is not this slip):
    a player's own button calls the director (issue 36)."""
    return s is not None and s.step is Step.FINAL and (s.outcome == "refused" or (s.recorded is not None and s.recorded != s.final))


def begin(v: View) -> Slip | None:
    """The slip of a game whose clock shows `v` (ended), or None: not ended, or a lateness forfeit
    (2.3.6(a): no slip; the clock's result is the result)."""
    if v.phase is not Phase.ENDED or v.ending in NO_SLIP_ENDINGS:
        return None
    forfeits = v.forfeits if v.ending is Ending.OVERTIME_FORFEIT else ()
    return Slip(penalties=(v.players[0].penalty, v.players[1].penalty), forfeits=tuple(forfeits))


def slip_open(s: Slip | None) -> bool:
    """Begun and not yet answered by the console: a restart resumes the ended game for it."""
    return s is not None and s.step is not Step.UNTYPED and not (s.step is Step.FINAL and s.outcome is not None)


def check(event: SlipInput) -> SlipInput:
    """`event`, or SlipInputError saying why it can never be valid."""
    if isinstance(event, SlipKey):
        if event.key not in KEYPAD_KEYS:
            raise SlipInputError(f"key must be one of {' '.join(KEYPAD_KEYS)}, got {event.key!r}")
    elif isinstance(event, SlipSign):
        if event.player not in (1, 2) or isinstance(event.player, bool):
            raise SlipInputError(f"player must be 1 or 2, got {event.player!r}")
    elif isinstance(event, SlipOutcome):
        if event.outcome not in OUTCOMES:
            raise SlipInputError(f"outcome must be one of {', '.join(OUTCOMES)}, got {event.outcome!r}")
        if event.why is not None and (not isinstance(event.why, str) or len(event.why) > MAX_WHY):
            raise SlipInputError(f"why must be a text of at most {MAX_WHY} characters")
        r = event.recorded
        if r is not None and not (isinstance(r, tuple) and len(r) == 2
                                  and all(isinstance(x, int) and not isinstance(x, bool) and abs(x) <= MOST_SHOWN for x in r)):
            raise SlipInputError(f"recorded must be two whole numbers from -{MOST_SHOWN} to {MOST_SHOWN}, got {r!r}")
    else:
        raise SlipInputError(f"not a slip input: {event!r}")
    return event


def apply(s: Slip, event: SlipInput) -> Slip:
    """The slip after `event`: `s` itself when it changes nothing. Raises SlipInputError only for
    an input that can never be valid."""
    check(event)
    if isinstance(event, SlipKey):
        n = _key(s, event.key)
    elif isinstance(event, SlipSign):
        n = _sign(s, event.player)
    else:
        n = replace(s, outcome=event.outcome, why=event.why, recorded=event.recorded) if s.step is Step.FINAL else s
    return s if n == s else replace(n, since_ns=event.t_ns)


def _set(pair: tuple, side: int, value) -> tuple:
    return (value, pair[1]) if side == 1 else (pair[0], value)


def _key(s: Slip, key: str) -> Slip:
    if s.step is Step.UNTYPED:  # 5.4.2: any key begins the slip, a digit is the first of side 1's score
        s = replace(s, step=Step.TYPING, side=1)
        return _typing(s, key) if key.isdigit() else s
    if s.step is Step.TYPING:
        return _typing(s, key)
    if s.step is Step.RECOUNT:  # 5.5.1: `*` recounts (scores kept to be corrected), `#` declines
        if key == CLEAR:
            return replace(s, step=Step.TYPING, side=1, recounted=True)
        if key == CONFIRM:
            return replace(s, step=Step.SIGNING)
        return s
    if s.step is Step.SIGNING and key == CLEAR:  # 5.4.1(a): either may clear it before both have signed
        return replace(s, step=Step.TYPING, side=1, scores=(None, None), signed=(False, False))
    return s  # 5.4.1: a signed slip is final


def _typing(s: Slip, key: str) -> Slip:
    score = s.scores[s.side - 1]
    if key.isdigit():
        value = (score or 0) * 10 + int(key)
        if value > MOST_SHOWN or score == 0:  # no leading zeros: "0" is a score, "05" is not
            return s
        return replace(s, scores=_set(s.scores, s.side, value))
    if key == CLEAR:
        if score is not None:
            return replace(s, scores=_set(s.scores, s.side, None))
        if s.side == 2:
            return replace(s, side=1)
        return replace(s, step=Step.UNTYPED, scores=(None, None))
    # CONFIRM
    if score is None:
        return s
    if s.side == 1:
        return replace(s, side=2)
    if None in s.scores:
        return replace(s, side=1)
    if s.margin <= RECOUNT_MARGIN and not s.recounted:  # 5.5.1: offered before anyone signs
        return replace(s, step=Step.RECOUNT)
    return replace(s, step=Step.SIGNING)


def _sign(s: Slip, player: int) -> Slip:
    if s.step is not Step.SIGNING or s.signed[player - 1]:
        return s
    signed = _set(s.signed, player, True)
    return replace(s, signed=signed, step=Step.FINAL if all(signed) else Step.SIGNING)  # 5.4.1


def run(s: Slip, inputs) -> Slip:
    for event in inputs:
        s = apply(s, event)
    return s


# --- What the displays show --------------------------------------------------------------------

EMPTY = "----"  # a score not typed yet, on the display it goes to
RECOUNT = "rCnt"
FINAL = "FInL"
SIGN = "SIGn"
SIGNED = "donE"
SENT = "SEnt"
FORFEIT = "ForF"
DISPUTE = "dISP"  # a refused slip: press your own button to call the director (issue 36)
OUTCOME_TEXTS = {"recorded": "rEC", "held": "HELd", "refused": "rEF"}


def score_text(v: int | None) -> str:
    return EMPTY if v is None else f"{v:>4}"


def texts(s: Slip, t_ns: int) -> tuple[str, str] | None:
    """(left, right): player 1's side, player 2's; None before a key (the clock's own ended display)."""
    slot = t_ns // SLOT_NS
    if s.step is Step.UNTYPED:
        return None  # the clock's own ended display (render.texts): the slip shows once a key is pressed
    if s.step is Step.TYPING:
        out = [score_text(x) for x in s.scores]
        if (t_ns // BLINK_NS) % 2 == 1:  # the score being typed blinks: where the digits go
            out[s.side - 1] = ""
        return out[0], out[1]
    if s.step is Step.RECOUNT:
        f = s.final
        frames = [(score_text(f[0]), score_text(f[1])), (RECOUNT, f"{s.margin:>4}")]
        return frames[slot % len(frames)]
    f = s.final
    if s.step is Step.SIGNING:
        out = []
        for i in (0, 1):
            frames = [score_text(s.scores[i]), penalty_text(s.charged[i]), FINAL, score_text(f[i]),
                      SIGNED if s.signed[i] else SIGN]
            if i + 1 in s.forfeits:
                frames.insert(2, FORFEIT)
            out.append(frames[slot % len(frames)])
        return out[0], out[1]
    status = OUTCOME_TEXTS[s.outcome] if s.outcome else SENT
    frames = [(score_text(f[0]), score_text(f[1])), (status, status)]
    if s.recorded is not None and s.recorded != f:  # what was recorded for this game instead (issue 36)
        frames += [(OUTCOME_TEXTS["recorded"], OUTCOME_TEXTS["recorded"]), (score_text(s.recorded[0]), score_text(s.recorded[1]))]
    frames += [(DISPUTE, DISPUTE)] if disputable(s) else []
    return frames[slot % len(frames)]


def next_change_ns(s: Slip, t_ns: int) -> int | None:
    """When `texts` may next change with time alone (a blink or a cycle's next frame)."""
    if s.step is Step.UNTYPED:
        return None
    grid = BLINK_NS if s.step is Step.TYPING else SLOT_NS
    return (t_ns // grid + 1) * grid


def describe(event: SlipInput) -> str:
    """One input, for `rackside clock replay`."""
    if isinstance(event, SlipKey):
        return f"slip key {event.key}"
    if isinstance(event, SlipSign):
        return f"slip signed by {event.player}"
    return f"slip {event.outcome}"


def summary(s: Slip) -> str:
    """The slip's step, for `rackside clock replay`."""
    scores = "-".join("?" if x is None else str(x) for x in s.scores)
    if s.step is Step.UNTYPED:
        return "slip untyped"
    if s.step is Step.TYPING:
        return f"slip typing side {s.side}: {scores}"
    f = s.final
    line = f"slip {scores}, penalties {s.charged[0]}-{s.charged[1]}, after penalties {f[0]}-{f[1]}"
    if s.step is Step.RECOUNT:
        return line + f": margin {s.margin}, recount offered (5.5.1)"
    if s.step is Step.SIGNING:
        return line + ", signed by " + (" and ".join(str(i + 1) for i in (0, 1) if s.signed[i]) or "nobody")
    return line + ", signed by both (final, 5.4.1)" + (f"; console: {s.outcome}" if s.outcome else "")
