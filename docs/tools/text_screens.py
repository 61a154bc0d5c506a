"""Regenerate the text display's screenshots in docs/screens/text-*.png (docs/table.md, issue 40).

Each picture is a real sequence of inputs folded through the pure cores as the runner folds them
(`game.table.step`, `game.clock.apply`, `game.slip.apply`), the 4-digit texts from
`game.render` / `game.slip`, the text display's from `firmware.text_render` (20x4, the
reference LCD), drawn by the simulator window (keypad and text display) on SDL's dummy driver.
`SCENES` is also what tests/test_text_display.py checks: every message of the renderer's table is
in a scene, and every scene's picture is in docs/table.md.

    .venv/bin/python docs/tools/text_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from rackside.firmware import text_render
from rackside.game import render, table  # noqa: E402
from rackside.game import slip as slips  # noqa: E402
from rackside.game.call import SIDE, Call, CallAck  # noqa: E402
from rackside.game.checkin import CheckIn, Pairing, Seat, Typed  # noqa: E402
from rackside.game.clock import End, LateStart, Neutralise, Press, apply, new_clock, view  # noqa: E402
from rackside.game.slip import SlipKey, SlipOutcome, SlipSign  # noqa: E402

S = 1_000_000_000
COLS, ROWS = 20, 4
PAIRING = Pairing(1 * S, 3, (12, 31), 31, 5, ("Smith, Anna", "Jones, Bo"))  # round 3, table 5; Jones starts (TSH)
BOTH_IN = [PAIRING, CheckIn(21 * S, 1, 12), CheckIn(23 * S, 2, 31)]
PLAYED = [*BOTH_IN, Press(30 * S, 1), Press(900 * S, 2), End(1000 * S)]
OVERTIME = [*BOTH_IN, Press(30 * S, 1), Press((30 + 1500 + 61) * S, 2), End(1600 * S)]  # Jones 1:01 over: 20 points (5.3)


def typed(number: str, at_s: float):
    return [Typed(int((at_s + i * 0.3) * S), k) for i, k in enumerate(number)]


def slip_keys(text: str, at_s: float = 1100):
    return [SlipKey(int((at_s + i * 0.3) * S), k) for i, k in enumerate(text)]


# name: (inputs, the moment shown (seconds), extra: {"menu": texts, "restored": True, "keypad": False, "confirm": (side,
# number): a first press waiting for its second, firmware.table_session}, what it shows)
SCENES: dict[str, tuple[list, float, dict, str]] = {
    "text-before": ([PAIRING], 11.2, {}, "before the game: the table, the names, what to type"),
    "text-typing": ([PAIRING, *typed("12", 20)], 21.2, {}, "a number typed: press your own button"),
    "text-confirm": ([PAIRING, *typed("31", 20)], 21.2, {"confirm": (2, 31)},
                     "the first press: whose number it is, for that player to confirm (issue 40)"),
    "text-checked-in": (BOTH_IN, 29.2, {}, "both checked in, by name; who starts and who presses (2.2)"),
    "text-used": ([PAIRING, CheckIn(21 * S, 1, 31), CheckIn(23 * S, 2, 31)], 29.2, {},
                  "Smith typed Jones's number: Jones's own check-in is refused, said in words (USEd 31)"),
    "text-asking": ([PAIRING, CheckIn(21 * S, 1, 44)], 21.2, {}, "a number not paired here: the clock asks the console"),
    "text-wrong-table": ([PAIRING, CheckIn(21 * S, 1, 44), Seat(int(21.3 * S), 44, 14)], 26.2, {},
                         "44 plays at table 14 this round (tAbL 14)"),
    "text-not-paired": ([PAIRING, CheckIn(21 * S, 2, 77), Seat(int(21.3 * S), 77, None)], 26.2, {},
                        "77 is in no pairing of the round (nonE)"),
    "text-late": ([PAIRING, CheckIn(21 * S, 1, 12), LateStart(60 * S, (2,))], 90.2, {},
                  "the director started an absent player's time (2.3.2(a))"),
    "text-running": ([*BOTH_IN, Press(30 * S, 1)], 40.2, {}, "the game: who sits where"),
    "text-courtesy": ([*BOTH_IN, Press(30 * S, 1), Press(40 * S, 2)], 101.2, {}, "a courtesy draw (3.10.6)"),
    "text-paused": ([*BOTH_IN, Press(30 * S, 1), Neutralise(60 * S)], 61.2, {}, "neutralised (HOLd)"),
    "text-call": ([*BOTH_IN, Press(30 * S, 1), Call(400 * S, 2, "call-1", SIDE)], 442.2, {},
                  "the director called, waited for 0:42 (CALL)"),
    "text-call-seen": ([*BOTH_IN, Press(30 * S, 1), Call(400 * S, 2, "call-1", SIDE), CallAck(430 * S, "call-1")], 457.2, {},
                       "the director has seen the call (SEEn)"),
    "text-ended": (PLAYED, 1010.2, {}, "the end: the winner types the scores"),
    "text-ended-no-keypad": (PLAYED, 1010.2, {"keypad": False}, "the end on a clock without a keypad: the paper slip"),
    "text-slip-typing": ([*PLAYED, *slip_keys("412#38")], 1103.2, {}, "the slip: Jones's score being typed"),
    "text-slip-recount": ([*PLAYED, *slip_keys("400#390#")], 1105.2, {}, "a margin of 20 or less: a recount (5.5.1)"),
    "text-slip-signing": ([*PLAYED, *slip_keys("412#388#")], 1105.2, {}, "the result, each player to sign (5.4.1)"),
    "text-slip-tie": ([*PLAYED, *slip_keys("400#400##")], 1105.2, {}, "a tie, the recount declined"),
    "text-slip-penalties": ([*OVERTIME, *slip_keys("412#388#", 1700)], 1705.2, {}, "after a time penalty (5.3): 388 less 20"),
    "text-slip-signed-one": ([*PLAYED, *slip_keys("412#388#"), SlipSign(1110 * S, 1)], 1111.2, {}, "Smith signed: Jones to sign"),
    "text-slip-sent": ([*PLAYED, *slip_keys("412#388#"), SlipSign(1110 * S, 1), SlipSign(1111 * S, 2)], 1112.2, {},
                       "both signed: sent (SEnt)"),
    "text-slip-recorded": ([*PLAYED, *slip_keys("412#388#"), SlipSign(1110 * S, 1), SlipSign(1111 * S, 2),
                            SlipOutcome(1112 * S, "recorded")], 1113.2, {}, "the console recorded it (rEC)"),
    "text-slip-held": ([*PLAYED, *slip_keys("412#388#"), SlipSign(1110 * S, 1), SlipSign(1111 * S, 2),
                        SlipOutcome(1112 * S, "held", "scores disagree")], 1113.2, {}, "held for the director (HELd)"),
    "text-slip-refused": ([*PLAYED, *slip_keys("412#388#"), SlipSign(1110 * S, 1), SlipSign(1111 * S, 2),
                           SlipOutcome(1112 * S, "refused", "not this round")], 1113.2, {}, "refused by the console (rEF)"),
    "text-slip-disputed": ([*PLAYED, *slip_keys("412#388#"), SlipSign(1110 * S, 1), SlipSign(1111 * S, 2),
                            SlipOutcome(1112 * S, "refused", "another result is recorded", (10, 990))], 1113.2, {},
                           "another result recorded for this game: shown, and disputed at a player's own button (rEC, dISP)"),
    "text-restored": (BOTH_IN, 29.2, {"restored": True}, "after a power cut (rStd)"),
    "text-menu": (BOTH_IN, 29.2, {"menu": ("LEn", "25:00")}, "the director's menu"),
}
# Messages no scene here reaches.
NOT_IN_A_SCENE: set[str] = set()


def fold(inputs):
    """(table, clock, slip) after `inputs`, as the runner folds them."""
    t, c, s = table.Table(), new_clock(), None
    for e in inputs:
        if table.is_table_input(e):
            t, c = table.step(t, c, e)
        elif isinstance(e, slips.INPUT_TYPES):
            if s is None:
                s = slips.begin(view(c, c.since_ns))
            s = slips.apply(s, e)
        else:
            c = apply(c, e)
    return t, c, s


def scene(name: str) -> tuple[tuple[str, str], list[str], tuple[str, ...]]:
    """(the 4-digit texts, the renderer's lines, the 20x4 screen's first page) of a scene."""
    inputs, at_s, extra, _ = SCENES[name]
    t_state, clock, s = fold(inputs)
    t = int(at_s * S)
    v = view(clock, t)
    menu = extra.get("menu")
    restored = extra.get("restored", False)
    keypad = extra.get("keypad", True)
    if menu is not None:
        texts = menu
    elif s is not None and slips.texts(s, t) is not None:
        texts = slips.texts(s, t)
    else:
        texts = render.texts(v, t, table=t_state, keypad=keypad, restored_until_ns=t + S if restored else None)
    lines = text_render.screen(v, t, table=t_state, slip=s, keypad=keypad, menu=menu, restored=restored, confirm=extra.get("confirm"))
    return texts, lines, text_render.fit(lines, COLS, ROWS, 0)


def main(out: Path) -> None:
    from clock_screens import IdleBoard, StillKeypad

    from rackside.firmware.led_output import turn_leds
    from rackside.hardware.display import RecordingDisplay
    from rackside.hardware.sim_window import SimWindow
    from rackside.hardware.textdisplay import SimTextDisplay

    out.mkdir(parents=True, exist_ok=True)
    for name, (inputs, at_s, _, says) in SCENES.items():
        displays = [RecordingDisplay("left"), RecordingDisplay("right")]
        board = IdleBoard()
        lcd = SimTextDisplay(COLS, ROWS)
        window = SimWindow(board, displays, keypad=StillKeypad() if SCENES[name][2].get("keypad", True) else None, text_display=lcd)
        try:
            texts, _, shown = scene(name)
            _, clock, _ = fold(inputs)
            t = int(at_s * S)
            board.leds["left"], board.leds["right"] = turn_leds(view(clock, t), t)
            for display, text in zip(displays, texts):
                display.show(text)
            lcd.show(shown)
            window.save(str(out / f"{name}.png"))
            print(f"{out / name}.png: {' | '.join(texts)} / {' / '.join(r.rstrip() for r in shown)}: {says}")
        finally:
            window.close()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _folder import screens_folder

    main(screens_folder(__doc__))
