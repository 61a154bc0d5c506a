"""The event's rules: one value, set once at the console (`[event]` in its config), carried to every
device. Pure.

    [event]
    preset = "wespa"                  # the rule set the keys below start from (only WESPA's is published here)
    game_time = "20:00"               # 5.3.5: each player's time
    penalty_per_minute = 5            # 5.3.2: points a minute or part thereof of overtime
    forfeit_overtime = "10:00"        # 5.3.3: overtime that forfeits the game
    lateness_forfeit_margin = 75      # 2.3.6(a): a lateness forfeit is a win by this margin
    optional_forfeit_below = "15:00"  # 2.3.4: a late player may forfeit with less time than this
    courtesy_draw_after = "1:00"      # 3.10.6(a): a courtesy draw this long after pressing
    challenge_rule = "5-per-word"     # 3.10.15: the stations' penalty for an unsuccessful challenge

The game keys are clock.toml's [clock] keys, with their ranges and defaults from one table
(`game.rules_table.CLOCK_KEYS`) and checked by the same code (`rules_from_table`), so the console
can set nothing a clock would refuse, and a refusal names `event.<key>` and what is allowed.
`switch_guard_ms` is not the event's: it is the clock's buttons' (clock.toml keeps it).

On the wire the rules are that same table: a `new_game` command's `game_time` and `rules` (every game
key, so a clock starts its next game with the event's rules whatever its clock.toml says,
hall.wire.commands), and the retained `rackside/v1/<hall>/rules` message (`payload`, `parse`), which
a station reads for its challenge rule (hall.device.station) and which names the rules a console
runs. The director's page edits them (`form`: each key's range from the same table, `edit`: a change
checked as [event] is; hall.console.rules.rulespage). WESPA's presets are cited clause by clause (../shared/rules/wespa-game-rules-v2.0-2010.txt);
no NASPA or ABSP values are shipped, for want of a published source at hand (docs/console.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rackside.game.clock import Rules
from rackside.game.rules_table import CLOCK_KEYS, ConfigError, check_keys, mmss, rules_from_table, rules_to_table
from rackside.judge.penalties import ChallengeRule

SECTION = "event"
# the game's rules an event sets: every [clock] key but the buttons' guard, which is the device's
GAME_KEYS = tuple(k for k in CLOCK_KEYS if k != "switch_guard_ms")
CHALLENGE_RULES = tuple(r.value for r in ChallengeRule)
WESPA_CHALLENGE_RULE = ChallengeRule.FIVE_PER_WORD.value  # 3.10.15(d): option (b)(ii), the preferred international norm
# A named rule set: its game keys as [event] writes them, and its challenge rule, each from a published
# source. WESPA's are the clock core's defaults (clock.Rules cites each clause: 5.3.5 25 minutes,
# 5.3.2 10 points a minute, 5.3.3 10 minutes, 2.3.6(a) 75, 2.3.4 15 minutes, 3.10.6(a) one minute).
PRESETS: dict[str, dict[str, Any]] = {
    "wespa": {**{k: v for k, v in rules_to_table(Rules()).items() if k in GAME_KEYS}, "challenge_rule": WESPA_CHALLENGE_RULE},
}
DEFAULT_PRESET = "wespa"
KEYS = ("preset", *GAME_KEYS, "challenge_rule")  # [event]'s keys
MAX_PAYLOAD_BYTES = 1024  # the retained rules message, at most
# What the page calls each key, and the clause it implements (the ranges are CLOCK_KEYS', never here)
LABELS = {
    "game_time": ("Game time, each player", "5.3.5"),
    "penalty_per_minute": ("Overtime penalty, points a minute or part thereof", "5.3.2"),
    "forfeit_overtime": ("Overtime that forfeits the game", "5.3.3"),
    "lateness_forfeit_margin": ("A lateness forfeit is a win by", "2.3.6(a)"),
    "optional_forfeit_below": ("A late player may forfeit with less time than", "2.3.4"),
    "courtesy_draw_after": ("Courtesy draw, this long after pressing", "3.10.6(a)"),
    "challenge_rule": ("Penalty for an unsuccessful challenge", "3.10.15"),
}


@dataclass(frozen=True)
class EventRules:
    """The event's rules: the clock's (`rules`: game time, penalties, forfeit line, lateness,
    courtesy draw) and the stations' challenge rule (3.10.15)."""

    rules: Rules = Rules()
    challenge_rule: str = WESPA_CHALLENGE_RULE
    preset: str = DEFAULT_PRESET

    def table(self) -> dict:
        """The game keys as [event] and a new_game's `rules` write them (durations "M:SS")."""
        return {k: v for k, v in rules_to_table(self.rules).items() if k in GAME_KEYS}

    def command_rules(self) -> dict:
        """A new_game's `rules`: every game key but game_time (the command's own field)."""
        return {k: v for k, v in self.table().items() if k != "game_time"}

    def as_dict(self) -> dict:
        """What the console's page, readiness and retained message say: the table, the rule, the preset."""
        return {"preset": self.preset, **self.table(), "challenge_rule": self.challenge_rule}

    def summary(self) -> str:
        r = self.rules
        return (f"{mmss(r.game_time_ms)} a player, {r.penalty_per_minute} points a minute of overtime, "
                f"forfeit at {mmss(r.forfeit_overtime_ms)} overtime, challenges {self.challenge_rule}")


