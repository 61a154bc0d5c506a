"""Regenerate docs/screens/console-event-rules.png: the readiness page with the event's rules (issue 38),
and docs/screens/console-event-rules-page.png: the rules page, its challenge rule changed there.

A private Mosquitto (provisioned as a real hall), the console with `[event]` at 20 minutes and 5 points
a minute, and four simulated clocks as the director would start them (`rackside clock --simulate
--headless`, their clock.toml WESPA's): the console's new game goes to tables 1 to 3, so they run the
event's rules, and table 4 still runs its clock.toml's. Debian's headless Chromium draws the page;
then, on the rules page (/rules), the director sets the challenge rule to 10 points a challenge.

    .venv/bin/python docs/tools/console_event_rules_screen.py [OUT_DIR]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)
from _console import chromium, clock_process, login, start_console, stop_all  # noqa: E402 (docs/tools/_console.py)

from playwright.sync_api import sync_playwright  # noqa: E402

from rackside.hall.console.state import requests  # noqa: E402
from rackside.hall.console.demohall.demo import Mosquitto, demo_t_file  # noqa: E402
from rackside.hall.wire.eventrules import from_table  # noqa: E402

TABLES = [1, 2, 3, 4]


def main() -> int:
    out = screens_folder(__doc__)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        broker = Mosquitto(tmp / "broker", TABLES, stations=1)
        broker.start()
        (tmp / "A.t").write_text(demo_t_file(TABLES))
        server = start_console(broker, tsh=[tmp / "A.t"], state_dir=tmp / "state",
                               event=from_table({"game_time": "20:00", "penalty_per_minute": 5}))
        clocks = []
        try:
            for n in TABLES:
                clocks.append(clock_process(broker, tmp, n))
            tables = server.console.state.tables
            deadline = time.monotonic() + 60
            while not all(n in tables and tables[n].state for n in TABLES) and time.monotonic() < deadline:
                time.sleep(0.2)
            console = server.console
            cmd = requests.command({"cmd": "new_game"}, None, console.state.round.game_time_ms, "director", console.event.rules.command_rules())
            for n in TABLES[:3]:  # the round's new games, as "Start next round's games" sends them
                console.send(n, {**cmd, "id": f"screen-{n}"})
            while not all(tables[n].state["rules"]["penalty_per_minute"] == 5 for n in TABLES[:3]) and time.monotonic() < deadline:
                time.sleep(0.2)
            with sync_playwright() as p:
                b = chromium(p)
                page = login(b, server.url, {"width": 1500, "height": 700})
                page.click("#open-ready")
                page.wait_for_function("() => document.querySelectorAll('#ready tbody tr').length === 4"
                                       " && document.getElementById('rules').textContent.includes('table(s) 4')", timeout=30_000)
                page.wait_for_timeout(500)
                page.screenshot(path=str(out / "console-event-rules.png"), full_page=True)
                page.goto(server.url + "rules")
                page.wait_for_selector("body.rules-page[data-ready='1']")
                page.select_option("#rule-challenge_rule", "10-per-turn")
                page.click("#save")
                page.wait_for_function("() => document.getElementById('out').textContent.startsWith('Saved')", timeout=30_000)
                page.screenshot(path=str(out / "console-event-rules-page.png"), full_page=True)
                b.close()
        finally:
            stop_all(clocks, server, broker)
    print(f"wrote {out}/console-event-rules.png and {out}/console-event-rules-page.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
