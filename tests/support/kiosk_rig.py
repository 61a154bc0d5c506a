"""The kiosk tests' rig: the real pygame event queue under SDL's dummy driver, the fake clock, small
compiled lexicons in a temporary folder, and the `app` fixture (registered as a pytest plugin in
tests/conftest.py, so test modules use it without importing it)."""

from __future__ import annotations

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"  # before pygame initialises anything
os.environ["SDL_AUDIODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

from pathlib import Path

import pygame
import pytest

from rackside.kiosk.app import KioskApp, Paths
from rackside.kiosk.flow import Screen
from rackside.kiosk.layout import buttons
from rackside.judge.challenge_log import ChallengeLog
from rackside.judge.lexicon import compile_lexicon
from rackside.kiosk.station_config import StationConfig, hash_pin

from support.clock import FakeClock
from support.wait import until

PIN = "2468"
# Cheap scrypt cost for tests only; the format carries the parameters, verify_pin is the real one.
PIN_HASH = hash_pin(PIN, n=2**8)
WORDS = ["QI", "ZA", "CAT", "DOG", "QUIXOTIC", "JINX"]


def make_lexicon(folder: Path, name: str, words: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / f"{name}.txt"
    src.write_text("\n".join(words) + "\n", encoding="utf-8")
    out = folder / f"{name.lower()}.rlex"
    compile_lexicon(src, out, name)
    src.unlink()
    return out


def make_app(tmp_path: Path, monkeypatch, *, mode: str = "self", size=(800, 480), **config) -> tuple[KioskApp, FakeClock]:
    monkeypatch.setenv("RACKSIDE_STATE_DIR", str(tmp_path / "state"))
    lexicons = tmp_path / "lexicons"
    path = make_lexicon(lexicons, "TINY", WORDS)
    (tmp_path / "station.json").write_text(f'{{"lexicon_path": "{path}"}}\n', encoding="utf-8")
    clock = FakeClock()
    cfg = StationConfig(name="hall-a", mode=mode, fullscreen=False, size=size, pin_hash=PIN_HASH, **config)
    app = KioskApp(cfg, clock_ns=clock, paths=Paths(settings=tmp_path / "station.json", log=tmp_path / "log.jsonl",
                                                    lexicons=lexicons, exports=tmp_path / "exports"))
    app.start()
    pygame.event.clear()
    return app, clock


KEYS = {"SPACE": pygame.K_SPACE, "ENTER": pygame.K_RETURN, "TAB": pygame.K_TAB, "BACKSPACE": pygame.K_BACKSPACE,
        "ESCAPE": pygame.K_ESCAPE, "F4": pygame.K_F4}


def post_keys(*names: str, mod: int = 0) -> None:
    """Post KEYDOWN events: single letters/digits, or names from KEYS."""
    for name in names:
        if name in KEYS:
            code = KEYS[name]
        elif len(name) == 1:
            code = ord(name.lower())
        else:
            raise ValueError(name)
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=code, mod=mod, unicode="", scancode=0))


def type_text(text: str) -> None:
    for ch in text:
        post_keys("SPACE" if ch == " " else ch)


def centre_of(app: KioskApp, target: str) -> tuple[int, int]:
    for b in buttons(app.station, app.geo):
        if b.target == target:
            return b.rect.center
    raise AssertionError(f"no {target!r} on the {app.station.screen} screen")


def post_finger(kind: int, x: float = 0.5, y: float = 0.5) -> None:
    """One FINGERDOWN or FINGERUP at a normalised position (the screen's centre unless told)."""
    pygame.event.post(pygame.event.Event(kind, x=x, y=y, dx=0.0, dy=0.0, touch_id=1, finger_id=3, pressure=1.0))


def post_finger_tap(app: KioskApp, target: str | None = None, pos=None, *, with_synthetic_mouse: bool = True) -> None:
    """A finger tap as SDL delivers it: FINGERDOWN/UP (normalised) plus SDL's mouse copies (touch=True)."""
    x, y = pos if pos is not None else centre_of(app, target)
    w, h = app.surface.get_size()
    for down in (True, False):
        pygame.event.post(pygame.event.Event(pygame.FINGERDOWN if down else pygame.FINGERUP,
                                             x=x / w, y=y / h, dx=0.0, dy=0.0, touch_id=1, finger_id=7, pressure=1.0))
        if with_synthetic_mouse:
            pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN if down else pygame.MOUSEBUTTONUP,
                                                 pos=(x, y), button=1, touch=True))


def post_mouse_click(app: KioskApp, target: str) -> None:
    x, y = centre_of(app, target)
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(x, y), button=1, touch=False))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=(x, y), button=1, touch=False))


def tap(app: KioskApp, *targets: str) -> None:
    """Tap each target in turn, stepping the app after each (targets move between screens)."""
    for target in targets:
        post_finger_tap(app, target)
        app.step()


def enter_pin(app, pin):
    for d in pin:
        post_keys(d)
    post_keys("ENTER")
    app.step()


def runner_judge(app, table: str, words: str):
    tap(app, "start")
    assert app.station.screen == Screen.TABLE
    for d in table:
        post_keys(d)
    post_keys("ENTER")
    post_keys(str(len(words.split())))
    type_text(words)
    post_keys("TAB")
    app.step()


def wait_for_dockets(app: KioskApp, timeout: float = 5.0) -> None:
    """Step the app until the printer's thread has answered every docket posted: the station never
    waits for its printer (kiosk/printing.py); a test that checks the answer does."""
    assert until(lambda: app.step() or not app.effects.dockets.pending, timeout, poll=0.002), \
        "the printer's thread did not answer in time"


def records(tmp_path):
    return ChallengeLog(tmp_path / "log.jsonl", "hall-a").records()


@pytest.fixture
def app(tmp_path, monkeypatch):
    a, clock = make_app(tmp_path, monkeypatch)
    a.clock = clock
    yield a
    a.shutdown()


@pytest.fixture
def director(app):
    """The station on the director's screen (the PIN entered)."""
    post_keys("ESCAPE")
    app.step()
    enter_pin(app, PIN)
    assert app.station.screen == Screen.DIRECTOR
    return app


def judge(app, words: str):
    """Self-adjudicate `words` from the idle screen; the verdict, once the result has gone (11 s)."""
    post_keys(str(len(words.split())))
    type_text(words)
    post_keys("TAB")
    app.step()
    v = app.station.verdict
    app.clock.advance(11)
    app.step()
    return v


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


def judge_keep(app, words):
    """Self-adjudicate `words` from the idle screen and stay on the result."""
    post_keys(str(len(words.split())))
    type_text(words)
    post_keys("TAB")
    app.step()
