"""The gpiozero board: Buttons with pull-ups and no gpiozero debounce, edges dated from the pin
back-end's ticks into one queue, the buzzer."""

import logging

import pytest

from rackside.hardware.board import Board

from support.clock import FakeClock

PINS = {"left": 17, "right": 27, "neutralise": 22}


@pytest.fixture
def fake_time(monkeypatch):
    import gpiozero.pins.mock as mock

    clock = FakeClock(500_000_000_000)
    monkeypatch.setattr(mock, "monotonic", clock.seconds)
    return clock


@pytest.fixture
def board(fake_time):
    from gpiozero.pins.mock import MockFactory

    b = Board(PINS, buzzer_pin=12, pin_factory=MockFactory(), clock_ns=fake_time)
    yield b
    b.close()


def test_buttons_are_pulled_up_with_our_own_debounce(board):
    for name, bcm in PINS.items():
        button = board.buttons[name]
        assert button.pull_up is True
        assert button.pin.bounce is None
        assert button.pin.edges == "both"
    assert board.initially_down() == {"left": False, "right": False, "neutralise": False}


def test_every_edge_goes_into_the_one_queue_with_its_time(board, fake_time):
    board.drive("left", True)
    fake_time.ns += 1_234_567
    board.drive("left", False)
    fake_time.ns += 1
    board.drive("right", True)
    items = [board.events.get_nowait() for _ in range(3)]
    assert items == [
        ("edge", 500_000_000_000, "left", True),
        ("edge", 500_001_234_567, "left", False),
        ("edge", 500_001_234_568, "right", True),
    ]
    assert board.events.empty()


def test_gpiozero_events_still_work_beside_ours(board):
    pressed = []
    board.buttons["neutralise"].when_pressed = lambda: pressed.append(1)
    board.drive("neutralise", True)
    assert pressed == [1] and board.is_down("neutralise")


def test_an_edge_is_dated_by_its_ticks_not_by_when_the_callback_ran(board, fake_time):
    """The back-end thread may call us late: the age of the edge is subtracted from now."""
    edge_ticks = fake_time.ns / 1e9
    fake_time.ns += 3_500_000  # the callback runs 3.5 ms after the edge
    assert board.edge_ns(edge_ticks) == fake_time.ns - 3_500_000


def test_nonsense_ticks_are_dated_now_and_logged_once(board, fake_time, caplog):
    with caplog.at_level(logging.WARNING, logger="rackside.hardware.board"):
        assert board.edge_ns(fake_time.ns / 1e9 + 2.0) == fake_time.ns  # from the future
        assert board.edge_ns(fake_time.ns / 1e9 - 60.0) == fake_time.ns  # a minute old
    assert len([r for r in caplog.records if "dating edges on arrival" in r.message]) == 1


def test_buzzer_beeps_on_its_pin(board):
    pin = board.factory.pin(12)
    board.beep("zero")
    assert board.buzzer.is_active or pin.states  # the beep thread has started driving the pin
    board.buzzer.off()


def test_commands_share_the_queue(board, fake_time):
    board.command("menu")
    assert board.events.get_nowait() == ("cmd", fake_time.ns, "menu")


def test_a_pin_in_use_is_refused(fake_time):
    from gpiozero.exc import GPIOPinInUse
    from gpiozero.pins.mock import MockFactory

    with pytest.raises(GPIOPinInUse):
        Board({"left": 17, "right": 17, "neutralise": 22}, pin_factory=MockFactory())


def test_no_gpiozero_import_at_module_import():
    import subprocess
    import sys

    code = "import sys, hardware.board, hardware.terminal, hardware.sim_window, firmware.runner, firmware.cli; print('gpiozero' in sys.modules, 'pygame' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
