"""`rackside hall devices`: the Devices page from a shell.

    rackside hall devices --credentials DIR/credentials/director.toml              list them
    rackside hall devices --credentials ... assign "1234 5678 9012" 12 [--replace]  the clock showing that code: table 12
    rackside hall devices --credentials ... assign CODE 1                         a station: station 1
    rackside hall devices --credentials ... revoke CODE|KEY
    rackside hall devices --credentials ... remove CODE|KEY                       revoke, and no longer list it
    rackside hall devices --credentials ... remove-waiting                        every row never answered (a hello flood)

An assignment names the code the device shows (hall.wire.join.code), never its id. A spare's
takeover is left with the broker (hall.director.handover), so this command ends at once and the
spare still continues the table's game when it comes online.

Logs in as the director (default URL: mqtt://127.0.0.1:1883, the broker's own machine), reads what
the broker holds (hellos, replies, statuses; hall.director.fleet), does the one thing and exits.
"""

from __future__ import annotations

import argparse
import sys

PLAIN_LOCAL = "mqtt://127.0.0.1:1883"


def register(hs) -> None:
    dv = hs.add_parser("devices", help="list, number or revoke the hall's devices (they join with the join file)")
    dv.add_argument("--credentials", required=True, metavar="FILE", help="the director's credentials file")
    dv.add_argument("--url", help=f"the broker (default: the credentials file's url, else {PLAIN_LOCAL})")
    what = dv.add_subparsers(dest="devices_command", metavar="ACTION")
    a = what.add_parser("assign", help="give a device a table number (clock) or station id (station)")
    a.add_argument("code", help="the code the device shows (12 digits; spaces allowed)")
    a.add_argument("number", help="the table number, or the station id")
    a.add_argument("--replace", action="store_true", help="take the table from the device holding it, even online")
    r = what.add_parser("revoke", help="disconnect a device and refuse it from now on")
    r.add_argument("device", metavar="CODE|KEY", help="its code, or its key as the list shows it")
    m = what.add_parser("remove", help="revoke a device and clear its hello: no longer listed")
    m.add_argument("device", metavar="CODE|KEY", help="its code, or its key as the list shows it")
    what.add_parser("remove-waiting", help="remove every device never numbered nor revoked (made-up hellos); "
                                           "real ones still on say hello again within 30 s")
    dv.set_defaults(func=run)


def table_text(rows: list[dict]) -> str:
    head = (f"{'code':<15} {'device':<20} {'kind':<8} {'state':<9} {'number':<7} {'online':<7} {'version':<10} "
            f"{'address':<15} key")
    lines = [head]
    for r in rows:
        number = str(r["table"] if r["table"] is not None else (r["station"] or "-"))
        code = r["code_text"] + ("!" if r["clash"] else "")
        lines.append(f"{code:<15} {r['device']:<20} {r['kind']:<8} {r['state']:<9} {number:<7} "
                     f"{'yes' if r['connected'] else 'no':<7} {r['version'][:10]:<10} {r['address']:<15} {r['key']}")
    if any(r["clash"] for r in rows):
        lines.append("! two devices show this code: neither is assigned until you remove the one not in front of you (by its key)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from rackside.hall.net.config import HallConfigError, load_credentials
    from rackside.hall.director.dynsec_api import ControlError
    from rackside.hall.director.fleet import Fleet, FleetError
    from rackside.hall.net.link import SESSION_EXPIRY_S
    from rackside.hall.net.client import connect

    try:
        creds = load_credentials(args.credentials)
    except HallConfigError as e:
        print(f"rackside hall devices: {e}", file=sys.stderr)
        return 2
    try:
        client = connect(creds, args.url or creds.url or PLAIN_LOCAL)
    except (ConnectionError, HallConfigError) as e:
        print(f"rackside hall devices: {e}", file=sys.stderr)
        return 1
    try:
        url = args.url or creds.url or PLAIN_LOCAL
        fleet = Fleet(creds.hall, client, connect_as=lambda cid: connect(creds, url, client_id=cid, session_expiry=SESSION_EXPIRY_S))
        if args.devices_command == "assign":
            user = fleet.assign(args.code, args.number, replace=args.replace)
            print(f"the device showing {args.code} is {user.replace('-', ' ')}")
        elif args.devices_command == "revoke":
            fleet.revoke(args.device)
            print(f"device {args.device} revoked: disconnected and refused")
        elif args.devices_command == "remove":
            fleet.remove(args.device)
            print(f"device {args.device} removed: revoked, and no longer listed")
        elif args.devices_command == "remove-waiting":
            print(f"{fleet.remove_waiting()} waiting device(s) removed")
        else:
            print(table_text(fleet.rows()))
        return 0
    except (FleetError, ControlError) as e:
        print(f"rackside hall devices: {e}", file=sys.stderr)
        return 1
    finally:
        client.disconnect()
        client.loop_stop()
