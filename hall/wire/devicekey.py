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

import hashlib
import os
import secrets
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
    """`secret` encrypted to the public key `public` (DER): only its private key opens it.

    Written here rather than run as `openssl pkeyutl -encrypt` (what `seal_with_openssl` does, and
    what the tests check this against): the director seals one login per assignment, one at a time,
    and an openssl process costs about 20 ms on a loaded machine, 4 s of a 200-clock hall's
    enrolment. This is only the public-key half of RSA-OAEP (RFC 8017 7.1.1, SHA-256, MGF1-SHA-256):
    no private key and no secret but the login itself, which is random. The device opens it with
    openssl (`unseal`), so a mistake here shows as a login that cannot be opened."""
    n, e = _rsa_public(public)
    k = (n.bit_length() + 7) // 8
    h = hashlib.sha256
    hlen = h().digest_size
    if len(secret) > k - 2 * hlen - 2:
        raise DeviceKeyError(f"a sealed secret is at most {k - 2 * hlen - 2} bytes for this key")
    db = h(b"").digest() + b"\0" * (k - len(secret) - 2 * hlen - 2) + b"\1" + secret
    seed = secrets.token_bytes(hlen)
    masked_db = _xor(db, _mgf1(seed, k - hlen - 1))
    masked_seed = _xor(seed, _mgf1(masked_db, hlen))
    m = int.from_bytes(b"\0" + masked_seed + masked_db, "big")
    return pow(m, e, n).to_bytes(k, "big")


def seal_with_openssl(public: bytes, secret: bytes) -> bytes:
    """`seal`, by the openssl tool (the tests' reference)."""
    _rsa_public(public)
    with tempfile.NamedTemporaryFile(suffix=".der") as f:
        f.write(public)
        f.flush()
        return _openssl("pkeyutl", "-encrypt", "-pubin", "-keyform", "DER", "-inkey", f.name, *OAEP, data=secret)


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b))


def _mgf1(seed: bytes, length: int) -> bytes:
    out = b"".join(hashlib.sha256(seed + i.to_bytes(4, "big")).digest() for i in range(-(-length // 32)))
    return out[:length]


RSA_OID = bytes.fromhex("2a864886f70d010101")  # rsaEncryption


def _der(data: bytes, at: int, tag: int) -> tuple[bytes, int]:
    """The contents of the DER element with `tag` at `at`, and where the next one starts."""
    if at + 2 > len(data) or data[at] != tag:
        raise DeviceKeyError("a device key must be an RSA public key (DER)")
    length, at = data[at + 1], at + 2
    if length & 0x80:
        size = length & 0x7F
        if not 1 <= size <= 2 or at + size > len(data):
            raise DeviceKeyError("a device key must be an RSA public key (DER)")
        length, at = int.from_bytes(data[at:at + size], "big"), at + size
    if at + length > len(data):
        raise DeviceKeyError("a device key must be an RSA public key (DER)")
    return data[at:at + length], at + length


def _rsa_public(public: bytes) -> tuple[int, int]:
    """(n, e) of an RSA SubjectPublicKeyInfo in DER, checked: 2048 to 4096 bits, e odd and > 1."""
    if not public or len(public) > MAX_PUBLIC_BYTES:
        raise DeviceKeyError(f"a device key is 1 to {MAX_PUBLIC_BYTES} bytes of DER")
    spki, end = _der(public, 0, 0x30)
    if end != len(public):
        raise DeviceKeyError("a device key must be an RSA public key (DER)")
    algorithm, at = _der(spki, 0, 0x30)
    oid, _ = _der(algorithm, 0, 0x06)
    if oid != RSA_OID:
        raise DeviceKeyError("a device key must be an RSA public key (DER)")
    bits, _ = _der(spki, at, 0x03)
    if not bits or bits[0] != 0:
        raise DeviceKeyError("a device key must be an RSA public key (DER)")
    key, _ = _der(bits[1:], 0, 0x30)
    n_bytes, at = _der(key, 0, 0x02)
    e_bytes, _ = _der(key, at, 0x02)
    n, e = int.from_bytes(n_bytes, "big"), int.from_bytes(e_bytes, "big")
    if not 2048 <= n.bit_length() <= 4096 or e < 3 or e % 2 == 0:
        raise DeviceKeyError("a device key must be an RSA key of 2048 to 4096 bits")
    return n, e


def unseal(path: Path, sealed: bytes) -> bytes:
    """What `seal` sealed to this device's key (at `path`)."""
    if not sealed or len(sealed) > MAX_SEALED_BYTES:
        raise DeviceKeyError(f"a sealed secret is 1 to {MAX_SEALED_BYTES} bytes")
    return _openssl("pkeyutl", "-decrypt", "-inkey", str(path), *OAEP, data=sealed)
