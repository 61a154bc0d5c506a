"""The `[hall]` section of clock.toml and station.toml, and the credentials file it names.

    [hall]
    url = "mqtt://director.local:1883"   # or "mqtts://HOST:8883", or "auto": find it by mDNS
    hall = "open2026"                    # optional: the credentials file says it
    table = 3                            # (clock.toml) optional likewise; `station = "1"` in station.toml
    credentials = "/etc/rackside/hall-credentials.toml"

No `[hall]` section: the device is not on a hall and opens no network connection. A bad value
raises `HallConfigError` naming the key and what is allowed (one line for the director).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from rackside import tomlfile
from rackside.hall.wire import topics

# the [hall] keys (clock.toml, station.toml: each device takes its own of table and station), and
# `join`: the hall's join file instead of credentials, read before this table is (firmware.cli,
# hall.device.enrol), beside which only JOIN_KEYS may stand (hall.device.clock_factory, hall.device.station)
KEYS = frozenset({"url", "hall", "table", "station", "credentials", "outbox"})
JOIN = "join"
JOIN_KEYS = (JOIN, "outbox")
SCHEMES = {"mqtt": 1883, "mqtts": 8883}


class HallConfigError(ValueError):
    """A [hall] problem, worded for the director: the key, and what is allowed. `option`: the
    command-line option whose value it is (`--hall`), None when it is a file's (clock.toml's [hall],
    a credentials or join file): the command names the file only for a file's value (firmware.cli)."""

    def __init__(self, line: str, *, option: str | None = None) -> None:
        super().__init__(line)
        self.option = option


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    tls: bool

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


def parse_url(url: str, key: str = "hall.url", *, option: bool = False) -> Endpoint | None:
    """mqtt://HOST[:PORT] or mqtts://HOST[:PORT]; None for "auto" (find the broker by mDNS).
    `option`: `key` is a command-line option (the error's `option`)."""
    if url == "auto":
        return None
    parts = urlsplit(url) if isinstance(url, str) else None
    try:
        port = parts.port if parts else None
    except ValueError:
        port = -1
    if parts is None or parts.scheme not in SCHEMES or not parts.hostname or port == -1 or parts.path not in ("", "/"):
        raise HallConfigError(
            f"{key} = {url!r}: allowed are \"auto\" (find the broker by mDNS), mqtt://HOST[:PORT] and mqtts://HOST[:PORT]",
            option=key if option else None)
    return Endpoint(parts.hostname, port or SCHEMES[parts.scheme], parts.scheme == "mqtts")


@dataclass(frozen=True)
class Credentials:
    hall: str
    user: str
    password: str
    table: int | None = None
    station: str | None = None
    url: str | None = None
    tls_ca: str | None = None
    # the client id the broker binds this login to (table-12-<random>: from an enrolled device's sealed
    # login, or written by provisioning); a file without it is from a provisioning that bound the user name
    client_id: str | None = None

    @property
    def mqtt_client_id(self) -> str:
        return self.client_id or self.user


