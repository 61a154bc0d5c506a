"""The player card (issue 40 item 3): every word the 4-digit displays show a player has its line, in
docs/table.md and on the printable card (docs/player-card.png), drawn from the same table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from rackside.firmware import player_card
from rackside.game import render, slip
from rackside.hardware import sevenseg

REPO = Path(__file__).resolve().parents[1]


def display_words(module) -> set[str]:
    """The module's display words: its upper-case text constants a 4-digit display can show."""
    words = set()
    for name, value in vars(module).items():
        if name.isupper() and isinstance(value, str) and len(value.strip()) >= 3:
            try:
                sevenseg.encode(value)
            except ValueError:
                continue
            words.add(value)
    return words


def test_every_word_the_displays_show_a_player_is_on_the_card():
    words = display_words(render) | display_words(slip) | set(slip.OUTCOME_TEXTS.values())
    missing = words - set(player_card.shown())
    assert not missing, f"firmware/player_card.py has no line for {sorted(missing)}"
    for text in player_card.shown():
        sevenseg.encode(text)  # and every one is a text the displays can show
    assert all(len(meaning) <= 90 for _, rows in player_card.CARD for _, meaning in rows)  # one line each


def test_docs_table_md_has_the_cards_table():
    doc = (REPO / "docs" / "table.md").read_text()
    start, end = "<!-- player-card:start -->\n", "<!-- player-card:end -->"
    assert doc[doc.index(start) + len(start):doc.index(end)] == player_card.markdown(), \
        "regenerate docs/table.md's player card from firmware.player_card.markdown()"


def test_the_printed_card_is_drawn_from_the_same_words():
    spec = importlib.util.spec_from_file_location("player_card_tool", REPO / "docs" / "tools" / "player_card.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    png = (REPO / "docs" / "player-card.png").read_bytes()
    assert tool.read_text_chunk(png, tool.CHUNK_KEY) == player_card.digest(), \
        "docs/player-card.png is older than firmware/player_card.py: .venv/bin/python docs/tools/player_card.py"
    assert png[16:24] == (1240).to_bytes(4, "big") + (1748).to_bytes(4, "big")  # A6 at 300 dpi
