"""What several bench/ scripts share: a process's CPU time and memory read from /proc, a
percentile, a run that ends every process it started, `rackside hall console` as its own process,
and Debian's headless Chromium logged in to it. A bench imports it as `_common` (a script's
own folder is first on its path: `python bench/console_flood.py`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Callable, Iterable

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, user and system (/proc/PID/stat's utime and stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mib(pid: int) -> float:
    """The process's resident memory now (/proc/PID/statm), in MiB."""
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE / 2**20


def pct(values: list[float], q: float) -> float:
    """The `q`th percentile (0-100) of `values`, nearest rank."""
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def end_all(procs: Iterable[subprocess.Popen]) -> None:
    """Never leave the console, the broker or a worker behind: SIGTERM each one still running (a
    clean stop), SIGKILL if it has not ended after 10 s."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


_SCRATCH: list[Path] = []  # this run's folders (scratch): removed once its processes have ended


def scratch(prefix: str) -> Path:
    """A new temporary folder for this run (a broker's files, a console's state, journals), removed
    by guarded_run after every process it started has ended; kept, and named, when the run failed."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    _SCRATCH.append(folder)
    return folder


def guarded_run(name: str, run: Callable[[list, list], int]) -> int:
    """`run(procs, fleets)`'s exit status; whatever it started (processes appended to `procs`,
    simulated fleets to `fleets`) is closed whatever happens, the last started first (a worker
    before the console, the console before its broker), and its scratch folders removed (kept for
    a look when it failed)."""
    procs: list = []
    fleets: list = []
    status = 1
    try:
        status = run(procs, fleets)
        return status
    except Exception as e:  # a target so far off that a step timed out is a failed run, not a crash
        print(f"{name} FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return 1
    finally:
        for f in fleets:
            f.close()
        end_all(reversed(procs))
        for folder in _SCRATCH:
            if status == 0:
                shutil.rmtree(folder, ignore_errors=True)
            else:
                print(f"{name}: its files are kept in {folder}")
        _SCRATCH.clear()


def console_page(playwright, url: str, password: str):
    """Debian's headless Chromium and a 1920x1080 page logged in to the console at `url` (ending
    in /), once the page says it is ready: (browser, page)."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(url + "login")
    page.fill("#password", password)
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-ready='1']")
    expose_app(page)
    return browser, page


# The page's scripts are ES modules (no globals): a bench reads app.js's exports (tiles, visible,
# tables) through `window.app`, the module the page runs, set again after each load. A page of
# classic scripts (console_render's page before) keeps them as globals: no app.
EXPOSE_APP = ("(document.querySelector('script[type=module][src=\"/static/app.js\"]')"
              " ? import('/static/app.js').then((m) => { window.app = m; }) : Promise.resolve()).then(() => true)")


def expose_app(page) -> None:
    page.evaluate(EXPOSE_APP)


def start_console(broker, folder: Path, hall: str, password: str, procs: list, *, cwd: Path | None = None,
                  quiet: bool = False, drain: bool = True, extra: str = "", host: str = "127.0.0.1") -> tuple[subprocess.Popen, int]:
    """`rackside hall console` as its own process on `broker` (hall.console.demohall.demo's Mosquitto) as
    the director, on a free loopback port, its state in `folder`, run from the checkout `cwd` if
    given; appended to `procs` at once (so it is ended) and returned once it has printed its address,
    with its port. `quiet`: its stderr thrown away; `drain`: its stdout read on so it never blocks;
    `extra`: more [console] lines (certfile and keyfile for HTTPS); `host`: the address it listens on."""
    from rackside.hall.console.shell.auth import hash_password
    from rackside.hall.console.demohall.demo import free_port

    port = free_port()
    cfg = folder / "hall.toml"
    cfg.write_text(f'[console]\nhall = "{hall}"\nurl = "{broker.url}"\ncredentials = "{broker.dir / "credentials" / "director.toml"}"\n'
                   f'password = "{hash_password(password)}"\nlisten = "{host}:{port}"\n{extra}')
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(folder / "state")}
    console = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "console", "--config", str(cfg)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL if quiet else None, text=True, cwd=cwd)
    procs.append(console)
    console.stdout.readline()  # "rackside hall console: http://..."
    if drain:
        threading.Thread(target=lambda: [None for _ in console.stdout], daemon=True).start()
    return console, port