def load_credentials(path: Path | str) -> Credentials:
    path = Path(path)
    try:
        data = tomlfile.read(path)
    except tomlfile.TomlFileError as e:
        if e.missing:
            raise HallConfigError(f"hall.credentials = {str(path)!r}: no such file (copy the device's file from `rackside hall provision --out DIR`/credentials/)") from None
        raise HallConfigError(f"hall.credentials = {str(path)!r}: {e}") from None
    for key in ("hall", "user", "password"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise HallConfigError(f"{path}: {key} is missing; allowed is the file `rackside hall provision` wrote")
    client_id = data.get("client_id")
    if client_id is not None and (not isinstance(client_id, str) or not client_id or len(client_id) > 64):
        raise HallConfigError(f"{path}: client_id = {client_id!r}: allowed is the client id the director's assignment gave")
    return Credentials(
        client_id=client_id,
        hall=data["hall"],
        user=data["user"],
        password=data["password"],
        table=data.get("table"),
        station=data.get("station"),
        url=data.get("url"),
        tls_ca=data.get("tls_ca"),
    )


@dataclass(frozen=True)
class HallConfig:
    url: str  # "auto" or mqtt(s)://HOST:PORT
    endpoint: Endpoint | None  # None: find by mDNS
    hall: str
    device: str  # "table" or "station"
    ident: str  # the table's number or the station's id
    credentials: Credentials
    outbox: Path | None = None

    @property
    def table(self) -> int:
        return int(self.ident)


def hall_tls_port(creds: "Credentials") -> int:
    """The port of this hall's TLS listener, for a hint (issue 35: a hall provisioned with
    --tls-port 18834 was told 8883): the credentials' own mqtts:// url's, else the listener that
    serves the credentials' CA in the hall's mosquitto.conf (provision writes both in the hall's
    folder: tls/ca.crt and mosquitto.conf), else MQTT's TLS port."""
    try:
        own = parse_url(creds.url) if creds.url else None
    except HallConfigError:
        own = None
    if own is not None and own.tls:
        return own.port
    if creds.tls_ca:
        ca = Path(creds.tls_ca)
        try:
            lines = (ca.parent.parent / "mosquitto.conf").read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            lines = []
        port = None
        for line in lines:
            words = line.split()
            if words[:1] == ["listener"] and len(words) > 1 and words[1].isdigit():
                port = int(words[1])
            elif words[:1] == ["cafile"] and port is not None and Path(" ".join(words[1:])) == ca:
                return port
    return SCHEMES["mqtts"]


def device_keys(device: str) -> frozenset:
    """The [hall] keys a device may have: "table" (the clock) or "station"; `join` among them."""
    return (KEYS - {"station" if device == "table" else "table"}) | {JOIN}


def check_join_keys(table: dict) -> None:
    """A [hall] with `join` holds JOIN_KEYS only: HallConfigError naming the first other key."""
    unknown = sorted(set(table) - set(JOIN_KEYS))
    if unknown:
        raise HallConfigError(f"[hall] has unknown key {unknown[0]!r} beside join: allowed are {', '.join(JOIN_KEYS)}")


def from_table(table: object, device: str, *, url_override: str | None = None, base: Path | None = None) -> HallConfig | None:
    """Check a [hall] table (None: not on a hall). `device` is "table" (the clock) or "station"."""
    if table is None and url_override is None:
        return None
    if table is None:
        table = {}
    if not isinstance(table, dict):
        raise HallConfigError("[hall] must be a table")
    # join is read before this table is (firmware.cli, hall.device.station): here it is unknown too
    # (`join = ""`, or join beside credentials), though the message names it among the device's keys
    allowed = device_keys(device)
    unknown = sorted(set(table) - (allowed - {JOIN}))
    if unknown:
        raise HallConfigError(f"[hall] has unknown key {unknown[0]!r}: allowed keys are {', '.join(sorted(allowed))}")
    cred_path = table.get("credentials")
    if not isinstance(cred_path, str) or not cred_path:
        raise HallConfigError("hall.credentials is missing: allowed is the path of this device's credentials file from `rackside hall provision`")
    cred_path = Path(cred_path)
    if base is not None and not cred_path.is_absolute():
        cred_path = base / cred_path
    creds = load_credentials(cred_path)
    url = url_override or table.get("url") or creds.url
    if not isinstance(url, str):
        raise HallConfigError(f"hall.url = {url!r}: allowed are \"auto\", mqtt://HOST[:PORT] and mqtts://HOST[:PORT]")
    option = "--hall" if url_override else None  # the command line's value, not the file's
    key = option or "hall.url"
    endpoint = parse_url(url, key, option=option is not None)
    if endpoint is not None and not endpoint.tls and creds.tls_ca:  # paho would speak TLS to the plain port
        raise HallConfigError(f"{key} = {url!r} is plain MQTT but {cred_path.name} has tls_ca (this hall's devices use TLS): "
                              f"allowed is mqtts://{endpoint.host}:{hall_tls_port(creds)} (or \"auto\"); for the plain listener, remove tls_ca",
                              option=option)
    hall = table.get("hall", creds.hall)
    try:
        topics.check_name("hall.hall", hall)
    except ValueError as e:
        raise HallConfigError(str(e)) from None
    if hall != creds.hall:
        raise HallConfigError(f"hall.hall = {hall!r}: allowed is {creds.hall!r}, the hall its credentials file was provisioned for")
    if device == "table":
        n = table.get("table", creds.table)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= topics.MAX_TABLE:
            raise HallConfigError(f"hall.table = {n!r}: allowed are whole numbers from 1 to {topics.MAX_TABLE}")
        if creds.table is not None and n != creds.table:
            raise HallConfigError(f"hall.table = {n}: allowed is {creds.table}, the table its credentials file is for")
        ident = str(n)
    else:
        sid = table.get("station", creds.station)
        try:
            topics.check_name("hall.station", sid)
        except ValueError as e:
            raise HallConfigError(str(e)) from None
        if creds.station is not None and sid != creds.station:
            raise HallConfigError(f"hall.station = {sid!r}: allowed is {creds.station!r}, the station its credentials file is for")
        ident = sid
    outbox = table.get("outbox")
    if outbox is not None and not isinstance(outbox, str):
        raise HallConfigError(f"hall.outbox = {outbox!r}: allowed is a file path")
    return HallConfig(url, endpoint, hall, device, ident, creds, Path(outbox) if outbox else None)
