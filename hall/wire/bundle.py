"""The check the console makes of an uploaded bundle before it offers it to clocks (docs/fleet.md,
"Updates from the console"): every file it holds matches the bundle's own SHA256SUMS, as
rackside.bundle writes them, and its one folder names a version an update may carry
(hall.wire.update), and it holds only regular files and folders inside its one folder (the root
updater, rackside.update, makes the same check with `inspect_bundle` before it verifies the
signature). Its bundle.json, listed in SHA256SUMS, must name the version its folder names, and the
signature the root updater checks is of that version and SHA256SUMS together (signing.signed_manifest):
a signed bundle renamed to another version is refused (issue 36). It reads the archive: not a pure
core, so it is a module of its own."""

from __future__ import annotations

import hashlib
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path

from rackside.hall.wire.update import SHA256, VERSION, UpdateError
from rackside.signing import SIGNATURE_FILE, signed_manifest  # signs SHA256SUMS, so it is the one file not listed in it


MAX_MEMBERS = 50_000  # a bundle's source and wheels are ~1,500 files; a tar of more is not one
MANIFEST = "bundle.json"  # what the bundle is (rackside.bundle): its version must be its folder's
MAX_MANIFEST_BYTES = 64 * 1024  # bundle.json is a dozen lines


@dataclass(frozen=True)
class Inspected:
    version: str
    sums: bytes  # the bundle's SHA256SUMS, every file's digest checked against it
    signature: bytes | None  # its SHA256SUMS.sig, when signed (checked by the root updater: rackside.update)
    built: str | None = None  # when it was built (bundle.json; ISO 8601 UTC), to tell a downgrade of the same release

    @property
    def signed(self) -> bytes:
        """What its signature must be the signature of: its version and its SHA256SUMS."""
        return signed_manifest(self.version, self.sums)


def _refuse_member(member: tarfile.TarInfo) -> str | None:
    """Why `member` has no place in a bundle, or None: regular files and folders only, each inside
    the one top folder (no absolute path, no `..`), no set-user-ID, set-group-ID or sticky bit.
    Refused here whatever tar would do with it (GNU tar on a Pi refuses some; Python's does not)."""
    name = member.name
    if name.startswith("/"):
        return f"{name[:100]!r}: an absolute path"
    if ".." in name.split("/"):
        return f"{name[:100]!r}: a path with '..' in it"
    if not (member.isfile() or member.isdir()):
        kind = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link", tarfile.FIFOTYPE: "a FIFO",
                tarfile.CHRTYPE: "a device", tarfile.BLKTYPE: "a device"}.get(member.type, "not a regular file or folder")
        return f"{name[:100]!r}: {kind}"
    if member.mode & 0o7000:
        return f"{name[:100]!r}: a set-user-ID, set-group-ID or sticky mode ({member.mode:o})"
    return None


def check_bundle(archive: Path) -> str:
    """The version of the bundle `archive` (inspect_bundle)."""
    return inspect_bundle(archive).version


def inspect_bundle(archive: Path) -> Inspected:
    """The bundle `archive`, once it holds only regular files and folders inside one
    rackside-<version>/ folder, every file matches its SHA256SUMS and SHA256SUMS lists every file
    (but SHA256SUMS.sig); UpdateError naming the member or file otherwise. One pass over the archive."""
    digests: dict[str, str] = {}
    sums: bytes | None = None
    signature: bytes | None = None
    manifest: bytes | None = None
    tops: set[str] = set()
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for n, member in enumerate(tar, 1):
                why = _refuse_member(member) if n <= MAX_MEMBERS else f"more than {MAX_MEMBERS} files"
                if why is not None:
                    raise UpdateError(f"not a bundle: {why}; a bundle holds only regular files and folders inside it")
                top, _, rel = member.name.partition("/")
                tops.add(top)
                if not member.isfile() or not rel:
                    continue
                f = tar.extractfile(member)
                if rel == "SHA256SUMS":
                    sums = f.read(16 * 1024 * 1024)
                    continue
                if rel == SIGNATURE_FILE:
                    signature = f.read(1024)
                    continue
                h = hashlib.sha256()
                for chunk in iter(lambda: f.read(1024 * 1024), b""):
                    h.update(chunk)
                    if rel == MANIFEST and len(manifest or b"") <= MAX_MANIFEST_BYTES:  # more is refused below
                        manifest = (manifest or b"") + chunk[:MAX_MANIFEST_BYTES + 1]
                digests[rel] = h.hexdigest()
    except (tarfile.TarError, OSError, EOFError, ValueError) as e:
        raise UpdateError(f"not a bundle: {e}") from None
    if len(tops) != 1 or not next(iter(tops)).startswith("rackside-") or sums is None:
        raise UpdateError("not a bundle: one rackside-<version>/ folder with its SHA256SUMS is expected")
    listed: dict[str, str] = {}
    for n, line in enumerate(sums.decode("utf-8", "replace").splitlines(), 1):
        digest, _, name = line.partition("  ")
        if not SHA256.match(digest) or not name:
            raise UpdateError(f"SHA256SUMS line {n}: not `HEX  NAME`")
        listed[name] = digest
    for name, digest in sorted(digests.items()):
        if listed.get(name) != digest:
            raise UpdateError(f"{name}: {'not listed in' if name not in listed else 'does not match'} SHA256SUMS")
    missing = sorted(set(listed) - set(digests))
    if missing:
        raise UpdateError(f"{missing[0]}: listed in SHA256SUMS but not in the bundle")
    version = next(iter(tops))[len("rackside-"):]
    if not VERSION.match(version):
        raise UpdateError(f"version {version[:64]!r}: not a version folder name")
    said = _manifest(manifest)
    if said.get("version") != version:
        raise UpdateError(f"its folder says version {version[:64]!r} but its {MANIFEST} says {str(said.get('version'))[:64]!r}: "
                          "renamed after it was built, refused (a bundle is installed as the version it was built as)")
    built = said.get("built") if isinstance(said.get("built"), str) else None
    return Inspected(version, sums, signature, built)


def _manifest(data: bytes | None) -> dict:
    """bundle.json (listed in SHA256SUMS, so as built) as a JSON object, or UpdateError."""
    if data is None:
        raise UpdateError(f"not a bundle: no {MANIFEST} (what the bundle is, as `rackside bundle` writes it)")
    try:
        said = json.loads(data) if len(data) <= MAX_MANIFEST_BYTES else None
    except ValueError:
        said = None
    if not isinstance(said, dict):
        raise UpdateError(f"{MANIFEST}: not a JSON object of at most {MAX_MANIFEST_BYTES} bytes")
    return said


