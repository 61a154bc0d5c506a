"""`rackside update FILE`: install a bundle file in one step, as `sha256sum -c`, `tar x` and
`sudo ./install.sh` do by hand (docs/deploy.md).

The file's SHA-256 must be the one its builder printed: `--sha256 HEX`, else the first word of
`FILE.sha256` beside it (what `rackside bundle` writes); a file that does not match is refused
before anything is unpacked. The bundle is unpacked with tar into a folder of its own beside the
installed versions (/opt/rackside/.incoming-<pid>, on the same disk), its install.sh runs with
the options given, and the folder is removed whatever the outcome. The exit status is install.sh's
(0 done, 75 installed but not switched: a game is in progress, 1 failed or rolled back).

This is the device's half of an update from the console (issue 20, item 3): whatever fetches a
bundle onto a Pi hands it here with the SHA-256 the director's console announced.
`rackside update --request FOLDER/request.json` is how: the clock (hall.device.update.Updater) writes
{id, file, sha256, wait_s} there beside the bundle it fetched, and this installs that file (a plain
file in the same folder, no link) as above, then writes FOLDER/result.json ({id, status, output: the
last lines}) and removes the request and the bundle. On a Pi, the root unit rackside-update.service
runs it when the request appears (rackside-update.path).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from rackside.switch import INSTALL_DIR, READY_TIMEOUT_S

SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")
ROLES = ("clock", "kiosk", "broker", "hall-station", "none")


def register(sub: Any) -> None:
    p = sub.add_parser("update", help="install a bundle file: check its SHA-256, unpack it, run its install.sh",
                       description="Install or update from a bundle file (docs/deploy.md).")
    p.add_argument("file", type=Path, nargs="?", metavar="FILE", help="a bundle from `rackside bundle`")
    p.add_argument("--request", type=Path, metavar="JSON", help="install what a clock's update request names (hall.update)")
    p.add_argument("roles", nargs="*", metavar="SERVICE", help=f"the services to enable: {', '.join(ROLES)} (default: clock)")
    p.add_argument("--sha256", metavar="HEX", help="the bundle's SHA-256 (default: from FILE.sha256)")
    p.add_argument("--root", type=Path, default=Path("/"), metavar="DIR", help="the system's root (an image, a test root)")
    p.add_argument("--user", metavar="NAME", help="the services' user (install.sh's default: rackside)")
    p.add_argument("--force", action="store_true", help="switch even while a game is in progress")
    p.add_argument("--wait", type=float, metavar="SECONDS", help="wait this long for the game in progress to end")
    p.add_argument("--ready-timeout", type=float, metavar="SECONDS", help=f"for READY=1 (default {READY_TIMEOUT_S:g})")
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


def run_request(args: argparse.Namespace) -> int:
    """Install what a clock's request.json names; the outcome in result.json beside it."""
    from rackside.hall.device import update
    from rackside.hall.wire import update as wire_update

    request = args.request
    data = update.read_json(request)
    if data is None or args.file is not None:
        print(f"rackside update: {request}: not a request written by a clock (and no FILE with it)", file=sys.stderr)
        return 2
    cid, name, sha, wait_s = data.get("id"), data.get("file"), data.get("sha256"), data.get("wait_s", 0)
    bundle = request.parent / str(name)
    ok = (isinstance(cid, str) and 0 < len(cid) <= 64 and isinstance(name, str) and "/" not in name
          and name.endswith(".tar.gz") and isinstance(sha, str) and bool(SHA256.match(sha))
          and isinstance(wait_s, int) and not isinstance(wait_s, bool) and 0 <= wait_s <= wire_update.MAX_WAIT_S)
    if not ok or bundle.is_symlink() or not bundle.is_file():
        output, status = f"rackside update: {request}: a request needs id, file (a bundle beside it), sha256 and wait_s", 2
    else:
        cmd = [sys.executable, "-m", "rackside", "update", str(bundle), "--sha256", sha, "--wait", str(wait_s),
               "--root", str(args.root)]
        for flag, value in (("--user", args.user), ("--ready-timeout", args.ready_timeout)):
            if value is not None:
                cmd += [flag, str(value)]
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        output, status = done.stdout + done.stderr, done.returncode
    print(output, end="" if output.endswith("\n") else "\n", flush=True)  # the service's journal has it all
    update.write_json(request.parent / update.RESULT,
                      {"id": cid, "status": status, "output": "\n".join(output.strip().splitlines()[-update.RESULT_LINES:])})
    request.unlink(missing_ok=True)
    if ok:
        bundle.unlink(missing_ok=True)
    return status


def install(args: argparse.Namespace) -> int:
    from rackside.bundle import BundleError, verify_archive

    unknown = [r for r in args.roles if r not in ROLES]
    if unknown:
        print(f"rackside update: unknown service {unknown[0]!r} (allowed: {', '.join(ROLES)})", file=sys.stderr)
        return 2
    try:
        digest = expected_sha256(args.file, args.sha256)
        verify_archive(args.file, digest)
    except (ValueError, BundleError) as e:
        print(f"rackside update: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"rackside update: {args.file}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"update: {args.file.name}: SHA-256 {digest} matches")
    incoming = args.root / INSTALL_DIR / f".incoming-{os.getpid()}"
    try:
        incoming.mkdir(parents=True)
        # GNU tar: member names with `..` or a leading / are not written outside the folder;
        # --no-same-owner: the files belong to whoever unpacks (root), not to the builder.
        done = subprocess.run(["tar", "-xzf", str(args.file.resolve()), "-C", str(incoming), "--no-same-owner"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            print(f"rackside update: {args.file}: tar could not unpack it: {done.stderr.strip()}", file=sys.stderr)
            return 1
        tops = [p for p in incoming.iterdir()]
        if len(tops) != 1 or not tops[0].name.startswith("rackside-") or not (tops[0] / "install.sh").is_file():
            print(f"rackside update: {args.file}: not a Rackside bundle (one rackside-<version>/ folder with install.sh)", file=sys.stderr)
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
