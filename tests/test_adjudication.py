"""Adjudication: input normalisation, whole-play verdicts (3.10.7), penalty guidance (3.10.15)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rackside.judge.adjudication import Adjudication, ChallengeInputError, adjudicate, normalise_words
from rackside.judge.penalties import UNACCEPTABLE_GUIDANCE, ChallengeRule, increasing_penalty, penalty_guidance

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LEXICON = frozenset({"CAT", "CATS", "DOG", "QI", "ZA"})
word_st = st.text(alphabet=LETTERS, min_size=2, max_size=15)


def acceptable(n: int) -> Adjudication:
    words = ("CAT", "DOG", "QI", "ZA", "CATS", "CAT", "DOG", "QI")[:n]
    return adjudicate(words, LEXICON)


# --- normalise_words --------------------------------------------------------------------------


def test_trims_and_upper_cases():
    assert normalise_words(["  cat ", "Qi\n", "\tzA"]) == ("CAT", "QI", "ZA")


@pytest.mark.parametrize(
    "raw, message",
    [
        ([], "at least one word"),
        (["cat", ""], "Word 2 is empty"),
        (["cat", "  "], "Word 2 is empty"),
        (["QU1T"], "Word 1 'QU1T' has a character that is not a letter A-Z: '1'"),
        (["cat", "do-g"], "Word 2 'DO-G' has a character"),
        (["café"], "Word 1 'café' has a character that is not a letter A-Z: 'é'"),
        (["straße"], "Word 1 'straße' has a character that is not a letter A-Z: 'ß'"),
        (["ıt"], "Word 1 'ıt' has a character that is not a letter A-Z: 'ı'"),
        (None, "as a list"),
        (["a"], "Word 1 'A' is too short"),
        (["abcdefghijklmnop"], "Word 1 'ABCDEFGHIJKLMNOP' is too long"),
        (["two words"], "Word 1 'TWO WORDS' contains a space"),
        ([b"cat"], "Word 1 is not text"),
        ("cat", "as a list"),
        (["cat"] * 9, "at most 8"),
    ],
)
def test_bad_input_is_refused_with_a_message(raw, message):
    with pytest.raises(ChallengeInputError) as exc_info:
        normalise_words(raw)
    assert message in str(exc_info.value)


def test_word_limit_is_configurable():
    assert len(normalise_words(["cat"] * 9, max_words=9)) == 9
    with pytest.raises(ChallengeInputError, match="at most 2"):
        normalise_words(["cat"] * 3, max_words=2)
    with pytest.raises(ValueError):
        normalise_words(["cat"], max_words=0)


@given(st.lists(st.tuples(word_st, st.booleans(), st.sampled_from(["", " ", "\t", "  \n"])), min_size=1, max_size=8))
def test_valid_words_in_any_case_and_padding_normalise(items):
    raw = [pad + (w.lower() if low else w) + pad for w, low, pad in items]
    assert normalise_words(raw) == tuple(w for w, _, _ in items)


@given(st.lists(st.text(max_size=20), max_size=10))
def test_any_input_either_normalises_or_gets_a_message(raw):
    try:
        words = normalise_words(raw)
    except ChallengeInputError as exc:
        assert str(exc)
    else:
        assert 1 <= len(words) <= 8
        assert all(2 <= len(w) <= 15 and set(w) <= set(LETTERS) for w in words)


# --- adjudicate -------------------------------------------------------------------------------


def test_the_play_is_acceptable_only_if_every_word_is():
    assert adjudicate(("CAT", "DOG"), LEXICON) == Adjudication(("CAT", "DOG"), True, (True, True))
    result = adjudicate(("CAT", "DOGZ", "QI"), LEXICON)
    assert not result.acceptable
    assert result.per_word == (True, False, True)
    assert result.verdict == "UNACCEPTABLE"


@given(st.lists(word_st, min_size=1, max_size=8), st.sets(word_st, max_size=20))
def test_verdict_matches_the_oracle(words, lexicon):
    result = adjudicate(words, lexicon)
    assert result.acceptable == all(w in lexicon for w in words)
    assert result.per_word == tuple(w in lexicon for w in words)


def test_nothing_to_adjudicate_is_refused():
    with pytest.raises(ChallengeInputError):
        adjudicate((), LEXICON)


# --- ChallengeRule ----------------------------------------------------------------------------


def test_rule_config_strings_are_stable():
    assert [r.value for r in ChallengeRule] == [
        "single", "5-per-word", "5-per-turn", "10-per-word", "10-per-turn", "double", "dingle", "5-then-10",
        "increasing",
    ]
    for rule in ChallengeRule:
        assert ChallengeRule.parse(rule.value) is rule
        assert ChallengeRule.parse(f" {rule.value.upper()} ") is rule
        assert rule.label and rule.describe()
    assert ChallengeRule.parse("five_per_word") is ChallengeRule.FIVE_PER_WORD
    assert ChallengeRule.FIVE_PER_WORD.label == "5 points per word"


def test_unknown_rule_lists_the_allowed_values():
    with pytest.raises(ValueError) as exc_info:
        ChallengeRule.parse("triple")
    assert "'triple'" in str(exc_info.value)
    for rule in ChallengeRule:
        assert rule.value in str(exc_info.value)


def test_standard_and_non_standard_rules():
    standard = {r for r in ChallengeRule if r.standard}
    assert standard == {ChallengeRule.SINGLE, ChallengeRule.FIVE_PER_WORD, ChallengeRule.FIVE_PER_TURN,
                        ChallengeRule.TEN_PER_WORD, ChallengeRule.TEN_PER_TURN, ChallengeRule.DOUBLE}
    assert {r for r in ChallengeRule if r.depends_on_history} == {
        ChallengeRule.DINGLE, ChallengeRule.FIVE_THEN_TEN, ChallengeRule.INCREASING}


# --- penalty_guidance -------------------------------------------------------------------------


@given(st.sampled_from(list(ChallengeRule)), st.none() | st.integers(0, 50))
def test_unacceptable_play_loses_the_turn_and_never_penalises_the_challenger(rule, prior):
    result = adjudicate(("CAT", "XYZZY"), LEXICON)
    text = penalty_guidance(rule, result, prior)
    assert text == UNACCEPTABLE_GUIDANCE
    assert "loses the turn (3.10.15(a))" in text
    assert "Challenger" not in text


@given(st.sampled_from(list(ChallengeRule)), st.none() | st.integers(0, 50), st.integers(1, 8))
def test_guidance_never_names_a_word(rule, prior, n):
    result = acceptable(n)
    text = penalty_guidance(rule, result, prior)
    assert not any(word in text for word in result.words)
    assert text.startswith("The play stands.")
    assert "3.10.15(" in text


@pytest.mark.parametrize(
    "rule, n, expected",
    [
        (ChallengeRule.SINGLE, 2, "No penalty for the challenger (single challenge, 3.10.15(b)(i))"),
        (ChallengeRule.FIVE_PER_WORD, 1, "Challenger loses 5 points: 1 word × 5 (3.10.15(b)(ii))"),
        (ChallengeRule.FIVE_PER_WORD, 2, "Challenger loses 10 points: 2 words × 5"),
        (ChallengeRule.FIVE_PER_WORD, 8, "Challenger loses 40 points: 8 words × 5"),
        (ChallengeRule.TEN_PER_WORD, 3, "Challenger loses 30 points: 3 words × 10 (3.10.15(b)(iv))"),
        (ChallengeRule.FIVE_PER_TURN, 3, "Challenger loses 5 points for the challenge, however many words (3.10.15(b)(iii))"),
        (ChallengeRule.TEN_PER_TURN, 3, "Challenger loses 10 points for the challenge, however many words (3.10.15(b)(iv))"),
        (ChallengeRule.DOUBLE, 1, "Challenger loses this turn (double challenge, 3.10.15(b)(v))"),
    ],
)
def test_standard_rules(rule, n, expected):
    assert expected in penalty_guidance(rule, acceptable(n))
    # History does not change a standard rule's penalty.
    assert penalty_guidance(rule, acceptable(n), 3) == penalty_guidance(rule, acceptable(n))


@pytest.mark.parametrize(
    "rule, expected",
    [
        (ChallengeRule.DINGLE, "first unsuccessful challenge in the game is free; each later one loses the challenger this turn"),
        (ChallengeRule.FIVE_THEN_TEN, "first unsuccessful challenge in the game costs 5 points; each later one costs 10"),
        (ChallengeRule.INCREASING, "cost 5, 5, 10, 20, then 30 points; every one after the fifth also costs 30"),
    ],
)
def test_history_rules_state_the_rule_when_history_is_unknown(rule, expected):
    text = penalty_guidance(rule, acceptable(2))
    assert expected in text
    assert f"({rule.clause})" in text


def test_dingle():
    assert "No penalty: this is the challenger's first unsuccessful challenge this game (dingle, 3.10.15(c)(i))" in \
        penalty_guidance(ChallengeRule.DINGLE, acceptable(2), 0)
    for prior in (1, 2, 7):
        assert "Challenger loses this turn" in penalty_guidance(ChallengeRule.DINGLE, acceptable(2), prior)


def test_five_then_ten():
    assert "Challenger loses 5 points: this is the challenger's first" in \
        penalty_guidance(ChallengeRule.FIVE_THEN_TEN, acceptable(3), 0)
    assert "Challenger loses 10 points: this is the challenger's second" in \
        penalty_guidance(ChallengeRule.FIVE_THEN_TEN, acceptable(1), 1)


@pytest.mark.parametrize("prior, points", [(0, 5), (1, 5), (2, 10), (3, 20), (4, 30), (5, 30), (11, 30)])
def test_increasing(prior, points):
    assert increasing_penalty(prior + 1) == points
    text = penalty_guidance(ChallengeRule.INCREASING, acceptable(2), prior)
    assert f"Challenger loses {points} points" in text
    assert "(5-5-10-20-30, 3.10.15(c)(iii))" in text
    if prior == 11:
        assert "12th unsuccessful challenge" in text


def test_negative_history_is_refused():
    with pytest.raises(ValueError):
        penalty_guidance(ChallengeRule.DINGLE, acceptable(1), -1)
    with pytest.raises(ValueError):
        increasing_penalty(0)

