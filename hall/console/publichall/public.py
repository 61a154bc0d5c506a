"""The public hall (pure): what players and the world may see, as JSON documents, from the console's state.

`view(hall)` turns a `Hall` (the values gathered on the console's event loop: the divisions with
the recorded results applied as TSH holds them, tshout.live_divisions; TSH's options; the round; the
seating of this round and the next, hallplan; every table's tile, hallstate.Table.tile) into a
dict of documents, file name -> JSON value:

- `hall.json`: the hall's name, the round, the divisions, the delay, and the
  page's own settings (how often it asks again, how long the hall screen shows a division, how many
  rows a hall-screen page has): the page reads every rule from here (tests/test_defined_once.py);
- `players.json`: every player, for "find my table": division, number, name, and this round's and
  the next round's table (when paired), opponent and who starts;
- `pairings.json`: this round's and the next round's games by table, with the recorded result;
- `standings.json`: each division's standings, ranked as TSH ranks them (standings.py), after the
  last round with a recorded score;
- `live.json`: when it was built, and every table TSH seated this round: its players by the side they
  sit at (checkin.on_sides), its clock's times (`remaining_ms` and `sent_at`, which the page ticks
  itself, at most `stale_s` past sent_at), whose turn it is, how it ended and who forfeited, whether
  its clock is offline and a challenge on, and the recorded result: what the director's tile derives
  its class, times and words from, with the same script (static/tilestate.js, docs/public.md "One
  truth on every screen").

What is never in them (docs/public.md, "What the public never sees"; tests/test_public.py checks
every document by key and by value against the director's snapshot): a challenge's words, per-word
results, verdict or station, a command, a device (a table's version, health or problems; a clock at
a table TSH did not seat), a clock's penalty points before the result is recorded, a result's note,
decision, reason or who recorded it, a session or a token. A side's time in overtime is shown as the
table's own display shows it (negative `remaining_ms`: the clock shows it to everyone at the table,
5.3), never its penalty.
Each document is built from an allow list of fields, never by removing fields from the director's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rackside.hall.wire import messages

from ..common import limits
from ..scoring import standings, tsh

# The page's settings (it reads them from hall.json: no rule is defined twice)
POLL_S = 5  # a page asks for what changed this often (a conditional request: 304 when nothing did)
CYCLE_S = 12  # the hall screen shows each division this long
SCREEN_ROWS = 12  # rows of a hall-screen page: at 3.5 % of the screen's height a letter (public.css), read from across the room
FILES = ("hall.json", "players.json", "pairings.json", "standings.json", "live.json")
# the page, served and written beside the JSON: clocktext.js and tilestate.js are the director's page's own
# (a time as m:ss; a table's class, times and words), so the two pages say the same (issue 35)
PAGE_FILES = ("index.html", "clocktext.js", "tilestate.js", "public.js", "public.css")


def stale_s(every_s: float) -> int:
    """How long past its sent_at the page ticks a running clock's state (then it holds the time): a
    clock sends its state at least every STATE_EVERY_S (twice that: a state lost on the way), the view
    is built at most every `every_s`, a page asks every POLL_S and a cache keeps an answer up to
    PUBLIC_MAX_AGE_S. A state older than that is a clock that stopped sending, whatever the reason:
    its time is not ticked on for ever, and no device status is published for it."""
    return int(2 * messages.STATE_EVERY_S + math.ceil(every_s) + POLL_S + limits.PUBLIC_MAX_AGE_S)


# The clock's rules the page needs to tick a time as the clock does (it stops at the forfeit line, 5.3.3)
LIVE_RULES = ("game_time_ms", "forfeit_overtime_ms")


@dataclass
class Hall:
    """What the public view is made of, gathered on the console's event loop (publicserve.gather)."""

    name: str
    round: int
    divisions: list[tsh.Division] = field(default_factory=list)  # with the recorded results (tshout.live_divisions)
    options: dict = field(default_factory=dict)  # config.tsh's `config` options (TSH's ranking reads some)
    seats: dict[int, dict[int, dict]] = field(default_factory=dict)  # round -> table -> hallplan seat (as_dict)
    tiles: list[dict] = field(default_factory=list)  # hallstate.Table.tile() of every known table
    built_at: str = ""  # the console's wall time the view is of (ISO 8601)
    delay_s: int = 0
    every_s: float = 1  # how often the view is built ([public] every_s, or longer with a delay): stale_s


