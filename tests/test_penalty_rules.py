"""Penalty rules as one table (issue 8 item 2), their wording (issue 9 item 5), and the station's
rule screen paging so that no rule ever lands on a button."""

from __future__ import annotations

import pytest

from rackside.judge.adjudication import Adjudication
from rackside.judge.penalties import ChallengeRule, PenaltyRule, penalty_guidance


def acceptable(n: int) -> Adjudication:
    words = tuple(f"W{'A' * i}" for i in range(n))
    return Adjudication(words, True, (True,) * n)


def test_double_challenge_costs_this_turn():
    text = penalty_guidance(ChallengeRule.DOUBLE, acceptable(1))
    assert "Challenger loses this turn" in text and "next turn" not in text
    assert "this turn" in ChallengeRule.DOUBLE.describe() and "next" not in ChallengeRule.DOUBLE.describe()


def test_dingle_costs_this_turn_after_the_first():
    assert "Challenger loses this turn" in penalty_guidance(ChallengeRule.DINGLE, acceptable(2), 1)
    assert "next" not in penalty_guidance(ChallengeRule.DINGLE, acceptable(2), 1)
    assert "this turn" in ChallengeRule.DINGLE.describe() and "next" not in ChallengeRule.DINGLE.describe()


def test_every_rule_is_one_entry_of_the_table():
    for rule in ChallengeRule:
        assert isinstance(rule.spec, PenaltyRule)
        assert rule.value == rule.spec.value and rule.label == rule.spec.label and rule.clause == rule.spec.clause


def test_adding_a_rule_is_one_entry():
    """A tenth rule (20 points per challenge): one more entry, and parsing, labels, the standard
    flag and the guidance all follow, with nothing else changed."""
    from rackside.judge.penalties import PenaltyTable, points_per_turn

    entries = [(rule.name, rule.spec) for rule in ChallengeRule]
    tenth = PenaltyRule("20-per-turn", "20 points per challenge", "3.10.15(c)(iii)",
                        "An unsuccessful challenger loses 20 points, however many words were challenged.",
                        points_per_turn(20))
    Extended = PenaltyTable("Extended", entries + [("TWENTY_PER_TURN", tenth)])
    assert len(Extended) == 10
    rule = Extended.parse("20-per-turn")
    assert rule.label == "20 points per challenge" and not rule.standard
    assert "Challenger loses 20 points" in penalty_guidance(rule, acceptable(3))
    assert penalty_guidance(Extended.SINGLE, acceptable(1)) == penalty_guidance(ChallengeRule.SINGLE, acceptable(1))


# --- the station's rule screen pages -------------------------------------------------------


def _rules(n: int) -> tuple[tuple[str, str], ...]:
    return tuple((f"r{i}", f"Rule {i}") for i in range(n))


@pytest.mark.parametrize("n", [9, 10, 13, 19])
def test_no_rule_lands_on_a_button(n):
    from rackside.kiosk.flow import Screen, Station
    from rackside.kiosk.layout import Geometry, buttons

    geo = Geometry.for_display(800, 480, 155.0, 86.0)
    st = Station(mode="self", rules=_rules(n))
    st.screen = Screen.RULES
    seen = set()
    for page in range(5):
        st.director = st.director.replace(page=page)
        btns = buttons(st, geo)
        for a in btns:
            for b in btns:
                if a is not b:
                    overlap = (a.rect.x < b.rect.x + b.rect.w and b.rect.x < a.rect.x + a.rect.w
                               and a.rect.y < b.rect.y + b.rect.h and b.rect.y < a.rect.y + a.rect.h)
                    assert not overlap, (page, a.target, b.target)
            assert a.rect.y + a.rect.h <= geo.height
        seen |= {b.target for b in btns if b.target.startswith("rule:")}
    assert seen == {f"rule:r{i}" for i in range(n)}


def test_the_rule_screen_pages_with_next_and_prev():
    from rackside.kiosk.flow import ChooseRule, Screen, Station, Tap

    st = Station(mode="self", rules=_rules(10))
    st.screen = Screen.RULES
    st.director = st.director.replace(page=0)
    st.handle(Tap("next", 1))
    assert st.director.page == 1 and st.screen == Screen.RULES
    st.handle(Tap("next", 2))
    assert st.director.page == 1  # no page past the last
    assert st.handle(Tap("rule:r9", 3)) == [ChooseRule("r9")]
    st.screen, st.director = Screen.RULES, st.director.replace(page=1)
    st.handle(Tap("prev", 4))
    assert st.director.page == 0
