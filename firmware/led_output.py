"""The turn indicators as an output: an LED beside each player's button says whose time is running.

| Clock | Left LED (player 1) | Right LED (player 2) |
| --- | --- | --- |
| a player's time runs | lit beside the player whose time runs | |
| waiting for a late player (2.3) | lit beside the absent player whose time drains | |
| neutralised (1.4.3) | both blink together, in step with the displays' colons | |
| before and after a game | off | off |

Seen from across the table: one steady LED is a game in progress, two blinking LEDs a neutralised
clock (with `HOLd` on the displays, `game.render`). The LEDs follow the same frames as the
displays, so they change together; the blink is on the same half-second grid as the colons.
"""

from __future__ import annotations

from typing import Any

from rackside.game.clock import Phase, View
from rackside.firmware.outputs import Frame, Output, OutputContext, no_settings
from rackside.game.render import BLINK_NS


def turn_leds(v: View, t_ns: int) -> tuple[bool, bool]:
    """(left, right): which turn LEDs are lit at `t_ns`."""
    if v.phase is Phase.NEUTRALISED:
        on = (t_ns // BLINK_NS) % 2 == 0
        return on, on
    if v.phase is Phase.LATE:
        return v.players[0].absent, v.players[1].absent
    return v.players[0].running, v.players[1].running


def factory(context: OutputContext, settings: dict) -> "TurnLedsOutput":
    no_settings(settings)
    return TurnLedsOutput(context.board)


class TurnLedsOutput(Output):
    """Sets the board's turn LEDs (`Board.set_led`, which never raises) from each frame."""

    SIDES = ("left", "right")

    def __init__(self, board: Any) -> None:
        self.board = board
        self.lit: tuple[bool, bool] | None = None
        self._blinking = False

    def view(self, frame: Frame, t_ns: int) -> None:
        lit = turn_leds(frame.view, t_ns)
        self._blinking = frame.view.phase is Phase.NEUTRALISED
        if lit != self.lit:
            for side, on, was in zip(self.SIDES, lit, self.lit or (None, None)):
                if on != was:
                    self.board.set_led(side, on)
            self.lit = lit

    def next_due_ns(self, t_ns: int) -> int | None:
        """While blinking, the next half-second (the director's menu does not wake the runner on it)."""
        return (t_ns // BLINK_NS + 1) * BLINK_NS if self._blinking else None

    def close(self) -> None:
        for side in self.SIDES:
            self.board.set_led(side, False)
        self.lit = (False, False)
