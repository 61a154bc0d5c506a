"""The challenge station end to end: the real pygame event queue under SDL's dummy driver, a fake
clock, and small compiled lexicons in a temporary folder (the rig: tests/support/kiosk_rig.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pygame

from rackside.kiosk.flow import NS

from support.kiosk_rig import (
    PIN,
    PIN_HASH,
    WORDS,
    centre_of,
    enter_pin,
    make_app,
    make_lexicon,
    post_finger,
    post_finger_tap,
    post_keys,
    post_mouse_click,
    records,
    runner_judge,
    tap,
    type_text,
    wait_for_dockets,
)


# =============================================================================================
# The self-adjudication flow (3.10.9)

import csv
import json
import threading
import time

import pytest

from rackside.kiosk import flow
from rackside.judge.challenge_log import ChallengeLog
from rackside.kiosk.docket import Docket, encode_docket
from rackside.kiosk.app import QUIT_STATUS
from rackside.kiosk.flow import Screen


def test_keyboard_challenge_acceptable(app, tmp_path):
    post_keys("2")
    app.step()
    assert app.station.screen == Screen.ENTRY and app.station.count == 2
    type_text("qi za")
    post_keys("TAB")
    app.step()
    st = app.station
    assert st.screen == Screen.RESULT
    assert st.verdict.acceptable and st.verdict.words == ("QI", "ZA")
    assert "10 points" in st.verdict.guidance  # 5 per word, 2 words (3.10.15(b)(ii))
    assert not hasattr(st.verdict, "per_word")  # players never see per-word results (3.10.7(b))
    [rec] = records(tmp_path)
    assert rec.words == ("QI", "ZA") and rec.acceptable and rec.kind == "self" and rec.id == st.verdict.challenge_id


def test_one_bad_word_makes_the_play_unacceptable_without_saying_which(app, tmp_path):
    post_keys("3")
    type_text("qi xyz cat")
    post_keys("TAB")
    app.step()
    assert app.station.screen == Screen.RESULT and not app.station.verdict.acceptable
    assert "loses the turn" in app.station.verdict.guidance
    assert records(tmp_path)[0].per_word == (True, False, True)  # only in the director's log


def test_judge_works_only_when_the_word_count_matches(app, tmp_path):
    post_keys("3")
    type_text("qi za")
    post_keys("TAB")
    app.step()
    assert app.station.screen == Screen.ENTRY
    assert "3 words: 2 typed" in app.station.message
    assert records(tmp_path) == []
    # Space at the last word does not open a ninth slot; Backspace walks back into the previous word.
    type_text(" ca")
    post_keys("BACKSPACE", "BACKSPACE", "BACKSPACE")
    app.step()
    assert app.station.words == ["QI", "ZA"]


def test_engine_refusal_is_shown_and_words_kept(app, tmp_path):
    post_keys("2")
    type_text("q za")
    post_keys("TAB")
    app.step()
    assert app.station.screen == Screen.ENTRY
    assert app.station.message  # the engine's own words, e.g. a one-letter word
    assert app.station.words == ["Q", "ZA"]
    assert records(tmp_path) == []


def test_verdict_is_logged_and_fsynced_before_it_is_shown(app, monkeypatch):
    seen = []
    real = ChallengeLog.record

    def spy(self, *a, **kw):
        seen.append(app.station.screen)
        rec = real(self, *a, **kw)
        seen.append(self.find(rec.id) is not None)  # readable from disk already
        return rec

    monkeypatch.setattr(ChallengeLog, "record", spy)
    post_keys("1")
    type_text("qi")
    post_keys("TAB")
    app.step()
    assert seen == [Screen.ENTRY, True] and app.station.screen == Screen.RESULT


def test_touch_flow_one_tap_is_one_press(app):
    tap(app, "start")
    assert app.station.screen == Screen.COUNT
    tap(app, "count:1", "letter:J", "letter:I", "letter:N", "letter:X")
    assert app.station.words == ["JINX"]  # SDL's mouse copies of the touches were ignored
    assert app.station.ready_to_judge
    tap(app, "judge")
    assert app.station.screen == Screen.RESULT and app.station.verdict.acceptable


def test_real_mouse_clicks_work(app):
    post_mouse_click(app, "start")
    app.step()
    post_mouse_click(app, "count:2")
    app.step()
    assert app.station.screen == Screen.ENTRY and app.station.count == 2


def test_tap_counts_only_when_released_on_the_same_key(app):
    tap(app, "start", "count:1")
    w, h = app.surface.get_size()
    qx, qy = centre_of(app, "letter:Q")
    px, py = centre_of(app, "letter:P")
    pygame.event.post(pygame.event.Event(pygame.FINGERDOWN, x=qx / w, y=qy / h, touch_id=1, finger_id=1))
    pygame.event.post(pygame.event.Event(pygame.FINGERUP, x=px / w, y=py / h, touch_id=1, finger_id=1))
    app.step()
    assert app.station.words == [""]


def test_a_press_whose_release_never_came_does_not_leave_the_screen_deaf_to_touch(app):
    # A FINGERUP can go missing (input dropped while a docket printed, a touch controller reset).
    # SDL numbers each new contact with a new finger id, so waiting for that finger's release
    # ignored every later tap for good: a touch-only station would stop answering.
    tap(app, "start", "count:1")
    w, h = app.surface.get_size()
    qx, qy = centre_of(app, "letter:Q")
    pygame.event.post(pygame.event.Event(pygame.FINGERDOWN, x=qx / w, y=qy / h, touch_id=1, finger_id=40))
    app.step()  # ... and its FINGERUP is lost
    px, py = centre_of(app, "letter:P")
    for kind in (pygame.FINGERDOWN, pygame.FINGERUP):
        pygame.event.post(pygame.event.Event(kind, x=px / w, y=py / h, touch_id=1, finger_id=41))
    app.step()
    assert app.station.words == ["P"]


def test_finger_positions_scale_with_the_window(tmp_path, monkeypatch):
    big, _ = make_app(tmp_path, monkeypatch, size=(1920, 1080))
    try:
        tap(big, "start", "count:1", "letter:Z", "letter:A")
        assert big.station.words == ["ZA"]
    finally:
        big.shutdown()


def test_result_ignores_touches_for_half_a_second_then_any_touch_returns_to_idle(app):
    post_keys("1")
    type_text("qi")
    post_keys("TAB")
    app.step()
    assert app.station.screen == Screen.RESULT
    app.clock.advance(0.4)
    post_finger_tap(app, pos=(400, 240))
    app.step()
    assert app.station.screen == Screen.RESULT
    app.clock.advance(0.2)
    post_finger_tap(app, pos=(400, 240))
    app.step()
    assert app.station.screen == Screen.IDLE and app.station.verdict is None


def test_a_touch_that_began_in_the_first_half_second_does_not_dismiss_the_result(app):
    # Issue 4: the result "ignores touches for the first 0.5 s". A second tap on JUDGE that goes
    # down at 0.2 s and lifts at 0.6 s is a touch in the first 0.5 s: it must not clear the verdict.
    post_keys("1")
    type_text("qi")
    post_keys("TAB")
    app.step()
    assert app.station.screen == Screen.RESULT
    app.clock.advance(0.2)
    post_finger(pygame.FINGERDOWN)
    app.step()
    app.clock.advance(0.4)
    post_finger(pygame.FINGERUP)
    app.step()
    assert app.station.screen == Screen.RESULT
    # A fresh touch after the window still dismisses it.
    app.clock.advance(0.1)
    post_finger(pygame.FINGERDOWN)
    post_finger(pygame.FINGERUP)
    app.step()
    assert app.station.screen == Screen.IDLE


def test_result_stays_ten_seconds(app):
    post_keys("1")
    type_text("qi")
    post_keys("TAB")
    app.step()
    app.clock.advance(9.99)
    app.step()
    assert app.station.screen == Screen.RESULT
    app.clock.advance(0.01)
    app.step()
    assert app.station.screen == Screen.IDLE


def test_fifteen_seconds_without_input_leaves_the_count_screen(app):
    tap(app, "start")
    app.clock.advance(14.9)
    app.step()
    assert app.station.screen == Screen.COUNT
    app.clock.advance(0.1)
    app.step()
    assert app.station.screen == Screen.IDLE


def test_entry_keeps_a_challenge_sixty_seconds_with_a_countdown(app):
    """Issue 10 item 8: the words stay while anyone types or checks; 60 s without input, with a
    countdown on screen for the last 10 s, returns to idle."""
    post_keys("2")
    type_text("qi z")
    app.step()
    app.clock.advance(49.9)
    app.step()
    st = app.station
    assert st.screen == Screen.ENTRY and st.words == ["QI", "Z"] and st.countdown_s(app.clock()) is None
    app.clock.advance(0.1)  # 50 s: the last 10 s are counted down, redrawn each second
    assert app.station.next_deadline_ns(app.clock() - 1) == app.clock()
    frames = app.frames
    app.step()
    assert st.countdown_s(app.clock()) == 10 and app.frames == frames + 1
    app.clock.advance(1)
    app.step()
    assert st.countdown_s(app.clock()) == 9 and app.frames == frames + 2
    post_keys("A")  # any key restarts the 60 s
    app.step()
    assert st.words == ["QI", "ZA"] and st.countdown_s(app.clock()) is None
    app.clock.advance(59.9)
    app.step()
    assert st.screen == Screen.ENTRY and st.countdown_s(app.clock()) == 1
    app.clock.advance(0.1)
    app.step()
    assert st.screen == Screen.IDLE and st.typed_words == ()


def test_a_touch_anywhere_restarts_the_entry_countdown(app):
    post_keys("1")
    type_text("qi")
    app.step()
    app.clock.advance(55)
    app.step()
    assert app.station.countdown_s(app.clock()) == 5
    post_finger_tap(app, pos=(app.geo.rect(400, 200, 0, 0).x, app.geo.rect(0, 200, 0, 0).y))  # no key there
    app.step()
    assert app.station.countdown_s(app.clock()) is None and app.station.words == ["QI"]
    post_keys("F4")  # a key that means nothing still says someone is there
    app.clock.advance(55)
    app.step()
    assert app.station.countdown_s(app.clock()) is None
    app.clock.advance(59.9)
    app.step()
    assert app.station.screen == Screen.ENTRY


def test_result_timings_are_unchanged(app):
    judge_keep(app, "qi")
    app.clock.advance(0.4)
    post_finger_tap(app, pos=(10, 10))
    app.step()
    assert app.station.screen == Screen.RESULT  # the first 0.5 s ignores touches
    app.clock.advance(9.5)
    app.step()
    assert app.station.screen == Screen.RESULT
    app.clock.advance(0.1)
    app.step()
    assert app.station.screen == Screen.IDLE  # 10 s hold


def test_deadline_matches_the_next_timeout(app):
    assert app.station.next_deadline_ns(app.clock()) is None  # idle: sleep until input
    post_keys("1")
    app.step()
    assert app.station.next_deadline_ns(app.clock()) == app.clock() + 50 * flow.NS  # the countdown starts
    post_keys("ESCAPE")
    app.step()
    assert app.station.next_deadline_ns(app.clock()) == app.clock() + 15 * flow.NS


def test_sends_only_what_changed_to_the_display(tmp_path, monkeypatch):
    """Issue 11 item 4: a typed letter or a countdown second updates a few small areas of a
    1920x1080 window; another screen goes out whole."""
    a, clock = make_app(tmp_path, monkeypatch, size=(1920, 1080))
    sent = []
    monkeypatch.setattr(pygame.display, "flip", lambda: sent.append("whole"))
    monkeypatch.setattr(pygame.display, "update", lambda areas: sent.append(list(areas)))
    try:
        post_keys("3")
        a.step()
        assert sent == ["whole"]  # idle -> entry
        for ch in "QIZ":
            sent.clear()
            post_keys(ch)
            a.step()
            [areas] = sent
            assert areas and sum(w * h for _, _, w, h in areas) < 0.1 * 1920 * 1080
        sent.clear()
        clock.advance(51)  # the countdown appears: only the prompt line changes
        a.step()
        [areas] = sent
        assert sum(w * h for _, _, w, h in areas) < 0.1 * 1920 * 1080
        assert all(y < 1080 * 0.1 for _, y, _, _ in areas)
        sent.clear()
        post_keys("TAB")  # JUDGE refused: 1 of 3 typed; the message line changes
        a.step()
        sent.clear()
        post_keys("ESCAPE")
        a.step()
        assert sent == ["whole"]
    finally:
        a.shutdown()


def test_every_changed_pixel_is_sent(tmp_path, monkeypatch):
    """Whatever changed between two frames lies inside the areas sent (compared pixel by pixel)."""
    a, clock = make_app(tmp_path, monkeypatch)
    sent = []
    monkeypatch.setattr(pygame.display, "flip", lambda: sent.append(None))
    monkeypatch.setattr(pygame.display, "update", lambda areas: sent.append(list(areas)))
    checked = [0]

    def check(keys=(), taps=(), advance=0.0):
        before = a.surface.copy()
        sent.clear()
        post_keys(*keys)
        for t in taps:
            post_finger_tap(a, t)
        clock.advance(advance)
        a.step()
        if not sent or sent[-1] is None:
            return
        w, h = a.surface.get_size()
        changed = pygame.mask.Mask((w, h))
        for one, other in ((a.surface, before), (before, a.surface)):
            d = one.copy()
            d.blit(other, (0, 0), special_flags=pygame.BLEND_RGB_SUB)
            same = pygame.mask.from_threshold(d, (0, 0, 0, 255), (1, 1, 1, 255))
            same.invert()
            changed.draw(same, (0, 0))
        outside = pygame.mask.Mask((w, h), fill=True)
        for x, y, aw, ah in sent[-1]:
            outside.erase(pygame.mask.Mask((aw, ah), fill=True), (x, y))
        assert changed.overlap_area(outside, (0, 0)) == 0, a.station.screen
        checked[0] += 1

    try:
        check(keys=["3"])
        for ch in "QUIXOTIC":
            check(keys=[ch])
        check(keys=["SPACE"])
        check(keys=["J", "O"])
        check(keys=["BACKSPACE", "BACKSPACE", "BACKSPACE"])
        check(keys=["TAB"])  # refused: the message
        check(advance=50)
        check(advance=1)
        check(keys=["A"])
        check(taps=["count"])
        check(keys=["ESCAPE"])
        for d in "246":
            check(keys=[d])
        assert checked[0] >= 15
    finally:
        a.shutdown()


def test_redraws_only_when_something_changed(app):
    frames = app.frames
    for _ in range(5):
        app.clock.advance(1)
        app.step()
    assert app.frames == frames
    post_keys("1")
    app.step()
    assert app.frames == frames + 1


@pytest.mark.parametrize("how", ["escape", "quit", "alt-f4", "windowclose"])
def test_no_way_out_but_the_pin(app, how):
    post_keys("2")
    type_text("qi")
    if how == "escape":
        post_keys("ESCAPE")
    elif how == "quit":
        pygame.event.post(pygame.event.Event(pygame.QUIT))
    elif how == "windowclose":
        pygame.event.post(pygame.event.Event(pygame.WINDOWCLOSE))
    else:
        post_keys("F4", mod=pygame.KMOD_LALT)
    app.step()
    assert app.running and app.station.screen == Screen.PIN
    assert app.station.typed_words == ()  # the challenge in progress is forgotten


def test_pin_lockout_after_five_wrong_tries(app):
    post_keys("ESCAPE")
    app.step()
    for i in range(4):
        enter_pin(app, "1111")
        assert app.station.screen == Screen.PIN
        assert f"{4 - i} tr" in app.station.pin_message
    enter_pin(app, "1111")
    assert app.station.screen == Screen.LOCKED
    # The right PIN does not help during the lockout, whichever way the PIN screen is reached.
    app.clock.advance(30)
    post_keys("ESCAPE")
    app.step()
    assert app.station.screen == Screen.LOCKED
    app.clock.advance(29.9)
    post_keys("ESCAPE")
    app.step()
    assert app.station.screen == Screen.LOCKED
    app.clock.advance(0.1)
    app.step()
    assert app.station.screen == Screen.IDLE
    post_keys("ESCAPE")
    app.step()
    enter_pin(app, PIN)
    assert app.station.screen == Screen.DIRECTOR


def test_pin_entry_by_touch(app):
    tap(app, "director")
    assert app.station.screen == Screen.PIN
    tap(app, *(f"digit:{d}" for d in PIN), "ok")
    assert app.station.screen == Screen.DIRECTOR


def test_locked_countdown_wakes_each_second(app):
    post_keys("ESCAPE")
    app.step()
    for _ in range(5):
        enter_pin(app, "0000")
    now = app.clock()
    assert app.station.next_deadline_ns(now) == now + flow.NS
    frames = app.frames
    app.clock.advance(1)
    app.step()
    assert app.frames == frames + 1  # "Try again in 59 s"


# =============================================================================================
# Director mode


@pytest.fixture
def director(app):
    post_keys("ESCAPE")
    app.step()
    enter_pin(app, PIN)
    assert app.station.screen == Screen.DIRECTOR
    return app


def judge(app, words: str):
    post_keys(str(len(words.split())))
    type_text(words)
    post_keys("TAB")
    app.step()
    v = app.station.verdict
    app.clock.advance(11)
    app.step()
    return v


def test_a_rule_change_keeps_a_lexicon_chosen_since_the_station_started(director, tmp_path):
    """`rackside lexicon use` may write the settings while the station runs: changing the rule on
    the station changes only the rule."""
    from rackside.judge.settings import load_settings, save_settings

    other = make_lexicon(tmp_path / "lexicons", "OTHER", ["QI", "ZA"])
    settings = load_settings(tmp_path / "station.json")
    settings.lexicon_path = other
    save_settings(settings, tmp_path / "station.json")
    tap(director, "rules", "rule:single")
    saved = json.loads((tmp_path / "station.json").read_text())
    assert saved["challenge_rule"] == "single"
    assert saved["lexicon_path"] == str(other)


def test_director_chooses_the_rule(director, tmp_path):
    tap(director, "rules", "rule:single")
    assert director.station.screen == Screen.DIRECTOR
    assert json.loads((tmp_path / "station.json").read_text())["challenge_rule"] == "single"
    tap(director, "resume")
    v = judge(director, "qi")
    assert "No penalty" in v.guidance


def test_director_chooses_the_lexicon(director, tmp_path):
    make_lexicon(tmp_path / "lexicons", "BIGGER", WORDS + ["ZZZ"])
    tap(director, "lexicons")
    labels = [c.label for c in director.station.lexicon_choices]
    assert len(labels) == 2 and labels[0].startswith("BIGGER · 7 words")
    tap(director, "pick:0")
    assert director.lexicon.name == "BIGGER" and director.station.lexicon.word_count == 7
    assert json.loads((tmp_path / "station.json").read_text())["lexicon_path"].endswith("bigger.rlex")
    tap(director, "resume")
    assert judge(director, "zzz").acceptable


def test_corrupt_lexicon_is_listed_but_not_chosen(director, tmp_path):
    (tmp_path / "lexicons" / "broken.rlex").write_bytes(b"not a lexicon")
    tap(director, "lexicons")
    broken = [c for c in director.station.lexicon_choices if c.error]
    assert len(broken) == 1
    i = director.station.lexicon_choices.index(broken[0])
    tap(director, f"pick:{i}")
    assert director.station.screen == Screen.LEXICONS and director.lexicon.name == "TINY"


def test_log_view_export_and_readjudication(director, tmp_path):
    tap(director, "resume")
    first = judge(director, "qi xyz")
    second = judge(director, "cat")
    post_keys("ESCAPE")
    director.step()
    enter_pin(director, PIN)
    tap(director, "log")
    rows = director.station.log_rows
    assert [r.challenge_id for r in rows] == [second.challenge_id, first.challenge_id]  # newest first
    assert rows[1].per_word == (True, False)  # per-word results: only here
    tap(director, "export")
    [csv_file] = (tmp_path / "exports").glob("*.csv")
    assert csv_file.stat().st_mode & 0o777 == 0o600  # per-word results: the director's eyes only
    lines = list(csv.reader(csv_file.open()))
    assert len(lines) == 3 and "Exported 2 challenges" in director.station.director_note
    tap(director, f"row:{first.challenge_id}", "readj")
    assert director.station.screen == Screen.READJ_RESULT
    assert director.station.readj.now_per_word == (True, False) and not director.station.readj.differs


def test_readjudication_with_an_unreadable_log_is_reported_not_a_crash(app, tmp_path):
    # Issue 4: the only way out of the kiosk is director -> quit. A log that cannot be read (here a
    # folder where the file should be; on a Pi an I/O error on a failing card) must be reported on
    # the director's screen, as the log view and the export already do, not end the program.
    post_keys("ESCAPE")
    app.step()
    enter_pin(app, PIN)
    assert app.station.screen == Screen.DIRECTOR
    tap(app, "readj")
    (tmp_path / "log.jsonl").mkdir()
    type_text("X1")
    post_keys("ENTER")
    app.step()
    assert app.running
    assert app.station.screen == Screen.READJ_ENTRY
    assert "Cannot read the log" in app.station.director_note


def test_readjudication_screen_does_not_show_which_word_failed(app, tmp_path):
    # 3.10.7(b) and issue 4: the director's log view (and its export) is "the only place per-word
    # results appear". A re-adjudication is asked for by a player (3.10.11(a)) and is often done
    # in front of both players, so its screen shows the verdicts, never a tick or cross per word.
    from rackside.kiosk.screens import GREEN_TEXT, RED_TEXT

    post_keys("2")
    type_text("qi xyz")
    post_keys("TAB")
    app.step()
    app.clock.advance(11)
    app.step()
    post_keys("ESCAPE")
    app.step()
    enter_pin(app, PIN)
    [row_id] = [r.id for r in records(tmp_path)]
    tap(app, "log", f"row:{row_id}", "readj")
    assert app.station.screen == Screen.READJ_RESULT
    app.render(force=True)
    surface = app.surface
    w = surface.get_width()
    # The words line of the 800x480 design (y 160-215): nothing in the per-word colours.
    coloured = {tuple(surface.get_at((x, y))[:3]) for x in range(w) for y in range(160, 216)}
    assert GREEN_TEXT not in coloured and RED_TEXT not in coloured


def test_readjudicate_by_typed_id(director, tmp_path):
    tap(director, "resume")
    v = judge(director, "jinx")
    post_keys("ESCAPE")
    director.step()
    enter_pin(director, PIN)
    tap(director, "readj")
    assert director.station.screen == Screen.READJ_ENTRY
    for ch in v.challenge_id.upper():
        post_keys({"-": "-", ".": "."}.get(ch, ch)) if ch not in "-." else pygame.event.post(
            pygame.event.Event(pygame.KEYDOWN, key=pygame.K_MINUS if ch == "-" else pygame.K_PERIOD, mod=0))
    post_keys("ENTER")
    director.step()
    assert director.station.screen == Screen.READJ_RESULT
    assert director.station.readj.row.challenge_id == v.challenge_id
    tap(director, "back", "readj")
    tap(director, "digit:9", "find")
    assert director.station.screen == Screen.READJ_ENTRY and "No challenge" in director.station.director_note


def usb_stick(tmp_path) -> Path:
    """A stick as udisks mounts it, with one word list (and things that are not word lists)."""
    stick = tmp_path / "media" / "director" / "HALL-USB"
    (stick / "lists").mkdir(parents=True)
    lines = ["# club list", "qi", "za", "ZA", "cat", "dog", "jinx", "zzz", "x", "ABCDEFGHIJKLMNOPQ", "no-way"]
    (stick / "lists" / "club26.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (stick / ".hidden.txt").write_text("QI\n")
    (stick / "readme.md").write_text("not a list\n")
    return tmp_path / "media"


def import_from(director, media: Path, run_media: Path | None = None) -> None:
    director.paths.media = (media, run_media or media.parent / "run-media")
    tap(director, "lexicons", "usb")
    assert director.station.screen == Screen.IMPORT


def finish_import(app) -> None:
    if app.effects.importing is not None:  # (a small list may be done by the tap's own step)
        app.effects.importing.join(10)
    app.step()


def test_import_a_word_list_from_a_usb_stick(director, tmp_path):
    """Issue 10 item 5: list, compile with a progress bar, show what it became, switch to it."""
    import_from(director, usb_stick(tmp_path))
    st = director.station
    assert [c.path.rsplit("/", 1)[-1] for c in st.import_choices] == ["club26.txt"]
    tap(director, "pick:0")
    assert st.screen == Screen.IMPORTING
    finish_import(director)
    v = st.import_view
    assert v.done and not v.error and v.name == "CLUB26" and v.word_count == 6
    assert v.checksum == director.lexicon.short_checksum and len(v.checksum) == 8
    assert v.skipped[0] == "Skipped 4 lines:" and any(line.startswith("too long: 1") for line in v.skipped)
    assert any("duplicate: 1" in line for line in v.skipped) and any("not letters: 1" in line for line in v.skipped)
    assert director.lexicon.name == "CLUB26" and "ZZZ" in director.lexicon
    from rackside.judge.settings import load_settings
    assert load_settings(tmp_path / "station.json").lexicon_path == tmp_path / "lexicons" / "club26.rlex"
    assert "Now judging with CLUB26" in st.director_note
    director.render(force=True)
    tap(director, "done")
    assert st.screen == Screen.LEXICONS and any(c.label.startswith("CLUB26 ") for c in st.lexicon_choices)


def test_the_ui_never_waits_for_the_compile(director, tmp_path, monkeypatch):
    from rackside.judge import lexicon as lexicon_module

    release, entered = threading.Event(), threading.Event()
    real = lexicon_module.compile_bytes

    def slow_compile(*a, **kw):
        entered.set()
        assert release.wait(10)
        return real(*a, **kw)

    monkeypatch.setattr(lexicon_module, "compile_bytes", slow_compile)
    import_from(director, usb_stick(tmp_path))
    tap(director, "pick:0")
    assert entered.wait(10)
    director.clock.advance(0.1)
    director.step()  # returns at once: the compile is in its thread
    st = director.station
    assert st.screen == Screen.IMPORTING and st.import_view.stage == "Compiling" and 0.5 < st.import_view.fraction < 1
    assert "Compiling… 60 %" in texts_drawn(director)  # the bar and its stage are on screen
    assert director._background_deadline(director.clock()) == director.clock() + 100_000_000
    director.clock.advance(120)  # the director's 60 s timeout waits for the compile
    director.step()
    assert st.screen == Screen.IMPORTING
    post_keys("ESCAPE")
    director.step()
    assert st.screen == Screen.IMPORTING  # nothing leaves it half-done
    release.set()
    finish_import(director)
    assert st.import_view.done and director.lexicon.name == "CLUB26"
    director.clock.advance(60)  # then the director's timeout applies again
    director.step()
    assert st.screen == Screen.IDLE


def test_a_bad_word_list_is_refused_and_the_lexicon_kept(director, tmp_path):
    media = tmp_path / "media"
    (media / "STICK").mkdir(parents=True)
    (media / "STICK" / "utf16.txt").write_bytes("QI\nZA\n".encode("utf-16-le"))  # no BOM
    import_from(director, media)
    tap(director, "pick:0")
    finish_import(director)
    v = director.station.import_view
    assert v.done and "UTF-16" in v.error and director.lexicon.name == "TINY"
    director.render(force=True)
    assert not (tmp_path / "lexicons" / "utf16.rlex").exists()


def test_no_stick_says_so(director, tmp_path):
    import_from(director, tmp_path / "nothing-mounted")
    assert director.station.import_choices == ()
    assert "No word lists" in " ".join(texts_drawn(director))


def test_director_quits(director):
    tap(director, "quit")
    assert not director.running and director.exit_status == QUIT_STATUS


def test_quit_station_stays_stopped_under_systemd():
    """Issue 10 item 2: Restart=always brought a quit station back after 2 s. The director's quit
    exits with a status systemd is told not to restart on; a crash still restarts."""
    import configparser

    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.read(Path(__file__).resolve().parent.parent / "deploy" / "rackside-kiosk.service")
    assert unit["Service"]["Restart"] in {"always", "on-failure"}
    assert str(QUIT_STATUS) in unit["Service"]["RestartPreventExitStatus"].split()
    assert QUIT_STATUS not in {0, 1, 2}  # not a normal stop, a crash or a usage error


def test_director_quit_is_the_process_exit_status(tmp_path, monkeypatch):
    """The whole command: PIN, Quit station, and `rackside kiosk` exits QUIT_STATUS."""
    import subprocess
    import sys

    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{PIN_HASH}"\n[display]\nfullscreen = false\n'
                   f'[log]\npath = "{tmp_path / "log.jsonl"}"\n', encoding="utf-8")
    code = ("import pygame, sys\n"
            "from rackside.cli import main\n"
            "from rackside.kiosk import app as A\n"
            "orig = A.KioskApp.start\n"
            "def start(self):\n"
            "    orig(self)\n"
            "    for k in ['escape'] + list('" + PIN + "') + ['return']:\n"
            "        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.key.key_code(k), mod=0))\n"
            "    self.effects.carry_out(A.flow.Quit())\n"
            "A.KioskApp.start = start\n"
            "sys.exit(main(['kiosk', '--config', sys.argv[1]]))\n")
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", RACKSIDE_STATE_DIR=str(tmp_path / "state"))
    r = subprocess.run([sys.executable, "-c", code, str(cfg)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == QUIT_STATUS, r.stderr


@pytest.mark.parametrize("argv", [
    ["--config", "X"], ["--config=X", "--windowed"], ["--windowed", "--runner", "--size", "1920x1080", "--config", "X"],
    [],
])
def test_the_fast_path_takes_the_forms_systemd_and_directors_use(argv, monkeypatch):
    from rackside.kiosk import cli, station_cli

    got = []
    monkeypatch.setattr(station_cli, "main", lambda args: got.append(args) or 0)
    assert cli.fast(argv) == 0
    [args] = got
    full = __import__("rackside.cli", fromlist=["build_parser"]).build_parser("kiosk").parse_args(["kiosk", *argv])
    for name in ("config", "size", "windowed", "runner", "hash_pin", "check_config"):
        assert getattr(args, name) == getattr(full, name), name  # the same as the full parser's


@pytest.mark.parametrize("argv", [["--help"], ["--hash-pin"], ["--check-config"], ["--config"], ["--bogus"],
                                  ["--config", "a", "--config", "b"], ["--size"], ["extra"]])
def test_other_forms_go_to_the_full_parser(argv):
    from rackside.kiosk import cli

    assert cli.fast(argv) is None


def test_the_station_reaches_its_first_frame_without_argparse(tmp_path):
    import subprocess
    import sys

    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{PIN_HASH}"\n[display]\nfullscreen = false\n', encoding="utf-8")
    code = ("import sys\n"
            "from rackside.kiosk import app as A\n"
            "def run(self, after_first_frame=None):\n"
            "    self.start()\n"
            "    print(sorted(m for m in ('argparse', 'logging') if m in sys.modules))\n"
            "    self.shutdown()\n"
            "    return 0\n"
            "A.KioskApp.run = run\n"
            "from rackside.cli import main\n"
            "sys.exit(main(['kiosk', '--config', sys.argv[1]]))\n")
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", RACKSIDE_STATE_DIR=str(tmp_path / "state"))
    r = subprocess.run([sys.executable, "-c", code, str(cfg)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_no_display_exits_2_with_one_line(tmp_path):
    """Issue 10 item 10: with no display, `rackside kiosk` used to run invisibly (SDL's offscreen
    driver). It exits 2 and says where a station can run."""
    import subprocess
    import sys

    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{PIN_HASH}"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if k not in {"DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"}}
    env.update(RACKSIDE_STATE_DIR=str(tmp_path / "state"), XDG_RUNTIME_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "rackside", "kiosk", "--config", str(cfg)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rackside kiosk: no display") and "SDL_VIDEODRIVER" in lines[0]


def test_run_loop_processes_the_queue_and_quits(tmp_path, monkeypatch):
    """The real loop (event.wait with a deadline timeout) with the real clock."""
    a, _ = make_app(tmp_path, monkeypatch)
    a.clock_ns = __import__("time").monotonic_ns
    a.start = lambda: None  # already started by make_app
    a.running = True
    post_keys("ESCAPE")
    for d in PIN:
        post_keys(d)
    post_keys("ENTER")
    x, y = centre_of_screen(a, Screen.DIRECTOR, "quit")
    w, h = a.surface.get_size()
    pygame.event.post(pygame.event.Event(pygame.FINGERDOWN, x=x / w, y=y / h, touch_id=1, finger_id=1))
    pygame.event.post(pygame.event.Event(pygame.FINGERUP, x=x / w, y=y / h, touch_id=1, finger_id=1))
    assert a.run() == QUIT_STATUS


def test_loop_sleeps_until_the_next_poll_or_deadline(app, monkeypatch):
    """Issue 11 item 3: no `event.wait` (it wakes ~900 times a second); the loop sleeps itself,
    20 wake-ups a second when idle, and a sleep ends exactly at a deadline (the result's 10 s)."""
    from rackside.hardware.sdnotify import Notifier
    from rackside.kiosk import app as app_module

    wakes = []

    def fake_sleep(seconds):
        assert seconds > 0
        app.clock.advance(seconds)
        wakes.append(app.clock())
        if app.clock() - start > 30 * NS:
            app.running = False

    monkeypatch.setattr(app_module.time, "sleep", fake_sleep)
    monkeypatch.setattr(pygame.event, "wait", lambda *a: pytest.fail("event.wait wakes ~900/s"))
    start = app.clock()
    post_keys("1")
    type_text("qi")
    post_keys("TAB")
    app._loop(pygame, Notifier({}))
    st = app.station
    assert st.screen == Screen.IDLE and st.verdict_ns == start
    assert start + 10 * NS in wakes  # woke exactly when the result's hold ended
    idle = [t for t in wakes if t > start + 13 * NS]
    assert len(idle) <= 17 * 20 + 1  # 20 a second


def test_loop_draws_each_second_of_the_countdown_when_due(app, monkeypatch):
    from rackside.hardware.sdnotify import Notifier
    from rackside.kiosk import app as app_module

    drawn = []
    real_render = type(app).render

    def render(force=False):
        drew = real_render(app, force)
        if drew:
            drawn.append((app.clock(), app.station.screen, app.station.countdown_s(app.clock())))
        return drew

    def fake_sleep(seconds):
        app.clock.advance(seconds)
        if app.station.screen == Screen.IDLE:
            app.running = False

    monkeypatch.setattr(app, "render", render)
    monkeypatch.setattr(app_module.time, "sleep", fake_sleep)
    post_keys("1")
    start = app.clock()
    app._loop(pygame, Notifier({}))
    counted = [(t - start, secs) for t, screen, secs in drawn if secs is not None]
    assert counted == [((50 + i) * NS, 10 - i) for i in range(10)]  # each second, on time
    assert drawn[-1][:2] == (start + 60 * NS, Screen.IDLE)


def test_loop_keeps_the_watchdog_fed(app, monkeypatch):
    """The unit is Type=notify with WatchdogSec=15: the station says READY and pings the watchdog."""
    import socket
    from rackside.hardware.sdnotify import Notifier
    from rackside.kiosk import app as app_module

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(app.paths.settings.parent / "notify.sock")
    sock.bind(path)
    sock.settimeout(1)
    notifier = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "15000000"})

    def fake_sleep(seconds):
        app.clock.advance(seconds)
        if app.clock() - start > 20 * NS:
            app.running = False

    monkeypatch.setattr(app_module.time, "sleep", fake_sleep)
    start = app.clock()
    app._loop(pygame, notifier)
    got = []
    sock.settimeout(0.1)
    try:
        while True:
            got.append(sock.recv(100))
    except socket.timeout:
        pass
    sock.close()
    assert got.count(b"WATCHDOG=1") >= 3  # every 7.5 s over 20 s


