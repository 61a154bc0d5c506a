"""Standings as TSH ranks them (pure): wins, losses and spread per round, sorted and ranked.

This is TSH 3.x's own arithmetic, read from its source (docs/public.md, "Standings"):

- `TSH::Division::Synch` (`lib/perl/TSH/Division.pm`) works out each player's cumulative wins,
  losses and spread by 0-based round: for each round with a score and a pairing, the spread is the
  player's score less the opponent's (a bye's opponent scores 0; `config oppless_spread` counts the
  score alone), held within `config spread_cap` when set, plus the `penalty` annotation of that round;
  the result is (1 + (mine <=> theirs)) / 2, counted as a win or loss when there is an opponent or a
  spread (a bye of 0 spread counts only with `config zero_byes_tie`; `config all_byes_tie` makes a
  positive bye half a win). A round with no pairing or no score carries the totals unchanged.
- `TSH::Player::SortByStanding` / `MakeStandingComparator` (`lib/perl/TSH/Player.pm`) sorts as of
  0-based round `sr0`: more wins first, then fewer losses, then (`config sum_before_spread`) the higher
  sum of scores, then more spread (`config spread_bad` reverses it), then the higher rating, then
  TSH's per-player pseudo-random number `rnd`, then the lower player number.
- `TSH::Division::ComputeRanks` drops inactive players (`off`, `SpliceInactive`) and gives players
  with the same wins, losses and spread the same rank (the first place of their group): 1, 2, 2, 4.

What is not reproduced, and why it changes no rank: TSH's `rnd` (from the `.t` line's text,
`TFile::ReadLine`) only orders players whose wins, losses, spread and rating are all equal, and
they share a rank, so they are listed here by player number; Thai seating (`config seats`,
`left_after`) is not supported. `tests/test_public.py` holds these ranks to TSH's own, the `rrank`
TSH wrote for every player and round into the real events' `tourney.js` (tests/data/tsh).
"""

from __future__ import annotations

from dataclasses import dataclass

from .tsh import Division, Player


@dataclass(frozen=True)
class Record:
    """One player's totals after a round, as TSH's Synch holds them (`rwins`, `rlosses`, `rspread`)."""

    number: int
    name: str
    rating: str
    wins: float
    losses: float
    spread: int
    sum: int
    games: int  # rounds with a score counted (TSH's nscores, byes included)


def _rating(p: Player) -> float:
    try:
        return float(p.rating.replace("+", "."))
    except ValueError:
        return 0.0


def _cap(value, caps, j: int):
    """A cap for 0-based round j: one number, or a list by round (its last entry after it), as TSH."""
    if isinstance(caps, list):
        return caps[j] if j < len(caps) else (caps[-1] if caps else None)
    return caps


def records(d: Division, options: dict | None = None) -> dict[int, list[Record]]:
    """Every player's cumulative Record after each 0-based round up to their last score (TSH's
    rwins/rlosses/rspread lists), by player number."""
    options = options or {}
    full_caps = options.get("spread_cap") or None
    oppless = bool(options.get("oppless_spread"))
    zero_byes_tie = bool(options.get("zero_byes_tie"))
    all_byes_tie = bool(options.get("all_byes_tie"))
    out: dict[int, list[Record]] = {}
    for n, p in d.players.items():
        wins = losses = 0.0
        spread = total = games = 0
        penalties = p.annotation("penalty")
        rows: list[Record] = []
        last = len(p.scores) - 1
        while last >= 0 and p.scores[last] is None:
            last -= 1
        for j in range(last + 1):
            mine = p.scores[j]
            opp = p.opponents[j] if j < len(p.opponents) else None
            if opp is not None and mine is not None:
                games += 1
                theirs = 0
                other = d.players.get(opp) if opp else None
                if other is not None and j < len(other.scores) and other.scores[j] is not None:
                    theirs = other.scores[j]
                this = mine if oppless else mine - theirs
                cap = _cap(this, full_caps, j) if full_caps else None
                if isinstance(cap, int) and not isinstance(cap, bool):
                    this = max(-cap, min(cap, this))
                if j < len(penalties) and penalties[j]:
                    this += penalties[j]
                spread += this
                total += mine
                result = (1 + ((mine > theirs) - (mine < theirs))) / 2
                if opp or this or zero_byes_tie:
                    wins += result
                    losses += 1 - result
                if not opp and all_byes_tie and this > 0:
                    wins -= 0.5
                    losses += 0.5
            rows.append(Record(n, p.name, p.rating, wins, losses, spread, total, games))
        out[n] = rows
    return out


def last_scored_round(d: Division) -> int:
    """The highest 0-based round any player has a score for (TSH's `maxs`); -1 before any."""
    return max((max((j for j, s in enumerate(p.scores) if s is not None), default=-1) for p in d.players.values()),
               default=-1)


def _at(rows: list[Record], p: Player, sr0: int) -> Record:
    """TSH's RoundWins(sr0) etc.: the round's totals, or the latest when the player has none that late."""
    if not rows:
        return Record(p.number, p.name, p.rating, 0.0, 0.0, 0, 0, 0)
    return rows[sr0] if sr0 < len(rows) else rows[-1]


def ranked(d: Division, sr0: int | None = None, options: dict | None = None,
           among: set[int] | None = None) -> list[dict]:
    """The division's standings as of 0-based round `sr0` (default: the last scored round), active
    players only (TSH's SpliceInactive; `among`: these players' numbers instead, as TSH's
    ComputeRanks ranked a player who was active then and withdrew later), each
    {rank, number, name, rating, wins, losses, spread, games}."""
    options = options or {}
    if sr0 is None:
        sr0 = last_scored_round(d)
    recs = records(d, options)
    spread_sign = -1 if options.get("spread_bad") else 1
    by_sum = bool(options.get("sum_before_spread"))
    active = [p for p in d.players.values() if (p.number in among if among is not None else p.active)]
    at = {p.number: _at(recs[p.number], p, sr0) for p in active}

    def key(p: Player):
        r = at[p.number]
        return (-r.wins, r.losses, -r.sum if by_sum else 0, -spread_sign * r.spread, -_rating(p), p.number)

    out = []
    last = None
    rank = 0
    for i, p in enumerate(sorted(active, key=key)):
        r = at[p.number]
        if sr0 < 0:  # before round 1: TSH ranks by rating (ComputeRanks compares ratings then)
            group = (p.rating,)
        else:
            group = (r.wins, r.losses, r.spread)
        if group != last:
            last, rank = group, i + 1
        out.append({"rank": rank, "number": p.number, "name": p.name, "rating": p.rating,
                    "wins": _whole(r.wins), "losses": _whole(r.losses), "spread": r.spread, "games": r.games})
    return out


def _whole(x: float):
    """A win count as TSH prints it: 3, or 2.5 after a tie."""
    return int(x) if x == int(x) else x
