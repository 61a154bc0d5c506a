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

`Station` owns the screen shown, the timeouts and the challenge flow; what the director's screens
hold is in four plain values beside it, each in its own module with the effects and views of its
screens: `kiosk.pin` (the PIN typed and its lockout), `kiosk.director` (the menu, lexicon, rule
and log screens), `kiosk.wordlists` (a word list imported from a USB stick) and
`kiosk.readjudication` (a logged challenge judged again, 3.10.11). The station hands each the
action on its screens and goes where it answers (`_go`). Their effects and views are imported
here too, so the app and the tests read the station's whole vocabulary from this module.
"""

from __future__ import annotations

import enum
from typing import Callable, Sequence

from rackside.judge.adjudication import MAX_LETTERS  # the longest word a challenge may hold
from rackside.kiosk import pin as pins
from rackside.kiosk.director import (ChooseLexicon, ChooseRule, DirectorMenu, ExportLog, LexiconChoice, ListLexicons,
                                     LoadLog, LogRow, Quit, Readjudicate, ScanMedia, Step)
from rackside.kiosk.pin import PinPad
from rackside.kiosk.readjudication import Readjudication, ReadjudicationView
from rackside.kiosk.wordlists import ImportView, ImportWordList, WordListImport
from rackside.values import Record

NS = 1_000_000_000
MAX_WORDS = 8
MAX_TABLE_DIGITS = 4


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
        self.pin_pad = PinPad()  # the PIN being typed and the lockout (kiosk.pin)
        self.director = DirectorMenu()  # the menu, lexicon, rule and log screens (kiosk.director)
        self.readjudication = Readjudication()  # a logged challenge judged again (kiosk.readjudication)
        self.imports = WordListImport()  # a word list from a USB stick (kiosk.wordlists)
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
        return self.screen == Screen.IMPORTING and self.imports.compiling

    def locked(self, t_ns: int) -> bool:
        return self.pin_pad.locked(t_ns)

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
            lock_until_ns = self.pin_pad.lock_until_ns
            next_second = now_ns + ((lock_until_ns - now_ns) % NS or NS)
            return min(lock_until_ns, self.last_input_ns + t.inactivity_ns, next_second)
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
        self.pin_pad = self.pin_pad.cleared()
        if screen == Screen.IDLE:
            self.verdict, self.docket = None, ""
            self.readjudication = Readjudication()
            self.director = self.director.replace(selected="", note="")

    def _to_pin(self, t_ns: int) -> None:
        self._reset(Screen.LOCKED if self.locked(t_ns) else Screen.PIN, t_ns)

    def _start(self, t_ns: int) -> None:
        self._reset(Screen.TABLE if self.mode == "runner" else Screen.COUNT, t_ns)

    # IDLE
    def _on_idle(self, ev: Key | Tap) -> None:
        if isinstance(ev, Tap) and ev.target == "director":
            self._to_pin(ev.t_ns)
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

    # PIN and LOCKED (the digits and the lockout are kiosk.pin's)
    def _on_pin(self, ev: Key | Tap) -> None:
        action = _action(ev)
        if action == "cancel":
            self._reset(Screen.IDLE, ev.t_ns)
        elif action in {"enter", "ok"}:
            self.pin_pad, found = self.pin_pad.check(self.verify_pin, ev.t_ns, self.timing.lockout_ns)
            if found == pins.OPEN:
                self._reset(Screen.DIRECTOR, ev.t_ns)
            elif found == pins.LOCKED:
                self._reset(Screen.LOCKED, ev.t_ns)
        else:
            self.pin_pad = self.pin_pad.typed(action)

    def _on_locked(self, ev: Key | Tap) -> None:
        if _action(ev) in {"cancel", "ok", "enter"}:
            self._reset(Screen.IDLE, ev.t_ns)

    # DIRECTOR, LEXICONS, RULES, LOG (kiosk.director's)
    def _go(self, step: Step, t_ns: int) -> list[Effect]:
        """Go where an action on a director's screen says (a list gone to starts at its top); its
        effects for the app."""
        to = Screen(step.to) if step.to else None
        if to == Screen.IDLE:
            self._reset(Screen.IDLE, t_ns)
        elif to is not None:
            self.screen = to
            if to in (Screen.DIRECTOR, Screen.LEXICONS, Screen.RULES, Screen.LOG):
                self.director = self.director.replace(page=0)
            if to == Screen.DIRECTOR:
                self.readjudication = self.readjudication.replace(view=None)
            elif to == Screen.IMPORT:
                self.imports = self.imports.replace(choices=(), page=0)
            elif to == Screen.IMPORTING:
                self.note("")
            elif to == Screen.READJ_ENTRY:
                self.readjudication = self.readjudication.replace(typed=self.director.selected)
        return list(step.effects)

    def _on_director(self, ev: Key | Tap) -> list[Effect]:
        self.director, step = self.director.on_menu(_action(ev))
        return self._go(step, ev.t_ns)

    def note(self, text: str) -> None:
        """A line for the director (what a choice did, or why it failed)."""
        self.director = self.director.replace(note=text)

    def _on_lexicons(self, ev: Key | Tap) -> list[Effect]:
        self.director, step = self.director.on_lexicons(_action(ev))
        return self._go(step, ev.t_ns)

    def show_lexicons(self, choices: Sequence[LexiconChoice]) -> None:
        self.director = self.director.replace(lexicon_choices=tuple(choices))

    # IMPORT (a USB stick's word lists) and IMPORTING (compile, then switch): kiosk.wordlists'
    def _on_import(self, ev: Key | Tap) -> list[Effect]:
        self.imports, step = self.imports.on_choices(_action(ev))
        return self._go(step, ev.t_ns)

    def show_import_choices(self, choices: Sequence[LexiconChoice]) -> None:
        self.imports = self.imports.replace(choices=tuple(choices))

    def _on_importing(self, ev: Key | Tap) -> list[Effect]:
        self.imports, step = self.imports.on_compile(_action(ev))
        return self._go(step, ev.t_ns)

    def show_import_progress(self, fraction: float, stage: str) -> None:
        if self.importing:
            self.imports = self.imports.progressed(fraction, stage)

    def show_import_done(self, view: ImportView, t_ns: int) -> None:
        """The compile finished (or failed); the director's 60 s start now."""
        if self.screen == Screen.IMPORTING:
            self.imports = self.imports.finished(view)
            self.last_input_ns = t_ns

    def _on_rules(self, ev: Key | Tap) -> list[Effect]:
        self.director, step = self.director.on_rules(_action(ev), self.rules)
        return self._go(step, ev.t_ns)

    def _on_log(self, ev: Key | Tap) -> list[Effect]:
        self.director, step = self.director.on_log(_action(ev))
        return self._go(step, ev.t_ns)

    def show_log(self, rows: Sequence[LogRow]) -> None:
        self.director = self.director.replace(log_rows=tuple(rows))

    # READJ_ENTRY and READJ_RESULT: kiosk.readjudication's
    def _on_readj_entry(self, ev: Key | Tap) -> list[Effect]:
        self.readjudication, step = self.readjudication.on_entry(_action(ev))
        return self._go(step, ev.t_ns)

    def show_readjudication(self, view: ReadjudicationView | None, error: str = "") -> None:
        if view is None:
            self.note(error)
            return
        self.readjudication = self.readjudication.replace(view=view)
        self.note("")
        self.screen = Screen.READJ_RESULT

    def _on_readj_result(self, ev: Key | Tap) -> list[Effect]:
        return self._go(self.readjudication.on_result(_action(ev)), ev.t_ns)

    def show_rule(self, value: str, label: str) -> None:
        self.rule_value, self.rule_label = value, label

    def show_lexicon(self, info: LexiconInfo | None, error: str | None = None, notice: str = "") -> None:
        self.lexicon, self.lexicon_error, self.lexicon_notice = info, error, notice


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
