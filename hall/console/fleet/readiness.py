"""Is the hall ready for the next round's games? Pure: the hall state in, one row a table out.

The tables are those the round's pairings use (every division's games on hall-wide tables); with no
TSH pairings, every table the console knows. A table is ready when nothing blocks a start: its
clock is online, is not still playing a game (a `new_game` is refused while one runs), its health
has no problem that blocks (health.Problem.blocks: power failing now, a full or failing state filesystem),
and both its players are known. Everything else the director should know is a note, which does
not make a table not ready (issue 35: "clock not synced" on a laptop's simulators made every table
not ready): another version than the hall's, and the health problems that do not block (a clock not
synced or off, an earlier undervoltage, throttling, heat, Wi-Fi). A table's rules are those of the game on its
clock (its last state's); the event's ([event], hall.wire.eventrules) are what the console's `new_game`
sends, with the round's game time, so a clock whose game runs others (`rules_differ`: an older game, or
its clock.toml's, the fallback of a clock with no hall) is listed under the rules it runs, and its
next game, started from the console, runs the event's. `rules_groups` says which tables run which.
"""

from __future__ import annotations

from collections import Counter

from rackside.hall.wire.eventrules import EventRules
from rackside.hall.wire.messages import STATE_RULES

from ..state.contract import state_rules

PLAYING = ("running", "late", "neutralised")


def view(tables: dict, round_game_time_ms: int, round_number: int, stations: dict | None = None,
         event_rules: EventRules | None = None) -> dict:
    """{"round", "tables": [row...], "versions": {version: count}, "hall_version", "not_ready": [n...],
    "stations": [{station, status, version, health, health_problems}...]} (a station starts no game:
    it is listed, never counted as not ready)."""
    seated = [t for t in tables.values() if t.seat]
    used = sorted(seated or tables.values(), key=lambda t: t.n)
    versions = Counter(v for v in (_version(t) for t in used) if v)
    hall_version = versions.most_common(1)[0][0] if versions else None
    ev = event_rules or EventRules()
    event = state_rules(ev.rules)
    rows = [_row(t, hall_version, round_game_time_ms, event) for t in used]
    groups: dict[str, dict] = {}
    for r in rows:  # which tables run which rules: the event's first
        key = "event" if not r["rules_differ"] else _label(r["rules"])
        groups.setdefault(key, {"rules": r["rules"] if key != "event" else {**event, "game_time_ms": round_game_time_ms},
                                "event": key == "event", "tables": []})["tables"].append(r["table"])
    return {
        "round": round_number,
        "from_pairings": bool(seated),
        "game_time_ms": round_game_time_ms,
        "event_rules": ev.as_dict(),
        "rules_groups": sorted(groups.values(), key=lambda g: (not g["event"], g["tables"][0])),
        "versions": dict(versions),
        "hall_version": hall_version,
        "tables": rows,
        "not_ready": [r["table"] for r in rows if not r["ready"]],
        "with_notes": [r["table"] for r in rows if r["notes"]],
        "stations": [{"station": sid, "status": s.status, "version": s.version, "health": s.health,
                      "health_problems": list(s.health_problems)} for sid, s in sorted((stations or {}).items())],
    }


def _version(t) -> str | None:
    return t.version or (t.state or {}).get("version")


def _label(rules: dict) -> str:
    return ",".join(f"{k}={rules.get(k)}" for k in STATE_RULES)


def _row(t, hall_version: str | None, game_time_ms: int, event: dict) -> dict:
    h = t.health or {}
    version = _version(t)
    rules = (t.state or {}).get("rules") or None
    names = list(t.names)
    why, notes = [], []  # what blocks a start; what the director should know, which does not
    if t.status != "online":
        why.append("offline" if t.status == "offline" else "no clock heard")
    if version and hall_version and version != hall_version:
        notes.append(f"version {version} (the hall runs {hall_version})")
    phase = (t.state or {}).get("phase")
    if t.status == "online" and phase in PLAYING:
        why.append(f"a game is still {phase}")
    for p in t.health_problems:
        (why if p.blocks else notes).append(str(p))
    if t.seat and not all(names):
        why.append("a player is not known")
    return {
        "table": t.n,
        "division": (t.seat or {}).get("division"),
        "names": names,
        "players_known": bool(t.seat) and all(names),
        "online": t.status == "online",
        "status": t.status,
        "version": version,
        "game_time_ms": game_time_ms,
        # the rules of the game on the clock (a clock not heard: the event's, which its new game gets)
        "rules": {**event, "game_time_ms": game_time_ms, **(rules or {})},
        "rules_from_clock": rules is not None,
        "rules_differ": bool(rules) and any(rules.get(k) != v for k, v in event.items() if k != "game_time_ms"),
        "clock_synced": h.get("clock_synced"),
        "clock_offset_ms": h.get("clock_offset_ms"),
        "health": t.health,
        "health_problems": list(t.health_problems),
        "ready": not why,
        "why": why,  # what blocks a start
        "notes": notes,  # what does not
    }


