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

from support.bundle import RACKSIDE, bundle_archive

VERSION = "6.6.6"


def tiny_bundle(archive: Path, install_sh: str, *, sign_with: Path | None = None, extra: dict[str, bytes] | None = None,
                version: str | None = None, built: str = "2026-12-01T09:00:00Z", folder: str | None = None) -> Path:
    """A bundle laid out as `rackside bundle` lays it out (one rackside-<version>/ folder, its
    bundle.json, SHA256SUMS of every file, SHA256SUMS.sig when signed: signing.signed_manifest), with
    an install.sh of the test's choosing; `folder`: its folder renamed after it was signed."""
    version = version or VERSION
    files = {"install.sh": install_sh.encode(), "bundle.json": json.dumps({"version": version, "built": built}).encode(), **(extra or {})}
    return bundle_archive(archive, files, sign_with=sign_with, folder=folder or f"rackside-{version}")


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


@pytest.fixture
def keys(tmp_path):
    """The hall's update key (as provisioning makes it) and another one (an attacker's)."""
    from rackside import signing

    hall_key, other = tmp_path / "hall.key", tmp_path / "other.key"
    return hall_key, signing.make_key(hall_key), other, signing.make_key(other)


def trust(root: Path, public: str) -> Path:
    """What a bundle's install.sh does with its join file's update_key: a root-owned 0644 file."""
    from rackside import signing

    path = root / signing.TRUSTED_KEY
    path.write_text(public)
    path.chmod(0o644)
    return path


