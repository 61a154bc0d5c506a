"""TSH in (pure): TSH's files as TSH reads them: `config.tsh`, the `.t` division files and `tourney.js`.

Pure functions over text (the caller reads the bytes; `decode_t` turns them into text the way TSH
does). Nothing that cannot be placed is dropped: every line, player or game that cannot be used is a
problem `FILE:LINE: why`, kept with the division (and shown in the page and the API's reply).

How TSH reads a `.t` file (its `TFile.pm`, docs/console.md "TSH files"):
- bytes are ISO-8859-1 unless the configuration says otherwise (`tfile_encoding`); a UTF-8 byte
  order mark is stripped first;
- lines end at any run of CR and LF; blank lines do not count;
- a line whose first non-blank character is `#` is a comment; a `#` elsewhere is data, unless the
  configuration turns on `inline_comments`;
- a player line is `NAME RATING OPP1 OPP2 ...; SCORE1 SCORE2 ...; KEY WORDS...; ...` and its number
  is its position among the player lines; `00` stands for "not yet" (an opponent or score to come);
  in the annotations `\\;` is a literal semicolon;
- a line that does not match that form stops TSH ("Can't parse line N"): here it is a problem and
  the line keeps its number, so the players after it keep theirs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rackside.game.checkin import MAX_ROUND

from . import jsliteral

DEFAULT_ENCODING = "latin-1"  # TSH's default, `isolatin1`
DEFAULT_MAX_SCORE = 1499  # Addscore refuses higher scores unless `config max_score` says otherwise
# TSH's Config.pm: an event's `bye_spread` is 50 and its `entry` (Addscore's line format) 'scores',
# unless its realm's defaults (RealmDefaults) or a `config` line in config.tsh say otherwise.
DEFAULT_BYE_SPREAD = 50
DEFAULT_ENTRY = "scores"
REALM_DEFAULTS = {
    "absp": {"bye_spread": 100, "entry": "both"}, "go": {"bye_spread": 2}, "ken": {"bye_spread": 100},
    "pol": {"bye_spread": 300}, "thai": {"bye_spread": 100, "entry": "scores"}, "wespa": {"bye_spread": 100},
    "snic": {"entry": "sudoku"}, "sudoku": {"entry": "sudoku"}, "take5": {"entry": "sudoku"},
}
MIN_SCORE = -149  # Addscore's lower limit for a game's score
MAX_PLAYERS = 2000  # per division; a real division has tens, the biggest events a few hundred
MAX_ROUNDS = MAX_ROUND  # a player line's rounds; the console's round numbers go up to it too (and a clock's pairing)
MAX_BOARDS = 1000  # a division's entries in TSH's `tables` (the hall has at most 999 tables)
MAX_LABEL = 20  # characters of one of TSH's table labels ("A4", "Hall 2 table 14")

# TSH's own pattern for a player line (TFile.pm), with its groups: name, rating, opponents, scores, rest
_LINE = re.compile(r"^(.+?\S)\s+(\d+(?:[.+]\d+)*)\s*([\d\s]*);\s*([-\d\s]*)((?:;[^;]*)*)$")
_TRAILING_NUMBER_COMMENT = re.compile(r"; # \d+\s*$")
_ENCODINGS = {"isolatin1": "latin-1", "iso-8859-1": "latin-1", "latin1": "latin-1", "latin-1": "latin-1",
              "utf8": "utf-8", "utf-8": "utf-8"}


class TshError(ValueError):
    """A file that is not a TSH file at all (refused whole, with why)."""


@dataclass(frozen=True)
class Player:
    number: int  # position among the division's player lines (1-based)
    name: str
    rating: str  # as written ("1500", "1500.5"); TSH keeps it as text too
    opponents: tuple[int | None, ...]  # per round: a player number, 0 = bye, None = not yet paired
    scores: tuple[int | None, ...] = ()
    etc: dict = field(default_factory=dict, compare=False)  # annotation -> tuple of words
    line: int | None = None  # where it was read (for problems)

    @property
    def active(self) -> bool:
        """TSH's Player::Active: not withdrawn (`off` annotation); an inactive player needs no score."""
        return "off" not in self.etc

    def annotation(self, key: str) -> tuple[int | None, ...]:
        """An annotation's words as numbers (`board`, `p12`); a word that is no number is None."""
        return tuple(int(w) if w is not None and re.fullmatch(r"-?\d+", str(w)) else None for w in self.etc.get(key, ()))

    def board(self, round0: int) -> int | None:
        b = self.annotation("board")
        return b[round0] if round0 < len(b) else None

    def first(self, round0: int) -> int | None:
        """1 if this player went (goes) first in the round, 2 if second, 0 for a bye, None unknown."""
        p = self.annotation("p12")
        return p[round0] if round0 < len(p) else None