def text(v: dict) -> str:
    """The view as `rackside hall ready` prints it: a line a table, then the verdict."""
    def ms(x):
        return f"{x // 60000}:{x // 1000 % 60:02d}"

    def val(x, unit=""):
        return "unknown" if x is None else f"{x}{unit}"

    lines = [f"round {v['round']}: " + (f"{len(v['tables'])} table(s) of the round's pairings" if v["from_pairings"]
                                        else f"no pairings: the {len(v['tables'])} table(s) the console knows"),
             "versions: " + (", ".join(f"{k} ({n} table(s))" for k, n in sorted(v["versions"].items())) or "none known"),
             "the event's rules: " + _rules_text(v["event_rules"]) + " (a new game from the console starts with them)"]
    for g in v["rules_groups"]:
        r = g["rules"]
        lines.append(f"  {'the event' if g['event'] else 'others'}: table(s) {', '.join(map(str, g['tables']))}: "
                     f"penalty {r['penalty_per_minute']}/min, forfeit at {ms(r['forfeit_overtime_ms'])} overtime, "
                     f"lateness margin {r['lateness_forfeit_margin']}")
    for r in v["tables"]:
        h = r["health"] or {}
        rules = r["rules"]
        lines.append(
            f"table {r['table']:>3} {'READY' if r['ready'] else 'NOT READY'}: "
            f"{r['status'] or 'never heard'}, version {val(r['version'])}, game time {ms(rules['game_time_ms'])}, "
            f"penalty {rules['penalty_per_minute']}/min, forfeit at {ms(rules['forfeit_overtime_ms'])} overtime"
            + (" (not the event's: its next game from the console runs the event's)" if r["rules_differ"] else "")
            + f"; players: {' v '.join(n or '?' for n in r['names']) if r['division'] else 'no pairing'}")
        lines.append(
            f"          clock synced {val(r['clock_synced'])}, offset {val(r['clock_offset_ms'], ' ms')}; "
            f"undervoltage {val(h.get('undervoltage'))} (since boot {val(h.get('undervoltage_since_boot'))}), "
            f"throttled {val(h.get('throttled'))} (since boot {val(h.get('throttled_since_boot'))}), "
            f"CPU {val(h.get('cpu_temp_c'), ' °C')}, free {val(h.get('state_free_mb'), ' MB')}, "
            f"write errors {val(h.get('write_errors'))}, Wi-Fi {_wifi(h)}, up {val(h.get('uptime_s'), ' s')}")
        if r["why"]:
            lines.append(f"          not ready (blocks a start): {'; '.join(r['why'])}")
        if r["notes"]:
            lines.append(f"          notes (do not block a start): {'; '.join(r['notes'])}")
    for s in v["stations"]:
        lines.append(f"station {s['station']}: {s['status'] or 'never heard'}, version {val(s['version'])}; "
                     + ("; ".join(s["health_problems"]) or ("no health problem" if s["health"] else "health unknown")))
    notes = f"; notes on table(s) {', '.join(map(str, v['with_notes']))} (they do not block a start)" if v["with_notes"] else ""
    lines.append(("ready: every table" if not v["not_ready"] else
                  f"not ready: table(s) {', '.join(map(str, v['not_ready']))}") + notes)
    return "\n".join(lines)


def _rules_text(e: dict) -> str:
    return (f"{e['preset']} preset, game time {e['game_time']}, penalty {e['penalty_per_minute']}/min, forfeit at "
            f"{e['forfeit_overtime']} overtime, lateness margin {e['lateness_forfeit_margin']}, optional forfeit below "
            f"{e['optional_forfeit_below']}, courtesy draw after {e['courtesy_draw_after']}, challenges {e['challenge_rule']}")


def _wifi(h: dict) -> str:
    if h.get("wifi_interface") is None:
        return "unknown"
    if h.get("wifi_link") is False:
        return f"{h['wifi_interface']} down"
    signal = h.get("wifi_signal_dbm")
    return f"{h['wifi_interface']} {'unknown' if signal is None else f'{signal} dBm'}"
