"""`rackside bundle --out FILE`: one file from which every Pi installs or updates with no network.

Built once, on a machine with internet (the director's laptop); installed on each Pi from a USB
stick, the SD card's boot partition or the hall network by the `install.sh` inside it
(deploy/bundle-install.sh, docs/deploy.md). The file is a gzip'd tar of one folder,
`rackside-<version>/`:

    install.sh          the installer (deploy/bundle-install.sh)
    bundle.json         what the bundle is: version, commit, the Pythons and machine it is for
    requirements.lock   every package pinned with pip-compile-style --hash lines (from the wheels)
    wheelhouse/*.whl    those wheels, Rackside's own included: pip installs with --no-index
    source/             Rackside's files (those git tracks; no venv, no build outputs)
    join.toml           the hall's join file (hall/wire/join.py), when --hall-join gave one
    SHA256SUMS          every file above (the installer checks them all before it does anything)
    SHA256SUMS.sig      with --sign-key: the version and SHA256SUMS signed with the hall's update key
                        (rackside.signing.signed_manifest: the version is inside what is signed)

Regular files and folders only, no links (the Pi's root updater and the console refuse anything
else: issue 25, item 2): the checkout's rackside/firmware -> ../firmware links are what make the
wheel, which is what the Pi runs; the source/ folder keeps the files, not the links.

A Pi that trusts an update key (its join file's update_key, installed by install.sh) installs only
bundles signed with it, and the console's updates need one: `--sign-key DIR/update-signing.key`,
the key `rackside hall provision` made in DIR (docs/deploy.md, "Signed bundles").

and beside it `FILE.sha256` (`sha256sum -c` reads it), whose digest is also printed.

The version is the package's own (pyproject.toml) with a local label, `0.1.0+g1a2b3c4` from the
commit (`.dirty` when the working tree has changes), or `--label`; it is stamped into the bundled
pyproject.toml, so the installed package, `rackside --version` and the hall status all report it,
and each version installs into its own /opt/rackside/<version>/.

The wheelhouse is what the Pis can run: aarch64 CPython 3.11 and 3.13 (Raspberry Pi OS Bookworm
and Trixie, 64-bit). 32-bit armhf is not supported: PyPI has no armv7l wheels of pygame-ce or
marisa-trie, so a 32-bit Pi would need a compiler. lgpio (the GPIO back-end) is not in the
wheelhouse either: PyPI has only its source, and Raspberry Pi OS ships it as python3-lgpio, so the
venv sees the system's site packages (docs/deploy.md says why that is safe).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

BUNDLE_FORMAT = 1
# Raspberry Pi OS Bookworm (3.11) and Trixie (3.13), 64-bit.
PYTHONS = ("3.11", "3.13")
MIN_PYTHON = (3, 11)  # pyproject.toml's requires-python: a bundle for an older one would not install
MACHINE = "aarch64"
# The platform tags pip may take for aarch64: pygame-ce and zeroconf publish manylinux2014
# (= manylinux_2_17), marisa-trie only manylinux_2_28; Bookworm's glibc is 2.36.
PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64")
# What the Pi installs: the runtime pins (requirements-pi.txt's lgpio comes from the system).
REQUIREMENTS = "requirements.txt"
# Never in the source: build outputs, venvs, caches (a folder listed by git is taken as it is).
SKIP_NAMES = {".git", ".venv", "__pycache__", "build", "dist", ".pytest_cache", ".hypothesis"}
MAX_JOIN_FILE = 64 * 1024  # a join file is a few lines of TOML and one certificate (hall.wire.join.MAX_CA_CHARS)
LABEL = re.compile(r"^[a-z0-9]+(\.[a-z0-9]+)*$")  # PEP 440 local version label, lower-cased


class BundleError(RuntimeError):
    """A bundle that cannot be built or is not intact: one line saying why."""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "bundle",
        help="build one offline install/update file for every Pi (needs internet once)",
        description="Build one file from which every Pi installs or updates Rackside with no network (docs/deploy.md).",
    )
    p.add_argument("--out", type=Path, required=True, metavar="FILE", help="the bundle to write (a .tar.gz); FILE.sha256 beside it")
    p.add_argument("--label", metavar="LABEL", help="the version's local label (default: g<commit>, .dirty with changes)")
    p.add_argument("--source", type=Path, metavar="DIR", help="Rackside's source folder (default: this checkout)")
    p.add_argument("--hall-join", type=Path, metavar="FILE", help="the hall's join file, installed on every Pi with the bundle")
    p.add_argument("--sign-key", type=Path, metavar="KEY",
                   help="sign the bundle with the hall's update key (update-signing.key in the folder `rackside hall provision` wrote)")
    p.add_argument("--wheelhouse", type=Path, metavar="DIR",
                   help="take the wheels from DIR instead of downloading them (with --python and --machine for what they are)")
    p.add_argument("--python", action="append", metavar="X.Y", help="a Python the wheels are for (with --wheelhouse; default 3.11 and 3.13)")
    p.add_argument("--machine", metavar="ARCH", help=f"the machine the wheels are for (with --wheelhouse; default {MACHINE})")
    p.set_defaults(func=run, logging=False)


def run(args: argparse.Namespace) -> int:
    if (args.python or args.machine) and not args.wheelhouse:
        print("rackside bundle: --python and --machine describe a --wheelhouse; without one the wheels are for "
              f"{MACHINE} CPython {', '.join(PYTHONS)}", file=sys.stderr)
        return 2
    for python in args.python or ():
        m = re.fullmatch(r"(\d+)\.(\d+)", python)
        if not m or (int(m.group(1)), int(m.group(2))) < MIN_PYTHON:
            print(f"rackside bundle: --python {python}: allowed are CPython versions X.Y from {'.'.join(map(str, MIN_PYTHON))} "
                  f"(Rackside's requires-python), e.g. {' or '.join(PYTHONS)}", file=sys.stderr)
            return 2
    if not args.out.parent.is_dir():  # a typo in the folder must not make a tree of new folders
        print(f"rackside bundle: --out {args.out}: no folder {args.out.parent} (make it first, or choose another)", file=sys.stderr)
        return 2
    try:
        out, digest = build(
            args.out, source=args.source or Path(__file__).resolve().parent.parent, label=args.label,
            hall_join=args.hall_join, wheelhouse=args.wheelhouse, sign_key=args.sign_key,
            pythons=tuple(args.python or PYTHONS), machine=args.machine or MACHINE, say=print,
        )
    except BundleError as e:
        print(f"rackside bundle: {e}", file=sys.stderr)
        return 1
    print(f"{digest}  {out.name}")
    print(f"SHA-256 {digest} (also in {out.name}.sha256: check it on the Pi with `sha256sum -c {out.name}.sha256`)")
    return 0


# --- The source ----------------------------------------------------------------------------------


def source_files(root: Path) -> list[str]:
    """Rackside's files under `root`, relative: what git tracks (and new files it does not ignore)
    in a checkout, else every file but venvs, caches and build outputs."""
    if (root / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=root, capture_output=True, check=True).stdout.decode().split("\0")
        names = [n for n in listed if n and (os.path.lexists(root / n))]
    else:
        names = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_NAMES and not d.endswith(".egg-info")
                             and not (Path(folder) / d).is_symlink())
            names += [os.path.relpath(Path(folder) / f, root) for f in files]
            names += [os.path.relpath(Path(folder) / d, root) for d in os.listdir(folder)
                      if (Path(folder) / d).is_symlink() and (Path(folder) / d).is_dir()]
    return sorted(n for n in names if not set(Path(n).parts) & SKIP_NAMES)


def version_label(root: Path) -> str:
    """g<commit>, with .dirty when the checkout has changes; "local" outside a checkout."""
    if not (root / ".git").exists():
        return "local"
    commit = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True).stdout.strip()
    return f"g{commit}" + (".dirty" if dirty else "")


def package_version(pyproject: str) -> str:
    import tomllib

    return str(tomllib.loads(pyproject)["project"]["version"])


def stamp_version(pyproject: str, version: str) -> str:
    """pyproject.toml with [project] version set to `version` (one line, so the rest stays as written)."""
    stamped, n = re.subn(r'(?m)^version\s*=\s*"[^"]*"', f'version = "{version}"', pyproject, count=1)
    if n != 1:
        raise BundleError("pyproject.toml has no version = \"...\" line to stamp")
    return stamped


def copy_source(root: Path, names: Iterable[str], dest: Path) -> None:
    for name in names:
        origin, target = root / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            target.symlink_to(os.readlink(origin))  # rackside/firmware -> ../firmware stays a link
        else:
            shutil.copy2(origin, target)


# --- The wheels ----------------------------------------------------------------------------------


def download_wheels(requirements: Path, dest: Path, pythons: Iterable[str], say=print) -> None:
    """Every pinned package and its dependencies as aarch64 wheels for each Python (pip download
    resolves for the target, not for this machine). Binary only: the Pi has no compiler."""
    for python in pythons:
        say(f"downloading aarch64 wheels for CPython {python}")
        cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet", "--only-binary=:all:",
               "--implementation", "cp", "--python-version", python, "--dest", str(dest), "-r", str(requirements)]
        for platform in PLATFORMS:
            cmd += ["--platform", platform]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            tail = [l for l in done.stderr.splitlines() if l.startswith("ERROR")] or done.stderr.splitlines()[-3:]
            raise BundleError(f"pip could not download the wheels for CPython {python} on {MACHINE}: {' / '.join(tail)}")


def build_own_wheel(source: Path, dest: Path) -> Path:
    """Rackside itself as a wheel (pure Python): the Pi installs it like any other package."""
    cmd = [sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "--quiet", "--no-deps",
           "--wheel-dir", str(dest), str(source)]
    if _has_setuptools():
        # This machine's setuptools builds it: no build environment to download (and tests stay offline).
        cmd += ["--no-build-isolation", "--no-index"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BundleError(f"could not build Rackside's own wheel: {done.stderr.strip().splitlines()[-1:]}")
    built = sorted(dest.glob("rackside-*.whl"))
    if len(built) != 1:
        raise BundleError(f"expected one rackside wheel in {dest}, found {len(built)}")
    return built[0]


def _has_setuptools() -> bool:
    import importlib.util

    return importlib.util.find_spec("setuptools") is not None


def wheel_name_version(filename: str) -> tuple[str, str]:
    """(normalised name, version) from a wheel's file name (PEP 427/491)."""
    parts = filename[:-len(".whl")].split("-")
    if not filename.endswith(".whl") or len(parts) not in (5, 6):
        raise BundleError(f"{filename}: not a wheel file name")
    return re.sub(r"[-_.]+", "-", parts[0]).lower(), parts[1]


