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
(`join_text`), the device id, what a device's own key gives it (its key id and its code), the hello
and the reply (issue 25: enrolment bound to the device's key; docs/security.md, "Enrolment"). A device reads and finds the file
with hall.device.joinfile (`load`, `find`, `resolve`, `device_id`), which checks its url with the
connection's own parser.

`update_key` (issue 25, item 2) is the public half of the hall's update signing key: a bundle's
install.sh installs it root-owned as /etc/rackside/update-key.pem, and from then on the Pi's root
updater installs only bundles signed with that key. Optional, so a join file written before it
still loads (its devices then take updates from the console only once a bundle with a newer join
file has been installed by hand).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass

from rackside.hall.wire import devicekey, topics
from rackside.hall.wire.commands import NOTES
from rackside.hall.wire.schema import Invalid, OneOf, Schema, Text, Whole

FILE_NAME = "join.toml"
MAX_CA_CHARS = 16_384  # one PEM certificate is ~1 kB; a longer "ca" is not one
SECRET = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
DEVICE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$")
CODE_DIGITS = 12  # about 40 bits: shown in pages of four on a clock's display (CODE_PAGE)
CODE_PAGE = 4  # a TM1637 shows four digits
CLIENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # a device's MQTT client id (table-12-<random>)


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


# --- what a device's key gives it (issue 25 item 1) --------------------------------------------------
#
# Every device makes its own key (hall.wire.devicekey). From its public half (DER) come:
#   the key id   128 bits of SHA-256: its enrolment topics (`enrol/<key id>`, `.../reply`) and its
#                join client id (`enrol-<key id>`). Never shown: nobody without the key or the
#                hello (which only the director reads) can name them, so no join client can
#                overwrite another device's hello, read its reply, or knock its join session off.
#   the code     12 digits of another SHA-256: what the device shows (a clock in three pages of four
#                digits) and what the director confirms and assigns. Making a key whose code matches a
#                given one takes about 10^12 tries; matching it anyway only flags both rows (the
#                director assigns neither), since the login goes sealed to the key, not the code.

KEY_ID_HEX = 32
KEY_ID = re.compile(rf"^[0-9a-f]{{{KEY_ID_HEX}}}$")
ENROL_CLIENT_PREFIX = "enrol-"


def key_id(public: bytes) -> str:
    return hashlib.sha256(b"rackside-key-id\0" + public).hexdigest()[:KEY_ID_HEX]


def code(public: bytes) -> str:
    """The device's code: CODE_DIGITS digits from its public key."""
    digest = hashlib.sha256(b"rackside-code\0" + public).digest()
    return f"{int.from_bytes(digest[:8], 'big') % 10 ** CODE_DIGITS:0{CODE_DIGITS}d}"


def code_pages(value: str) -> list[str]:
    """The code as a 4-digit display shows it, page by page."""
    return [value[i:i + CODE_PAGE] for i in range(0, len(value), CODE_PAGE)]


def code_text(value: str) -> str:
    """The code as people read it: `1234 5678 9012`."""
    return " ".join(code_pages(value))


def normal_code(value: object) -> str:
    """A code as typed (spaces, dashes allowed) -> its digits; ValueError saying what is allowed."""
    digits = "".join(ch for ch in str(value) if ch not in " -") if isinstance(value, (str, int)) else ""
    if not (digits.isdigit() and digits.isascii() and len(digits) == CODE_DIGITS):
        raise ValueError(f"code {value!r}: allowed are the {CODE_DIGITS} digits the device shows (e.g. 1234 5678 9012)")
    return digits


def enrol_client_id(kid: str) -> str:
    return ENROL_CLIENT_PREFIX + kid


# --- the enrolment messages (device -> director: hello; director -> device: reply) ---------------

KINDS = {"clock": "table", "station": "station"}  # a device's kind -> what the director makes it
MAX_HELLO_BYTES = 2048
MAX_REPLY_BYTES = 2048
MAX_SEALED_B64 = 4 * (devicekey.MAX_SEALED_BYTES // 3 + 1)  # its base64
MAX_KEY_B64 = 4 * (devicekey.MAX_PUBLIC_BYTES // 3 + 1)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(value: object, limit: int, what: str) -> bytes:
    if not isinstance(value, str) or not value or len(value) > limit:
        raise ValueError(f"{what}: base64 text of at most {limit} characters")
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise ValueError(f"{what}: not base64") from None


def hello_payload(device: str, kind: str, public: bytes, *, version: str, address: str | None, asks: int | None = None) -> bytes:
    """`public`: the device's public key (DER). `asks`: the table number the device's own menu
    asked for (the director confirms it). No secret: the device's login comes sealed in its reply."""
    hello = {"device": device, "kind": kind, "key": _b64(public), "code": code(public), "version": version[:32],
             "address": (address or "")[:64]}
    if asks is not None:
        hello["asks"] = asks
    return json.dumps(hello, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Hello:
    kid: str  # the key id: the hello's topic level
    device: str
    kind: str
    code: str
    version: str
    address: str
    key: bytes  # the device's public key (DER)
    asks: int | None = None  # a table number asked for on the device; the director confirms it


def _hello_is_its_own(h: dict, where: str) -> dict:
    try:
        h["key"] = base64.b64decode(h["key"], validate=True)
    except ValueError:
        raise Invalid("key", "the device's public key in base64", h["key"], line="its key is not base64") from None
    if h["code"] != code(h["key"]):
        raise Invalid("code", "the code its key gives", h["code"], line="its code is not its key's")
    return h


# The hello, described once (hall.wire.schema): `hello_payload` writes it, `parse_hello` (the
# director's roster) reads it.
HELLO = Schema({
    "device": Text(48, pattern=DEVICE_ID, says="1 to 48 letters, digits, '.', '_' or '-'"),
    "kind": OneOf(tuple(KINDS)),
    "key": Text(MAX_KEY_B64, pattern=re.compile(r"^[A-Za-z0-9+/]+={0,2}$"), says="the device's public key in base64"),
    "code": Text(CODE_DIGITS, least=CODE_DIGITS, pattern=re.compile(r"^[0-9]+$"), says=f"{CODE_DIGITS} digits"),
    "version": Text(64, least=0, default=""),
    "address": Text(64, least=0, default=""),
    "asks": Whole(1, topics.MAX_TABLE, null=True, says=f"a table number from 1 to {topics.MAX_TABLE}"),
}, then=_hello_is_its_own)


def parse_hello(kid: str, payload: bytes) -> Hello:
    """A hello from `enrol/<kid>`, checked whole (HELLO): ValueError saying what is wrong. Its key
    must be the one its topic names (a hello on another device's topic is not that device's) and
    its code the one its key gives."""
    if not isinstance(kid, str) or not KEY_ID.match(kid):
        raise ValueError(f"hello on enrol/{str(kid)[:40]!r}: not a key id")
    if len(payload) > MAX_HELLO_BYTES:
        raise ValueError(f"hello on {kid}: {len(payload)} bytes, allowed at most {MAX_HELLO_BYTES}")
    try:
        d = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ValueError(f"hello on {kid}: not JSON") from None
    if not isinstance(d, dict):
        raise ValueError(f"hello on {kid}: not a JSON object")
    where = f"hello from {str(d.get('device'))[:48]}" if isinstance(d.get("device"), str) else f"hello on {kid}"
    try:
        h = HELLO.check(d)
    except Invalid as e:
        raise ValueError(f"{where}: {e}") from None
    if key_id(h["key"]) != kid:
        raise ValueError(f"{where}: its key is not the one its topic names")
    return Hello(kid, h["device"], h["kind"], h["code"], h["version"], h["address"], h["key"], h.get("asks"))


def reply_payload(hello: Hello, user: str | None, *, sealed: bytes = b"", reason: str = "") -> bytes:
    """The director's answer to `hello`'s device, retained on its own reply topic. `user`: the table
    or station it is now (`table-12`), with `sealed`, its login sealed to its key; None: revoked.
    It also repeats who the device is (id, kind, code, key), so the hall lists a device it has
    answered even when its hello is gone (hall.director.roster)."""
    d: dict = {"device": hello.device, "kind": hello.kind, "code": hello.code, "key": _b64(hello.key)}
    if user is None:
        d.update(revoked=True, reason=reason[:NOTES["reason"]])  # a director's reason, as long as a command's
    else:
        kind, ident = topics.parse_user(user)
        d.update(user=user, sealed=_b64(sealed))
        d[kind] = int(ident) if kind == "table" else ident
    return json.dumps(d, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Reply:
    hello: Hello  # who the device is, as the director recorded it
    user: str | None  # None: revoked
    sealed: bytes = b""


def parse_reply(kid: str, payload: bytes) -> Reply:
    """The reply on `enrol/<kid>/reply`; ValueError if malformed."""
    if len(payload) > MAX_REPLY_BYTES:
        raise ValueError("reply too long")
    try:
        d = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ValueError("reply: not JSON") from None
    if not isinstance(d, dict):
        raise ValueError("reply: not a JSON object")
    public = _unb64(d.get("key"), MAX_KEY_B64, "reply: key")
    if not isinstance(kid, str) or key_id(public) != kid or d.get("code") != code(public) or d.get("kind") not in KINDS:
        raise ValueError("reply: not for the key its topic names")
    hello = Hello(kid, check_device_id(d.get("device")), d["kind"], d["code"], "", "", public)
    if d.get("revoked") is True:
        return Reply(hello, None)
    user = d.get("user")
    if not isinstance(user, str):
        raise ValueError("reply: no user")
    topics.parse_user(user)
    return Reply(hello, user, _unb64(d.get("sealed"), MAX_SEALED_B64, "reply: sealed"))


def sealed_login(password: str, client_id: str) -> bytes:
    """What the director seals to a device's key: its password and its client id."""
    return json.dumps({"password": password, "client_id": client_id}, separators=(",", ":")).encode()


def parse_login(data: bytes) -> tuple[str, str]:
    """(password, client id) from an unsealed login; ValueError if malformed."""
    try:
        d = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("sealed login: not JSON") from None
    if not isinstance(d, dict) or not isinstance(d.get("password"), str) or not SECRET.match(d["password"]):
        raise ValueError("sealed login: no password")
    client_id = d.get("client_id")
    if not isinstance(client_id, str) or not CLIENT_ID.match(client_id):
        raise ValueError("sealed login: no client id")
    return d["password"], client_id
