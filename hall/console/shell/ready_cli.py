"""`rackside hall ready [--config hall.toml] [--json]`: is every table of the round ready? The
console's readiness view (readiness.py) on the command line, without the console running or a
login: the round, the TSH files and the thresholds from the console's own store (its event's folder),
the clocks' retained statuses and states from the broker as the director. Exit 0 when every table
is ready, 1 when one is not, 2 when it cannot tell."""

from __future__ import annotations

import json
import queue
import sys
import time
import types
from pathlib import Path

SETTLE_S = 0.5  # the retained messages come at once after the subscription: this long without one, all are in
MOST_S = 5.0


def register(sub) -> None:
    p = sub.add_parser("ready", help="is every table of the round ready? (online, version, rules, clock sync, health, players)",
                       description="Print the console's readiness view of the round's tables (docs/console.md).")
    p.add_argument("--config", type=Path, help="the hall config with a [console] section (default: CONFIG_DIR/hall.toml)")
    p.add_argument("--json", action="store_true", help="print the view as one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    from rackside import paths
    from rackside.hall.net.client import connect
    from rackside.hall.wire import topics

    from . import config
    from ..fleet import readiness
    from .app import Console
    from ..scoring.resultstore import ResultStore, StoreError
    from .eventdir import EventError
    from .serve import RESULTS_DB, event_home, event_since, restore_event

    path = args.config or paths.config_dir() / "hall.toml"
    try:
        cfg = config.load(path)
    except config.ConfigError as e:
        print(f"rackside hall ready: {e}", file=sys.stderr)
        return 2
    try:  # the event's own store, read beside its console (no lock: this only reads); none made
        name, home = event_home(cfg, make=False)
        store = ResultStore(home / RESULTS_DB, identity={"hall": cfg.hall, "event": name}) if home.is_dir() else None
    except (EventError, StoreError) as e:
        print(f"rackside hall ready: {e}", file=sys.stderr)
        return 2
    console = Console(cfg.hall, cfg.password_hash, store=store)
    if store is not None:  # another event's clock games are not this round's (hallstate._foreign)
        console.state.event, console.state.event_since = name, event_since(store)
    restore_event(console, cfg)
    creds = types.SimpleNamespace(hall=cfg.hall, user=cfg.username, password=cfg.mqtt_password, tls_ca=cfg.ca_file)
    try:
        client = connect(creds, cfg.url)
    except ConnectionError as e:
        print(f"rackside hall ready: {e}", file=sys.stderr)
        return 2
    got: queue.Queue = queue.Queue()
    client.on_message = lambda c, u, msg: got.put((msg.topic, msg.payload))
    root = topics.hall_root(cfg.hall)
    for t in (f"{root}/table/+/status", f"{root}/table/+/state", f"{root}/station/+/status"):
        client.subscribe(t, qos=1)
    deadline = time.monotonic() + MOST_S
    try:
        while time.monotonic() < deadline:
            try:
                topic, payload = got.get(timeout=SETTLE_S)
            except queue.Empty:
                break
            console.state.on_message(topic, payload)
    finally:
        client.disconnect()
        client.loop_stop()
    rd = console.state.round
    view = readiness.view(console.state.tables, rd.game_time_ms, rd.number, console.state.stations, console.event.rules)
    print(json.dumps(view, indent=1) if args.json else readiness.text(view))
    return 0 if not view["not_ready"] else 1
