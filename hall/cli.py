"""`rackside hall`: provision a hall, run its broker, watch its traffic.

    rackside hall provision --hall NAME --out DIR [--tables 1-60] [--stations 3] [--no-tls] [--bridge FILE]
    rackside hall broker --config DIR
    rackside hall station [--config station.toml]
    rackside hall tail --credentials DIR/credentials/director.toml [--url mqtt://HOST:PORT]
    rackside hall devices --credentials DIR/credentials/director.toml [assign DEVICE N | revoke DEVICE]
    rackside hall console [--config FILE]      the director's console (docs/console.md)
    rackside hall ready [--config FILE]        is every table of the round ready? (docs/console.md)
    rackside hall event [new NAME | archive]   the console's events: the next one, archiving the last (docs/console.md)
    rackside hall demo --tables 40             a private broker, simulated tables and the console
    rackside hall publish DEST [--watch]       copy the console's public view out with rclone (docs/publish.md)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("hall", help="the hall network: provision, broker, tail", description=__doc__.splitlines()[0])
    hs = p.add_subparsers(dest="hall_command", metavar="SUBCOMMAND", required=True)

    pr = hs.add_parser("provision", help="write a hall's broker config, TLS certificates, join file and director's credentials")
    pr.add_argument("--hall", required=True, help="the hall's name (letters, digits, . _ -), e.g. open2026")
    pr.add_argument("--tables", default="", help="tables made up front with their own credentials files, e.g. 1-60 "
                    "(default none: devices join with the join file and the director numbers them)")
    pr.add_argument("--stations", type=int, default=0, help="stations made up front likewise (ids 1..N)")
    pr.add_argument("--out", type=Path, required=True, metavar="DIR", help="where to write the files")
    tls = pr.add_mutually_exclusive_group()
    tls.add_argument("--tls", action="store_true", default=True, help="devices connect with TLS on 8883 (the default)")
    tls.add_argument("--no-tls", dest="tls", action="store_false", help="plain MQTT for devices too (passwords in clear)")
    pr.add_argument("--host", action="append", metavar="NAME", help="a host name or address devices and browsers use for "
                    "this machine, for its certificate (repeat; default: this machine's name, NAME.local, localhost, 127.0.0.1)")
    pr.add_argument("--port", type=int, default=1883, help="the plain MQTT listener's port, on 127.0.0.1 with TLS (default 1883)")
    pr.add_argument("--tls-port", type=int, default=8883, help="the devices' TLS listener's port (default 8883)")
    pr.add_argument("--bind", metavar="ADDRESS", help="listen on this address only (default: every interface)")
    pr.add_argument("--data", type=Path, metavar="DIR", help="the broker's persistence folder (default DIR/data)")
    pr.add_argument("--url", help='the URL written into every credentials file (default: none, so [hall] url or "auto")')
    pr.add_argument("--run-as", metavar="USER", help="the account Mosquitto drops to when started as root")
    pr.add_argument("--bridge", type=Path, metavar="FILE", help="bridge the public topics (tables' states, results, "
                    "statuses) out to a trusted partner's broker over TLS, as this TOML file says (docs/publish.md)")
    pr.set_defaults(func=run_provision)

    br = hs.add_parser("broker", help="run Mosquitto with a provisioned hall's config and advertise it by mDNS")
    br.add_argument("--config", type=Path, required=True, metavar="DIR", help="the folder `provision` wrote")
    br.add_argument("--no-mdns", action="store_true", help="do not advertise the broker by mDNS")
    br.set_defaults(func=run_broker)

    st = hs.add_parser("station", help="publish this challenge station's challenges to the hall (beside `rackside kiosk`)")
    st.add_argument("--config", type=Path, metavar="FILE", help="the station's config (default: station.toml in the config folder)")
    st.add_argument("--url", help="mqtt://HOST:PORT or auto (overrides [hall] url)")
    st.add_argument("--device-id", metavar="ID", help="with [hall] join: this device's id (default: the Pi's serial number, else /etc/machine-id)")
    st.add_argument("--fault", action="append", default=[], metavar="NAME",
                    help="simulate this health fault in the station's status (undervoltage, hot, disk-full, unsynced, ...; docs/hall.md)")
    st.set_defaults(func=run_station)

    tl = hs.add_parser("tail", help="print the hall's traffic as the director reads it")
    tl.add_argument("--credentials", type=Path, required=True, metavar="FILE", help="the director's credentials file")
    tl.add_argument("--url", help="mqtt://HOST:PORT (default: the credentials file's url, else auto: mDNS)")
    tl.add_argument("--raw", action="store_true", help="print topics and payloads as they are")
    tl.add_argument("--count", type=int, help="exit after this many messages")
    tl.add_argument("--seconds", type=float, help="exit after this many seconds")
    tl.set_defaults(func=run_tail)

    from rackside.hall.director import fleet_cli, publish
    from rackside.hall.console import cli as console_cli

    fleet_cli.register(hs)  # rackside hall devices
    publish.register(hs)  # rackside hall publish

    console_cli.register(hs)  # rackside hall console, rackside hall demo, rackside hall ready


def run_provision(args: argparse.Namespace) -> int:
    from rackside.hall.director import provision as prov
    from rackside.hall.director import tlsfiles
    from rackside.signing import SigningError

    try:
        tables = prov.parse_tables(args.tables) if args.tables else []
        if not 0 <= args.stations <= 99:
            raise ValueError(f"--stations {args.stations}: allowed are 0 to 99")
        check_provision_args(args)
        if args.url:
            from rackside.hall.net.config import HallConfigError, parse_url

            try:
                parse_url(args.url, "--url")
            except HallConfigError as e:
                raise ValueError(str(e)) from None
        bridge = None
        if args.bridge is not None:
            from rackside.hall.director import bridge as partner
            from rackside.hall.wire.topics import check_name

            bridge = partner.load(args.bridge, check_name("--hall", args.hall))
        prov.provision(args.out, args.hall, tables, args.stations, port=args.port, bind=args.bind,
                       tls=args.tls, data_dir=args.data, run_as=args.run_as, url=args.url, names=args.host,
                       tls_port=args.tls_port, bridge=bridge)
    except (ValueError, tlsfiles.TlsError, SigningError) as e:
        print(f"rackside hall provision: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a folder that cannot be made or written: its name and why, not a traceback
        print(f"rackside hall provision: {e.filename or args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    hint = prov.root_hint(args.run_as, os.geteuid())
    if hint:
        print(f"rackside hall provision: {hint}", file=sys.stderr)
    out = args.out.absolute()
    print(f"hall {args.hall!r}: a director, {len(tables)} table(s) and {args.stations} station(s) made up front")
    print(f"  broker config: {out / 'mosquitto.conf'} (run: rackside hall broker --config {out})")
    print(f"  join file:     {out / 'join.toml'} (the same on every device: docs/fleet.md)")
    print(f"  credentials:   {out / 'credentials'}/ (the director's; owner-only)")
    print(f"  update key:    {out / 'update-signing.key'} (owner-only: `rackside bundle --sign-key` signs with it)")
    if bridge is not None:
        print(f"  bridge:        the public topics out to {bridge.host}:{bridge.port} over TLS (mosquitto.conf is owner-only: it holds that login)")
    if args.tls:
        print(f"  TLS: the hall's CA and the broker's certificate in {out / 'tls'}/ (devices pin ca.crt from the join file)")
    else:
        print("  no TLS: every password crosses the hall's network in clear")
    return 0


HOST_NAME = r"(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?"  # RFC 1123


def check_provision_args(args: argparse.Namespace) -> None:
    """What provisioning writes into mosquitto.conf and the certificate, checked before anything is
    written: ValueError naming the option and what is allowed."""
    import ipaddress
    import re

    def address_or_name(option: str, value: str) -> None:
        try:
            ipaddress.ip_address(value)
        except ValueError:
            if not re.fullmatch(HOST_NAME, value):
                raise ValueError(f"{option} {value!r}: allowed are an IP address (192.168.1.10, ::1) or a host name "
                                 "(letters, digits and - between dots, e.g. director.local)") from None

    for option, port in (("--port", args.port), ("--tls-port", args.tls_port)):
        if not 1 <= port <= 65535:
            raise ValueError(f"{option} {port}: allowed are port numbers from 1 to 65535")
    if args.tls and args.port == args.tls_port:
        raise ValueError(f"--port and --tls-port are both {args.port}: the plain and TLS listeners need a port each")
    if args.bind is not None:
        address_or_name("--bind", args.bind)
    for name in args.host or []:
        address_or_name("--host", name)
    for option, folder in (("--out", args.out), ("--data", args.data)):
        if folder is not None and folder.exists() and not folder.is_dir():
            raise ValueError(f"{option} {folder}: not a folder (allowed is a folder, made if missing)")


def run_broker(args: argparse.Namespace) -> int:
    from rackside.hall.director import broker

    return broker.run(args.config, mdns=not args.no_mdns)


def run_station(args: argparse.Namespace) -> int:
    from rackside.hall.device import station
    from rackside.hall.wire.health import FaultError, check_faults

    try:
        check_faults(args.fault)
    except FaultError as e:
        print(f"rackside hall station: --fault: {e}", file=sys.stderr)
        return 2

    return station.run(args)


def run_tail(args: argparse.Namespace) -> int:
    from rackside.hall.director import tail
    from rackside.hall.net.config import HallConfigError, load_credentials

    try:
        creds = load_credentials(args.credentials)
        url = args.url or creds.url or "auto"
        from rackside.hall.net.config import parse_url

        parse_url(url, "--url")
    except HallConfigError as e:
        print(f"rackside hall tail: {e}", file=sys.stderr)
        return 2
    return tail.run(creds, url, raw=args.raw, count=args.count, seconds=args.seconds)
