"""Signed updates (issue 25, item 2; defect 5): the unprivileged `rackside` user writes the update
request the root service acts on (rackside-update.path -> `rackside update --request`), so it must
not be able to choose what root installs. Here the attacker is that user: it puts a bundle of its
own making, with the right SHA-256, beside a request naming it, and the root service's own command
runs on it (in a test root). Only a bundle signed with the hall's update key (made by `rackside hall
provision`, its public half installed root-owned from the join file) is unpacked and its install.sh run."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from support.bundle import RACKSIDE

VERSION = "6.6.6"


def tiny_bundle(archive: Path, install_sh: str, *, sign_with: Path | None = None, extra: dict[str, bytes] | None = None) -> Path:
    """A bundle laid out as `rackside bundle` lays it out (one rackside-<version>/ folder, SHA256SUMS
    of every file, SHA256SUMS.sig when signed), with an install.sh of the test's choosing."""
    files = {"install.sh": install_sh.encode(), "bundle.json": b"{}\n", **(extra or {})}
    sums = "".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in files.items()).encode()
    files["SHA256SUMS"] = sums
    if sign_with is not None:
        from rackside import signing

        files[signing.SIGNATURE_FILE] = signing.sign(sign_with, sums)
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"rackside-{VERSION}/{name}")
            info.size, info.mode = len(data), 0o755 if name == "install.sh" else 0o644
            tar.addfile(info, io.BytesIO(data))
    return archive


def request_update(folder: Path, archive: Path, root: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """What the clock (or anyone who is the `rackside` user) writes, then what the root unit runs."""
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    (folder / "request.json").write_text(json.dumps({"id": "c1", "file": archive.name, "sha256": sha, "wait_s": 0}))
    done = subprocess.run([*RACKSIDE, "update", "--request", str(folder / "request.json"), "--root", str(root)],
                          capture_output=True, text=True, timeout=120)
    return done, json.loads((folder / "result.json").read_text())


@pytest.fixture
def hall(tmp_path):
    """A Pi's test root and the clock's updates folder (the `rackside` user's)."""
    root, folder = tmp_path / "root", tmp_path / "state" / "updates"
    (root / "etc/rackside").mkdir(parents=True)
    folder.mkdir(parents=True)
    return root, folder


def test_root_runs_no_bundle_the_rackside_user_made(hall, tmp_path):
    """Defect 5: today the root service installs whatever file and digest the request names."""
    root, folder = hall
    owned = tmp_path / "owned"
    evil = tiny_bundle(folder / f"rackside-{VERSION}.tar.gz", f"#!/bin/sh\nid -u > {owned}\n")
    done, result = request_update(folder, evil, root)
    assert not owned.exists(), "the rackside user's install.sh ran as root"
    assert result["id"] == "c1" and result["status"] != 0
    assert "update key" in result["output"], result["output"]
    assert not (root / "opt/rackside").exists() or not [p for p in (root / "opt/rackside").iterdir() if not p.name.startswith(".")]
