"""Penalty guidance for an unsuccessful challenge (3.10.15): one table of rules, `ChallengeRule`.
Adding a rule is one entry; the station's rule screen pages, so any number fit.

Clause numbers are those of the WESPA Game Rules v2.0 (2010) full text. The v5.1 summary numbers
the challenge-penalty clause 3.10.13; this module cites the full text's 3.10.15 throughout.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from rackside.judge.adjudication import Adjudication
from rackside.values import Record

# Non-standard increasing penalties (3.10.15(c)(iii)): the nth unsuccessful challenge of the game
# costs INCREASING_PENALTIES[n-1]; every one after the fifth stays at the last figure, 30.
INCREASING_PENALTIES = (5, 5, 10, 20, 30)

UNACCEPTABLE_GUIDANCE = "The play comes off the board: the challenged player loses the turn (3.10.15(a))."

_ORDINALS = ("first", "second", "third", "fourth", "fifth")


class PenaltyRule(Record):
    """One row of the penalty table: the config value, the label the director chooses from, the
    clause, the rule in a sentence, and `penalty(words, nth)`: what an unsuccessful challenge
    costs the challenger, as the words of the guidance ("loses 10 points: 2 words × 5"), or ""
    for no penalty. `nth` is the challenger's unsuccessful challenges this game including this
    one, or None when the station does not know it (then the guidance states the rule)."""

    __slots__ = ("value", "label", "clause", "description", "penalty", "depends_on_history")
    _defaults = {"depends_on_history": False}
    value: str
    label: str
    clause: str
    description: str
    penalty: Callable[[int, int | None], str | None]
    depends_on_history: bool


def _words(n: int) -> str:
    return f"{n} word" if n == 1 else f"{n} words"


def points_per_word(each: int) -> Callable[[int, int | None], str]:
    return lambda n, nth: f"loses {each * n} points: {_words(n)} × {each}"


def points_per_turn(points: int) -> Callable[[int, int | None], str]:
    return lambda n, nth: f"loses {points} points for the challenge, however many words"


def _no_penalty(n: int, nth: int | None) -> str:
    return ""


def _loses_this_turn(n: int, nth: int | None) -> str:
    # The challenge is made on the challenger's own turn: under double challenge they lose that
    # turn, the one they are on now, not a later one (3.10.15(b)(v)).
    return "loses this turn"


def _dingle(n: int, nth: int | None) -> str | None:
    return None if nth is None else "" if nth == 1 else "loses this turn"


def _five_then_ten(n: int, nth: int | None) -> str | None:
    return None if nth is None else f"loses {5 if nth == 1 else 10} points"


def _increasing(n: int, nth: int | None) -> str | None:
    return None if nth is None else f"loses {increasing_penalty(nth)} points"


class PenaltyTable(enum.Enum):
    """An enum whose members are PenaltyRule rows: `ChallengeRule` below is the tournament's
    table, and a new rule is one more member (or one more entry given to `PenaltyTable(name,
    entries)`). Each member's value is its config string, e.g. "5-per-word"."""

    def __new__(cls, spec: PenaltyRule):
        member = object.__new__(cls)
        member._value_ = spec.value
        member.spec = spec
        return member

    @property
    def label(self) -> str:
        return self.spec.label

    @property
    def clause(self) -> str:
        return self.spec.clause

    @property
    def standard(self) -> bool:
        """Whether WESPA considers the rule standard (3.10.15(b)); non-standard events may be
        non-ratable (3.10.15(d))."""
        return self.clause.startswith("3.10.15(b)")

    @property
    def depends_on_history(self) -> bool:
        """Whether the penalty depends on the game's earlier unsuccessful challenges."""
        return self.spec.depends_on_history

    def describe(self) -> str:
        """The rule in a sentence, for players and directors."""
        return self.spec.description

    @classmethod
    def parse(cls, text: str):
        """The rule named by its config string (case-insensitive), e.g. "5-per-word"."""
        wanted = str(text).strip().lower()
        for rule in cls:
            if rule.value == wanted or rule.name.lower() == wanted.replace("-", "_"):
                return rule
        allowed = ", ".join(rule.value for rule in cls)
        raise ValueError(f"unknown challenge rule {text!r}; allowed: {allowed}")


