"""Building and installing bundles in tests: `rackside bundle` and the bundle's install.sh run as
processes, from a copy of this checkout, with the wheels setup.sh installed here (no network), into
a temporary root with a fake systemctl (no systemd runs there)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from support.deploy import REPO, fake_systemctl
from support.wheelhouse import wheelhouse

RACKSIDE = [sys.executable, str(REPO / "bin" / "rackside")]
MACHINE = os.uname().machine
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"


def bundle_archive(archive: Path, files: dict[str, bytes], *, listed: dict[str, bytes] | None = None,
                   sign_with: Path | None = None, folder: str) -> Path:
    """A bundle laid out as `rackside bundle` lays it out: `files` (a `bundle.json` among them) in one
    `folder`, their SHA256SUMS (of `listed` instead, to make one that does not match), and
    SHA256SUMS.sig over the bundle's version and those sums when signed (`signing.signed_manifest`)."""
    sums = "".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in (files if listed is None else listed).items()).encode()
    members = {**files, "SHA256SUMS": sums}
    if sign_with is not None:
        from rackside import signing

        version = json.loads(files["bundle.json"])["version"]
        members[signing.SIGNATURE_FILE] = signing.sign(sign_with, signing.signed_manifest(version, sums))
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size, info.mode = len(data), 0o755 if name == "install.sh" else 0o644
            tar.addfile(info, io.BytesIO(data))
    return archive


def copy_checkout(dest: Path) -> Path:
    """The files git would commit (tracked, and new ones not ignored), links kept as links."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        origin = REPO / name
        if not os.path.lexists(origin):
            continue  # deleted in the working tree, not yet committed
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            target.symlink_to(os.readlink(origin))
        else:
            shutil.copy2(origin, target)
    return dest


def build_bundle(source: Path, wheels: Path, out: Path, label: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*RACKSIDE, "bundle", "--out", str(out), "--source", str(source), "--wheelhouse", str(wheels),
                           "--python", PYTHON, "--machine", MACHINE, "--label", label, *extra],
                          capture_output=True, text=True, timeout=300)


def unpack(archive: Path, dest: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="tar")
        (top,) = {m.name.split("/")[0] for m in tar.getmembers()}
    return dest / top


def install(bundle_dir: Path, root: Path, *args: str, tmp: Path) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`install.sh --root ROOT` from an unpacked bundle; (result, the systemctl calls it made)."""
    systemctl, log = fake_systemctl(tmp)
    log.unlink(missing_ok=True)
    env = {**os.environ, "RACKSIDE_SYSTEMCTL": systemctl, "RACKSIDE_PYTHON": sys._base_executable}
    result = subprocess.run(["bash", str(bundle_dir / "install.sh"), "--root", str(root), "--user", "root", *args],
                            capture_output=True, text=True, env=env, timeout=600)
    calls = log.read_text().splitlines() if log.exists() else []
    return result, calls


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="install.sh runs as root")


@pytest.fixture(scope="session")
def offline_wheels(tmp_path_factory) -> Path:
    """Every pinned runtime package and what it needs, as wheels of what is installed here."""
    return wheelhouse(REPO / "requirements.txt", tmp_path_factory.mktemp("wheelhouse"))
