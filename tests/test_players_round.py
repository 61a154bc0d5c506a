"""A round played as players would (issue 40 item 5): eight real clocks (firmware.cli.Clock, as
`rackside clock --simulate` assembles it, headless on gpiozero's mock pins: support.hallclock.LiveClock),
a real Mosquitto and `rackside hall console` with TSH's files for the round; tables 1 to 4 have a text
display, 5 to 8 only the 4-digit displays.

Each player follows only what their clock shows: with a text display, the renderer's words (every
page of it, `firmware.text_output.frame_lines`); without, the 4-digit displays and the player card
(`firmware.player_card`: each word's meaning is what the player knows). Nobody reads the docs or the
clock's state. The steps: a player at the wrong table is sent on, everyone checks in (with a text
display, confirming by a second press the name it shows for the number typed), the
non-starter starts, a call at tables 2 and 6 (acknowledged and resolved by the director on the
console), a slip with a recount at tables 3 and 7, signing, and the console's answer.

What each display showed at each step is written to the test's artefacts (`players-round.json` in
tmp_path), and each step's text must name the player (on a text display) and the action expected of
them; on the 4-digit displays the word must be one the card explains.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from rackside.firmware import player_card, text_render
from rackside.firmware.text_output import frame_lines

from support.console import ConsoleProcess, Http, post, tsh_files
from support.hallclock import LiveClock, clock_config
from support.wait import wait

PASSWORD = "players-round"
TABLES = range(1, 9)
TEXT_TABLES = (1, 2, 3, 4)  # with a text display; 5 to 8 without
NAMES = ["Müller, Jörg", "Baker, Bob", "Øster, Søren", "Dunn, Di", "Straße, Eva", "Fox, Flo", "Gill, Gus", "Hart, Hal",
         "Ives, Ida", "Jay, Jo", "Kim, Kit", "Lee, Lu", "Núñez, José", "Nash, Ned", "Ott, Oli", "Pym, Pat"]
# TSH: player 2n-1 (p12 1: starts, 2.1(b)(i)) against 2n at table n
A_T = "".join(f"{name}  {1600 - i} {i + 2 if i % 2 == 0 else i}; ; board {i // 2 + 1}; p12 {1 + i % 2}\n" for i, name in enumerate(NAMES))
CONFIG_TSH = "division A a.t\nconfig max_rounds = 1\n"
SCORES = {n: (412, 388) for n in TABLES} | {3: (400, 390), 7: (355, 370)}  # 3 and 7: close, a recount (5.5.1)
WRONG = {1: 3, 5: 11}  # table: the player who sits there first (table 2's and table 6's)
CALLS = (2, 6)


class Player:
    def __init__(self, number: int) -> None:
        self.number = number
        self.name = NAMES[number - 1]
        self.surname = text_render.short_name(self.name)
        self.table = (number + 1) // 2
        self.side = "left" if number % 2 else "right"  # the non-starter put the clock this way round
        self.word = "Left" if self.side == "left" else "Right"


class Round:
    def __init__(self, tmp_path) -> None:
        from support.broker import Broker

        self.broker = Broker(tmp_path / "broker", tables="1-8", stations=0).start()
        self.clocks: dict[int, LiveClock] = {}
        self.console = None
        self.log: list[dict] = []  # the artefact: each step, each display's words
        self.t0 = time.monotonic()
        extra = tsh_files(tmp_path / "console", {"config.tsh": CONFIG_TSH, "a.t": A_T.encode("latin-1")})
        self.console = ConsoleProcess(self.broker, tmp_path / "console", PASSWORD, extra=extra).start()
        for n in TABLES:
            cfg = clock_config(tmp_path / f"clock{n}.toml", self.broker, n, keypad=True)
            if n in TEXT_TABLES:
                cfg.write_text(cfg.read_text() + '\n[text_display]\ndriver = "hd44780"\ncols = 20\nrows = 4\n')
            self.clocks[n] = LiveClock(cfg, tmp_path / f"state{n}")
        self.h = Http(self.console.url)
        self.h.token = self.h.login(PASSWORD, "Chief TD")

    def close(self) -> None:
        for c in self.clocks.values():
            c.close()
        if self.console is not None:
            self.console.stop()
        self.broker.stop()

    # --- what a player sees ------------------------------------------------------------------------

    def words(self, n: int) -> list[str]:
        """A text display's words: every page the renderer gives it now."""
        live = self.clocks[n]
        now = time.monotonic_ns()
        return frame_lines(live.runner.frame(now), now)

    def sees(self, n: int, want, timeout: float = 20) -> list[str] | tuple[str, str]:
        """Wait until table `n`'s clock shows what `want` (a test on the words or on the two
        4-digit texts) accepts; what it showed. The 4-digit displays cycle their frames: read often."""
        if n in TEXT_TABLES:
            return wait(lambda: (w := self.words(n)) and want(w) and w, timeout)
        return wait(lambda: want(t := tuple(x.strip() for x in self.clocks[n].texts())) and t, timeout)

    def record(self, step: str, n: int, player: Player | None, shown) -> None:
        entry = {"at_s": round(time.monotonic() - self.t0, 2), "step": step, "table": n, "player": player.name if player else None, "text_display": n in TEXT_TABLES,
                 "shown": list(shown)}
        self.log.append(entry)
        if n in TEXT_TABLES:
            assert player is None or any(player.surname in line or f"#{player.number}" in line or player.word in line
                                         for line in shown), entry  # names the player (or their side)
        else:
            known = {t.strip() for t in player_card.shown()}
            assert any(t in known or re.fullmatch(r"-?\d{1,2}:\d\d|\d{1,4}|t +\d+|P *\d+", t) for t in shown), entry

    # --- what a player does -------------------------------------------------------------------------

    def type(self, n: int, text: str) -> None:
        self.clocks[n].type_keys(text)

    def press(self, n: int, side: str) -> None:
        self.clocks[n].tap(side)


