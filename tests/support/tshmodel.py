"""TSH's score-entry state, as TSH 3.340's own code keeps it: who is paired, who is scored and what
each command does to them. The oracle the console's TSH export is checked against (it reads
nothing of Rackside's export code; the .t files come in through hall/console/scoring/tsh.py, whose reading
is checked against TSH's TFile.pm in tests/test_tsh_files.py).

Written from TSH's Perl (John Chew's `tsh`, version 3.340 per its tsh.pl `$gkVersion`; the files
are cited in docs/console.md "TSH score entry"):

- TSH::Command::PAIR (`pair P1 P2 ROUND DIVISION`) calls TSH::Division::Pair(p1, p2, round0,
  'repair'): a player number outside the division is `enosuchp`; a player paired in fewer than
  round0 rounds is `eprbadr`; each player's old opponent, if another, is unpaired (`iprwasp`): when
  the round is that opponent's last pairing it is dropped (and its score, if the round is also its
  last score), otherwise the opponent gets a bye (0) and, if scored in a later round, the bye spread.
- TSH::Command::Addscore (`a ROUND DIVISION`): CheckRoundNumber opens add-score mode only for the
  round after the division's least-scored active player's last score (`eallsin` if that round is
  already complete, `emisss` if an earlier one is not), unless `config allow_gaps`. Before every
  prompt (ReadPromptedLine), if an odd number of active players lack a score, ScoreBye gives the
  bye spread to the one player without an opponent, but only when exactly one active player of the
  division has no opponent (a bye, 0, counts as none: Player::Opponent). A line is then:
  empty (leave the mode); a division's name (switch division); `m`, `es`, `look ...` (escapes);
  two words `PN SPREAD`, a bye or forfeit (InputBye: `enosuchp`, `enotabye` unless paired with 0,
  `whass`/`ehass` if the player has a score (a 0 counts as none), else the spread is stored as
  typed); otherwise a game in the words `config entry` says (InputGame*: `scores` PN1 PS1 PN2 PS2,
  `both` and the spread, `board` BD first, `spread` PN1 PN2 SPREAD; else `eahuh`), checked by
  CheckScores: CheckPairing (`eanotopp`), CheckSpread (`easa`), a game 0 against the bye spread
  (`eabbye`), `enosuchp`, the score range (`ebadscore`: -149 .. `config max_score` or 1499; 25 ..
  for `board`; 0 .. 999 for `spread`), `wlowscore` under 100, and an existing score (`ehass`;
  the same score again on the second player is `whass` and stores nothing). StoreScores stores
  both; TSH::Player::Score refuses a round past the player's next (`eplyrror`).
- Anything else at TSH's main prompt is a command TSH does not have (here: `ebadcmd`).

Not modelled (the console's exports use none of them): names for player numbers (ProcessNames),
`config seats`, `entry_pairing`, `track_firsts` warnings, `tagged` and `sudoku` entry.
Errors (`e...`) stop a line; warnings (`w...`) and notices (`i...`) do not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# TSH's Config.pm: initialise_event's defaults, then RealmDefaults (a realm's values win over the
# event defaults unless config.tsh sets the key).
EVENT_DEFAULTS = {"bye_spread": 50, "entry": "scores"}
REALMS = {
    "absp": {"bye_spread": 100, "entry": "both"}, "go": {"bye_spread": 2}, "ken": {"bye_spread": 100},
    "pol": {"bye_spread": 300}, "thai": {"bye_spread": 100, "entry": "scores"}, "wespa": {"bye_spread": 100},
    "snic": {"entry": "sudoku"}, "sudoku": {"entry": "sudoku"}, "take5": {"entry": "sudoku"},
}
WORDS = {"scores": 4, "both": 5, "board": 6, "spread": 3}  # InputGame*'s word count per entry system


def config_value(options: dict, key: str):
    if key in options and options[key] is not None:
        return options[key]
    realm = REALMS.get(str(options.get("realm") or "").lower(), {})
    return realm.get(key, EVENT_DEFAULTS.get(key))


@dataclass
class Player:
    number: int
    pairings: list  # opponent per round (0-based), None = not paired; Perl's array
    scores: list
    active: bool = True

    def opponent_id(self, r0: int):
        return self.pairings[r0] if r0 < len(self.pairings) else None

    def score(self, r0: int):
        """TSH::Player::Score's answer: None if not scored (Perl's undef)."""
        s = self.scores[r0] if r0 < len(self.scores) else None
        return None if s is None or s == 9999 else s

    def count_scores(self) -> int:
        while self.scores and self.scores[-1] is None:
            self.scores.pop()
        return len(self.scores)


@dataclass
class Message:
    line: int
    code: str
    text: str

    @property
    def error(self) -> bool:
        return self.code.startswith("e")

    def __str__(self) -> str:
        return f"line {self.line}: {self.code} {self.text}"


@dataclass
class Tsh:
    """TSH with its divisions loaded: feed it what a director would type."""

    divisions: dict[str, dict[int, Player]]
    options: dict = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)

    @classmethod
    def load(cls, divisions, options: dict | None = None, scored_rounds: int | None = None) -> "Tsh":
        """From hall/console/scoring/tsh.py Divisions (as TSH's .t files have them). `scored_rounds`: keep
        only the scores of the first so many rounds (TSH's state before the next round is entered)."""
        out = {}
        for d in divisions:
            players = {}
            for p in d.players.values():
                scores = list(p.scores if scored_rounds is None else p.scores[:scored_rounds])
                players[p.number] = Player(p.number, list(p.opponents), scores, "off" not in p.etc)
            out[d.name] = players
        return cls(out, dict(options or {}))

    # --- what TSH keeps --------------------------------------------------------------------------

    def value(self, key: str):
        return config_value(self.options, key)

    def division(self, name: str) -> dict[int, Player] | None:
        for k, v in self.divisions.items():  # TSH canonicalises division names (case)
            if k.lower() == str(name).lower():
                return v
        return None

    def least_scores(self, div: dict[int, Player]) -> int:
        """TSH::Division::LeastScores: the fewest scores an active player has (Synch's mins + 1)."""
        return min((p.count_scores() for p in div.values() if p.active), default=1_000_000)

    def unscored(self, name: str, round_: int) -> list[int]:
        return sorted(p.number for p in self.division(name).values() if p.active and p.score(round_ - 1) is None)

    def errors(self) -> list[Message]:
        return [m for m in self.messages if m.error]

    # --- what TSH does ------------------------------------------------------------------------------

    def feed(self, text: str) -> list[Message]:
        """Every line of `text`, as TSH's prompt reads them (the last line's own end is not an empty
        line). Returns this feed's messages (errors, warnings, notices)."""
        start = len(self.messages)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        mode = None  # (division name, round0) while in add-score mode
        for n, raw in enumerate(lines, start=1):
            if mode is not None:
                mode = self._addscore_line(n, raw, *mode)
                continue
            line = raw.strip()
            words = line.split()
            if not words:
                continue
            cmd = words[0].lower()
            if cmd == "pair" and len(words) == 5:
                self._pair(n, words[1:])
            elif cmd in ("a", "addscore") and len(words) == 3:
                mode = self._addscore_begin(n, words[1], words[2])
            else:
                self._say(n, "ebadcmd", f"{line!r} is no TSH command (a line meant for add-score mode?)")
        if mode is not None:
            self._prompt(mode[0], mode[1])
            self._say(len(lines), "eopen", "the text ends in add-score mode (no empty line leaves it)")
        return self.messages[start:]

    def _say(self, n: int, code: str, text: str) -> None:
        self.messages.append(Message(n, code, text))

    def _round_arg(self, n: int, word: str) -> int | None:
        if not re.fullmatch(r"\d+", word) or int(word) < 1:
            self._say(n, "ebadround", f"{word!r} is not a round number")
            return None
        return int(word) - 1

    def _pair(self, n: int, args: list[str]) -> None:
        """TSH::Command::PAIR -> TSH::Division::Pair($p1, $p2, $round0, 'repair')."""
        div = self.division(args[3])
        r0 = self._round_arg(n, args[2])
        if div is None:
            self._say(n, "ebaddiv", f"no division {args[3]!r}")
            return
        if r0 is None or not all(re.fullmatch(r"\d+", w) for w in args[:2]):
            self._say(n, "ebadarg", f"pair needs PLAYER PLAYER-OR-0 ROUND DIVISION, not {' '.join(args)!r}")
            return
        ps = [int(args[0]), int(args[1])]
        if not (ps[0] or ps[1]):
            return
        for p in ps:
            if p < 0 or p > len(div):
                self._say(n, "enosuchp", f"no player {p}")
                return
            if p and not self.value("allow_gaps") and len(div[p].pairings) < r0:
                self._say(n, "eprbadr", f"player {p} is paired in {len(div[p].pairings)} rounds: cannot pair round {r0 + 1}")
                return
        rnd = r0 + 1
        for i in (0, 1):
            p, o = ps[i], ps[1 - i]
            if not p:
                continue
            pp = div[p]
            opp_id = pp.opponent_id(r0)
            opp = div.get(opp_id) if opp_id else None
            if opp is not None and opp.number != o:
                self._say(n, "iprwasp", f"{p} was paired with {opp.number}")
                if rnd == len(opp.pairings):
                    opp.pairings.pop()
                    if rnd == opp.count_scores():
                        opp.scores.pop()  # DeleteLastScore
                else:
                    opp.pairings[r0] = 0
                    if rnd < opp.count_scores():
                        self._set_score(n, opp, r0, self.value("bye_spread"))
            while len(pp.pairings) <= r0:
                pp.pairings.append(None)
            pp.pairings[r0] = o

    def _addscore_begin(self, n: int, round_word: str, div_word: str):
        div = self.division(div_word)
        r0 = self._round_arg(n, round_word)
        if div is None:
            self._say(n, "ebaddiv", f"no division {div_word!r}")
            return None
        if r0 is None:
            return None
        entry = str(self.value("entry"))
        if entry not in WORDS:
            raise NotImplementedError(f"config entry = {entry!r} is not modelled")
        if not self._check_round(n, div_word, div, r0):
            return None
        return (div_word, r0)

    def _check_round(self, n: int, name: str, div: dict[int, Player], r0: int) -> bool:
        """Addscore's CheckRoundNumber."""
        if self.value("allow_gaps"):
            return True
        least = self.least_scores(div)
        if r0 <= least - 1:
            self._say(n, "eallsin", f"division {name}: every score of round {r0 + 1} is in already")
            return False
        if r0 > least:
            lacking = min((p for p in div.values() if p.active), key=lambda p: p.count_scores())
            self._say(n, "emisss", f"division {name}: scores of round {least + 1} are missing "
                                   f"(player {lacking.number}): round {r0 + 1} cannot be entered yet")
            return False
        return True

    def _prompt(self, name: str, r0: int) -> None:
        """ReadPromptedLine, before each line: ScoreBye when an odd number lack a score."""
        div = self.division(name)
        left = [p for p in div.values() if p.active and p.score(r0) is None]
        if len(left) % 2 == 0:
            return
        unpaired = [p for p in div.values() if p.active and not div.get(p.opponent_id(r0) or 0)]
        if len(unpaired) != 1:
            return
        need = [p for p in left if not div.get(p.opponent_id(r0) or 0)]
        if len(need) != 1:
            return
        if self._set_score(0, need[0], r0, self.value("bye_spread")):
            self._say(0, "iscoredbye", f"TSH scored player {need[0].number}'s bye itself: {self.value('bye_spread')}")

    def _set_score(self, n: int, p: Player, r0: int, s) -> bool:
        """TSH::Player::Score($round0, $score): no gaps (unless allow_gaps)."""
        if r0 < 0 or (not self.value("allow_gaps") and r0 > len(p.scores)):
            self._say(n, "eplyrror", f"player {p.number} has {len(p.scores)} scores: none can go in round {r0 + 1}")
            return False
        while len(p.scores) <= r0:
            p.scores.append(None)
        p.scores[r0] = s
        return True

    def _addscore_line(self, n: int, raw: str, name: str, r0: int):
        """One line in add-score mode; returns the mode after it (None: back at the main prompt)."""
        self._prompt(name, r0)
        line = raw.strip()
        if line == "":
            return None
        if self.division(line) is not None:
            div = self.division(line)
            return (line, r0) if self._check_round(n, line, div, r0) else None
        if re.fullmatch(r"(?i)(m|miss|missing)(\s+\S+)?|es|editscore|(l|look)\s+[a-z]+[a-z\s]*", line):
            return (name, r0)
        line = re.sub(r"(?<=\d)\.(\d)", r" \1", line)
        words = line.split()
        if re.search(r"[^-.+\d\s]", line):
            self._say(n, "eahuh", f"{raw!r}: not numbers (names are not modelled)")
            return (name, r0)
        div = self.division(name)
        entry = str(self.value("entry"))
        if len(words) == 2:
            self._bye(n, div, r0, words)
            return (name, r0)
        if len(words) != WORDS[entry]:
            self._say(n, "eahuh", f"{raw!r}: config entry = '{entry}' wants {WORDS[entry]} words a game")
            return (name, r0)
        self._game(n, div, r0, entry, words)
        return (name, r0)

    def _bye(self, n: int, div: dict[int, Player], r0: int, words: list[str]) -> None:
        """Addscore's InputBye."""
        pn, spread = int(words[0]), words[1]
        if pn < 1 or pn > len(div):
            self._say(n, "enosuchp", f"no player {pn}")
            return
        p = div[pn]
        if p.opponent_id(r0) != 0:
            self._say(n, "enotabye", f"player {pn} has no bye in round {r0 + 1} (opponent {p.opponent_id(r0)})")
            return
        if p.score(r0):  # Perl truth: a 0 can be overwritten
            same = p.score(r0) == int(spread)
            self._say(n, "whass" if same else "ehass", f"player {pn} already has {p.score(r0)} in round {r0 + 1}")
            return
        if not re.fullmatch(r"-?\d+", spread):
            # stored as typed: a "+75" would reach the .t file, which TSH's own reader cannot read back
            self._say(n, "eplus", f"player {pn}: spread {spread!r} would be stored as typed")
            return
        self._set_score(n, p, r0, int(spread))

    def _game(self, n: int, div: dict[int, Player], r0: int, entry: str, words: list[str]) -> None:
        """InputGame* for the entry system, CheckScores, StoreScores."""
        too_high = int(self.value("max_score") or 1499)
        too_low, lowish = -149, 100
        if entry == "scores":
            pn1, ps1, pn2, ps2 = words
            spread = None
        elif entry == "both":
            pn1, ps1, pn2, ps2, spread = words
        elif entry == "board":
            _bd, pn1, ps1, pn2, ps2, spread = words
            too_low, lowish = 25, -1
        else:  # spread
            pn1, pn2, ps1 = words
            ps2, spread = "0", None
            too_low, lowish = 0, -1
            too_high = int(self.value("max_score") or 999)
        pn = [int(float(pn1)), int(float(pn2))]
        ps = [ps1, ps2]
        pp = [div.get(x) if x >= 1 else None for x in pn]
        opp = [p.opponent_id(r0) if p else None for p in pp]
        if not ((opp[0] or 0) == pn[1] and (opp[1] or 0) == pn[0]):  # CheckPairing
            self._say(n, "eanotopp", f"{pn[0]} and {pn[1]} are not paired with each other in round {r0 + 1} "
                                     f"({pn[0]} has {opp[0]}, {pn[1]} has {opp[1]})")
            return
        if spread is not None and int(ps1) - int(ps2) != int(spread):  # CheckSpread
            self._say(n, "easa", f"{ps1} - {ps2} is not {spread}")
            return
        bye = self.value("bye_spread")
        if entry != "spread" and ((int(ps[0]) == 0 and int(ps[1]) == bye) or (int(ps[1]) == 0 and int(ps[0]) == bye)):
            self._say(n, "eabbye", f"{ps[0]}-{ps[1]} looks like a bye typed as a game")
            return
        for i in (0, 1):
            s = ps[i]
            if pn[i] < 1 or pn[i] > len(div):
                self._say(n, "enosuchp", f"no player {pn[i]}")
                return
            if not re.fullmatch(r"[-+]?\d+", s) or (entry != "spread" and int(s) < too_low) or int(s) > too_high:
                self._say(n, "ebadscore", f"score {s} (limits {too_low} to {too_high})")
                return
            if int(s) < lowish:
                self._say(n, "wlowscore", f"score {s} is low")
            old = pp[i].score(r0)
            if old is not None:
                if old == int(s):
                    if i == 1:
                        self._say(n, "whass", f"player {pn[i]} already has {old}: nothing stored")
                        return
                else:
                    self._say(n, "ehass", f"player {pn[i]} already has {old} in round {r0 + 1}, not {s}")
                    return
        self._set_score(n, pp[0], r0, int(ps[0]))
        self._set_score(n, pp[1], r0, int(ps[1]))
