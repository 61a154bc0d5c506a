"""Challenge adjudication and penalty guidance: pure functions, no I/O, no clock.

Clause numbers are those of the WESPA Game Rules v2.0 (2010) full text. The v5.1 summary numbers
the challenge-penalty clause 3.10.13; this module cites the full text's 3.10.15 throughout.
"""

from __future__ import annotations

import enum
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

MIN_LETTERS = 2
MAX_LETTERS = 15
DEFAULT_MAX_WORDS = 8
# Non-standard increasing penalties (3.10.15(c)(iii)): the nth unsuccessful challenge of the game
# costs INCREASING_PENALTIES[n-1]; every one after the fifth stays at the last figure, 30.
INCREASING_PENALTIES = (5, 5, 10, 20, 30)

UNACCEPTABLE_GUIDANCE = "The play comes off the board: the challenged player loses the turn (3.10.15(a))."

_ORDINALS = ("first", "second", "third", "fourth", "fifth")


class ChallengeInputError(ValueError):
    """The words typed for a challenge cannot be adjudicated; the message is for the players."""


def normalise_words(raw: Sequence[str], max_words: int = DEFAULT_MAX_WORDS) -> tuple[str, ...]:
    """Trim and upper-case the challenged words and check them: 1..max_words words, each 2-15
    letters A-Z. Raises ChallengeInputError saying what is wrong and with which word."""
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
        raise ChallengeInputError("Give the challenged words as a list, one word each")
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}")
    words = []
    for index, item in enumerate(raw, start=1):
        if not isinstance(item, str):
            raise ChallengeInputError(f"Word {index} is not text")
        word = item.strip()
        # Upper-case only plain ASCII: "ß".upper() is "SS" and "ı".upper() is "I", which would turn
        # a mistyped word into a different one.
        word = word.upper() if word.isascii() else word
        shown = word if len(word) <= 20 else word[:20] + "…"
        if not word:
            raise ChallengeInputError(f"Word {index} is empty")
        if any(ch.isspace() for ch in word):
            raise ChallengeInputError(f"Word {index} '{shown}' contains a space: enter one word at a time")
        bad = next((ch for ch in word if not ("A" <= ch <= "Z" or "a" <= ch <= "z")), None)
        if bad is not None:
            raise ChallengeInputError(f"Word {index} '{shown}' has a character that is not a letter A-Z: {bad!r}")
        word = word.upper()
        if len(word) < MIN_LETTERS:
            raise ChallengeInputError(f"Word {index} '{shown}' is too short: words have {MIN_LETTERS} to {MAX_LETTERS} letters")
        if len(word) > MAX_LETTERS:
            raise ChallengeInputError(f"Word {index} '{shown}' is too long: words have {MIN_LETTERS} to {MAX_LETTERS} letters")
        words.append(word)
    if not words:
        raise ChallengeInputError("Enter at least one word to challenge")
    if len(words) > max_words:
        raise ChallengeInputError(f"Too many words: at most {max_words} can be challenged at once, got {len(words)}")
    return tuple(words)