def centre_of_screen(app, screen, target):
    saved = app.station.screen
    app.station.screen = screen
    try:
        return centre_of(app, target)
    finally:
        app.station.screen = saved


# =============================================================================================
# Runner mode (3.10.7) and the docket printer


def test_runner_mode_prints_the_exact_docket(tmp_path, monkeypatch):
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url="loop://", printer_status_check=False)
    try:
        runner_judge(app, "12", "qi za")
        st = app.station
        assert st.screen == Screen.RESULT and st.verdict.kind == "runner" and st.docket == "printing"
        wait_for_dockets(app)
        assert st.docket == "printed"
        rec = records(tmp_path)[0]
        assert rec.table == "12" and rec.kind == "runner" and st.verdict.challenge_id == rec.id
        port = app.effects.dockets.printer._port
        got = port.read(port.in_waiting)
        from rackside.kiosk.effects import _docket_time
        assert got == encode_docket(Docket(rec.id, _docket_time(rec.time), "12", st.verdict.lexicon, ("QI", "ZA"), True,
                                           rec.short_id))
        assert b"Short id  " + rec.short_id.encode() + b"\n" in got and st.verdict.short_id == rec.short_id
        assert b"Table     12\n" in got and b"\xfb ACCEPTABLE" in got and got.endswith(b"\x1dV\x42\x00")
    finally:
        app.shutdown()


