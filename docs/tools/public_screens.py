"""Regenerate the screenshots of the public hall (issue 28) in docs/screens/public-*.png.

A real event's TSH files (tests/data/tsh/july4-2025: round 3 paired, rounds 1 and 2 scored), a
private Mosquitto, simulated clocks at the first tables of round 3, the console with its public
listener ([public] listen), and Debian's headless Chromium: a phone finding a player's table, the
phone's standings and live tables (one neutralised, one ended, one offline, as the director's tiles
say them), and the hall screen (?screen) at 1920x1080.

    .venv/bin/python docs/tools/public_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)
from _console import chromium, sim_hall, start_console  # noqa: E402 (docs/tools/_console.py)

from playwright.sync_api import sync_playwright  # noqa: E402

from rackside.hall.console.shell.config import PublicConfig  # noqa: E402
from rackside.hall.console.demohall.demo import Mosquitto, free_port  # noqa: E402

EVENT = ROOT / "tests" / "data" / "tsh" / "july4-2025"
TABLES = list(range(1, 9))
SCRIPTS = {n: [(-300 - 40 * n, ("press", 2))] + [(s, ("turn",)) for s in range(5 + n, 900, 9)] for n in TABLES}
# what the live tables say as the director's tiles do (issue 35): a clock neutralised, a game ended, a clock gone dark
SCRIPTS[2].insert(1, (1, ("neutralise",)))
SCRIPTS[4].insert(1, (1, ("end",)))
SCRIPTS[6].insert(1, (1, ("offline",)))
PHONE = {"width": 390, "height": 844}


def main() -> int:
    out = screens_folder(__doc__)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RACKSIDE_STATE_DIR"] = str(Path(tmp) / "state")  # a fresh results store, not the machine's
        broker = Mosquitto(Path(tmp) / "broker", TABLES, stations=0)
        broker.start()
        port = free_port()
        server = start_console(broker, tsh=[EVENT / n for n in ("config.tsh", "a.t", "b.t")], round=3,
                               public=PublicConfig(listen_host="127.0.0.1", listen_port=port, every_s=1))
        sim = sim_hall(broker, TABLES, Path(tmp) / "journals")
        for n, steps in SCRIPTS.items():
            sim.script(n, steps)
        sim.start()
        url = f"http://127.0.0.1:{port}/"
        try:
            with sync_playwright() as p:
                b = chromium(p)
                page = b.new_page(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
                page.goto(url)
                page.wait_for_function("() => document.getElementById('status').textContent.startsWith('updated')")
                page.fill("#who", "Wapnick")
                page.wait_for_selector("#found .card")
                page.screenshot(path=str(out / "public-phone-find.png"))
                page.click("#tabs button[data-tab=standings]")
                page.wait_for_selector("#standings-table tr:nth-child(2)")
                page.screenshot(path=str(out / "public-phone-standings.png"))
                page.click("#tabs button[data-tab=live]")
                page.wait_for_function("() => document.querySelectorAll('.live-table .side.turn').length >= 4 && "
                                       "['challenge', 'finished', 'offline'].every((c) => document.querySelector(`.live-table[data-cls=${c}]`))")
                page.screenshot(path=str(out / "public-phone-live.png"))
                screen = b.new_page(viewport={"width": 1920, "height": 1080})
                screen.goto(url + "?screen")
                screen.wait_for_selector("#screen table tr:nth-child(2)")
                screen.screenshot(path=str(out / "public-hall-screen.png"))
                b.close()
        finally:
            sim.close()
            server.stop()
            broker.stop()
    print(f"wrote {out}/public-*.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
