"""Registers the challenge station's subcommand: `kiosk` (the touchscreen). The judge core's
commands (`judge`, `lexicon`, `log`) are registered by `rackside.judge.cli`."""

from __future__ import annotations


def register(sub) -> None:
    from rackside.kiosk import station_cli

    station_cli.register(sub)
