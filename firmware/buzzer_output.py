"""The buzzer as an output: two short beeps when a player's time reaches 0:00, one long beep when
a game is forfeited (on overtime, 5.3.3, or lateness, 2.3.5). Tournament halls are quiet, so it is
off unless `[sound] buzzer = true`.
"""

from __future__ import annotations

from typing import Any

from rackside.game.clock import Ending, Phase
from rackside.firmware.outputs import Frame, Output, OutputContext, no_settings


def factory(context: OutputContext, settings: dict) -> "BuzzerOutput":
    no_settings(settings)
    return BuzzerOutput(context.board)


class BuzzerOutput(Output):
    def __init__(self, board: Any) -> None:
        self.board = board  # `hardware.board.Board`: its `beep` never raises
        self._out: tuple[bool, ...] | None = None  # each player's time is up, as last seen
        self._ending: Ending | None = None

    def view(self, frame: Frame, t_ns: int) -> None:
        v = frame.view
        out = tuple(p.remaining_ns <= 0 for p in v.players)
        if self._out is not None:  # the first frame (a restored game at 0:00, say) only sets the baseline
            if any(o and not was for o, was in zip(out, self._out)) and v.phase is not Phase.ENDED:
                self.board.beep("zero")
            if v.ending in (Ending.OVERTIME_FORFEIT, Ending.LATENESS_FORFEIT) and v.ending is not self._ending:
                self.board.beep("forfeit")
        self._out, self._ending = out, v.ending
