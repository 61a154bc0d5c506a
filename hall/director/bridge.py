"""A Mosquitto bridge from the hall's broker to a trusted partner's internet broker (a broadcast
team's): only the public topics, out, over TLS. `rackside hall provision --bridge FILE` writes it
into mosquitto.conf; the hall's broker then keeps the connection itself (and reconnects it), so the
console and the clocks do nothing for it and never wait on the internet.

The partner's file (TOML; every key checked, a bad one named in one line with what is allowed):

    [bridge]
    url = "mqtts://mqtt.partner.example:8883"  # the partner's broker: mqtts:// only (TLS)
    ca_file = "partner-ca.crt"                 # optional: the CA that signed its certificate
                                               #   (default: the system's CAs, /etc/ssl/certs)
    user = "open2026"                          # optional: the login the partner gave
    password = "..."                           #   with user
    certfile = "client.crt"                    # optional, with keyfile: a client certificate
    keyfile = "client.key"
    client_id = "rackside-open2026"            # optional (default rackside-<hall>)
    prefix = "broadcast/"                      # optional: put before every topic on the partner's side

Paths are relative to the file. What crosses is hall.wire.topics.PUBLIC_TABLE_TOPICS of every
table, direction `out` only: the bridge subscribes to nothing on the partner's broker, so nothing
from the internet reaches the hall (no command, no forged state). The password goes into
mosquitto.conf, which provisioning writes owner-only (Mosquitto takes a bridge's password only there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rackside import tomlfile
from rackside.hall.net.config import HallConfigError, parse_url
from rackside.hall.wire import topics

KEYS = ("url", "ca_file", "user", "password", "certfile", "keyfile", "client_id", "prefix")
SYSTEM_CA_PATH = "/etc/ssl/certs"  # Debian's CA folder (ca-certificates), hashed for OpenSSL
# A value Mosquitto reads from one line of its config, split at spaces: no space, no control
# character, no quote, and not empty.
CONF_WORD = re.compile(r"^[!#-&(-~]{1,256}$")
HOST = re.compile(r"^[A-Za-z0-9.-]{1,253}$")
PREFIX = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/$")  # topic levels, no wildcard, ending in "/"
QOS = 1  # a result is QoS 1 on the hall's side: so it is to the partner


class BridgeError(ValueError):
    """A bridge file that cannot be used: the file, the key, what is allowed."""


@dataclass(frozen=True)
class Bridge:
    host: str
    port: int
    client_id: str
    ca_file: Path | None = None
    user: str | None = None
    password: str | None = None
    certfile: Path | None = None
    keyfile: Path | None = None
    prefix: str = ""


def load(path: Path | str, hall: str) -> Bridge:
    path = Path(path)
    try:
        data = tomlfile.read(path)
    except tomlfile.TomlFileError as e:
        raise BridgeError(f"--bridge {path}: {e}") from None
    b = data.get("bridge")
    if not isinstance(b, dict):
        raise BridgeError(f"--bridge {path}: no [bridge] table (its keys: {', '.join(KEYS)}; docs/publish.md)")
    unknown = sorted(set(b) - set(KEYS))
    if unknown:
        raise BridgeError(f"--bridge {path}: [bridge] has unknown key {unknown[0]!r}: allowed keys are {', '.join(KEYS)}")

    def bad(key: str, allowed: str) -> BridgeError:
        return BridgeError(f"--bridge {path}: [bridge] {key} = {b.get(key)!r}: allowed {allowed}")

    url = b.get("url")
    try:
        end = parse_url(url, "url") if isinstance(url, str) else None
    except HallConfigError:
        end = None
    if end is None or not end.tls or not HOST.match(end.host):
        raise bad("url", "is the partner's broker as mqtts://HOST[:PORT] (TLS only; port 8883 by default)")

    def word(key: str) -> str | None:
        v = b.get(key)
        if v is not None and (not isinstance(v, str) or not CONF_WORD.match(v)):
            raise bad(key, "is 1 to 256 printable characters, without spaces or quotes")
        return v

    def file(key: str) -> Path | None:
        v = b.get(key)
        if v is None:
            return None
        f = (path.parent / v).absolute() if isinstance(v, str) and v else None
        if f is None or not f.is_file():
            raise bad(key, "is the path of a file (relative to the bridge file), which must exist")
        return f

    user, password = word("user"), word("password")
    if (user is None) != (password is None):
        raise BridgeError(f"--bridge {path}: [bridge] user and password go together: both, or neither")
    ca_file, certfile, keyfile = file("ca_file"), file("certfile"), file("keyfile")
    if (certfile is None) != (keyfile is None):
        raise BridgeError(f"--bridge {path}: [bridge] certfile and keyfile go together: both, or neither")
    if ca_file is not None and "-----BEGIN CERTIFICATE-----" not in ca_file.read_text(errors="replace"):
        raise bad("ca_file", "is a PEM certificate file (-----BEGIN CERTIFICATE-----)")
    client_id = b.get("client_id", f"rackside-{hall}")
    if not isinstance(client_id, str) or not topics.NAME.match(client_id):
        raise bad("client_id", "are 1 to 48 letters, digits, '.', '_' or '-', starting with a letter or digit")
    prefix = b.get("prefix", "")
    if not isinstance(prefix, str) or (prefix and not PREFIX.match(prefix)) or len(prefix) > 200:
        raise bad("prefix", 'is "" or topic levels of letters, digits, ".", "_", "-" ending in "/", e.g. "broadcast/"')
    return Bridge(end.host, end.port, client_id, ca_file, user, password, certfile, keyfile, prefix)


def public_topics(hall: str) -> list[str]:
    """The topic filters that cross, on the hall's side."""
    return [topics.table(hall, "+", leaf) for leaf in topics.PUBLIC_TABLE_TOPICS]


def conf_lines(bridge: Bridge, hall: str) -> list[str]:
    """The bridge's part of mosquitto.conf (Mosquitto's mosquitto.conf(5), "Configuring Bridges")."""
    lines = [
        "# A bridge to a trusted partner's broker (`--bridge`; docs/publish.md): the public topics only,",
        "# out only (nothing is subscribed on the partner's side, so nothing comes in), over TLS.",
        f"connection {bridge.client_id}",
        f"address {bridge.host}:{bridge.port}",
        "bridge_protocol_version mqttv311",
        f"remote_clientid {bridge.client_id}",
        # A persistent session both sides: what the tables publish while the internet is down is
        # queued here (max_queued_messages) and delivered when it is back.
        "cleansession false",
        "local_clientid " + f"{bridge.client_id}-local",
        "notifications false",
        "restart_timeout 5 120",
        "keepalive_interval 60",
    ]
    lines += [f"bridge_cafile {bridge.ca_file}"] if bridge.ca_file else [f"bridge_capath {SYSTEM_CA_PATH}"]
    lines += ["bridge_tls_version tlsv1.2", "bridge_insecure false"]
    if bridge.certfile:
        lines += [f"bridge_certfile {bridge.certfile}", f"bridge_keyfile {bridge.keyfile}"]
    if bridge.user:
        lines += [f"remote_username {bridge.user}", f"remote_password {bridge.password}"]
    root = topics.hall_root(hall) + "/"
    for pattern in public_topics(hall):
        if bridge.prefix:
            lines.append(f"topic {pattern[len(root):]} out {QOS} {root} {bridge.prefix}{root}")
        else:
            lines.append(f"topic {pattern} out {QOS}")
    return lines + [""]
