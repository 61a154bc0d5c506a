"""The PIN screen and the lockout: the only way out of the station is the director's PIN.

The real pygame event queue under SDL's dummy driver, a fake clock, and small compiled lexicons
in a temporary folder (the rig and its shared helpers: tests/support/kiosk_rig.py)."""

from __future__ import annotations

import pygame
import pytest

from rackside.kiosk import flow
from rackside.kiosk.flow import Screen

from support.kiosk_rig import PIN, enter_pin, post_keys, tap, type_text


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
        assert f"{4 - i} tr" in app.station.pin_pad.message
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
