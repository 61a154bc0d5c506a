"""Registers the challenge station's subcommands: `judge`, `lexicon`, `log` (the engine) and
`kiosk` (the touchscreen)."""

from __future__ import annotations


def register(sub) -> None:
    from rackside.kiosk import engine_cli, station_cli

    engine_cli.register(sub)
    station_cli.register(sub)
