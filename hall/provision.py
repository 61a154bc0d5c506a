"""Provisioning a hall: Mosquitto's config, password file and ACL, and one credentials file a device.

    rackside hall provision --hall open2026 --tables 1-60 --stations 3 --out DIR [--tls]

writes

    DIR/mosquitto.conf          listener, persistence, no anonymous access, password and ACL files
    DIR/passwords               Mosquitto's own format: user:$7$101$salt$hash (PBKDF2-SHA512)
    DIR/acl                     each device its own topics; the director everything in the hall
    DIR/credentials/table-3.toml, station-1.toml, director.toml   one a device, owner-only (0600)

The password file is written here, not by Debian's `mosquitto_passwd`: its format is small and
documented (mosquitto's password_mosq.c: `$7$`, 101 iterations of PBKDF2-HMAC-SHA512, a 12-byte salt,
a 64-byte hash, both base64), hashlib has PBKDF2, and calling `mosquitto_passwd -b` once a device
would put every password on a command line (visible in `ps`) and need the broker package on the
machine that provisions. tests/test_hall_acl.py proves the real broker accepts what this writes.

The ACL names each device's topics explicitly (a `user` block a device) rather than with
`pattern ... %u`: a topic level is the table's number, and Mosquitto's `%u` substitutes the whole
user name, so a pattern would force users named "3", indistinguishable from station "3".
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from rackside.atomic import write_atomic
from rackside.hall import topics

PBKDF2_ITERATIONS = 101  # what mosquitto_passwd 2.0 writes (PW_DEFAULT_ITERATIONS)
SALT_BYTES = 12
HASH_BYTES = 64
MAX_TABLES = 999
DEFAULT_PORT = 1883
TLS_PORT = 8883
# The broker refuses larger packets outright; the clock refuses a command larger than its own
# limit (hall.commands.MAX_COMMAND_BYTES) with an ack, so that limit is well below this one.
MAX_PACKET_BYTES = 256 * 1024


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
        if not 1 <= low <= high <= MAX_TABLES:
            raise ValueError(f"--tables {text!r}: allowed are table numbers from 1 to {MAX_TABLES}, low to high")
        tables.update(range(low, high + 1))
    return sorted(tables)


@dataclass(frozen=True)
class Device:
    user: str
    kind: str  # "table", "station", "director"
    ident: str  # the table's number or station's id; "" for the director
    password: str


def acl_text(hall: str, devices: list[Device]) -> str:
    lines = [
        f"# Rackside hall {hall!r}: who may read and write what (written by `rackside hall provision`).",
        "# Anonymous clients are refused (allow_anonymous false); a user not listed here may do nothing.",
        "",
    ]
    for d in devices:
        lines.append(f"user {d.user}")
        if d.kind == "director":
            lines.append(f"topic readwrite {topics.hall_root(hall)}/#")
        elif d.kind == "table":
            n = int(d.ident)
            for leaf in topics.TABLE_WRITES:
                lines.append(f"topic write {topics.table(hall, n, leaf)}")
            lines.append(f"topic read {topics.table(hall, n, 'cmd')}")
        else:
            for leaf in topics.STATION_TOPICS:
                lines.append(f"topic write {topics.station(hall, d.ident, leaf)}")
        lines.append("")
    return "\n".join(lines)


def mosquitto_conf(
    out: Path,
    *,
    port: int,
    bind: str | None,
    tls: bool,
    data_dir: Path,
    run_as: str | None,
    tls_port: int = TLS_PORT,
) -> str:
    where = f" {bind}" if bind else ""
    tls_lines = [
        f"listener {tls_port}{where}",
        f"cafile {out / 'tls' / 'ca.crt'}",
        f"certfile {out / 'tls' / 'server.crt'}",
        f"keyfile {out / 'tls' / 'server.key'}",
        "tls_version tlsv1.2",
    ]
    lines = [
        "# Rackside hall broker (written by `rackside hall provision`; docs/hall.md). Run it with",
        f"#   rackside hall broker --config {out}",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {out / 'passwords'}",
        f"acl_file {out / 'acl'}",
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
        lines += ["# TLS (devices use mqtts://HOST:8883 and the CA in their credentials file)."] + tls_lines
        lines += ["", "# Plain MQTT only on this machine (for `rackside hall tail` on the broker's host).",
                  f"listener {port} 127.0.0.1", ""]
    else:
        lines += [f"listener {port}{where}", ""]
        lines += ["# TLS: provision with --tls, or uncomment these and put the files in place (docs/hall.md)."]
        lines += [f"# {x}" for x in tls_lines] + [""]
    return "\n".join(lines)


def credentials_text(hall: str, d: Device, url: str | None, tls: bool, out: Path) -> str:
    what = {"table": f"table {d.ident}", "station": f"station {d.ident}", "director": "the director"}[d.kind]
    lines = [
        f"# Rackside hall credentials: {what} of hall {hall!r}. Secret: keep it owner-only (0600).",
        "# Copy it to the device (e.g. /etc/rackside/hall-credentials.toml) and name it in the",
        "# [hall] section of clock.toml or station.toml: credentials = \"/etc/rackside/hall-credentials.toml\"",
        f'hall = "{hall}"',
        f'user = "{d.user}"',
        f'password = "{d.password}"',
    ]
    if d.kind == "table":
        lines.append(f"table = {int(d.ident)}")
    elif d.kind == "station":
        lines.append(f'station = "{d.ident}"')
    if url:
        lines.append(f'url = "{url}"')
    if tls:
        lines.append(f'tls_ca = "{out / "tls" / "ca.crt"}"')
    return "\n".join(lines) + "\n"


def provision(
    out: Path | str,
    hall: str,
    tables: list[int],
    stations: int | list[str],
    *,
    port: int = DEFAULT_PORT,
    bind: str | None = None,
    tls: bool = False,
    data_dir: Path | str | None = None,
    run_as: str | None = None,
    url: str | None = None,
    tls_port: int = TLS_PORT,
) -> dict[str, Device]:
    """Write a hall's broker files and credentials into `out`; returns the devices by user name.
    Passwords are new random ones each time (re-provisioning replaces every credential)."""
    topics.check_name("hall", hall)
    out = Path(out).absolute()
    data_dir = Path(data_dir).absolute() if data_dir else out / "data"
    station_ids = [str(i) for i in range(1, stations + 1)] if isinstance(stations, int) else list(stations)
    for sid in station_ids:
        topics.check_name("station", sid)
    devices = [Device(topics.DIRECTOR, "director", "", secrets.token_urlsafe(18))]
    devices += [Device(topics.table_user(n), "table", str(n), secrets.token_urlsafe(18)) for n in tables]
    devices += [Device(topics.station_user(s), "station", s, secrets.token_urlsafe(18)) for s in station_ids]

    (out / "credentials").mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(out / "credentials", 0o700)
    write_atomic(out / "passwords", "".join(f"{d.user}:{hash_password(d.password)}\n" for d in devices))
    write_atomic(out / "acl", acl_text(hall, devices))
    write_atomic(out / "mosquitto.conf", mosquitto_conf(out, port=port, bind=bind, tls=tls, data_dir=data_dir, run_as=run_as, tls_port=tls_port))
    for d in devices:
        write_atomic(out / "credentials" / f"{d.user}.toml", credentials_text(hall, d, url, tls, out))
    if tls:
        (out / "tls").mkdir(exist_ok=True)
    return {d.user: d for d in devices}