def texts_drawn(app) -> list[str]:
    """Every string the renderer draws in one forced frame."""
    seen = []
    real = app.renderer.text_surface

    def spy(text, *a, **kw):
        seen.append(text)
        return real(text, *a, **kw)

    app.renderer.text_surface = spy
    try:
        app.render(force=True)
    finally:
        app.renderer.text_surface = real
    return seen


class HeldPrinter:
    """Each docket's answer held until the test lets one go (`release`; a printer slowly timing
    out): what the station does meanwhile is the point. `print_docket` runs on the printer's own
    thread; the answers are given in turn."""

    def __init__(self, app, *answers) -> None:
        self.answers = list(answers) or [(False, "the printer did not answer (off or unplugged?)")]
        self.printing, self._go = threading.Event(), threading.Semaphore(0)
        self.ids: list[str] = []
        app.effects.dockets.printer.print_docket = self.print_docket

    def release(self, n: int = 1) -> None:
        for _ in range(n):
            self._go.release()

    def print_docket(self, docket):
        self.ids.append(docket.challenge_id)
        self.printing.set()
        assert self._go.acquire(timeout=10), "the test never released the printer"
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def test_a_tap_made_while_a_slow_docket_prints_does_not_dismiss_the_result(tmp_path, monkeypatch):
    # Issue 4: the result ignores touches for its first 0.5 s, and a printer never hides the
    # verdict. A switched-off printer takes a write timeout to fail; a tap made in that time (the
    # adjudicator's second tap on JUDGE) is stamped when it is made, in the touch-ignore.
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url="loop://")
    printer = HeldPrinter(app)
    try:
        runner_judge(app, "4", "qi")
        assert printer.printing.wait(5)
        clock.advance(0.1)
        post_finger(pygame.FINGERDOWN)  # a tap 0.1 s into the result, while the port times out
        post_finger(pygame.FINGERUP)
        app.step()
        clock.advance(0.5)
        printer.release()
        wait_for_dockets(app)
        assert app.station.screen == Screen.RESULT
        assert app.station.docket.startswith("failed")
    finally:
        printer.release(5)
        app.shutdown()


