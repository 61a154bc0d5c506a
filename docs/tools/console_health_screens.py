"""Regenerate the health and readiness screenshots in docs/screens/console-health.png and
console-ready.png.

A private Mosquitto (provisioned as a real hall), the console with a round of six tables, and six
simulated clocks as the director would start them (`rackside clock --simulate --headless --fault
...`): four with faults injected, two reporting this machine's own health. Debian's headless
Chromium draws the hall and the readiness page.

    .venv/bin/python docs/tools/console_health_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)
from _console import chromium, clock_process, login, start_console, stop_all  # noqa: E402 (docs/tools/_console.py)

from playwright.sync_api import sync_playwright  # noqa: E402

from rackside.hall.console.demohall.demo import Mosquitto, demo_t_file  # noqa: E402

FAULTS = {1: ["undervoltage", "hot"], 2: ["unsynced"], 3: ["disk-full", "write-errors"], 4: ["wifi-weak", "undervoltage-earlier"],
          5: [], 6: []}


def main() -> int:
    out = screens_folder(__doc__)
    tables = sorted(FAULTS)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        broker = Mosquitto(tmp / "broker", tables, stations=1)
        broker.start()
        (tmp / "A.t").write_text(demo_t_file(tables))
        server = start_console(broker, tsh=[tmp / "A.t"], state_dir=tmp / "state")
        clocks = []
        try:
            for n, faults in FAULTS.items():
                clocks.append(clock_process(broker, tmp, n, faults))
            station = tmp / "station.toml"  # a challenge station beside them: `rackside hall station --fault disk-full`
            station.write_text(f'[log]\npath = "{tmp / "challenges.jsonl"}"\n\n[hall]\nurl = "{broker.url}"\n'
                               f'credentials = "{tmp / "broker" / "credentials" / "station-1.toml"}"\noutbox = "{tmp / "st-outbox.sqlite"}"\n')
            clocks.append(subprocess.Popen([sys.executable, "-m", "rackside", "hall", "station", "--config", str(station),
                                            "--fault", "disk-full"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           env={**os.environ, "RACKSIDE_STATE_DIR": str(tmp / "station-state")}))
            with sync_playwright() as p:
                b = chromium(p)
                page = login(b, server.url, {"width": 1280, "height": 560})
                page.wait_for_function("() => document.querySelectorAll('.tile[data-health]').length >= 6", timeout=60_000)
                page.wait_for_timeout(500)
                page.click("#tiles .tile[data-table='1']")  # the open table's tile: its problems in full
                page.wait_for_selector("#detail-tile .tile .health")
                page.wait_for_timeout(300)
                page.screenshot(path=str(out / "console-health.png"))
                page.click("#detail .close")
                page.click("#open-ready")
                page.wait_for_function("() => document.querySelectorAll('#ready tbody tr').length === 6"
                                       " && document.querySelectorAll('#stations tbody tr').length === 1", timeout=30_000)
                page.click("#thresholds-box summary")
                page.set_viewport_size({"width": 1500, "height": 900})
                page.wait_for_timeout(500)
                page.screenshot(path=str(out / "console-ready.png"), full_page=True)
                b.close()
        finally:
            stop_all(clocks, server, broker)
    print(f"wrote {out}/console-health.png, console-ready.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
