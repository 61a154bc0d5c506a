"""Provisioning a hall: Mosquitto's config, the dynamic-security plugin's initial clients and
roles, the hall's TLS certificates, the join file every device shares, and credentials files.

    rackside hall provision --hall open2026 --out DIR [--tables 1-60] [--stations 3] [--no-tls]

writes

    DIR/mosquitto.conf            TLS listener (8883) for devices, plain 1883 on 127.0.0.1 only,
                                  persistence, no anonymous access, the dynamic-security plugin
    DIR/dynamic-security.json     the plugin's config: the director, the join client, any table or
                                  station made up front, and every device enrolled before (kept from
                                  the file this replaces); the broker rewrites it as devices enrol
    DIR/tls/                      the hall's CA and the broker's certificate (hall.director.tlsfiles)
    DIR/join.toml                 the one file for every device: hall, broker URL or "auto", the CA
                                  certificate, the join secret, the update key's public half (hall.wire.join)
    DIR/update-signing.key        the hall's update signing key (Ed25519, owner-only; rackside.signing):
                                  `rackside bundle --sign-key` signs with it; kept when re-provisioning
    DIR/credentials/director.toml and, with --tables/--stations, table-3.toml, station-1.toml: owner-only;
                                  a table's or station's holds its client id too, with a random tail
                                  (`table-3-<16 hex>`, hall.director.dynsec.client_id) the plugin binds
                                  it to, so a join-file holder cannot name it and knock the device off

With `--bridge FILE`, mosquitto.conf also bridges the public topics out to a trusted partner's
broker over TLS (hall.director.bridge); it is then owner-only like the rest (it holds that login).

Passwords are hashed here as Mosquitto hashes them (`$7$`: 101 iterations of PBKDF2-HMAC-SHA512, a
12-byte salt, a 64-byte hash; mosquitto's password_mosq.c), so no password ever goes on a command
line (visible in `ps`) and the machine that provisions needs no broker package.
tests/test_hall_acl.py checks the hash against `mosquitto_passwd`'s and proves the broker accepts
every provisioned login. Who may do what is hall.director.dynsec's.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from rackside import signing
from rackside.atomic import write_atomic
from rackside.hall.director import dynsec, tlsfiles
from rackside.hall.director.bridge import Bridge, conf_lines as bridge_lines
from rackside.hall.wire import topics

PBKDF2_ITERATIONS = 101  # what mosquitto_passwd 2.0 writes (PW_DEFAULT_ITERATIONS)
SALT_BYTES = 12
HASH_BYTES = 64
DEFAULT_PORT = 1883
TLS_PORT = 8883
# The broker refuses larger packets outright; the clock refuses a command larger than its own
# limit (hall.wire.commands.MAX_COMMAND_BYTES) with an ack, so that limit is well below this one.
MAX_PACKET_BYTES = 256 * 1024
DYNSEC_FILE = "dynamic-security.json"


def hash_password(password: str, salt: bytes | None = None, iterations: int = PBKDF2_ITERATIONS) -> str:
    """One password-file hash, exactly as `mosquitto_passwd` 2.0 writes it."""
    salt = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, iterations, HASH_BYTES)
    return f"$7${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def check_password(password: str, hashed: str) -> bool:
    try:
        _, kind, iterations, salt, digest = hashed.split("$")
        if kind != "7":
            return False
        expected = hash_password(password, base64.b64decode(salt), int(iterations))
    except ValueError:
        return False
    return secrets.compare_digest(expected, hashed)


def parse_tables(text: str) -> list[int]:
    """ "1-60" or "1-10,15,20-22" -> the table numbers, sorted, each once."""
    tables: set[int] = set()
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m:
            raise ValueError(f"--tables {text!r}: allowed are numbers and ranges like 1-60 or 1-10,15")
        low, high = int(m.group(1)), int(m.group(2) or m.group(1))
        if not 1 <= low <= high <= topics.MAX_TABLE:
            raise ValueError(f"--tables {text!r}: allowed are table numbers from 1 to {topics.MAX_TABLE}, low to high")
        tables.update(range(low, high + 1))
    return sorted(tables)


@dataclass(frozen=True)
class Device:
    user: str
    kind: str  # "table", "station", "director", "join"
    ident: str  # the table's number or station's id; "" for the director
    password: str
    client_id: str = ""  # a table's or station's, bound by the plugin (dynsec.client_id); "" for the director and join

    @property
    def login(self) -> tuple[str, str, str]:
        """(user, password, client id): what a simulated table or station logs in with (hall.console.demohall.sim)."""
        return self.user, self.password, self.client_id


def mosquitto_conf(
    out: Path,
    *,
    hall: str,
    port: int,
    bind: str | None,
    tls: bool,
    data_dir: Path,
    run_as: str | None,
    tls_port: int = TLS_PORT,
    bridge: Bridge | None = None,
) -> str:
    where = f" {bind}" if bind else ""
    lines = [
        "# Rackside hall broker (written by `rackside hall provision`; docs/hall.md). Run it with",
        f"#   rackside hall broker --config {out}",
        f"# Rackside hall {hall!r}",
        "per_listener_settings false",
        "allow_anonymous false",
        "",
        "# Who may connect, as which client id, and read or write what: the dynamic-security plugin,",
        "# changed live by the director (devices enrolling, revoked). It rewrites its file itself.",
        f"plugin {dynsec.plugin_path()}",
        f"plugin_opt_config_file {out / DYNSEC_FILE}",
        "",
        "# Retained states and the persistent sessions' queued messages survive a broker restart.",
        "persistence true",
        f"persistence_location {data_dir}/",
        "autosave_interval 30",
        "persistent_client_expiration 2d",
        "",
        "# Queue limits: a director's console offline for an hour of a 200-table hall still gets",
        "# everything; one device cannot exhaust the broker.",
        "max_queued_messages 200000",
        "max_inflight_messages 50",
        f"max_packet_size {MAX_PACKET_BYTES}",
        "set_tcp_nodelay true",
        "",
        "log_dest stderr",
        "log_type error",
        "log_type warning",
        "log_type notice",
        "connection_messages true",
        "",
    ]
    if run_as:
        lines += ["# The account the broker drops to when started as root.", f"user {run_as}", ""]
    if tls:
        lines += [
            "# Devices: TLS, pinning the hall's CA from the join file.",
            f"listener {tls_port}{where}",
            f"cafile {out / 'tls' / 'ca.crt'}",
            f"certfile {out / 'tls' / 'server.crt'}",
            f"keyfile {out / 'tls' / 'server.key'}",
            "tls_version tlsv1.2",
            "",
            "# Plain MQTT only on this machine (the console, `rackside hall tail` on the broker's host).",
            f"listener {port} 127.0.0.1",
            "",
        ]
    else:
        lines += ["# No TLS (provisioned with --no-tls): every password crosses the network in clear.",
                  f"listener {port}{where}", ""]
    if bridge is not None:  # after the listeners: a bridge's settings end the file (mosquitto.conf(5))
        lines += bridge_lines(bridge, hall)
    return "\n".join(lines)


def credentials_text(hall: str, d: Device, url: str | None, tls: bool, out: Path) -> str:
    what = {"table": f"table {d.ident}", "station": f"station {d.ident}", "director": "the director"}[d.kind]
    lines = [
        f"# Rackside hall credentials: {what} of hall {hall!r}. Secret: keep it owner-only (0600).",
        "# Devices normally need none of these: they join with the hall's join file (docs/fleet.md).",
        f'hall = "{hall}"',
        f'user = "{d.user}"',
        f'password = "{d.password}"',
    ]
    if d.client_id:
        lines.append(f'client_id = "{d.client_id}"')
    if d.kind == "table":
        lines.append(f"table = {int(d.ident)}")
    elif d.kind == "station":
        lines.append(f'station = "{d.ident}"')
    if url:
        lines.append(f'url = "{url}"')
    if tls:
        lines.append(f'tls_ca = "{out / "tls" / "ca.crt"}"')
    return "\n".join(lines) + "\n"


def root_hint(run_as: str | None, euid: int) -> str | None:
    """What to do when provisioning as root without --run-as: Mosquitto started as root drops to the
    user `mosquitto`, which cannot read the owner-only files written here, and fails with its own
    "File is not readable" and OpenSSL's "Permission denied" (`hall broker` names the fix too)."""
    if euid != 0 or run_as:
        return None
    return ("provisioning as root without --run-as: Mosquitto started as root drops to the user 'mosquitto', which "
            "cannot read these owner-only files. Give --run-as USER (the account that runs the broker and owns --out), "
            "or provision as that user (sudo -u USER ...)")