def lock_lines(wheels: Iterable[Path]) -> str:
    """pip-compile-style requirements: `name==version` and a --hash line per wheel file, so
    `pip install --require-hashes` takes exactly these files and nothing else."""
    by_pin: dict[tuple[str, str], list[str]] = {}
    for wheel in wheels:
        by_pin.setdefault(wheel_name_version(wheel.name), []).append(sha256_file(wheel))
    lines = ["# Written by `rackside bundle`: every package the Pi installs, with the SHA-256 of each wheel file."]
    for (name, version), digests in sorted(by_pin.items()):
        lines.append(f"{name}=={version} \\")
        hashes = [f"    --hash=sha256:{d}" for d in sorted(set(digests))]
        lines += [h + " \\" for h in hashes[:-1]] + hashes[-1:]
    return "\n".join(lines) + "\n"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256sums(folder: Path) -> str:
    """`sha256sum` format for every regular file under `folder` (links are checked by the files they reach)."""
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(folder).as_posix()
        if "\n" in rel or "\\" in rel:
            raise BundleError(f"{rel!r}: a file name sha256sum cannot list")
        lines.append(f"{sha256_file(path)}  {rel}")
    return "\n".join(lines) + "\n"


# --- The bundle ----------------------------------------------------------------------------------


def build(out: Path, *, source: Path, label: str | None = None, hall_join: Path | None = None,
          wheelhouse: Path | None = None, pythons: tuple[str, ...] = PYTHONS, machine: str = MACHINE,
          say=print, sign_key: Path | None = None) -> tuple[Path, str]:
    """Write the bundle to `out` and `out`.sha256; return (out, its SHA-256)."""
    source = source.resolve()
    if not (source / "pyproject.toml").is_file() or not (source / "deploy" / "bundle-install.sh").is_file():
        raise BundleError(f"{source} is not Rackside's source (no pyproject.toml or deploy/bundle-install.sh)")
    label = label if label is not None else version_label(source)
    if not LABEL.match(label):
        raise BundleError(f"--label {label!r}: lower-case letters and digits, separated by dots (e.g. open2026.1)")
    pyproject = (source / "pyproject.toml").read_text()
    version = f"{package_version(pyproject)}+{label}"
    join_text = _read_join_file(hall_join) if hall_join is not None else None
    if sign_key is not None:
        _check_sign_key(sign_key, hall_join)
    if wheelhouse is not None and not wheelhouse.is_dir():
        raise BundleError(f"--wheelhouse {wheelhouse}: not a folder")
    if wheelhouse is not None and not any(wheelhouse.glob("*.whl")):
        raise BundleError(f"--wheelhouse {wheelhouse}: no wheels in it (allowed is a folder of the .whl files of {REQUIREMENTS})")

    with tempfile.TemporaryDirectory(prefix="rackside-bundle-") as tmp:
        top = Path(tmp) / f"rackside-{version}"
        src = top / "source"
        copy_source(source, source_files(source), src)
        (src / "pyproject.toml").write_text(stamp_version(pyproject, version))
        wheels = top / "wheelhouse"
        wheels.mkdir()
        if wheelhouse is None:
            download_wheels(src / REQUIREMENTS, wheels, pythons, say)
        else:
            for wheel in sorted(wheelhouse.glob("*.whl")):
                shutil.copy2(wheel, wheels / wheel.name)
        for old in wheels.glob("rackside-*.whl"):
            old.unlink()  # never an earlier build of ourselves
        say(f"building rackside {version}")
        with tempfile.TemporaryDirectory(prefix="rackside-wheel-") as build_dir:
            shutil.copytree(src, Path(build_dir) / "src", symlinks=True)
            build_own_wheel(Path(build_dir) / "src", wheels)
        drop_links(src)
        (top / "requirements.lock").write_text(lock_lines(sorted(wheels.glob("*.whl"))))
        installer = top / "install.sh"
        shutil.copy2(src / "deploy" / "bundle-install.sh", installer)
        installer.chmod(0o755)
        if join_text is not None:
            (top / "join.toml").write_text(join_text)
        manifest = {
            "rackside_bundle": BUNDLE_FORMAT,
            "version": version,
            "label": label,
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "pythons": list(pythons),
            "machine": machine,
            "platforms": list(PLATFORMS) if wheelhouse is None else [],
            "hall_join": join_text is not None,
        }
        (top / "bundle.json").write_text(json.dumps(manifest, indent=2) + "\n")
        (top / "SHA256SUMS").write_text(sha256sums(top))
        if sign_key is not None:
            from rackside.signing import SIGNATURE_FILE, SigningError, sign, signed_manifest

            try:
                (top / SIGNATURE_FILE).write_bytes(sign(sign_key, signed_manifest(version, (top / "SHA256SUMS").read_bytes())))
            except SigningError as e:
                raise BundleError(f"--sign-key: {e}") from None
        if not out.parent.is_dir():
            raise BundleError(f"--out {out}: no folder {out.parent}")
        partial = out.with_name(out.name + ".partial")
        with tarfile.open(partial, "w:gz") as tar:
            tar.add(top, arcname=top.name, filter=_owned_by_root)
        digest = sha256_file(partial)
        os.replace(partial, out)
    (out.with_name(out.name + ".sha256")).write_text(f"{digest}  {out.name}\n")
    say(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB): rackside {version} for {machine} CPython {', '.join(pythons)}")
    return out, digest


