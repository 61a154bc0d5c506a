"""The one small interface every time display sits behind, and a recording fake of it.

A display is told a short text and shows it; it never asks the clock anything. Texts are what a
4- to 6-digit 7-segment module can show: digits, ':' (the colon segment), '-', ' ' and the
letters 7-segment displays can draw (for example "24:59", "-1:05", "-10:00", "HOLd", "End").
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Display(Protocol):
    def show(self, text: str) -> None:
        """Show `text`. Must not raise because the device is unplugged: log, and retry later."""

    def close(self) -> None:
        """Release the device."""


class RecordingDisplay:
    """A display that remembers everything it was told: the fake for tests and the source the
    simulated board reads back from."""

    def __init__(self, name: str = "display") -> None:
        self.name = name
        self.shown: list[str] = []
        self.closed = False

    @property
    def text(self) -> str:
        return self.shown[-1] if self.shown else ""

    def show(self, text: str) -> None:
        self.shown.append(text)

    def close(self) -> None:
        self.closed = True
