"""A device's own key, and a secret sealed to it (issue 25 item 1), with the `openssl` tool.

Each clock and station makes one RSA-2048 key the first time it joins and keeps it owner-only; the
private half never leaves the device. Its public half (DER) goes in the device's hello: the code the
device shows and its enrolment topics are derived from it (hall.wire.join). When the director
assigns the device, the login it makes (password and client id) is sealed to that public key with
RSA-OAEP (SHA-256), so only the device holding the key can open it; whoever else reads the reply or
copied the join file learns nothing it can log in with.

Why openssl and not a Python package: it is on every Raspberry Pi OS and Debian machine already and
hall.director.tlsfiles uses it for the hall's CA, so neither the Pi nor the director's machine needs
a new package; no cryptography is written here. Each call is one short `openssl` process (a few ms;
the key is made once, about a second on a Pi 4).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

BITS = 2048
MAX_PUBLIC_BYTES = 600  # an RSA-2048 public key is 294 bytes of DER, RSA-4096 550: more is not a key
MAX_SEALED_BYTES = 512  # RSA-2048 ciphertext is 256 bytes
OAEP = ("-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256")
TIMEOUT_S = 60  # a Pi Zero makes a 2048-bit key in well under this


class DeviceKeyError(RuntimeError):
    """openssl is missing, or refused a key or a sealed message."""


def _openssl(*args: str, data: bytes | None = None) -> bytes:
    binary = shutil.which("openssl")
    if binary is None:
        raise DeviceKeyError("openssl is not installed: sudo apt install openssl")
    try:
        r = subprocess.run([binary, *args], input=data, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise DeviceKeyError(f"openssl {args[0]} did not finish in {TIMEOUT_S} s") from None
    if r.returncode != 0:
        words = r.stderr.decode(errors="replace").strip().splitlines()
        raise DeviceKeyError(f"openssl {args[0]}: {words[-1] if words else r.returncode}")
    return r.stdout


def make(path: Path) -> None:
    """Make the device's key at `path` (owner-only), replacing nothing: a key already there stays."""
    path = Path(path)
    if path.is_file():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".new")
    old = os.umask(0o077)
    try:
        _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", f"rsa_keygen_bits:{BITS}", "-out", str(tmp))
    finally:
        os.umask(old)
    os.replace(tmp, path)


def public_der(path: Path) -> bytes:
    """The public half of the key at `path`, as DER (what the hello carries)."""
    return _openssl("pkey", "-in", str(path), "-pubout", "-outform", "DER")


def seal(public: bytes, secret: bytes) -> bytes:
    """`secret` encrypted to the public key `public` (DER): only its private key opens it."""
    if not public or len(public) > MAX_PUBLIC_BYTES:
        raise DeviceKeyError(f"a device key is 1 to {MAX_PUBLIC_BYTES} bytes of DER")
    with tempfile.NamedTemporaryFile(suffix=".der") as f:
        f.write(public)
        f.flush()
        return _openssl("pkeyutl", "-encrypt", "-pubin", "-keyform", "DER", "-inkey", f.name, *OAEP, data=secret)


def unseal(path: Path, sealed: bytes) -> bytes:
    """What `seal` sealed to this device's key (at `path`)."""
    if not sealed or len(sealed) > MAX_SEALED_BYTES:
        raise DeviceKeyError(f"a sealed secret is 1 to {MAX_SEALED_BYTES} bytes")
    return _openssl("pkeyutl", "-decrypt", "-inkey", str(path), *OAEP, data=sealed)
