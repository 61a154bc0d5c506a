"""What the console screenshot tools share: a console on a private broker, Debian's headless Chromium, a login.

Beside the scripts in docs/tools/ (imported as `_console`, as `_folder` is); the scripts put the repository
on sys.path before importing it.
"""

from __future__ import annotations

from pathlib import Path

from rackside.firmware.clock import Rules
from rackside.hall.console.auth import hash_password
from rackside.hall.console.config import ConsoleConfig
from rackside.hall.console.demo import HALL, free_port
from rackside.hall.console.serve import ConsoleServer
from rackside.hall.console.sim import SimHall

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PASSWORD = "screens"  # the console's password in every screenshot run


def chromium(p):
    """Debian's Chromium (not Playwright's download), headless."""
    return p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)


def login(b, url: str, viewport: dict | None = None, **page_args):
    """A new page logged in to the console at `url`, once the page says it is ready."""
    page = b.new_page(viewport=viewport or {"width": 1920, "height": 1080}, **page_args)
    page.goto(url + "login")
    page.fill("#password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-ready='1']")
    return page


def start_console(broker, **settings) -> ConsoleServer:
    """A console on `broker` as its director, with `settings` (ConsoleConfig's) on top."""
    director = broker.devices["director"]
    cfg = ConsoleConfig(hall=HALL, url=broker.url, username=director.user, mqtt_password=director.password,
                        password_hash=hash_password(PASSWORD), listen_port=free_port(), **settings)
    return ConsoleServer(cfg).start()


def sim_hall(broker, tables, journals: Path) -> SimHall:
    """Simulated clocks at `tables`, connected to `broker` with their own credentials (not yet started)."""
    sim = SimHall(HALL, "127.0.0.1", broker.port, {n: broker.devices[f"table-{n}"].login for n in tables}, journals, rules=Rules())
    sim.connect()
    return sim
