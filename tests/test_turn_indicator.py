"""Whose time is running, seen from across the table (issue 10 item 6): a turn LED beside each
player's button on gpiozero LED pins, lit for the player whose time runs; both blink together while
the clock is neutralised, and the displays alternate with HOLd; the simulator draws the LEDs."""

from __future__ import annotations

import logging

import argparse
import io

import pytest

from rackside.game import render
from rackside.game.clock import LateStart, Neutralise, NS_PER_MS, NS_PER_S, Phase, Press, run, view
from rackside.firmware.led_output import TurnLedsOutput, turn_leds
from rackside.hardware.display import RecordingDisplay
from rackside.hardware.pinmap import load_pinmap
from rackside.hardware.terminal import TerminalSim, screen

from support.clock import FakeClock

S = NS_PER_S


def test_turn_leds_follow_the_clock():
    assert turn_leds(view(run([]), 0), 0) == (False, False)  # before the game
    c = run([Press(0, 2)])  # the right player starts the left player's time (2.2)
    assert turn_leds(view(c, 5 * S), 5 * S) == (True, False)
    c = run([Press(0, 2), Press(7 * S, 1)])
    assert turn_leds(view(c, 9 * S), 9 * S) == (False, True)
    c = run([Press(0, 2), Neutralise(3 * S)])  # both blink, in step with the colons
    for t in range(10 * S, 12 * S, S // 4):
        left, right = turn_leds(view(c, t), t)
        colons_on = ":" in render.texts(view(c, t), t)[0] or render.texts(view(c, t), t)[0] == render.HOLD
        assert left == right == ((t // render.BLINK_NS) % 2 == 0)
        assert colons_on or not left
    c = run([LateStart(0, (1,))])  # the absent player's time drains
    assert turn_leds(view(c, 4 * S), 4 * S) == (True, False)


def test_neutralised_displays_alternate_their_time_with_HOLd():
    c = run([Press(0, 2), Neutralise(3 * S)])
    seen = {render.texts(view(c, t), t) for t in range(10 * S, 14 * S, S // 2)}
    assert seen == {("24:57", "25:00"), ("2457", "2500"), ("HOLd", "HOLd")}
    c = run([Press(0, 2)])  # a running clock never says HOLd
    assert all(render.HOLD not in render.texts(view(c, t), t) for t in range(0, 10 * S, S // 2))


def test_the_reference_pin_map_has_a_turn_led_beside_each_button_and_it_can_be_left_out(tmp_path):
    from rackside.hardware.pinmap import parse_pinmap

    pm = load_pinmap()
    assert pm.leds == {"left": 26, "right": 16}
    assert pm.use_of(26) == "leds.left" and pm.use_of(16) == "leds.right"
    raw = {"buttons": {"left": 17, "right": 27, "neutralise": 22},
           "displays": {"left": {"driver": "none"}, "right": {"driver": "none"}}, "leds": {"enabled": False}}
    assert parse_pinmap(raw).leds == {}
    del raw["leds"]
    assert parse_pinmap(raw).leds == {}  # an older pin map without [leds]: no LEDs


@pytest.fixture
def clock(monkeypatch, tmp_path):
    """`rackside clock --simulate`, assembled for real (firmware.cli.Clock), on a fake clock."""
    import gpiozero.pins.mock as mock
    from gpiozero.pins.mock import MockFactory

    from rackside.firmware.cli import Clock

    fake = FakeClock()
    monkeypatch.setattr(mock, "monotonic", fake.seconds)
    args = argparse.Namespace(simulate=True, terminal=True, config=None, state_dir=tmp_path / "state")
    c = Clock(args, clock_ns=fake, pin_factory=MockFactory())
    c.fake = fake
    c.start()
    yield c
    c.runner.close()
    c.close()


def tap(clock, button):
    clock.board.drive(button, True)
    clock.runner.pump()
    clock.fake.ns += 80 * NS_PER_MS
    clock.board.drive(button, False)
    clock.runner.pump()
    clock.fake.ns += 20 * NS_PER_MS
    clock.runner.pump()


def advance(clock, ms):
    end = clock.fake.ns + ms * NS_PER_MS
    while (due := clock.runner.next_due_ns(clock.fake.ns)) is not None and due <= end:
        clock.fake.ns = max(due, clock.fake.ns)
        clock.runner.pump()
    clock.fake.ns = end
    clock.runner.pump()


def pins(clock):
    """The LED pins as a meter on the header would read them."""
    return tuple(bool(clock.board.leds[side].pin.state) for side in ("left", "right"))


def test_the_clock_lights_the_leds_on_its_gpio_pins(clock):
    assert any(isinstance(o, TurnLedsOutput) for o in clock.runner.outputs)
    assert [clock.board.leds[s].pin.info.name for s in ("left", "right")] == ["GPIO26", "GPIO16"]
    assert pins(clock) == (False, False)
    tap(clock, "right")  # the left player's time runs
    assert pins(clock) == (True, False)
    advance(clock, 2_000)
    tap(clock, "left")
    assert pins(clock) == (False, True)
    tap(clock, "neutralise")
    assert clock.runner.clock.phase is Phase.NEUTRALISED
    states = []
    for _ in range(8):
        advance(clock, 250)
        states.append(pins(clock))
    assert set(states) == {(True, True), (False, False)}  # both blink, together
    clock.board.command("menu")  # the director's menu (the clock stays neutralised): still blinking
    advance(clock, 100)
    seen = set()
    for _ in range(6):
        advance(clock, 250)
        seen.add(pins(clock))
    assert seen == {(True, True), (False, False)}
    clock.runner.close()
    assert pins(clock) == (False, False)  # out when the clock stops


def test_the_window_and_the_terminal_draw_the_leds(clock):
    pygame = pytest.importorskip("pygame")
    from rackside.hardware.sim_window import LED_LIT, SimWindow

    tap(clock, "right")
    window = SimWindow(clock.board, clock.displays)
    try:
        window.draw()
        width, height = window.screen.get_size()
        y = height - 110
        assert tuple(window.screen.get_at((int(width * 0.25 + 84), y)))[:3] == LED_LIT
        assert tuple(window.screen.get_at((int(width * 0.75 - 84), y)))[:3] != LED_LIT
    finally:
        window.close()
    out = io.StringIO()
    TerminalSim(clock.board, clock.displays, stdout=out).draw()
    assert "(*)" in out.getvalue() and "( )" in out.getvalue()
    assert "(*)" not in screen(("1:00", "1:00"))
    assert pygame is not None


def test_a_board_without_leds_draws_them_dark():
    class Board:
        def drive(self, name, down):
            pass

    out = io.StringIO()
    TerminalSim(Board(), [RecordingDisplay(), RecordingDisplay()], stdout=out).draw()
    assert "(*)" not in out.getvalue()


def test_a_dead_led_is_logged_once_per_outage_and_never_stops_the_clock(clock, caplog, monkeypatch):
    led = clock.board.leds["left"]
    broken = {"on": True}
    real = type(led).value

    def value(self, v):
        if broken["on"] and self is led:
            raise OSError(5, "Input/output error")
        real.fset(self, v)

    monkeypatch.setattr(type(led), "value", property(real.fget, value))
    caplog.set_level(logging.DEBUG, logger="rackside.hardware.board")
    tap(clock, "right")  # the left player's time runs: its LED cannot light
    advance(clock, 1_000)
    tap(clock, "left")
    tap(clock, "right")
    assert clock.runner.clock.phase is Phase.RUNNING  # the clock went on
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR and "turn LED left" in r.getMessage()]
    assert len(errors) == 1 and "Input/output error" in errors[0].getMessage()
    broken["on"] = False
    tap(clock, "left")
    tap(clock, "right")
    assert pins(clock)[0] is True
    assert sum("turn LED left works again" in r.getMessage() for r in caplog.records) == 1
