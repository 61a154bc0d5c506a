"""Finding the hall's broker by mDNS (python-zeroconf): `url = "auto"` in [hall].

`rackside hall broker` advertises `rackside-<hall>._mqtt._tcp.local.` with TXT `hall=<hall>` and
`tls=0|1`; a device browses `_mqtt._tcp` and takes the service whose `hall` is its own, so two halls
(or some other MQTT broker) on one network never get mixed up.

RACKSIDE_MDNS_INTERFACES (comma-separated addresses) limits the interfaces zeroconf uses; the
tests set it to 127.0.0.1 so nothing leaves the machine.
"""

from __future__ import annotations

import logging
import os
import socket
import time

from rackside.hall.net.config import Endpoint, HallConfig

log = logging.getLogger(__name__)

SERVICE = "_mqtt._tcp.local."
# What a device with url = "auto" logs (once per outage) while no broker answers, with the remedy:
# the broker is not running or not on this network, or mDNS does not cross it (some Wi-Fi drops it).
NOT_FOUND = ("no hall broker found by mDNS (_mqtt._tcp): is `rackside hall broker` running on this network? "
             "Else give its address: `rackside hall provision --url mqtts://HOST:8883` (the join file's url), "
             "[hall] url in the config, or --hall URL; retrying")


def _zeroconf():
    from zeroconf import InterfaceChoice, IPVersion, Zeroconf

    env = os.environ.get("RACKSIDE_MDNS_INTERFACES")
    if env:
        return Zeroconf(interfaces=[a.strip() for a in env.split(",") if a.strip()], ip_version=IPVersion.V4Only)
    return Zeroconf(interfaces=InterfaceChoice.All)


class Advertisement:
    """Advertises the broker while it runs: `with Advertisement(hall, port): ...`."""

    def __init__(self, hall: str, port: int, *, tls: bool = False, address: str | None = None) -> None:
        from zeroconf import ServiceInfo

        self.zc = _zeroconf()
        host = socket.gethostname()
        self.info = ServiceInfo(
            SERVICE,
            f"rackside-{hall}.{SERVICE}",
            port=port,
            properties={"hall": hall, "tls": "1" if tls else "0"},
            server=f"{host}.local.",
            parsed_addresses=[address] if address else _local_addresses(),
        )
        self.zc.register_service(self.info, allow_name_change=True)

    def close(self) -> None:
        try:
            self.zc.unregister_service(self.info)
        finally:
            self.zc.close()

    def __enter__(self) -> "Advertisement":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _local_addresses() -> list[str]:
    env = os.environ.get("RACKSIDE_MDNS_INTERFACES")
    if env:
        return [a.strip() for a in env.split(",") if a.strip()]
    from zeroconf import get_all_addresses

    return [a for a in get_all_addresses() if not a.startswith("127.")] or ["127.0.0.1"]


def find_broker(cfg: HallConfig | None = None, *, hall: str | None = None, timeout: float = 3.0) -> Endpoint | None:
    """The broker advertising this hall, or None when none answered within `timeout` seconds."""
    from zeroconf import ServiceBrowser, ServiceListener

    want = hall or (cfg.hall if cfg else None)
    found: list[Endpoint] = []
    zc = _zeroconf()

    class Listener(ServiceListener):
        def add_service(self, zc_, type_, name):
            info = zc_.get_service_info(type_, name, timeout=1500)
            if info is None:
                return
            props = {k.decode(): (v or b"").decode() for k, v in info.properties.items()}
            if want and props.get("hall") != want:
                return
            addrs = info.parsed_addresses()
            if addrs:
                found.append(Endpoint(addrs[0], info.port, props.get("tls") == "1"))

        def update_service(self, zc_, type_, name):
            pass

        def remove_service(self, zc_, type_, name):
            pass

    try:
        browser = ServiceBrowser(zc, SERVICE, Listener())
        deadline = time.monotonic() + timeout
        while not found and time.monotonic() < deadline:
            time.sleep(0.05)
        browser.cancel()
    finally:
        zc.close()
    if found:
        log.info("hall broker found by mDNS: %s", found[0].url)
    return found[0] if found else None
