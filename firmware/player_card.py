"""The player card (issue 40 item 3): every message a player meets on the two 4-digit displays, with
one line each on what it means and what to do. Pure data, built from the displays' own words
(`game.render`, `game.slip`), so the card cannot name a word the clock does not show;
tests/test_player_card.py fails if a word the clock shows has no line here.

docs/table.md's player card is `markdown()`; the printable A6 card, docs/player-card.png, is drawn
from `CARD` by docs/tools/player_card.py, which writes `digest()` into the PNG (a tEXt chunk) so a
card printed from a stale picture is found by the same test.

Reviewed as a first-time player would meet them: a word the clock shows alone says what to do
("SIGn": press your button), and where a word is an abbreviation its line spells it out; the two
uses of `----` are told apart by when they show (before the game: the clock is asking where you
play; after it: a score not typed yet).
"""

from __future__ import annotations

import hashlib

from rackside.game import render, slip
from rackside.game.call import CALL_HOLD_NS
from rackside.game.clock import Rules

WESPA = Rules()  # the card's figures are WESPA's, as the clock's defaults (game.clock)
HOLD_S = f"{CALL_HOLD_NS / 1e9:g}"

# (section, [(what the display shows, what it means / what to do), ...]); a shown text as the display
# has it (4 characters, `render.number_text` right-aligned numbers written out as an example).
CARD: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Before the game", (
        (render.table_text(5), "This is table 5. Check the pairings: are you at the right table?"),
        (render.number_text(12), "The number you typed (12). Now press YOUR OWN button to check in."),
        (render.STARTER, "Your side starts (TSH said so). Your opponent presses to start your clock."),
        (render.ASKED, "Your number is not paired at this table: the clock is asking where you play."),
        (render.TABLE_WORD, "Wrong table: go to the table shown next (tAbL, then 14: table 14)."),
        (render.NOT_PAIRED, "Your number is in no pairing this round: check it, or call the director."),
        (render.USED, "Number in on both sides: the one who typed it wrongly types their own."),
    )),
    ("During the game", (
        ("-1:05", f"Overtime: you lose {WESPA.penalty_per_minute} points for each minute or part of one (5.3)."),
        (render.ABSENT, "That player is late: their time runs until they arrive."),
        (render.MAY_FORFEIT, "A late player with little time left may choose to forfeit (2.3.4): see the director."),
        (render.COURTESY, "Your opponent has held a while: you may draw tiles now (3.10.6)."),
        (render.HOLD, "The clock is paused (neutralised): the times stop. Centre button restarts."),
        (render.CALL, f"The director was called (hold # {HOLD_S} s, or both buttons then the centre)."),
        (render.CALL_SEEN, "The director has seen your call and is on the way."),
        (render.RESTORED, "The clock restarted after a power cut; the times are as they were."),
        ("8888", "Flashing: the director is looking for this table."),
    )),
    ("After the game", (
        (render.ENDED, "The game is over. The winner types both scores on the keypad."),
        (render.FORFEIT, "That side forfeited (overtime, 5.3.3, or lateness)."),
        (render.penalty_text(20), "That side's time penalty: 20 points (5.3)."),
        (slip.EMPTY, "Slip: a score not typed yet. The blinking side is the one being typed; # confirms."),
        (slip.RECOUNT, f"Close game ({slip.RECOUNT_MARGIN} or less): * to recount (5.5.2), # to go on to sign."),
        (slip.FINAL, "The score after penalties follows."),
        (slip.SIGN, "Check both scores, then press YOUR OWN button to sign. * clears the slip."),
        (slip.SIGNED, "You have signed."),
        (slip.SENT, "Both signed: the result went to the director's console."),
        (slip.OUTCOME_TEXTS["recorded"], "Recorded. Thank you."),
        (slip.OUTCOME_TEXTS["held"], "Held: the director will check it. Stay at the table."),
        (slip.OUTCOME_TEXTS["refused"], "Not accepted: press your own button to call the director."),
        (slip.DISPUTE, "Another result was recorded (shown before it): not yours? Press your own button."),
    )),
)
TITLE = "Your table clock"
FOOTER = f"Call the director: hold # for {HOLD_S} s (or both buttons, then the centre)."


def shown() -> list[str]:
    """Every display text the card explains."""
    return [text for _, rows in CARD for text, _ in rows]


def markdown() -> str:
    """The card as docs/table.md's table."""
    lines = ["| The display shows | It means |", "| --- | --- |"]
    for section, rows in CARD:
        lines.append(f"| **{section}** | |")
        lines += [f"| `{text.strip()}` | {meaning} |" for text, meaning in rows]
    return "\n".join(lines) + "\n"


def digest() -> str:
    """A short hash of the card's words: the printed PNG carries it."""
    return hashlib.sha256(repr((TITLE, FOOTER, CARD)).encode()).hexdigest()[:16]