def test_touches_made_while_a_docket_prints_are_not_lost(tmp_path, monkeypatch):
    """Issue 16 item 5: the docket prints on its own thread. The station used to print on the UI
    thread and then clear every touch and key queued meanwhile; now each is handled as it comes,
    and the printer's late answer goes to the result it was printed for, never a later one."""
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url="loop://")
    printer = HeldPrinter(app, (False, "the printer did not answer (off or unplugged?)"), (True, ""))
    try:
        runner_judge(app, "4", "qi")
        first = app.station.verdict.challenge_id
        assert printer.printing.wait(5) and app.station.docket == "printing"
        clock.advance(1.0)  # past the result's touch-ignore; the printer still has the docket
        post_finger_tap(app, pos=(400, 240))  # the adjudicator is done: a tap while it prints counts
        app.step()
        assert app.station.screen == Screen.IDLE
        runner_judge(app, "5", "za")  # the next challenge, keys and taps, while the first still prints
        st = app.station
        assert st.screen == Screen.RESULT and st.verdict.challenge_id != first and st.docket == "printing"
        assert [r.table for r in records(tmp_path)] == ["4", "5"]
        printer.release()  # the first docket fails: said nowhere, its result is gone
        deadline = time.monotonic() + 5
        while app.effects.dockets.pending == 2 and time.monotonic() < deadline:
            time.sleep(0.002)
            app.step()
        assert app.effects.dockets.pending == 1
        assert st.docket == "printing"
        printer.release()
        wait_for_dockets(app)
        assert printer.ids == [first, st.verdict.challenge_id]
        assert st.docket == "printed"  # its own docket's answer
    finally:
        printer.release(5)
        app.shutdown()