def test_with_the_halls_key_only_what_it_signed_is_installed(hall, keys, tmp_path):
    root, folder = hall
    hall_key, hall_public, other_key, _ = keys
    trust(root, hall_public)
    ran = tmp_path / "ran"
    script = f"#!/bin/sh\necho \"install.sh: done: rackside {VERSION} is current\"\nid -u > {ran}\n"

    for sign_with, says in [(None, "not signed"), (other_key, "its signature is not the hall's update key's")]:
        done, result = request_update(folder, tiny_bundle(folder / "b.tar.gz", script, sign_with=sign_with), root)
        assert result["status"] == 1 and says in result["output"], result["output"]
        assert not ran.exists()
    # A signed bundle whose file was changed after signing: SHA256SUMS no longer matches it.
    changed = tiny_bundle(folder / "b.tar.gz", script, sign_with=hall_key, extra={"source/a.py": b"x\n"})
    data = changed.read_bytes()
    import gzip

    raw = gzip.decompress(data).replace(b"x\n", b"y\n", 1)
    changed.write_bytes(gzip.compress(raw))
    done, result = request_update(folder, changed, root)
    assert result["status"] == 1 and "source/a.py: does not match SHA256SUMS" in result["output"], result["output"]

    done, result = request_update(folder, tiny_bundle(folder / "b.tar.gz", script, sign_with=hall_key), root)
    assert result["status"] == 0, result["output"]
    assert "signed with the hall's update key" in result["output"] and ran.read_text().strip() == "0"
    assert sorted(p.name for p in folder.iterdir()) == ["result.json"]  # the request and the bundle are gone

    # By hand as root, too: with a key trusted, an unsigned bundle is refused.
    by_hand = tiny_bundle(tmp_path / "by-hand.tar.gz", script)
    sha = hashlib.sha256(by_hand.read_bytes()).hexdigest()
    done = subprocess.run([*RACKSIDE, "update", str(by_hand), "--sha256", sha, "--root", str(root)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "not signed" in done.stderr


def test_a_key_the_rackside_user_could_write_is_not_trusted(hall, keys, tmp_path):
    root, folder = hall
    hall_key, hall_public, _, _ = keys
    trust(root, hall_public).chmod(0o666)
    done, result = request_update(folder, tiny_bundle(folder / "b.tar.gz", "#!/bin/sh\n", sign_with=hall_key), root)
    assert result["status"] == 1 and "not trusted" in result["output"], result["output"]


def test_links_planted_in_the_updates_folder_lead_root_nowhere(hall, keys, tmp_path):
    """The folder is the `rackside` user's: a link in place of the bundle, or of the folder itself,
    is refused, and root writes nothing through it."""
    root, folder = hall
    hall_key, hall_public, _, _ = keys
    trust(root, hall_public)
    elsewhere = tmp_path / "root-only"
    elsewhere.mkdir()
    real = tiny_bundle(elsewhere / "real.tar.gz", "#!/bin/sh\n", sign_with=hall_key)
    (folder / "b.tar.gz").symlink_to(real)
    sha = hashlib.sha256(real.read_bytes()).hexdigest()
    (folder / "request.json").write_text(json.dumps({"id": "c1", "file": "b.tar.gz", "sha256": sha, "wait_s": 0}))
    done = subprocess.run([*RACKSIDE, "update", "--request", str(folder / "request.json"), "--root", str(root)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "a request needs id, file (a bundle beside it)" in json.loads((folder / "result.json").read_text())["output"]

    moved = tmp_path / "state" / "elsewhere-link"
    moved.symlink_to(elsewhere)  # the updates folder replaced by a link to a folder of root's
    (elsewhere / "request.json").write_text((folder / "request.json").read_text() if (folder / "request.json").exists() else "{}")
    done = subprocess.run([*RACKSIDE, "update", "--request", str(moved / "request.json"), "--root", str(root)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "must be a folder, not a link" in done.stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == ["real.tar.gz", "request.json"]  # no result written there


def test_provisioning_makes_the_key_and_the_join_file_carries_its_public_half(tmp_path):
    from rackside import signing
    from rackside.hall.device import joinfile
    from rackside.hall.wire import join

    out = tmp_path / "hall"
    first = subprocess.run([*RACKSIDE, "hall", "provision", "--hall", "open2026", "--out", str(out), "--no-tls"],
                           capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    key = out / signing.KEY_FILE
    assert key.stat().st_mode & 0o777 == 0o600 and "update-signing.key" in first.stdout
    carried = joinfile.load(out / "join.toml").update_key
    assert carried == signing.public_key(key)
    again = subprocess.run([*RACKSIDE, "hall", "provision", "--hall", "open2026", "--out", str(out), "--no-tls"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and joinfile.load(out / "join.toml").update_key == carried  # the Pis still trust it
    # A join file from before update keys still loads; a malformed key is refused in one line.
    (tmp_path / "old.toml").write_text(join.join_text("open2026", "auto", "s" * 32, None))
    assert joinfile.load(tmp_path / "old.toml").update_key is None
    (tmp_path / "bad.toml").write_text(join.join_text("open2026", "auto", "s" * 32, None) + 'update_key = "x"\n')
    with pytest.raises(Exception, match="update_key: not an Ed25519 public key"):
        joinfile.load(tmp_path / "bad.toml")


# --- the version is signed; a downgrade only by name (issue 36, item 3) ---------------------------------


def test_a_signed_bundle_renamed_to_another_version_is_refused(hall, keys, tmp_path):
    """The red team's: a signed 0.1.0 bundle whose folder is renamed rackside-9.9.9 verified and
    installed as 9.9.9; the version is now inside what is signed, and bundle.json must say it."""
    root, folder = hall
    hall_key, hall_public, _, _ = keys
    trust(root, hall_public)
    ran = tmp_path / "ran"
    renamed = tiny_bundle(folder / "rackside-9.9.9.tar.gz", f"#!/bin/sh\nid -u > {ran}\n", sign_with=hall_key,
                          version="0.1.0", folder="rackside-9.9.9")
    done, result = request_update(folder, renamed, root)
    assert result["status"] == 1 and "renamed after it was built" in result["output"], result["output"]
    assert not ran.exists()
    from rackside.hall.wire import bundle as wire_bundle
    from rackside.hall.wire.update import UpdateError

    with pytest.raises(UpdateError, match="folder says version '9.9.9' but its bundle.json says '0.1.0'"):  # the console's check
        wire_bundle.inspect_bundle(tiny_bundle(tmp_path / "r.tar.gz", "#!/bin/sh\n", sign_with=hall_key, version="0.1.0",
                                               folder="rackside-9.9.9"))
    # bundle.json renamed with it: SHA256SUMS no longer matches it; SHA256SUMS made again: the signature fails
    relabelled = tiny_bundle(tmp_path / "s.tar.gz", "#!/bin/sh\n", version="9.9.9")
    from rackside import signing

    good = tiny_bundle(tmp_path / "g.tar.gz", "#!/bin/sh\n", sign_with=hall_key, version="0.1.0")
    with tarfile.open(good) as tar:
        signature = tar.extractfile(f"rackside-0.1.0/{signing.SIGNATURE_FILE}").read()
    with tarfile.open(relabelled) as tar, tarfile.open(tmp_path / "forged.tar.gz", "w:gz") as out:
        for m in tar:
            out.addfile(m, tar.extractfile(m))
        info = tarfile.TarInfo(f"rackside-9.9.9/{signing.SIGNATURE_FILE}")
        info.size = len(signature)
        out.addfile(info, io.BytesIO(signature))
    done, result = request_update(folder, _moved(tmp_path / "forged.tar.gz", folder), root)
    assert result["status"] == 1 and "not the hall's update key's signature of version 9.9.9" in result["output"], result["output"]


def _moved(archive: Path, folder: Path) -> Path:
    target = folder / archive.name
    archive.replace(target)
    return target


def _installed(root: Path, version: str, built: str) -> None:
    """What bundle-install.sh leaves: /opt/rackside/<version>/ with the bundle.json it came from, current at it."""
    base = root / "opt/rackside"
    (base / version).mkdir(parents=True)
    (base / version / ".bundle.json").write_text(json.dumps({"version": version, "built": built}))
    (base / "current").symlink_to(version)


@pytest.mark.parametrize("older", [("0.1.0+g1", "2026-12-02T09:00:00Z"), ("0.2.0+g2", "2026-11-30T09:00:00Z")],
                         ids=["an-earlier-release", "the-same-release-built-before"])
def test_an_older_bundle_is_refused_unless_the_director_asks_for_it_by_name(hall, keys, tmp_path, older):
    root, folder = hall
    hall_key, hall_public, _, _ = keys
    trust(root, hall_public)
    _installed(root, "0.2.0+g3", "2026-12-01T09:00:00Z")
    ran = tmp_path / "ran"
    version, built = older
    script = f"#!/bin/sh\necho \"install.sh: done\"\nid -u > {ran}\n"
    bundle = tiny_bundle(folder / "b.tar.gz", script, sign_with=hall_key, version=version, built=built)
    done, result = request_update(folder, bundle, root)
    assert result["status"] == 1 and f"version {version} is older than the installed 0.2.0+g3" in result["output"], result["output"]
    assert "--allow-downgrade" in result["output"] and not ran.exists()
    # by hand, named: installed
    by_hand = tiny_bundle(tmp_path / "by-hand.tar.gz", script, sign_with=hall_key, version=version, built=built)
    sha = hashlib.sha256(by_hand.read_bytes()).hexdigest()
    cmd = [*RACKSIDE, "update", str(by_hand), "--sha256", sha, "--root", str(root)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "older than the installed" in done.stderr and not ran.exists()
    done = subprocess.run([*cmd, "--allow-downgrade"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "a downgrade from 0.2.0+g3 to " + version + ", allowed" in done.stdout, done.stderr
    ran.unlink()
    # from the console: the request carries the director's confirmation
    bundle = tiny_bundle(folder / "b.tar.gz", script, sign_with=hall_key, version=version, built=built)
    sha = hashlib.sha256(bundle.read_bytes()).hexdigest()
    (folder / "request.json").write_text(json.dumps({"id": "c2", "file": bundle.name, "sha256": sha, "wait_s": 0,
                                                     "allow_downgrade": True}))
    done = subprocess.run([*RACKSIDE, "update", "--request", str(folder / "request.json"), "--root", str(root)],
                          capture_output=True, text=True, timeout=120)
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == 0 and "allowed (--allow-downgrade)" in result["output"] and ran.exists(), result["output"]
    # a newer bundle needs no flag
    newer = tiny_bundle(folder / "b.tar.gz", script, sign_with=hall_key, version="0.3.0+g4")
    done, result = request_update(folder, newer, root)
    assert result["status"] == 0 and "downgrade" not in result["output"], result["output"]
