"""Re-adjudicating a logged challenge on the station (3.10.11), as a plain value.

Two screens: READJ_ENTRY, where the director types a challenge's id from a docket or the log (or
starts with the row selected in the log), and READJ_RESULT, the logged verdict beside today's with
the per-word results (the director's eyes only). The station's flow (`kiosk.flow.Station`) holds
one `Readjudication` and hands it the actions on those screens; it answers with a
`kiosk.director.Step`. The app looks the challenge up and judges it again (`Readjudicate`,
answered with `show_readjudication`, `judge.service`). Pure: no I/O, no clock.
"""

from __future__ import annotations

from rackside.kiosk.director import BACK, LogRow, Readjudicate, Step
from rackside.values import Record

MAX_ID_CHARS = 48  # the longest id the entry screen takes


class ReadjudicationView(Record):
    __slots__ = ("row", "now_acceptable", "now_per_word", "differs", "message", "lexicon")
    row: LogRow
    now_acceptable: bool
    now_per_word: tuple[bool, ...]
    differs: bool
    message: str
    lexicon: str


class Readjudication(Record):
    """The id being typed (`typed`) and the result shown (`view`, None until one is)."""

    __slots__ = ("typed", "view")
    _defaults = {"typed": "", "view": None}
    typed: str
    view: ReadjudicationView | None

    def on_entry(self, action: str) -> tuple["Readjudication", Step]:
        """An action on the READJ_ENTRY screen."""
        if action in {"back", "escape"}:
            return self, BACK
        if action == "backspace":
            return self.replace(typed=self.typed[:-1]), Step()
        if action.startswith(("letter:", "digit:", "char:")) and len(self.typed) < MAX_ID_CHARS:
            return self.replace(typed=self.typed + action.split(":", 1)[1]), Step()
        if action in {"enter", "find", "judge"} and self.typed:
            return self, Step("", (Readjudicate(self.typed),))
        return self, Step()

    def on_result(self, action: str) -> Step:
        """An action on the READJ_RESULT screen."""
        return BACK if action in {"back", "escape", "enter"} else Step()
