"""TSH's score entry, checked the way TSH checks it: a model of its PAIR and Addscore commands
(TSH::Command::PAIR, TSH::Command::Addscore, 'scores' entry), for the conformance test of the
console's export. Pure; it reads nothing of Rackside's own export code.

What TSH does with the text, line by line:
- `pair P1 P2 ROUND DIVISION`: pairs P1 and P2 (0 = a bye) in ROUND (PlayerOrZero, PlayerOrZero,
  Round, Division);
- `a ROUND DIVISION`: enters add-score mode for that round and division; an empty line leaves it;
- in add-score mode, four numbers `PN1 PS1 PN2 PS2` are a game: both players must exist, be paired
  with each other in the round (CheckPairing), have no score yet that differs (ehass), and each score
  must be a whole number from -149 to `config max_score` (1499 when not set) (ebadscore);
- two numbers `PN SPREAD` are a bye or forfeit: the player must be paired with 0 (enotabye) and have
  no score yet.
"""

from __future__ import annotations

import re

GAME = re.compile(r"^([-+]?\d+) ([-+]?\d+) ([-+]?\d+) ([-+]?\d+)$")
BYE = re.compile(r"^(\d+) (-?\d+)$")  # TSH stores the spread as typed: a "+" would reach the .t file
PAIR = re.compile(r"^pair (\d+) (\d+) (\d+) (\S+)$")
ADD = re.compile(r"^a (\d+) (\S+)$")


def check(text: str, divisions: dict[str, dict[int, list]], max_score: int = 1499) -> list[str]:
    """Errors TSH would give for `text`, given each division's pairings (division -> player number
    -> list of opponents per round, 0 = bye). Empty when TSH accepts every line."""
    errors: list[str] = []
    pairings = {d: {p: list(opps) for p, opps in players.items()} for d, players in divisions.items()}
    scores: dict[tuple[str, int, int], int] = {}
    mode: tuple[str, int] | None = None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the last line's own end, not an empty line
    for n, line in enumerate(lines, start=1):
        where = f"line {n} {line!r}"
        if mode is None:
            if not line:
                continue
            if m := PAIR.match(line):
                p1, p2, rnd, div = int(m[1]), int(m[2]), int(m[3]), m[4]
                if div not in pairings:
                    errors.append(f"{where}: no division {div}")
                    continue
                for p, o in ((p1, p2), (p2, p1)):
                    if p == 0:
                        continue
                    if p not in pairings[div]:
                        errors.append(f"{where}: no player {p}")
                        continue
                    opps = pairings[div][p]
                    while len(opps) < rnd:
                        opps.append(None)
                    opps[rnd - 1] = o
                continue
            if m := ADD.match(line):
                mode = (m[2], int(m[1]))
                if mode[0] not in pairings:
                    errors.append(f"{where}: no division {mode[0]}")
                continue
            errors.append(f"{where}: not a TSH command")
            continue
        if not line:
            mode = None
            continue
        div, rnd = mode
        players = pairings.get(div, {})
        opp = lambda p: players[p][rnd - 1] if rnd - 1 < len(players[p]) else None  # noqa: E731
        if m := GAME.match(line):
            pn, ps = (int(m[1]), int(m[3])), (int(m[2]), int(m[4]))
            for p, s in zip(pn, ps):
                if p not in players:
                    errors.append(f"{where}: enosuchp {p}")
                elif not -149 <= s <= max_score:
                    errors.append(f"{where}: ebadscore {s}")
                elif scores.get((div, rnd, p), s) != s:
                    errors.append(f"{where}: ehass {p}")
            if all(p in players for p in pn) and not (opp(pn[0]) == pn[1] and opp(pn[1]) == pn[0]):
                errors.append(f"{where}: eanotopp {pn[0]} and {pn[1]} did not play each other in round {rnd}")
            for p, s in zip(pn, ps):
                scores[(div, rnd, p)] = s
        elif m := BYE.match(line):
            p, s = int(m[1]), int(m[2])
            if p not in players:
                errors.append(f"{where}: enosuchp {p}")
            elif opp(p) != 0:
                errors.append(f"{where}: enotabye {p} is not paired with a bye in round {rnd}")
            elif (div, rnd, p) in scores:
                errors.append(f"{where}: ehass {p}")
            scores[(div, rnd, p)] = s
        else:
            errors.append(f"{where}: eahuh (not PN1 PS1 PN2 PS2 nor PN SPREAD)")
    if mode is not None:
        errors.append("add-score mode is not left with an empty line")
    return errors
