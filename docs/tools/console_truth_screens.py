"""Regenerate the screenshots of what the screen tells (issue 23.4) in docs/screens/console-truth-*.png.

A real event's tourney.js (tests/data/tsh/july4-2025, whose `config.tables` gives TSH's own table
labels, A1, A2, ..., see tests/data/tsh/README.md), a private Mosquitto provisioned as a real hall
with a clock for each of division A's 25 round-1 boards, simulated clocks playing scripted games
(table 9 loses power mid-game), the console, and Debian's headless Chromium: the hall with TSH's
labels and the offline tile, a result form naming TSH's table, then round 1 shown again while
round 2 is under way.

    .venv/bin/python docs/tools/console_truth_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)
from _console import chromium, login, sim_hall, start_console  # noqa: E402 (docs/tools/_console.py)

from playwright.sync_api import sync_playwright  # noqa: E402

from rackside.hall.console.demohall.demo import Mosquitto  # noqa: E402

EVENT = ROOT / "tests" / "data" / "tsh" / "july4-2025"
TABLES = list(range(1, 26))  # round 1: division A's 25 boards (B is not paired yet)
END = [(-1200, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))]
RUNNING = [(-600, ("press", 2))] + [(s, ("turn",)) for s in range(7, 600, 7)]
SCRIPTS = {n: (END if n % 3 else RUNNING) for n in TABLES}
SCRIPTS.update({
    2: [(-1600, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))],  # side 1 99 s over: 20 off (5.3)
    9: [(-700, ("press", 2)), (4, ("offline",))],  # loses power with side 1's time running
})


def set_round(page, number: int) -> None:
    page.click("#open-round")
    page.fill("#r-number", str(number))
    page.click("#round-save")
    page.wait_for_selector("#round-dialog:not([open])", state="attached")


def main() -> int:
    out = screens_folder(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RACKSIDE_STATE_DIR"] = str(Path(tmp) / "state")  # a fresh results store, not the machine's
        broker = Mosquitto(Path(tmp) / "broker", TABLES, stations=0)
        broker.start()
        server = start_console(broker, tsh=[EVENT / "tourney.js"], round=1)
        sim = sim_hall(broker, TABLES, Path(tmp) / "journals")
        for n, steps in SCRIPTS.items():
            sim.script(n, steps)
        sim.start()
        try:
            with sync_playwright() as p:
                b = chromium(p)
                page = login(b, server.url)
                # 1. TSH's labels on every tile; table 9 offline, its times as its clock last said
                page.wait_for_selector('#tiles .tile[data-table="9"].offline', timeout=60_000)
                page.wait_for_selector('#tiles .tile[data-table="25"] .where >> text=A14')
                page.wait_for_timeout(2500)  # two of the page's frames: the offline tile has not moved
                page.screenshot(path=str(out / "console-truth-hall.png"), clip={"x": 0, "y": 0, "width": 1920, "height": 560})
                # 2. the result form and its confirmation name TSH's table
                page.click('#tiles .tile[data-table="2"]')
                page.wait_for_selector("#detail-result:not([hidden])", timeout=60_000)
                page.fill("#slip1", "410")
                page.fill("#slip2", "388")
                page.click("#result-form button[type=submit]")
                page.wait_for_selector("#confirm[open]")
                page.screenshot(path=str(out / "console-truth-form.png"))
                page.click("#confirm-ok")
                page.wait_for_selector("#result-out >> text=recorded")
                page.click("#detail .close")
                # 3. round 2 begins on tables 1-3, then the director looks back at round 1
                set_round(page, 2)
                for n in (1, 2, 3):
                    sim.act(n, ("new_game",))
                    sim.act(n, ("press", 2))
                page.wait_for_selector('#tiles .tile[data-table="2"].running')
                set_round(page, 1)
                page.wait_for_selector('#tiles .tile[data-table="2"] .note >> text="recorded 390–388"')
                page.wait_for_timeout(1500)
                page.screenshot(path=str(out / "console-truth-earlier.png"), clip={"x": 0, "y": 0, "width": 1920, "height": 560})
                b.close()
        finally:
            sim.close()
            server.stop()
            broker.stop()
    print(f"wrote {out}/console-truth-*.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