def from_table(table: Any, where: str = SECTION) -> EventRules:
    """[event], checked whole: missing keys take the preset's (WESPA's by default). ConfigError
    naming `event.<key>` and what is allowed."""
    t = check_keys(where, {} if table is None else table, set(KEYS))
    preset = t.get("preset", DEFAULT_PRESET)
    if not isinstance(preset, str) or preset not in PRESETS:
        raise ConfigError(f"{where}.preset = {preset!r}: allowed are {', '.join(repr(p) for p in PRESETS)} "
                          "(a rule set whose values are published; set the keys yourself for another)")
    base = PRESETS[preset]
    rules = rules_from_table({**{k: base[k] for k in GAME_KEYS}, **{k: t[k] for k in GAME_KEYS if k in t}}, section=where)
    rule = t.get("challenge_rule", base["challenge_rule"])
    if not isinstance(rule, str) or rule not in CHALLENGE_RULES:
        raise ConfigError(f"{where}.challenge_rule = {rule!r}: allowed are {', '.join(CHALLENGE_RULES)} (3.10.15)")
    return EventRules(rules, rule, preset)


def form() -> dict:
    """What the director's rules page draws, as data: each key with its label, clause, kind and
    range (CLOCK_KEYS': durations in whole seconds) or its choices, and the presets."""
    fields = []
    for key in (*GAME_KEYS, "challenge_rule"):
        label, clause = LABELS[key]
        if key == "challenge_rule":
            fields.append({"key": key, "label": label, "clause": clause, "kind": "choice",
                           "choices": [{"value": r.value, "label": r.label, "clause": r.clause} for r in ChallengeRule]})
        else:
            kind, low, high, _ = CLOCK_KEYS[key]
            fields.append({"key": key, "label": label, "clause": clause, "kind": kind, "low": low, "high": high})
    return {"fields": fields, "presets": PRESETS}


def edit(current: EventRules, changes: Any) -> EventRules:
    """`current` with `changes` (some of [event]'s keys, as [event] writes them) over it, checked
    whole as [event] is: ConfigError naming `event.<key>` and what is allowed."""
    check_keys(SECTION, changes, set(KEYS))
    return from_table({**current.as_dict(), **changes})


def payload(ev: EventRules) -> bytes:
    """The retained `rules` message."""
    return json.dumps(ev.as_dict(), separators=(",", ":")).encode()


def parse(data: bytes) -> EventRules:
    """A retained `rules` message, checked as [event] is (ConfigError naming the key)."""
    if len(data) > MAX_PAYLOAD_BYTES:
        raise ConfigError(f"rules: {len(data)} bytes, allowed are at most {MAX_PAYLOAD_BYTES}")
    try:
        d = json.loads(data)
    except (ValueError, RecursionError):
        raise ConfigError("rules: not a JSON object") from None
    if not isinstance(d, dict):
        raise ConfigError("rules: not a JSON object")
    return from_table(d, "rules")
