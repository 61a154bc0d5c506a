"""The station's flow (kiosk/flow.py) driven by Hypothesis through random sequences of keys, taps,
window closes and passing time, checking after every step what the module's docstring promises:

- only the director's PIN leads to the director's screens (a Close or Escape leads to the PIN
  screen, never out), and not while five wrong PINs have it locked;
- "Quit station" is asked for only from the director's screen;
- JUDGE asks for a verdict only when the typed words match the count (3.10.9(a)(vi)), at most
  8 words of at most 15 letters;
- the verdict shows the play as a whole, never per word (3.10.7(a)(ii), 3.10.7(b)); it stays
  10 s and ignores input for its first 0.5 s (Escape excepted: the director may always come);
- a player screen left alone returns to idle after its limit (15 s; 60 s once words are typed),
  forgetting the words; a director screen after 60 s;
- `next_deadline_ns` is honest: a Tick before it changes nothing that is shown;
- a word list being imported is never abandoned: no input or timeout leaves the import screen
  until the compile has reported.

The app's side is modelled: a Judge effect is answered with `show_verdict`, as KioskApp does.
"""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from rackside.kiosk.flow import (DIRECTOR_SCREENS, MAX_LETTERS, MAX_WORDS, NS, PLAYER_SCREENS, Activity, Close,
                                 ImportView, ImportWordList, Judge, Key, LexiconChoice, LogRow, Quit, Screen, Station,
                                 Tap, Tick, Verdict)
from rackside.kiosk.layout import Geometry, buttons

PIN = "2468"
GEO = Geometry.for_display(800, 480, 155, 86)
KEYS = [*"ABCQIZ0123456789", "SPACE", "ENTER", "BACKSPACE", "TAB", "ESCAPE", "UP", "DOWN", "-", "."]


def view(s: Station, t_ns: int) -> tuple:
    return (s.screen, s.count, tuple(s.words), s.message, s.table, s.pin_pad.digits, s.verdict, s.director.page, s.readjudication.typed,
            s.countdown_s(t_ns))


class StationMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.st = Station(mode="self", verify_pin=lambda pin: pin == PIN,
                          rules=(("single", "Single"), ("void", "Void")))
        self.st.show_lexicons((LexiconChoice("/x/a.rlex", "A"), LexiconChoice("/x/b.rlex", "B", "bad")))
        self.st.show_log((LogRow("id1", "t", "self", None, "L", ("QI",), True, (True,)),))
        self.t = 1_000 * NS
        self.drawn_t = self.t
        self.pin_ok_since_director = False  # a correct PIN was entered since the last non-director screen

    # -- stepping -----------------------------------------------------------------------------

    def feed(self, event) -> None:
        s = self.st
        # what the screen showed as last drawn (the app redraws after every step)
        before, before_view = s.screen, view(s, self.drawn_t)
        deadline = s.next_deadline_ns(self.drawn_t)
        typed_pin = s.pin_pad.digits if s.screen == Screen.PIN else None
        locked = s.locked(event.t_ns)
        in_ignore = s.screen == Screen.RESULT and event.t_ns - s.verdict_ns < s.timing.touch_ignore_ns
        effects = s.handle(event)
        self.drawn_t = event.t_ns
        after = s.screen
        if isinstance(event, Tick):
            assert not effects
            if deadline is None or event.t_ns < deadline:
                assert view(s, event.t_ns) == before_view, f"a Tick before the deadline changed {before} -> {after}"
        if after in DIRECTOR_SCREENS and before not in DIRECTOR_SCREENS:
            # the only door: the PIN screen, the right PIN, no lockout
            assert before == Screen.PIN and typed_pin == PIN and not locked
        if in_ignore and not (isinstance(event, Key) and event.key == "ESCAPE") and not isinstance(event, Close):
            assert after == Screen.RESULT, "input in the verdict's first 0.5 s was not ignored"
        if isinstance(event, Close):
            assert after in (Screen.PIN, Screen.LOCKED)
        for eff in effects:
            if isinstance(eff, Quit):
                assert before == Screen.DIRECTOR
            if isinstance(eff, ImportWordList):
                assert before == Screen.IMPORT and after == Screen.IMPORTING and s.importing
            if isinstance(eff, Judge):
                assert before == Screen.ENTRY
                assert len(eff.words) == s.count and 1 <= s.count <= MAX_WORDS
                assert all(1 <= len(w) <= MAX_LETTERS for w in eff.words)
                s.show_verdict(Verdict(True, eff.words, "L", "no penalty", "id", eff.kind), event.t_ns)
                assert not hasattr(s.verdict, "per_word")

    # -- rules --------------------------------------------------------------------------------

    @rule(key=st.sampled_from(KEYS))
    def key(self, key: str) -> None:
        self.feed(Key(key, self.t))

    @rule(data=st.data())
    def tap_a_button(self, data) -> None:
        targets = [b.target for b in buttons(self.st, GEO)] or ["dismiss"]
        self.feed(Tap(data.draw(st.sampled_from(targets)), self.t))

    @rule(name=st.sampled_from(["start", "director", "quit", "judge", "pick:0", "pick:1", "row:id1", "cancel"]))
    def tap_anything(self, name: str) -> None:
        self.feed(Tap(name, self.t))

    @rule()
    def close(self) -> None:
        self.feed(Close(self.t))

    @rule()
    def touch_off_the_keys(self) -> None:
        self.feed(Activity(self.t))

    @rule(right=st.booleans())
    @precondition(lambda self: self.st.screen == Screen.PIN)
    def enter_pin(self, right: bool) -> None:
        for d in PIN if right else "1357":
            self.feed(Key(d, self.t))
        self.feed(Key("ENTER", self.t))

    @rule(word=st.text(alphabet="QIZAXJ", min_size=1, max_size=17))
    @precondition(lambda self: self.st.screen == Screen.ENTRY)
    def type_word(self, word: str) -> None:
        for ch in word:
            self.feed(Key(ch, self.t))
        self.feed(Key("SPACE", self.t))

    @rule()
    @precondition(lambda self: self.st.screen == Screen.IDLE)
    def director_comes(self) -> None:
        self.feed(Tap("director", self.t))
        for d in PIN:
            self.feed(Key(d, self.t))
        self.feed(Key("ENTER", self.t))

    @rule()
    @precondition(lambda self: self.st.screen == Screen.DIRECTOR)
    def usb_stick(self) -> None:
        self.feed(Tap("lexicons", self.t))
        self.feed(Tap("usb", self.t))

    @rule(found=st.integers(0, 6))
    @precondition(lambda self: self.st.screen == Screen.IMPORT)
    def media_listed(self, found: int) -> None:
        self.st.show_import_choices([LexiconChoice(f"/media/s/{i}.txt", f"{i}.txt") for i in range(found)])

    @rule(i=st.integers(0, 5))
    @precondition(lambda self: self.st.screen == Screen.IMPORT and self.st.imports.choices)
    def pick_a_list(self, i: int) -> None:
        self.feed(Tap(f"pick:{i}", self.t))

    @rule(fraction=st.floats(0, 1), ok=st.booleans())
    @precondition(lambda self: self.st.importing)
    def compile_reports(self, fraction: float, ok: bool) -> None:
        s = self.st
        s.show_import_progress(fraction, "Compiling")
        assert s.importing and s.imports.view.fraction == fraction
        if ok:
            s.show_import_done(ImportView("x.txt", name="X", word_count=2, checksum="abcd1234"), self.t)
            assert s.imports.view.done and not s.importing and s.last_input_ns == self.t

    @rule(seconds=st.sampled_from([0.1, 0.49, 0.5, 1, 9.99, 10, 14.99, 15, 49.99, 50, 59.99, 60, 61]))
    def wait(self, seconds: float) -> None:
        s = self.st
        start_screen, last, verdict_ns = s.screen, s.last_input_ns, s.verdict_ns
        limit = s.idle_limit_ns() if s.screen in PLAYER_SCREENS else None
        self.t += round(seconds * NS)
        self.feed(Tick(self.t))
        if start_screen == Screen.RESULT:
            held = self.t - verdict_ns
            assert (s.screen == Screen.RESULT) == (held < s.timing.result_hold_ns)
        elif limit is not None:
            gone = self.t - last >= limit
            assert (s.screen == Screen.IDLE) == gone, (start_screen, seconds, limit)
            if gone:
                assert s.typed_words == () and s.count == 0
        elif start_screen == Screen.IMPORTING and s.importing:
            assert s.screen == Screen.IMPORTING  # a compile is never abandoned by a timeout
        elif start_screen in DIRECTOR_SCREENS:
            assert (s.screen == Screen.IDLE) == (self.t - last >= s.timing.director_idle_ns)

    # -- invariants ---------------------------------------------------------------------------

    @invariant()
    def words_within_limits(self) -> None:
        s = self.st
        assert len(s.words) <= MAX_WORDS  # (a lowered count may leave extra words to delete)
        assert all(len(w) <= MAX_LETTERS for w in s.words)
        assert len(s.typed_words) <= MAX_WORDS

    @invariant()
    def countdown_only_in_the_last_ten_seconds(self) -> None:
        s = self.st
        secs = s.countdown_s(self.t)
        if secs is not None:
            assert s.screen in (Screen.ENTRY, Screen.COUNT) and 1 <= secs <= 10

    @invariant()
    def verdict_only_on_the_result(self) -> None:
        s = self.st
        assert (s.verdict is not None) == (s.screen == Screen.RESULT) or s.screen in DIRECTOR_SCREENS | {
            Screen.PIN, Screen.LOCKED}


StationMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestStationFlow = StationMachine.TestCase
