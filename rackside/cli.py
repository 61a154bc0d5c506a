"""The `rackside` command: one entry point whose subcommands are Rackside's programs.

Each subsystem registers its own subcommands (`firmware.cli`, `kiosk.cli`), so this module only
composes them, sets up logging, and knows where configuration and state live.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

__version__ = "0.1.0"

log = logging.getLogger("rackside")


def config_dir() -> Path:
    """Where a director's configuration lives: $RACKSIDE_CONFIG_DIR, else /etc/rackside on an
    installed Pi (when it exists), else ~/.config/rackside."""
    env = os.environ.get("RACKSIDE_CONFIG_DIR")
    if env:
        return Path(env)
    if Path("/etc/rackside").is_dir():
        return Path("/etc/rackside")
    return Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config")) / "rackside"


def state_dir() -> Path:
    """Where journals, checkpoints, logs and compiled lexicons are written: $RACKSIDE_STATE_DIR
    (systemd's StateDirectory sets it on a Pi), else ~/.local/share/rackside."""
    env = os.environ.get("RACKSIDE_STATE_DIR") or os.environ.get("STATE_DIRECTORY")
    if env:
        return Path(env.split(":")[0])
    return Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "rackside"


def build_parser() -> argparse.ArgumentParser:
    from rackside.firmware import cli as clock_cli
    from rackside.kiosk import cli as kiosk_cli

    parser = argparse.ArgumentParser(prog="rackside", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"rackside {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    clock_cli.register(sub)
    kiosk_cli.register(sub)
    from rackside.hall.console import cli as console_cli

    hall = sub.add_parser("hall", help="the hall network and the director's console")
    console_cli.register(hall.add_subparsers(dest="hall_command", metavar="COMMAND", required=True))
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
