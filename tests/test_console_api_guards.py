"""The console's API under hostile or mistaken input, driven straight through the ASGI app (no HTTP
client library is installed).

The login's lockout holds when wrong passwords arrive all at once, not only one after another.

Five wrong tries lock the login for 60 s (issue 13, "Login"). The lockout was checked before the
password's scrypt ran off the event loop and counted only after, so a burst of concurrent tries all
passed the check: twenty parallel guesses were twenty guesses, and a burst of any size was let
through."""

from __future__ import annotations

import asyncio
import json

from rackside.hall.console.common import limits
from rackside.hall.console.shell.app import Console, build_app

from support.console import call, cheap_hash, logged_in


def test_a_burst_of_wrong_passwords_gets_five_tries_not_all():
    console = Console("h", cheap_hash("right password"))
    app = build_app(console, secret_key="k" * 64)

    async def go():
        status, headers, body = await call(app, "GET", "/api/csrf", {})
        cookie = headers["set-cookie"].split(";", 1)[0]
        token = json.loads(body)["csrf"]
        h = {"cookie": cookie, "x-csrf-token": token, "content-type": "application/json"}
        wrong = [call(app, "POST", "/api/login", h, json.dumps({"password": f"guess {i}"}).encode()) for i in range(20)]
        burst = await asyncio.gather(*wrong)
        right = await call(app, "POST", "/api/login", h, json.dumps({"password": "right password"}).encode())
        return [s for s, _, _ in burst], right[0]

    statuses, right = asyncio.run(go())
    assert statuses.count(401) == limits.LOGIN_FREE_TRIES, statuses  # five passwords tried, the rest refused unheard
    assert statuses.count(429) == 20 - limits.LOGIN_FREE_TRIES, statuses
    assert right == 429  # locked: even the right password waits the 60 s out


def test_a_round_start_that_is_not_a_time_is_refused_and_breaks_nothing():
    """`start` was taken by float(): "nan", "inf" or 1e300 were kept, after which the snapshot could
    not be written as JSON (every page load failed) and each late start failed with a 500."""
    console = Console("h", cheap_hash("pw"))
    app = build_app(console, secret_key="k" * 64)

    async def go():
        h = await logged_in(app, "pw")
        answers = []
        for start in ("nan", "inf", "-inf", 1e300, "Infinity"):
            try:
                s, _, _ = await call(app, "POST", "/api/round", h, json.dumps({"start": start}).encode())
            except ValueError as e:  # the response could not even be rendered
                s = repr(e)
            answers.append(s)
        snap, _, _ = await call(app, "GET", "/api/snapshot", h)
        return answers, snap

    answers, snap = asyncio.run(go())
    assert answers == [400] * 5
    assert snap == 200 and console.state.round.start is None


def test_an_export_names_only_a_division_the_event_has():
    """?division= went unchecked into the download's file name: a name outside Latin-1 could not be
    written as a header (a 500) and a quote or semicolon rewrote the Content-Disposition."""
    console = Console("h", cheap_hash("pw"))
    console.event.import_files({"config.tsh": b"division A a.t\n", "a.t": b"Ann 1500 2;\nBob 1500 1;\n"})
    app = build_app(console, secret_key="k" * 64)

    async def go():
        h = await logged_in(app, "pw")
        answers = []
        for path in ("/api/export/round.csv", "/api/export/tsh.txt"):
            for division in ("%C3%A4", "A%22%3B%20x%3D", "B"):
                try:
                    s, _, _ = await call(app, "GET", f"{path}?division={division}&round=1", h)
                except UnicodeEncodeError as e:  # the header could not even be written
                    s = repr(e)
                answers.append(s)
            s, headers, _ = await call(app, "GET", f"{path}?division=A&round=1", h)
            answers.append((s, headers["content-disposition"]))
        return answers

    assert asyncio.run(go()) == [400, 400, 400, (200, 'attachment; filename="A-round1.csv"'),
                                 400, 400, 400, (200, 'attachment; filename="A-round1.tsh"')]


