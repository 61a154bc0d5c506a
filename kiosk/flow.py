"""The challenge station's flow as a pure state machine.

Inputs are plain events, each carrying a `time.monotonic_ns()` timestamp; the machine never reads
a clock, opens a file or draws. What it needs done outside (adjudicate and log a challenge, save
a director's choice, read the log) it returns as effect objects; the app carries them out and
reports back through the `show_*` methods. So every timeout, the touch-ignore window after a
verdict and the PIN lockout are tested with made-up timestamps and no sleeping.

Screens and why:
- IDLE: lexicon, rule, "Touch to challenge" (3.10.9).
- TABLE (runner mode): the table number from the challenge slip (3.10.7(c)).
- COUNT: how many words, 1-8; ENTRY: the challenger types them, the opponent checks the spelling
  and presses JUDGE (3.10.9(a)(v)-(vi)). A challenge being typed or checked is kept for 60 s
  after the last input, with a countdown for the last 10 s; any touch or key restarts it.
- RESULT: the verdict for the play as a whole, never per word (3.10.7(a)(ii), 3.10.7(b)).
- PIN / LOCKED / DIRECTOR*: the director's screens; the only way out of the kiosk.
- IMPORT / IMPORTING: a word list from a USB stick, compiled with a progress bar and switched to
  (the compile runs off the UI thread; the director's 60 s timeout waits for it to finish).
"""

from __future__ import annotations

import enum
from typing import Callable, Sequence

from rackside.judge.adjudication import MAX_LETTERS  # the longest word a challenge may hold
from rackside.values import Record

NS = 1_000_000_000
MAX_WORDS = 8
MAX_TABLE_DIGITS = 4
MAX_ID_CHARS = 48
PIN_MAX = 8
PIN_TRIES = 5


class Timing(Record):
    """The station's clocks, in monotonic nanoseconds."""

    __slots__ = ("inactivity_ns", "entry_idle_ns", "countdown_ns", "result_hold_ns", "touch_ignore_ns",
                 "lockout_ns", "director_idle_ns")
    _defaults = {
        "inactivity_ns": 15 * NS,  # table, count (no words yet), PIN: back to idle after 15 s without input
        # Words typed (entry, or count changed from entry): players may be checking a long play,
        # so 60 s, and the last 10 s are counted down on screen (issue 10 item 8).
        "entry_idle_ns": 60 * NS,
        "countdown_ns": 10 * NS,
        "result_hold_ns": 10 * NS,  # the verdict stays up 10 s ...
        "touch_ignore_ns": NS // 2,  # ... and ignores input for the first 0.5 s
        "lockout_ns": 60 * NS,  # five wrong PINs lock director mode for 60 s
        "director_idle_ns": 60 * NS,  # an abandoned director screen falls back to the station
    }
    inactivity_ns: int
    entry_idle_ns: int
    countdown_ns: int
    result_hold_ns: int
    touch_ignore_ns: int
    lockout_ns: int
    director_idle_ns: int


class Screen(enum.Enum):
    IDLE = "idle"
    TABLE = "table"
    COUNT = "count"
    ENTRY = "entry"
    RESULT = "result"
    PIN = "pin"
    LOCKED = "locked"
    DIRECTOR = "director"
    LEXICONS = "lexicons"
    RULES = "rules"
    LOG = "log"
    READJ_ENTRY = "readj-entry"
    READJ_RESULT = "readj-result"
    IMPORT = "import"
    IMPORTING = "importing"


# Screens a player leaves behind: 15 s without input (60 s once words are typed) returns them to
# idle, forgetting everything.
PLAYER_SCREENS = {Screen.TABLE, Screen.COUNT, Screen.ENTRY, Screen.PIN}
DIRECTOR_SCREENS = {
    Screen.DIRECTOR, Screen.LEXICONS, Screen.RULES, Screen.LOG, Screen.READJ_ENTRY, Screen.READJ_RESULT,
    Screen.IMPORT, Screen.IMPORTING,
}


# --- Events (inputs) -------------------------------------------------------------------------


class Key(Record):
    """A physical key: "A".."Z", "0".."9", "-", or SPACE ENTER BACKSPACE TAB ESCAPE UP DOWN."""

    __slots__ = ("key", "t_ns")
    key: str
    t_ns: int


class Tap(Record):
    """An on-screen target was pressed and released (see kiosk.layout for target names)."""

    __slots__ = ("target", "t_ns")
    target: str
    t_ns: int


