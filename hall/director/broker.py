"""`rackside hall broker --config DIR`: Debian's Mosquitto with a provisioned hall's config, advertised
by mDNS (`_mqtt._tcp`, so devices with `url = "auto"` find it), in the foreground: Ctrl-C or
SIGTERM (systemd) stops both. deploy/rackside-broker.service runs it on a Pi.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import shutil
import signal
import subprocess
import sys
from pathlib import Path

log = logging.getLogger(__name__)

MOSQUITTO_PATHS = ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto")


def mosquitto_binary() -> str | None:
    for path in MOSQUITTO_PATHS:
        if Path(path).is_file():
            return path
    return shutil.which("mosquitto")


def conf_settings(conf: Path) -> tuple[int | None, bool, str | None]:
    """(the port devices use, whether it is TLS, the hall's name) from a provisioned config."""
    text = conf.read_text()
    ports = [int(p) for p in re.findall(r"^listener\s+(\d+)", text, re.M)]
    tls = bool(re.search(r"^certfile\s", text, re.M))  # uncommented: the TLS listener is on
    port = (ports[0] if ports else None)  # with TLS, provision writes the TLS listener first
    m = re.search(r"^# Rackside hall '([^']+)'$", text, re.M)
    return port, tls, (m.group(1) if m else None)


DEFAULT_DROP_USER = "mosquitto"  # whom Mosquitto started as root becomes, without a `user` line
FILE_KEYS = ("plugin_opt_config_file", "cafile", "certfile", "keyfile", "password_file", "acl_file",
             "bridge_cafile", "bridge_certfile", "bridge_keyfile")


def _may(st: os.stat_result, uid: int, gids: set[int], bits: tuple[int, int, int]) -> bool:
    if uid == st.st_uid:
        return bool(st.st_mode & bits[0])
    if st.st_gid in gids:
        return bool(st.st_mode & bits[1])
    return bool(st.st_mode & bits[2])


def unreadable_after_drop(text: str, euid: int) -> tuple[str, Path] | None:
    """(the user, the first file) when Mosquitto, started as root, drops to a user who cannot read a
    file the config names. Checked here because Mosquitto itself says only "File is not readable"
    and OpenSSL's "Permission denied", never why or what to do. A hand-written permission check
    (owner, group, other bits, and search permission on every folder above) because `os.access`
    answers only for the caller, root, who reads everything."""
    if euid != 0:
        return None
    m = re.search(r"^user\s+(\S+)", text, re.M)
    user = m.group(1) if m else DEFAULT_DROP_USER
    if user == "root":
        return None
    import grp
    import pwd

    try:
        account = pwd.getpwnam(user)
    except KeyError:
        return None  # no such account: Mosquitto says so itself
    uid = account.pw_uid
    gids = {account.pw_gid} | {g.gr_gid for g in grp.getgrall() if user in g.gr_mem}
    read = (stat.S_IRUSR, stat.S_IRGRP, stat.S_IROTH)
    search = (stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH)
    for key in FILE_KEYS:
        for value in re.findall(rf"^{key}\s+(.+?)\s*$", text, re.M):
            path = Path(value)
            try:
                if not all(_may(os.stat(d), uid, gids, search) for d in reversed(path.parents)):
                    return user, path
                if not _may(os.stat(path), uid, gids, read):
                    return user, path
            except OSError:
                continue  # a missing file: Mosquitto names it
    return None


def run(config_dir: Path, *, mdns: bool = True) -> int:
    conf = Path(config_dir) / "mosquitto.conf"
    if not conf.is_file():
        print(f"rackside hall broker: {conf} does not exist: make it with `rackside hall provision --out {config_dir}`")
        return 2
    binary = mosquitto_binary()
    if binary is None:
        print("rackside hall broker: Mosquitto is not installed: sudo apt install mosquitto (./setup.sh --dev does)")
        return 1
    port, tls, hall = conf_settings(conf)
    blocked = unreadable_after_drop(conf.read_text(), os.geteuid())
    if blocked is not None:
        user, path = blocked
        print(f"rackside hall broker: started as root, Mosquitto drops to the user '{user}', who cannot read {path}: "
              f"provision {config_dir} again with --run-as USER (the account that owns {config_dir}), "
              f"or start the broker as the files' owner", file=sys.stderr)
        return 1
    proc = subprocess.Popen([binary, "-c", str(conf)])
    previous = signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    ad = None
    try:
        if mdns and hall and port:
            try:
                from rackside.hall.net.mdns import Advertisement

                ad = Advertisement(hall, port, tls=tls)
                log.info("advertising hall %r on port %d by mDNS (_mqtt._tcp)", hall, port)
            except Exception as e:  # noqa: BLE001 - the broker works without it; devices can use a URL
                log.error("not advertised by mDNS (%s); devices need url = \"mqtt://HOST:%s\"", e, port)
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        return proc.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
        if ad is not None:
            ad.close()