def has(text: str):
    return lambda words: any(text in line for line in words)


def shows(word: str, side: int | None = None):
    return lambda texts: word in (texts if side is None else (texts[side],))


@pytest.fixture
def players_round(tmp_path):
    r = Round(tmp_path)
    yield r
    log = sorted(r.log, key=lambda e: e["at_s"])
    (tmp_path / "players-round.json").write_text(json.dumps(log, indent=1, ensure_ascii=False))
    r.close()


def test_a_round_played_by_players_following_only_their_clocks(players_round, tmp_path):
    r = players_round
    players = {p.number: p for p in map(Player, range(1, 17))}
    for n in TABLES:  # the console's pairing, with the names, reaches every clock
        wait(lambda n=n: r.clocks[n].runner.table.seating.names is not None, 30)

    # --- a player at the wrong table: sent on by what the clock says ---------------------------------
    for n, number in WRONG.items():
        p = players[number]
        r.type(n, str(number))
        r.press(n, "left")
        if n in TEXT_TABLES:
            r.record("confirm", n, p, r.sees(n, has(f"Left: #{number}? Press your button again")))  # not paired here: no name
            r.press(n, "left")
            shown = r.sees(n, has("Left: wrong table: go to table"))
            goes = int(re.search(r"go to table (\d+)", " ".join(shown)).group(1))
        else:
            seen: set[str] = set()
            r.sees(n, lambda t: seen.add(t[0]) or ("tAbL" in seen and any(s.isdigit() for s in seen)))
            shown = sorted(seen)
            goes = int(next(s for s in seen if s.isdigit()))  # the card: tAbL, then the table to go to
        r.record("wrong table", n, p, shown)
        assert goes == p.table

    # --- then every table at once, as in a hall: each pair follows its own clock ----------------------
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(TABLES)) as pool:
        for done in [pool.submit(play_table, r, n, players) for n in TABLES]:
            done.result()  # a table's failure is the test's

    steps = {(e["table"], e["step"]) for e in r.log}
    assert {(3, "recount offered"), (7, "recount offered"), (1, "wrong table"), (5, "wrong table"), (2, "called"), (6, "called")} <= steps
    assert all((n, "recorded") in steps for n in TABLES)


