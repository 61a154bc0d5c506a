"""A spare clock takes over a table's game (issue 19): the commands the director sends the spare
once it is online as that table, made from the table's last published state. Pure.

    new_game  with the game's rules (the state carries them) and its game time
    adjust    player 1 to exactly the state's remaining_ms (1.4.1(b): the director sets the time)
    adjust    player 2 likewise
    takeover  the spare's game neutralised, the side to move as the state has it (`to_move`, else
              `running`): the centre press resumes that player's time, as after a director's
              neutralise on the old clock (1.4.1(b), 1.4.3, 4.1)

Each carries `by` (the director) and a `reason` naming the table, the old device, its game and the
`seq` of its last input the state includes, so the spare's own journal (and `rackside clock replay`)
says where its times came from, and shows it neutralised.
"""

from __future__ import annotations

import json
import re

from rackside.game.clock import Rules
from rackside.game.rules_table import CLOCK_KEYS, mmss
from rackside.hall.wire import messages
from rackside.hall.wire.commands import NOTES

MAX_STATE_BYTES = 4096  # a state is ~400 bytes; a bigger one is not a clock's
REASON = "takeover of table {table} from device {old_device} ({game}, seq {seq}, state {sent_at})"
# the old game a takeover's reason names (REASON): the console binds the spare's game to that game's round
_CONTINUES = re.compile(r"^takeover of table \d+ from device .{1,80}? \(([A-Za-z0-9_.:-]{1,64}), seq \d+, state ")
PHASES = ("running", "neutralised")  # a game under way; before the first press or ended there is nothing to take over


class NothingToTakeOver(ValueError):
    """The table's last state holds no game under way (or is not a clock's state): nothing to take over."""


def commands(state_payload: bytes, *, table: int, old_device: str, new_device: str, stamp: str, by: str = "director") -> list[dict]:
    """The commands that put `new_device` where table `table`'s clock was; NothingToTakeOver saying
    why when the state holds no game under way (or is not a clock's state). `stamp` makes their ids
    this takeover's own (a clock answers an id once)."""
    if not state_payload or len(state_payload) > MAX_STATE_BYTES:
        raise NothingToTakeOver(f"table {table} has no state to take over")
    try:
        # the state as the console reads it (hall.wire.messages.STATE: types, ranges, both sides in order)
        s = messages.STATE.check(json.loads(state_payload))
    except ValueError:  # not JSON, or hall.wire.schema.Invalid
        raise NothingToTakeOver(f"table {table}'s last state is not a clock's state") from None
    players = {p["player"]: p["remaining_ms"] for p in s["players"]}
    phase, game, seq, rules = s["phase"], s["game"], s["seq"], s.get("rules") or {}
    to_move = s.get("to_move") or s.get("running")  # to_move: also while neutralised
    if phase not in PHASES:
        raise NothingToTakeOver(f"table {table}'s last state is in phase {phase!r}: no game under way to take over")
    if to_move not in (1, 2):
        raise NothingToTakeOver(f"table {table}'s last state does not say whose time runs")
    new_game: dict = {"cmd": "new_game"}
    if isinstance(rules.get("game_time_ms"), int):
        new_game["game_time"] = mmss(rules["game_time_ms"])
        extra = _clock_keys(rules)
        if extra:
            new_game["rules"] = extra
    else:
        new_game["game_time"] = mmss(Rules.game_time_ms)  # the state says none: WESPA's
    if s.get("event"):  # the spare's game is the old game's event's (issue 35)
        new_game["event"] = s["event"]
    reason = REASON.format(table=table, old_device=old_device, game=game, seq=seq, sent_at=s.get("sent_at"))[:NOTES["reason"]]
    out = [new_game] + [{"cmd": "adjust", "player": p, "remaining_ms": players[p]} for p in (1, 2)]
    out.append({"cmd": "takeover", "player": to_move})
    return [{**c, "id": f"takeover-{stamp}-{i}"[-64:], "by": by, "reason": reason} for i, c in enumerate(out)]



def _clock_keys(rules: dict) -> dict:
    """Every game rule the state carries (messages.STATE_RULES: the event's, issue 38) but the game
    time, as a new_game's `rules` names them ([clock] keys: a `_ms` duration as "M:SS")."""
    extra = {}
    for k in messages.STATE_RULES:
        key = k[:-3] if k.endswith("_ms") else k
        if k != "game_time_ms" and isinstance(rules.get(k), int):
            extra[key] = mmss(rules[k]) if CLOCK_KEYS[key][0] == "duration" else rules[k]
    return extra


def continued_game(reason: object) -> str | None:
    """The game a spare's takeover input continues (the old clock's game id its REASON names), or
    None for any other reason: the spare's journal continues that game, under its own id."""
    m = _CONTINUES.match(reason) if isinstance(reason, str) else None
    return m.group(1) if m else None
