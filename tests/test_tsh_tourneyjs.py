"""TSH's own tourney.js out (issue 28 item 3): the live file letsplayscrabble's overlays and TSH's
scoreboard poll, in TSH's format, with the results the console recorded.

- the writer is TSH's (JavaScript::Serializable): both real events' tourney.js, imported and written
  again with no result, are TSH's own bytes;
- the results go in as TSH holds them once the console's TSH export is entered: checked against
  tests/support/tshmodel.py (TSH's PAIR and Addscore) on the July 4 event's live round 3 (games,
  a penalty, a lateness forfeit, its bye);
- through `rackside hall console` as its own process with the event's config.tsh and .t files:
  results recorded from slips, GET /api/export/tourney.js and the file kept in `[console]
  tourney_js` read back with Rackside's reader (parse_tourney_js: the imported data plus the
  recorded scores) and by node evaluating it as a browser page does (`newt=...` as a script);
  nothing of the director's (reasons, names, penalties, slips) is in it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from rackside.hall.console.scoring import jsliteral, results, tsh, tshout
from rackside.hall.console.state.event import Event
from rackside.hall.console.scoring.resultstore import ResultStore
from rackside.hall.console.scoring.results import Recorded
from support.console import post
from support.tshmodel import Tsh

DATA = Path(__file__).parent / "data" / "tsh"
JULY4 = DATA / "july4-2025"
LATE = results.SLIP_ENDINGS[2]  # the slip's "lateness forfeit"
NODE = shutil.which("node")


def imported(folder: Path) -> Event:
    ev = Event(ResultStore(None))
    names = ["config.tsh", *[f for _, f in tsh.parse_config((folder / "config.tsh").read_text("utf-8")).divisions]]
    assert ev.import_files({n: (folder / n).read_bytes() for n in names}) == []
    return ev


def view(divisions) -> dict:
    """What a tourney.js carries of each player (the line a .t file had it on aside)."""
    return {d.name: {n: (p.name, p.rating, p.opponents, p.scores) for n, p in d.players.items()} for d in divisions}


def rendered(ev: Event) -> tuple[str, list[str]]:
    live, problems = tshout.live_divisions(list(ev.divisions.values()), ev.store.results(), ev.entry_config())
    return tshout.tourney_js(live, ev.config.options if ev.config else None), problems


# --- TSH's writer -------------------------------------------------------------------------------


@pytest.mark.parametrize("event", ["july4-2025", "albany-2024"])
def test_a_tourney_js_imported_and_written_again_is_tshs_own_file(event):
    text = (DATA / event / "tourney.js").read_text("utf-8")
    ev = Event(ResultStore(None))
    ev.import_files({"tourney.js": text.encode()})
    live, problems = tshout.live_divisions(list(ev.divisions.values()), [], ev.entry_config())
    out = tshout.tourney_js(live, None, {"tourney.js": tshout.carried(text)})
    assert problems == []
    # TSH's SaveJSON ends the file with ";\n"; the Albany copy lost its last line end where it was committed
    assert out == (text if text.endswith("\n") else text + "\n")


def test_values_are_written_as_tshs_javascript_serializable_writes_them():
    assert tshout.js({"b": "2329", "a": ["007", "-0.5", "1.", "A1", None, jsliteral.UNDEFINED, 3]}) == \
        '{"a":[7,-0.5,"1.","A1",undefined,undefined,3],"b":2329}'
    assert tshout.js("Smith, \"Jo\" \\ O'Neil") == '"Smith, \\"Jo\\" \\\\ O\'Neil"'
    # a text never ends the string (or the script) early: line ends, control characters, U+2028
    s = "a\nb\rc\x00d\u2028e</script>"
    assert jsliteral.parse(tshout.js(s)) == s and "\n" not in tshout.js(s) and "\r" not in tshout.js(s)
    assert tshout.js("Émile Ñuñez") == '"Émile Ñuñez"'  # UTF-8 as TSH writes it (:encoding(utf-8))


# --- the results, as TSH holds them --------------------------------------------------------------


def round3_results(ev: Event) -> list[Recorded]:
    """July 4, division A, round 3 (paired in TSH, not played): three games recorded, one with a
    time penalty (5.3), one a lateness forfeit (2.3.6: TSH's forfeit, each paired with a bye)."""
    games, byes, problems = ev.divisions["A"].round_plan(3)
    assert byes == [25] and not problems
    g1, g2, g3 = games[:3]
    at = "2025-07-06T15:00:00+00:00"
    return [
        Recorded("A", 3, 1, (g1.first.number, g1.second.number), (g1.first.name, g1.second.name), (421, 390), (421, 380),
                 (0, 10), (0, 45), "end", "side 2 -10 for 45 s overtime (5.3)", by="Chief TD", at=at),
        Recorded("A", 3, 2, (g2.first.number, g2.second.number), (g2.first.name, g2.second.name), (350, 502), (350, 502),
                 (0, 0), (0, 0), "end", "", by="Chief TD", at=at),
        Recorded("A", 3, 3, (g3.first.number, g3.second.number), (g3.first.name, g3.second.name), None, (-75, 75),
                 (0, 0), (0, 0), LATE, "lateness forfeit by side 1", (1,), by="Chief TD", at=at),
    ]


def test_the_recorded_results_are_what_tsh_holds_once_the_export_is_entered():
    ev = imported(JULY4)
    rows = round3_results(ev)
    for r in rows:
        ev.store.record(r, "Chief TD")
    model = Tsh.load(list(ev.divisions.values()), ev.config.options)
    assert model.errors() == [] and not [m for m in model.feed(ev.tsh_export("A", 3).text) if m.error]
    text, problems = rendered(ev)
    assert problems == []
    back = {d.name: d for d in tsh.parse_tourney_js(text)}
    trim = lambda seq: list(seq[:max((i + 1 for i, v in enumerate(seq) if v is not None), default=0)])  # noqa: E731
    for name, players in model.divisions.items():
        for n, p in players.items():
            assert (list(back[name].players[n].opponents), trim(back[name].players[n].scores)) == \
                   (trim(p.pairings), trim(p.scores)), (name, n)
    a = back["A"].players
    (g1, g2, late) = rows
    assert [a[n].scores[2] for n in g1.numbers] == [421, 380]  # the penalty off the slip's 390
    assert [(a[n].opponents[2], a[n].scores[2]) for n in late.numbers] == [(0, -75), (0, 75)]
    assert a[25].opponents[2] == 0 and a[25].scores[2] == 50  # the bye, at TSH's bye spread
    unplayed = next(n for n, p in a.items() if n not in {*g1.numbers, *g2.numbers, *late.numbers, 25})
    assert len(a[unplayed].opponents) == 3 and len(a[unplayed].scores) == 2  # paired, not played: as TSH writes it


def test_a_result_tsh_pairs_otherwise_is_left_out_and_said():
    ev = imported(JULY4)
    g = ev.divisions["A"].round_plan(3)[0][0]
    other = next(n for n in ev.divisions["A"].players if n not in (g.first.number, g.second.number, 25))
    ev.store.record(Recorded("A", 3, 1, (g.first.number, other), ("x", "y"), (400, 300), (400, 300), (0, 0), (0, 0),
                             "end", ""), "Chief TD")
    text, problems = rendered(ev)
    assert len(problems) == 1 and "table 1" in problems[0] and "pair" in problems[0]
    back = {d.name: d for d in tsh.parse_tourney_js(text)}["A"].players
    assert len(back[g.first.number].scores) == 2  # nothing written for it


# --- through `rackside hall console` -------------------------------------------------------------


PASSWORD = "tourney-js"
REASON = "clock 7 battery flat (private note)"
DIRECTOR = "Chief Ttd"


@pytest.fixture(scope="module")
def live_day(tmp_path_factory):
    from support.broker import Broker
    from support.console import ConsoleProcess, tsh_files

    folder = tmp_path_factory.mktemp("tourneyjs")
    broker = Broker(folder / "broker", tables="1-3", stations=0).start()
    extra = tsh_files(folder / "console", {f: (JULY4 / f).read_bytes() for f in ("config.tsh", "a.t", "b.t")}, round=3)
    (folder / "console" / "www").mkdir()
    extra += 'tourney_js = "www"\n'
    console = ConsoleProcess(broker, folder / "console", PASSWORD, extra=extra).start()
    try:
        yield console, folder / "console" / "www" / "tourney.js"
    finally:
        console.stop()
        broker.stop()


def node_reads(path: Path) -> dict:
    """node evaluates the file as a browser page's <script src="tourney.js"> does (a classic script
    in a fresh global: `newt=` makes a global) and reports what an overlay reads of it."""
    script = r"""
const fs = require('fs'), vm = require('vm');
const page = vm.createContext({});
vm.runInContext(fs.readFileSync(process.argv[1], 'utf8'), page, {filename: 'tourney.js'});
const t = page.newt, out = {};
if (typeof t !== 'object' || !Array.isArray(t.divisions) || typeof t.config !== 'object') throw new Error('not newt');
for (const d of t.divisions) {
  if (d.players[0] !== undefined) throw new Error('player 0 is not undefined');
  out[d.name] = {maxrp: d.maxrp, players: {}};
  d.players.slice(1).forEach((p, i) => {
    if (p.id !== i + 1 || typeof p.name !== 'string' || !Array.isArray(p.pairings) || !Array.isArray(p.scores)
        || typeof p.etc !== 'object' || !Array.isArray(p.etc.p12)) throw new Error('player ' + (i + 1));
    out[d.name].players[p.id] = [p.name, p.rating, p.pairings.map(x => x === undefined ? null : x),
                                 p.scores.map(x => x === undefined ? null : x)];
  });
}
console.log(JSON.stringify(out));
"""
    run = subprocess.run([NODE, "-e", script, str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_console_serves_and_keeps_a_live_tourney_js_with_the_recorded_results(live_day, tmp_path):
    from support.console import Http
    from support.wait import wait

    console, kept = live_day
    h = Http(console.url)
    assert h.call("GET", "/api/export/tourney.js")[0] == 401  # the director's, as every export
    h.token = h.login(PASSWORD, DIRECTOR)
    want = {d.name: d for d in imported(JULY4).divisions.values()}
    first = wait(lambda: kept.is_file() and kept.read_text("utf-8"))  # written at start: the event as imported
    assert view(tsh.parse_tourney_js(first)) == view(want.values())

    snap = json.loads(h.call("GET", "/api/snapshot")[1])
    number = {p.name: n for n, p in want["A"].players.items()}
    seated = sorted((t for t in snap["tables"] if t.get("division") == "A" and t.get("round") == 3), key=lambda t: t["table"])
    t1, t2 = seated[:2]
    no_clock = {"reason": REASON, "penalties": [0, 10]}
    assert post(h, f"/api/result/{t1['table']}", {"slip": [433, 401], "no_clock": no_clock, "confirm": True})[0] == 200
    status, out = post(h, f"/api/result/{t2['table']}", {"no_clock": {"reason": REASON, "ending": LATE, "forfeit": 2},
                                                         "confirm": True})
    assert status == 200 and out["scores"] == [75, -75], out

    expect = {k: {n: replace(p) for n, p in d.players.items()} for k, d in want.items()}

    def put(n, opp, score):
        p = expect["A"][n]
        expect["A"][n] = replace(p, opponents=p.opponents[:2] + (opp,) + p.opponents[3:], scores=p.scores[:2] + (score,))

    a1, b1 = (number[x] for x in t1["names"])
    a2, b2 = (number[x] for x in t2["names"])
    put(a1, b1, 433)
    put(b1, a1, 391)  # 10 off for overtime (5.3)
    put(a2, 0, 75)  # the lateness forfeit as TSH records it: each paired with a bye, the spread
    put(b2, 0, -75)
    put(25, 0, 50)  # the round's bye at TSH's bye spread, as the TSH export enters it

    status, raw, headers = h.call("GET", "/api/export/tourney.js")
    assert status == 200 and headers["Content-Type"].startswith("application/javascript")
    text = raw.decode("utf-8")
    assert text.startswith("newt={\"config\":{") and text.endswith("};\n")
    back = {d.name: d for d in tsh.parse_tourney_js(text)}
    assert view(back.values()) == {k: {n: (p.name, p.rating, p.opponents, p.scores) for n, p in d.items()}
                                   for k, d in expect.items()}  # the imported data plus the recorded scores
    # the .t files' annotations; TSH's player always has its first/second vector (`p12`, [] before round 1)
    assert all(p.etc == {"p12": (), **want[k].players[n].etc} for k, d in back.items() for n, p in d.players.items())
    for word in (REASON, DIRECTOR, "Chief", '"note"', '"slip"', '"penalt', '"reason"', '"by"', '"table"', "device", "command"):
        assert word not in text, word

    assert wait(lambda: kept.read_text("utf-8") == text, timeout=20)  # the kept file follows, at most every 2 s
    assert (kept.stat().st_mode & 0o777) == 0o644
    seen = node_reads(kept)
    assert {k: {int(n): v for n, v in d["players"].items()} for k, d in seen.items()} == {
        k: {n: [p.name, int(p.rating), [x for x in p.opponents], [x for x in p.scores]] for n, p in d.items()}
        for k, d in expect.items()}
    assert seen["A"]["maxrp"] == 2 and seen["B"]["maxrp"] == -1


def test_a_tourney_js_folder_that_cannot_be_written_is_refused_at_start(tmp_path):
    from rackside.hall.console.shell import config

    from support.console import cheap_hash

    cfg = tmp_path / "hall.toml"
    for value in ('"missing"', '""', "3"):
        cfg.write_text(f'[console]\nhall = "h"\nurl = "mqtt://127.0.0.1:1883"\nusername = "d"\nmqtt_password = "p"\n'
                       f'password = "{cheap_hash("x")}"\ntourney_js = {value}\n')
        with pytest.raises(config.ConfigError, match=r"\[console\] tourney_js must be the path of a folder"):
            config.load(cfg)
    (tmp_path / "www").mkdir()
    cfg.write_text(cfg.read_text().replace("tourney_js = 3", 'tourney_js = "www"'))
    assert config.load(cfg).tourney_js_dir == tmp_path / "www"


# --- the kept file and the results it is read from ------------------------------------------------


def test_a_burst_of_results_is_one_write_an_interval_and_a_refusing_disk_is_said_once(tmp_path, caplog):
    import asyncio
    import logging

    from rackside.hall.console.scoring import tshlive

    async def until(condition, timeout=15.0):
        """The condition, polled on the loop (the write itself runs on a thread)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition() and loop.time() < deadline:
            await asyncio.sleep(0.01)
        return condition()

    async def burst():
        renders = []
        f = tshlive.LiveFile(tmp_path, lambda: len(renders), lambda g: renders.append(g) or f"newt={{}};// {g}\n", every_s=60)
        task = asyncio.create_task(f.run())
        assert await until(lambda: f.written)  # written at start
        for _ in range(100):  # a burst within the interval: nothing more is built or written yet
            f.changed()
            await asyncio.sleep(0)
        task.cancel()
        return renders, f

    renders, f = asyncio.run(burst())
    assert renders == [0] and f.path.read_text() == "newt={};// 0\n" and (f.path.stat().st_mode & 0o777) == 0o644

    async def refused():
        tries = []
        f = tshlive.LiveFile(tmp_path / "not-a-folder" / "x", lambda: 1, lambda g: tries.append(g) or "newt={};\n", every_s=0)
        task = asyncio.create_task(f.run())
        for n in (1, 2, 3):
            f.changed()
            assert await until(lambda: len(tries) >= n and f.failing)
        task.cancel()
        return f

    with caplog.at_level(logging.ERROR, "rackside.hall.console"):
        asyncio.run(refused())
    assert len([r for r in caplog.records if "cannot be written" in r.getMessage()]) == 1  # said once, tried each time


def test_the_results_are_decoded_once_and_a_correction_is_read_again():
    from rackside.hall.console.scoring import tshlive

    ev = imported(JULY4)
    rows = round3_results(ev)
    ev.store.record(rows[0], "Chief TD")
    kept = tshlive.Rows()
    first = tshlive.gather(ev, kept)[1]
    again = tshlive.gather(ev, kept)[1]
    assert first == again and first[0] is again[0]  # not decoded again
    ev.store.record(replace(rows[0], scores=(430, 380), slip=(430, 390)), "Chief TD", reason="slip misread")
    (now,) = tshlive.gather(ev, kept)[1]
    assert now.scores == (430, 380)
    text, _ = tshlive.render(tshlive.gather(ev, kept))
    assert {d.name: d for d in tsh.parse_tourney_js(text)}["A"].players[rows[0].numbers[0]].scores[2] == 430
