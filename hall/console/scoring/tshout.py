"""TSH's own formats out (pure): a live `tourney.js` as TSH writes it, with the console's results.

TSH writes `tourney.js` (its `TSH::Tournament::SaveJSON`, TSH 3.x `lib/perl/TSH/Tournament.pm`)
as `newt=` + `ToJavaScript()` + `;`, through `JavaScript::Serializable` (`lib/perl/JavaScript/
Serializable.pm`): each class exports a fixed set of fields (`EXPORT_JAVASCRIPT`), a hash's keys are
sorted and quoted, an absent value is `undefined`, a text that looks like a decimal number is written
as that number (leading zeros dropped), any other text quoted (`"`, `\\` and a line end escaped):

- the tournament: `config`, `divisions` (its `divlist`), `esb`, `profile`;
- a division (`TSH::Division`): `classes`, `first_out_of_the_money`, `maxr` (the last round,
  0-based: `config max_rounds` - 1), `maxrp` (the last scored round, 0-based: -1 before any),
  `name`, `players` (its `data`: 1-based, index 0 `undefined`), `rating_list`, `rating_system`,
  `seeds`;
- a player (`TSH::Player`): `etc` (the `.t` file's annotations: `board`, `p12`, `class`, ... and
  what TSH computes, `newr`, `rrank`), `id`, `name`, `newr`, `pairings`, `photo`, `photomood`,
  `rating`, `scores`. A round paired but not yet played is a pairing with no score: the `scores`
  array is shorter than `pairings` (tests/data/tsh/july4-2025, division A round 3).

What goes in is the event's TSH data (the divisions as imported) with the console's recorded
results applied the way TSH holds them once the director has entered the console's TSH export
(results.to_tsh, docs/console.md "TSH score entry"): each game's scores with penalties applied; a
lateness forfeit as TSH records one, each player paired with a bye (0) and given the spread; every
bye of a round with a recorded result at TSH's bye spread (the export's own list). Nothing else of
a result is written (no slip, penalty, note, reason, who or when), nor anything of devices or
commands: only TSH's fields, as TSH would publish them.

What the console does not hold (TSH's computed ratings and ranks, photos, seeds, its message
table `_termdict`) comes from an imported `tourney.js` when the event was imported from one
(`carried`), else it is `undefined` as in a TSH event that never computed it.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import PurePosixPath

from . import jsliteral, results, tsh

FILE_NAME = "tourney.js"
MEDIA_TYPE = "application/javascript; charset=utf-8"
# TSH::Config's EXPORT_JAVASCRIPT: the configuration TSH publishes (and nothing else of config.tsh)
CONFIG_KEYS = (
    "assign_firsts", "check_by_winner", "currency_symbol", "division_label", "division_rating_list",
    "division_rating_system", "entry", "event_date", "esb_lite", "event_name", "max_rounds", "no_boards", "notes",
    "player_moods", "player_photos", "show_teams", "tables", "photo_database", "prize_bands", "scoreboard_team_colors",
    "scoreboard_team_colours", "scoreboard_teams", "spread_bad", "spread_cap", "standings_spread_cap",
    "suppress_results_in_pairings", "track_firsts", "no_scores", "_termdict", "rating_system", "thai_points",
)
# TSH::Division's and TSH::Player's exported fields the console does not work out itself
DIVISION_CARRIED = ("classes", "first_out_of_the_money", "maxr", "rating_list", "rating_system", "seeds")
PLAYER_CARRIED = ("newr", "photo", "photomood")
ESB_DEFAULT = {"message": {"mode": "reveal", "text": ""}}  # TSH::Tournament::initialise's
_TSH_NUMBER = re.compile(r"-?(?:\d+|\d*\.\d+)")  # ToJavaScriptAny: such a text is written as a number
_LEADING_ZEROS = re.compile(r"^(-?)0+(\d)")
_ESCAPE = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_NEEDS_ESCAPE = re.compile(r'[\\"\x00-\x1f\u2028\u2029]')
UNDEFINED = jsliteral.UNDEFINED


# --- JavaScript, as TSH's JavaScript::Serializable writes it --------------------------------------


def js(value) -> str:
    """One value as ToJavaScriptAny writes it. Hand-written: it is TSH's own few rules (sorted keys,
    `undefined`, numbers-as-text), which no JSON library reproduces."""
    if value is None or value is UNDEFINED:
        return "undefined"
    if isinstance(value, Written):
        return value.text
    if isinstance(value, bool):  # Perl has none; a reformatted file's true/false stays what it was
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "undefined"
    if isinstance(value, str):
        if _TSH_NUMBER.fullmatch(value):  # leading zeros dropped, as TSH: "some browsers abort on apparent octal"
            return _LEADING_ZEROS.sub(r"\1\2", value) if value.startswith(("0", "-0")) else value
        return quote(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(quote(str(k)) + ":" + js(value[k]) for k in sorted(value, key=str)) + "}"
    raise TypeError(f"tourney.js has no form for {type(value).__name__}")


class Written:
    """A value already written (an imported config with TSH's message table is most of the file:
    written once per import, not at every result)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def quote(s: str) -> str:
    """TSH's Quote escapes `"`, `\\` and a line end (as a backslash before it, which JavaScript
    reads as no character at all); here a line end is `\\n` and every other control character (and
    U+2028/9) `\\uXXXX`, so no text can end the string or the script early. A TSH name has none of them."""
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPE.get(m.group(), f"\\u{ord(m.group()):04x}"), s) + '"'


