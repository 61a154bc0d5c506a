"""The director's login: an scrypt password hash, a lockout after five wrong tries, CSRF tokens.

The hash lives in the console's config (`password = "scrypt:16384:8:1:SALT:HASH"`, base64 parts);
`rackside hall console --hash-password` makes one. stdlib `hashlib.scrypt` does the work, so no new
dependency. The session cookie itself is signed by Starlette's SessionMiddleware (itsdangerous),
with a secret made once and kept owner-only in the state dir (`session_secret`), so restarting the
console does not log the director out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rackside.atomic import write_atomic

N, R, P = 16384, 8, 1  # scrypt's interactive-login parameters (~16 MiB, tens of ms)
MAX_TRIES = 5
LOCK_S = 60.0


class HashError(ValueError):
    """A password hash that is not ours (names the expected form)."""


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=N, r=R, p=P, dklen=32)
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"scrypt:{N}:{R}:{P}:{b64(salt)}:{b64(digest)}"


def check_hash_form(stored: str) -> None:
    parts = stored.split(":")
    if len(parts) != 6 or parts[0] != "scrypt" or not all(x.isdigit() for x in parts[1:4]):
        raise HashError("password must be 'scrypt:N:R:P:SALT:HASH' (make one with `rackside hall console --hash-password`)")
    try:
        base64.b64decode(parts[4], validate=True), base64.b64decode(parts[5], validate=True)
    except ValueError:
        raise HashError("password's SALT and HASH must be base64") from None


def verify_password(password: str, stored: str) -> bool:
    check_hash_form(stored)
    _, n, r, p, salt, digest = stored.split(":")
    want = base64.b64decode(digest)
    got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), dklen=len(want))
    return hmac.compare_digest(got, want)


@dataclass
class Lockout:
    """Five wrong tries in a row lock the login for 60 s (for everyone: there is one director)."""

    clock: Callable[[], float] = time.monotonic
    failures: int = 0
    locked_until: float = 0.0
    _: None = field(default=None, repr=False)

    def locked_for(self) -> float:
        return max(0.0, self.locked_until - self.clock())

    def failed(self) -> None:
        self.failures += 1
        if self.failures >= MAX_TRIES:
            self.locked_until = self.clock() + LOCK_S
            self.failures = 0

    def succeeded(self) -> None:
        self.failures = 0


def new_token() -> str:
    return secrets.token_urlsafe(32)


def same_token(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(a, b)


_SECRET = re.compile(r"^[0-9a-f]{64}$")


def session_secret(path: Path) -> str:
    """The secret the session cookies are signed with: read from `path`, or made and written there
    (0600) when it is missing or not one of ours (a damaged file is replaced whole, never used)."""
    try:
        text = path.read_text().strip()
        if _SECRET.match(text):
            return text
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    secret = secrets.token_hex(32)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, secret + "\n", 0o600)
    return secret