def provision(
    out: Path | str,
    hall: str,
    tables: list[int],
    stations: int | list[str],
    *,
    port: int = DEFAULT_PORT,
    bind: str | None = None,
    tls: bool = True,
    data_dir: Path | str | None = None,
    run_as: str | None = None,
    url: str | None = None,
    tls_port: int = TLS_PORT,
    names: list[str] | None = None,
    bridge: Bridge | None = None,
) -> dict[str, Device]:
    """Write a hall's broker files, join file and credentials into `out`; returns the devices by user
    name (the director, `join`, and the tables and stations made up front). Passwords and the join
    secret are new random ones each time; re-provisioning keeps every device the director enrolled
    (its client and role in the old dynamic-security.json, unless that table or station is made up
    front now), so the hall's clocks go on logging in with their own logins. `names`: the host names and addresses the certificate is for (default: this
    machine's, hall.director.tlsfiles.default_names, plus `bind`). `bridge`: the public topics out to
    a trusted partner's broker (hall.director.bridge.load reads and checks its file)."""
    from rackside.hall.wire import join

    topics.check_name("hall", hall)
    out = Path(out).absolute()
    data_dir = Path(data_dir).absolute() if data_dir else out / "data"
    station_ids = [str(i) for i in range(1, stations + 1)] if isinstance(stations, int) else list(stations)
    for sid in station_ids:
        topics.check_name("station", sid)
    director = Device(topics.DIRECTOR, "director", "", secrets.token_urlsafe(18))
    joiner = Device(dynsec.JOIN_USER, "join", "", secrets.token_urlsafe(24))
    users = [(topics.table_user(n), "table", str(n)) for n in tables] + [(topics.station_user(s), "station", s) for s in station_ids]
    devices = [Device(user, kind, ident, secrets.token_urlsafe(18), dynsec.client_id(user)) for user, kind, ident in users]

    (out / "credentials").mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o700)
    os.chmod(out / "credentials", 0o700)
    if tls:
        cert_names = list(names or tlsfiles.default_names())
        if bind and bind not in cert_names and bind not in ("0.0.0.0", "::"):
            cert_names.append(bind)
        tlsfiles.make(out / "tls", hall, cert_names)
    keep = ([], [])
    try:
        keep = dynsec.enrolled(json.loads((out / DYNSEC_FILE).read_text()))
    except FileNotFoundError:
        pass
    except (OSError, ValueError, AttributeError) as e:
        raise ValueError(f"{out / DYNSEC_FILE}: cannot read the enrolled devices to keep ({e}); move it away to start afresh") from None
    config = dynsec.initial_config(hall, hash_password(director.password), hash_password(joiner.password),
                                   {d.user: (hash_password(d.password), d.client_id) for d in devices}, keep=keep)
    write_atomic(out / DYNSEC_FILE, json.dumps(config, indent=1) + "\n")
    write_atomic(out / "mosquitto.conf", mosquitto_conf(out, hall=hall, port=port, bind=bind, tls=tls, data_dir=data_dir,
                                                        run_as=run_as, tls_port=tls_port, bridge=bridge))
    for d in [director, *devices]:
        write_atomic(out / "credentials" / f"{d.user}.toml", credentials_text(hall, d, url, tls, out))
    join_url = url or "auto"
    ca = (out / "tls" / "ca.crt").read_text() if tls else None
    update_key = signing.make_key(out / signing.KEY_FILE)  # an existing key is kept: the Pis trust it
    write_atomic(out / join.FILE_NAME, join.join_text(hall, join_url, joiner.password, ca, update_key))
    return {d.user: d for d in [director, joiner, *devices]}