# --- the divisions with the console's results ----------------------------------------------------


def live_divisions(divisions: list[tsh.Division], rows: list[results.Recorded],
                   config: tsh.Config | None) -> tuple[list[tsh.Division], list[str]]:
    """The divisions as TSH holds them once each round's recorded results are entered through the
    console's TSH export (results.to_tsh with the same `config`: its bye spread, its byes), and what
    could not be applied (a result whose players TSH's files pair otherwise, an entry system the
    export does not write)."""
    problems: list[str] = []
    bye_spread = config.bye_spread if config is not None else tsh.DEFAULT_BYE_SPREAD
    by_round: dict[tuple[str, int], list[results.Recorded]] = {}
    for r in rows:
        if r.division != results.BY_TABLE and None not in r.numbers:
            by_round.setdefault((r.division, r.round), []).append(r)
    out = []
    for d in divisions:
        pairings = {n: list(p.opponents) for n, p in d.players.items()}
        scores = {n: list(p.scores) for n, p in d.players.items()}
        for rnd in sorted(k[1] for k in by_round if k[0] == d.name):
            i = rnd - 1
            rws = by_round[(d.name, rnd)]
            for r in sorted(rws, key=lambda r: r.table):
                a, b = r.numbers
                if a not in d.players or b not in d.players:
                    problems.append(f"division {d.name} round {rnd} table {r.table}: players {a} and {b} are not both "
                                    "in TSH's files: not in tourney.js")
                    continue
                was = (_at(pairings[a], i), _at(pairings[b], i))
                if r.forfeits:  # 2.3.6(b): TSH's forfeit, each player paired with a bye and given the spread
                    if was not in ((b, a), (0, 0)):
                        problems.append(_paired_otherwise(d.name, rnd, r, was))
                        continue
                    for n, s in zip(r.numbers, r.scores):
                        _put(pairings[n], i, 0)
                        _put(scores[n], i, s)
                    continue
                if was != (b, a):
                    problems.append(_paired_otherwise(d.name, rnd, r, was))
                    continue
                for n, s in zip(r.numbers, r.scores):
                    _put(scores[n], i, s)
            try:
                byes = results.to_tsh(d.name, rnd, rws, d, config).byes
            except results.ResultError as e:
                problems.append(f"division {d.name} round {rnd}: byes not scored: {e}")
                continue
            for n in byes:
                _put(scores[n], i, bye_spread)
        players = {n: replace(p, opponents=tuple(pairings[n]), scores=tuple(scores[n])) for n, p in d.players.items()}
        out.append(replace(d, players=players, problems=list(d.problems)))
    return out, problems


def _paired_otherwise(division: str, rnd: int, r: results.Recorded, was) -> str:
    a, b = r.numbers
    return (f"division {division} round {rnd} table {r.table}: recorded for players {a} and {b}, but TSH's files pair "
            f"them with {_word(was[0])} and {_word(was[1])}: not in tourney.js (import TSH's files again, or correct the result)")


def _word(n) -> str:
    return "nobody" if n is None else ("a bye" if n == 0 else str(n))


def _at(seq: list, i: int):
    return seq[i] if i < len(seq) else None


def _put(seq: list, i: int, v) -> None:
    """Round i's entry (0-based); rounds before it that have none stay `undefined`."""
    seq.extend([None] * (i + 1 - len(seq)))
    seq[i] = v