def test_a_table_sending_nan_cannot_break_the_directors_page():
    """Python's json reads NaN and Infinity; JSON (the page's JSON.parse, Starlette's JSONResponse)
    does not. One table's credentials (a faulty or hostile Pi) put a retained state with NaN on
    the broker, and every snapshot of the whole hall failed to render from then on."""
    from rackside.hall.console.state.hallstate import HallState

    s = HallState("h")
    s.on_message("rackside/v1/h/table/3/state", b'{"seq": 1, "game": "g", "phase": "running", "players": [{"remaining_ms": NaN}]}')
    s.on_message("rackside/v1/h/table/3/event", b'{"seq": 2, "game": "g", "kind": "input", "t": Infinity}')
    s.on_message("rackside/v1/h/station/1/challenge", b'{"id": "x", "table": 3, "verdict": -Infinity}')
    s.on_message("rackside/v1/h/table/3/ack", b'{"id": "c", "ok": true, "seq": 1e400}')  # a float too big: inf
    s.on_message("rackside/v1/h/table/4/status", b"online")
    json.dumps(s.snapshot(), allow_nan=False)  # what /api/snapshot renders
    json.dumps(s.detail(3), allow_nan=False)
    snap = s.snapshot()
    assert [t["table"] for t in snap["tables"]] == [4]  # nothing table 3 said was kept: no tile
    assert len(snap["problems"]) == 3 and all(p.startswith("table 3: ") for p in snap["problems"])  # the hall's problems
    s.on_message("rackside/v1/h/table/3/status", b"online")
    s.on_message("rackside/v1/h/table/3/state", b'{"seq": 1, "game": "g", "phase": "running", "players": [{"remaining_ms": NaN}]}')
    three = next(t for t in s.snapshot()["tables"] if t["table"] == 3)
    assert three["state"] is None and len(three["problems"]) == 1  # a known table's on its own tile
    assert len(s.snapshot()["station_problems"]["1"]) == 1


def test_a_station_cannot_rewrite_another_stations_challenge():
    """Challenges were kept by their id alone, so station 2 publishing station 1's id replaced
    station 1's verdict and per-word results on the director's screen (ids are each station's own:
    its challenge log's)."""
    from rackside.hall.console.state.hallstate import HallState

    s = HallState("h")
    s.on_message("rackside/v1/h/table/3/status", b"online")
    s.on_message("rackside/v1/h/station/1/challenge", b'{"id": "7", "table": 3, "verdict": "VALID", "words": 1}')
    s.on_message("rackside/v1/h/station/1/detail", b'{"id": "7", "table": 3, "words": [{"word": "QI", "valid": true}]}')
    s.on_message("rackside/v1/h/station/2/challenge", b'{"id": "7", "table": 3, "verdict": "INVALID", "words": 1}')
    s.on_message("rackside/v1/h/station/2/detail", b'{"id": "7", "table": 3, "words": [{"word": "QI", "valid": false}]}')
    got = sorted((c["station"], c["verdict"], c["word_results"][0]["valid"]) for c in s.detail(3)["challenges"])
    assert got == [("1", "VALID", True), ("2", "INVALID", False)]


def test_the_rounds_game_time_is_one_every_clock_takes():
    """The console took game times up to 180 minutes; the clock's own limit ([clock] game_time,
    game.rules_table) is 99:59, so every new_game of such a round was refused by the clocks."""
    console = Console("h", cheap_hash("pw"))
    app = build_app(console, secret_key="k" * 64)

    async def go():
        h = await logged_in(app, "pw")
        out = []
        for ms in (120 * 60_000, 59_000, "25:00", 30 * 60_000):
            out.append((await call(app, "POST", "/api/round", h, json.dumps({"game_time_ms": ms}).encode()))[0])
        return out

    assert asyncio.run(go()) == [400, 400, 400, 200]
    assert console.state.round.game_time_ms == 30 * 60_000


def test_a_round_is_one_tsh_files_can_hold():
    """Round numbers went up to 999, the table limit's figure (a copy of it, issue 24 item 2); a
    .t file's rounds are read up to tsh.MAX_ROUNDS, so a round past it could hold no pairing."""
    from rackside.hall.console.scoring import tsh

    console = Console("h", cheap_hash("pw"))
    app = build_app(console, secret_key="k" * 64)

    async def go():
        h = await logged_in(app, "pw")
        return [(await call(app, "POST", "/api/round", h, json.dumps({"number": n}).encode()))[0]
                for n in (tsh.MAX_ROUNDS + 1, 999, 0, tsh.MAX_ROUNDS)]

    assert asyncio.run(go()) == [400, 400, 400, 200]
    assert console.state.round.number == tsh.MAX_ROUNDS
