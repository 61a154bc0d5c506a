"""The check the console makes of an uploaded bundle before it offers it to clocks (docs/fleet.md,
"Updates from the console"): every file it holds matches the bundle's own SHA256SUMS, as
rackside.bundle writes them, and its one folder names a version an update may carry
(hall.wire.update). It reads the archive: not a pure core, so it is a module of its own."""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

from rackside.hall.wire.update import SHA256, VERSION, UpdateError


def check_bundle(archive: Path) -> str:
    """The version of the bundle `archive` once every file it holds matches its SHA256SUMS and
    SHA256SUMS lists every file; UpdateError naming the file otherwise. One pass over the archive."""
    digests: dict[str, str] = {}
    sums: bytes | None = None
    tops: set[str] = set()
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                top, _, rel = member.name.partition("/")
                tops.add(top)
                if not member.isfile() or not rel:
                    continue
                f = tar.extractfile(member)
                if rel == "SHA256SUMS":
                    sums = f.read(16 * 1024 * 1024)
                    continue
                h = hashlib.sha256()
                for chunk in iter(lambda: f.read(1024 * 1024), b""):
                    h.update(chunk)
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
    return version
