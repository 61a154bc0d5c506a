"""The `rackside` command: one entry point whose subcommands are Rackside's programs.

Each subsystem registers its own subcommands (`firmware.cli`, `kiosk.cli`), so this module only
composes them and sets up logging; `rackside.paths` knows where configuration and state live.
"""

from __future__ import annotations

import argparse
import logging
import sys

__version__ = "0.1.0"

log = logging.getLogger("rackside")


def show_paths(args: argparse.Namespace) -> int:
    """`rackside paths`: where this machine's configuration and state are, as every command sees them."""
    from rackside import paths

    width = max(len(k) for k in paths.all_paths())
    for what, path in paths.all_paths().items():
        mark = "" if path.exists() else "  (not yet created)"
        print(f"{what:<{width}}  {path}{mark}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from rackside.firmware import cli as clock_cli
    from rackside.hall import cli as hall_cli
    from rackside.kiosk import cli as kiosk_cli

    parser = argparse.ArgumentParser(prog="rackside", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"rackside {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    clock_cli.register(sub)
    kiosk_cli.register(sub)
    hall_cli.register(sub)
    paths_cmd = sub.add_parser("paths", help="where configuration, state, journals, logs and lexicons are")
    paths_cmd.set_defaults(func=show_paths)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
