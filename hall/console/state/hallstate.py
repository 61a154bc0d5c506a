"""What the console knows about the hall, built only from the broker's messages (docs/hall.md).

A plain value-holder with no I/O and no threads: the MQTT bridge hands it each message on the
console's event loop, and it returns what changed, for the page. Every message is read by the v1
contract (contract.py) before it touches anything: a refused one is a problem shown for its device
(`problems` on its tile, or the hall's for a device the console does not know), never a tile.

A table is known once its own device has spoken on its own topics (the broker's ACL lets only that
device, or the director, write them), a TSH pairing puts a game on it, or the director records a
result for it (a slip with no clock record, `adopt`): a station naming another table, or a page
asking for one, adds no tile. Events are kept once per (table, game, seq), a game being its id as
bound at its table (a reused id is a new game: `_renewed`): QoS 1
may deliver twice, and a resend repeats what arrived; `Seqs` remembers each game's highest seq and
its gaps, not every event. Everything is bounded (limits.py).

A clock result belongs to one game: each clock game a table reports is bound to the round the
console was in when it first saw that game started (and the seat then, if TSH had seated one): `Bound`,
kept in the results store across restarts (a `bind` update, which app.Console keeps and no page
is sent). The binding is the one answer to "which game is this": a result is offered only for its
game's round, so a round-1 game still being played, or resent, after the director moved to round 2
never lands on round 2's players; and a tile shows the clock's current game only while that game is
bound to the tile's seat (or round). Otherwise (the director went back to an earlier round, or this
round's game has not begun) it shows the table's earlier game bound to it as it ended (`past`: each
earlier game's last state and result, by game id, in memory) and says which game the clock is on
(`clock_on`). A spare's game continues the old clock's (its `takeover` input names it:
hall.director.takeover.continued_game) and takes its binding. A game id the table had moved on
from, reported again as the current game later than the game that followed it (by the clocks' own
times), is a new game of another clock that numbers its games from its own journals (a spare, a
swapped clock): it is bound afresh.
"""

from __future__ import annotations

import json
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from rackside.game.clock import Rules
from rackside.hall.director.takeover import continued_game
from rackside.hall.wire import topics

from . import contract, health
from ..common import limits
from ..scoring import results
from .checkin import on_sides, recorded_sides
from .contract import Refused
from ..scoring.results import BY_TABLE


RESEND_ID = "resend-"  # the ids of the console's own resend requests
TWICE_KEY = "used_twice"  # the results store's setting: the tables' "used twice" marks (issue 36), kept across a restart

# The inputs that can neutralise a clock, and the word a neutralised clock is called by after each
# (issue 35): the one place a tile's "why is this clock stopped" is decided (`held`), for the
# director's page and the public page alike.
STOPS = {"neutralise": "neutralised", "call": "call", "takeover": "takeover"}
CHALLENGED = "challenge"  # a station judged a challenge of this table while its clock was neutralised
HELD = (CHALLENGED, *STOPS.values())  # every word `held` gives


def held(state: dict | None, challenge: dict | None, stop: tuple | None) -> str | None:
    """Why a table's clock is held, in the words every screen uses: "challenge" only for a
    station's challenge of this table (3.10): in progress, or judged while this neutralisation
    lasts (a station publishes once judged: until then the clock is just "neutralised");
    otherwise, while the clock is neutralised, what neutralised it (`stop`: the game, seq and
    input of the latest input of `STOPS` the table sent, or CHALLENGED): "call" (the director
    called from the table, 1.4.3), "takeover" (a spare continuing the game, docs/fleet.md) or
    "neutralised" (the centre button, the director's command or menu, a restart, or a stop the
    console has not seen). None: not held."""
    if challenge is not None:
        return CHALLENGED
    if not state or state.get("phase") != "neutralised":
        return None
    if stop is not None and stop[0] == state.get("game"):
        return STOPS.get(stop[2], stop[2])
    return STOPS["neutralise"]


@dataclass
class Game:
    """One game's events as the console has them: the highest seq, the seqs below it still missing
    (as [first, last] ranges, at most limits.MAX_GAP of them), and the highest seq the clock's state
    says exists."""

    high: int = 0
    missing: list = field(default_factory=list)
    known: int = 0
    result: bool = False
    ended: bool = False  # the clock's state says the game is over: its result is due
    # the seq of the game's signed slip (issue 27): the clock publishes it with the seq of the
    # signature's input event, which `accept` has taken already, so a slip is known by its own mark
    slip: int | None = None

    def accept(self, seq: int) -> bool:
        """True for an event not seen before (new, or filling a gap); False for a repeat."""
        self.known = max(self.known, seq)
        if seq > self.high:
            if seq > self.high + 1:
                self.missing.append([self.high + 1, seq - 1])
                del self.missing[:-limits.MAX_GAP]  # the oldest gaps are given up on
            self.high = seq
            return True
        for i, (a, b) in enumerate(self.missing):
            if a <= seq <= b:
                self.missing[i:i + 1] = [r for r in ([a, seq - 1], [seq + 1, b]) if r[0] <= r[1]]
                return True
        return False

    def first_missing(self) -> tuple[int, int | None] | None:
        """What to ask the clock for: the first gap ([first, last]), or everything after the last
        event the console has (last None: the result too) when the clock's state says there are
        more events, or that the game ended and no result has come."""
        if self.missing:
            return self.missing[0][0], self.missing[0][1]
        if self.known > self.high or (self.ended and not self.result):
            return self.high + 1, None
        return None


