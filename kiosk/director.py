"""The director's menu on the challenge station, as a plain value: the menu, lexicon, rule and log screens.

The station's flow (`kiosk.flow.Station`) owns which screen is shown and hands an action on one of
these four screens to its `DirectorMenu` (`on_menu`, `on_lexicons`, `on_rules`, `on_log`), which
returns itself as changed and a `Step`: the screen to go to (a `kiosk.flow.Screen` value; "" to
stay) and the effects for the app to carry out. So a new item in the director's menu, or a new
list, is a change here and in `kiosk.layout`; the challenge flow does not change. The effects and
the rows the app hands in for these screens are defined here; `kiosk.wordlists` (a word list
imported from a USB stick) and `kiosk.readjudication` use them. Pure: no I/O, no clock.
"""

from __future__ import annotations

from typing import Sequence

from rackside.values import Record

LEXICONS_PER_PAGE = 4
RULES_PER_PAGE = 9  # three rows of three above the pager: a tenth rule goes to the next page
LOG_ROWS_PER_PAGE = 5


# --- Effects (for the app to carry out) --------------------------------------------------------


class ListLexicons(Record):
    __slots__ = ()


class ChooseLexicon(Record):
    __slots__ = ("path",)
    path: str


class ChooseRule(Record):
    __slots__ = ("value",)
    value: str


class LoadLog(Record):
    __slots__ = ()


class ExportLog(Record):
    __slots__ = ()


class Readjudicate(Record):
    __slots__ = ("challenge_id",)
    challenge_id: str


class Quit(Record):
    __slots__ = ()


class ScanMedia(Record):
    """List the word lists on removable media (answered with `show_import_choices`)."""

    __slots__ = ()


# --- What the app hands in ---------------------------------------------------------------------


class LexiconChoice(Record):
    __slots__ = ("path", "label", "error")
    _defaults = {"error": None}
    path: str
    label: str
    error: str | None


class LogRow(Record):
    """One challenge in the director's log view; per-word results appear only here."""

    __slots__ = ("challenge_id", "time", "kind", "table", "lexicon", "words", "acceptable", "per_word")
    challenge_id: str
    time: str
    kind: str
    table: str | None
    lexicon: str
    words: tuple[str, ...]
    acceptable: bool
    per_word: tuple[bool, ...]


# --- The menu ----------------------------------------------------------------------------------


class Step(Record):
    """What an action on a director's screen did: the screen to go to (its `kiosk.flow.Screen`
    value: "director" is back to the menu, "idle" leaves it; "" stays) and the effects. A list
    gone to starts at its first page (the station resets `page`)."""

    __slots__ = ("to", "effects")
    _defaults = {"to": "", "effects": ()}
    to: str
    effects: tuple


STAY = Step()
BACK = Step("director")  # to the menu, from any director screen


def page_move(page: int, action: str, total: int, per_page: int) -> int | None:
    """The page after a pager's action ("prev"/"up", "next"/"down") on a list of `total` items,
    kept within the pages; None when `action` is not the pager's."""
    pages = max(1, -(-total // per_page))
    if action in {"prev", "up"}:
        return max(0, page - 1)
    if action in {"next", "down"}:
        return min(pages - 1, page + 1)
    return None


class DirectorMenu(Record):
    """The director's screens' state: the list's `page`, the `note` line under every director screen
    (what a choice did, or why it failed), the log row `selected`, and the lists the app handed in."""

    __slots__ = ("page", "note", "selected", "lexicon_choices", "log_rows")
    _defaults = {"page": 0, "note": "", "selected": "", "lexicon_choices": (), "log_rows": ()}
    page: int
    note: str
    selected: str
    lexicon_choices: tuple[LexiconChoice, ...]
    log_rows: tuple[LogRow, ...]

    def on_menu(self, action: str) -> tuple["DirectorMenu", Step]:
        menu = self.replace(note="") if action else self
        if action in {"resume", "escape"}:
            return menu, Step("idle")
        if action == "lexicons":
            return menu, Step("lexicons", (ListLexicons(),))
        if action == "rules":
            return menu, Step("rules")
        if action == "log":
            return menu.replace(selected=""), Step("log", (LoadLog(),))
        if action == "readj":
            return menu, Step("readj-entry")  # the station starts it with the row selected in the log
        if action == "quit":
            return menu, Step("", (Quit(),))
        return menu, STAY

    def on_lexicons(self, action: str) -> tuple["DirectorMenu", Step]:
        if action in {"back", "escape"}:
            return self, BACK
        page = page_move(self.page, action, len(self.lexicon_choices), LEXICONS_PER_PAGE)
        if page is not None:
            return self.replace(page=page), STAY
        if action == "usb":
            return self.replace(note=""), Step("import", (ScanMedia(),))
        if action.startswith("pick:"):
            i = int(action[5:])
            if 0 <= i < len(self.lexicon_choices) and not self.lexicon_choices[i].error:
                return self, BACK.replace(effects=(ChooseLexicon(self.lexicon_choices[i].path),))
        return self, STAY

    def on_rules(self, action: str, rules: Sequence[tuple[str, str]]) -> tuple["DirectorMenu", Step]:
        """`rules`: the (value, label) of every challenge rule, as the station was given them."""
        if action in {"back", "escape"}:
            return self, BACK
        page = page_move(self.page, action, len(rules), RULES_PER_PAGE)
        if page is not None:
            return self.replace(page=page), STAY
        if action.startswith("rule:"):
            value = action[5:]
            if any(v == value for v, _ in rules):
                return self, BACK.replace(effects=(ChooseRule(value),))
        return self, STAY

    def on_log(self, action: str) -> tuple["DirectorMenu", Step]:
        if action in {"back", "escape"}:
            return self, BACK
        page = page_move(self.page, action, len(self.log_rows), LOG_ROWS_PER_PAGE)
        if page is not None:
            return self.replace(page=page), STAY
        if action.startswith("row:"):
            return self.replace(selected=action[4:]), STAY
        if action == "export":
            return self, Step("", (ExportLog(),))
        if action == "readj" and self.selected:
            return self, Step("", (Readjudicate(self.selected),))
        return self, STAY