def test_runner_result_speaks_to_the_adjudicator(tmp_path, monkeypatch):
    """Issue 10 item 9: in runner mode the players are not at the station."""
    app, clock = make_app(tmp_path, monkeypatch, mode="runner")
    try:
        runner_judge(app, "5", "qi")
        shown = " ".join(texts_drawn(app))
        assert "both" not in shown and "slip" in shown
    finally:
        app.shutdown()
    app, clock = make_app(tmp_path / "self", monkeypatch)
    try:
        judge_keep(app, "qi")
        assert "both seen" in " ".join(texts_drawn(app))
    finally:
        app.shutdown()


def test_loop_printer_is_a_dry_run(tmp_path, monkeypatch):
    """Issue 10 item 9: `url = "loop://"` with the status check on (the default) prints."""
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url="loop://")
    try:
        for table in ("1", "2"):
            runner_judge(app, table, "qi")
            wait_for_dockets(app)
            assert app.station.docket == "printed"
            clock.advance(11)
            app.step()
    finally:
        app.shutdown()


def test_unplugged_printer_never_blocks_the_verdict(tmp_path, monkeypatch):
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url=str(tmp_path / "no-such-tty"))
    try:
        import time as _t
        t0 = _t.perf_counter()
        runner_judge(app, "3", "qi zzq")
        assert _t.perf_counter() - t0 < 1.0
        wait_for_dockets(app)
        st = app.station
        assert st.screen == Screen.RESULT and not st.verdict.acceptable
        assert st.docket.startswith("failed") and "no printer" in st.docket
        assert records(tmp_path)[0].table == "3"  # logged all the same
    finally:
        app.shutdown()


