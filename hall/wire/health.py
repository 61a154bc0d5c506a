"""A device's health, as its retained status carries it (docs/hall.md, "`table/<n>/status`"). Pure:
the fields both ends agree on, the status payload, and the faults a simulator may inject.

While a device is online its retained status is one JSON object: `{"status": "online", "version":
..., "health": {...}}`; its Last Will (and a clean stop) stays the bare word `offline`. Each health
field is a number, a bool, a short text or `null`: `null` means this device cannot read it (a laptop
has no Pi firmware to ask about undervoltage, a wired Pi no Wi-Fi), never a guess.
"""

from __future__ import annotations

import json
from typing import Any

ONLINE = "online"
OFFLINE = "offline"

# field -> (kind, low, high): what a device may put in `health` (the console refuses anything else)
FIELDS: dict[str, tuple[type, float, float]] = {
    "undervoltage": (bool, 0, 1),  # the supply is below 4.63 V now (get_throttled bit 0)
    "undervoltage_since_boot": (bool, 0, 1),  # it was, at some time since boot (bit 16)
    "throttled": (bool, 0, 1),  # the CPU is throttled or frequency-capped now (bits 1, 2, 3)
    "throttled_since_boot": (bool, 0, 1),  # it was, since boot (bits 17, 18, 19)
    "cpu_temp_c": (float, -40, 150),  # /sys/class/thermal/thermal_zone0/temp, degrees C
    "state_free_mb": (int, 0, 2**40),  # free space on the state filesystem (journals, outbox)
    "state_free_pct": (float, 0, 100),
    "write_errors": (int, 0, 2**31),  # journal and outbox writes that failed since the program started
    "wifi_interface": (str, 1, 16),  # the wireless interface (wlan0), when the device has one
    "wifi_link": (bool, 0, 1),  # associated (a link quality above 0)
    "wifi_signal_dbm": (int, -127, 0),  # the signal level, dBm (/proc/net/wireless)
    "clock_synced": (bool, 0, 1),  # the kernel's clock is NTP-synchronised (adjtimex: not STA_UNSYNC)
    "clock_offset_ms": (float, -1e9, 1e9),  # the last offset the NTP daemon gave the kernel
    "clock_maxerror_ms": (float, 0, 1e9),  # the kernel's bound on the clock's error
    "uptime_s": (int, 0, 2**40),  # /proc/uptime
}
VERSION_CHARS = 64
# the later command fields a status may announce (hall.wire.commands.TAKES; a reader ignores one it
# does not know), each "command.field": at most 8 of 48 characters keep a status under 1 KB
MAX_TAKES = 8
TAKE_CHARS = 48
MAX_STATUS_BYTES = 1024  # a status with every field is about 450 bytes, with MAX_TAKES takes about 860

# A fault a simulator can inject (`rackside clock --simulate --fault NAME`, `rackside hall station
# --fault NAME`, the demo's tables): the health fields it sets, what a sick Pi would report.
FAULTS: dict[str, dict[str, Any]] = {
    "undervoltage": {"undervoltage": True, "undervoltage_since_boot": True},
    "undervoltage-earlier": {"undervoltage": False, "undervoltage_since_boot": True},
    "throttled": {"throttled": True, "throttled_since_boot": True},
    "hot": {"cpu_temp_c": 84.5},
    "disk-full": {"state_free_mb": 12, "state_free_pct": 0.4},
    "write-errors": {"write_errors": 3},
    "wifi-weak": {"wifi_interface": "wlan0", "wifi_link": True, "wifi_signal_dbm": -84},
    "wifi-down": {"wifi_interface": "wlan0", "wifi_link": False, "wifi_signal_dbm": None},
    "unsynced": {"clock_synced": False, "clock_offset_ms": None},
    "clock-offset": {"clock_synced": True, "clock_offset_ms": 2500.0},
}


class FaultError(ValueError):
    pass


def check_faults(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    for name in names:
        if name not in FAULTS:
            raise FaultError(f"fault {name!r}: allowed are {', '.join(FAULTS)}")
    return tuple(names)


def with_faults(health: dict, faults: tuple[str, ...]) -> dict:
    """The health as a device with these faults would report it."""
    out = dict(health)
    for name in faults:
        out.update(FAULTS[name])
    return out


def unknown() -> dict:
    """Every field unknown: what a device that can read nothing reports."""
    return {k: None for k in FIELDS}


def status_payload(health: dict, version: str | None, takes: tuple[str, ...] = ()) -> bytes:
    """The retained status of a device that is online, with its health; `takes`: the later optional
    command fields it takes ("pairing.names": hall.wire.commands.TAKES, a clock's), left out when none."""
    body = {"status": ONLINE, "version": version, "health": {k: health.get(k) for k in FIELDS}}
    if takes:
        body["takes"] = list(takes)
    return json.dumps(body, separators=(",", ":")).encode()


def is_online(payload: bytes) -> bool:
    """Whether a status payload says online: the bare word (an older device) or the JSON object.
    A quick reading for the fleet and `hall tail`; the console checks the whole (contract.py)."""
    if payload.strip() == b"online":
        return True
    if not payload.lstrip().startswith(b"{") or len(payload) > MAX_STATUS_BYTES:
        return False
    try:
        body = json.loads(payload)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("status") == ONLINE
