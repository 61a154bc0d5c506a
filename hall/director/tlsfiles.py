"""The hall's own certificate authority and the broker's (and console's) certificate, made with the
`openssl` tool (Debian's and Raspberry Pi OS's own; no crypto written here and no new Python package
on the director's machine).

    DIR/tls/ca.key, ca.crt          the hall's CA (P-256, 825 days); ca.crt goes into the join file
    DIR/tls/server.key, server.crt  the broker's and the console's certificate, signed by the CA, for
                                    every name and address devices may use (subjectAltName)

Keys are owner-only. Re-provisioning keeps an existing CA (devices pin it) and makes a new server
certificate, so adding a host name does not strand the devices already joined.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

DAYS = 825  # the longest validity browsers accept for a server certificate


class TlsError(RuntimeError):
    """openssl is missing or failed making the hall's CA or server certificate."""


def default_names() -> list[str]:
    """The names a device or browser may use for this machine: its host name, host.local (mDNS),
    localhost and 127.0.0.1."""
    host = socket.gethostname()
    names = [host, f"{host}.local", "localhost", "127.0.0.1"]
    return list(dict.fromkeys(n for n in names if n))


def san(names: list[str]) -> str:
    parts = []
    for n in names:
        try:
            ipaddress.ip_address(n)
            parts.append(f"IP:{n}")
        except ValueError:
            parts.append(f"DNS:{n}")
    return "subjectAltName=" + ",".join(parts)


def _openssl(*args: str, cwd: Path) -> None:
    binary = shutil.which("openssl")
    if binary is None:
        raise TlsError("openssl is not installed: sudo apt install openssl")
    r = subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise TlsError(f"openssl {args[0]}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")


def make(folder: Path, hall: str, names: list[str]) -> None:
    """Make (or keep) the CA and make the server certificate for `names` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    old = os.umask(0o077)  # every key openssl writes here is owner-only
    try:
        if not ((folder / "ca.key").is_file() and (folder / "ca.crt").is_file()):
            _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", "ca.key", "-out", "ca.crt", "-subj", f"/CN=Rackside hall {hall} CA", "-days", str(DAYS),
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                     cwd=folder)
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            ext = Path(tmp) / "server.ext"
            ext.write_text(san(names) + "\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")
            _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
                     "-out", str(Path(tmp) / "server.csr"), "-subj", f"/CN={names[0]}", cwd=folder)
            _openssl("x509", "-req", "-in", str(Path(tmp) / "server.csr"), "-CA", "ca.crt", "-CAkey", "ca.key",
                     "-CAcreateserial", "-out", "server.crt", "-days", str(DAYS), "-extfile", str(ext), cwd=folder)
    finally:
        os.umask(old)
    os.chmod(folder / "ca.crt", 0o644)
    os.chmod(folder / "server.crt", 0o644)