def test_switched_off_printer_on_a_pty_is_reported(tmp_path, monkeypatch):
    master, slave = os.openpty()
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url=os.ttyname(slave),
                          printer_write_timeout=0.1)
    try:
        runner_judge(app, "", "cat")
        wait_for_dockets(app)
        assert app.station.docket.startswith("failed") and "did not answer" in app.station.docket
        assert app.station.verdict.acceptable
    finally:
        app.shutdown()
        os.close(master)
        os.close(slave)


def test_printer_on_a_pty_answers_status_then_gets_the_docket(tmp_path, monkeypatch):
    master, slave = os.openpty()
    import tty
    tty.setraw(slave)
    received = bytearray()

    def printer():  # a minimal ESC/POS printer: answers DLE EOT 1 "online", keeps the rest
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            received.extend(chunk)
            if b"\x10\x04\x01" in chunk:
                os.write(master, b"\x12")
            if received.endswith(b"\x1dV\x42\x00"):
                return

    thread = threading.Thread(target=printer, daemon=True)
    thread.start()
    app, clock = make_app(tmp_path, monkeypatch, mode="runner", printer_url=os.ttyname(slave))
    try:
        runner_judge(app, "7", "dog")
        thread.join(5)
        wait_for_dockets(app)
        assert app.station.docket == "printed"
        assert received.startswith(b"\x10\x04\x01\x1b@") and b"Words     DOG\n" in received
    finally:
        app.shutdown()
        os.close(master)
        os.close(slave)


