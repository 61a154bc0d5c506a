"""A station with no lexicon says so on the whole screen before anyone types (issue 26 item 4): it
showed a small red line above "Touch to challenge" and let a player type a whole play first; and a
station whose lexicon file disappeared while it ran kept judging and showed nothing."""

from __future__ import annotations

import pygame

from rackside.kiosk.flow import Screen
from rackside.kiosk.layout import buttons

from support.kiosk_rig import make_app, post_keys, records, tap, type_text


def test_a_missing_lexicon_is_a_full_screen_state_before_any_typing(tmp_path, monkeypatch):
    a, _ = make_app(tmp_path, monkeypatch)
    try:
        a.lexicon.close()
        a.lexicon = None
        (tmp_path / "station.json").write_text(f'{{"lexicon_path": "{tmp_path / "gone.rlex"}"}}\n')
        a.load_engine()
        a.render(force=True)
        assert [b.target for b in buttons(a.station, a.geo)] == ["director"]  # no "Touch to challenge"
        post_keys("1")
        type_text("qi")
        a.step()
        assert a.station.screen == Screen.IDLE and records(tmp_path) == []
        tap(a, "director")  # the director can still come and choose one
        assert a.station.screen in (Screen.PIN, Screen.LOCKED)
    finally:
        a.shutdown()


def test_a_lexicon_file_that_disappears_while_running_is_noticed_at_the_idle_screen(tmp_path, monkeypatch):
    a, clock = make_app(tmp_path, monkeypatch)
    try:
        path = a.lexicon.path
        assert a.station.lexicon is not None
        path.unlink()
        clock.advance(3.0)
        a.step()
        assert a.station.lexicon is None and "gone" in a.station.lexicon_error
        assert [b.target for b in buttons(a.station, a.geo)] == ["director"]
        post_keys("1")
        a.step()
        assert a.station.screen == Screen.IDLE
    finally:
        a.shutdown()