class Close(Record):
    """Window close or Alt+F4: leads to the PIN screen, never out of the kiosk."""

    __slots__ = ("t_ns",)
    t_ns: int


class Activity(Record):
    """Someone touched the screen or pressed a key that means nothing here: they are still there."""

    __slots__ = ("t_ns",)
    t_ns: int


class Tick(Record):
    """Time passed with no input."""

    __slots__ = ("t_ns",)
    t_ns: int


Event = Key | Tap | Close | Activity | Tick


# --- Effects (outputs for the app to carry out) ------------------------------------------------


class Judge(Record):
    __slots__ = ("words", "table", "kind")
    words: tuple[str, ...]
    table: str | None
    kind: str  # "self" or "runner"


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


class ImportWordList(Record):
    """Compile this word list and switch to it (answered with `show_import_progress`/`_done`)."""

    __slots__ = ("path",)
    path: str


Effect = (Judge | ListLexicons | ChooseLexicon | ChooseRule | LoadLog | ExportLog | Readjudicate | Quit | ScanMedia
          | ImportWordList)


# --- Views the app hands in --------------------------------------------------------------------


class LexiconInfo(Record):
    __slots__ = ("name", "word_count", "short_checksum")
    name: str
    word_count: int
    short_checksum: str

    @property
    def label(self) -> str:
        return f"{self.name} · {self.word_count:,} words · {self.short_checksum}"


class Verdict(Record):
    """What the result screen shows. No per-word results: players never see them (3.10.7(b))."""

    __slots__ = ("acceptable", "words", "lexicon", "guidance", "challenge_id", "kind", "short_id")
    _defaults = {"short_id": ""}
    acceptable: bool
    words: tuple[str, ...]
    lexicon: str
    guidance: str
    challenge_id: str
    kind: str
    short_id: str  # 6 characters, unique in the log: what the runner copies onto the slip


class LexiconChoice(Record):
    __slots__ = ("path", "label", "error")
    _defaults = {"error": None}
    path: str
    label: str
    error: str | None


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


class ReadjudicationView(Record):
    __slots__ = ("row", "now_acceptable", "now_per_word", "differs", "message", "lexicon")
    row: LogRow
    now_acceptable: bool
    now_per_word: tuple[bool, ...]
    differs: bool
    message: str
    lexicon: str


# --- The machine -------------------------------------------------------------------------------


def _no_pin(pin: str) -> bool:
    return False


