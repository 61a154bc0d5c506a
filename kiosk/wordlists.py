"""A word list imported from a USB stick on the challenge station, as a plain value.

Two screens: IMPORT lists the word lists the app found on removable media (`ScanMedia`, answered
with `show_import_choices`), IMPORTING shows the compile's progress and then the lexicon it became
or why not (`ImportWordList`, answered with `show_import_progress` and `show_import_done`; the
compile runs off the UI thread, `kiosk.effects`). The station's flow (`kiosk.flow.Station`) holds
one `WordListImport` and hands it the actions on those screens; it answers with a
`kiosk.director.Step`. While a list compiles nothing leaves IMPORTING and the director's timeout
waits (`compiling`). Pure: no I/O, no clock.
"""

from __future__ import annotations

from rackside.kiosk.director import LEXICONS_PER_PAGE, LexiconChoice, ListLexicons, ScanMedia, Step, page_move
from rackside.values import Record


class ImportWordList(Record):
    """Compile this word list and switch to it (answered with `show_import_progress`/`_done`)."""

    __slots__ = ("path",)
    path: str


class ImportView(Record):
    """The import screen: a progress bar while compiling, then the lexicon it became or why not."""

    __slots__ = ("source", "fraction", "stage", "done", "name", "word_count", "checksum", "skipped", "error")
    _defaults = {"fraction": 0.0, "stage": "Reading", "done": False, "name": "", "word_count": 0, "checksum": "",
                 "skipped": (), "error": ""}
    source: str
    fraction: float
    stage: str
    done: bool
    name: str
    word_count: int
    checksum: str
    skipped: tuple[str, ...]
    error: str


class WordListImport(Record):
    """The word lists found (`choices`), the list's `page`, and the compile shown (`view`, None
    before one is picked)."""

    __slots__ = ("choices", "page", "view")
    _defaults = {"choices": (), "page": 0, "view": None}
    choices: tuple[LexiconChoice, ...]
    page: int
    view: ImportView | None

    @property
    def compiling(self) -> bool:
        """A picked list has not reported its end yet (only meaningful on the IMPORTING screen)."""
        return self.view is not None and not self.view.done

    def on_choices(self, action: str) -> tuple["WordListImport", Step]:
        """An action on the IMPORT screen."""
        if action in {"back", "escape"}:
            return self.replace(view=None), Step("lexicons", (ListLexicons(),))
        page = page_move(self.page, action, len(self.choices), LEXICONS_PER_PAGE)
        if page is not None:
            return self.replace(page=page), Step()
        if action == "usb":  # look again (a stick plugged in since)
            return self.replace(choices=()), Step("", (ScanMedia(),))
        if action.startswith("pick:"):
            i = int(action[5:])
            if 0 <= i < len(self.choices):
                path = self.choices[i].path
                return self.replace(view=ImportView(path.rsplit("/", 1)[-1])), Step("importing", (ImportWordList(path),))
        return self, Step()

    def on_compile(self, action: str) -> tuple["WordListImport", Step]:
        """An action on the IMPORTING screen."""
        # While compiling, nothing leaves this screen: the result must be seen (and a half-read
        # stick must not be pulled out because the screen looked finished).
        if not self.compiling and action in {"done", "back", "escape", "enter"}:
            return self.replace(view=None), Step("lexicons", (ListLexicons(),))
        return self, Step()

    def progressed(self, fraction: float, stage: str) -> "WordListImport":
        return self.replace(view=self.view.replace(fraction=fraction, stage=stage))

    def finished(self, view: ImportView) -> "WordListImport":
        """The compile's end: `view` says what the list became (or its `error`)."""
        return self.replace(view=view.replace(done=True, fraction=1.0 if not view.error else view.fraction))
