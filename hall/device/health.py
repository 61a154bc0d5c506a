"""A device's health, read from Raspberry Pi OS's own interfaces and put in its retained status
(hall.wire.health; docs/hall.md, "Device health", cites each interface).

`HealthReader.read()` reads, each from its documented file or call, parsed by hall.device.healthparse:

- undervoltage and throttling: /sys/devices/platform/soc/soc:firmware/get_throttled (the word
  `vcgencmd get_throttled` prints; read from sysfs, so no process is started);
- CPU temperature: /sys/class/thermal/thermal_zone0/temp;
- free space on the state filesystem: os.statvfs of the state folder;
- write errors: what the journal and the outbox count (given as a function);
- Wi-Fi: the first interface with /sys/class/net/<if>/wireless, its operstate, and its signal
  level in /proc/net/wireless;
- clock synchronisation: adjtimex(2) with modes 0 (read only) through ctypes, as `timedatectl show`
  does for NTPSynchronized;
- uptime: /proc/uptime.

What a machine does not have (a laptop's get_throttled, a wired Pi's Wi-Fi) is None: unknown.

`HealthWatch` runs the reader on its own thread ("hall-health"), never the clock's: a read every
`every_s` (30 s), published (`publish(payload)`, the link's retained status) when anything but the
uptime changed, and at least every QUIET_S. Each file read is at most READ_BYTES.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from pathlib import Path
from typing import Callable, NamedTuple

from rackside.hall.device import healthparse
from rackside.hall.wire import health as wire

log = logging.getLogger(__name__)

EVERY_S = 30.0
QUIET_S = 600.0  # the uptime is refreshed at least this often, when nothing else changes
READ_BYTES = 4096

THROTTLED = "sys/devices/platform/soc/soc:firmware/get_throttled"
THERMAL = "sys/class/thermal/thermal_zone0/temp"
NET = "sys/class/net"
WIRELESS = "proc/net/wireless"
UPTIME = "proc/uptime"


class _Timex(ctypes.Structure):
    """struct timex (linux/timex.h, glibc's layout); adjtimex with modes 0 only reads it."""

    _fields_ = [
        ("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long), ("maxerror", ctypes.c_long),
        ("esterror", ctypes.c_long), ("status", ctypes.c_int), ("constant", ctypes.c_long),
        ("precision", ctypes.c_long), ("tolerance", ctypes.c_long), ("time_sec", ctypes.c_long),
        ("time_usec", ctypes.c_long), ("tick", ctypes.c_long), ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long),
        ("shift", ctypes.c_int), ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
        ("_reserved", ctypes.c_int * 16),  # the kernel's padding (11 ints), with room to spare
    ]


_libc: list = []  # the process's own C library, loaded once (CDLL(None): no ldconfig run, as find_library would)


def adjtimex() -> tuple[int, int, int, int] | None:
    """(clock state, status, offset, maxerror) from adjtimex(2), or None where there is none."""
    try:
        if not _libc:
            _libc.append(ctypes.CDLL(None, use_errno=True))
        tx = _Timex()
        state = _libc[0].adjtimex(ctypes.byref(tx))
    except (OSError, AttributeError):
        return None
    if state < 0:
        return None
    return state, tx.status, tx.offset, tx.maxerror


class Health(NamedTuple):
    """What a device's output needs to watch its health: the state folder (its filesystem's free
    space), its journal's write errors (a function: the count as it grows) and a simulator's faults."""

    state_dir: Path
    journal_errors: Callable[[], int | None]
    faults: tuple[str, ...] = ()


FREE_STEP_MB = 16  # free space that moved less than this is no change worth a status (journals grow by KB)


def _look(h: dict) -> dict:
    """What of a reading is a change worth publishing: not the uptime, which always moves, nor free
    space moving within one FREE_STEP_MB step or a whole percent (a journal or the outbox growing);
    the quiet period's status carries the exact figures."""
    mb, pct = h.get("state_free_mb"), h.get("state_free_pct")
    return {**h, "uptime_s": None, "state_free_mb": None if mb is None else mb // FREE_STEP_MB,
            "state_free_pct": None if pct is None else int(pct)}


class HealthReader:
    """Reads the health of the machine it runs on; `root` is "/" (a test gives a folder laid out
    as a Pi's /sys and /proc); `sync` is adjtimex (a test gives its own)."""

    def __init__(self, state_dir: Path, write_errors: Callable[[], int | None] = lambda: None, *, root: Path = Path("/"),
                 sync: Callable[[], tuple[int, int, int, int] | None] = adjtimex) -> None:
        self.state_dir = Path(state_dir)
        self.write_errors = write_errors
        self.root = Path(root)
        self.sync = sync

    def _text(self, rel: str) -> str | None:
        try:
            with open(self.root / rel, "rb") as f:
                return f.read(READ_BYTES).decode("ascii", errors="replace")
        except OSError:
            return None

    def read(self) -> dict:
        h = wire.unknown()
        h.update(healthparse.throttled(self._text(THROTTLED)))
        h["cpu_temp_c"] = healthparse.thermal(self._text(THERMAL))
        h["uptime_s"] = healthparse.uptime(self._text(UPTIME))
        try:
            st = os.statvfs(self.state_dir)
            h.update(healthparse.free_space(st.f_bavail, st.f_blocks, st.f_frsize))
        except OSError:
            pass
        h["write_errors"] = self.write_errors()
        h.update(self._wifi())
        timex = self.sync()
        if timex is not None:
            h.update(healthparse.clock_sync(*timex))
        return h

    def _wifi(self) -> dict:
        try:
            names = sorted(p.name for p in (self.root / NET).iterdir() if (p / "wireless").is_dir())
        except OSError:
            names = []
        if not names:
            return {}  # no wireless interface: unknown (a wired device), never "down"
        name = names[0][:16]
        up = (self._text(f"{NET}/{name}/operstate") or "").strip() == "up"
        signal = healthparse.wireless(self._text(WIRELESS), name) if up else None
        return {"wifi_interface": name, "wifi_link": up and signal is not None, "wifi_signal_dbm": signal}


class HealthWatch:
    """The reader on its own thread; `publish(payload)` gets the status with the health (the
    link's `set_status`). `faults` (a simulator's, hall.wire.health.FAULTS) are laid over each reading."""

    def __init__(self, reader: HealthReader, publish: Callable[[bytes], None], version: str | None, *,
                 faults: tuple[str, ...] = (), every_s: float = EVERY_S, quiet_s: float = QUIET_S,
                 takes: tuple[str, ...] = ()) -> None:
        self.reader = reader
        self.publish = publish
        self.version = version
        self.takes = takes  # the later command fields the device takes (a clock's: hall.wire.commands.TAKES)
        self.faults = wire.check_faults(faults)
        self.every_s = every_s
        self.quiet_s = quiet_s
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="hall-health", daemon=True)
        self.last: dict | None = None  # the health last published (read by tests)

    def start(self) -> "HealthWatch":
        self.thread.start()
        return self

    def close(self, timeout: float = 2.0) -> None:
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout)

    def once(self, quiet_for: float) -> bool:
        """Read, and publish if changed (or quiet for quiet_s); True when it published."""
        try:
            h = wire.with_faults(self.reader.read(), self.faults)
        except Exception as e:  # noqa: BLE001 - health is never worth stopping a device for
            log.debug("health not read: %r", e)
            return False
        same = self.last is not None and _look(h) == _look(self.last)
        if same and quiet_for < self.quiet_s:
            return False
        self.last = h
        self.publish(wire.status_payload(h, self.version, self.takes))
        return True

    def _run(self) -> None:
        quiet = 0.0
        while True:
            quiet = 0.0 if self.once(quiet) else quiet + self.every_s
            if self.stop_event.wait(self.every_s):
                return