class Seqs:
    """Each table's games (the latest GAMES_REMEMBERED), for de-duplication and gap detection."""

    def __init__(self) -> None:
        self.games: OrderedDict[str, Game] = OrderedDict()

    def game(self, name: str) -> Game:
        g = self.games.get(name)
        if g is None:
            g = self.games[name] = Game()
            while len(self.games) > limits.GAMES_REMEMBERED:
                self.games.popitem(last=False)
        self.games.move_to_end(name)
        return g


@dataclass(frozen=True)
class Bound:
    """The round a clock game belongs to, the seat it was played at if TSH had seated one when the
    console first saw it (None: any seat of that round), and since when (the clock's wall time)."""

    round: int
    seat: dict | None = None
    since: str | None = None

    def offered_for(self, seat: dict | None, round_now: int) -> bool:
        """Is this game the one of `seat` (or, with no seat, of the hall's round `round_now`)?"""
        if seat is None:
            return self.round == round_now
        return self.round == seat["round"] and (self.seat is None or seat_key(self.seat) == seat_key(seat))


def _moment(iso: str | None) -> datetime | None:
    if not iso:
        return None
    try:
        t = datetime.fromisoformat(iso)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


# A clock repeats its state every 10 s with nothing new but its times as of then
# (hall/device/clock_output.STATE_EVERY_NS), which a page works out itself from the state it has: a
# tile that repeats the one a page was last sent is not sent again (issue 28.4: of about 57 events
# a second at 300 tables, 30 were such repeats, each read by every page). A repeat is the same tile
# in every field but the state's `sent_at` and the ticking sides' `remaining_ms`, those ticked on by
# the time between (within REPEAT_SLACK_MS): a time set, a clock's jump or anything else is sent.
REPEAT_SLACK_MS = 100  # a tenth of the second a page shows: a repeat's times differ from the page's by less


def tile_look(tile: dict) -> tuple[str, datetime | None, tuple]:
    """A tile as a page draws it apart from its ticking times (its JSON, the state's moment and
    times left out), the state's moment, and each side's (remaining ms, ticking) then."""
    st = tile.get("state")
    if not isinstance(st, dict) or not isinstance(st.get("players"), list):
        return json.dumps(tile, sort_keys=True, default=str), None, ()
    players = [p for p in st["players"] if isinstance(p, dict)]
    phase, running = st.get("phase"), st.get("running")
    times = tuple((p.get("remaining_ms"), (phase == "running" and running == p.get("player")) or (phase == "late" and p.get("absent") is True))
                  for p in players)
    rest = {**tile, "state": {**st, "sent_at": None, "players": [{**p, "remaining_ms": None} for p in players]}}
    return json.dumps(rest, sort_keys=True, default=str), _moment(st.get("sent_at")), times


def repeats(before: tuple | None, look: tuple) -> bool:
    """True when the tile of `look` tells a page that was sent `before` nothing new (tile_look)."""
    if before is None or before[0] != look[0]:
        return False
    if not look[2]:
        return True  # no state, or one with no times: the very same tile
    if before[1] is None or look[1] is None or len(before[2]) != len(look[2]):
        return False
    elapsed_ms = (look[1] - before[1]).total_seconds() * 1000
    for (was, ticking), (now, _) in zip(before[2], look[2]):
        if not (isinstance(was, (int, float)) and isinstance(now, (int, float))):
            return False
        if abs((was - elapsed_ms if ticking else was) - now) > REPEAT_SLACK_MS:
            return False
    return True


