"""The optional text display as a clock output (issue 40): one more output behind the clock's queue.

Each frame the runner shows is put into words by the pure renderer (firmware.text_render: a few
string operations on the runner's thread, after the 4-digit displays were told); when the words
changed they go into a one-slot mailbox, and the output's own thread writes them to the display
(an I2C LCD takes milliseconds). The runner never waits on the bus: a newer screen replaces one
not yet written (the bound: one screen waiting), so a slow or dead display never delays a press.
With no `[text_display]` the output is not built and the clock is as before.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from rackside.firmware import text_render
from rackside.firmware.outputs import Frame, Output, OutputContext, no_settings
from rackside.outage import Outage

log = logging.getLogger(__name__)


def factory(context: OutputContext, settings: dict) -> "TextDisplayOutput":
    no_settings(settings)
    return TextDisplayOutput(context.text_display)


def frame_lines(frame: Frame, t_ns: int) -> list[str]:
    """The renderer's lines for a frame (also what the tests and the docs' screenshots record)."""
    return text_render.screen(frame.view, t_ns, table=frame.table, slip=frame.slip, keypad=frame.keypad,
                              menu=frame.texts if frame.menu else None, restored=frame.restored, confirm=frame.confirm)


class TextDisplayOutput(Output):
    def __init__(self, display: Any) -> None:
        self.display = display
        self.cols, self.rows = display.cols, display.rows
        self.lines: list[str] = []  # the renderer's last lines (before fitting)
        self.shown: tuple[str, ...] | None = None  # the last screen handed to the thread
        self.ticking = False
        self._pending: tuple[str, ...] | None = None
        self._cond = threading.Condition()
        self._stop = False
        self._thread: threading.Thread | None = None
        self.outage = Outage(log, "text display")  # a display that raises (a plug-in's): logged once, kept

    def start(self) -> None:
        self._thread = threading.Thread(target=self._write_loop, name="text-display", daemon=True)
        self._thread.start()

    def view(self, frame: Frame, t_ns: int) -> None:
        self.lines = frame_lines(frame, t_ns)
        self.ticking = frame.table is not None and frame.table.calls.open is not None and not frame.menu
        screen = text_render.fit(self.lines, self.cols, self.rows, t_ns)
        if screen == self.shown:
            return
        self.shown = screen
        with self._cond:
            self._pending = screen  # replaces a screen not yet written: only the newest matters
            self._cond.notify()  # written by the thread once started (a frame before `start` waits for it)

    def next_due_ns(self, t_ns: int) -> int | None:
        return text_render.next_change_ns(self.lines, self.cols, self.rows, t_ns, ticking=self.ticking)

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _write_pending(self) -> None:
        with self._cond:
            screen, self._pending = self._pending, None
        if screen is None:
            return
        try:
            self.display.show(screen)  # hardware.textdisplay's never raise; another's might
        except Exception as exc:  # noqa: BLE001 - the writer thread must outlive a display's fault
            self.outage.failed(repr(exc))
            return
        self.outage.recovered()

    def _write_loop(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
            self._write_pending()