# =============================================================================================
# Every screen draws at 800x480 and 1920x1080


def drive_to(app, screen: Screen) -> None:
    st = app.station
    if screen == Screen.IDLE:
        pass
    elif screen == Screen.RESULT:
        judge_keep(app, "qi za")
    elif screen == Screen.COUNT:
        tap(app, "start")
    elif screen == Screen.ENTRY:
        post_keys("3")
        type_text("qi za ca")
        app.step()
    elif screen == Screen.PIN:
        post_keys("ESCAPE", "1")
        app.step()
    elif screen == Screen.LOCKED:
        post_keys("ESCAPE")
        app.step()
        for _ in range(5):
            enter_pin(app, "0000")
    else:
        post_keys("ESCAPE")
        app.step()
        enter_pin(app, PIN)
        target = {Screen.LEXICONS: "lexicons", Screen.RULES: "rules", Screen.LOG: "log",
                  Screen.READJ_ENTRY: "readj"}.get(screen)
        if target:
            tap(app, target)
    assert st.screen == screen


def judge_keep(app, words):
    post_keys(str(len(words.split())))
    type_text(words)
    post_keys("TAB")
    app.step()


@pytest.mark.parametrize("size", [(800, 480), (1920, 1080)])
def test_every_screen_draws(tmp_path, monkeypatch, size):
    for screen in [Screen.IDLE, Screen.COUNT, Screen.ENTRY, Screen.RESULT, Screen.PIN, Screen.LOCKED,
                   Screen.DIRECTOR, Screen.LEXICONS, Screen.RULES, Screen.LOG, Screen.READJ_ENTRY]:
        a, _ = make_app(tmp_path / screen.value, monkeypatch, size=size)
        try:
            drive_to(a, screen)
            a.render(force=True)
            assert a.surface.get_size() == size
            if screen == Screen.RESULT:  # the verdict fills the screen with its colour
                assert a.surface.get_at((size[0] // 2, size[1] - 5))[:3] == (18, 122, 54)
        finally:
            a.shutdown()


def test_readjudication_that_differs_goes_to_the_director(director, tmp_path):
    """3.10.11(c): a re-adjudication that differs from the original is not final."""
    tap(director, "resume")
    v = judge(director, "zzz")
    assert not v.acceptable
    make_lexicon(tmp_path / "lexicons", "BIGGER", WORDS + ["ZZZ"])
    post_keys("ESCAPE")
    director.step()
    enter_pin(director, PIN)
    tap(director, "lexicons")
    pick = next(i for i, c in enumerate(director.station.lexicon_choices) if c.label.startswith("BIGGER"))
    tap(director, f"pick:{pick}", "log", f"row:{v.challenge_id}", "readj")
    r = director.station.readj
    assert r.differs and r.now_acceptable and "Tournament Director must decide" in r.message
    director.render(force=True)


def test_eight_words_is_the_most_and_they_all_show(app, tmp_path):
    post_keys("8")
    type_text("qi za cat dog jinx qi za cat")
    app.step()
    assert len(app.station.typed_words) == 8
    type_text(" dog")  # no ninth word: Space is refused, the letters go on the eighth
    app.step()
    assert len(app.station.words) == 8 and app.station.words[-1] == "CATDOG"
    post_keys(*["BACKSPACE"] * 3, "TAB")
    app.step()
    assert app.station.screen == Screen.RESULT and len(app.station.verdict.words) == 8
    assert records(tmp_path)[0].words[-1] == "CAT"


# =============================================================================================
# Failures are shown, never hidden


def test_missing_lexicon_is_shown_and_no_verdict_is_given(tmp_path, monkeypatch):
    a, _ = make_app(tmp_path, monkeypatch)
    try:
        a.lexicon.close()
        a.lexicon = None
        (tmp_path / "station.json").write_text(f'{{"lexicon_path": "{tmp_path / "gone.rlex"}"}}\n')
        a.load_engine()
        assert a.lexicon is None and "gone.rlex" in a.station.lexicon_error
        a.render(force=True)
        post_keys("1")
        type_text("qi")
        post_keys("TAB")
        a.step()
        assert a.station.screen == Screen.ENTRY and "No lexicon" in a.station.message
        assert records(tmp_path) == []
    finally:
        a.shutdown()


def test_unwritable_log_means_no_verdict(tmp_path, monkeypatch):
    a, _ = make_app(tmp_path, monkeypatch)
    try:
        a.service.log_path = tmp_path  # a folder: the record cannot be appended
        post_keys("1")
        type_text("qi")
        post_keys("TAB")
        a.step()
        assert a.station.screen == Screen.ENTRY and a.station.verdict is None
        assert "could not be logged" in a.station.message
    finally:
        a.shutdown()


def test_a_stop_signal_during_the_logging_import_stops_the_station(app, monkeypatch):
    """systemd's SIGTERM can arrive while `logging` is being imported (it is set up right after
    READY=1): the handler must not log then, or the half-imported module raises in it."""
    import signal
    import sys
    import types

    monkeypatch.setitem(sys.modules, "logging", types.ModuleType("logging"))  # as mid-import: nothing in it yet
    app._on_signal(signal.SIGTERM, None)
    assert not app.running and app.exit_status == 0
