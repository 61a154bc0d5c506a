"""Regenerate the director's console screenshots in docs/screens/console-*.png.

A private Mosquitto (provisioned as a real hall), 100 simulated tables playing the demo's scripted
games, the console, and Debian's headless Chromium driven by Playwright: what `rackside hall demo`
shows, 45 seconds in (the challenge judged, a table offline, one in overtime).

    .venv/bin/python docs/tools/console_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)
from _console import chromium, login  # noqa: E402 (docs/tools/_console.py)

from playwright.sync_api import sync_playwright  # noqa: E402

from rackside.hall.console.demohall.demo import Mosquitto, start_hall  # noqa: E402


def main() -> int:
    out = screens_folder(__doc__)
    tables = list(range(1, 101))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RACKSIDE_STATE_DIR"] = str(Path(tmp) / "state")  # the console's store: this run's alone
        broker = Mosquitto(Path(tmp) / "broker", tables)
        broker.start()
        hall = start_hall(port=broker.port, devices=broker.devices, tables=tables, workdir=Path(tmp), password="screens")
        try:
            time.sleep(45)  # the demo's stories play out: challenge judged, table offline, overtime
            with sync_playwright() as p:
                b = chromium(p)
                page = login(b, hall.server.url)
                page.wait_for_timeout(1500)
                page.screenshot(path=str(out / "console-hall.png"))
                page.click('.tile[data-table="5"]')  # the challenge table: per-word results
                page.wait_for_selector("#detail-challenges .words li")
                page.wait_for_timeout(300)
                page.screenshot(path=str(out / "console-detail.png"))
                page.click("#detail .close")
                # the overtime game, once finished (its form is open before that too: a slip with no clock record)
                page.wait_for_selector('.tile[data-table="1"].finished', timeout=120_000)
                page.click('.tile[data-table="1"]')  # type the slip
                page.wait_for_selector("#detail-result:not([hidden])", timeout=120_000)
                page.fill("#slip1", "412")
                page.fill("#slip2", "398")
                page.click("#result-form button[type=submit]")
                page.wait_for_selector("#confirm[open]")
                page.screenshot(path=str(out / "console-result.png"))
                page.click("#confirm-ok")
                page.close()
                phone = login(b, hall.server.url, {"width": 390, "height": 844}, device_scale_factor=2)
                phone.wait_for_timeout(1000)
                phone.screenshot(path=str(out / "console-phone.png"))
                b.close()
        finally:
            hall.stop()
            broker.stop()
    print(f"wrote {out}/console-*.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())

