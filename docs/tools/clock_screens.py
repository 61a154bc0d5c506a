"""Regenerate the simulator screenshots in docs/screens/clock-*.png.

Each picture is a real game played through the pure core (`game.clock`), turned into display
texts by `game.render` and turn LEDs by `firmware.led_output.turn_leds` exactly as the firmware
does, handed to `RecordingDisplay`s and a still board as the drivers would be, and drawn by the
simulator window on SDL's dummy video driver.

    .venv/bin/python docs/tools/clock_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)

from rackside.game import render  # noqa: E402
from rackside.game.clock import End, Neutralise, Press, run, view  # noqa: E402
from rackside.firmware.led_output import turn_leds  # noqa: E402
from rackside.hardware.display import RecordingDisplay  # noqa: E402
from rackside.hardware.sim_window import SimWindow  # noqa: E402

S = 1_000_000_000


class IdleBoard:
    """No button is held in a still picture; the turn LEDs are as the scene sets them."""

    buzzing = False

    def __init__(self) -> None:
        self.leds = {"left": False, "right": False}

    def is_down(self, name: str) -> bool:
        return False

    def led_lit(self, side: str) -> bool:
        return self.leds[side]


def game(*presses_s: float):
    """Alternate presses (the right player starts the left player's time, 2.2) at these times."""
    return [Press(int(t * S), 2 if i % 2 == 0 else 1) for i, t in enumerate(presses_s)]


SCENES = {
    # t_ns is on a whole second plus 0.2 s, when colons are on and alternating displays show time
    "clock-running": (game(0, 372.5, 515.0, 618.2), 655.2),
    "clock-overtime": (game(0, 900, 1000), 1666.2),
    "clock-neutralised": (game(0, 372.5, 515.0) + [Neutralise(int(600 * S))], 640.2),
    # the turn LED: the right player's time runs, so the LED beside the right button is lit
    "clock-turn": (game(0, 372.5), 400.2),
    # neutralised, the other second: both displays say HOLd and both LEDs blink (here: on)
    "clock-neutralised-hold": (game(0, 372.5, 515.0) + [Neutralise(int(600 * S))], 641.2),
    "clock-ended": (game(0, 1400, 1500, 1620) + [End(int(1700 * S))], 1703.2),  # the penalties
}


class StillKeypad:
    """The optional keypad (issue 27 item 1) in a still picture: these keys held."""

    def __init__(self, *held: str) -> None:
        self.held = set(held)

    def is_down(self, key: str) -> bool:
        return key in self.held


def keypad_scene(out: Path) -> None:
    """clock-keypad.png: the window with a keypad fitted, the right player's time running and 5 held."""
    displays = [RecordingDisplay("left"), RecordingDisplay("right")]
    board = IdleBoard()
    window = SimWindow(board, displays, keypad=StillKeypad("5"))
    try:
        clock = run(game(0, 372.5))
        t = int(400.2 * S)
        board.leds["left"], board.leds["right"] = turn_leds(view(clock, t), t)
        for display, text in zip(displays, render.texts(view(clock, t), t)):
            display.show(text)
        window.save(str(out / "clock-keypad.png"))
        print(f"{out / 'clock-keypad'}.png: {' | '.join(d.text for d in displays)}, keypad 5 held")
    finally:
        window.close()


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    displays = [RecordingDisplay("left"), RecordingDisplay("right")]
    board = IdleBoard()
    window = SimWindow(board, displays)
    try:
        for name, (inputs, at_s) in SCENES.items():
            clock = run(inputs)
            t = int(at_s * S)
            board.leds["left"], board.leds["right"] = turn_leds(view(clock, t), t)
            for display, text in zip(displays, render.texts(view(clock, t), t)):
                display.show(text)
            window.save(str(out / f"{name}.png"))
            print(f"{out / name}.png: {' | '.join(d.text for d in displays)}")
    finally:
        window.close()
    keypad_scene(out)


if __name__ == "__main__":
    main(screens_folder(__doc__))

