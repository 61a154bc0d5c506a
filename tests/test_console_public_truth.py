"""One truth on every screen (issue 35 item 3), through the real processes: a real Mosquitto,
`rackside hall console` as its own process with its public listener, clocks with keypads publishing
as a clock does (support.keypadclock: the real clock core, the clock's own payloads), a challenge
station, and Debian's headless Chromium showing the director's page and the public Live page.

Every phase a table can be in (running, overtime, neutralised, a challenge, offline, a forfeit,
ended) is played at two tables: TSH's starter checked in on side 1 at one, on side 2 at the other
(the non-starter put the clock the other way round, 1.4.5). For each table the public card and the
director's tile show the same class and the same words (the director's note goes on with what only
the director sees), the same name on each side with that side's time; and the results recorded for
the ended games stand against the players who scored them in the public pairings. Before, the public
page showed an offline clock running, a forfeit as 0:00 and nothing else, and where the starter sat
on side 2, the other player's name with the starter's time and score.
"""

from __future__ import annotations

import json

import pytest

from rackside.game import clock as C
from rackside.hall.wire import topics
from support import browser as chromium
from support.broker import Broker, free_port
from support.console import ConsoleProcess, Http, get_json, post, tsh_files
from support.keypadclock import KeypadClock
from support.wait import wait

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")

PASSWORD = "one-truth-everywhere"
PHASES = ("running", "overtime", "neutralised", "challenge", "offline", "forfeit", "ended")
CLASS = {"running": "running", "overtime": "overtime", "neutralised": "neutralised", "challenge": "challenge",
         "offline": "offline", "forfeit": "forfeit", "ended": "finished"}
WORDS = {"running": "running", "overtime": "overtime", "neutralised": "neutralised", "challenge": "challenge",
         "offline": "offline since ", "forfeit": "overtime forfeit: side ", "ended": "ended"}
SHORT = C.Rules(game_time_ms=60_000, forfeit_overtime_ms=60_000)  # a minute, and a minute's overtime


def tables():
    """(table, phase, the starter's side): each phase at two tables, the starter on side 1, then 2."""
    return [(2 * i + s, phase, s) for i, phase in enumerate(PHASES) for s in (1, 2)]


def a_t() -> str:
    """Division A, round 1: board k (= table k) is players 2k-1 (TSH's starter, p12 1) v 2k."""
    lines = []
    for n, _phase, _side in tables():
        for number, p12 in ((2 * n - 1, 1), (2 * n, 2)):
            opp = 2 * n if p12 == 1 else 2 * n - 1
            lines.append(f"Player{number:02d}, P{number}  {1600 - number} {opp}; ; board {n}; p12 {p12}")
    return "\n".join(lines) + "\n"


def name(number: int) -> str:
    return f"Player{number:02d}, P{number}"


class Hall:
    def __init__(self, folder):
        n = len(tables())
        self.broker = Broker(folder / "broker", tables=f"1-{n}", stations=1).start()
        self.port = free_port()
        self.public = f"http://127.0.0.1:{self.port}/"
        extra = tsh_files(folder / "console", {"config.tsh": "division A a.t\nconfig max_rounds = 1\n",
                                               "a.t": a_t().encode("latin-1")})
        extra += f'\n[public]\nlisten = "127.0.0.1:{self.port}"\nevery_s = 1\n'
        self.console = ConsoleProcess(self.broker, folder / "console", PASSWORD, extra=extra).start()
        self.h = Http(self.console.url)
        self.h.token = self.h.login(PASSWORD, "Chief TD")
        self.clocks: dict[int, KeypadClock] = {}
        self.station = self.broker.client(topics.station_user("1"))

    def play(self, n: int, phase: str, starter_side: int) -> None:
        """Table `n`'s game to `phase`, TSH's starter (player 2n-1) checked in at `starter_side`."""
        clock = self.clocks[n] = KeypadClock(self.broker, n, SHORT if phase in ("overtime", "forfeit") else None)
        clock.online()
        other = 3 - starter_side
        clock.checkin(starter_side, 2 * n - 1)
        clock.checkin(other, 2 * n)
        clock.press(other)  # the non-starter starts the starter's clock (2.1)
        if phase == "overtime":
            clock.after(70)  # 10 s into overtime, still running
        elif phase in ("neutralised", "challenge"):
            clock.apply(C.Neutralise(clock.after(5)))
        elif phase == "forfeit":
            clock.end(after_s=125)  # past the forfeit line: the starter forfeits (5.3.3)
        elif phase == "ended":
            clock.press(starter_side, after_s=30)
            clock.end(after_s=20)
        clock.state()
        if phase == "challenge":
            self.station.publish(topics.station(self.broker.hall, "1", "challenge"), json.dumps(
                {"id": f"c{n}", "table": n, "verdict": "pending", "words": 1, "kind": "opponent",
                 "time": "2026-07-04T10:00:00+00:00"}), qos=1).wait_for_publish(10)
        if phase == "offline":
            clock.offline()

    def close(self) -> None:
        for c in self.clocks.values():
            c.close()
        self.station.loop_stop()
        self.station.disconnect()
        self.console.stop()
        self.broker.stop()


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    h = Hall(tmp_path_factory.mktemp("truth35"))
    try:
        for n, phase, side in tables():
            h.play(n, phase, side)
        yield h
    finally:
        h.close()