def drop_links(folder: Path) -> None:
    """Remove every symbolic link under `folder` (not what they reach): a bundle holds regular files
    and folders only. Links to folders are not followed (os.walk lists them with the folders)."""
    for parent, dirs, files in os.walk(folder):
        for name in dirs + files:
            if (Path(parent) / name).is_symlink():
                (Path(parent) / name).unlink()


def _check_sign_key(key: Path, hall_join: Path | None) -> None:
    """`key` signs (an Ed25519 private key), and is the one whose public half --hall-join carries:
    a Pi given that join file would refuse a bundle signed with another."""
    from rackside.hall.device.joinfile import load
    from rackside.signing import SigningError, public_key

    try:
        public = public_key(key)
    except SigningError as e:
        raise BundleError(f"--sign-key {key}: {e}") from None
    if hall_join is not None:
        carried = load(hall_join).update_key
        if carried is not None and carried != public:
            raise BundleError(f"--sign-key {key} is not the key whose public half --hall-join {hall_join} carries "
                              "(update_key): the Pis would refuse the bundle; give the key from the same provisioning folder")


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    # The builder's user and group mean nothing on the Pi: the installer decides ownership.
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _read_join_file(path: Path) -> str:
    """The join file's text, once the hall's own reader (hall.device.joinfile.load) accepts it."""
    from rackside.hall.net.config import HallConfigError
    from rackside.hall.device.joinfile import load

    try:
        size = path.stat().st_size
    except OSError as e:
        raise BundleError(f"--hall-join {path}: {e.strerror}") from None
    if size > MAX_JOIN_FILE:
        raise BundleError(f"--hall-join {path}: {size} bytes; a join file is at most {MAX_JOIN_FILE}")
    try:
        load(path)
    except HallConfigError as e:
        raise BundleError(f"--hall-join: {e}") from None
    return path.read_text()


def verify_archive(archive: Path, expected_sha256: str) -> None:
    """Raise BundleError unless `archive`'s SHA-256 is `expected_sha256` (hex)."""
    actual = sha256_file(archive)
    if actual != expected_sha256.strip().lower():
        raise BundleError(f"{archive}: SHA-256 {actual}, expected {expected_sha256.strip().lower()}: not the bundle that was built (copy it again)")
