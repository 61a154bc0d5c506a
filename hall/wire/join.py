"""The hall's join file: one identical file for every clock and station of a hall.

    # DIR/join.toml, written by `rackside hall provision`
    hall = "open2026"
    url = "auto"                      # or "mqtts://director.local:8883"
    secret = "..."                    # the join client's password: it can only enrol (hall.director.dynsec)
    ca = '''-----BEGIN CERTIFICATE----- ...'''   # the hall's CA: devices pin it
    update_key = '''-----BEGIN PUBLIC KEY----- ...'''  # bundles must be signed by it (rackside.signing)

It goes on the Pi's boot partition (`/boot/firmware/rackside-join.toml`) or in the config folder
(`/etc/rackside/join.toml`); `[hall] join = "auto"` finds it in either (`resolve`). A device holding it, and no credentials of its own, enrols
(hall.device.enrol); the director gives it a table number or station id from the console or
`rackside hall devices`.

This module is the file's format as both ends speak it: the text the director's provisioning writes
(`join_text`), the device id and code, the hello and the reply. A device reads and finds the file
with hall.device.joinfile (`load`, `find`, `resolve`, `device_id`), which checks its url with the
connection's own parser.

`update_key` (issue 25, item 2) is the public half of the hall's update signing key: a bundle's
install.sh installs it root-owned as /etc/rackside/update-key.pem, and from then on the Pi's root
updater installs only bundles signed with that key. Optional, so a join file written before it
still loads (its devices then take updates from the console only once a bundle with a newer join
file has been installed by hand).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from rackside.hall.wire import topics
from rackside.hall.wire.schema import Check, Flag, Invalid, OneOf, Schema, Text, Whole

FILE_NAME = "join.toml"
MAX_CA_CHARS = 16_384  # one PEM certificate is ~1 kB; a longer "ca" is not one
SECRET = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
DEVICE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$")
CODE_DIGITS = 4  # fits a clock's four-digit display


def join_text(hall: str, url: str, secret: str, ca: str | None, update_key: str | None = None) -> str:
    lines = [
        f"# Rackside hall {hall!r}: the join file. The same on every clock and station; put it on the Pi's",
        "# boot partition as rackside-join.toml, or in /etc/rackside/join.toml. It can only ask to join:",
        "# the director gives each device its table number (docs/fleet.md). Keep it to the hall's devices.",
        f'hall = "{hall}"',
        f'url = "{url}"',
        f'secret = "{secret}"',
    ]
    if ca:
        lines.append(f'ca = """\n{ca.strip()}\n"""')
    if update_key:
        lines.append("# The hall's update key: a Pi installs only bundles signed with it (docs/deploy.md).")
        lines.append(f'update_key = """\n{update_key.strip()}\n"""')
    return "\n".join(lines) + "\n"


def check_device_id(value: object) -> str:
    if not isinstance(value, str) or not DEVICE_ID.match(value):
        raise ValueError(f"device id {value!r}: allowed are 1 to 48 letters, digits, '.', '_' or '-'")
    return value


def code(device: str, secret: str) -> str:
    """The short code the device shows and the console lists beside it: the director assigns the
    row whose code the device in front of them shows, so a hello forged under another device's id
    (with another secret) shows a code no device displays."""
    digest = hashlib.sha256(f"{device}\0{secret}".encode()).digest()
    return f"{int.from_bytes(digest[:8], 'big') % 10 ** CODE_DIGITS:0{CODE_DIGITS}d}"


# --- the enrolment messages (device -> director: hello; director -> device: reply) ---------------

KINDS = {"clock": "table", "station": "station"}  # a device's kind -> what the director makes it
MAX_HELLO_BYTES = 2048
MAX_REPLY_BYTES = 1024


def hello_payload(device: str, kind: str, secret: str, *, version: str, address: str | None, asks: int | None = None) -> bytes:
    """`asks`: the table number the device's own menu asked for (the director confirms it)."""
    hello = {"device": device, "kind": kind, "code": code(device, secret), "version": version[:32],
             "address": (address or "")[:64], "secret": secret}
    if asks is not None:
        hello["asks"] = asks
    return json.dumps(hello, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Hello:
    device: str
    kind: str
    code: str
    version: str
    address: str
    secret: str
    asks: int | None = None  # a table number asked for on the device; the director confirms it


def _hello_is_its_own(h: dict, where: str) -> dict:
    if h["code"] != code(h["device"], h["secret"]):
        raise Invalid("code", "the code its secret gives", h["code"], line="its code is not its secret's")
    return h


# The hello, described once (hall.wire.schema): `hello_payload` writes it, `parse_hello` (the
# director's fleet) reads it.
HELLO = Schema({
    "device": Text(48, pattern=DEVICE_ID, says="1 to 48 letters, digits, '.', '_' or '-'"),
    "kind": OneOf(tuple(KINDS)),
    "code": Text(CODE_DIGITS, least=CODE_DIGITS, pattern=re.compile(r"^[0-9]+$"), says=f"{CODE_DIGITS} digits"),
    "version": Text(64, least=0, default=""),
    "address": Text(64, least=0, default=""),
    "secret": Text(128, pattern=SECRET, says="the join file's secret", hide=True),
    "asks": Whole(1, topics.MAX_TABLE, null=True, says=f"a table number from 1 to {topics.MAX_TABLE}"),
}, then=_hello_is_its_own)


def parse_hello(device: str, payload: bytes) -> Hello:
    """A hello from `enrol/<device>`, checked whole (HELLO): ValueError saying what is wrong. Its
    code must be the one its secret gives (a device shows that code; a hello with another is not its)."""
    check_device_id(device)
    if len(payload) > MAX_HELLO_BYTES:
        raise ValueError(f"hello from {device}: {len(payload)} bytes, allowed at most {MAX_HELLO_BYTES}")
    try:
        d = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ValueError(f"hello from {device}: not JSON") from None
    if not isinstance(d, dict):
        raise ValueError(f"hello from {device}: not a JSON object")
    if d.get("device") != device:
        raise ValueError(f"hello from {device}: names device {str(d.get('device'))[:48]!r}")
    try:
        h = HELLO.check(d)
    except Invalid as e:
        raise ValueError(f"hello from {device}: {e}") from None
    return Hello(**h)


def reply_payload(user: str | None, *, reason: str = "") -> bytes:
    """`user`: the table or station the device now is (`table-12`); None: revoked."""
    if user is None:
        return json.dumps({"revoked": True, "reason": reason[:200]}).encode()
    kind, ident = topics.parse_user(user)
    return json.dumps({"user": user, kind: int(ident) if kind == "table" else ident}).encode()


def _user(v: object) -> str:
    if not isinstance(v, str):
        raise ValueError()
    try:
        topics.parse_user(v)
    except ValueError:
        raise ValueError() from None
    return v


def _revoked_or_named(r: dict, where: str) -> dict:
    if not r["revoked"] and r["user"] is None:
        raise Invalid("user", "table-N or station-ID")
    return r


# The director's reply (`reply_payload` writes it, `parse_reply`, on the device, reads it)
REPLY = Schema({"revoked": Flag(default=False), "user": Check(_user, says="table-N or station-ID", null=True)},
               then=_revoked_or_named)


def parse_reply(payload: bytes) -> str | None:
    """The user a reply gives (`table-12`), or None for a revocation; ValueError if malformed."""
    if len(payload) > MAX_REPLY_BYTES:
        raise ValueError("reply too long")
    try:
        d = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ValueError("reply: not JSON") from None
    if not isinstance(d, dict):
        raise ValueError("reply: not a JSON object")
    try:
        r = REPLY.check(d)
    except Invalid as e:
        raise ValueError(f"reply: {e}") from None
    return None if r["revoked"] else r["user"]
