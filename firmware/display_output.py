"""The clock's displays as an output: each display is told its text only when the text changes.

The texts are the frame's (`game.render`, or the director's menu while it is open); a display
driver never asks the clock anything and never raises (`hardware.display`).
"""

from __future__ import annotations

from typing import Any, Sequence

from rackside.firmware.outputs import Frame, Output, OutputContext, no_settings


def factory(context: OutputContext, settings: dict) -> "DisplaysOutput":
    no_settings(settings)
    return DisplaysOutput(context.displays)


class DisplaysOutput(Output):
    def __init__(self, displays: Sequence[Any]) -> None:
        self.displays = tuple(displays)
        self.shown: list[str | None] = [None] * len(self.displays)

    def view(self, frame: Frame, t_ns: int) -> None:
        for i, (display, text) in enumerate(zip(self.displays, frame.texts)):
            if text != self.shown[i]:
                self.shown[i] = text
                display.show(text)
