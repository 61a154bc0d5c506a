"""The clock's rules as a [clock] table, both ways, and the checks every config table shares.

Pure (tests/test_pure_cores.py): `hall.wire.commands` builds a director's `new_game` rules with it, and
`firmware.config` the clock's TOML, so a rule's key, range and default are defined once, here.
A bad value is refused with its key and the allowed values or range (`ConfigError`).
"""

from __future__ import annotations

from typing import Any

from rackside.game.clock import Rules


class ConfigError(ValueError):
    """A configuration problem, worded for the director: file, key, what is allowed."""


def duration_s(key: str, value: Any, low: int, high: int) -> int:
    """A duration as whole seconds, from "MM:SS" or an integer number of seconds."""
    seconds = None
    if isinstance(value, bool):
        seconds = None
    elif isinstance(value, int):
        seconds = value
    elif isinstance(value, str):
        minutes, sep, secs = value.strip().partition(":")
        if sep and minutes.isdigit() and secs.isdigit() and len(secs) == 2 and int(secs) < 60:
            seconds = int(minutes) * 60 + int(secs)
    if seconds is None or not low <= seconds <= high:
        raise ConfigError(
            f"{key} = {value!r}: allowed are durations from {low // 60}:{low % 60:02d} to "
            f"{high // 60}:{high % 60:02d}, written \"MM:SS\" or as whole seconds"
        )
    return seconds


def int_in_range(key: str, value: Any, low: int, high: int) -> int:
    """A whole number from `low` to `high` (a bool is not one)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{key} = {value!r}: allowed are whole numbers from {low} to {high}")
    return value


def check_keys(section: str, table: Any, allowed: set[str]) -> dict:
    """Refuse a table that is not a table, or that has a key we do not know (a typo would
    otherwise be silently ignored at a tournament)."""
    if not isinstance(table, dict):
        raise ConfigError(f"[{section}] must be a table")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"[{section}] has unknown key {unknown[0]!r}: allowed keys are {', '.join(sorted(allowed))}")
    return table


# The [clock] section: its keys and ranges, in one place; the defaults are the core's (WESPA's, in
# clock.Rules), durations as whole seconds.
CLOCK_KEYS = {
    "game_time": ("duration", 60, 99 * 60 + 59, Rules.game_time_ms // 1000),  # 5.3.5
    "penalty_per_minute": ("int", 0, 100, Rules.penalty_per_minute),  # 5.3.2
    # 5.3.3; at most 19:59, the longest overtime a 4-digit module draws ("-19:59", hardware.sevenseg)
    "forfeit_overtime": ("duration", 60, 19 * 60 + 59, Rules.forfeit_overtime_ms // 1000),
    "lateness_forfeit_margin": ("int", 0, 1000, Rules.lateness_forfeit_margin),  # 2.3.6(a)
    "optional_forfeit_below": ("duration", 0, 99 * 60, Rules.optional_forfeit_below_ms // 1000),  # 2.3.4
    "courtesy_draw_after": ("duration", 1, 10 * 60, Rules.courtesy_draw_after_ms // 1000),  # 3.10.6(a)
    "switch_guard_ms": ("int", 0, 1000, Rules.switch_guard_ms),
}


def rules_from_table(table: dict | None, section: str = "clock") -> Rules:
    """Build the clock `Rules` from a [clock] table (missing keys take WESPA's defaults). `section`
    names the table in a refusal: the console's [event] (hall.wire.eventrules) is checked here too."""
    table = check_keys(section, table or {}, set(CLOCK_KEYS))
    values: dict[str, int] = {}
    for key, (kind, low, high, default) in CLOCK_KEYS.items():
        raw = table.get(key, default)
        if kind == "duration":
            values[key] = duration_s(f"{section}.{key}", raw, low, high)
        else:
            values[key] = int_in_range(f"{section}.{key}", raw, low, high)
    return Rules(
        game_time_ms=values["game_time"] * 1000,
        penalty_per_minute=values["penalty_per_minute"],
        forfeit_overtime_ms=values["forfeit_overtime"] * 1000,
        lateness_forfeit_margin=values["lateness_forfeit_margin"],
        optional_forfeit_below_ms=values["optional_forfeit_below"] * 1000,
        courtesy_draw_after_ms=values["courtesy_draw_after"] * 1000,
        switch_guard_ms=values["switch_guard_ms"],
    )


def mmss(ms: int) -> str:
    """A duration as the [clock] table writes it, "M:SS", whole seconds (fractions dropped)."""
    s = ms // 1000
    return f"{s // 60}:{s % 60:02d}"


def rules_to_table(rules: Rules) -> dict:
    """The [clock] table for `rules`, as written into a journal header so a replay is exact."""
    return {
        "game_time": mmss(rules.game_time_ms),
        "penalty_per_minute": rules.penalty_per_minute,
        "forfeit_overtime": mmss(rules.forfeit_overtime_ms),
        "lateness_forfeit_margin": rules.lateness_forfeit_margin,
        "optional_forfeit_below": mmss(rules.optional_forfeit_below_ms),
        "courtesy_draw_after": mmss(rules.courtesy_draw_after_ms),
        "switch_guard_ms": rules.switch_guard_ms,
    }