class ChallengeRule(PenaltyTable):
    """The tournament's penalty for an unsuccessful challenge (3.10.15(b) standard, (c) non-standard).
    Adding a rule is one entry here; the station's rule screen pages, so any number fit."""

    SINGLE = PenaltyRule("single", "Single challenge (no penalty)", "3.10.15(b)(i)",
                         "No penalty for an unsuccessful challenge.", _no_penalty)
    FIVE_PER_WORD = PenaltyRule("5-per-word", "5 points per word", "3.10.15(b)(ii)",
                                "An unsuccessful challenger loses 5 points for each word challenged.",
                                points_per_word(5))
    FIVE_PER_TURN = PenaltyRule("5-per-turn", "5 points per challenge", "3.10.15(b)(iii)",
                                "An unsuccessful challenger loses 5 points, however many words were challenged.",
                                points_per_turn(5))
    TEN_PER_WORD = PenaltyRule("10-per-word", "10 points per word", "3.10.15(b)(iv)",
                               "An unsuccessful challenger loses 10 points for each word challenged.",
                               points_per_word(10))
    TEN_PER_TURN = PenaltyRule("10-per-turn", "10 points per challenge", "3.10.15(b)(iv)",
                               "An unsuccessful challenger loses 10 points, however many words were challenged.",
                               points_per_turn(10))
    DOUBLE = PenaltyRule("double", "Double challenge (loss of turn)", "3.10.15(b)(v)",
                         "An unsuccessful challenger loses this turn.", _loses_this_turn)
    DINGLE = PenaltyRule("dingle", "Dingle (first free, then loss of turn)", "3.10.15(c)(i)",
                         "A player's first unsuccessful challenge in the game is free; "
                         "each later one loses the challenger this turn.", _dingle, True)
    FIVE_THEN_TEN = PenaltyRule("5-then-10", "5 points, then 10", "3.10.15(c)(ii)",
                                "A player's first unsuccessful challenge in the game costs 5 points; "
                                "each later one costs 10 points.", _five_then_ten, True)
    INCREASING = PenaltyRule("increasing", "Increasing (5-5-10-20-30)", "3.10.15(c)(iii)",
                             "A player's unsuccessful challenges in the game cost 5, 5, 10, 20, then 30 "
                             "points; every one after the fifth also costs 30.", _increasing, True)


# How the guidance names each rule in brackets; a rule without an entry is named by its label.
_SHORT_NAMES = {"single": "single challenge", "double": "double challenge", "dingle": "dingle",
                "5-then-10": "5 then 10", "increasing": "5-5-10-20-30"}


def _ordinal(n: int) -> str:
    return _ORDINALS[n - 1] if n <= len(_ORDINALS) else f"{n}th"


def increasing_penalty(nth: int) -> int:
    """Points for a player's nth unsuccessful challenge of the game under the increasing rule."""
    if nth < 1:
        raise ValueError(f"nth must be at least 1, got {nth}")
    return INCREASING_PENALTIES[min(nth, len(INCREASING_PENALTIES)) - 1]


def penalty_guidance(rule: PenaltyTable, adjudication: Adjudication, prior_unsuccessful: int | None = None) -> str:
    """What happens now, in the players' words (3.10.15).

    An unacceptable play loses the challenged player's turn and the challenger is never penalised
    (3.10.15(a)). For an acceptable play, the challenger's penalty follows `rule`'s row of the
    table. Where it depends on the challenger's earlier unsuccessful challenges in this game
    (dingle, 5-then-10, increasing), pass their number as `prior_unsuccessful`; when it is None
    the guidance states the rule instead of a figure.
    """
    if not adjudication.acceptable:
        return UNACCEPTABLE_GUIDANCE
    if prior_unsuccessful is not None and prior_unsuccessful < 0:
        raise ValueError(f"prior_unsuccessful must be 0 or more, got {prior_unsuccessful}")
    spec = rule.spec
    nth = None if prior_unsuccessful is None else prior_unsuccessful + 1
    cost = spec.penalty(len(adjudication.words), nth if spec.depends_on_history else None)
    if cost is None:  # depends on the game's history, which the station was not told
        return f"The play stands. {spec.description} ({spec.clause})"
    name = _SHORT_NAMES.get(spec.value)
    where = f"{name}, {spec.clause}" if name else spec.clause
    if spec.depends_on_history:
        which = f"this is the challenger's {_ordinal(nth)} unsuccessful challenge this game"
        if not cost:
            return f"The play stands. No penalty: {which} ({where})."
        return f"The play stands. Challenger {cost}: {which} ({where})."
    if not cost:
        return f"The play stands. No penalty for the challenger ({where})."
    return f"The play stands. Challenger {cost} ({where})."
