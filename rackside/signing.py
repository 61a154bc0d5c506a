"""Signed bundles (issue 25, item 2; docs/deploy.md, "Signed bundles"): Ed25519 through the `openssl`
tool, as hall.director.tlsfiles makes the hall's TLS files.

Why openssl and not the `cryptography` package: openssl is already on every machine that runs
Rackside (Debian's and Raspberry Pi OS's own; ca-certificates depends on it) and already made the
hall's CA, while `cryptography` is not a dependency: it would add two packages (and cffi's compiled
wheels) to every bundle's aarch64 wheelhouse and to the root updater's trusted code, for three
operations the openssl command does. Ed25519 needs OpenSSL 3.0's `pkeyutl -rawin` (Bookworm has 3.0,
Trixie 3.5). Ed25519 signs its whole message in one pass, so what is signed is small: a bundle's
version and its SHA256SUMS (a few kB), which lists the SHA-256 of every other file in it (bundle.json too), as Mender signs an
artifact's manifest and SWUpdate its sw-description rather than the images themselves.

    hall provision DIR/update-signing.key   the private key: kept with the director, owner-only
    join.toml update_key = "..."            the public key (hall.wire.join), for every device
    /etc/rackside/update-key.pem            that key on a Pi: root's, installed by a bundle's
                                            install.sh from its join file; the root updater
                                            verifies against this file and nothing else
    rackside-<version>/SHA256SUMS.sig       in a bundle: the signature of its version and its
                                            SHA256SUMS (signed_manifest)
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

KEY_FILE = "update-signing.key"  # in the provisioning folder, beside the hall's TLS files
TRUSTED_KEY = "etc/rackside/update-key.pem"  # under a Pi's root
SIGNATURE_FILE = "SHA256SUMS.sig"  # in a bundle's top folder, beside the SHA256SUMS it signs
SIGNED_FORMAT = b"rackside bundle signature 2"  # the first line of what a bundle's signature signs (signed_manifest)
SIGNATURE_BYTES = 64  # an Ed25519 signature
# An Ed25519 public key in PEM: the DER SubjectPublicKeyInfo is always 12 bytes of algorithm
# (base64 "MCowBQYDK2VwAyEA") and the 32-byte key, so the whole PEM has one fixed shape.
PUBLIC_KEY = re.compile(r"^-----BEGIN PUBLIC KEY-----\n(MCowBQYDK2VwAyEA[A-Za-z0-9+/]{43}=)\n-----END PUBLIC KEY-----\n?$")


class SigningError(RuntimeError):
    """A key that cannot be made, read or trusted, or openssl missing: one line saying why."""


def _openssl(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    binary = shutil.which("openssl")
    if binary is None:
        raise SigningError("openssl is not installed: sudo apt install openssl")
    return subprocess.run([binary, *args], input=input, capture_output=True, timeout=60)


def _why(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


def check_public_key(text: object) -> str:
    """`text` as one Ed25519 public key in PEM (what `public_key` returns), or ValueError."""
    if not isinstance(text, str) or not PUBLIC_KEY.match(text.strip() + "\n"):
        raise ValueError("not an Ed25519 public key in PEM (-----BEGIN PUBLIC KEY----- ...), as `rackside hall provision` writes it")
    return text.strip() + "\n"


def make_key(path: Path) -> str:
    """A new Ed25519 private key at `path` (owner-only, written whole), unless one is there already:
    the Pis trust its public half, so re-provisioning keeps it. Returns the public key (PEM)."""
    if not path.exists():
        partial = path.with_name(path.name + ".partial")
        old = os.umask(0o077)
        try:
            done = _openssl("genpkey", "-algorithm", "ed25519", "-out", str(partial))
        finally:
            os.umask(old)
        if done.returncode != 0:
            partial.unlink(missing_ok=True)
            raise SigningError(f"openssl could not make the update signing key: {_why(done)}")
        os.chmod(partial, 0o600)
        os.replace(partial, path)
    return public_key(path)


def public_key(private_key: Path) -> str:
    """The public key (PEM) of the private key file `private_key`."""
    done = _openssl("pkey", "-in", str(private_key), "-pubout")
    if done.returncode != 0:
        raise SigningError(f"{private_key}: not a private key openssl can read ({_why(done)})")
    try:
        return check_public_key(done.stdout.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise SigningError(f"{private_key}: not an Ed25519 key (`rackside hall provision` makes {KEY_FILE})") from None


def signed_manifest(version: str, sums: bytes) -> bytes:
    """What a bundle's SHA256SUMS.sig signs (issue 36): its format line, its version, then its
    SHA256SUMS. The version (the top folder's name, which the console lists and the Pi installs as)
    is inside the signed text, and SHA256SUMS covers bundle.json and every other file, so a signed
    bundle renamed to another version no longer verifies. A signature over SHA256SUMS alone (the
    form before) verifies against nothing."""
    return SIGNED_FORMAT + b"\nversion " + version.encode("ascii") + b"\n" + sums


def sign(private_key: Path, data: bytes) -> bytes:
    """The Ed25519 signature of `data` (small: one-shot) with the key file `private_key`."""
    public_key(private_key)  # an Ed25519 key, or the one-line reason it is not
    with tempfile.TemporaryDirectory(prefix="rackside-sign-") as tmp:
        message = Path(tmp) / "message"
        message.write_bytes(data)
        done = _openssl("pkeyutl", "-sign", "-rawin", "-inkey", str(private_key), "-in", str(message))
    if done.returncode != 0 or len(done.stdout) != SIGNATURE_BYTES:
        raise SigningError(f"openssl could not sign with {private_key}: {_why(done)}")
    return done.stdout


def verify(public_pem: str, data: bytes, signature: bytes) -> bool:
    """True only if `signature` is `public_pem`'s Ed25519 signature of `data`."""
    public_pem = check_public_key(public_pem)
    if len(signature) != SIGNATURE_BYTES:
        return False
    # The files openssl reads are in a folder only this process's user can open (mkdtemp: 0700).
    with tempfile.TemporaryDirectory(prefix="rackside-verify-") as tmp:
        folder = Path(tmp)
        (folder / "key.pem").write_text(public_pem)
        (folder / "message").write_bytes(data)
        (folder / "signature").write_bytes(signature)
        done = _openssl("pkeyutl", "-verify", "-pubin", "-inkey", str(folder / "key.pem"), "-rawin",
                        "-in", str(folder / "message"), "-sigfile", str(folder / "signature"))
    return done.returncode == 0 and b"Signature Verified Successfully" in done.stdout


def trusted_key(root: Path) -> str | None:
    """The update key this system trusts (ROOT/etc/rackside/update-key.pem), None if it has none;
    SigningError if the file or its folder could be changed by anyone but this process's user (root
    on a Pi), as sshd's StrictModes refuses such files: a key the `rackside` user could write would
    let it choose what root installs."""
    path = root / TRUSTED_KEY
    me = os.geteuid()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise SigningError(f"{path}: {e.strerror} (it must be a plain file of root's, mode 0644)") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        text = f.read(4096)
    for what, s in ((path, st), (path.parent, os.stat(path.parent))):
        if s.st_uid != me or s.st_mode & 0o022 or (what == path and not stat.S_ISREG(s.st_mode)):
            raise SigningError(f"{what}: must be {'a plain file' if what == path else 'a folder'} owned by "
                               f"uid {me} that no one else may write; it is not, so it is not trusted")
    try:
        return check_public_key(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SigningError(f"{path}: {e}") from None