class Station:
    """The station's whole state. Feed events to `handle`; it returns the effects to carry out.

    A plain class rather than a dataclass: forty fields made the dataclass cost ~2 ms to define at
    every start. Keyword arguments beyond the four settings set any state field (for tests)."""

    def __init__(self, mode: str = "self", verify_pin: Callable[[str], bool] = _no_pin,
                 timing: Timing = Timing(), rules: tuple[tuple[str, str], ...] = (), **state) -> None:
        self.mode = mode
        self.verify_pin = verify_pin
        self.timing = timing
        self.rules = rules  # (value, label) for the RULES screen
        # What the idle and director screens show; the app hands these in.
        self.rule_value = ""
        self.rule_label = ""
        self.lexicon: LexiconInfo | None = None
        self.lexicon_error: str | None = None
        self.lexicon_notice = ""  # e.g. that the bundled demonstration list is judging
        self.hall_notice = ""  # the hall's code or station id (kiosk.hall_status), "" off a hall
        self.max_words = MAX_WORDS
        # The flow.
        self.screen = Screen.IDLE
        self.last_input_ns = 0
        self.table = ""
        self.count = 0
        self.words: list[str] = [""]
        self.message = ""
        self.verdict: Verdict | None = None
        self.verdict_ns = 0
        self.docket = ""  # "", "printing", "printed", or "failed: why"
        self.pin = ""
        self.pin_message = ""
        self.wrong_tries = 0
        self.lock_until_ns = 0
        self.director_note = ""
        self.lexicon_choices: tuple[LexiconChoice, ...] = ()
        self.log_rows: tuple[LogRow, ...] = ()
        self.page = 0
        self.selected = ""
        self.readj_id = ""
        self.readj: ReadjudicationView | None = None
        self.import_choices: tuple[LexiconChoice, ...] = ()
        self.import_view: ImportView | None = None
        for name, value in state.items():
            if name not in self.__dict__:
                raise TypeError(f"Station has no field {name!r}")
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"Station(mode={self.mode!r}, screen={self.screen}, count={self.count}, words={self.words!r})"

    # -- queries ------------------------------------------------------------------------------

    @property
    def typed_words(self) -> tuple[str, ...]:
        return tuple(w for w in self.words if w)

    @property
    def ready_to_judge(self) -> bool:
        return self.count > 0 and len(self.typed_words) == self.count

    @property
    def importing(self) -> bool:
        """A word list is being compiled (the director's timeout waits for it)."""
        return self.screen == Screen.IMPORTING and self.import_view is not None and not self.import_view.done

    def locked(self, t_ns: int) -> bool:
        return t_ns < self.lock_until_ns

    def idle_limit_ns(self) -> int:
        """How long the current player screen waits for input before returning to idle."""
        if self.screen == Screen.ENTRY or (self.screen == Screen.COUNT and self.typed_words):
            return self.timing.entry_idle_ns
        return self.timing.inactivity_ns

    def countdown_s(self, now_ns: int) -> int | None:
        """Whole seconds left on the entry's countdown while it is shown (its last 10 s), else None."""
        if self.idle_limit_ns() != self.timing.entry_idle_ns or self.screen not in PLAYER_SCREENS:
            return None
        left = self.last_input_ns + self.timing.entry_idle_ns - now_ns
        if left > self.timing.countdown_ns or left <= 0:
            return None
        return -(-left // NS)

    def next_deadline_ns(self, now_ns: int) -> int | None:
        """The earliest time a Tick could change what is shown (the loop's sleep ends there)."""
        t = self.timing
        if self.screen == Screen.RESULT:
            return self.verdict_ns + t.result_hold_ns
        if self.screen == Screen.LOCKED:
            # Redraw the countdown each second; leave when the lock lifts or nobody is there.
            remaining = self.lock_until_ns - now_ns
            next_second = now_ns + (remaining % NS or NS)
            return min(self.lock_until_ns, self.last_input_ns + t.inactivity_ns, next_second)
        if self.screen in PLAYER_SCREENS:
            end = self.last_input_ns + self.idle_limit_ns()
            if self.idle_limit_ns() == t.entry_idle_ns:
                start = end - t.countdown_ns
                if now_ns < start:
                    return start  # the countdown appears
                return min(end, now_ns + ((end - now_ns) % NS or NS))  # each second of it
            return end
        if self.importing:
            return None  # the app redraws the progress bar as the compile reports it
        if self.screen in DIRECTOR_SCREENS:
            return self.last_input_ns + t.director_idle_ns
        return None

    # -- transitions --------------------------------------------------------------------------

    def handle(self, event: Event) -> list[Effect]:
        if isinstance(event, Tick):
            self._tick(event.t_ns)
            return []
        self._tick(event.t_ns)  # a late event still sees the timeouts that passed before it
        if isinstance(event, Close):
            self._to_pin(event.t_ns)
            return []
        if isinstance(event, Activity):
            if self.screen != Screen.RESULT:  # the result's hold is fixed: a touch there is a Tap
                self.last_input_ns = event.t_ns
            return []
        if self.screen == Screen.RESULT:
            if isinstance(event, Key) and event.key == "ESCAPE":
                self._to_pin(event.t_ns)
            elif event.t_ns - self.verdict_ns >= self.timing.touch_ignore_ns:
                self._reset(Screen.IDLE, event.t_ns)
            return []
        self.last_input_ns = event.t_ns
        if isinstance(event, Key) and event.key == "ESCAPE" and self.screen not in DIRECTOR_SCREENS:
            self._to_pin(event.t_ns)
            return []
        handler = getattr(self, f"_on_{self.screen.name.lower()}")
        return handler(event) or []

    def _tick(self, t_ns: int) -> None:
        t = self.timing
        s = self.screen
        if s == Screen.RESULT and t_ns - self.verdict_ns >= t.result_hold_ns:
            self._reset(Screen.IDLE, t_ns)
        elif s == Screen.LOCKED and (not self.locked(t_ns) or t_ns - self.last_input_ns >= t.inactivity_ns):
            self._reset(Screen.IDLE, t_ns)
        elif s in PLAYER_SCREENS and t_ns - self.last_input_ns >= self.idle_limit_ns():
            self._reset(Screen.IDLE, t_ns)
        elif s in DIRECTOR_SCREENS and t_ns - self.last_input_ns >= t.director_idle_ns and not self.importing:
            self._reset(Screen.IDLE, t_ns)

    def _reset(self, screen: Screen, t_ns: int) -> None:
        """Go to `screen`, forgetting the words, the table and any PIN digits."""
        self.screen = screen
        self.last_input_ns = t_ns
        self.table, self.count, self.words, self.message = "", 0, [""], ""
        self.pin, self.pin_message = "", ""
        if screen == Screen.IDLE:
            self.verdict, self.docket = None, ""
            self.readj, self.readj_id, self.selected, self.director_note = None, "", "", ""

    def _to_pin(self, t_ns: int) -> None:
        self._reset(Screen.LOCKED if self.locked(t_ns) else Screen.PIN, t_ns)

    def _start(self, t_ns: int) -> None:
        self._reset(Screen.TABLE if self.mode == "runner" else Screen.COUNT, t_ns)

    # IDLE
    def _on_idle(self, ev: Key | Tap) -> None:
        if isinstance(ev, Tap) and ev.target == "director":
            self._to_pin(ev.t_ns)
        elif self.no_lexicon:
            return  # nothing to judge with: the screen says so before anyone types a play
        elif isinstance(ev, Key) and self.mode == "self" and ev.key.isdigit() and 1 <= int(ev.key) <= self.max_words:
            self._start(ev.t_ns)
            self._set_count(int(ev.key))
        elif isinstance(ev, Key) and self.mode == "runner" and ev.key.isdigit() and len(ev.key) == 1:
            self._start(ev.t_ns)
            self.table = ev.key
        elif isinstance(ev, Tap) or _action(ev):
            self._start(ev.t_ns)

    # TABLE (runner mode)
    def _on_table(self, ev: Key | Tap) -> None:
        action = _action(ev)
        if action == "cancel":
            self._reset(Screen.IDLE, ev.t_ns)
        elif action in {"enter", "next"}:
            self.screen = Screen.COUNT
        elif action == "backspace":
            self.table = self.table[:-1]
        elif action.startswith("digit:") and len(self.table) < MAX_TABLE_DIGITS:
            self.table += action[6:]

    # COUNT
    def _on_count(self, ev: Key | Tap) -> None:
        action = _action(ev)
        if action == "cancel":
            self._reset(Screen.IDLE, ev.t_ns)
        elif action.startswith(("count:", "digit:")):
            n = int(action.split(":")[1])
            if 1 <= n <= self.max_words:
                self._set_count(n)

    def _set_count(self, n: int) -> None:
        self.count = n
        self.message = ""
        self.screen = Screen.ENTRY

    # ENTRY
    def _on_entry(self, ev: Key | Tap) -> list[Effect] | None:
        action = _action(ev)
        self.message = ""
        if action == "cancel":
            self._reset(Screen.IDLE, ev.t_ns)
        elif action == "count":
            self.screen = Screen.COUNT
        elif action.startswith("letter:"):
            if len(self.words[-1]) < MAX_LETTERS:
                self.words[-1] += action[7:]
            else:
                self.message = f"A word has at most {MAX_LETTERS} letters"
        elif action in {"space", "enter"}:
            if self.words[-1] and len(self.words) < self.count:
                self.words.append("")
            elif self.words[-1]:
                self.message = self._count_message()
        elif action == "backspace":
            if self.words[-1]:
                self.words[-1] = self.words[-1][:-1]
            elif len(self.words) > 1:
                self.words.pop()
        elif action == "judge":
            return self._judge()
        return None

    def _count_message(self) -> str:
        n = len(self.typed_words)
        want = f"{self.count} word" + ("s" if self.count != 1 else "")
        return f"The challenge is for {want}: {n} typed"

    def _judge(self) -> list[Effect] | None:
        # JUDGE works only when the number of typed words matches the count (3.10.9(a)(vi)).
        if not self.ready_to_judge:
            self.message = self._count_message() + (" (press COUNT to change it)" if self.typed_words else "")
            return None
        return [Judge(self.typed_words, self.table or None, "runner" if self.mode == "runner" else "self")]

    def reject_words(self, message: str) -> None:
        """The engine refused the words (e.g. a one-letter word): say why, keep them for editing."""
        self.message = message

    def show_verdict(self, verdict: Verdict, t_ns: int, printing: bool = False) -> None:
        """The challenge is logged; show the verdict from t_ns (the hold and touch-ignore start)."""
        self._reset(Screen.RESULT, t_ns)
        self.verdict, self.verdict_ns = verdict, t_ns
        self.docket = "printing" if printing else ""

    def docket_done(self, ok: bool, why: str = "") -> None:
        if self.screen == Screen.RESULT:
            self.docket = "printed" if ok else f"failed: {why}" if why else "failed"

    # PIN and LOCKED
    def _on_pin(self, ev: Key | Tap) -> None:
        action = _action(ev)
        if action == "cancel":
            self._reset(Screen.IDLE, ev.t_ns)
        elif action == "backspace":
            self.pin = self.pin[:-1]
        elif action.startswith("digit:"):
            if len(self.pin) < PIN_MAX:
                self.pin += action[6:]
            self.pin_message = ""
        elif action in {"enter", "ok"}:
            self._check_pin(ev.t_ns)

    def _check_pin(self, t_ns: int) -> None:
        if self.locked(t_ns):
            self._reset(Screen.LOCKED, t_ns)
            return
        pin, self.pin = self.pin, ""
        if pin and self.verify_pin(pin):
            self.wrong_tries = 0
            self._reset(Screen.DIRECTOR, t_ns)
            return
        self.wrong_tries += 1
        if self.wrong_tries >= PIN_TRIES:
            self.wrong_tries = 0
            self.lock_until_ns = t_ns + self.timing.lockout_ns
            self._reset(Screen.LOCKED, t_ns)
        else:
            left = PIN_TRIES - self.wrong_tries
            self.pin_message = f"Wrong PIN: {left} {'try' if left == 1 else 'tries'} left"

    def _on_locked(self, ev: Key | Tap) -> None:
        if _action(ev) in {"cancel", "ok", "enter"}:
            self._reset(Screen.IDLE, ev.t_ns)

    # DIRECTOR
    def _back_to_menu(self) -> None:
        self.screen, self.page, self.readj = Screen.DIRECTOR, 0, None

    def _on_director(self, ev: Key | Tap) -> list[Effect] | None:
        action = _action(ev)
        self.director_note = "" if action else self.director_note
        if action in {"resume", "escape"}:
            self._reset(Screen.IDLE, ev.t_ns)
        elif action == "lexicons":
            self.screen, self.page = Screen.LEXICONS, 0
            return [ListLexicons()]
        elif action == "rules":
            self.screen, self.page = Screen.RULES, 0
        elif action == "log":
            self.screen, self.page, self.selected = Screen.LOG, 0, ""
            return [LoadLog()]
        elif action == "readj":
            self.screen, self.readj_id = Screen.READJ_ENTRY, self.selected
        elif action == "quit":
            return [Quit()]
        return None

    def note(self, text: str) -> None:
        """A line for the director (what a choice did, or why it failed)."""
        self.director_note = text

    def _page_move(self, action: str, total: int, per_page: int) -> bool:
        pages = max(1, -(-total // per_page))
        if action in {"prev", "up"}:
            self.page = max(0, self.page - 1)
        elif action in {"next", "down"}:
            self.page = min(pages - 1, self.page + 1)
        else:
            return False
        return True

    def _on_lexicons(self, ev: Key | Tap) -> list[Effect] | None:
        action = _action(ev)
        if action in {"back", "escape"}:
            self._back_to_menu()
            return None
        if self._page_move(action, len(self.lexicon_choices), LEXICONS_PER_PAGE):
            return None
        if action == "usb":
            self.screen, self.page, self.import_choices, self.director_note = Screen.IMPORT, 0, (), ""
            return [ScanMedia()]
        if action.startswith("pick:"):
            i = int(action[5:])
            if 0 <= i < len(self.lexicon_choices) and not self.lexicon_choices[i].error:
                self._back_to_menu()
                return [ChooseLexicon(self.lexicon_choices[i].path)]
        return None

    def show_lexicons(self, choices: Sequence[LexiconChoice]) -> None:
        self.lexicon_choices = tuple(choices)

    def _to_lexicons(self) -> list[Effect]:
        self.screen, self.page, self.import_view = Screen.LEXICONS, 0, None
        return [ListLexicons()]

    # IMPORT (a USB stick's word lists) and IMPORTING (compile, then switch)
    def _on_import(self, ev: Key | Tap) -> list[Effect] | None:
        action = _action(ev)
        if action in {"back", "escape"}:
            return self._to_lexicons()
        if self._page_move(action, len(self.import_choices), LEXICONS_PER_PAGE):
            return None
        if action == "usb":  # look again (a stick plugged in since)
            self.import_choices = ()
            return [ScanMedia()]
        if action.startswith("pick:"):
            i = int(action[5:])
            if 0 <= i < len(self.import_choices):
                path = self.import_choices[i].path
                self.screen, self.director_note = Screen.IMPORTING, ""
                self.import_view = ImportView(path.rsplit("/", 1)[-1])
                return [ImportWordList(path)]
        return None

    def show_import_choices(self, choices: Sequence[LexiconChoice]) -> None:
        self.import_choices = tuple(choices)

    def _on_importing(self, ev: Key | Tap) -> list[Effect] | None:
        # While compiling, nothing leaves this screen: the result must be seen (and a half-read
        # stick must not be pulled out because the screen looked finished).
        if not self.importing and _action(ev) in {"done", "back", "escape", "enter"}:
            return self._to_lexicons()
        return None

    def show_import_progress(self, fraction: float, stage: str) -> None:
        if self.importing:
            self.import_view = self.import_view.replace(fraction=fraction, stage=stage)

    def show_import_done(self, view: ImportView, t_ns: int) -> None:
        """The compile finished (or failed); the director's 60 s start now."""
        if self.screen == Screen.IMPORTING:
            self.import_view = view.replace(done=True, fraction=1.0 if not view.error else view.fraction)
            self.last_input_ns = t_ns

    def _on_rules(self, ev: Key | Tap) -> list[Effect] | None:
        action = _action(ev)
        if action in {"back", "escape"}:
            self._back_to_menu()
        elif self._page_move(action, len(self.rules), RULES_PER_PAGE):
            return None
        elif action.startswith("rule:"):
            value = action[5:]
            if any(v == value for v, _ in self.rules):
                self._back_to_menu()
                return [ChooseRule(value)]
        return None

    def _on_log(self, ev: Key | Tap) -> list[Effect] | None:
        action = _action(ev)
        if action in {"back", "escape"}:
            self._back_to_menu()
            return None
        if self._page_move(action, len(self.log_rows), LOG_ROWS_PER_PAGE):
            return None
        if action.startswith("row:"):
            self.selected = action[4:]
        elif action == "export":
            return [ExportLog()]
        elif action == "readj" and self.selected:
            self.readj_id = self.selected
            return [Readjudicate(self.selected)]
        return None

    def show_log(self, rows: Sequence[LogRow]) -> None:
        self.log_rows = tuple(rows)

    def _on_readj_entry(self, ev: Key | Tap) -> list[Effect] | None:
        action = _action(ev)
        if action in {"back", "escape"}:
            self._back_to_menu()
        elif action == "backspace":
            self.readj_id = self.readj_id[:-1]
        elif action.startswith(("letter:", "digit:", "char:")) and len(self.readj_id) < MAX_ID_CHARS:
            self.readj_id += action.split(":", 1)[1]
        elif action in {"enter", "find", "judge"} and self.readj_id:
            return [Readjudicate(self.readj_id)]
        return None

    def show_readjudication(self, view: ReadjudicationView | None, error: str = "") -> None:
        if view is None:
            self.director_note = error
            return
        self.readj, self.director_note = view, ""
        self.screen = Screen.READJ_RESULT

    def _on_readj_result(self, ev: Key | Tap) -> None:
        if _action(ev) in {"back", "escape", "enter"}:
            self._back_to_menu()

    def show_rule(self, value: str, label: str) -> None:
        self.rule_value, self.rule_label = value, label

    def show_lexicon(self, info: LexiconInfo | None, error: str | None = None, notice: str = "") -> None:
        self.lexicon, self.lexicon_error, self.lexicon_notice = info, error, notice

    @property
    def no_lexicon(self) -> bool:
        """A lexicon was looked for and none could be opened (missing, corrupt, or gone since)."""
        return self.lexicon is None and bool(self.lexicon_error)


LEXICONS_PER_PAGE = 4
RULES_PER_PAGE = 9  # three rows of three above the pager: a tenth rule goes to the next page
LOG_ROWS_PER_PAGE = 5


def _action(ev: Key | Tap) -> str:
    """One vocabulary for keys and taps: 'letter:Q', 'digit:3', 'space', 'judge', 'escape', ..."""
    if isinstance(ev, Tap):
        return ev.target
    k = ev.key
    if len(k) == 1 and "A" <= k <= "Z":
        return f"letter:{k}"
    if len(k) == 1 and k.isdigit():
        return f"digit:{k}"
    if k in {"-", "."}:
        return f"char:{k}"
    return {"SPACE": "space", "ENTER": "enter", "BACKSPACE": "backspace", "TAB": "judge",
            "ESCAPE": "escape", "UP": "up", "DOWN": "down"}.get(k, "")
