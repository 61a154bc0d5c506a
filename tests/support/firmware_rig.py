"""A table clock on gpiozero's mock pins with a fake monotonic clock, shared by the firmware tests
(registered as a pytest plugin in tests/conftest.py, so the `rig` fixture needs no import).

Nothing here sleeps: MockPin dates its edges with `gpiozero.pins.mock.monotonic`, which the rig
replaces with the same fake clock the runner reads, so a test sets the time, drives a pin, and
knows the exact nanosecond the edge happened.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rackside.game.clock import NS_PER_MS, Rules, view
from rackside.firmware.persist import GameStore
from rackside.firmware.runner import Runner
from rackside.hardware.board import Board
from rackside.hardware.display import RecordingDisplay

from support.clock import FakeClock
from support.disk import Disk

PINS = {"left": 17, "right": 27, "neutralise": 22}


class Rig:
    """Board + displays + journal store + runner, all driven by a fake clock."""

    def __init__(self, monkeypatch, state_dir: Path, *, rules: Rules | None = None, buzzer: bool = False,
                 open_displays=None, **runner_kwargs) -> None:
        """`open_displays(factory, clock)`: the two displays (default: recording ones), e.g. a real
        driver's on the rig's mock pins (tests/test_display_max7219.py); the test closes them."""
        import gpiozero.pins.mock as mock
        from gpiozero.pins.mock import MockFactory

        self.clock = FakeClock()
        monkeypatch.setattr(mock, "monotonic", self.clock.seconds)
        self.factory = MockFactory()
        self.rules = rules or Rules()
        self.board = Board(PINS, buzzer_pin=12 if buzzer else None, pin_factory=self.factory, clock_ns=self.clock)
        self.displays = open_displays(self.factory, self.clock) if open_displays else [RecordingDisplay("left"), RecordingDisplay("right")]
        self.state_dir = state_dir
        self.disk = Disk()  # the card: faults are injected here (support.disk)
        self.store = GameStore(state_dir, self.rules, boot_id="test-boot", disk=self.disk)
        from rackside.firmware.buzzer_output import BuzzerOutput
        from rackside.firmware.display_output import DisplaysOutput

        built = [DisplaysOutput(self.displays), *([BuzzerOutput(self.board)] if buzzer else [])]
        self.runner = Runner(
            rules=self.rules,
            store=self.store,
            outputs=[*built, *runner_kwargs.pop("outputs", ())],
            events=self.board.events,
            clock_ns=self.clock,
            initially_down=self.board.initially_down(),
            **runner_kwargs,
        )
        self.runner.start()

    # time
    @property
    def now(self) -> int:
        return self.clock.ns

    def at(self, t_ns: int) -> "Rig":
        assert t_ns >= self.clock.ns, "the fake clock never goes backwards"
        self.clock.ns = t_ns
        return self

    def after_ms(self, ms: float) -> "Rig":
        return self.at(self.clock.ns + round(ms * NS_PER_MS))

    # pins
    def down(self, button: str) -> "Rig":
        self.board.drive(button, True)
        return self

    def up(self, button: str) -> "Rig":
        self.board.drive(button, False)
        return self

    def tap(self, button: str, hold_ms: float = 80) -> int:
        """Press and release cleanly, and let the release settle (20 ms); the runner handles both.
        Returns the press's edge time."""
        t = self.now
        self.down(button).pump()
        self.after_ms(hold_ms).up(button).pump()
        self.advance_ms(20)
        return t

    def type_keys(self, text: str) -> "Rig":
        """Keypad keys pressed and released 60 ms apart, as the keypad's scanner delivers them."""
        from rackside.game.messages import Key

        for k in text:
            self.runner.submit(Key(self.now, k, True))
            self.after_ms(60)
            self.runner.submit(Key(self.now, k, False))
            self.after_ms(60)
        return self.pump()

    def pump(self) -> "Rig":
        self.runner.pump()
        return self

    def advance_to(self, t_ns: int) -> "Rig":
        """Let time pass to `t_ns`, waking the runner at every moment it asked to be woken (as
        its loop would), so displays and long presses are handled when they are due."""
        while True:
            due = self.runner.next_due_ns(self.now)
            if due is None or due > t_ns:
                break
            self.at(max(due, self.now)).pump()
        return self.at(t_ns).pump()

    def advance_ms(self, ms: float) -> "Rig":
        return self.advance_to(self.now + round(ms * NS_PER_MS))

    # what the clock shows
    def view(self):
        return view(self.runner.clock, max(self.now, self.runner.clock.since_ns or self.now))

    def remaining_ns(self, player: int) -> int:
        return self.view().players[player - 1].remaining_ns

    def texts(self) -> tuple[str, str]:
        return self.displays[0].text, self.displays[1].text

    def journal_inputs(self) -> list[dict]:
        import json

        lines = self.store.journal_path.read_text().splitlines()[1:]
        return [json.loads(line) for line in lines if line.strip()]

    def close(self) -> None:
        for name in PINS:  # open every contact: gpiozero's hold threads then stop at once
            self.board.drive(name, False)
        self.runner.close()
        self.board.close()
        self.store.close()


@pytest.fixture
def rig(monkeypatch, tmp_path):
    r = Rig(monkeypatch, tmp_path / "state")
    yield r
    r.close()


def make_rig(monkeypatch, tmp_path, **kwargs) -> Rig:
    return Rig(monkeypatch, tmp_path / "state", **kwargs)
