"""Director mode: the rule, the lexicon, the log view and export, re-adjudication (3.10.11), importing
a word list from a USB stick, quitting the station.

The real pygame event queue under SDL's dummy driver, a fake clock, and small compiled lexicons
in a temporary folder (the rig and its shared helpers: tests/support/kiosk_rig.py)."""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path

import pygame

from rackside.kiosk.app import QUIT_STATUS
from rackside.kiosk.flow import Screen

from support.kiosk_rig import (
    PIN,
    WORDS,
    enter_pin,
    judge,
    make_lexicon,
    post_keys,
    records,
    tap,
    texts_drawn,
    type_text,
)


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
    labels = [c.label for c in director.station.director.lexicon_choices]
    assert len(labels) == 2 and labels[0].startswith("BIGGER · 7 words")
    tap(director, "pick:0")
    assert director.lexicon.name == "BIGGER" and director.station.lexicon.word_count == 7
    assert json.loads((tmp_path / "station.json").read_text())["lexicon_path"].endswith("bigger.rlex")
    tap(director, "resume")
    assert judge(director, "zzz").acceptable


def test_corrupt_lexicon_is_listed_but_not_chosen(director, tmp_path):
    (tmp_path / "lexicons" / "broken.rlex").write_bytes(b"not a lexicon")
    tap(director, "lexicons")
    broken = [c for c in director.station.director.lexicon_choices if c.error]
    assert len(broken) == 1
    i = director.station.director.lexicon_choices.index(broken[0])
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
    rows = director.station.director.log_rows
    assert [r.challenge_id for r in rows] == [second.challenge_id, first.challenge_id]  # newest first
    assert rows[1].per_word == (True, False)  # per-word results: only here
    tap(director, "export")
    [csv_file] = (tmp_path / "exports").glob("*.csv")
    assert csv_file.stat().st_mode & 0o777 == 0o600  # per-word results: the director's eyes only
    lines = list(csv.reader(csv_file.open()))
    assert len(lines) == 3 and "Exported 2 challenges" in director.station.director.note
    tap(director, f"row:{first.challenge_id}", "readj")
    assert director.station.screen == Screen.READJ_RESULT
    assert director.station.readjudication.view.now_per_word == (True, False) and not director.station.readjudication.view.differs


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
    assert "Cannot read the log" in app.station.director.note


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
    assert director.station.readjudication.view.row.challenge_id == v.challenge_id
    tap(director, "back", "readj")
    tap(director, "digit:9", "find")
    assert director.station.screen == Screen.READJ_ENTRY and "No challenge" in director.station.director.note


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
    assert [c.path.rsplit("/", 1)[-1] for c in st.imports.choices] == ["club26.txt"]
    tap(director, "pick:0")
    assert st.screen == Screen.IMPORTING
    finish_import(director)
    v = st.imports.view
    assert v.done and not v.error and v.name == "CLUB26" and v.word_count == 6
    assert v.checksum == director.lexicon.short_checksum and len(v.checksum) == 8
    assert v.skipped[0] == "Skipped 4 lines:" and any(line.startswith("too long: 1") for line in v.skipped)
    assert any("duplicate: 1" in line for line in v.skipped) and any("not letters: 1" in line for line in v.skipped)
    assert director.lexicon.name == "CLUB26" and "ZZZ" in director.lexicon
    from rackside.judge.settings import load_settings
    assert load_settings(tmp_path / "station.json").lexicon_path == tmp_path / "lexicons" / "club26.rlex"
    assert "Now judging with CLUB26" in st.director.note
    director.render(force=True)
    tap(director, "done")
    assert st.screen == Screen.LEXICONS and any(c.label.startswith("CLUB26 ") for c in st.director.lexicon_choices)


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
    assert st.screen == Screen.IMPORTING and st.imports.view.stage == "Compiling" and 0.5 < st.imports.view.fraction < 1
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
    assert st.imports.view.done and director.lexicon.name == "CLUB26"
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
    v = director.station.imports.view
    assert v.done and "UTF-16" in v.error and director.lexicon.name == "TINY"
    director.render(force=True)
    assert not (tmp_path / "lexicons" / "utf16.rlex").exists()


def test_no_stick_says_so(director, tmp_path):
    import_from(director, tmp_path / "nothing-mounted")
    assert director.station.imports.choices == ()
    assert "No word lists" in " ".join(texts_drawn(director))


def test_director_quits(director):
    tap(director, "quit")
    assert not director.running and director.exit_status == QUIT_STATUS


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
    pick = next(i for i, c in enumerate(director.station.director.lexicon_choices) if c.label.startswith("BIGGER"))
    tap(director, f"pick:{pick}", "log", f"row:{v.challenge_id}", "readj")
    r = director.station.readjudication.view
    assert r.differs and r.now_acceptable and "Tournament Director must decide" in r.message
    director.render(force=True)
