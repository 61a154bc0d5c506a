"""The clock's hall output when it joins with the hall's join file (`[hall] join = ...`).

Until the director gives it a table number, the clock plays exactly as off the hall (its journal
keeps every input) and its displays show its code (hall.device.enrol), twelve digits in three
pages of four on the left display, `tAb1` to `tAb3` on the right saying which page, a page every
CODE_PAGE_S; once it has a number it
shows `tAbL` and the number before the first press and runs a HallOutput as that table, which
brings the journal's inputs from before to the hall (its resync). Renumbered: the old HallOutput
is closed and a new one started; revoked: closed, and the code is shown again.

The runner's thread only reads `self.inner` (one reference, swapped whole by the enrolment's
thread), so it never waits on the network.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

from rackside.game.messages import Request
from rackside.hall.device import joinfile as join
from rackside.hall.device.enrol import Enrolment
from rackside.hall.wire import join as join_wire

log = logging.getLogger(__name__)

WAITING = "tAbL"  # the right display while it waits for a table number (a 4-digit 7-segment word)
NUMBER_SHOWN_S = 0  # the table number stays up until the game's first press
CODE_PAGE_S = 2  # each page of the code stays up this long: long enough to read four digits and compare


def code_page(code: str, t_ns: int) -> tuple[str, str]:
    """What the displays show of `code` at `t_ns`: (its page, `tAb` and the page's number)."""
    pages = join_wire.code_pages(code)
    i = (t_ns // (CODE_PAGE_S * 1_000_000_000)) % len(pages)
    return pages[i], f"{WAITING[:3]}{i + 1}"


class EnrolledOutput:
    def __init__(self, joinfile: join.JoinFile, folder: Path, journal_dir: Path, submit: Callable[[Any], None], *,
                 outbox_path: Path, clock_ns: Callable[[], int], device: str | None = None, version: str = "",
                 health=None, keypad: bool = False) -> None:
        self.journal_dir = journal_dir
        self.keypad = keypad  # the table it becomes says so in its state (issue 27)
        self.health = health  # hall.device.health.Health: the table it becomes reports its health
        self.submit = submit
        self.outbox_path = outbox_path
        self.clock_ns = clock_ns
        self.inner = None  # the HallOutput of the table it now is; None while it waits
        self.enrolment = Enrolment(joinfile, folder, "clock", on_change=self._changed, device=device, version=version)
        self.code = self.enrolment.code
        self._shown: tuple[str, str] | None = None  # the code's page last shown; None once numbered
        self._waiting = True

    asks_table = True  # the director's menu offers tAbL: ask the director for a table number

    def ask_table(self, n: int) -> None:
        """The director's menu on this clock asked for table `n` (the runner's thread: never waits):
        the hello says so; the console shows it and the director confirms it there."""
        self.enrolment.ask(n)

    def _notice(self, left: str, right: str) -> None:
        self.submit(Request(self.clock_ns(), "notice", {"left": left, "right": right, "seconds": NUMBER_SHOWN_S}, source="hall"))

    def start(self) -> None:
        log.info("hall: device %s, code %s", self.enrolment.device, join_wire.code_text(self.code))
        self._page(self.clock_ns())
        self.enrolment.start()

    def _page(self, t_ns: int) -> None:
        page = code_page(self.code, t_ns)
        if page != self._shown:
            self._shown = page
            self._notice(*page)

    def _changed(self, user: str | None, cfg) -> None:
        """The enrolment's thread: a new table number (or none)."""
        from rackside.hall.device.clock_output import HallOutput

        old, self.inner = self.inner, None
        if old is not None:
            old.close()
        if cfg is None:
            self._shown, self._waiting = None, True
            self._page(self.clock_ns())
            return
        self._waiting = False
        new = HallOutput(cfg, self.journal_dir, self.submit, outbox_path=self.outbox_path, clock_ns=self.clock_ns,
                         health=self.health, keypad=self.keypad)
        new.start()
        self.inner = new
        self._notice(WAITING, f"{cfg.table:>4}")

    # --- the runner's thread: handed to the table's HallOutput when there is one --------------------

    def applied(self, entry) -> None:
        inner = self.inner
        if inner is not None:
            inner.applied(entry)

    def view(self, frame, t_ns: int) -> None:
        inner = self.inner
        if inner is not None:
            inner.view(frame, t_ns)
        elif self._waiting:
            self._page(t_ns)  # the next page of the code (a notice: shown while no game runs)

    def flush(self, t_ns: int) -> None:
        inner = self.inner
        if inner is not None:
            inner.flush(t_ns)

    def next_due_ns(self, t_ns: int) -> int | None:
        inner = self.inner
        if inner is not None:
            return inner.next_due_ns(t_ns)
        if self._waiting:
            step = CODE_PAGE_S * 1_000_000_000
            return (t_ns // step + 1) * step
        return None

    def close(self, timeout: float = 3.0) -> None:
        self.enrolment.close()
        inner, self.inner = self.inner, None
        if inner is not None:
            inner.close(timeout)