class ChallengeRule(enum.Enum):
    """The tournament's penalty for an unsuccessful challenge (3.10.15(b) standard, (c) non-standard)."""

    SINGLE = "single"
    FIVE_PER_WORD = "5-per-word"
    FIVE_PER_TURN = "5-per-turn"
    TEN_PER_WORD = "10-per-word"
    TEN_PER_TURN = "10-per-turn"
    DOUBLE = "double"
    DINGLE = "dingle"
    FIVE_THEN_TEN = "5-then-10"
    INCREASING = "increasing"

    @property
    def label(self) -> str:
        return _LABELS[self]

    @property
    def clause(self) -> str:
        return _CLAUSES[self]

    @property
    def standard(self) -> bool:
        """Whether WESPA considers the rule standard (3.10.15(b)); non-standard events may be
        non-ratable (3.10.15(d))."""
        return self.clause.startswith("3.10.15(b)")

    @property
    def depends_on_history(self) -> bool:
        """Whether the penalty depends on the game's earlier unsuccessful challenges."""
        return self in (ChallengeRule.DINGLE, ChallengeRule.FIVE_THEN_TEN, ChallengeRule.INCREASING)

    def describe(self) -> str:
        """The rule in a sentence, for players and directors."""
        return _DESCRIPTIONS[self]

    @classmethod
    def parse(cls, text: str) -> "ChallengeRule":
        """The rule named by its config string (case-insensitive), e.g. "5-per-word"."""
        wanted = str(text).strip().lower()
        for rule in cls:
            if rule.value == wanted or rule.name.lower() == wanted.replace("-", "_"):
                return rule
        allowed = ", ".join(rule.value for rule in cls)
        raise ValueError(f"unknown challenge rule {text!r}; allowed: {allowed}")


_LABELS = {
    ChallengeRule.SINGLE: "Single challenge (no penalty)",
    ChallengeRule.FIVE_PER_WORD: "5 points per word",
    ChallengeRule.FIVE_PER_TURN: "5 points per challenge",
    ChallengeRule.TEN_PER_WORD: "10 points per word",
    ChallengeRule.TEN_PER_TURN: "10 points per challenge",
    ChallengeRule.DOUBLE: "Double challenge (loss of turn)",
    ChallengeRule.DINGLE: "Dingle (first free, then loss of turn)",
    ChallengeRule.FIVE_THEN_TEN: "5 points, then 10",
    ChallengeRule.INCREASING: "Increasing (5-5-10-20-30)",
}

_CLAUSES = {
    ChallengeRule.SINGLE: "3.10.15(b)(i)",
    ChallengeRule.FIVE_PER_WORD: "3.10.15(b)(ii)",
    ChallengeRule.FIVE_PER_TURN: "3.10.15(b)(iii)",
    ChallengeRule.TEN_PER_WORD: "3.10.15(b)(iv)",
    ChallengeRule.TEN_PER_TURN: "3.10.15(b)(iv)",
    ChallengeRule.DOUBLE: "3.10.15(b)(v)",
    ChallengeRule.DINGLE: "3.10.15(c)(i)",
    ChallengeRule.FIVE_THEN_TEN: "3.10.15(c)(ii)",
    ChallengeRule.INCREASING: "3.10.15(c)(iii)",
}

_DESCRIPTIONS = {
    ChallengeRule.SINGLE: "No penalty for an unsuccessful challenge.",
    ChallengeRule.FIVE_PER_WORD: "An unsuccessful challenger loses 5 points for each word challenged.",
    ChallengeRule.FIVE_PER_TURN: "An unsuccessful challenger loses 5 points, however many words were challenged.",
    ChallengeRule.TEN_PER_WORD: "An unsuccessful challenger loses 10 points for each word challenged.",
    ChallengeRule.TEN_PER_TURN: "An unsuccessful challenger loses 10 points, however many words were challenged.",
    ChallengeRule.DOUBLE: "An unsuccessful challenger loses their next turn.",
    ChallengeRule.DINGLE: ("A player's first unsuccessful challenge in the game is free; "
                           "each later one loses their next turn."),
    ChallengeRule.FIVE_THEN_TEN: ("A player's first unsuccessful challenge in the game costs 5 points; "
                                  "each later one costs 10 points."),
    ChallengeRule.INCREASING: ("A player's unsuccessful challenges in the game cost 5, 5, 10, 20, then 30 "
                               "points; every one after the fifth also costs 30."),
}


@dataclass(frozen=True)
class Adjudication:
    """The result of one challenge. `acceptable` is the verdict on the whole play (3.10.7(a)(ii));
    `per_word` is for the director only and is never shown to players (3.10.7(b))."""

    words: tuple[str, ...]
    acceptable: bool
    per_word: tuple[bool, ...]

    @property
    def verdict(self) -> str:
        return "ACCEPTABLE" if self.acceptable else "UNACCEPTABLE"


