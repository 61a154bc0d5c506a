"""The one form of a stored secret's hash, for the console's password and the kiosk's PIN alike:
`scrypt:N:R:P:SALT:HASH` (SALT and HASH base64). The parameters travel with the hash, so they
can be raised later without invalidating old configs. The kiosk's older `scrypt$N$r$p$salthex$hashhex`
is still read (`parse`), so a station configured before stays working.

A leaf: imports nothing of Rackside. hashlib is imported when a hash is made or checked, not with
this module (OpenSSL's loading is a measurable part of the station's cold start).
"""

from __future__ import annotations

import base64
import binascii

FORM = "scrypt:N:R:P:SALT:HASH"


def make(secret: str, salt: bytes, *, n: int, r: int, p: int) -> str:
    import hashlib

    digest = hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, dklen=32, maxmem=256 * 1024 * 1024)
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"scrypt:{n}:{r}:{p}:{b64(salt)}:{b64(digest)}"


def parse(stored: str) -> tuple[int, int, int, bytes, bytes]:
    """(N, R, P, salt, digest) of a stored hash, in either form; ValueError naming the form."""
    old = stored.startswith("scrypt$")
    parts = stored.split("$" if old else ":")
    if len(parts) != 6 or parts[0] != "scrypt" or not all(x.isdigit() for x in parts[1:4]):
        raise ValueError(f"expected {FORM}")
    try:
        if old:
            salt, digest = bytes.fromhex(parts[4]), bytes.fromhex(parts[5])
        else:
            salt, digest = base64.b64decode(parts[4], validate=True), base64.b64decode(parts[5], validate=True)
    except (ValueError, binascii.Error):
        raise ValueError(f"expected {FORM}, SALT and HASH in base64") from None
    return int(parts[1]), int(parts[2]), int(parts[3]), salt, digest


def verify(secret: str, stored: str) -> bool:
    """Whether `secret` is the one `stored` was made from (constant-time comparison)."""
    import hashlib
    import hmac

    n, r, p, salt, digest = parse(stored)
    got = hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, dklen=len(digest), maxmem=256 * 1024 * 1024)
    return hmac.compare_digest(got, digest)
