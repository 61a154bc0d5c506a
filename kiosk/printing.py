"""The docket printer's own thread: the station's UI posts a docket and carries on; the printer's
answer comes back as a message the UI reads at its next step (issue 16 item 5).

A printer that is switched off takes a write timeout (up to about two of them) to fail. Printing on
the UI thread froze the screen for that long, and the touches made meanwhile had to be dropped
afterwards (they would have been stamped late, past the result's touch-ignore). Here the UI thread
never waits for the printer: touches and keys during a print are handled as they come, each at its
own time.

One owner per piece of state: the worker's thread owns the `DocketPrinter` (its port) from the
moment it is handed over, the UI thread owns `pending`; they share only the two queues.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import NamedTuple

from rackside.kiosk.docket import Docket, DocketPrinter

log = logging.getLogger(__name__)

# Dockets waiting for the printer, at most: one is posted per runner verdict, and a verdict takes a
# few seconds at the table, so even a printer timing out (about 1 s a docket) never has more than
# one waiting. A docket beyond the bound is reported at once as not printed (nothing is dropped
# silently, and memory stays bounded).
MAX_WAITING = 4


class Printed(NamedTuple):
    """The printer's answer for one docket."""

    challenge_id: str
    ok: bool
    why: str  # why it did not print ("" when it did)


_STOP = None  # the sentinel that ends the worker (always fits: the queue keeps a slot for it)


class DocketWorker:
    """Owns a `DocketPrinter` on its own thread. `post` and `answers` are for the UI thread."""

    def __init__(self, printer: DocketPrinter) -> None:
        self.printer = printer  # the worker thread's from now on (tests read its loop port once idle)
        self._todo: queue.Queue[Docket | None] = queue.Queue(maxsize=MAX_WAITING + 1)
        self._done: queue.SimpleQueue[Printed] = queue.SimpleQueue()
        self.pending = 0  # posted and not yet answered (UI thread only)
        self._thread = threading.Thread(target=self._run, name="docket-printer", daemon=True)
        self._thread.start()

    def post(self, docket: Docket) -> Printed | None:
        """Queue `docket` for the printer; None, or at once the answer when too many wait."""
        if self._todo.qsize() >= MAX_WAITING:  # only this thread adds: the check cannot go stale
            return Printed(docket.challenge_id, False, "the printer is still busy with earlier dockets")
        self._todo.put_nowait(docket)
        self.pending += 1
        return None

    def answers(self) -> list[Printed]:
        """The printer's answers that arrived since the last call (never waits)."""
        out = []
        while True:
            try:
                out.append(self._done.get_nowait())
            except queue.Empty:
                break
        self.pending -= len(out)
        return out

    def close(self, timeout: float = 3.0) -> None:
        """Stop after the docket being printed (those still waiting are not printed) and close the
        port, on the worker's thread; waits at most `timeout` s (a print is bounded by its write
        timeouts; past that the daemon thread ends with the process)."""
        while True:  # drop the waiting dockets: the station is stopping
            try:
                self._todo.get_nowait()
            except queue.Empty:
                break
        self._todo.put_nowait(_STOP)
        self._thread.join(timeout)

    def _run(self) -> None:
        while (docket := self._todo.get()) is not _STOP:
            try:
                ok, why = self.printer.print_docket(docket)  # never raises by contract; guarded anyway
            except Exception as exc:  # noqa: BLE001 - a printer bug must not end the printing thread
                log.exception("docket %s: printer failed", docket.challenge_id)
                ok, why = False, f"printer error ({type(exc).__name__})"
            self._done.put(Printed(docket.challenge_id, ok, why))
        self.printer.close()
