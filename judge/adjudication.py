"""Challenge adjudication: pure functions, no I/O, no clock. The verdict is for the play as a
whole (3.10.7(a)(ii)); per-word results are for the director only (3.10.7(b)). The penalty for an
unsuccessful challenge is `judge.penalties` (3.10.15).

Imports nothing but `rackside.values`: `rackside judge WORD` loads this module on its fast path.
"""

from __future__ import annotations

from rackside.values import Record

MIN_LETTERS = 2
MAX_LETTERS = 15
DEFAULT_MAX_WORDS = 8
# The most words a director may allow in one challenge (station.json's max_words).
MAX_WORDS_LIMIT = 20


class ChallengeInputError(ValueError):
    """The words typed for a challenge cannot be adjudicated; the message is for the players."""


def normalise_words(raw: Sequence[str], max_words: int = DEFAULT_MAX_WORDS) -> tuple[str, ...]:
    """Trim and upper-case the challenged words and check them: 1..max_words words, each 2-15
    letters A-Z. Raises ChallengeInputError saying what is wrong and with which word."""
    try:
        iterable = not isinstance(raw, (str, bytes)) and iter(raw) is not None
    except TypeError:
        iterable = False
    if not iterable:
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


class Adjudication(Record):
    """The result of one challenge. `acceptable` is the verdict on the whole play (3.10.7(a)(ii));
    `per_word` is for the director only and is never shown to players (3.10.7(b))."""

    __slots__ = ("words", "acceptable", "per_word")
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

