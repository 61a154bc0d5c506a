"""Regenerate the check-in and call screenshots in docs/screens/table-*.png (docs/table.md).

Each picture is a real sequence of inputs folded through the pure cores exactly as the runner folds
them (`game.table.step` for the table's inputs, `game.clock.apply` for the clock's), turned
into display texts by `game.render` (with the keypad fitted) and drawn by the simulator window,
keypad included, on SDL's dummy video driver.

    .venv/bin/python docs/tools/table_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)
from clock_screens import IdleBoard, StillKeypad  # noqa: E402
from text_screens import S, fold, typed  # noqa: E402 (the text display's scenes fold inputs the same way)

from rackside.game import render  # noqa: E402
from rackside.game.call import SIDE, Call, CallAck  # noqa: E402
from rackside.game.checkin import CheckIn, Pairing, Seat  # noqa: E402
from rackside.game.clock import Press, view  # noqa: E402
from rackside.firmware.led_output import turn_leds  # noqa: E402
from rackside.hardware.display import RecordingDisplay  # noqa: E402
from rackside.hardware.sim_window import SimWindow  # noqa: E402

PAIRING = Pairing(1 * S, 3, (12, 31), 31, 5)  # round 3 at table 5: 12 against 31, who starts (TSH)


# name: (inputs, the moment shown (seconds), keys held, what it shows)
SCENES = {
    "table-before": ([PAIRING], 11.2, (), "before the game: each side alternates its time with its table"),
    "table-typing": ([PAIRING, *typed("12", 20)], 21.2, ("2",), "a player types their number"),
    "table-checked-in": ([PAIRING, *typed("12", 20), CheckIn(21 * S, 1, 12), *typed("31", 22), CheckIn(23 * S, 2, 31)], 29.2, (),
                         "both checked in: the number on each side, 1St on TSH's starter's (2.1)"),
    "table-wrong-table": ([PAIRING, *typed("44", 20), CheckIn(21 * S, 1, 44), Seat(int(21.3 * S), 44, 14)], 26.2, (),
                          "44 plays at table 14 this round: tAbL 14 on that side"),
    "table-used": ([PAIRING, *typed("31", 20), CheckIn(21 * S, 1, 31), *typed("31", 22), CheckIn(23 * S, 2, 31)], 28.2, (),
                   "31 is checked in on the left already: the right side's check-in is refused, USEd 31 (issue 40)"),
    "table-call": ([PAIRING, CheckIn(21 * S, 1, 12), CheckIn(23 * S, 2, 31), Press(30 * S, 1), Call(400 * S, 2, "call-1", SIDE)], 403.2, ("#",),
                   "the director called: neutralised (1.4.3), CALL on both"),
    "table-call-seen": ([PAIRING, CheckIn(21 * S, 1, 12), CheckIn(23 * S, 2, 31), Press(30 * S, 1), Call(400 * S, 2, "call-1", SIDE),
                         CallAck(430 * S, "call-1")], 433.2, (), "the director has seen the call: SEEn"),
}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, (inputs, at_s, held, says) in SCENES.items():
        displays = [RecordingDisplay("left"), RecordingDisplay("right")]
        board = IdleBoard()
        window = SimWindow(board, displays, keypad=StillKeypad(*held))
        try:
            t_state, clock, _ = fold(inputs)
            t = int(at_s * S)
            v = view(clock, t)
            board.leds["left"], board.leds["right"] = turn_leds(v, t)
            for display, text in zip(displays, render.texts(v, t, table=t_state, keypad=True)):
                display.show(text)
            window.save(str(out / f"{name}.png"))
            print(f"{out / name}.png: {' | '.join(d.text for d in displays)}: {says}")
        finally:
            window.close()


if __name__ == "__main__":
    main(screens_folder(__doc__))
