"""`rackside hall console`, `rackside hall demo`, `rackside hall event` and `rackside hall ready`: registered under the `hall` command by
`register(sub_of_hall)`."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("console", help="the director's console: the whole hall in a browser",
                       description="Serve the director's console (docs/console.md).")
    p.add_argument("--config", type=Path, help="the hall config with a [console] section (default: CONFIG_DIR/hall.toml)")
    p.add_argument("--hash-password", action="store_true", help="ask for a password and print its scrypt hash for [console] password")
    p.set_defaults(func=_console)

    d = sub.add_parser("demo", help="a private broker, simulated tables and the console, in one command",
                       description="Start a private Mosquitto, simulated tables playing scripted games and the console.")
    d.add_argument("--tables", type=int, default=40, help="how many simulated tables (default 40)")
    d.add_argument("--port", type=int, default=8080, help="the console's port on 127.0.0.1 (default 8080; 0 picks a free one)")
    d.add_argument("--public", type=int, metavar="PORT",
                   help="serve the public hall too (read-only, no login: docs/public.md) on this port of 127.0.0.1 (0 picks a free one)")
    d.add_argument("--dir", type=Path, help="keep the broker's files and the journals here (default: a temporary directory)")
    d.add_argument("--fault", action="append", default=[], metavar="TABLE:NAME",
                   help="a simulated table reports this health fault (e.g. 3:undervoltage; names in docs/hall.md, \"Device health\")")
    d.set_defaults(func=_demo)

    e = sub.add_parser("event", help="the console's events: list them, start the next (archiving the last), archive one",
                       description="Each event keeps its own results, audit and sessions (docs/console.md, \"Events\"). "
                                   "With no action: list the events, the current one starred.")
    ev = e.add_subparsers(dest="event_action", metavar="ACTION")
    n = ev.add_parser("new", help="archive the current event and make NAME the current one")
    n.add_argument("name", metavar="NAME", help="the new event's name (letters, digits, . _ -), e.g. open2026-day2")
    a = ev.add_parser("archive", help="archive an event (default: the current one); no event is current after")
    a.add_argument("name", metavar="NAME", nargs="?", help="the event to archive (default: the current one)")
    e.set_defaults(func=_event)

    from .shell import ready_cli

    ready_cli.register(sub)  # rackside hall ready


def _console(args) -> int:
    from .shell import config, serve
    from .shell.auth import hash_password

    if args.hash_password:
        pw = getpass.getpass("director's password: ")
        if len(pw) < 8 or pw != getpass.getpass("again: "):
            print("rackside hall console: passwords differ or are shorter than 8 characters", file=sys.stderr)
            return 2
        print(hash_password(pw))
        return 0
    from rackside import paths

    path = args.config or paths.config_dir() / "hall.toml"
    try:
        cfg = config.load(path)
    except config.ConfigError as e:
        print(f"rackside hall console: {e}", file=sys.stderr)
        return 2
    from .shell.eventdir import EventError
    from .scoring.resultstore import StoreError

    try:
        return serve.run_foreground(cfg)
    except (StoreError, EventError) as e:  # another hall's or event's store, an event another console holds  # the results database cannot be opened: one line, the file never replaced
        print(f"rackside hall console: {e}", file=sys.stderr)
        return 2


def _event(args) -> int:
    from rackside import paths

    from .shell import eventdir

    state = paths.state_dir()
    try:
        if args.event_action == "new":
            where, old = eventdir.new(state, args.name)
            if old is not None:
                print(f"rackside hall event: the last event archived in {old}")
            print(f"rackside hall event: {args.name} is the current event ({where}); the console serves it from its next start")
        elif args.event_action == "archive":
            name = args.name or eventdir.current(state)
            if name is None:
                print("rackside hall event: no current event to archive (`rackside hall event` lists them)", file=sys.stderr)
                return 2
            print(f"rackside hall event: {name} archived in {eventdir.archive(state, name)}")
        else:
            lines = eventdir.listing(state)
            print("\n".join(lines) if lines else f"no events yet in {eventdir.events_dir(state)} (a console makes one at its first start)")
    except (eventdir.EventError, OSError) as e:
        print(f"rackside hall event: {e}", file=sys.stderr)
        return 2
    return 0


def _demo(args) -> int:
    from rackside.hall.wire import topics

    from .demohall import demo

    if not 1 <= args.tables <= topics.MAX_TABLE:
        print(f"rackside hall demo: --tables must be from 1 to {topics.MAX_TABLE}", file=sys.stderr)
        return 2
    if args.public is not None and not 0 <= args.public <= 65535:
        print("rackside hall demo: --public must be a port from 0 to 65535 (0 picks a free one)", file=sys.stderr)
        return 2
    try:
        args.faults = demo_faults(args.fault, args.tables)
    except ValueError as e:
        print(f"rackside hall demo: --fault: {e}", file=sys.stderr)
        return 2
    return demo.run(args)


def demo_faults(given: list[str], tables: int) -> dict[int, tuple[str, ...]]:
    """`--fault 3:hot --fault 3:unsynced` -> {3: ("hot", "unsynced")}; ValueError naming what is wrong."""
    from rackside.hall.wire.health import check_faults

    out: dict[int, tuple[str, ...]] = {}
    for item in given:
        n, _, name = item.partition(":")
        if not n.isdigit() or not 1 <= int(n) <= tables:
            raise ValueError(f"{item!r}: allowed is TABLE:NAME with a table from 1 to {tables}")
        out[int(n)] = out.get(int(n), ()) + check_faults([name])
    return out
