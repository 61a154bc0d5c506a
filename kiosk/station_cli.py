"""`rackside kiosk`: the touchscreen challenge station, and `--hash-pin` for its director PIN."""

from __future__ import annotations

import sys
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "kiosk",
        help="run the touchscreen challenge station",
        description="The challenge station (WESPA 3.10.7, 3.10.9): full screen on the Pi; only the director's PIN "
                    "leads out of it.",
    )
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="station config (TOML); default: <config dir>/station.toml")
    p.add_argument("--windowed", action="store_true", help="run in a window (a desktop), not full screen")
    p.add_argument("--size", metavar="WxH", help="window size for --windowed, e.g. 800x480 or 1920x1080")
    p.add_argument("--runner", action="store_true",
                   help="runner mode: an adjudicator types challenge slips (overrides station.mode)")
    p.add_argument("--hash-pin", action="store_true",
                   help="ask for a new director PIN and print the pin_hash line for the config, then exit")
    p.add_argument("--check-config", action="store_true", help="validate the config and the display, then exit")
    # logging=False: rackside.cli leaves logging to us; it is set up after the first idle frame,
    # so its ~5 ms are not spent before the station is on screen (issue 11).
    p.set_defaults(func=main, logging=False)


def main(args) -> int:  # an argparse.Namespace, or the fast path's SimpleNamespace (kiosk.cli)
    from rackside.kiosk.station_config import ConfigError, default_config_path, load_config, parse_size

    if args.hash_pin:
        return _hash_pin()
    path = args.config or default_config_path()
    try:
        config = load_config(path)
        size = parse_size(args.size, "--size") if args.size else None
    except ConfigError as exc:
        print(f"rackside kiosk: {exc}", file=sys.stderr)
        return 2
    if not config.pin_hash:
        print(f"rackside kiosk: {path}: director.pin_hash is not set, so nobody could leave the station. "
              "Make one with: rackside kiosk --hash-pin", file=sys.stderr)
        return 2
    from rackside.kiosk.app import KioskApp, NoDisplayError
    from rackside.kiosk.layout import Geometry, LayoutError, check_touch_targets

    fullscreen = False if args.windowed else config.fullscreen
    try:
        w, h = size or config.size
        check_touch_targets(Geometry.for_display(w, h, config.width_mm, config.height_mm))
    except LayoutError as exc:
        print(f"rackside kiosk: {path}: {exc}", file=sys.stderr)
        return 2
    if args.check_config:
        from rackside.kiosk.station_config import pin_hash_problem

        problem = pin_hash_problem(config.pin_hash)
        if problem:
            print(f"rackside kiosk: {path}: {problem}", file=sys.stderr)
            return 2
        print(f"{path}: OK ({config.mode} mode, station {config.name})")
        return 0
    app = KioskApp(config, size=size, fullscreen=fullscreen, mode="runner" if args.runner else None)
    try:
        return app.run(after_first_frame=lambda: _set_up_logging(args.verbose))
    except LayoutError as exc:  # the real screen turned out smaller than the config says
        print(f"rackside kiosk: {exc}", file=sys.stderr)
        return 2
    except NoDisplayError as exc:
        print(f"rackside kiosk: no display: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from rackside.judge.settings import SettingsError

        if isinstance(exc, SettingsError):
            print(f"rackside kiosk: {exc}", file=sys.stderr)
            return 2
        raise


def _set_up_logging(verbose: int) -> None:
    """As rackside.cli does for every other command (a subsystem may not import it)."""
    import logging

    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(verbose, 2)]
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _hash_pin() -> int:
    import getpass

    from rackside.kiosk.station_config import hash_pin, valid_pin

    if sys.stdin.isatty():
        pin = getpass.getpass("New director PIN (4-8 digits): ")
        if not valid_pin(pin):  # say so now, not after it has been typed twice
            print("rackside kiosk: the PIN must be 4 to 8 digits", file=sys.stderr)
            return 1
        if getpass.getpass("Again: ") != pin:
            print("rackside kiosk: the two PINs differ; nothing changed", file=sys.stderr)
            return 1
    else:
        pin = sys.stdin.readline().strip()
    if not valid_pin(pin):
        print("rackside kiosk: the PIN must be 4 to 8 digits", file=sys.stderr)
        return 1
    print(f'pin_hash = "{hash_pin(pin)}"')
    print("# put this line in the [director] section of the station config", file=sys.stderr)
    return 0
