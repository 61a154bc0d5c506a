"""Regenerate docs/screens/public-overlay.png: a stream overlay fed by the console's live tourney.js.

A real event's TSH files (tests/data/tsh/july4-2025: round 3 paired, rounds 1 and 2 scored), a
private Mosquitto, a simulated clock at round 3's table 3 whose game ends, the console keeping its
live tourney.js ([console] tourney_js) in the folder it publishes the public hall to ([public]
folder), and a real static server of that folder (Python's http.server) serving Rackside's sample
overlay (docs/overlay/rackside-sample-overlay.html) beside it. The director records table 3's
result; the overlay, reading tourney.js unchanged every 2 s, shows it (the score marked new).
Debian's headless Chromium takes the screenshot at 1920x1080 over a plain backdrop (in OBS the
overlay's background is transparent over the stream).

    .venv/bin/python docs/tools/overlay_screens.py [OUT_DIR]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from _folder import screens_folder  # noqa: E402 (docs/tools/_folder.py, beside this script)
from _console import chromium, login, sim_hall, start_console  # noqa: E402 (docs/tools/_console.py)

from playwright.sync_api import sync_playwright  # noqa: E402

from rackside.hall.console.shell.config import PublicConfig  # noqa: E402
from rackside.hall.console.demohall.demo import Mosquitto, free_port  # noqa: E402

EVENT = ROOT / "tests" / "data" / "tsh" / "july4-2025"
OVERLAY = ROOT / "docs" / "overlay" / "rackside-sample-overlay.html"
SCRIPTS = {3: [(-1500, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))]}  # round 3, table 3: a game just ended
BACKDROP = "html { min-height: 100%; background: linear-gradient(135deg, #4a5a50, #1f2a24); }"  # the stream's picture, in OBS


def main() -> int:
    out = screens_folder(__doc__)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RACKSIDE_STATE_DIR"] = str(Path(tmp) / "state")  # a fresh results store, not the machine's
        www = Path(tmp) / "www"
        www.mkdir()
        shutil.copy(OVERLAY, www / "overlay.html")
        broker = Mosquitto(Path(tmp) / "broker", [3], stations=0)
        broker.start()
        server = start_console(broker, tsh=[EVENT / n for n in ("config.tsh", "a.t", "b.t")], round=3, tourney_js_dir=www,
                               public=PublicConfig(folder=www, every_s=1))
        sim = sim_hall(broker, [3], Path(tmp) / "journals")
        for n, steps in SCRIPTS.items():
            sim.script(n, steps)
        sim.start()
        port = free_port()
        static = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(www), str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with sync_playwright() as p:
                b = chromium(p)
                director = login(b, server.url)
                director.wait_for_function("""async () => (await (await fetch('/api/table/3')).json()).tile.result""", polling=500, timeout=30_000)
                overlay = b.new_page(viewport={"width": 1920, "height": 1080})
                deadline = time.monotonic() + 20
                while True:  # the static server binds its port as it starts
                    try:
                        overlay.goto(f"http://127.0.0.1:{port}/overlay.html?division=A&every=2")
                        break
                    except Exception:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.2)
                overlay.add_style_tag(content=BACKDROP)
                overlay.wait_for_function("() => document.querySelectorAll('#standings tr').length >= 8")
                recorded = director.evaluate("""async () => {
                  const csrf = (await (await fetch('/api/csrf')).json()).csrf;
                  const r = await fetch('/api/result/3', {method: 'POST', headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf},
                                                          body: JSON.stringify({slip: [420, 380], confirm: true})});
                  return [r.status, await r.json()];
                }""")
                assert recorded[0] == 200 and recorded[1].get("confirmed"), recorded
                overlay.wait_for_selector("#games td.fresh", timeout=30_000)
                overlay.screenshot(path=str(out / "public-overlay.png"))
                b.close()
        finally:
            static.terminate()
            static.wait(10)
            sim.close()
            server.stop()
            broker.stop()
    print(f"wrote {out}/public-overlay.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