# --- what an imported tourney.js had that the console does not hold -------------------------------


def carried(text: str, source: str = FILE_NAME) -> dict:
    """From a tourney.js TSH wrote (read with jsliteral, never evaluated): its `config` (TSH's
    exported keys only), `esb`, `profile`, and per division its fields the console does not work
    out and per player `newr`, `photo`, `photomood`. {} when it is not TSH's."""
    try:
        data = jsliteral.parse(text, source)
    except jsliteral.JsLiteralError:
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict = {"divisions": {}}
    if isinstance(data.get("config"), dict):
        out["config"] = {k: data["config"][k] for k in CONFIG_KEYS if k in data["config"]}
        out["config_js"] = Written(js({k: out["config"].get(k, UNDEFINED) for k in CONFIG_KEYS}))
    for k in ("esb", "profile"):
        if k in data:
            out[k] = data[k]
    for d in data.get("divisions") if isinstance(data.get("divisions"), list) else ():
        if not isinstance(d, dict) or d.get("name") in (None, UNDEFINED):
            continue
        players = {}
        for p in d.get("players") if isinstance(d.get("players"), list) else ():
            if isinstance(p, dict) and isinstance(p.get("id"), int):
                players[p["id"]] = {k: p[k] for k in PLAYER_CARRIED if k in p}
        out["divisions"][str(d["name"])] = {"fields": {k: d[k] for k in DIVISION_CARRIED if k in d}, "players": players}
    return out


# --- the file -------------------------------------------------------------------------------------


def tourney_js(divisions: list[tsh.Division], options: dict | None = None, bases: dict[str, dict] | None = None) -> str:
    """`newt={...};` for `divisions` (live_divisions'). `options`: config.tsh's (`config KEY =
    VALUE`), of which TSH's exported keys are written; without config.tsh, the imported tourney.js's
    config. `bases`: carried() of each imported tourney.js, by its file name."""
    bases = bases or {}
    base = next((b for b in bases.values() if "config" in b), None)
    if options is not None:
        config = {k: options.get(k, UNDEFINED) for k in CONFIG_KEYS}
        max_rounds = config["max_rounds"]
    elif base is not None:
        config, max_rounds = base["config_js"], base["config"].get("max_rounds")
    else:
        config, max_rounds = {k: UNDEFINED for k in CONFIG_KEYS}, None
    first = next(iter(bases.values()), {})
    return "newt=" + js({
        "config": config,
        "divisions": [_division(d, _base_of(d, bases), max_rounds) for d in divisions],
        "esb": first.get("esb", ESB_DEFAULT),
        "profile": first.get("profile", UNDEFINED),
    }) + ";\n"


def _base_of(d: tsh.Division, bases: dict[str, dict]) -> dict:
    """The imported tourney.js this division came from (its `source`), if it did."""
    b = bases.get(PurePosixPath(d.source.replace("\\", "/")).name) or {}
    return b.get("divisions", {}).get(d.name, {})


def _division(d: tsh.Division, base: dict, max_rounds) -> dict:
    fields = base.get("fields", {})
    carried_players = base.get("players", {})
    top = max(d.players, default=0)
    players: list = [UNDEFINED]
    for n in range(1, top + 1):
        p = d.players.get(n)
        players.append(UNDEFINED if p is None else _player(p, carried_players.get(n, {})))
    most_scores = max((len(p.scores) for p in d.players.values()), default=0)
    if isinstance(max_rounds, int) and not isinstance(max_rounds, bool):
        maxr = max_rounds - 1
    else:
        maxr = fields.get("maxr", d.rounds - 1)
    return {**{k: fields.get(k, UNDEFINED) for k in DIVISION_CARRIED}, "maxr": maxr, "maxrp": most_scores - 1,
            "name": d.name, "players": players}


def _player(p: tsh.Player, extra: dict) -> dict:
    etc = {k: list(v) for k, v in p.etc.items()}
    etc.setdefault("p12", [])  # TSH's player always has its first/second vector, [] before round 1
    return {"etc": etc, "id": p.number, "name": p.name, "newr": extra.get("newr", UNDEFINED),
            "pairings": list(p.opponents), "photo": extra.get("photo", UNDEFINED),
            "photomood": extra.get("photomood", UNDEFINED), "rating": p.rating, "scores": list(p.scores)}
