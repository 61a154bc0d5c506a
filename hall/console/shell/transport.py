"""How the console's page travels: HTTPS with a certificate from the hall's CA (uvicorn's TLS,
[console] certfile and keyfile), or plain HTTP only to the machine it runs on.

`PlainHttpLocalOnly` (ASGI middleware, outermost): a plain-HTTP request from any address that is not
loopback is refused before anything reads it, so a director's password never crosses the hall's
network in clear. `trust_hint` is the line the console prints at start: how to trust the hall's CA
once in a browser, with the CA certificate's SHA-256 fingerprint to compare.
"""

from __future__ import annotations

import hashlib
import ipaddress
import ssl
from pathlib import Path

REFUSED = (b"plain HTTP is served only to this machine: serve the console over HTTPS "
           b"(certfile and keyfile in [console], docs/fleet.md)\n")


def is_loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


class PlainHttpLocalOnly:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope.get("scheme") == "http" and not is_loopback((scope.get("client") or (None,))[0]):
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(REFUSED)).encode())]})
            await send({"type": "http.response.body", "body": REFUSED})
            return
        await self.app(scope, receive, send)


def fingerprint(pem_path: Path) -> str:
    der = ssl.PEM_cert_to_DER_cert(Path(pem_path).read_text())
    digest = hashlib.sha256(der).hexdigest().upper()
    return ":".join(digest[i:i + 2] for i in range(0, len(digest), 2))


def trust_hint(certfile: Path) -> str:
    """What to tell the director: trust the hall's CA (beside the certificate) once per browser."""
    ca = Path(certfile).parent / "ca.crt"
    if not ca.is_file():
        return f"the page's certificate is {certfile}: trust the CA that signed it in the director's browser"
    return (f"trust the hall's CA once in each director's browser: import {ca} as a certificate authority "
            f"(Chrome: Settings > Privacy and security > Security > Manage certificates > Authorities > Import; "
            f"Firefox: Settings > Certificates > View Certificates > Authorities > Import); "
            f"its SHA-256 fingerprint is {fingerprint(ca)}")
