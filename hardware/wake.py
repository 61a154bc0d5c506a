"""How a simulator's front end sleeps until there is something new to draw.

The runner changes what the simulated board shows on its own thread: it tells the recording
displays their texts and sets the turn LEDs and the buzzer. Each of those calls its watchers, and a
`Waker` is one: it writes a byte to a pipe, which the front end's `select` sleeps on beside its
input (the X connection, the terminal). So an idle front end wakes for changes and keys only,
never on a poll timer.
"""

from __future__ import annotations

import os
from typing import Any, Sequence


class Waker:
    def __init__(self) -> None:
        self._r, self._w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._watched: list[list] = []
        self.announced = True  # every display and the board announce their changes

    def fileno(self) -> int:
        return self._r

    def wake(self) -> None:
        """Make the sleeper look again (any thread; never blocks)."""
        try:
            os.write(self._w, b"\0")
        except OSError:  # the pipe is full (a wake-up is pending) or closed
            pass

    def drain(self) -> None:
        try:
            while os.read(self._r, 512):
                pass
        except OSError:  # empty (BlockingIOError) or closed
            pass

    def watch(self, displays: Sequence[Any], board: Any) -> None:
        """Be woken by `displays` (their `watchers` lists) and `board` (its `watch`). A display
        without watchers cannot announce: `announced` is then False and the sleeper must poll."""
        for display in displays:
            watchers = getattr(display, "watchers", None)
            if isinstance(watchers, list):
                watchers.append(self.wake)
                self._watched.append(watchers)
            else:
                self.announced = False
        watchers = getattr(board, "watchers", None)
        if isinstance(watchers, list):
            watchers.append(self.wake)
            self._watched.append(watchers)

    def close(self) -> None:
        for watchers in self._watched:
            if self.wake in watchers:
                watchers.remove(self.wake)
        self._watched.clear()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:  # closed already
                pass
        self._r = self._w = -1
