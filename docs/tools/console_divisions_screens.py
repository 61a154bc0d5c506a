"""Regenerate the screenshots of a multi-division day in docs/screens/console-day-*.png.

A real event's files (tests/data/tsh/albany-2024: config.tsh and its three divisions' .t files, see
tests/data/tsh/README.md), a private Mosquitto provisioned as a real hall with a clock for each of
round 1's 43 tables, simulated clocks playing scripted games (one overtime forfeit whose forfeiter
is still ahead, one lateness forfeit), the console, and Debian's headless Chromium.

    .venv/bin/python docs/tools/console_divisions_screens.py [OUT_DIR]
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

EVENT = ROOT / "tests" / "data" / "tsh" / "albany-2024"
TABLES = list(range(1, 44))  # round 1: A's 12 boards, B's 14, C's 17, hall-wide
END = [(-1200, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))]
SCRIPTS = {n: END for n in TABLES}
SCRIPTS.update({
    2: [(-2200, ("press", 2))],  # A board 2: side 1 ten minutes over, a forfeit (5.3.3)
    15: [(-1501, ("late_start", (2,)))],  # B board 3: side 2 never came (2.3.5)
    30: [(-120, ("press", 2))] + [(s, ("turn",)) for s in range(3, 300, 3)],  # still playing
})


def main() -> int:
    out = screens_folder(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RACKSIDE_STATE_DIR"] = str(Path(tmp) / "state")  # a fresh results store, not the machine's
        broker = Mosquitto(Path(tmp) / "broker", TABLES, stations=0)
        broker.start()
        server = start_console(broker)
        sim = sim_hall(broker, TABLES, Path(tmp) / "journals")
        for n, steps in SCRIPTS.items():
            sim.script(n, steps)
        sim.start()
        try:
            with sync_playwright() as p:
                b = chromium(p)
                page = login(b, server.url)
                # 1. the director imports the event's config.tsh and .t files (the file picker's files)
                page.click("#open-round")
                files = [{"name": f, "mimeType": "text/plain", "buffer": (EVENT / f).read_bytes()}
                         for f in ("config.tsh", "a.t", "b.t", "c.t")]
                page.set_input_files("#r-tsh", files)
                page.fill("#r-number", "1")
                page.click("#round-save")
                page.wait_for_selector("#round-out >> text=A: 24 players")
                page.screenshot(path=str(out / "console-day-import.png"))
                page.click("#round-form button[value=cancel]")
                # 2. every division on one screen
                page.wait_for_selector('#tiles .tile[data-table="43"] .where >> text=C')
                page.wait_for_timeout(2000)
                page.screenshot(path=str(out / "console-day-hall.png"))
                # 3. one division shown
                page.select_option("#show-division", "B")
                page.wait_for_selector('#tiles .tile[data-table="1"][hidden]', state="attached")
                page.wait_for_timeout(500)
                page.screenshot(path=str(out / "console-day-division.png"))
                page.select_option("#show-division", "")
                page.wait_for_selector('#tiles .tile[data-table="1"]:not([hidden])')
                # 4. the 5.3.3 case the director must decide
                page.click('#tiles .tile[data-table="2"]')
                page.wait_for_selector("#detail-result:not([hidden])", timeout=60_000)
                page.fill("#slip1", "482")
                page.fill("#slip2", "371")
                page.click("#result-form button[type=submit]")
                page.wait_for_selector("#decision-row:not([hidden])")
                page.fill("#decision1", "370")
                page.fill("#decision2", "371")
                page.fill("#decision-reason", "forfeit stands (5.3.3): recorded as a loss by 1")
                page.screenshot(path=str(out / "console-day-decision.png"))
                page.click("#result-form button[type=submit]")
                page.click("#confirm-ok")
                page.wait_for_selector("#result-out >> text=recorded")
                page.click("#detail .close")
                # 5. the lateness forfeit, and a game of each division, then the Results and exports
                for n, slip in ((15, None), (1, (455, 402)), (20, (398, 420)), (35, (377, 351))):
                    page.click(f'#tiles .tile[data-table="{n}"]')
                    page.wait_for_selector("#detail-result:not([hidden])", timeout=60_000)
                    if slip:
                        page.fill("#slip1", str(slip[0]))
                        page.fill("#slip2", str(slip[1]))
                    page.click("#result-form button[type=submit]")
                    page.click("#confirm-ok")
                    page.wait_for_selector("#result-out >> text=recorded")
                    page.click("#detail .close")
                page.click("#open-results")
                page.wait_for_selector("#export-links a")
                page.screenshot(path=str(out / "console-day-results.png"))
                b.close()
        finally:
            sim.close()
            server.stop()
            broker.stop()
    print(f"wrote {out}/console-day-*.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())