def view(h: Hall) -> dict[str, object]:
    """The public documents of the hall `h` (file name -> JSON value)."""
    nxt = h.round + 1
    return {
        "hall.json": {"hall": h.name, "round": h.round, "divisions": [d.name for d in h.divisions], "delay_s": h.delay_s,
                      "page": page_settings(h.every_s)},
        "players.json": {"round": h.round, "players": players(h, h.round, nxt)},
        "pairings.json": {"rounds": [pairings(h, r) for r in (h.round, nxt) if h.seats.get(r) or byes(h, r)]},
        "standings.json": {"divisions": [division_standings(d, h.options) for d in h.divisions]},
        **live(h),
    }


def page_settings(every_s: float, files: tuple[str, ...] = FILES) -> dict:
    return {"poll_s": POLL_S, "cycle_s": CYCLE_S, "screen_rows": SCREEN_ROWS, "stale_s": stale_s(every_s), "files": list(files)}


def waiting(name: str, delay_s: int, every_s: float, back_at: str) -> dict:
    """hall.json while no view is yet `delay_s` old (a console just started: its delayed views were in
    memory): the hall's name, the delay and when the hall is shown again, nothing of it as it is now."""
    return {"hall": name, "round": None, "divisions": [], "delay_s": delay_s, "back_at": back_at,
            "page": page_settings(every_s, ("hall.json",)), "versions": {}}


def live(h: Hall) -> dict[str, object]:
    """live.json alone: what changes with every press (the rest changes with a result or a round)."""
    return {"live.json": {"round": h.round, "built_at": h.built_at, "delay_s": h.delay_s,
                          "rules": _rules(h.tiles), "tables": live_tables(h)}}


def _game(seat: dict, number: int) -> dict:
    i = seat["numbers"].index(number)
    return {"round": seat["round"], "table": seat["table"], "label": seat["label"], "first": i == 0,
            "opponent": {"number": seat["numbers"][1 - i], "name": seat["names"][1 - i]}}


def byes(h: Hall, rnd: int) -> dict[str, list[int]]:
    """The players of each division with a bye in round `rnd` (TSH's opponent 0)."""
    out = {}
    for d in h.divisions:
        _games, b, _problems = d.round_plan(rnd)
        if b:
            out[d.name] = b
    return out


def players(h: Hall, *rounds: int) -> list[dict]:
    """Every player with their game in each of `rounds` (None: not paired yet; a bye says so)."""
    where: dict[tuple[str, int, int], dict] = {}
    for rnd in rounds:
        for seat in h.seats.get(rnd, {}).values():
            for n in seat["numbers"]:
                where[(seat["division"], n, rnd)] = _game(seat, n)
        for division, numbers in byes(h, rnd).items():
            for n in numbers:
                # a forfeit is a bye in TSH's data once recorded (tshout): the seat says where it was
                where.setdefault((division, n, rnd), {"round": rnd, "bye": True})
    out = []
    for d in h.divisions:
        for p in sorted(d.players.values(), key=lambda p: p.number):
            games = [where.get((d.name, p.number, r)) for r in rounds]
            out.append({"division": d.name, "number": p.number, "name": p.name,
                        "now": games[0], "next": games[1] if len(games) > 1 else None})
    return out


def _recorded(tile: dict | None) -> list | None:
    """A recorded result's scores (the director confirmed them), nothing else of it."""
    final = (tile or {}).get("final")
    return list(final["scores"]) if final and isinstance(final.get("scores"), list) else None


def _recorded_for(seat: dict, tile: dict | None) -> list | None:
    """A recorded result's scores in the seat's order (TSH's, its starter first): the result holds
    them by side, with the players it was recorded for at each side (checkin.on_sides)."""
    scores = _recorded(tile)
    numbers = list(((tile or {}).get("final") or {}).get("numbers") or ())
    return scores[::-1] if scores and numbers == list(seat["numbers"])[::-1] else scores