def play_table(r: Round, n: int, players: dict) -> None:
    """One table's game, from check-in to the console's answer, as its two players see it."""
    left, right = players[2 * n - 1], players[2 * n]
    live = r.clocks[n]

    # --- check-in: each player types their number when their clock asks, and presses their button ----
    for p in (left, right):
        if n in TEXT_TABLES:
            r.sees(n, lambda w, p=p: any(f"Table {p.table} - round 1" in x for x in w) and any(p.surname in x for x in w))
        else:
            r.sees(n, lambda t, p=p: f"t{p.table:>3}" in t)  # the card: this is table N
        r.type(n, str(p.number))
        r.press(n, p.side)
        if n in TEXT_TABLES:  # the text display names whose number it is: the player confirms it is theirs
            r.record("confirm", n, p, r.sees(n, has(f"{p.word}: {p.surname} #{p.number}? Press your button again")))
            r.press(n, p.side)
        shown = r.sees(n, has(f"{p.word}: {p.surname} #{p.number}") if n in TEXT_TABLES else shows(f"{p.number}", 0 if p.side == "left" else 1))
        r.record("checked in", n, p, shown)

    # --- the start: the clock says who starts; the other player presses (2.2) ---------------------------
    if n in TEXT_TABLES:
        shown = r.sees(n, has(f"{left.surname} starts: {right.surname}, press your button"))
    else:
        shown = r.sees(n, shows("1St", 0))  # the card: your side starts; your opponent presses
    r.record("start", n, right, shown)
    r.press(n, right.side)
    wait(lambda: live.runner.clock.phase.value == "running")

    # --- a call: # held until the clock says so; the director acknowledges and resolves it ------------
    if n in CALLS:
        live.key_down("#")
        shown = r.sees(n, has("Director called: 0:0") if n in TEXT_TABLES else shows("CALL"))
        live.key_up("#")
        r.record("called", n, None, shown)
        call = wait(lambda: next((c for c in json.loads(r.h.call("GET", "/api/snapshot")[1])["paperless"]["calls"]
                                  if c["table"] == n and c["status"] == "waiting"), None))
        assert post(r.h, f"/api/call/{n}", {"call": call["call"], "action": "ack"})[0] == 200
        r.record("director coming", n, None, r.sees(n, has("Director is coming: 0:") if n in TEXT_TABLES else shows("SEEn")))
        assert post(r.h, f"/api/call/{n}", {"call": call["call"], "action": "resolve", "reason": "a word checked"})[0] == 200
        shown = r.sees(n, has("Clock paused") if n in TEXT_TABLES else shows("HOLd"))
        r.record("paused", n, right, shown)
        r.press(n, "neutralise")  # the card: the centre button restarts
        wait(lambda: live.runner.clock.phase.value == "running")

    # --- the end, the slip: the winner types both scores, a recount where close, both sign --------------
    winner = left if SCORES[n][0] > SCORES[n][1] else right
    live.command("end")  # the end gesture, both players agreeing
    shown = r.sees(n, has("Winner: type both scores") if n in TEXT_TABLES else shows("End"))
    r.record("game over", n, None, shown)
    r.type(n, f"{SCORES[n][0]}#{SCORES[n][1]}#")
    if n in (3, 7):
        shown = r.sees(n, has("recount? * yes, # no") if n in TEXT_TABLES else shows("rCnt"))
        r.record("recount offered", n, winner, shown)
        r.type(n, "*")  # 5.5.2: the whole game recounted: the same scores, confirmed again
        r.sees(n, has(f"Type {left.surname}'s score, then #") if n in TEXT_TABLES else lambda t: str(SCORES[n][0]) in t)
        r.type(n, "##")
    for p in (left, right):
        if n in TEXT_TABLES:
            shown = r.sees(n, lambda w, p=p: any(p.surname + ", press your button to sign" in x or "Each player: press your button" in x
                                                 for x in w))
            assert any(f"{winner.surname} wins by {abs(SCORES[n][0] - SCORES[n][1])}" in x for x in shown)
        else:
            shown = r.sees(n, shows("SIGn", 0 if p.side == "left" else 1))
        r.record("sign", n, p, shown)
        r.press(n, p.side)
    shown = r.sees(n, has("Result recorded") if n in TEXT_TABLES else shows("rEC"), 30)
    r.record("recorded", n, None, shown)
