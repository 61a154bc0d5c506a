"""`rackside bundle`: what is in the file, its SHA-256, and what it refuses (issue 20). Built for
real from a copy of this checkout, with the wheels installed here standing in for PyPI's."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from rackside import bundle, signing
from rackside.hall.wire import bundle as wire_bundle
from rackside.hall.wire.join import join_text
from support.bundle import MACHINE, PYTHON, RACKSIDE, build_bundle, copy_checkout, unpack


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return copy_checkout(tmp_path_factory.mktemp("src"))


@pytest.fixture(scope="module")
def key(tmp_path_factory) -> Path:
    """The hall's update signing key, as `rackside hall provision` makes it."""
    path = tmp_path_factory.mktemp("key") / signing.KEY_FILE
    signing.make_key(path)
    return path


@pytest.fixture(scope="module")
def built(source, offline_wheels, key, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "rackside.tar.gz"
    join = tmp_path_factory.mktemp("join") / "join.toml"
    join.write_text(join_text("open2026", "auto", "s" * 32, None, signing.public_key(key)))
    result = build_bundle(source, offline_wheels, out, "open2026.1", "--hall-join", str(join), "--sign-key", str(key))
    assert result.returncode == 0, result.stderr
    return out, result.stdout


def test_the_bundle_holds_source_wheels_lock_installer_and_sums(built, key, tmp_path):
    out, _ = built
    top = unpack(out, tmp_path)
    assert top.name == "rackside-0.1.0+open2026.1"
    assert sorted(p.name for p in top.iterdir()) == ["SHA256SUMS", "SHA256SUMS.sig", "bundle.json", "install.sh", "join.toml",
                                                     "requirements.lock", "source", "wheelhouse"]
    manifest = json.loads((top / "bundle.json").read_text())
    assert manifest["version"] == "0.1.0+open2026.1" and manifest["pythons"] == [PYTHON] and manifest["machine"] == MACHINE
    assert manifest["hall_join"] is True
    # The source: what git tracks, the version stamped; no venv, no build output, and no links (a
    # bundle holds regular files and folders only: the wheel, which the Pi runs, has the subsystems).
    src = top / "source"
    assert not (src / "rackside" / "firmware").exists() and (src / "game" / "clock.py").is_file()
    assert not [p for p in top.rglob("*") if p.is_symlink()]
    assert 'version = "0.1.0+open2026.1"' in (src / "pyproject.toml").read_text()
    assert not (src / ".venv").exists() and not list(src.rglob("__pycache__")) and not list(src.glob("*.egg-info"))
    assert (top / "install.sh").read_bytes() == (src / "deploy" / "bundle-install.sh").read_bytes()
    # Every wheel, Rackside's own included, pinned with its file's hash.
    wheels = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (top / "wheelhouse").glob("*.whl")}
    assert "rackside-0.1.0+open2026.1-py3-none-any.whl" in wheels
    lock = (top / "requirements.lock").read_text()
    for name, digest in wheels.items():
        pin = "{}=={}".format(*bundle.wheel_name_version(name))
        assert pin in lock and f"--hash=sha256:{digest}" in lock, name
    # SHA256SUMS covers every file, and sha256sum itself agrees.
    listed = {line.split("  ", 1)[1] for line in (top / "SHA256SUMS").read_text().splitlines()}
    files = {p.relative_to(top).as_posix() for p in top.rglob("*") if p.is_file() and not p.is_symlink()}
    assert listed == files - {"SHA256SUMS", "SHA256SUMS.sig"}
    assert subprocess.run(["sha256sum", "--quiet", "--strict", "-c", "SHA256SUMS"], cwd=top).returncode == 0
    # SHA256SUMS is signed with the hall's key; the console's and the root updater's check agrees.
    sums = (top / "SHA256SUMS").read_bytes()
    # what is signed is the version and SHA256SUMS together (issue 36): SHA256SUMS alone no longer verifies
    signature = (top / "SHA256SUMS.sig").read_bytes()
    assert signing.verify(signing.public_key(key), signing.signed_manifest("0.1.0+open2026.1", sums), signature)
    assert not signing.verify(signing.public_key(key), sums, signature)
    assert not signing.verify(signing.public_key(key), signing.signed_manifest("9.9.9", sums), signature)
    inspected = wire_bundle.inspect_bundle(out)
    assert (inspected.version, inspected.sums, inspected.signature) == ("0.1.0+open2026.1", sums, (top / "SHA256SUMS.sig").read_bytes())