@dataclass(frozen=True)
class Game:
    """One pairing of a round: `first` sits at clock side 1 (docs/console.md)."""

    division: str
    round: int
    board: int | None
    first: Player
    second: Player

    @property
    def starter_known(self) -> bool:
        """TSH's `p12` says `first` starts (2.1(b)(i)); False: the order is the lower number first."""
        return self.first.first(self.round - 1) == 1 or self.second.first(self.round - 1) == 2


@dataclass
class Division:
    name: str
    source: str
    players: dict[int, Player] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # TSH's table for each board (board N at the Nth), as its tourney.js `config.tables` gives them;
    # a config.tsh's `config tables` decides over these (hallplan.plan)
    tables: list[str] | None = None

    @property
    def rounds(self) -> int:
        return max((len(p.opponents) for p in self.players.values()), default=0)

    def round_plan(self, round_: int) -> tuple[list[Game], list[int], list[str]]:
        """Round `round_` (1-based): its games, the players with a bye, and what cannot be placed."""
        games: list[Game] = []
        byes: list[int] = []
        problems: list[str] = []
        i = round_ - 1
        seen: set[int] = set()
        for p in sorted(self.players.values(), key=lambda p: p.number):
            if p.number in seen:
                continue
            opp_n = p.opponents[i] if i < len(p.opponents) else None
            if opp_n is None:
                continue  # not paired yet
            where = f"{self.source}:{p.line}" if p.line else self.source
            if opp_n == 0:
                byes.append(p.number)
                continue
            opp = self.players.get(opp_n)
            if opp is None:
                problems.append(f"{where}: division {self.name} round {round_}: player {p.number} ({p.name}) "
                                f"is paired with {opp_n}, who is not in the division")
                continue
            back = opp.opponents[i] if i < len(opp.opponents) else None
            if back != p.number:
                problems.append(f"{where}: division {self.name} round {round_}: player {p.number} ({p.name}) "
                                f"has opponent {opp_n}, but {opp_n} ({opp.name}) has {back if back is not None else 'none'}")
                continue
            seen.update((p.number, opp.number))
            b1, b2 = p.board(i), opp.board(i)
            if b1 is not None and b2 is not None and b1 != b2:
                problems.append(f"{where}: division {self.name} round {round_}: players {p.number} and {opp.number} "
                                f"disagree on their board ({b1} and {b2})")
                continue
            board = b1 if b1 is not None else b2
            if board is None or board < 1:
                problems.append(f"{where}: division {self.name} round {round_}: players {p.number} and {opp.number} "
                                f"have no board, so no table: give them one in TSH")
                continue
            first, second = _order(p, opp, i)
            games.append(Game(self.name, round_, board, first, second))
        return games, byes, problems


def _order(a: Player, b: Player, i: int) -> tuple[Player, Player]:
    """Who starts: `p12` (1 = first); without it, the lower player number (docs/console.md)."""
    fa, fb = a.first(i), b.first(i)
    if fa == 1 or fb == 2:
        return a, b
    if fb == 1 or fa == 2:
        return b, a
    return (a, b) if a.number < b.number else (b, a)


# --- .t files -----------------------------------------------------------------------------------


