"""Wheels of the packages setup.sh installed in this venv, for tests that install a bundle on this
machine with no network (tests/test_bundle.py).

A bundle's wheelhouse comes from PyPI (`rackside bundle` downloads it), and tests reach no network;
pip cannot wheel an installed package back up, so this packs each installed distribution's files
(its RECORD, less what installing added: scripts outside site-packages, INSTALLER, REQUESTED,
direct_url.json, byte code) into a wheel with its original WHEEL tags and a fresh RECORD. pip then
installs them exactly as it would PyPI's files: same versions, same compiled extensions.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from importlib import metadata
from pathlib import Path

ADDED_BY_INSTALL = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}


def pinned_names(requirements: Path) -> list[str]:
    names = []
    for line in requirements.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.append(re.split(r"[=<>!~;\[ ]", line, maxsplit=1)[0])
    return names


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel_of_installed(name: str, dest: Path) -> Path:
    dist = metadata.distribution(name)
    wheel_meta = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_meta.splitlines() if line.startswith("Tag:")]
    assert tags, f"{name}: no Tag in its WHEEL file"
    parts = [sorted({t.split("-")[i] for t in tags}) for i in range(3)]
    project = re.sub(r"[-_.]+", "_", dist.metadata["Name"]).lower()
    filename = f"{project}-{dist.version}-{'.'.join(parts[0])}-{'.'.join(parts[1])}-{'.'.join(parts[2])}.whl"
    info_dir = None
    record = []
    path = dest / filename
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as whl:
        for file in dist.files or []:
            arcname = file.as_posix()
            if arcname.startswith("..") or "__pycache__" in file.parts:
                continue
            if len(file.parts) == 2 and file.parts[0].endswith(".dist-info"):  # its own, not one it vendors
                info_dir = file.parts[0]
                if file.name in ADDED_BY_INSTALL:
                    continue
            local = Path(dist.locate_file(file))
            if not local.exists():
                continue  # removed after install (setup.sh drops setuptools' distutils-precedence.pth)
            data = local.read_bytes()
            whl.writestr(arcname, data)
            record.append(f"{arcname},{_record_hash(data)},{len(data)}")
        assert info_dir is not None, f"{name}: no .dist-info in its RECORD"
        record.append(f"{info_dir}/RECORD,,")
        whl.writestr(f"{info_dir}/RECORD", "\n".join(record) + "\n")
    return path


def with_dependencies(names: list[str]) -> list[str]:
    """`names` and every installed package they require (not extras), as pip would resolve them
    (colorzero needs setuptools, which requirements.txt does not pin)."""
    seen: dict[str, str] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a dependency for another Python or platform, not installed here
        seen[key] = name
        for req in dist.requires or []:
            if "extra ==" not in req:
                todo.append(re.split(r"[=<>!~;\[ (]", req, maxsplit=1)[0])
    return sorted(seen.values())


def wheelhouse(requirements: Path, dest: Path) -> Path:
    """A folder of wheels: every package `requirements` pins and what they need, as installed here."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in with_dependencies(pinned_names(requirements)):
        wheel_of_installed(name, dest)
    return dest
