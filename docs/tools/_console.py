"""What the console screenshot tools share: a console on a private broker, Debian's headless Chromium, a login.

Beside the scripts in docs/tools/ (imported as `_console`, as `_folder` is); the scripts put the repository
on sys.path before importing it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rackside.game.clock import Rules
from rackside.hall.console.shell.auth import hash_password
from rackside.hall.console.shell.config import ConsoleConfig
from rackside.hall.console.demohall.demo import HALL, free_port
from rackside.hall.console.shell.serve import ConsoleServer
from rackside.hall.console.demohall.sim import SimHall

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


def clock_process(broker, tmp: Path, n: int, faults=()) -> subprocess.Popen:
    """Table `n`'s clock as the director starts it, `rackside clock --simulate --headless` on `broker`
    (its clock.toml WESPA's, with `faults` injected: `--fault`)."""
    conf = tmp / f"clock{n}.toml"
    conf.write_text(f'[hall]\nurl = "{broker.url}"\ncredentials = "{tmp / "broker" / "credentials" / f"table-{n}.toml"}"\n')
    args = [sys.executable, "-m", "rackside", "clock", "--simulate", "--headless", "--config", str(conf),
            "--state-dir", str(tmp / f"state{n}")] + [a for f in faults for a in ("--fault", f)]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"})


def stop_all(processes, server, broker) -> None:
    """The processes a screenshot run started, then its console and broker."""
    for c in processes:
        c.terminate()
    for c in processes:
        c.wait(10)
    server.stop()
    broker.stop()


def sim_hall(broker, tables, journals: Path) -> SimHall:
    """Simulated clocks at `tables`, connected to `broker` with their own credentials (not yet started)."""
    sim = SimHall(HALL, "127.0.0.1", broker.port, {n: broker.devices[f"table-{n}"].login for n in tables}, journals, rules=Rules())
    sim.connect()
    return sim