def adjudicate(words: Sequence[str], lexicon: Container[str]) -> Adjudication:
    """Judge a play: acceptable only if every challenged word is in the lexicon (3.10.7(a)(ii)).
    `words` should come from `normalise_words`; `lexicon` is anything supporting `in`."""
    words = tuple(words)
    if not words:
        raise ChallengeInputError("Enter at least one word to challenge")
    if getattr(lexicon, "closed", False):
        raise ValueError("the lexicon has been closed; open it again to adjudicate")
    per_word = tuple(word in lexicon for word in words)
    return Adjudication(words=words, acceptable=all(per_word), per_word=per_word)


def _ordinal(n: int) -> str:
    return _ORDINALS[n - 1] if n <= len(_ORDINALS) else f"{n}th"


def increasing_penalty(nth: int) -> int:
    """Points for a player's nth unsuccessful challenge of the game under the increasing rule."""
    if nth < 1:
        raise ValueError(f"nth must be at least 1, got {nth}")
    return INCREASING_PENALTIES[min(nth, len(INCREASING_PENALTIES)) - 1]


def penalty_guidance(
    rule: ChallengeRule, adjudication: Adjudication, prior_unsuccessful: int | None = None
) -> str:
    """What happens now, in the players' words (3.10.15).

    An unacceptable play loses the challenged player's turn and the challenger is never penalised
    (3.10.15(a)). For an acceptable play, the challenger's penalty follows `rule`. Where it depends
    on the challenger's earlier unsuccessful challenges in this game (dingle, 5-then-10,
    increasing), pass their number as `prior_unsuccessful`; when it is None the guidance states
    the rule instead of a figure.
    """
    if not adjudication.acceptable:
        return UNACCEPTABLE_GUIDANCE
    if prior_unsuccessful is not None and prior_unsuccessful < 0:
        raise ValueError(f"prior_unsuccessful must be 0 or more, got {prior_unsuccessful}")
    n = len(adjudication.words)
    words = f"{n} word" if n == 1 else f"{n} words"
    clause = rule.clause
    if rule is ChallengeRule.SINGLE:
        return f"The play stands. No penalty for the challenger (single challenge, {clause})."
    if rule in (ChallengeRule.FIVE_PER_WORD, ChallengeRule.TEN_PER_WORD):
        each = 5 if rule is ChallengeRule.FIVE_PER_WORD else 10
        return f"The play stands. Challenger loses {each * n} points: {words} × {each} ({clause})."
    if rule in (ChallengeRule.FIVE_PER_TURN, ChallengeRule.TEN_PER_TURN):
        points = 5 if rule is ChallengeRule.FIVE_PER_TURN else 10
        return f"The play stands. Challenger loses {points} points for the challenge, however many words ({clause})."
    if rule is ChallengeRule.DOUBLE:
        return f"The play stands. Challenger loses their next turn (double challenge, {clause})."
    if prior_unsuccessful is None:
        return f"The play stands. {rule.describe()} ({clause})"
    nth = prior_unsuccessful + 1
    which = f"the challenger's {_ordinal(nth)} unsuccessful challenge this game"
    if rule is ChallengeRule.DINGLE:
        if nth == 1:
            return f"The play stands. No penalty: this is {which} (dingle, {clause})."
        return f"The play stands. Challenger loses their next turn: this is {which} (dingle, {clause})."
    if rule is ChallengeRule.FIVE_THEN_TEN:
        points = 5 if nth == 1 else 10
        return f"The play stands. Challenger loses {points} points: this is {which} (5 then 10, {clause})."
    if rule is ChallengeRule.INCREASING:
        points = increasing_penalty(nth)
        return f"The play stands. Challenger loses {points} points: this is {which} (5-5-10-20-30, {clause})."
    raise AssertionError(f"unhandled rule {rule!r}")