@dataclass
class Table:
    n: int
    status: str | None = None  # "online" / "offline" (the Last Will)
    state: dict | None = None  # the retained snapshot, as checked
    seat: dict | None = None  # this round's game here (hallplan.Seat.as_dict): division, label, players
    challenge: dict | None = None  # a station's challenge in progress for this table
    stop: tuple | None = None  # (game, seq, input) of the latest input of STOPS: what `held` names
    result: dict | None = None  # the clock's result event of its current game, once the game ends
    round_now: int = 1  # the hall's round (what a result is offered for when no TSH game is seated)
    bound: OrderedDict = field(default_factory=OrderedDict)  # clock game id -> Bound, latest last (GAMES_BOUND)
    final: dict | None = None  # the confirmed result of the seat's game, from the results store
    # the table's earlier games as they ended, by clock game id: {"game", "state", "result"} (the latest
    # GAMES_REMEMBERED); their binding says which round's tile shows them, not the clock's current game
    past: OrderedDict = field(default_factory=OrderedDict)
    history: deque = field(default_factory=lambda: deque(maxlen=limits.HISTORY))
    problems: deque = field(default_factory=lambda: deque(maxlen=limits.PROBLEMS_PER_DEVICE))
    seqs: Seqs = field(default_factory=Seqs)
    # the device's health, from its retained status (hall.wire.health), and its named problems
    # under the director's thresholds (console/state/health.py)
    health: dict | None = None
    version: str | None = None
    takes: tuple = ()  # the later command fields its status says it takes (hall.wire.commands.LATER_FIELDS)
    health_problems: list = field(default_factory=list)
    # issue 36: the device identity used by two connections (a copied card beside the clock), noticed in
    # one of its games: {"game", "why"}; its slips of that game are held for the director (paperless.py)
    twice: dict | None = None
    went_offline: bool = False  # its Last Will (or its own "offline") came while it was online
    # clock games not this event's (issue 35): game id -> why, the latest GAMES_BOUND; their states,
    # events and results are not shown, kept or offered
    foreign: OrderedDict = field(default_factory=OrderedDict)

    @property
    def names(self) -> tuple[str, str]:
        return tuple(self.seat["names"]) if self.seat else ("", "")

    @property
    def numbers(self) -> tuple[int | None, int | None]:  # TSH player numbers, clock side 1 and 2
        return tuple(self.seat["numbers"]) if self.seat else (None, None)

    def current_result(self) -> dict | None:
        """The clock's result if its game is bound to this seat's game here (not a game of another
        division or round that was seated here before, or is still being played); for a seat whose
        game the clock has left, that game's result as it came (`earlier`)."""
        earlier = self.earlier()
        if earlier is not None:
            return earlier.get("result")
        if self.result is None:
            return None
        b = self.bound.get(self.result["game"])
        return self.result if b is not None and b.offered_for(self.seat, self.round_now) else None

    def withheld(self) -> str:
        """Why the clock's result is not offered here ("" when it is, or there is none)."""
        b = None if self.result is None else self.bound.get(self.result["game"])
        if self.result is None or self.current_result() is not None:
            return ""
        if b is None:
            return f"the clock's result here is of its game {self.result['game']}, which the console cannot place in a round"
        if self.seat is not None and b.round == self.seat["round"] and b.seat is not None:
            return (f"the clock's result here is of another game of round {b.round} ({' v '.join(b.seat['names'])}, "
                    "seated here before the TSH files changed)")
        return (f"the clock's result here is of round {b.round}'s game ({self.result['game']}): "
                f"record it with round {b.round} on screen")

    def bind(self, game: str, b: Bound) -> None:
        Table.bind_in(self.bound, game, b)

    @staticmethod
    def bind_in(bound: OrderedDict, game: str, b: Bound) -> None:
        bound.pop(game, None)
        bound[game] = b
        while len(bound) > limits.GAMES_BOUND:
            bound.popitem(last=False)

    def moved_on_from(self, game: str, at: str | None) -> bool:
        """`game` is bound, a later game was bound after it, and `at` is after that game began: the
        id is being used again for a new game (another clock's numbering)."""
        if game not in self.bound or next(reversed(self.bound)) == game:
            return False
        now = _moment(at)
        names = list(self.bound)
        later = [_moment(self.bound[g].since) for g in names[names.index(game) + 1:]]
        return now is not None and any(t is not None and now > t for t in later)

    def playing(self) -> Bound | None:
        """The binding of the clock's current game (None: none yet, or a new game not started)."""
        return None if self.state is None else self.bound.get(self.state["game"])

    def earlier(self) -> dict | None:
        """None while the clock's current game is this seat's (or this round's, with no TSH game),
        or is not yet bound to any (a new game waiting to start is the round's next); when the clock
        plays another round's game (the director went back to an earlier round, or this round's game
        has not begun), the latest of the table's earlier games bound to this one, as the console
        last had it ({} if it has none)."""
        b = self.playing()
        if b is None or b.offered_for(self.seat, self.round_now):
            return None
        for key, p in reversed(self.past.items()):
            mine = self.bound.get(key) if isinstance(key, str) else p["bound"]  # (id, since): a reused id's
            if mine is not None and mine.offered_for(self.seat, self.round_now):
                return p
        return {}

    def rebound(self, game: str) -> None:
        """`game`'s id now names a new game (Table.moved_on_from): the earlier game kept under it
        stays with its own binding, under (id, since)."""
        p, b = self.past.pop(game, None), self.bound.get(game)
        if p is not None and b is not None:
            self.past[(game, b.since)] = {**p, "bound": b}
            self.past.move_to_end((game, b.since), last=False)  # older than any kept since

    def keep(self, game: str, **what) -> None:
        """Keep `what` (its last "state", its "result") of the table's earlier game `game`; the
        latest GAMES_REMEMBERED games. A result already kept is not replaced."""
        p = self.past.pop(game, None) or {"game": game, "state": None, "result": None}
        for k, v in what.items():
            if v is not None and not (k == "result" and p["result"] is not None):
                p[k] = v
        self.past[game] = p
        while len(self.past) > limits.GAMES_REMEMBERED:
            self.past.popitem(last=False)

    def game_began(self, game: str) -> None:
        """The clock's current game is now `game`: the one before, and a result of another game, are
        kept with their own game, as they ended (a result that came before any state stays, if it is
        this game's)."""
        if self.state is not None and self.state["game"] != game:
            self.keep(self.state["game"], state=self.state)
        if self.result is not None and self.result["game"] != game:
            self.keep(self.result["game"], result=self.result)
            self.result = None

    def tile(self) -> dict:
        """What a tile needs; the page derives the live times and the tile's class itself."""
        seat = self.seat or {}
        earlier = self.earlier()
        playing = self.playing()
        clock_on = None if earlier is None else {"division": (playing.seat or {}).get("division"), "round": playing.round}
        # an earlier game's last state is shown as it was: the page does not tick it
        state = self.state if earlier is None else earlier.get("state")
        return {
            "table": self.n,
            "status": self.status,
            "state": state,
            "held": held(state, self.challenge, self.stop),  # why the clock is stopped: the words of every screen
            "earlier": earlier is not None,
            "clock_on": clock_on,  # the game the clock plays instead (division, round)
            # by side: as recorded (a check-in in the clock's game says it too: paperless.in_checkin_order)
            "names": list(on_sides(self.seat, recorded_sides(self.final))["names"]) if self.seat else list(self.names),
            "division": seat.get("division"),
            "label": seat.get("label"),
            "tsh_table": seat.get("tsh_table", ""),
            "round": seat.get("round"),
            "challenge": None if self.challenge is None else _public_challenge(self.challenge),
            "result": self.current_result(),
            "final": self.final,
            "problems": list(self.problems),
            "health": self.health,
            "health_problems": list(self.health_problems),
            "version": self.version or (self.state or {}).get("version"),
            # issue 36: its identity used twice in the game it is on (a held slip of it says so after)
            "twice": self.twice if self.twice is not None and self.twice["game"] == (self.state or {}).get("game") else None,
        }

    def used_twice(self, game: str, why: str) -> list:
        """Mark the table: its identity was used by two connections in `game` (the first why is kept)."""
        if self.twice is not None and self.twice["game"] == game:
            return []
        self.twice = {"game": game, "why": why}
        return [("twice", {"table": self.n, **self.twice})]


