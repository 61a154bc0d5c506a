"""Drawing: only what changed is drawn and sent to the display, and every screen draws at
800x480 and 1920x1080.

The real pygame event queue under SDL's dummy driver, a fake clock, and small compiled lexicons
in a temporary folder (the rig and its shared helpers: tests/support/kiosk_rig.py)."""

from __future__ import annotations

import pygame
import pytest

from rackside.kiosk.flow import Screen

from support.kiosk_rig import (
    PIN,
    enter_pin,
    judge_keep,
    make_app,
    post_finger_tap,
    post_keys,
    tap,
    type_text,
)


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
