"""The station's screen on a hall (issue 19): `rackside hall station` writes its enrolment state to
a small owner-only file (kiosk.hall_status); the kiosk's idle screen shows the code and "waiting
for a station id", then the station id, reading the file itself (never the network).

The real pygame event queue under SDL's dummy driver and a fake clock (tests/support/kiosk_rig.py)."""

from __future__ import annotations

import logging
import stat

from rackside.kiosk import hall_status


def drawn_texts(app, monkeypatch) -> list[str]:
    """Every text the renderer draws from now on (the real drawing still happens)."""
    texts: list[str] = []
    real = app.renderer.draw_text

    def draw_text(text, *args, **kwargs):
        texts.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(app.renderer, "draw_text", draw_text)
    return texts


def test_the_idle_screen_shows_the_code_then_the_station_id(app, monkeypatch, caplog):
    path = app.paths.hall_status or hall_status.default_path()
    assert path.parent.name == "state"  # the station's state folder, where `rackside hall station` writes
    texts = drawn_texts(app, monkeypatch)
    app.render(force=True)
    assert not [t for t in texts if t.startswith("Hall")]  # not on a hall: nothing

    hall_status.write(path, "0348", None)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # the idle loop wakes for the next read by itself (nobody touches a waiting station)
    now = app.clock()
    assert app._background_deadline(now) is not None and app._background_deadline(now) <= now + hall_status.READ_EVERY_NS
    app.clock.advance(2.1)
    texts.clear()
    app.step([])
    assert "Hall: code 0348 · waiting for a station id" in texts

    hall_status.write(path, "0348", "2")
    app.clock.advance(2.1)
    texts.clear()
    app.step([])
    assert "Hall: station 2" in texts

    with caplog.at_level(logging.WARNING):
        path.write_text('{"code": "0348", "station": "a/b"}')  # not a station id: one line naming the file
        app.clock.advance(2.1)
        texts.clear()
        app.step([])
    assert not [t for t in texts if t.startswith("Hall")]
    assert any(str(path) in r.getMessage() for r in caplog.records)

    hall_status.write(path, "0348", "2")
    app.clock.advance(2.1)
    app.step([])
    hall_status.remove(path)  # the hall station stopped
    app.clock.advance(2.1)
    texts.clear()
    app.step([])
    assert not [t for t in texts if t.startswith("Hall")]


def test_a_big_file_is_not_read_whole(tmp_path, caplog):
    path = tmp_path / hall_status.FILE_NAME
    path.write_text('{"code": "0348", "station": "2", "x": "' + "x" * 10_000 + '"}')
    with caplog.at_level(logging.WARNING):
        assert hall_status.notice(path) == ""
    assert "longer than" in caplog.text and str(path) in caplog.text