def _sent_after(state: dict, latest: dict) -> bool:
    """Whether `state` was sent after `latest` (by their `sent_at`; False when either is unreadable)."""
    a, b = _moment(state.get("sent_at")), _moment(latest.get("sent_at"))
    return a is not None and b is not None and a > b


def _result_key(r: dict) -> tuple:
    """What two results of one game must share to be the same clock's (a resend's wall time may differ)."""
    return (r.get("ending"), tuple(r.get("forfeits") or ()), tuple(p.get("penalty") for p in r.get("players") or []))


def seat_key(seat: dict | None) -> tuple | None:
    """A game's identity: division, round and the two TSH player numbers (the results store's key)."""
    if not seat:
        return None
    return (seat["division"], seat["round"], tuple(sorted(seat["numbers"])))


def table_key(round_: int, n: int) -> tuple:
    """A game with no TSH players (recorded by table): the round and the table, never a seat_key."""
    return (BY_TABLE, round_, ("table", n))


def _insert_in_order(history: deque, event: dict) -> None:
    """Put an event that fills a gap before the first later input of its game (the history is in
    arrival order, and a gap's events arrive after the ones that followed them)."""
    at = next((i for i, e in enumerate(history)
               if e.get("kind") == "input" and e.get("game") == event["game"] and e.get("seq", 0) > event["seq"]), len(history))
    if len(history) == history.maxlen:
        if at == 0:
            return  # older than anything kept
        history.popleft()
        at -= 1
    history.insert(at, event)


def _public_challenge(c: dict) -> dict:
    """A challenge without per-word results: what the feed and tiles carry."""
    return {k: v for k, v in c.items() if k != "word_results"}


@dataclass
class Station:
    status: str | None = None
    problems: deque = field(default_factory=lambda: deque(maxlen=limits.PROBLEMS_PER_DEVICE))
    health: dict | None = None
    version: str | None = None
    takes: tuple = ()
    health_problems: list = field(default_factory=list)


