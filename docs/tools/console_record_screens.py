"""Regenerate the screenshots of recording each kind of game in docs/screens/console-record-*.png.

A private Mosquitto provisioned as a hall of three tables, simulated clocks running the real clock
core (table 1 plays to the end with side 1 99 s over; table 2 has no clock; table 3's clock broke
mid-game), the console, and Debian's headless Chromium. First a hall with TSH files (one division
of four players on tables 1 and 2; round 2 set while table 1's clock has its round-1 game), then a
hall without any (a club night).

    .venv/bin/python docs/tools/console_record_screens.py [OUT_DIR]
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

CONFIG_TSH = b"division A a.t\nconfig max_rounds = 2\n"
A_T = ("Adams, Ann             1500 2 3; ; board 1 2; p12 1 2\n"
       "Baker, Bob             1400 1 4; ; board 1 1; p12 2 1\n"
       "Cole, Cy               1300 4 1; ; board 2 2; p12 1 1\n"
       "Dunn, Di               1200 3 2; ; board 2 1; p12 2 2\n").encode("latin-1")
SCRIPTS = {
    1: [(-1600, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))],  # side 1 99 s over: 20 off (5.3)
    3: [(-300, ("press", 2))],  # a clock that broke mid-game: no result will come
}
TABLES = [1, 2, 3]


def console(broker, state: Path):
    os.environ["RACKSIDE_STATE_DIR"] = str(state)  # a fresh results store, not the machine's
    return start_console(broker)


VIEWPORT = {"width": 1400, "height": 900}


def open_form(page, n: int) -> None:
    page.click(f'#tiles .tile[data-table="{n}"]')
    page.wait_for_selector("#detail-result:not([hidden])", timeout=60_000)


def main() -> int:
    out = screens_folder(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        broker = Mosquitto(Path(tmp) / "broker", TABLES, stations=0)
        broker.start()
        sim = sim_hall(broker, SCRIPTS, Path(tmp) / "journals")
        # the console first: the clocks' results are events, not retained, so it must be listening
        server = console(broker, Path(tmp) / "state-tsh")
        for n, steps in SCRIPTS.items():
            sim.script(n, steps)
        sim.start()
        try:
            with sync_playwright() as p:
                b = chromium(p)
                # --- a hall with TSH files -------------------------------------------------------
                page = login(b, server.url, VIEWPORT)
                page.click("#open-round")
                page.set_input_files("#r-tsh", [{"name": "config.tsh", "mimeType": "text/plain", "buffer": CONFIG_TSH},
                                                {"name": "a.t", "mimeType": "text/plain", "buffer": A_T}])
                page.fill("#r-number", "1")
                page.click("#round-save")
                page.wait_for_selector("#round-out >> text=A: 4 players")
                page.click("#round-form button[value=cancel]")
                page.wait_for_selector('#tiles .tile[data-table="1"].finished', timeout=60_000)
                page.wait_for_selector('#tiles .tile[data-table="1"] .where >> text=A', timeout=10_000)
                # 1. a clock result: the slip's two scores, the clock's penalties
                open_form(page, 1)
                page.fill("#slip1", "410")
                page.fill("#slip2", "388")
                page.screenshot(path=str(out / "console-record-clock.png"))
                page.click("#result-form button[type=submit]")
                page.click("#confirm-ok")
                page.wait_for_selector("#result-out >> text=recorded")
                page.click("#detail .close")
                # 2. no clock result: the slip alone, its reason and its penalties
                open_form(page, 2)
                page.fill("#slip1", "402")
                page.fill("#slip2", "380")
                page.fill("#no-clock-reason", "no clock at this table")
                page.fill("#slip-pen2", "10")
                page.screenshot(path=str(out / "console-record-slip.png"))
                page.click("#result-form button[type=submit]")
                page.wait_for_selector("#confirm[open]")
                page.screenshot(path=str(out / "console-record-slip-confirm.png"))
                page.click("#confirm-ok")
                page.wait_for_selector("#result-out >> text=recorded")
                page.click("#detail .close")
                page.wait_for_selector('#tiles .tile[data-table="2"] .note >> text=no clock record')
                # 4. round 2 set while table 1's clock still has its round-1 game: the form says so
                page.click("#open-round")
                page.fill("#r-number", "2")
                page.click("#round-save")
                page.click("#round-form button[value=cancel]")
                page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text=round 1\'s game', timeout=10_000)
                open_form(page, 1)
                page.fill("#slip1", "")  # the form keeps what was typed for table 2
                page.fill("#slip2", "")
                page.screenshot(path=str(out / "console-record-other-round.png"))
                page.click("#detail .close")
                page.close()
                server.stop()
                # --- a hall without TSH files (the same clocks, a console of its own) -------------
                server = console(broker, Path(tmp) / "state-club")
                page = login(b, server.url, VIEWPORT)
                page.wait_for_selector('#tiles .tile[data-table="3"]', timeout=60_000)
                open_form(page, 3)
                page.fill("#name1", "Ann")
                page.fill("#name2", "Bob")
                page.fill("#slip1", "350")
                page.fill("#slip2", "361")
                page.fill("#no-clock-reason", "the clock broke")
                page.screenshot(path=str(out / "console-record-by-table.png"))
                page.click("#result-form button[type=submit]")
                page.click("#confirm-ok")
                page.wait_for_selector("#result-out >> text=recorded")
                page.click("#detail .close")
                page.click("#open-results")
                page.wait_for_selector("#export-links a")
                page.screenshot(path=str(out / "console-record-no-tsh-results.png"))
                page.close()
                b.close()
        finally:
            sim.close()
            server.stop()
            broker.stop()
    print(f"wrote {out}/console-record-*.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
