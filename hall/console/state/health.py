"""A device's health (hall.wire.health, in its retained status) as the director's named problems,
against thresholds the director may change (kept in the results store's settings, `THRESHOLDS_KEY`).
Pure: values in, values out. Unknown values (None) are no problem: the readiness view shows them
as unknown."""

from __future__ import annotations

THRESHOLDS_KEY = "health_thresholds"

# name -> (default, lowest, highest, what it means); each checked where it enters (`check`)
THRESHOLDS: dict[str, tuple[float, float, float, str]] = {
    "cpu_temp_c": (80.0, 40.0, 110.0, "a CPU hotter than this (°C) is a problem (the Pi throttles at 80-85)"),
    "state_free_mb": (200.0, 1.0, 100_000.0, "less free space than this (MB) on the state filesystem is a problem"),
    "write_errors": (0.0, 0.0, 1_000_000.0, "more journal and outbox write errors than this is a problem"),
    "wifi_signal_dbm": (-75.0, -100.0, -30.0, "a Wi-Fi signal weaker than this (dBm) is a problem"),
    "clock_offset_ms": (500.0, 1.0, 600_000.0, "a clock further off than this (ms) from the hall's time is a problem"),
    "since_boot": (1.0, 0.0, 1.0, "1: undervoltage or throttling earlier since boot is a problem too; 0: only now"),
}


class ThresholdError(ValueError):
    pass


def defaults() -> dict:
    return {k: v[0] for k, v in THRESHOLDS.items()}


def check(body: object, base: dict | None = None) -> dict:
    """The thresholds with `body`'s changes (a JSON object of names to numbers), each in its range;
    ThresholdError naming the key and what is allowed."""
    if not isinstance(body, dict) or not body:
        raise ThresholdError(f"thresholds: a JSON object of one or more of {', '.join(THRESHOLDS)}")
    out = dict(base or defaults())
    for k, v in body.items():
        if k not in THRESHOLDS:
            raise ThresholdError(f"threshold {str(k)[:40]!r}: allowed are {', '.join(THRESHOLDS)}")
        _, lo, hi, _what = THRESHOLDS[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise ThresholdError(f"threshold {k} = {str(v)[:20]}: allowed is a number from {lo:g} to {hi:g}")
        out[k] = float(v)
    return out


def restored(saved: object) -> dict:
    """The thresholds kept in the store, or the defaults if they cannot be read (a damaged setting
    is not half applied)."""
    try:
        return check(saved) if saved else defaults()
    except ThresholdError:
        return defaults()


class Problem(str):
    """One named problem of a device's health: its words (a str, as the tile, the readiness page and
    the JSON show it) and whether it `blocks` a start (readiness.py), or is a note. It blocks when
    the clock could lose the game or its result: power failing now, a state filesystem too full or
    failing to take the journal. The rest are notes: the game is timed by the clock's own monotonic
    clock, so a wall clock not synced or off (a laptop's simulator, a Pi without NTP) only dates the
    log; an earlier undervoltage, throttling, heat and Wi-Fi the director may want to look at, but a
    clock that is online plays on (issue 35). Decided where the problem is named, never from its words."""

    blocks: bool

    def __new__(cls, words: str, blocks: bool = False) -> "Problem":
        p = super().__new__(cls, words)
        p.blocks = blocks
        return p


def problems(health: dict | None, th: dict) -> list[Problem]:
    """The named problems of one device's health, most urgent first."""
    if not health:
        return []
    out = []
    g = health.get
    since = th["since_boot"] >= 1
    if g("undervoltage"):
        out.append(Problem("undervoltage now", blocks=True))
    elif since and g("undervoltage_since_boot"):
        out.append(Problem("undervoltage since boot"))
    if g("throttled"):
        out.append(Problem("throttled now"))
    elif since and g("throttled_since_boot"):
        out.append(Problem("throttled since boot"))
    if g("clock_synced") is False:
        out.append(Problem("clock not synced"))
    elif g("clock_offset_ms") is not None and abs(g("clock_offset_ms")) > th["clock_offset_ms"]:
        out.append(Problem(f"clock off by {abs(g('clock_offset_ms')) / 1000:.1f} s"))
    if g("state_free_mb") is not None and g("state_free_mb") < th["state_free_mb"]:
        out.append(Problem(f"disk: {g('state_free_mb')} MB free", blocks=True))
    if g("write_errors") is not None and g("write_errors") > th["write_errors"]:
        out.append(Problem(f"{g('write_errors')} write errors", blocks=True))
    if g("cpu_temp_c") is not None and g("cpu_temp_c") > th["cpu_temp_c"]:
        out.append(Problem(f"hot: CPU {g('cpu_temp_c'):.0f} °C"))
    if g("wifi_link") is False:
        out.append(Problem("Wi-Fi down"))
    elif g("wifi_signal_dbm") is not None and g("wifi_signal_dbm") < th["wifi_signal_dbm"]:
        out.append(Problem(f"Wi-Fi weak: {g('wifi_signal_dbm')} dBm"))
    return out
