"""`rackside update FILE`: install a bundle file in one step, as `sha256sum -c`, `tar x` and
`sudo ./install.sh` do by hand (docs/deploy.md).

The file is first copied into a folder of root's beside the installed versions
(/opt/rackside/.incoming-<pid>, 0700, on the same disk), and only that copy is checked and used:
its SHA-256 must be the one its builder printed (`--sha256 HEX`, else the first word of
`FILE.sha256` beside it, what `rackside bundle` writes); it must hold only regular files and
folders inside one rackside-<version>/ folder, each matching its SHA256SUMS
(hall.wire.bundle.inspect_bundle); and on a Pi that trusts an update key (/etc/rackside/update-key.pem,
rackside.signing) its SHA256SUMS.sig must be that key's signature. A file that fails any is refused
before anything is unpacked. A bundle older than the version installed (by its release numbers,
then by when each was built: hall.wire.update.older) is refused unless `--allow-downgrade` names
the director's choice (issue 36). Then the copy is unpacked with tar, its install.sh runs with the
options given, and the folder is removed whatever the outcome. The exit status is install.sh's
(0 done, 75 installed but not switched: a game is in progress, 1 failed or rolled back).

This is the device's half of an update from the console (issue 20, item 3): whatever fetches a
bundle onto a Pi hands it here with the SHA-256 the director's console announced.
`rackside update --request FOLDER/request.json` is how: the clock (hall.device.update.Updater) writes
{id, file, sha256, wait_s} there beside the bundle it fetched, and this installs that file (a plain
file in the same folder, no link) as above, then writes FOLDER/result.json ({id, status, output: the
last lines}) and removes the request and the bundle. On a Pi, the root unit rackside-update.service
runs it when the request appears (rackside-update.path). The folder is the unprivileged `rackside`
user's, so a request needs a trusted update key and a bundle signed with it (`--require-signature`):
root installs nothing that user can choose but which of the director's bundles (issue 25, defect 5).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from rackside.switch import INSTALL_DIR, READY_TIMEOUT_S

SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")
ROLES = ("clock", "kiosk", "broker", "hall-station", "none")
BUILT_FROM = ".bundle.json"  # in /opt/rackside/<version>/: the bundle.json it was installed from (install.sh)


def register(sub: Any) -> None:
    p = sub.add_parser("update", help="install a bundle file: check its SHA-256, unpack it, run its install.sh",
                       description="Install or update from a bundle file (docs/deploy.md).")
    p.add_argument("file", type=Path, nargs="?", metavar="FILE", help="a bundle from `rackside bundle`")
    p.add_argument("--request", type=Path, metavar="JSON", help="install what a clock's update request names (hall.device.update)")
    p.add_argument("roles", nargs="*", metavar="SERVICE", help=f"the services to enable: {', '.join(ROLES)} (default: clock)")
    p.add_argument("--sha256", metavar="HEX", help="the bundle's SHA-256 (default: from FILE.sha256)")
    p.add_argument("--root", type=Path, default=Path("/"), metavar="DIR", help="the system's root (an image, a test root)")
    p.add_argument("--user", metavar="NAME", help="the services' user (install.sh's default: rackside)")
    p.add_argument("--force", action="store_true", help="switch even while a game is in progress")
    p.add_argument("--wait", type=float, metavar="SECONDS", help="wait this long for the game in progress to end")
    p.add_argument("--ready-timeout", type=float, metavar="SECONDS", help=f"for READY=1 (default {READY_TIMEOUT_S:g})")
    p.add_argument("--require-signature", action="store_true",
                   help="refuse the bundle unless this Pi trusts an update key and the bundle is signed with it "
                        "(an update from the console; with a trusted key, every bundle must be signed anyway)")
    p.add_argument("--allow-downgrade", action="store_true",
                   help="install it even if it is older than the version installed (refused otherwise)")
    p.add_argument("--name", help=argparse.SUPPRESS)  # the bundle's name in messages when FILE is /dev/fd/N (--request)
    p.set_defaults(func=run, logging=False)


def expected_sha256(file: Path, given: str | None) -> str:
    """The digest to check `file` against, or ValueError saying why there is none."""
    if given is None:
        beside = file.with_name(file.name + ".sha256")
        try:
            words = beside.read_text(encoding="ascii", errors="replace").split()
        except OSError as e:
            raise ValueError(f"no --sha256 and {beside} cannot be read ({e.strerror}): give the SHA-256 the bundle's builder printed") from None
        given = words[0] if words else ""
        source = str(beside)
    else:
        source = "--sha256"
    if not SHA256.match(given):
        raise ValueError(f"{source}: {given[:80]!r} is not a SHA-256 (64 hex digits)")
    return given.lower()


def run(args: argparse.Namespace) -> int:
    if args.request is not None:
        return run_request(args)
    if args.file is None:
        print("rackside update: give the bundle FILE (or --request JSON)", file=sys.stderr)
        return 2
    return install(args)


MAX_REQUEST_BYTES = 4096  # {id, file, sha256, wait_s}: a few hundred bytes


def run_request(args: argparse.Namespace) -> int:
    """Install what a clock's request.json names; the outcome in result.json beside it.

    Run as root on a folder the `rackside` user owns, so every name in it is opened relative to the
    folder, not following links (O_NOFOLLOW: a link planted at request.json, the bundle's name or
    the result's temporary name would otherwise have root read or write where it points), and the
    bundle is handed to the install as the file this process opened, which `install` copies into a
    root-owned folder before it checks anything (the `rackside` user can change its own file at any
    time, but not that copy). What is installed is what the hall's update key signed, whatever the
    request names (issue 25, defect 5)."""
    from rackside.hall.device import update

    request = args.request
    if args.file is not None:
        print(f"rackside update: --request {request} takes no FILE", file=sys.stderr)
        return 2
    try:
        folder = os.open(request.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        print(f"rackside update: {request.parent}: {e.strerror} (the updates folder must be a folder, not a link)", file=sys.stderr)
        return 2
    try:
        return _run_request(args, update, request.name, folder)
    finally:
        os.close(folder)


def _open_in(folder: int, name: str) -> int:
    """`name` in the folder `folder`, a regular file opened for reading (never a link, FIFO or device)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(0, "not a regular file")
    return fd


def _read_request(folder: int, name: str) -> dict | None:
    try:
        fd = _open_in(folder, name)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        text = f.read(MAX_REQUEST_BYTES + 1)
    try:
        data = json.loads(text) if len(text) <= MAX_REQUEST_BYTES else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _write_result(folder: int, name: str, data: dict) -> None:
    """`name` in `folder`, whole or not at all (a new file of a random name, renamed over it), never
    through a link; readable by the clock, as hall.device.update.write_json writes it."""
    tmp = f".{name}.{secrets.token_hex(8)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=folder)
    try:
        os.fchmod(fd, 0o644)
        os.write(fd, json.dumps(data).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    os.fsync(folder)


def _run_request(args: argparse.Namespace, update: Any, request_name: str, folder: int) -> int:
    from rackside.hall.wire import update as wire_update

    data = _read_request(folder, request_name)
    if data is None:
        print(f"rackside update: {args.request}: not a request written by a clock", file=sys.stderr)
        return 2
    cid, name, sha, wait_s = data.get("id"), data.get("file"), data.get("sha256"), data.get("wait_s", 0)
    downgrade = data.get("allow_downgrade", False)
    ok = (isinstance(downgrade, bool) and isinstance(cid, str) and 0 < len(cid) <= 64 and isinstance(name, str) and "/" not in name
          and not name.startswith(".") and name.endswith(".tar.gz") and len(name) <= 128
          and isinstance(sha, str) and bool(SHA256.match(sha))
          and isinstance(wait_s, int) and not isinstance(wait_s, bool) and 0 <= wait_s <= wire_update.MAX_WAIT_S)
    bundle = None
    if ok:
        try:
            bundle = _open_in(folder, name)
        except OSError:
            ok = False
    if not ok:
        output, status = (f"rackside update: {args.request}: a request needs id, file (a bundle beside it), sha256 and wait_s "
                          "(and may say allow_downgrade: true or false)", 2)
    else:
        cmd = [sys.executable, "-m", "rackside", "update", f"/dev/fd/{bundle}", "--sha256", sha, "--wait", str(wait_s),
               "--root", str(args.root), "--require-signature", "--name", name]
        if downgrade:  # the director's own confirmation, in the update command (docs/fleet.md)
            cmd.append("--allow-downgrade")
        for flag, value in (("--user", args.user), ("--ready-timeout", args.ready_timeout)):
            if value is not None:
                cmd += [flag, str(value)]
        try:
            done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, pass_fds=(bundle,))
        finally:
            os.close(bundle)
        output, status = done.stdout + done.stderr, done.returncode
    print(output, end="" if output.endswith("\n") else "\n", flush=True)  # the service's journal has it all
    _write_result(folder, update.RESULT,
                  {"id": cid, "status": status, "output": "\n".join(output.strip().splitlines()[-update.RESULT_LINES:])})
    for gone in (request_name, name) if ok else (request_name,):
        try:
            os.unlink(gone, dir_fd=folder)
        except FileNotFoundError:
            pass
    return status


def _stage(source: Path, staged: Path, limit: int) -> str:
    """Copy `source` to `staged` (a new file in a root-owned folder); its SHA-256. At most `limit` bytes."""
    h = hashlib.sha256()
    size = 0
    with open(source, "rb") as src, open(staged, "xb") as out:
        while block := src.read(1 << 20):
            size += len(block)
            if size > limit:
                raise OSError(0, f"over {limit} bytes: not a bundle")
            h.update(block)
            out.write(block)
    return h.hexdigest()


def installed_version(root: Path) -> tuple[str | None, str | None]:
    """The version /opt/rackside/current points at, and when it was built (the bundle.json its
    install.sh kept beside it; None for a version installed before it kept one)."""
    base = root / INSTALL_DIR
    try:
        version = os.readlink(base / "current")
    except OSError:
        return None, None
    try:
        with open(base / version / BUILT_FROM, "rb") as f:
            said = json.loads(f.read(64 * 1024))
    except (OSError, ValueError):
        return version, None
    built = said.get("built") if isinstance(said, dict) else None
    return version, built if isinstance(built, str) else None


def install(args: argparse.Namespace) -> int:
    from rackside import signing
    from rackside.hall.wire.bundle import inspect_bundle
    from rackside.hall.wire.update import MAX_BUNDLE_BYTES, UpdateError, older

    name = args.name or args.file.name
    unknown = [r for r in args.roles if r not in ROLES]
    if unknown:
        print(f"rackside update: unknown service {unknown[0]!r} (allowed: {', '.join(ROLES)})", file=sys.stderr)
        return 2
    try:
        digest = expected_sha256(args.file, args.sha256)
        key = signing.trusted_key(args.root)
    except (ValueError, signing.SigningError) as e:
        print(f"rackside update: {e}", file=sys.stderr)
        return 1
    if key is None and args.require_signature:
        print(f"rackside update: {name}: refused: this Pi trusts no update key ({args.root / signing.TRUSTED_KEY}), and an "
              "update from the console must be signed with one. Install a bundle built with `rackside bundle --sign-key "
              "DIR/update-signing.key --hall-join DIR/join.toml` by hand once (docs/deploy.md, \"Signed bundles\")", file=sys.stderr)
        return 1
    base = args.root / INSTALL_DIR
    incoming = base / f".incoming-{os.getpid()}"
    try:
        base.mkdir(parents=True, exist_ok=True)
        incoming.mkdir(mode=0o700)  # this process's alone: what is checked below is the copy in it, which no one else can change
        staged = incoming / "bundle.tar.gz"
        try:
            actual = _stage(args.file, staged, MAX_BUNDLE_BYTES)
        except OSError as e:
            print(f"rackside update: {name}: {e.strerror}", file=sys.stderr)
            return 1
        if actual != digest:
            print(f"rackside update: {name}: SHA-256 {actual}, expected {digest}: not the bundle that was built (copy it again)",
                  file=sys.stderr)
            return 1
        print(f"update: {name}: SHA-256 {digest} matches")
        try:
            inspected = inspect_bundle(staged)
        except UpdateError as e:
            print(f"rackside update: {name}: {e}", file=sys.stderr)
            return 1
        if key is not None:
            if inspected.signature is None:
                print(f"rackside update: {name}: refused: not signed, and this Pi installs only bundles signed with the hall's "
                      "update key (`rackside bundle --sign-key`)", file=sys.stderr)
                return 1
            if not signing.verify(key, inspected.signed, inspected.signature):
                print(f"rackside update: {name}: refused: its signature is not the hall's update key's signature of "
                      f"version {inspected.version} ({args.root / signing.TRUSTED_KEY}): not a bundle this hall's director "
                      "signed as this version (a bundle signed before versions were signed: build it again)", file=sys.stderr)
                return 1
            print(f"update: {name}: signed with the hall's update key, as version {inspected.version}")
        installed, installed_built = installed_version(args.root)
        if older(inspected.version, inspected.built, installed, installed_built):
            if not args.allow_downgrade:
                print(f"rackside update: {name}: refused: version {inspected.version} is older than the installed "
                      f"{installed} (a downgrade); install it only by name: rackside update --allow-downgrade "
                      "(on the console: confirm the downgrade on the Devices page)", file=sys.stderr)
                return 1
            print(f"update: {name}: a downgrade from {installed} to {inspected.version}, allowed (--allow-downgrade)")
        unpacked = incoming / "bundle"
        unpacked.mkdir()
        # Only regular files and folders inside one top folder (inspect_bundle), from the copy checked
        # above; --no-same-owner: the files belong to whoever unpacks (root), not to the builder.
        done = subprocess.run(["tar", "-xzf", str(staged), "-C", str(unpacked), "--no-same-owner"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            print(f"rackside update: {name}: tar could not unpack it: {done.stderr.strip()}", file=sys.stderr)
            return 1
        tops = [p for p in unpacked.iterdir()]
        if len(tops) != 1 or not tops[0].name.startswith("rackside-") or not (tops[0] / "install.sh").is_file():
            print(f"rackside update: {name}: not a Rackside bundle (one rackside-<version>/ folder with install.sh)", file=sys.stderr)
            return 1
        cmd = ["bash", str(tops[0] / "install.sh"), "--root", str(args.root), *args.roles]
        if args.user:
            cmd += ["--user", args.user]
        if args.force:
            cmd.append("--force")
        if args.wait is not None:
            cmd += ["--wait", f"{args.wait:g}"]
        if args.ready_timeout is not None:
            cmd += ["--ready-timeout", f"{args.ready_timeout:g}"]
        return subprocess.run(cmd).returncode
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
