"""`rackside hall broker --config DIR`: Debian's Mosquitto with a provisioned hall's config, advertised
by mDNS (`_mqtt._tcp`, so devices with `url = "auto"` find it), in the foreground: Ctrl-C or
SIGTERM (systemd) stops both. deploy/rackside-broker.service runs it on a Pi.
"""

from __future__ import annotations

import logging
import re
import shutil
import signal
import subprocess
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
    proc = subprocess.Popen([binary, "-c", str(conf)])
    previous = signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    ad = None
    try:
        if mdns and hall and port:
            try:
                from rackside.hall.net.mdns import Advertisement

                ad = Advertisement(hall, port, tls=tls)
                log.warning("advertising hall %r on port %d by mDNS (_mqtt._tcp)", hall, port)
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
