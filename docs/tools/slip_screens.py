"""Regenerate the result slip's simulator screenshots in docs/screens/slip-*.png (docs/table.md, "The signed result").

Each picture is a real game ended through the pure clock core (`game.clock`), its result slip
typed and signed through the slip's own core (`game.slip`), its texts drawn by `game.slip.texts`
as the runner shows them, handed to `RecordingDisplay`s and drawn by the simulator window, with its
keypad, on SDL's dummy video driver.

    .venv/bin/python docs/tools/slip_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)

from rackside.game import slip as slips  # noqa: E402
from rackside.game.clock import End, Press, run, view  # noqa: E402
from rackside.game.slip import SlipKey, SlipOutcome, SlipSign  # noqa: E402
from rackside.hardware.display import RecordingDisplay  # noqa: E402
from rackside.hardware.sim_window import SimWindow  # noqa: E402

S = 1_000_000_000
END_S = 1700


class IdleBoard:
    buzzing = False

    def is_down(self, name: str) -> bool:
        return False

    def led_lit(self, side: str) -> bool:
        return False


class StillKeypad:
    def __init__(self, *held: str) -> None:
        self.held = set(held)

    def is_down(self, key: str) -> bool:
        return key in self.held


def ended_slip():
    """Right starts left's time (2.2); left runs 61 s over: 20 points (5.3); the game ends."""
    c = run([Press(0, 2), Press(1561 * S, 1), End(END_S * S)])
    return slips.begin(view(c, c.since_ns))


def typed(s, keys: str):
    for i, k in enumerate(keys):
        s = slips.apply(s, SlipKey((END_S + 1) * S + i, k))
    return s


def signed(s, *players):
    for i, p in enumerate(players):
        s = slips.apply(s, SlipSign((END_S + 20) * S + i, p))
    return s


def scenes():
    """(name, slip, seconds into its cycle (a whole second + 0.2: a frame's start), the key held, what it shows)."""
    t = 2000
    s = ended_slip()
    yield "slip-typing", typed(s, "398#35"), t + 0.2, "5", "side 1's score typed, side 2's being typed (it blinks)"
    recount = typed(s, "398#368#")
    yield "slip-recount", recount, t + 1.2, "#", "398 - 20 = 378 against 368: margin 10, a recount offered (5.5.1)"
    sign = typed(s, "420#365#")
    for i, what in enumerate(("the scores as typed", "each side's time penalty (5.3)", "the result after penalties",
                              "the result after penalties", "each player signs at their button (5.4.1)")):
        yield f"slip-signing-{i + 1}", sign, t + i + 0.2, None, what
    yield "slip-signed-one", signed(sign, 2), t + 4.2, None, "player 2 has signed, player 1 not yet"
    final = signed(sign, 2, 1)
    yield "slip-sent", final, t + 1.2, None, "both signed: final, published to the hall"
    yield "slip-recorded", slips.apply(final, SlipOutcome((END_S + 30) * S, "recorded")), t + 1.2, None, "the console recorded it"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    displays = [RecordingDisplay("left"), RecordingDisplay("right")]
    keypad = StillKeypad()
    window = SimWindow(IdleBoard(), displays, keypad=keypad)
    try:
        for name, s, at_s, held, what in scenes():
            keypad.held = {held} if held else set()
            for display, text in zip(displays, slips.texts(s, int(at_s * S))):
                display.show(text)
            window.save(str(out / f"{name}.png"))
            print(f"{out / name}.png: {' | '.join(d.text for d in displays)}: {what}")
    finally:
        window.close()


if __name__ == "__main__":
    main(screens_folder(__doc__))