DIRECTOR = """(n) => {
  const d = document.querySelector(`#tiles .tile[data-table="${n}"]`);
  if (!d) return null;
  const rows = [...d.querySelectorAll(".side")];
  return { cls: d.dataset.cls, note: d.querySelector(".note").textContent,
    names: rows.map((r) => r.querySelector(".name").title), times: rows.map((r) => r.querySelector(".time").textContent),
    turn: rows.map((r) => r.classList.contains("turn")) };
}"""
PUBLIC = """(n) => {
  const c = document.querySelector(`#live .live-table[data-table="${n}"]`);
  if (!c) return null;
  const sides = [1, 2].map((s) => c.querySelector(`.side[data-side="${s}"]`));
  return { cls: c.dataset.cls, label: c.querySelector(".words .label").textContent, note: c.dataset.words,
    names: sides.map((s) => s.querySelector(".who").textContent), times: sides.map((s) => s.querySelector(".time").textContent),
    turn: sides.map((s) => s.classList.contains("turn")) };
}"""
TICKING = ("running", "overtime")  # their times move on each second: compared by name, not to the second


def test_the_public_page_and_the_directors_say_the_same_for_every_phase_and_both_seatings(hall, browser):
    director = chromium.login(browser, hall.console.url, PASSWORD)
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    errors: list[str] = []
    phone.on("pageerror", lambda e: errors.append(str(e)))
    phone.goto(hall.public)
    phone.click('#tabs button[data-tab="live"]')
    for n, phase, side in tables():
        want = CLASS[phase]
        d = wait(lambda: (x := director.evaluate(DIRECTOR, n)) and x["cls"] == want and x, 20)
        p = wait(lambda: (x := phone.evaluate(PUBLIC, n)) and x["cls"] == want
                 and (phase not in ("offline", "challenge") or x["note"] == d["note"][:len(x["note"])]) and x,
                 20)
        d = director.evaluate(DIRECTOR, n)
        where = (n, phase, side, d, p)
        assert p["note"].startswith(WORDS[phase]), where
        if phase == "overtime":  # the director's note is the penalty so far (5.3), the director's alone
            assert f"side {side} {p['note']}: −" in d["note"], where
        else:
            assert d["note"].startswith(p["note"]), where  # the same words; the director's note goes on
        assert p["label"] == director.evaluate(f"app.LABEL[{json.dumps(want)}]"), where
        starter, other = name(2 * n - 1), name(2 * n)
        by_side = [starter, other] if side == 1 else [other, starter]
        assert d["names"] == by_side and p["names"] == by_side, where  # each name on the side it sits at
        assert p["turn"] == d["turn"], where  # the side whose time runs (the starter's, where it runs)
        if phase in ("running", "overtime", "offline"):
            assert p["turn"][side - 1] and not p["turn"][2 - side], where
        if phase not in TICKING:
            assert p["times"] == d["times"], where  # frozen, stopped or ended: the very same times
        if phase == "forfeit":
            assert f"side {side} ({starter})" in p["note"], where  # the forfeit named, not just 0:00
            assert p["times"][side - 1] == "-1:00", where
        if phase == "overtime":  # the starter's time below zero, on the starter's side; the other's untouched
            assert p["times"][side - 1].startswith("-") and p["times"][2 - side] == "1:00", where
    assert errors == [] and director.errors == []


def test_each_recorded_score_stands_against_the_player_who_scored_it(hall, browser):
    """The ended games recorded from the slip (side 1's score first): at both, the starter won 398-380.
    The public pairings list TSH's order (the starter first) with the starter's 398; the live card has
    the names and scores by side; the standings give the starter the win."""
    ended = [(n, side) for n, phase, side in tables() if phase == "ended"]
    for n, side in ended:
        slip = [398, 380] if side == 1 else [380, 398]
        status, out = post(hall.h, f"/api/result/{n}", {"slip": slip, "confirm": True})
        assert status == 200 and out.get("confirmed"), out
    pairings = wait(lambda: (g := {x["table"]: x for r in get_json(hall.public + "pairings.json")["rounds"] for x in r["games"]})
                    and all(g[n]["result"] for n, _ in ended) and g, 20)
    live = {t["table"]: t for t in get_json(hall.public + "live.json")["tables"]}
    rows = {r["name"]: r for d in get_json(hall.public + "standings.json")["divisions"] for r in d["rows"]}
    for n, side in ended:
        starter, other = name(2 * n - 1), name(2 * n)
        assert [p["name"] for p in pairings[n]["players"]] == [starter, other] and pairings[n]["result"] == [398, 380]
        assert live[n]["names"] == ([starter, other] if side == 1 else [other, starter])
        assert live[n]["result"] == ([398, 380] if side == 1 else [380, 398])
        assert rows[starter]["wins"] == 1 and rows[other]["losses"] == 1 and rows[starter]["spread"] == 18
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone.goto(hall.public)
    phone.click('#tabs button[data-tab="pairings"]')
    for n, _side in ended:
        row = f"{name(2 * n - 1)} (A{2 * n - 1}) v {name(2 * n)} (A{2 * n})"
        phone.wait_for_selector(f'#pairings tr:has(td:text-is("{row}")) td:text-is("398-380")', timeout=20000)
