#!/usr/bin/env python3
"""The red team's copied-card slip attacks (issue 36), from outside, against a running hall.

    RACKSIDE_DIRECTOR_PASSWORD=... tools/redteam/slip_clone.py --card table-1.toml \\
        --url mqtts://director.local:8883 --console https://director.local:8443 [--cafile ca.pem]

`--card` is a table's credentials file as a copied SD card holds it (user, password, the client id
the broker binds them to, the hall's CA). The attacks use only the card; the director's password is
used to read, on the console, what became of each slip (`/api/snapshot`), never to change anything.
Run it at a table whose game is running (attack 1) or has ended and not been signed (attack 2):

1. "slip while running": a slip 10-990 of the table's game, sent while its clock shows it running.
2. "signed as the clock": the second signature's input event and a slip 10-990, at the next seq of
   the clock's own sequence, as a clock sends them.

Each prints HELD (not recorded: held for the director, or ignored), BROKEN (recorded as signed) or
SKIPPED (attack 1 at a table whose game is not running).
Exit status 1 if any is BROKEN. Use it only against a hall you run (it takes the table's connection
from its clock for a moment, and its slips stay held for the director to reject).
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import ssl
import sys
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # a checkout without an install

from rackside.hall.net.client import connect  # noqa: E402
from rackside.hall.net.config import load_credentials  # noqa: E402
from rackside.hall.wire import topics  # noqa: E402

SCORES = [10, 990]


class Console:
    def __init__(self, base: str, password: str, cafile: str | None) -> None:
        ctx = ssl.create_default_context(cafile=cafile) if base.startswith("https") else None
        self.base = base.rstrip("/")
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()),
                                                  urllib.request.HTTPSHandler(context=ctx))
        csrf = self.get("/api/csrf")["csrf"]
        self.call("POST", "/api/login", {"password": password, "name": "red team (read only)"}, {"X-CSRF-Token": csrf})

    def call(self, method: str, path: str, body: dict | None = None, headers: dict | None = None) -> dict:
        req = urllib.request.Request(self.base + path, data=None if body is None else json.dumps(body).encode(),
                                     method=method, headers={"Content-Type": "application/json", **(headers or {})})
        with self.opener.open(req, timeout=10) as r:
            return json.loads(r.read())

    def get(self, path: str) -> dict:
        return self.call("GET", path)

    def table(self, n: int) -> tuple[dict, dict]:
        s = self.get("/api/snapshot")
        tile = next((t for t in s["tables"] if t["table"] == n), {})
        return tile, s["paperless"]


def verdict(console: Console, n: int, game: str, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        tile, paperless = console.table(n)
        final = tile.get("final") or {}
        if final.get("signed") and sorted(final.get("scores") or []) == SCORES:
            return "BROKEN (recorded as signed)"
        held = next((h for h in paperless["held_slips"] if h["table"] == n and h["slip"]["game"] == game
                     and h["slip"]["scores"] == SCORES), None)
        if held is not None:
            return f"HELD ({held['why'][:160]})"
        if time.monotonic() > deadline:
            return "HELD (neither recorded nor held: ignored)"
        time.sleep(0.2)


def attack(args, creds, console: Console, name: str, sign_first: bool) -> str:
    n = creds.table
    tile, paperless = console.table(n)
    state = tile.get("state") or {}
    if not state.get("game"):
        return f"SKIPPED (table {n} has no game on the console)"
    if not sign_first and state.get("phase") != "running":
        return f"SKIPPED (table {n}'s game is {state.get('phase')}, not running)"
    sides = next((c.get("sides") or {} for c in paperless["checkins"] if c.get("table") == n), {})
    numbers = [(sides.get(s) or {}).get("number") for s in ("1", "2")]  # who checked in, as the console shows it
    card = connect(creds, args.url, client_id=creds.mqtt_client_id)  # takes the clock's connection over
    try:
        seq = int(state.get("seq") or 0) + 1
        at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        topic = topics.table(creds.hall, n, "event")
        if sign_first:
            line = {"kind": "input", "game": state["game"], "seq": seq, "t_ns": time.monotonic_ns(), "input": "slip_sign",
                    "player": 2, "at": at}
            card.publish(topic, json.dumps(line), qos=1).wait_for_publish(10)
        slip = {"kind": "slip", "game": state["game"], "seq": seq, "scores": SCORES, "penalties": [0, 0],
                "final": SCORES, "numbers": numbers, "at": at}
        card.publish(topic, json.dumps(slip), qos=1).wait_for_publish(10)
    finally:
        card.loop_stop()
        card.disconnect()
    return verdict(console, n, state["game"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--card", required=True, help="the table's credentials file, as on its SD card")
    p.add_argument("--url", required=True, help="the broker: mqtt://HOST:PORT or mqtts://HOST:PORT")
    p.add_argument("--console", required=True, help="the console's base URL")
    p.add_argument("--cafile", help="the console's certificate (https)")
    args = p.parse_args(argv)
    password = os.environ.get("RACKSIDE_DIRECTOR_PASSWORD")
    if not password:
        p.error("RACKSIDE_DIRECTOR_PASSWORD must hold the console's password (to read the outcome)")
    creds = load_credentials(args.card)
    if creds.table is None:
        p.error(f"{args.card}: not a table's credentials")
    console = Console(args.console, password, args.cafile)
    broken = False
    for name, sign_first in (("slip while running", False), ("signed as the clock", True)):
        out = attack(args, creds, console, name, sign_first)
        broken = broken or out.startswith("BROKEN")
        print(f"{name}: {out}", flush=True)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
