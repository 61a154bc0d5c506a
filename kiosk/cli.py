"""Registers the challenge station's subcommand: `kiosk` (the touchscreen). The judge core's
commands (`judge`, `lexicon`, `log`) are registered by `rackside.judge.cli`."""

from __future__ import annotations


def register(sub) -> None:
    from rackside.kiosk import station_cli

    station_cli.register(sub)


def fast(argv: list[str]) -> int | None:
    """`rackside kiosk [--config FILE] [--windowed] [--runner] [--size WxH]`, as systemd and a
    director start the station, without argparse (~10 ms before the first idle frame, issue 11).
    Any other form (--help, --hash-pin, --check-config, an unknown option) returns None and goes
    through the full parser, which knows the same options."""
    values = {"config": None, "size": None}
    flags = {"--windowed": "windowed", "--runner": "runner"}
    seen: dict[str, object] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if arg in flags and flags[arg] not in seen:
            seen[flags[arg]] = True
            i += 1
            continue
        if name in ("--config", "--size") and name[2:] not in seen:
            if not eq:
                if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                    return None
                value, i = argv[i + 1], i + 1
            if not value:
                return None
            seen[name[2:]] = value
            i += 1
            continue
        return None
    from pathlib import Path
    from types import SimpleNamespace

    from rackside.kiosk import station_cli

    config = seen.get("config")
    args = SimpleNamespace(config=Path(config) if config else values["config"], size=seen.get("size", values["size"]),
                           windowed=bool(seen.get("windowed")), runner=bool(seen.get("runner")), hash_pin=False,
                           check_config=False, verbose=0)
    return station_cli.main(args)