def decode_t(data: bytes, encoding: str = DEFAULT_ENCODING) -> str:
    """A `.t` file's bytes as TSH decodes them (BOM stripped; ISO-8859-1 unless configured)."""
    enc = _ENCODINGS.get(str(encoding).lower().replace("_", "-"), encoding)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode(enc, errors="replace")
    except LookupError:
        raise TshError(f"config tfile_encoding: {encoding!r} is not an encoding (TSH's are 'isolatin1' and 'utf8')") from None
    return text.lstrip("\ufeff")


def parse_t(text: str, name: str, source: str = "<t>", inline_comments: bool = False) -> Division:
    """A `.t` file's text (decoded) into division `name`."""
    div = Division(name=name, source=source)
    number = 0
    lineno = 0
    # TSH splits on runs of CR/LF, so its line count skips blank lines; ours counts the file's lines
    for lineno, raw in enumerate(re.split(r"\r\n|\r|\n", text.lstrip("\ufeff")), start=1):
        if re.match(r"^\s*#", raw):
            continue
        line = raw
        if inline_comments:
            line = line.split("#", 1)[0]
        line = line.strip()
        if not line:
            continue
        number += 1
        if number > MAX_PLAYERS:
            div.problems.append(f"{source}:{lineno}: more than {MAX_PLAYERS} players in one division; the rest is not read")
            break
        if ";" not in line:
            line += ";"
        line = _TRAILING_NUMBER_COMMENT.sub(";", line)
        m = _LINE.match(line)
        if m is None:
            div.problems.append(f"{source}:{lineno}: player {number} cannot be read (TSH wants "
                                f"'NAME RATING OPPONENTS; SCORES; ...'): {raw.strip()[:80]!r}")
            continue
        name_, rating, opps, scores, rest = m.groups()
        try:
            etc = _annotations(rest)
        except ValueError as e:
            div.problems.append(f"{source}:{lineno}: player {number}: {e}")
            etc = {}
        opponents = tuple(_num(w) for w in opps.split())
        if len(opponents) > MAX_ROUNDS:
            div.problems.append(f"{source}:{lineno}: player {number}: more than {MAX_ROUNDS} rounds")
            continue
        div.players[number] = Player(number, name_, rating, opponents, tuple(_num(w) for w in scores.split()), etc, lineno)
    if not div.players and not div.problems:
        raise TshError(f"{source}: no player lines: not a TSH .t file")
    return div


def _num(word: str) -> int | None:
    return None if word == "00" else int(word)


def _annotations(rest: str) -> dict:
    """`; board 1 2; p12 1 2` (TSH's escapes: `\\;` and `\\\\`) into {key: words}; `00` is None."""
    out: dict = {}
    for part in re.split(r"(?<!\\);", rest):
        part = part.replace("\\;", ";").replace("\\\\", "\\")
        words = part.split()
        if not words:
            continue
        out[words[0]] = tuple(None if w == "00" else w for w in words[1:])
    return out


# --- config.tsh ---------------------------------------------------------------------------------


@dataclass
class Config:
    """What the console uses of `config.tsh`: its divisions (in order, with their files) and options."""

    divisions: list[tuple[str, str]] = field(default_factory=list)  # (name, file)
    options: dict = field(default_factory=dict)  # `config KEY = VALUE`, the values read as Perl literals
    problems: list[str] = field(default_factory=list)
    source: str = "config.tsh"

    @property
    def encoding(self) -> str:
        return str(self.options.get("tfile_encoding") or DEFAULT_ENCODING)

    @property
    def inline_comments(self) -> bool:
        return bool(self.options.get("inline_comments"))

    @property
    def max_score(self) -> int:
        v = self.options.get("max_score")
        return int(v) if isinstance(v, int) and v > 0 else DEFAULT_MAX_SCORE

    def _realm(self, key: str):
        realm = str(self.options.get("realm") or "").lower()
        return REALM_DEFAULTS.get(realm, {}).get(key)

    @property
    def bye_spread(self) -> int:
        """The spread TSH gives a bye (`config bye_spread`, else the realm's, else 50)."""
        v = self.options.get("bye_spread")
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        return self._realm("bye_spread") or DEFAULT_BYE_SPREAD

    @property
    def entry(self) -> str:
        """How Addscore reads a game's line (`config entry`: scores, both, board, spread, ...)."""
        v = self.options.get("entry")
        return str(v).lower() if isinstance(v, str) and v else (self._realm("entry") or DEFAULT_ENTRY)

    def tables(self, division: str) -> list[str] | None:
        """TSH's board-to-table mapping (`config tables = {'A' => ['A1', 'A2', ...]}`): board N of
        `division` plays at the Nth listed table (a label, as TSH prints it)."""
        t = self.options.get("tables")
        if not isinstance(t, dict):
            return None
        for k, v in t.items():
            if str(k).lower() == division.lower() and isinstance(v, list):
                return [str(x) for x in v]
        return None


