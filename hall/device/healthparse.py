"""A Pi's health from the texts and numbers its kernel and firmware give (hall.device.health reads
them; docs/hall.md cites each interface). Pure: text and numbers in, health fields out
(hall.wire.health.FIELDS); anything that cannot be read is None, never a guess."""

from __future__ import annotations

# get_throttled's bits (Raspberry Pi documentation, "vcgencmd get_throttled"; the same word is
# /sys/devices/platform/soc/soc:firmware/get_throttled, in hex)
UNDERVOLTAGE_NOW = 1 << 0
CAPPED_NOW = 1 << 1
THROTTLED_NOW = 1 << 2
SOFT_TEMP_LIMIT_NOW = 1 << 3
UNDERVOLTAGE_SINCE_BOOT = 1 << 16
CAPPED_SINCE_BOOT = 1 << 17
THROTTLED_SINCE_BOOT = 1 << 18
SOFT_TEMP_LIMIT_SINCE_BOOT = 1 << 19

# adjtimex(2): the status bits and clock states we read (linux/timex.h)
STA_UNSYNC = 0x0040
STA_NANO = 0x2000
TIME_ERROR = 5
UNSYNCED_MAXERROR_US = 16_000_000  # the kernel's "unsynchronised" bound; systemd's NTPSynchronized uses it too


def throttled(text: str | None) -> dict:
    """`50005`, `0x50005` or vcgencmd's `throttled=0x50005` -> the four health fields."""
    keys = ("undervoltage", "undervoltage_since_boot", "throttled", "throttled_since_boot")
    if text is None:
        return dict.fromkeys(keys)
    word = text.strip().removeprefix("throttled=")
    try:
        bits = int(word, 16)
    except ValueError:
        return dict.fromkeys(keys)
    return {
        "undervoltage": bool(bits & UNDERVOLTAGE_NOW),
        "undervoltage_since_boot": bool(bits & UNDERVOLTAGE_SINCE_BOOT),
        "throttled": bool(bits & (CAPPED_NOW | THROTTLED_NOW | SOFT_TEMP_LIMIT_NOW)),
        "throttled_since_boot": bool(bits & (CAPPED_SINCE_BOOT | THROTTLED_SINCE_BOOT | SOFT_TEMP_LIMIT_SINCE_BOOT)),
    }


def thermal(text: str | None) -> float | None:
    """A thermal zone's `temp` (millidegrees C) -> degrees C, to 0.1."""
    try:
        c = int(text.strip()) / 1000
    except (AttributeError, ValueError):
        return None
    return round(c, 1) if -40 <= c <= 150 else None


def uptime(text: str | None) -> int | None:
    """/proc/uptime's first number (seconds since boot)."""
    try:
        return int(float(text.split()[0]))
    except (AttributeError, IndexError, ValueError):
        return None


def free_space(f_bavail: int, f_blocks: int, f_frsize: int) -> dict:
    """os.statvfs's numbers -> free MB and percent (what an unprivileged writer may still use)."""
    if f_blocks <= 0 or f_frsize <= 0:
        return {"state_free_mb": None, "state_free_pct": None}
    return {"state_free_mb": f_bavail * f_frsize // 2**20, "state_free_pct": round(100 * f_bavail / f_blocks, 1)}


def wireless(text: str | None, interface: str) -> int | None:
    """The signal level (dBm) of `interface` in /proc/net/wireless:

        Inter-| sta-|   Quality        |   Discarded packets               | Missed | WE
         face | tus | link level noise |  nwid  crypt   frag  retry   misc | beacon | 22
         wlan0: 0000   54.  -56.  -256        0      0      0      0     12        0

    None when the interface is not listed or has no link (quality 0). A level above 63 is an old
    driver's unsigned byte (level - 256)."""
    if text is None:
        return None
    for line in text.splitlines()[2:]:
        name, _, rest = line.partition(":")
        if name.strip() != interface:
            continue
        fields = rest.split()
        try:
            link, level = float(fields[1]), int(float(fields[2]))
        except (IndexError, ValueError):
            return None
        if link <= 0:
            return None
        if level > 63:
            level -= 256
        return level if -127 <= level <= 0 else None
    return None


def clock_sync(state: int, status: int, offset: int, maxerror_us: int) -> dict:
    """adjtimex(2) read with modes 0 (what `timedatectl show`'s NTPSynchronized also reads): synced
    unless STA_UNSYNC is set, the clock is in TIME_ERROR, or the error bound has grown to the
    kernel's 16 s; the offset (microseconds, nanoseconds with STA_NANO) only when synced."""
    synced = not (status & STA_UNSYNC) and state != TIME_ERROR and maxerror_us < UNSYNCED_MAXERROR_US
    scale = 1e6 if status & STA_NANO else 1e3
    return {
        "clock_synced": synced,
        "clock_offset_ms": round(offset / scale, 3) if synced else None,
        "clock_maxerror_ms": round(maxerror_us / 1e3, 3) if 0 <= maxerror_us < UNSYNCED_MAXERROR_US else None,
    }