def test_a_key_that_is_not_the_join_files_is_refused(source, key, tmp_path):
    """The Pis given that join file would refuse the bundle: refused when it is built, in one line."""
    other = tmp_path / "other.key"
    signing.make_key(other)
    join = tmp_path / "join.toml"
    join.write_text(join_text("open2026", "auto", "s" * 32, None, signing.public_key(key)))
    with pytest.raises(bundle.BundleError, match="is not the key whose public half --hall-join .* carries"):
        bundle.build(tmp_path / "b.tar.gz", source=source, label="x", hall_join=join, wheelhouse=tmp_path,
                     sign_key=other, say=lambda _: None)
    (tmp_path / "junk.key").write_text("not a key\n")
    result = subprocess.run([*RACKSIDE, "bundle", "--out", str(tmp_path / "b.tar.gz"), "--wheelhouse", str(tmp_path),
                             "--sign-key", str(tmp_path / "junk.key")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "--sign-key" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_printed_sha256_is_the_files_and_sha256sum_checks_it(built):
    out, stdout = built
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert f"{digest}  {out.name}\n" in stdout
    assert (out.parent / f"{out.name}.sha256").read_text() == f"{digest}  {out.name}\n"
    assert subprocess.run(["sha256sum", "-c", f"{out.name}.sha256"], cwd=out.parent, capture_output=True).returncode == 0
    with tarfile.open(out) as tar:
        assert {(m.uid, m.gid) for m in tar.getmembers()} == {(0, 0)}
    bundle.verify_archive(out, digest.upper())
    with pytest.raises(bundle.BundleError, match="not the bundle that was built"):
        bundle.verify_archive(out, "0" * 64)


def test_lock_lines_are_pip_compile_style(tmp_path):
    for name in ("zeroconf-0.154.0-cp311-cp311-manylinux2014_aarch64.whl", "zeroconf-0.154.0-cp313-cp313-manylinux2014_aarch64.whl",
                 "Typing_Extensions-4.16.0-py3-none-any.whl"):
        (tmp_path / name).write_bytes(name.encode())
    text = bundle.lock_lines(sorted(tmp_path.glob("*.whl")))
    h = {p.name: hashlib.sha256(p.name.encode()).hexdigest() for p in tmp_path.glob("*.whl")}
    z311, z313 = sorted([h["zeroconf-0.154.0-cp311-cp311-manylinux2014_aarch64.whl"], h["zeroconf-0.154.0-cp313-cp313-manylinux2014_aarch64.whl"]])
    assert text.splitlines()[1:] == [
        "typing-extensions==4.16.0 \\",
        f"    --hash=sha256:{h['Typing_Extensions-4.16.0-py3-none-any.whl']}",
        "zeroconf==0.154.0 \\",
        f"    --hash=sha256:{z311} \\",
        f"    --hash=sha256:{z313}",
    ]


@pytest.mark.parametrize("args, message", [
    (["--label", "Open 2026"], "--label 'Open 2026': lower-case letters and digits"),
    (["--python", "3.11"], "--python and --machine describe a --wheelhouse"),
    (["--hall-join", "/nonexistent/join.toml"], "--hall-join /nonexistent/join.toml: No such file or directory"),
    (["--source", "/tmp"], "/tmp is not Rackside's source"),
])
def test_bad_arguments_are_one_line(tmp_path, args, message):
    out = tmp_path / "b.tar.gz"
    wheels = ["--wheelhouse", str(tmp_path)] if "--python" not in args else []
    result = subprocess.run([*RACKSIDE, "bundle", "--out", str(out), *wheels, *args], capture_output=True, text=True, timeout=60)
    assert result.returncode in (1, 2) and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()


def test_a_join_file_that_is_not_toml_is_refused(source, tmp_path):
    bad = tmp_path / "join.toml"
    bad.write_text("hall = \n")
    with pytest.raises(bundle.BundleError, match="--hall-join: join file .*join.toml: not valid TOML"):
        bundle.build(tmp_path / "b.tar.gz", source=source, label="x", hall_join=bad, wheelhouse=tmp_path, say=lambda _: None)
    bad.write_text('hall = "open2026"\nurl = "auto"\n')  # no secret: hall.device.joinfile's reader refuses it
    with pytest.raises(bundle.BundleError, match="--hall-join: join file .*secret"):
        bundle.build(tmp_path / "b.tar.gz", source=source, label="x", hall_join=bad, wheelhouse=tmp_path, say=lambda _: None)
    bad.write_bytes(b"#" * (bundle.MAX_JOIN_FILE + 1))
    with pytest.raises(bundle.BundleError, match="a join file is at most"):
        bundle.build(tmp_path / "b.tar.gz", source=source, label="x", hall_join=bad, wheelhouse=tmp_path, say=lambda _: None)


def test_the_label_comes_from_the_commit(source):
    assert bundle.version_label(source) == "local"  # a copy with no .git
    label = bundle.version_label(Path(bundle.__file__).resolve().parent.parent)
    assert label.startswith("g") and bundle.LABEL.match(label)