def parse_config(text: str, source: str = "config.tsh") -> Config:
    cfg = Config(source=source)
    for lineno, raw in enumerate(re.split(r"\r\n|\r|\n", text.lstrip("\ufeff")), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split(None, 1)
        kind = words[0].lower()
        rest = words[1] if len(words) > 1 else ""
        if kind == "division":
            parts = rest.split()
            if len(parts) < 2:
                cfg.problems.append(f"{source}:{lineno}: 'division' needs a name and a file: {line!r}")
                continue
            if any(d[0].lower() == parts[0].lower() for d in cfg.divisions):
                cfg.problems.append(f"{source}:{lineno}: division {parts[0]} is declared twice")
                continue
            cfg.divisions.append((parts[0], parts[1]))
        elif kind == "config":
            m = re.match(r"^([A-Za-z_]\w*)\s*=\s*(.*?);?\s*$", rest)
            if not m:
                cfg.problems.append(f"{source}:{lineno}: 'config' needs KEY = VALUE: {line!r}")
                continue
            try:
                cfg.options[m.group(1)] = perl_value(m.group(2))
            except ValueError as e:
                cfg.options[m.group(1)] = m.group(2)  # kept as written; only its use can say if it matters
                if m.group(1) in ("tables", "max_score", "tfile_encoding", "inline_comments"):
                    cfg.problems.append(f"{source}:{lineno}: config {m.group(1)}: {e}")
        # every other kind (classes, autopair, prize, perl, ...) is TSH's business, not the hall's
    if not cfg.divisions:
        raise TshError(f"{source}: no 'division NAME FILE' line: not a TSH config.tsh")
    return cfg


_PERL_TOKEN = re.compile(r"\s*(=>|\.\.|qw\s*\(([^)]*)\)|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+(?:\.\d+)?|[A-Za-z_]\w*|[{}\[\](),])")


def perl_value(text: str, max_items: int = 10_000) -> object:
    """A `config` value as Perl writes it: numbers, quoted strings, barewords, `[...]` lists (with
    `1..10` ranges and `qw(...)`), `{ KEY => VALUE, ... }` hashes. Bounded by `max_items` and by
    nesting 16 deep. Hand-written: it is a few literal forms, not Perl, and there is no reader of
    them among the kept packages."""
    tokens = []
    pos = 0
    while pos < len(text):
        m = _PERL_TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip() == "":
                break
            raise ValueError(f"cannot read {text[pos:pos + 20]!r}")
        tokens.append(m.group(1))
        pos = m.end()
    count = [0]

    def atom(t: str):
        if t.startswith("'") or t.startswith('"'):
            return re.sub(r"\\(.)", r"\1", t[1:-1])
        if re.fullmatch(r"-?\d+", t):
            return int(t)
        if re.fullmatch(r"-?\d+\.\d+", t):
            return float(t)
        if t == "undef":
            return None
        if re.fullmatch(r"[A-Za-z_]\w*", t):
            return t
        raise ValueError(f"unexpected {t!r}")

    def items(i: int, close: str, depth: int) -> tuple[list, int]:
        out: list = []
        while i < len(tokens) and tokens[i] != close:
            if tokens[i] == ",":
                i += 1
                continue
            v, i = value(i, depth)
            if i < len(tokens) and tokens[i] == "..":
                hi, i = value(i + 1, depth)
                if not (isinstance(v, int) and isinstance(hi, int)) or hi - v > max_items:
                    raise ValueError(f"a range {v}..{hi} that is not a short range of whole numbers")
                out.extend(range(v, hi + 1))
            elif isinstance(v, _Words):
                out.extend(v)
            else:
                out.append(v)
            count[0] += 1
            if len(out) > max_items or count[0] > max_items:
                raise ValueError(f"more than {max_items} items")
        if i >= len(tokens):
            raise ValueError(f"no closing {close!r}")
        return out, i + 1

    def value(i: int, depth: int):
        if depth > 16:
            raise ValueError("nested more than 16 deep")
        if i >= len(tokens):
            raise ValueError("a value is missing")
        t = tokens[i]
        if t == "[" or t == "(":
            return items(i + 1, "]" if t == "[" else ")", depth + 1)
        if t == "{":
            flat, j = items(i + 1, "}", depth + 1)
            # `=>` was dropped by items(): pairs are in order
            if len(flat) % 2:
                raise ValueError("a hash with an odd number of items")
            return {str(flat[k]): flat[k + 1] for k in range(0, len(flat), 2)}, j
        if t.startswith("qw"):
            return _Words(w for w in re.match(r"qw\s*\(([^)]*)\)", t).group(1).split()), i + 1
        return atom(t), i + 1

    tokens = [t for t in tokens if t != "=>"] if tokens else tokens
    # `=>` only separates a key from its value; removing it leaves KEY, VALUE pairs in a hash
    v, i = value(0, 0)
    if i != len(tokens):
        raise ValueError(f"more after the value: {' '.join(tokens[i:i + 5])!r}")
    if isinstance(v, _Words):
        return [int(w) if re.fullmatch(r"-?\d+", w) else w for w in v]
    return v


class _Words(list):
    """qw(...) inside a list: its words join the list."""

    def __iter__(self):
        return (int(w) if re.fullmatch(r"-?\d+", w) else w for w in list.__iter__(self))


# --- tourney.js ---------------------------------------------------------------------------------


def parse_tourney_js(text: str, source: str = "tourney.js") -> list[Division]:
    """TSH's `newt={...};` (its JSON command) into its divisions, every player of each."""
    try:
        data = jsliteral.parse(text, source)
    except jsliteral.JsLiteralError as e:
        raise TshError(f"not TSH's tourney.js: {e}") from None
    divisions = data.get("divisions") if isinstance(data, dict) else None
    if not isinstance(divisions, list):
        raise TshError(f"{source}: not TSH's tourney.js (no 'divisions' list)")
    config = data.get("config")
    tables = config.get("tables") if isinstance(config, dict) else None
    out = []
    for di, d in enumerate(divisions):
        if not isinstance(d, dict):
            raise TshError(f"{source}: division {di + 1} is not an object")
        name = str(d.get("name") or f"{di + 1}")
        div = Division(name=name, source=source)
        div.tables = _js_tables(tables, name, source, div.problems)
        players = d.get("players")
        if not isinstance(players, list):
            div.problems.append(f"{source}: division {name}: no players list")
            out.append(div)
            continue
        for idx, p in enumerate(players[: MAX_PLAYERS + 1]):
            if idx == 0 and (p is None or p is jsliteral.UNDEFINED):
                continue  # TSH's players are 1-based: index 0 is a placeholder
            where = f"{source}: division {name} player {idx}"
            try:
                if not isinstance(p, dict):
                    raise ValueError("not an object")
                number = int(p["id"]) if _given(p.get("id")) else idx
                etc = p.get("etc") if isinstance(p.get("etc"), dict) else {}
                div.players[number] = Player(
                    number=number,
                    name=str(p["name"]),
                    rating=str(p.get("rating")) if _given(p.get("rating")) else "0",
                    opponents=tuple(_js_int(x) for x in _list(p.get("pairings"))),
                    scores=tuple(_js_int(x) for x in _list(p.get("scores"))),
                    etc={str(k): tuple(None if not _given(w) else str(w) for w in _list(v)) for k, v in etc.items()},
                )
            except (KeyError, TypeError, ValueError) as e:
                div.problems.append(f"{where}: cannot be read ({e})")
        if len(players) > MAX_PLAYERS + 1:
            div.problems.append(f"{source}: division {name}: more than {MAX_PLAYERS} players; the rest is not read")
        out.append(div)
    return out


SCORE_ENTRY_KEYS = ("entry", "bye_spread", "realm", "max_score")
# What changes a rank (standings.py): TSH::Division::Synch's spread (`spread_cap`, `oppless_spread`)
# and wins (`zero_byes_tie`, `all_byes_tie`), and MakeStandingComparator's order (`sum_before_spread`,
# `spread_bad`); its other inputs are the players' own (rating, TSH's rnd, number; `left_after`: Thai
# seating, not supported)
RANK_KEYS = ("spread_cap", "oppless_spread", "zero_byes_tie", "all_byes_tie", "spread_bad", "sum_before_spread")
# Of those, the yes-or-no ones: Perl's 1 or 0 in config.tsh, JavaScript's `true` or `false` where TSH
# writes the config into tourney.js (its JSON of the Perl value, or a hand-made file's)
RANK_FLAGS = ("oppless_spread", "zero_byes_tie", "all_byes_tie", "spread_bad", "sum_before_spread")
MAX_OPTION_TEXT = 40  # an option's value as text: longer is no value these keys take


def _option(v, flag: bool = False):
    """A tourney.js `config` value TSH's entry or ranking reads: a number or short text, or (as
    `spread_cap` by round) a list of at most MAX_ROUNDS whole numbers; for a yes-or-no key (`flag`,
    RANK_FLAGS) `true`/`false` too, as config.tsh's 1/0; None for anything else (`undefined`, a
    bool of any other key, an object)."""
    if isinstance(v, bool):
        return int(v) if flag else None
    if isinstance(v, (int, str)) and len(str(v)) <= MAX_OPTION_TEXT:
        return v
    if isinstance(v, list) and len(v) <= MAX_ROUNDS and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return list(v)
    return None


def tourney_js_options(text: str, source: str = "tourney.js") -> dict:
    """The event's options from the `config` object TSH writes into tourney.js, for a hall that
    imports only tourney.js: what TSH's score entry depends on (SCORE_ENTRY_KEYS: both real events in
    tests/data/tsh run `entry` 'both') and what its ranking does (RANK_KEYS: a `spread_cap` dropped
    ranked 104 of 665 players otherwise than TSH, issue 35)."""
    try:
        data = jsliteral.parse(text, source)
    except jsliteral.JsLiteralError:
        return {}
    cfg = data.get("config") if isinstance(data, dict) else None
    if not isinstance(cfg, dict):
        return {}
    out = {k: _option(cfg.get(k), k in RANK_FLAGS) for k in SCORE_ENTRY_KEYS + RANK_KEYS}
    return {k: v for k, v in out.items() if v is not None}


def _js_tables(tables, division: str, source: str, problems: list[str]) -> list[str] | None:
    """A division's entry of tourney.js's `config.tables` (`{"A": ["A1", "A2", ...]}`, TSH's
    board-to-table mapping, as config.tsh's `config tables`): its labels as text, or None."""
    if not isinstance(tables, dict):
        return None  # TSH writes `{}` or leaves it undefined when the event has none
    for k, v in tables.items():
        if str(k).lower() != division.lower():
            continue
        if not isinstance(v, list) or len(v) > MAX_BOARDS or not all(_label(x) for x in v):
            problems.append(f"{source}: config.tables for division {division}: not a list of at most {MAX_BOARDS} "
                            "table names or numbers: TSH's labels are not shown")
            return None
        return [_label(x) or "" for x in v]
    return None


def _label(x) -> str | None:
    """One table of TSH's `tables`: a number (a hall table) or a short label ("A4")."""
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)) and x == int(x):
        return str(int(x))
    if isinstance(x, str) and 0 < len(x.strip()) <= MAX_LABEL:
        return x.strip()
    return None


def _given(v) -> bool:
    return v is not None and v is not jsliteral.UNDEFINED


def _list(v) -> list:
    return v if isinstance(v, list) else []


def _js_int(x) -> int | None:
    if not _given(x):
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x != int(x):
        raise ValueError(f"{x!r} is not a whole number")
    return int(x)
