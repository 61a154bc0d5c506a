"""Regenerate docs/screens/console-store-full.png: the result form when the console's disk is full.

A private Mosquitto, eight simulated tables of the demo (table 6 finished, waiting for its slip),
the console, and Debian's headless Chromium driven by Playwright. The results database is made full
for real with SQLite's own page limit (`PRAGMA max_page_count` at its current size, once results of
a scratch division have taken the last room in its pages): SQLite answers SQLITE_FULL, as on a full
disk, and the page shows the console's one message.

    .venv/bin/python docs/tools/console_store_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)
from _console import chromium, login  # noqa: E402 (docs/tools/_console.py)

from playwright.sync_api import sync_playwright  # noqa: E402

from rackside.hall.console.demohall.demo import Mosquitto, start_hall  # noqa: E402
from rackside.hall.console.scoring.results import ClockResult, Final, Recorded  # noqa: E402
from rackside.hall.console.scoring.resultstore import StoreError  # noqa: E402

FINISHED = 6  # demo_scripts: the sixth special table, "finished: waiting for the scorekeeper"


def fill(store) -> None:
    """Small results of a scratch division until SQLite's page limit refuses one: what room is left
    in its pages is less than any real result needs."""
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages}")
    clock = ClockResult(0, "game-000000", "end", (0, 0), (0, 0), (0, 0), (), None)
    for i in range(1, 10_000):
        try:
            store.record(Recorded.of("Z", 99, 0, (2 * i, 2 * i + 1), ("", ""), clock, (0, 0), Final((0, 0), (0, 0), ""),
                                     "", ""), "fill")
        except StoreError:
            return


def main() -> int:
    out = screens_folder(__doc__)
    tables = list(range(1, 9))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RACKSIDE_STATE_DIR"] = str(Path(tmp) / "state")
        broker = Mosquitto(Path(tmp) / "broker", tables)
        broker.start()
        hall = start_hall(port=broker.port, devices=broker.devices, tables=tables, workdir=Path(tmp), password="screens")
        try:
            with sync_playwright() as p:
                b = chromium(p)
                page = login(b, hall.server.url, {"width": 1280, "height": 900})
                page.click(f'.tile[data-table="{FINISHED}"]')
                page.wait_for_selector("#detail-result:not([hidden])", timeout=60_000)
                filled = threading.Event()
                store = hall.server.console.event.store  # owned by the console's event loop: filled there
                hall.server.console.loop.call_soon_threadsafe(lambda: (fill(store), filled.set()))
                filled.wait(30)
                page.fill("#slip1", "412")
                page.fill("#slip2", "398")
                page.click("#result-form button[type=submit]")
                page.wait_for_selector("#confirm[open]")
                page.click("#confirm-ok")
                page.wait_for_function("() => document.querySelector('#result-out').textContent.includes('NOT recorded')")
                page.screenshot(path=str(out / "console-store-full.png"))
                b.close()
        finally:
            hall.stop()
            broker.stop()
    print(f"wrote {out}/console-store-full.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