@dataclass
class Round:
    division: str = ""  # the division on screen; "" shows every division
    number: int = 1
    start: float | None = None  # scheduled start, wall-clock epoch seconds
    late_after_s: int = 300  # a table not started this long after the start is an exception
    game_time_ms: int = Rules.game_time_ms

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class HallState:
    def __init__(self, hall: str) -> None:
        self.event = ""  # the event the console serves (issue 35; serve.make_console): "" none, every game its own
        self.event_since: datetime | None = None  # when it began (its store's first opening)
        self.hall = hall
        self.tables: dict[int, Table] = {}
        self.stations: dict[str, Station] = {}
        self.feed: deque = deque(maxlen=limits.FEED)
        self.challenges: OrderedDict[str, dict] = OrderedDict()  # "station/id" -> full challenge (with per-word results)
        self.round = Round()
        self.pending: OrderedDict[str, dict] = OrderedDict()  # command id -> command, until its ack
        self.problems: deque = deque(maxlen=limits.PROBLEMS)  # the hall's: devices the console does not know
        self.table_finals: dict[int, dict] = {}  # the round's results recorded by table (no TSH game), by table
        # each table's clock games -> Bound (the table's own `bound`), GAMES_BOUND a table, MAX_TABLE tables
        self.bound: dict[int, OrderedDict] = {}
        self.thresholds = health.defaults()  # the director's health thresholds (console/state/health.py)
        # issue 36's marks (Table.twice) kept from before a restart, of tables not yet known again: at most MAX_TABLE
        self.twice_kept: dict[int, dict] = {}

    def table(self, n: int) -> Table:
        """The table, made known (its own device spoke, or a pairing puts a game on it)."""
        t = self.tables.get(n)
        if t is None:
            t = self.tables[n] = self.new_table(n)
        return t

    def new_table(self, n: int) -> Table:
        """Table `n` as the console would know it, not yet known (a slip's table until recorded: `adopt`)."""
        return Table(n, final=self.table_finals.get(n), round_now=self.round.number,
                     bound=self.bound.setdefault(n, OrderedDict()), twice=self.twice_kept.pop(n, None))

    def adopt(self, t: Table) -> None:
        """A table the director recorded a slip for (no clock, no TSH game): known from now on."""
        if 1 <= t.n <= limits.MAX_TABLE:
            self.tables.setdefault(t.n, t)

    # --- which round each clock game belongs to -------------------------------------------------

    def restore_bindings(self, rows) -> None:
        """The bindings the results store kept (table, game, round, seat, since), oldest first."""
        for n, game, rnd, seat, since in rows:  # kept apart until the table is known (no tile for them)
            if 1 <= n <= limits.MAX_TABLE:
                Table.bind_in(self.bound.setdefault(n, OrderedDict()), game, Bound(rnd, seat, since))

    def twice_rows(self) -> list[dict]:
        """Every table's "used twice" mark (issue 36), to keep across a restart: [{"table", "game", "why"}]."""
        marks = {**self.twice_kept, **{n: t.twice for n, t in self.tables.items() if t.twice is not None}}
        return [{"table": n, **marks[n]} for n in sorted(marks)]

    def restore_twice(self, rows) -> list[str]:
        """The marks twice_rows kept; what cannot be read is said (one line a row) and left out."""
        said = []
        for r in rows if isinstance(rows, list) else [rows]:
            n = r.get("table") if isinstance(r, dict) else None
            if not (isinstance(n, int) and 1 <= n <= limits.MAX_TABLE and isinstance(r.get("game"), str)
                    and isinstance(r.get("why"), str)):
                said.append(f"a kept 'used twice' mark {str(r)[:80]!r} is not read: a table from 1 to {limits.MAX_TABLE}, its game and why")
                continue
            mark = {"game": r["game"][:64], "why": r["why"][:limits.TWICE_WHY_CHARS]}
            if n in self.tables:
                self.tables[n].twice = mark
            else:
                self.twice_kept[n] = mark
        return said

    def _bind(self, t: Table, game: str, since: str | None, b: Bound | None = None) -> list:
        """Bind `game` to `b`, or to this round's game at `t` (the round the console is in)."""
        if b is None:
            seat = t.seat if t.seat and t.seat.get("round") == self.round.number else None
            b = Bound(self.round.number, seat, since)
        t.bind(game, b)
        return [("bind", {"table": t.n, "game": game, "round": b.round, "seat": b.seat, "since": b.since})]

    def _bind_seen(self, t: Table, state: dict) -> list:
        """A game the table reports as its current one (its state), once started (an input: a
        new game waiting in setup may be the next round's, started before the director moves the
        console on): bound the first time, or afresh when its id comes back after the table had
        moved on (Table.moved_on_from)."""
        game, at = state["game"], state["sent_at"]
        if state["seq"] == 0 and state["phase"] == "setup":
            return []
        if game not in t.bound:
            return self._bind(t, game, at)
        return self._renewed(t, game, at)

    def _renewed(self, t: Table, game: str, at: str | None) -> list:
        """A game id the table had moved on from, reported again later than the game that followed
        it (Table.moved_on_from: another clock's numbering, a spare's): a new game, bound afresh, whose
        seqs, slip and result are its own. A game's identity is the table, its id and its binding,
        never the id alone: the earlier game's highest seq would drop the new one's events as
        repeats, its slip's seq pass the new slip as a redelivery, its result call the new result a
        second device's, and its "used twice" mark hold the new game's slips."""
        if not t.moved_on_from(game, at):
            return []
        t.rebound(game)
        t.seqs.games.pop(game, None)
        if t.stop is not None and t.stop[0] == game:
            t.stop = None
        if t.twice is not None and t.twice["game"] == game:
            t.twice = None
        return self._bind(t, game, at)

    # --- messages in ------------------------------------------------------------------------

    def on_message(self, topic: str, payload: bytes) -> list[tuple[str, Any]]:
        """Fold one message in; return the page updates it causes as (kind, data) pairs."""
        where = topics.parse(topic)
        if where is None or where[0] != self.hall:
            return []
        _, kind, ident, leaf = where
        if kind == "table":
            n = int(ident) if ident.isdigit() and ident[0] != "0" and len(ident) <= 4 else 0
            if not 1 <= n <= limits.MAX_TABLE:
                return self.problem(None, f"{topic}: table {ident[:8]!r}: allowed are 1 to {limits.MAX_TABLE}")
            if leaf == "cmd":
                return []  # the director's own commands: history records them when sent
            try:
                return self._table_message(n, leaf, contract.read(leaf, payload))
            except Refused as e:
                return self.problem(("table", n), f"{leaf}: {e}")
        if kind == "station":
            try:
                topics.check_name("station", ident)
            except ValueError:
                return self.problem(None, f"station {ident[:50]!r}: not a station's name")
            if ident not in self.stations and len(self.stations) >= limits.MAX_STATIONS:
                return self.problem(None, f"station {ident}: more than {limits.MAX_STATIONS} stations")
            try:
                return self._station_message(ident, leaf, contract.read(leaf, payload))
            except Refused as e:
                return self.problem(("station", ident), f"{leaf}: {e}")
        return []

    def problem(self, device: tuple | None, why: str) -> list:
        """A refused message, shown for its device (or the hall's, for one not known)."""
        if device is not None and device[0] == "table" and device[1] in self.tables:
            t = self.tables[device[1]]
            t.problems.append(why)
            return [("table", t.tile())]
        if device is not None and device[0] == "station":
            s = self.stations.setdefault(device[1], Station())
            s.problems.append(why)
            return [("station", self.station_view(device[1]))]
        who = f"table {device[1]}: " if device else ""
        self.problems.append(who + why)
        return [("problem", who + why)]

    def _table_message(self, n: int, leaf: str, data: Any) -> list:
        t = self.table(n)  # its own device spoke (the ACL): a known table
        if leaf == "status":
            t.went_offline = data["status"] == "offline" and (t.went_offline or t.status == "online")
            self._status(t, data)
            return [("table", t.tile())]
        if data.get("game") in t.foreign:
            if not (self.event and data.get("event") == self.event):
                return []  # another event's game, or one the hall did not start for this event (issue 35)
            # game ids are each clock's own numbering: this event's game (a spare's, a moved clock's)
            # under the id another event's game had at this table is this event's, never dropped
            why = t.foreign.pop(data["game"])
            kept = [p for p in t.problems if not p.startswith(why)]
            t.problems.clear()
            t.problems.extend(kept)
        if (leaf == "result" or (leaf == "event" and data["kind"] == "result")) and self._foreign(t, data, data.get("at")):
            return [("table", t.tile())]  # a retained result of another event's game may come before its state
        if leaf == "state" and self._foreign(t, data, data["sent_at"]):
            return [("table", t.tile())]
        if leaf == "event" and t.went_offline and t.state is not None:
            # a clock publishes "online" on every connect before anything else (hall.net.link); an event
            # (never retained) after its Last Will comes from a connection that took its client id over
            mark = t.used_twice(t.state["game"], f"table {t.n}'s client id was taken over: the broker closed the clock's "
                                f"connection (its Last Will) and another sent {data['kind']} {data['seq']}")
            return mark + ([("table", t.tile())] if mark else []) + self._table_message_checked(t, leaf, data)
        return self._table_message_checked(t, leaf, data)

    def _table_message_checked(self, t: Table, leaf: str, data: Any) -> list:
        n = t.n
        if leaf == "state":
            old = t.state or {}
            if old.get("game") == data["game"] and data["seq"] < old.get("seq", 0):
                if not _sent_after(data, old):
                    # an older snapshot delivered late: QoS 1 brings a state again (paho re-sends the
                    # unacknowledged after a reconnect, the broker to a console that reconnects) and a
                    # broker restarted from its autosave gives its older retained state
                    return []
                # sent after the latest yet older: one clock's states go out in order, so two clocks publish as this table
                mark = t.used_twice(data["game"], f"table {n}'s state of game {data['game']} jumped back from seq "
                                    f"{old.get('seq')} to {data['seq']}: two devices publish as this table")
                return mark + ([("table", t.tile())] if mark else [])
            bind = self._bind_seen(t, data)
            if old.get("game") != data["game"]:
                t.game_began(data["game"])  # a new game on this table (or the first the console sees)
            t.state = data
            g = t.seqs.game(data["game"])
            g.known = max(g.known, data["seq"])
            g.ended = g.ended or data["phase"] == "ended"
            return bind + [("table", t.tile())]
        if leaf == "event" and data["kind"] == "input":
            renewed = self._renewed(t, data["game"], data.get("at"))  # its first input may come before its state
            g = t.seqs.game(data["game"])
            filling = data["seq"] < g.high
            if not g.accept(data["seq"]):
                return renewed
            if filling:
                _insert_in_order(t.history, data)  # a resent event goes back where it belongs
            else:
                t.history.append(data)
            bind = renewed + self._bind_unseen(t, data)
            was_held, stop = held(t.state, t.challenge, t.stop), t.stop
            if data["input"] in STOPS and (stop is None or stop[0] != data["game"] or data["seq"] > stop[1]):
                t.stop = (data["game"], data["seq"], data["input"])
            old_game = continued_game(data.get("reason")) if data["input"] == "takeover" else None
            if old_game is not None and old_game in t.bound:  # a spare's game continues the old clock's
                was, mine = t.bound[old_game], t.bound.get(data["game"])
                # the old game's round and seat, dated from the spare's own game (the old clock's late
                # states are older: they do not make it look like a new game)
                since = mine.since if mine is not None else data.get("at")
                bind += self._bind(t, data["game"], since, Bound(was.round, was.seat, since))
                return bind + [("event", {"table": n, "event": data}), ("table", t.tile())]
            # a stop seen after the state it made: the tile's word changes (`held`); nothing else is sent again
            tile = [("table", t.tile())] if held(t.state, t.challenge, t.stop) != was_held else []
            return bind + [("event", {"table": n, "event": data})] + tile
        if leaf == "event" and data["kind"] == "slip":  # the signed result (issue 27): paperless.py reads it
            g = t.seqs.game(data["game"])
            if g.slip == data["seq"]:  # a redelivery (a resend, the outbox after a restart): answered
                return [("slip", {"table": n, "slip": data})]  # again (paperless.py), not kept twice
            g.slip = data["seq"]
            t.history.append(data)
            why = self._slip_out_of_turn(t, data)
            mark = t.used_twice(data["game"], why) if why else []
            return mark + [("slip", {"table": n, "slip": data}), ("event", {"table": n, "event": data})] \
                + ([("table", t.tile())] if mark else [])
        if leaf in ("event", "result"):  # a result: on the event topic, and retained on its own
            g = t.seqs.game(data["game"])
            if g.result:
                known = next((r for r in (t.result, (t.past.get(data["game"]) or {}).get("result"))
                              if r is not None and r["game"] == data["game"]), None)
                if known is not None and _result_key(known) != _result_key(data):
                    mark = t.used_twice(data["game"], f"table {n} sent two different results of game {data['game']} "
                                        "(its clock's, and another device's)")
                    return mark + ([("table", t.tile())] if mark else [])
                return []
            g.result = True
            bind = self._bind_unseen(t, data)
            if (t.state or {}).get("game") in (None, data["game"]):
                t.result = data  # the current game's: offered for the round its game is bound to
            else:  # a game the clock has left (a resend): kept with that game, for its round
                t.keep(data["game"], result=data)
            t.history.append(data)
            return bind + [("event", {"table": n, "event": data}), ("table", t.tile())]
        if leaf == "ack":
            if str(data["id"]).startswith(RESEND_ID):
                # the console's own request for missing events: what it brings is the history; the
                # ack only tells the console whether to ask again soon
                return [("resend_ack", {"table": n, "ok": data["ok"]})]
            cmd = self.pending.pop(str(data["id"]), None)
            t.history.append({**data, "kind": "ack", "command": cmd})
            return [("ack", {"table": n, "ack": data, "command": cmd})]
        return []

    @staticmethod
    def _slip_out_of_turn(t: Table, slip: dict) -> str | None:
        """Why a slip cannot be the table's own clock's (None: it can): a clock signs after the game's
        end, and publishes the slip with the seq of its second signature's input event, which it
        publishes first (firmware.slip_session; a resend keeps that order)."""
        st = t.state or {}
        if st.get("game") == slip["game"] and st.get("phase") != "ended":
            return (f"a slip of game {slip['game']} came while table {t.n}'s clock shows it {st.get('phase')} "
                    f"(seq {st.get('seq')}): a clock signs after the end")
        signed = next((e for e in reversed(t.history) if e.get("kind") == "input" and e.get("game") == slip["game"]
                       and e.get("seq") == slip["seq"]), None)
        if signed is None or signed.get("input") != "slip_sign":
            return (f"the slip's seq {slip['seq']} does not continue table {t.n}'s own sequence (the clock's seq "
                    f"{slip['seq']} is {'not known' if signed is None else signed.get('input')}, not its signature)")
        return None

    def _foreign(self, t: Table, state: dict, sent_at: str | None) -> bool:
        """Whether a state's (or a result's) game is not this event's (issue 35): a game the hall started for another
        event (its `event`), a game played stand-alone (`alone`: a practice game), or one the hall
        did not start for an event ("": the clock's own) whose state was sent before this event
        began (a retained state of the last event's). A game bound to this event, the tile's game
        already, a state that says no event (an older clock) or a console with no event are this
        event's, and so is the clock's own game of a clock that says its time is not synchronised (a Pi
        without a real-time clock starts from its last saved time, before the event's: its game
        would stay hidden until its clock synced). A foreign game is named once in the tile's problems and never shown."""
        game, ev = state["game"], state.get("event")
        if ev is None or not self.event or ev == self.event or game in t.bound or (t.state or {}).get("game") == game:
            # (a result of the tile's game, or of one bound here, is this event's as its game is)
            return False
        sent = _moment(sent_at)
        alone = state.get("alone", False)
        if ev == "" and not alone:
            if state.get("phase") == "setup" or self.event_since is None or sent is None or sent >= self.event_since:
                return False  # the clock's own game, waiting or played in this event's time
            if (t.health or {}).get("clock_synced") is False:
                return False  # its clock is not synchronised (a Pi has no RTC): its time dates nothing
            # a retained state (or result) of before the event: not shown, but a state sent since
            # (the clock on again, its game played on) is this event's game
            why = f"{game}: a game from before event {self.event} began: not shown"
        else:
            why = (f"{game}: a game of event {ev!r}, not this event's ({self.event}): not shown" if ev else
                   f"{game}: a practice game, played without the hall: not shown")
            t.foreign[game] = why
            while len(t.foreign) > limits.GAMES_BOUND:
                t.foreign.popitem(last=False)
        why += "; the round's new game from this console archives it on the clock"
        if why not in t.problems:
            t.problems.append(why)
        return True

    def _bind_unseen(self, t: Table, data: dict) -> list:
        """An event or result of a game never bound: this round's when no state says otherwise (a
        state naming another game would make it an older game, of a round the console cannot know:
        left unbound, never offered)."""
        if data["game"] in t.bound or (t.state or {}).get("game") not in (None, data["game"]):
            return []
        return self._bind(t, data["game"], data.get("at"))

    def _station_message(self, sid: str, leaf: str, c: Any) -> list:
        s = self.stations.setdefault(sid, Station())
        if leaf == "status":
            self._status(s, c)
            return [("station", self.station_view(sid))]
        # challenge, or detail (the per-word results, for the director alone), kept by station and
        # id: ids are each station's own, and no station may rewrite another's
        key = f"{sid}/{c['id']}"
        known = self.challenges.pop(key, None) or {"station": sid, "id": c["id"]}
        self.challenges[key] = known
        while len(self.challenges) > limits.CHALLENGES:
            self.challenges.popitem(last=False)
        if leaf == "detail":
            known["word_results"] = c.pop("words")
        elif "words" in c:
            c["word_count"] = c.pop("words")
        known.update({k: v for k, v in c.items() if v is not None})
        if leaf != "challenge":
            return []
        out: list = []
        t = self.tables.get(known.get("table"))
        if t is not None:  # a table the console knows; a station's word adds none
            # a station publishes once judged; a challenge without a verdict is still in progress
            t.challenge = known if known.get("verdict") in (None, "pending") else None
            st = t.state or {}
            if st.get("phase") == "neutralised":  # judged while the clock is held: this stop was a challenge
                t.stop = (st["game"], max(st["seq"], t.stop[1] if t.stop and t.stop[0] == st["game"] else 0), CHALLENGED)
            # the station's `kind` (self, opponent) is the challenge's, not the history entry's
            entry = {**_public_challenge(known), "challenge_kind": known.get("kind"), "kind": "challenge"}
            t.history.append(entry)
            out.append(("table", t.tile()))
        self.feed.appendleft(_public_challenge(known))
        out.append(("challenge", _public_challenge(known)))
        return out

    def station_view(self, sid: str) -> dict:
        s = self.stations[sid]
        return {"station": sid, "status": s.status, "problems": list(s.problems), "health": s.health,
                "health_problems": list(s.health_problems), "version": s.version}

    # --- a device's health (issue 26: its status, the director's thresholds) ------------------------

    def _status(self, device: "Table | Station", data: dict) -> None:
        """A status (contract._status): online or offline, and an online device's health; the Last
        Will keeps the health last known (the readiness view says the device is offline)."""
        device.status = data["status"]
        if data["status"] == "online":
            device.health, device.version, device.takes = data["health"], data["version"], tuple(data["takes"])
        device.health_problems = health.problems(device.health, self.thresholds)

    def set_thresholds(self, th: dict) -> list:
        """The director's thresholds (health.check'd): every tile whose problems change."""
        self.thresholds = th
        out = []
        for t in self.tables.values():
            p = health.problems(t.health, th)
            if p != t.health_problems:
                t.health_problems = p
                out.append(("table", t.tile()))
        for sid, s in self.stations.items():
            s.health_problems = health.problems(s.health, th)
            out.append(("station", self.station_view(sid)))
        return out

    # --- gaps -------------------------------------------------------------------------------------

    def gaps(self) -> list[tuple[int, str, int, int | None]]:
        """(table, game, first, last) for each online table's latest game that lacks events (last
        None: everything from first on, and the result)."""
        out = []
        for n, t in self.tables.items():
            # an offline clock is not asked: the request would wait in its session, one every 10 s
            if t.seqs.games and t.status != "offline":
                name, g = next(reversed(t.seqs.games.items()))
                want = g.first_missing()
                if want is not None:
                    out.append((n, name, *want))
        return out

    # --- the director's side -----------------------------------------------------------------

    def command_sent(self, n: int, cmd: dict) -> None:
        self.pending[cmd["id"]] = cmd
        while len(self.pending) > limits.PENDING:
            self.pending.popitem(last=False)
        if n in self.tables:
            self.tables[n].history.append({**cmd, "kind": "command"})

    def set_seats(self, seats: dict[int, dict], finals: dict[tuple, dict]) -> list:
        """The hall's seating for the round (table -> hallplan seat as a dict) and the confirmed
        results by seat_key (a table with no TSH game: by table_key, this round's). A table no longer
        seated loses its players and notes: nothing of another division or round stays on it (its
        clock result stays, shown again if that game returns)."""
        out = []
        seats = {n: s for n, s in seats.items() if 1 <= n <= limits.MAX_TABLE}
        self.table_finals = {k[2][1]: f for k, f in finals.items() if k[:2] == (BY_TABLE, self.round.number)}
        # a recorded table stays known; a table whose round changed shows another round's games
        known = {n for n, t in self.tables.items()
                 if t.seat is not None or t.final is not None or t.round_now != self.round.number}
        for n in sorted(set(seats) | known | set(self.table_finals)):
            t = self.table(n)
            seat = seats.get(n)
            final = finals.get(seat_key(seat)) if seat else self.table_finals.get(n)
            if t.seat == seat and t.final == final and t.round_now == self.round.number:
                continue
            t.seat, t.final, t.round_now = seat, final, self.round.number
            out.append(("table", t.tile()))
        return out

    def snapshot(self) -> dict:
        return {
            "hall": self.hall,
            "round": self.round.as_dict(),
            "lateness_endings": list(results.LATENESS_ENDINGS),  # a result with one of these takes a margin
            "tables": [t.tile() for t in sorted(self.tables.values(), key=lambda t: t.n)],
            "feed": list(self.feed)[:100],
            "stations": {sid: s.status for sid, s in self.stations.items()},
            "station_problems": {sid: list(s.problems) for sid, s in self.stations.items() if s.problems},
            "station_health": {sid: list(s.health_problems) for sid, s in self.stations.items() if s.health_problems},
            "health_thresholds": dict(self.thresholds),
            "problems": list(self.problems),
        }

    def detail(self, n: int) -> dict | None:
        """A table's history, with per-word results of its challenges (the director's eyes only);
        None for a table the console does not know (asking adds no tile)."""
        t = self.tables.get(n)
        if t is None:
            return None
        words = [c for c in self.challenges.values() if c.get("table") == n]
        return {"tile": t.tile(), "history": list(t.history), "challenges": words, "numbers": list(t.numbers),
                "seat": t.seat}
