"""TSH in: the players of a division, each one's table (board) for a round and who starts.

Parses TSH's `.t` division files and the `tourney.js` its JSON command writes
(docs/console.md, "TSH in"). A `.t` line is `NAME RATING OPP1 OPP2 ...; SCORE1 ...;` followed by
annotations `KEY VALUES...;` of which we use `board` (table per round) and `p12` (1 = this player
went first that round, 2 = second, 0 = bye). A line that cannot be read is skipped and reported
with its line number; the rest of the file still loads.

Clock sides: the console seats the player who starts on clock side 1 (documented in
docs/console.md); without `p12` the lower player number is side 1.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field


class TshError(ValueError):
    """A file that is not a TSH division file or tourney.js at all (refused whole)."""


@dataclass(frozen=True)
class Player:
    number: int  # position in the division (1-based)
    name: str
    rating: int
    opponents: tuple[int, ...]  # per round, 0 = bye
    boards: tuple[int, ...] = ()  # per round
    p12: tuple[int, ...] = ()  # per round: 1 first, 2 second, 0 bye


@dataclass
class Division:
    name: str
    players: dict[int, Player] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # "file:line: why"

    def pairings(self, round_: int) -> dict[int, tuple[Player, Player]]:
        """Table number -> (clock side 1, clock side 2) for `round_` (1-based)."""
        tables: dict[int, tuple[Player, Player]] = {}
        i = round_ - 1
        for p in self.players.values():
            if i >= len(p.opponents) or p.opponents[i] == 0 or i >= len(p.boards):
                continue
            opp = self.players.get(p.opponents[i])
            if opp is None or p.number > opp.number:  # each pair once, from its lower number
                continue
            first = _goes_first(p, opp, i)
            tables[p.boards[i]] = (p, opp) if first is p else (opp, p)
        return tables


def _goes_first(a: Player, b: Player, i: int) -> Player:
    if i < len(a.p12) and a.p12[i] in (1, 2):
        return a if a.p12[i] == 1 else b
    if i < len(b.p12) and b.p12[i] in (1, 2):
        return b if b.p12[i] == 1 else a
    return a


_INT = re.compile(r"^-?\d+$")


def parse_t(text: str, name: str = "a", source: str = "<t>") -> Division:
    """A `.t` file's text into a Division named `name` (TSH names divisions after the file)."""
    div = Division(name=name)
    number = 0
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        number += 1  # a player's number is their line's position among player lines
        parts = [part.strip() for part in line.split(";")]
        head = parts[0].split()
        # NAME may contain spaces (TSH writes "Surname, Given"): the rating is the first integer
        k = next((j for j, w in enumerate(head) if _INT.match(w)), None)
        if k is None or k == 0:
            div.problems.append(f"{source}:{lineno}: no name and rating; skipped")
            continue
        try:
            opponents = tuple(int(w) for w in head[k + 1 :])
            notes = {}
            for part in parts[2:]:
                words = part.split()
                if words:
                    notes[words[0]] = tuple(int(w) for w in words[1:] if _INT.match(w))
        except ValueError as e:
            div.problems.append(f"{source}:{lineno}: {e}; skipped")
            continue
        div.players[number] = Player(
            number=number,
            name=" ".join(head[:k]),
            rating=int(head[k]),
            opponents=opponents,
            boards=notes.get("board", ()),
            p12=notes.get("p12", ()),
        )
    if not div.players:
        raise TshError(f"{source}: no player lines: not a TSH .t file")
    return div


def parse_tourney_js(text: str, source: str = "<tourney.js>") -> list[Division]:
    """TSH's `newt={...};` into its divisions."""
    body = text.strip()
    if "=" in body.split("{", 1)[0]:
        body = body.split("=", 1)[1]
    body = body.strip().rstrip(";")
    try:
        data = json.loads(body)
        divisions = data["divisions"]
    except (ValueError, KeyError, TypeError) as e:
        raise TshError(f"{source}: not TSH's tourney.js ({e})") from None
    out = []
    for d in divisions:
        div = Division(name=str(d.get("name", "a")))
        for idx, p in enumerate(d.get("players") or []):
            if not p:
                continue
            try:
                etc = p.get("etc") or {}
                div.players[int(p.get("id", idx))] = Player(
                    number=int(p.get("id", idx)),
                    name=str(p["name"]),
                    rating=int(p.get("rating") or 0),
                    opponents=tuple(int(x) for x in p.get("pairings") or ()),
                    boards=tuple(int(x) for x in etc.get("board") or ()),
                    p12=tuple(int(x) for x in etc.get("p12") or ()),
                )
            except (KeyError, TypeError, ValueError) as e:
                div.problems.append(f"{source}: division {div.name} player {idx}: {e}; skipped")
        out.append(div)
    return out


def parse(text: str, source: str) -> list[Division]:
    """A `.t` file (one division, named after the file) or a `tourney.js` (all divisions), given
    its text and its file name or path `source`. Pure: the console reads the file (serve.py)."""
    base = source.replace("\\", "/").rpartition("/")[2]
    if base.endswith(".js") or text.lstrip().startswith("newt"):
        return parse_tourney_js(text, source)
    return [parse_t(text, name=base.rpartition(".")[0] or base, source=source)]