def pairings(h: Hall, rnd: int) -> dict:
    tiles = {t["table"]: t for t in h.tiles}
    games = []
    for n, seat in sorted(h.seats.get(rnd, {}).items()):
        tile = tiles.get(n) if rnd == h.round else None
        games.append({"table": n, "label": seat["label"], "division": seat["division"], "board": seat["board"],
                      "players": [{"number": a, "name": b} for a, b in zip(seat["numbers"], seat["names"])],
                      "result": _recorded_for(seat, tile) if tile and tile.get("round") == rnd else None})
    return {"round": rnd, "games": games, "byes": byes(h, rnd)}


def division_standings(d: tsh.Division, options: dict) -> dict:
    sr0 = standings.last_scored_round(d)
    return {"division": d.name, "after_round": sr0 + 1, "rows": standings.ranked(d, sr0, options)}


def _rules(tiles: list[dict]) -> dict:
    """The clock core's rules a state carries (the first live state's; each table's own wins)."""
    for t in tiles:
        rules = ((t.get("state") or {}).get("rules")) or {}
        if rules:
            return {k: rules[k] for k in LIVE_RULES if k in rules}
    return {}


def _live_state(tile: dict) -> dict | None:
    """A clock's state as the public sees it, what the director's tile derives its class, times and
    words from (static/tilestate.js, on both pages): its phase, whose turn, how it ended, each side's
    time, whether it forfeited and when the state was sent; in overtime the time below zero, as the
    table's display shows it. Not its penalty points (the result's, shown once recorded). The state
    of the seat's earlier game (the clock plays another round's) is `frozen`: the page does not tick
    it; nor that of a clock that is offline (the table's `offline`)."""
    st = tile.get("state")
    if not isinstance(st, dict):
        return None
    rules = st.get("rules") or {}
    return {
        "phase": st.get("phase"),
        "running": st.get("running"),
        "to_move": st.get("to_move"),
        "ending": st.get("ending"),
        "sent_at": st.get("sent_at"),
        "frozen": bool(tile.get("earlier")),
        "players": [{"player": p.get("player"), "remaining_ms": p.get("remaining_ms"), "absent": bool(p.get("absent")),
                     "forfeit": bool(p.get("forfeit"))}
                    for p in st.get("players") or []],
        "rules": {k: rules[k] for k in LIVE_RULES if k in rules},
    }


def _clock_result(tile: dict) -> dict | None:
    """The clock's result as the tile's class reads it: how the game ended and who forfeited."""
    r = tile.get("result")
    if not isinstance(r, dict):
        return None
    return {"ending": r.get("ending"), "forfeits": [s for s in r.get("forfeits") or [] if s in (1, 2)]}


def _final(tile: dict, h: Hall) -> dict | None:
    """The recorded result (by side): its scores and who forfeited, nothing else of it."""
    final = tile.get("final")
    if not final or tile.get("round") not in (None, h.round) or not isinstance(final.get("scores"), list):
        return None
    return {"scores": list(final["scores"]), "forfeits": [s for s in final.get("forfeits") or [] if s in (1, 2)]}


def live_tables(h: Hall) -> list[dict]:
    """Every table TSH seated this round, in table order: its seat as the tile has it (hallstate: this
    round's TSH game at that table; the names in the sides they sit at, checkin.on_sides), so
    live.json needs no seating. Each carries what the director's tile shows of it (static/tilestate.js):
    whether its clock is offline (its times are then as of its last state, "offline since"), a
    challenge in progress (not its words or station), the clock's result (how it ended, who
    forfeited) and the recorded one. A table with a clock and no seat is not listed: it would say a
    device is there (the pairings are TSH's, public already)."""
    out = []
    for t in sorted(h.tiles, key=lambda t: t["table"]):
        if t.get("division") is None:
            continue
        final = _final(t, h)
        out.append({"table": t["table"], "label": t.get("label") or "", "division": t.get("division"),
                    "names": [str(x) for x in t.get("names") or ["", ""]],
                    "offline": t.get("status") == "offline", "challenge": bool(t.get("challenge")),
                    "held": t.get("held"),  # why the clock is held, the director's word (hallstate.held)
                    "state": _live_state(t), "clock_result": _clock_result(t), "final": final,
                    "result": final["scores"] if final else None})
    return out
