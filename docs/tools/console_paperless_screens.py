"""Regenerate the screenshots of the paperless table on the director's page (docs/console.md, issue 27):
docs/screens/console-paperless-calls.png and console-paperless-start.png.

The tests' hall (tests/support/paperless.py: a private Mosquitto, `rackside hall console` as its own
process with division A's TSH files) and clocks with keypads publishing as such clocks do
(tests/support/keypadclock.py), in Debian's headless Chromium: players checked in at tables 2 and 3,
one at the wrong table, a call waiting, a slip held, then the one confirmation at the scheduled start.

    .venv/bin/python docs/tools/console_paperless_screens.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the tests' hall and clocks (support.*), as the tests run them
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)

from playwright.sync_api import sync_playwright  # noqa: E402

from support import browser as chromium  # noqa: E402
from support.paperless import PASSWORD, Hall  # noqa: E402
from support.wait import wait  # noqa: E402


def main() -> int:
    out = screens_folder(__doc__)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        hall = Hall(Path(tmp))
        try:
            for n in (1, 2, 3, 4, 5):
                hall.clock(n)
            two, three, four = hall.clocks[2], hall.clocks[3], hall.clocks[4]
            two.checkin(1, 3)
            two.checkin(2, 4)
            three.checkin(2, 5)
            hall.clocks[1].checkin(1, 6)  # Fox at table 1: told to go to table 3
            four.checkin(1, 7)
            four.checkin(2, 8)
            four.press(1)
            four.end(1500)
            wait(lambda: hall.tile(4)["result"])
            four.slip((380, 402), penalties=(10, 0))  # not the clock's penalties: held, with why
            hall.clocks[5].call(1)
            wait(lambda: hall.paperless()["held_slips"] and hall.paperless()["calls"])
            with sync_playwright() as p:
                b = chromium.launch(p)
                page = chromium.login(b, hall.console.url + "/", PASSWORD, viewport=(1400, 900))
                page.wait_for_function("() => document.querySelector('#open-calls').textContent.includes('Calls 1')")
                page.click("#open-calls")
                page.wait_for_selector("#call-list li.waiting")
                time.sleep(2.2)  # the queue's "waiting" counts on: a picture with a wait in it
                page.screenshot(path=str(out / "console-paperless-calls.png"))
                page.click("#calls .close")
                hall.post("/api/round", {"start": int(time.time()) - 60})
                page.wait_for_selector("#start-absent", state="visible")
                page.click("#start-absent")
                page.wait_for_selector("#confirm[open]")
                page.screenshot(path=str(out / "console-paperless-start.png"))
                b.close()
        finally:
            hall.close()
    print(f"wrote {out}/console-paperless-calls.png and console-paperless-start.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
