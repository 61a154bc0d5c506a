"""Every HTTP endpoint of the director's console, in-process (issue 37 item 4): the console made as
`rackside hall console` makes it and served by Starlette's TestClient (support.inproc), the director
logged in through the login page's own flow. For each route of the app: it needs the director's
session, a POST needs the session's CSRF token, a bad request is refused with one clear line, and
the good path does what it says. `test_every_route_has_an_in_process_test` fails for a route
added to the app with no row in ENDPOINTS and no good path here.

Whole journeys (a clock's ack over the broker, the page in Chromium, the console's process killed
and started again) stay where they were: tests/test_console_browser.py, test_console_devices.py,
test_hall_update.py and the others that start `rackside hall console`.

Tests moved here from a console process or the demo hall to in-process, each with every assertion
it had (issue 37 item 4; what stood for the broker is said at each):
- test_console_devices.py::test_the_devices_api_needs_the_directors_session
    -> test_the_devices_api_needs_the_directors_session (the fleet on a real broker, the console in-process)
- test_console_browser.py::test_nothing_without_login_and_csrf_on_every_command
    -> test_nothing_without_login_and_csrf_on_every_command (table 5's clock is an InProcessClock; the
       command to table 8 is the one the console publishes, recorded)
- test_console_browser.py::test_five_wrong_passwords_lock_the_login
    -> test_five_wrong_passwords_lock_the_login
- test_hall_update.py::test_the_upload_has_its_own_limit_and_needs_the_director
    -> test_hall_update.py::test_the_upload_has_its_own_limit_and_needs_the_director (in-process there)
- test_hall_update.py::test_the_console_refuses_a_bundle_with_links_or_paths_outside_it
    -> test_hall_update.py::test_the_console_refuses_a_bundle_with_links_or_paths_outside_it (in-process)
- test_hall_update.py::test_between_rounds_a_running_game_gets_the_update_to_switch_after_it
    -> test_hall_update.py::test_between_rounds_a_running_game_gets_the_update_to_switch_after_it
       (in-process: the table's retained state delivered as the bridge would, the command recorded)
- test_hall_update.py::test_a_downgrade_within_one_release_is_told_by_the_build_times_the_console_was_given
    -> test_hall_update.py::test_a_downgrade_within_one_release_is_told_by_the_build_times_the_console_was_given
       (in-process, as the one before)
- test_console_paperless.py::test_with_slips_hold_a_slip_that_agrees_waits_for_one_click,
  test_a_slip_before_its_clock_result_is_judged_again_when_the_result_comes and
  test_a_slip_of_a_game_the_table_is_not_on_is_ignored
    -> the same tests there on support.paperless.InProcessHall: the console in-process, each keypad
       clock (support.keypadclock, the real clock core) handing its messages to the console as the
       bridge does and taking the console's commands (its slip_outcome) and acking them; the
       module's shared hall and the SIGKILL test keep the broker and the console's process
"""

from __future__ import annotations

import base64
import hashlib
import json
import queue
import threading
import time
from dataclasses import dataclass

import pytest
from support.console import post
from support.inproc import PASSWORD, inproc_console
from support.paperless import A_T, CONFIG_TSH
from support.wait import wait

from rackside.hall.console.state import health
from rackside.hall.console.common import limits
from rackside.hall.console.shell.app import Console, build_app
from rackside.hall.console.shell.app import routes as console_routes
from rackside.hall.console.scoring.resultstore import AUDIT_KINDS
from rackside.hall.wire import update as wire_update

NOT_AN_OBJECT = "the request body must be a JSON object"
CSRF = "missing or wrong CSRF token"


@dataclass(frozen=True)
class Endpoint:
    url: str  # the path asked, its parameters filled
    anonymous: int  # what a browser with no session gets: 401 (the API), 303 (a page: to /login), 200 (public), 403 (a token)
    bad: tuple | None  # (body or query path, status, what the one line says); None: it takes no input (NO_INPUT says why)


ENDPOINTS = {
    ("GET", "/"): Endpoint("/", 303, None),
    ("GET", "/login"): Endpoint("/login", 200, None),
    ("GET", "/favicon.ico"): Endpoint("/favicon.ico", 204, None),
    ("GET", "/api/csrf"): Endpoint("/api/csrf", 200, None),
    ("POST", "/api/login"): Endpoint("/api/login", 200, ({"password": 12}, 401, "wrong password")),
    ("POST", "/api/logout"): Endpoint("/api/logout", 401, None),
    ("GET", "/static/{name}"): Endpoint("/static/app.js", 401, ("/static/no-such.js", 404, "not found")),
    ("GET", "/api/events"): Endpoint("/api/events", 401, None),
    ("GET", "/api/snapshot"): Endpoint("/api/snapshot", 401, None),
    ("GET", "/api/table/{n:int}"): Endpoint("/api/table/5", 401, ("/api/table/6", 404, "no such table")),
    ("POST", "/api/events/{stream}/watch"): Endpoint("/api/events/any/watch", 401, ({"table": "x"}, 400, "table")),
    ("POST", "/api/command"): Endpoint("/api/command", 401, ({"cmd": "pause", "tables": [1]}, 400, "cmd 'pause': allowed are")),
    ("POST", "/api/round"): Endpoint("/api/round", 401, ({"number": 0}, 400, "round")),
    ("POST", "/api/tsh"): Endpoint("/api/tsh", 401, ({"files": []}, 400, "files must be a non-empty list")),
    ("POST", "/api/division/remove"): Endpoint("/api/division/remove", 401, ({"division": ""}, 400, "division: allowed is")),
    ("POST", "/api/result/{n:int}"): Endpoint("/api/result/3", 401, ({"slip": ["many", 2]}, 400, "score")),
    ("GET", "/api/results"): Endpoint("/api/results", 401, ("/api/results?round=0", 400, "round")),
    ("GET", "/api/export/round.csv"): Endpoint("/api/export/round.csv", 401, ("/api/export/round.csv?round=0", 400, "round")),
    ("GET", "/api/export/tsh.txt"): Endpoint("/api/export/tsh.txt", 401, ("/api/export/tsh.txt", 400, "TSH's score entry needs TSH files")),
    ("GET", "/api/export/tourney.js"): Endpoint("/api/export/tourney.js", 401, None),
    ("GET", "/api/audit"): Endpoint("/api/audit", 401, ("/api/audit?kind=nope", 400, "kind 'nope': allowed are")),
    ("GET", "/audit"): Endpoint("/audit", 303, None),
    ("GET", "/ready"): Endpoint("/ready", 303, None),
    ("GET", "/api/ready"): Endpoint("/api/ready", 401, None),
    ("POST", "/api/health-thresholds"): Endpoint("/api/health-thresholds", 401, ({"cpu_temp_c": 500}, 400, "threshold cpu_temp_c")),
    ("GET", "/devices"): Endpoint("/devices", 303, None),
    ("GET", "/api/devices"): Endpoint("/api/devices", 401, None),
    ("POST", "/api/devices/assign"): Endpoint("/api/devices/assign", 401, ({"code": "../x", "number": 1}, 400, "allowed are the 12 digits")),
    ("POST", "/api/devices/revoke"): Endpoint("/api/devices/revoke", 401, ({"device": "../x"}, 400, "allowed are the code the device shows")),
    ("POST", "/api/devices/remove"): Endpoint("/api/devices/remove", 401, ({"device": "../x"}, 400, "allowed are the code the device shows")),
    ("GET", "/api/update"): Endpoint("/api/update", 401, None),
    ("POST", "/api/update/bundle"): Endpoint("/api/update/bundle", 401, (b"x", 400, "X-Bundle-SHA256")),
    ("POST", "/api/update/send"): Endpoint("/api/update/send", 401, ({"tables": "all"}, 400, "no bundle uploaded yet")),
    ("GET", wire_update.DOWNLOAD_PATH): Endpoint(wire_update.DOWNLOAD_PATH, 403, None),
    ("POST", "/api/call/{n:int}"): Endpoint("/api/call/1", 401, ({"call": "call-1", "action": "x"}, 400, "action must be ack or resolve")),
    ("GET", "/api/start-absent"): Endpoint("/api/start-absent", 401, None),
    ("POST", "/api/start-absent"): Endpoint("/api/start-absent", 401, ({"tables": [1]}, 400, "the round has no scheduled start")),
    ("POST", "/api/slip/{n:int}"): Endpoint("/api/slip/1", 401, ({"game": "game-000009", "action": "record"}, 404, "has no held slip")),
    ("GET", "/rules"): Endpoint("/rules", 303, None),
    ("GET", "/api/event-rules"): Endpoint("/api/event-rules", 401, None),
    ("POST", "/api/event-rules"): Endpoint("/api/event-rules", 401, ({"rules": {"nope": 1}}, 400, "nope")),
}
# An endpoint with no bad row takes no input to refuse: said here, so a new one is not left out unawares
NO_INPUT = {
    ("GET", "/"): "a page", ("GET", "/login"): "a page", ("GET", "/favicon.ico"): "nothing", ("GET", "/api/csrf"): "no input",
    ("POST", "/api/logout"): "its body is not read", ("GET", "/api/events"): "no input", ("GET", "/api/snapshot"): "no input",
    ("GET", "/api/export/tourney.js"): "no input", ("GET", "/audit"): "a page", ("GET", "/ready"): "a page",
    ("GET", "/api/ready"): "no input", ("GET", "/devices"): "a page", ("GET", "/api/devices"): "no input",
    ("GET", "/api/update"): "no input", ("GET", wire_update.DOWNLOAD_PATH): "only its token (anonymous: 403, test_auth)",
    ("GET", "/api/start-absent"): "no input", ("GET", "/rules"): "a page", ("GET", "/api/event-rules"): "no input",
}
POSTS = sorted(k for k in ENDPOINTS if k[0] == "POST")
GOOD: dict = {}


def good(method: str, path: str):
    """The good path of one route (its key in ENDPOINTS): a test taking a fresh in-process console."""
    def register(fn):
        GOOD[(method, path)] = fn
        return fn
    return register


def app_routes() -> set[tuple[str, str]]:
    app = build_app(Console("h", "scrypt:16:8:1:x:y"), secret_key="k" * 64)
    return {(m, r.path) for r in app.routes for m in (r.methods or ()) if m != "HEAD"}


def test_every_route_has_an_in_process_test():
    routes = app_routes()
    composed = console_routes(Console("h", "scrypt:16:8:1:x:y"))  # every feature's routes and the shell's
    assert {(m, r.path) for r in composed for m in r.methods if m != "HEAD"} == routes  # the app serves those, no more
    assert sorted(routes - set(ENDPOINTS)) == [], "a route with no row in ENDPOINTS (auth, CSRF, a bad request)"
    assert sorted(set(ENDPOINTS) - routes) == [], "a row for a route the app does not have"
    assert sorted(routes - set(GOOD)) == [], "a route with no good-path test here"
    assert sorted(k for k, e in ENDPOINTS.items() if e.bad is None and k not in NO_INPUT) == []
    assert sorted(k for k in NO_INPUT if ENDPOINTS[k].bad is not None) == []


def one_line(raw: bytes) -> str:
    """A refusal's error: {"error": one line of text} (a static file not found: the line itself)."""
    err = json.loads(raw)["error"] if raw.startswith(b"{") else raw.decode()
    assert isinstance(err, str) and err and "\n" not in err and len(err) <= 400, err
    return err


# --- one console for the refusals: none of them changes anything ---------------------------------


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    with inproc_console(tmp_path_factory.mktemp("inproc")) as c:
        c.clock(5)  # table 5 is known (its detail), 6 is not
        yield c


@pytest.mark.parametrize("key", sorted(ENDPOINTS), ids="-".join)
def test_auth(shared, key):
    """Without a session: the API answers 401, a page sends to /login, the login's own routes and the
    bundle's token-checked download are what they are; a POST carries a real token, so it is the
    session that is missing, not the CSRF token."""
    method, _ = key
    e = ENDPOINTS[key]
    anon = shared.http()
    headers = {"X-CSRF-Token": anon.csrf()}
    body = {"password": PASSWORD} if key == ("POST", "/api/login") else {}
    status, raw, h = anon.call(method, e.url, body if method == "POST" else None, headers)
    assert status == e.anonymous, (key, status, raw)
    if status == 401:
        assert raw in (b"Unauthorized", b"login required") or one_line(raw) == "login required", raw
    if status == 303:
        assert h["location"] == "/login"
    if status == 403:
        assert one_line(raw) == "no update for this token"
    assert shared.published.commands == []


@pytest.mark.parametrize("key", POSTS, ids="-".join)
def test_csrf_refused(shared, key):
    """The director's session with no CSRF token, or a forged one: 403, nothing done (the login's
    own POST too)."""
    d = shared.director if key != ("POST", "/api/login") else shared.http()
    before = json.loads(shared.director.call("GET", "/api/snapshot")[1])
    body = {"password": PASSWORD} if key == ("POST", "/api/login") else {"tables": [1], "cmd": "identify"}
    for headers in ({}, {"X-CSRF-Token": "forged"}):
        status, raw, _ = d.call("POST", ENDPOINTS[key].url, body, headers)
        assert status == 403 and one_line(raw) == CSRF, (key, status, raw)
    assert shared.published.commands == []
    assert json.loads(shared.director.call("GET", "/api/snapshot")[1]) == before


@pytest.mark.parametrize("key", sorted(k for k, e in ENDPOINTS.items() if e.bad), ids="-".join)
def test_a_bad_request_is_refused_with_one_line(shared, key):
    method, _ = key
    e = ENDPOINTS[key]
    given, status_wanted, says = e.bad
    d = shared.director if key != ("POST", "/api/login") else shared.http()
    token = d.token or d.csrf()
    if method == "GET":
        status, raw, _ = d.call("GET", given)
    elif isinstance(given, bytes):  # a bundle: the bytes themselves
        r = d.client.post(e.url, content=given, headers={"X-CSRF-Token": token, "Content-Type": "application/octet-stream"})
        status, raw = r.status_code, r.content
    else:
        status, raw, _ = d.call("POST", e.url, given, {"X-CSRF-Token": token})
        if key != ("POST", "/api/login"):  # and a body that is not a JSON object, refused as such
            r = d.client.post(e.url, content=b"[1]", headers={"X-CSRF-Token": token, "Content-Type": "application/json"})
            assert r.status_code == 400 and one_line(r.content) == NOT_AN_OBJECT, (key, r.status_code, r.content)
    assert status == status_wanted and says in one_line(raw), (key, status, raw)
    assert shared.published.commands == []


# --- the good paths: a fresh console each -----------------------------------------------------------


def with_tsh(tmp_path):
    """Division A's TSH files (support.paperless: round 1, a game at each of tables 1 to 6) as the config names them."""
    (tmp_path / "config.tsh").write_text(CONFIG_TSH)
    (tmp_path / "a.t").write_bytes(A_T.encode("latin-1"))
    return inproc_console(tmp_path, tsh=[tmp_path / "config.tsh", tmp_path / "a.t"], round=1)


def get_json(h, path):
    status, raw, _ = h.call("GET", path)
    assert status == 200, (path, status, raw)
    return json.loads(raw)


@good("GET", "/")
def _index(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, raw, h = c.director.call("GET", "/")
        assert status == 200 and b"<html" in raw.lower() and h["cache-control"] == "no-store"
        assert "default-src" in h["content-security-policy"]  # guard.SecurityHeaders, in front of every answer


@good("GET", "/login")
def _login_page(tmp_path, request):
    with inproc_console(tmp_path) as c:
        anon = c.http()
        status, raw, h = anon.call("GET", "/login")
        assert status == 200 and b"password" in raw.lower() and "rackside_console=" in h["set-cookie"]
        assert "samesite=strict" in h["set-cookie"].lower() and "httponly" in h["set-cookie"].lower()


@good("GET", "/favicon.ico")
def _favicon(tmp_path, request):
    with inproc_console(tmp_path) as c:
        assert c.http().call("GET", "/favicon.ico")[:2] == (204, b"")


@good("GET", "/api/csrf")
def _csrf(tmp_path, request):
    with inproc_console(tmp_path) as c:
        anon = c.http()
        first = get_json(anon, "/api/csrf")
        assert first["user"] is None and len(first["csrf"]) >= 32
        assert get_json(anon, "/api/csrf")["csrf"] == first["csrf"]  # the session's, until it logs in
        assert get_json(c.director, "/api/csrf") == {"csrf": c.director.token, "user": "Sam"}


@good("POST", "/api/login")
def _login(tmp_path, request):
    with inproc_console(tmp_path) as c:
        h = c.http()
        before = h.csrf()
        status, raw, headers = h.call("POST", "/api/login", {"password": "wrong"}, {"X-CSRF-Token": before})
        assert status == 401 and one_line(raw) == "wrong password"
        token = h.login(PASSWORD, "Chief TD")
        assert token != before  # a new session, a new token (no fixation)
        assert get_json(h, "/api/csrf")["user"] == "Chief TD"
        assert len(c.console.sessions.live) == 2  # the director's fixture and this one


@good("POST", "/api/logout")
def _logout(tmp_path, request):
    with inproc_console(tmp_path) as c:
        h = c.http()
        h.login()
        assert post(h, "/api/logout", {}) == (200, {"ok": True})
        assert h.call("GET", "/api/snapshot")[0] == 401
        assert c.director.call("GET", "/api/snapshot")[0] == 200  # another session stays


@good("GET", "/static/{name}")
def _static(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, raw, h = c.director.call("GET", "/static/app.js")
        assert status == 200 and h["cache-control"] == "no-cache" and len(raw) > 1000
        assert c.http().call("GET", "/static/login.js")[0] == 200  # the login page's own, to anyone
        assert c.director.call("GET", "/static/..%2fapp.py")[0] == 404


@good("GET", "/api/events")
def _events(tmp_path, request):
    with inproc_console(tmp_path) as c:
        with c.director.client.stream("GET", "/api/events") as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            lines = r.iter_lines()
            assert next(lines) == "event: snapshot"
            first = json.loads(next(lines).removeprefix("data: "))
            assert first["user"] == "Sam" and first["stream"] and "tables" in first and first["broker_up"] is False
            c.clock(2)  # a table heard: its tile comes on the open stream
            kinds = []
            for line in lines:
                if line.startswith("event: "):
                    kinds.append(line[7:])
                if "table" in kinds:
                    break
        assert "table" in kinds


@good("GET", "/api/snapshot")
def _snapshot(tmp_path, request):
    with inproc_console(tmp_path) as c:
        c.clock(4)
        snap = get_json(c.director, "/api/snapshot")
        assert [t["table"] for t in snap["tables"]] == [4] and snap["rules"] and "divisions" in snap


@good("GET", "/api/table/{n:int}")
def _table(tmp_path, request):
    with inproc_console(tmp_path) as c:
        clock = c.clock(5)
        clock.press(1)
        detail = get_json(c.director, "/api/table/5")
        assert detail["tile"]["table"] == 5 and any(e.get("input") == "press" for e in detail["history"]), detail


@good("POST", "/api/events/{stream}/watch")
def _watch(tmp_path, request):
    with inproc_console(tmp_path) as c:
        c.clock(5).press(1)
        with c.director.client.stream("GET", "/api/events") as r:
            lines = r.iter_lines()
            next(lines)
            stream = json.loads(next(lines).removeprefix("data: "))["stream"]
            assert post(c.director, f"/api/events/{stream}/watch", {"table": 5}) == (200, {"ok": True})
            for line in lines:
                if line == "event: detail" or line.startswith("event: detail"):
                    break
            detail = json.loads(next(lines).removeprefix("data: "))
            assert detail["tile"]["table"] == 5, detail
        assert post(c.director, "/api/events/nope/watch", {"table": 5})[0] == 410  # not this session's stream


@good("POST", "/api/command")
def _command(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, out = post(c.director, "/api/command", {"cmd": "identify", "tables": [8, 3]})
        assert status == 200 and [s["table"] for s in out["sent"]] == [3, 8]
        assert [(n, cmd["cmd"], cmd["by"]) for n, cmd in c.published.commands] == [(3, "identify", "Sam"), (8, "identify", "Sam")]
        assert all("sent_at" not in cmd for _, cmd in c.published.commands)  # the console's note stays in its log
        logged = [json.loads(line) for line in (c.home / "console-commands.jsonl").read_text().splitlines()]
        assert [(x["table"], x["cmd"], x["id"]) for x in logged] == [(n, cmd["cmd"], cmd["id"]) for n, cmd in c.published.commands]
        c.published.refuse = "the broker is away"
        status, out = post(c.director, "/api/command", {"cmd": "identify", "tables": [1]})
        assert status == 503 and "not sent: the broker is away" in out["error"]


@good("POST", "/api/round")
def _round(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, out = post(c.director, "/api/round", {"number": 2, "late_after_s": 300, "game_time_ms": 20 * 60_000})
        assert status == 200 and (out["number"], out["late_after_s"], out["game_time_ms"]) == (2, 300, 1_200_000)
        assert c.console.event.saved_round()["number"] == 2  # kept for a restart


@good("POST", "/api/tsh")
def _tsh(tmp_path, request):
    with inproc_console(tmp_path) as c:
        files = [{"name": "config.tsh", "data": base64.b64encode(CONFIG_TSH.encode()).decode()},
                 {"name": "a.t", "data": base64.b64encode(A_T.encode("latin-1")).decode()}]
        status, out = post(c.director, "/api/tsh", {"files": files})
        assert status == 200 and [d["name"] for d in out["divisions"]] == ["A"], out
        tiles = {t["table"]: t for t in get_json(c.director, "/api/snapshot")["tables"]}
        assert sorted(tiles) == [1, 2, 3, 4, 5, 6]  # round 1 seated: a game at each table


@good("POST", "/api/division/remove")
def _division_remove(tmp_path, request):
    with with_tsh(tmp_path) as c:
        status, out = post(c.director, "/api/division/remove", {"division": "A", "reason": "entered twice"})
        assert status == 200 and out["divisions"] == [], out
        audit = get_json(c.director, "/api/audit")["audit"]
        assert audit[0]["who"] == "Sam" and audit[0]["reason"] == "entered twice" and audit[0]["division"] == "A", audit[0]


@good("POST", "/api/result/{n:int}")
def _result(tmp_path, request):
    with inproc_console(tmp_path) as c:
        body = {"slip": [300, 280], "names": ["Ida", "Al"], "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]}}
        status, out = post(c.director, "/api/result/3", body)
        assert status == 200 and out["scores"] == [300, 280] and not out.get("confirmed"), out  # worked out, not kept
        status, out = post(c.director, "/api/result/3", {**body, "confirm": True})
        assert status == 200 and out["recorded"] == "slip" and out["confirmed"], out
        assert post(c.director, f"/api/result/{limits.MAX_TABLE + 1}", {**body, "confirm": True})[0] == 404


@good("GET", "/api/export/round.csv")
def _export_csv(tmp_path, request):
    with inproc_console(tmp_path) as c:
        body = {"slip": [300, 280], "names": ["Ida", "Al"], "confirm": True,
                "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]}}
        assert post(c.director, "/api/result/3", body)[0] == 200
        status, raw, h = c.director.call("GET", "/api/export/round.csv?round=1")
        assert status == 200 and h["content-type"].startswith("text/csv")
        assert h["content-disposition"] == 'attachment; filename="tables-round1.csv"'
        assert "300" in raw.decode() and "Ida" in raw.decode()


@good("GET", "/api/results")
def _results(tmp_path, request):
    with inproc_console(tmp_path) as c:
        body = {"slip": [300, 280], "names": ["Ida", "Al"], "confirm": True,
                "no_clock": {"reason": "no clock at this table", "penalties": [0, 0]}}
        assert post(c.director, "/api/result/3", body)[0] == 200
        status, raw, h = c.director.call("GET", "/api/results?round=1")
        assert status == 200 and h["content-type"].startswith("application/json"), (status, raw)
        view = json.loads(raw)
        keys = [col["key"] for col in view["columns"]]
        csv_head = c.director.call("GET", "/api/export/round.csv?round=1")[1].decode().splitlines()[0]
        assert keys == csv_head.split(",")  # the page's columns are the CSV's: one view (results.round_view)
        assert view["round"] == 1 and len(view["rows"]) == 1
        row = dict(zip(keys, view["rows"][0]))
        assert (row["table"], row["name1"], row["slip1"], row["name2"], row["slip2"]) == (3, "Ida", 300, "Al", 280)
        status, raw, _ = c.director.call("GET", "/api/results?division=Z")
        assert status == 400 and "no division 'Z'" in one_line(raw)


@good("GET", "/api/export/tsh.txt")
def _export_tsh(tmp_path, request):
    with with_tsh(tmp_path) as c:
        status, raw, h = c.director.call("GET", "/api/export/tsh.txt?division=A&round=1")
        assert status == 200 and h["content-disposition"] == 'attachment; filename="A-round1.tsh"', (status, raw)
        assert h["x-rackside-unscored-players"] == ",".join(map(str, range(1, 13)))  # none recorded yet: each player named
        status, raw, _ = c.director.call("GET", "/api/export/tsh.txt?division=Z")
        assert status == 400 and "no division 'Z' to export" in one_line(raw)


@good("GET", "/api/export/tourney.js")
def _export_tourney_js(tmp_path, request):
    with with_tsh(tmp_path) as c:
        status, raw, h = c.director.call("GET", "/api/export/tourney.js")
        assert status == 200 and h["cache-control"] == "no-store" and b"Adams" in raw


@good("GET", "/api/audit")
def _audit(tmp_path, request):
    with inproc_console(tmp_path) as c:
        body = {"slip": [300, 280], "confirm": True, "no_clock": {"reason": "no clock", "penalties": [0, 0]}}
        assert post(c.director, "/api/result/3", body)[0] == 200
        assert post(c.director, "/api/result/4", body)[0] == 200
        out = get_json(c.director, "/api/audit?table=4")
        assert [a["table"] for a in out["audit"]] == [4] and out["kinds"] == list(AUDIT_KINDS)


@good("GET", "/audit")
def _audit_page(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, raw, _ = c.director.call("GET", "/audit")
        assert status == 200 and b"<html" in raw.lower()


@good("GET", "/ready")
def _ready_page(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, raw, _ = c.director.call("GET", "/ready")
        assert status == 200 and b"<html" in raw.lower()


@good("GET", "/api/ready")
def _ready(tmp_path, request):
    with with_tsh(tmp_path) as c:
        c.clock(1)
        view = get_json(c.director, "/api/ready")
        assert view["thresholds"] == health.defaults() and set(view["threshold_help"]) == set(health.THRESHOLDS)
        assert json.dumps(view).count('"table"') >= 6, view  # every table of the round's pairings


@good("POST", "/api/health-thresholds")
def _health_thresholds(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, out = post(c.director, "/api/health-thresholds", {"cpu_temp_c": 70})
        assert status == 200 and out["thresholds"]["cpu_temp_c"] == 70.0
        assert c.console.event.store.setting(health.THRESHOLDS_KEY)["cpu_temp_c"] == 70.0  # kept for a restart
        assert get_json(c.director, "/api/ready")["thresholds"]["cpu_temp_c"] == 70.0


@good("GET", "/devices")
def _devices_page(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, _, h = c.director.call("GET", "/devices")
        assert status == 303 and h["location"] == "/static/devices.html"


def _devices_hall(tmp_path, request):
    """The hall's real broker (TLS, its join file) for the fleet, the console in-process, a station
    waiting for its number (hall.device.enrol, as a device runs it)."""
    from rackside.hall.device.enrol import Enrolment
    from rackside.hall.device import joinfile as join

    broker = request.getfixturevalue("make_broker")(tables="", stations=0, tls=True)
    changes: queue.Queue = queue.Queue()
    station = Enrolment(join.load(broker.dir / "join.toml"), tmp_path / "station", "station", device="pi-2001", version="t",
                        on_change=lambda user, cfg: changes.put(user))
    station.start()
    request.addfinalizer(station.close)
    return broker, changes


@good("GET", "/api/devices")
@good("POST", "/api/devices/assign")
@good("POST", "/api/devices/revoke")
@good("POST", "/api/devices/remove")
def _devices(tmp_path, request):
    """The Devices page's API on a real broker: a waiting station listed, numbered, revoked, removed."""
    broker, changes = _devices_hall(tmp_path, request)
    with inproc_console(tmp_path / "console", broker, ca_file=str(broker.dir / "tls" / "ca.crt")) as c:
        rows = lambda: get_json(c.director, "/api/devices")["devices"]  # noqa: E731
        waiting = wait(lambda: [r for r in rows() if r["device"] == "pi-2001"], 15)[0]
        status, out = post(c.director, "/api/devices/assign", {"code": waiting["code"], "number": 1})
        assert status == 200 and out["user"] == "station-1", out
        assert changes.get(timeout=10) == "station-1"  # the station has its number
        wait(lambda: [r["state"] for r in rows() if r["device"] == "pi-2001"] == ["enrolled"], 15)
        assert post(c.director, "/api/devices/revoke", {"device": waiting["key"]}) == (200, {"ok": True})
        wait(lambda: [r["state"] for r in rows() if r["device"] == "pi-2001"] == ["revoked"], 15)
        assert post(c.director, "/api/devices/remove", {"device": waiting["key"]}) == (200, {"ok": True})


@good("GET", "/api/update")
def _update_overview(tmp_path, request):
    with inproc_console(tmp_path) as c:
        c.clock(2)
        out = get_json(c.director, "/api/update")
        assert out["bundle"] is None and out["max_bytes"] == limits.MAX_BUNDLE_BYTES
        assert [(t["table"], t["online"]) for t in out["tables"]] == [(2, True)]


@good("POST", "/api/update/bundle")
@good("POST", "/api/update/send")
@good("GET", wire_update.DOWNLOAD_PATH)
def _update(tmp_path, request):
    """An update's whole path in-process: tests/test_hall_update.py's upload and send tests run here
    (test_between_rounds_a_running_game_gets_the_update_to_switch_after_it is its good path)."""
    from support.bundle import bundle_archive

    manifest = b'{"version": "9.9.9", "built": "2026-12-01T09:00:00Z"}\n'  # as rackside.bundle writes it
    data = bundle_archive(tmp_path / "b.tar.gz", {"bundle.json": manifest, "install.sh": b"echo\n"}, folder="rackside-9.9.9").read_bytes()
    with inproc_console(tmp_path / "console") as c:
        c.clock(7)
        r = c.director.client.post("/api/update/bundle", content=data, headers={
            "X-CSRF-Token": c.director.token, "X-Bundle-SHA256": hashlib.sha256(data).hexdigest(),
            "Content-Type": "application/octet-stream"})
        assert r.status_code == 200 and r.json()["version"] == "9.9.9", r.content
        status, out = post(c.director, "/api/update/send", {"tables": [7]})
        assert status == 200 and [s["table"] for s in out["sent"]] == [7], out
        (n, cmd), = c.published.commands
        r = c.http().client.get(wire_update.DOWNLOAD_PATH, headers={wire_update.TOKEN_HEADER: cmd["token"]})
        assert (n, r.status_code, r.content) == (7, 200, data)  # the token fetches the bundle, with no session


@good("POST", "/api/call/{n:int}")
def _call(tmp_path, request):
    with with_tsh(tmp_path) as c:
        clock = c.clock(1)
        call = clock.call(1)
        wait(lambda: get_json(c.director, "/api/snapshot")["paperless"]["calls"], 5)
        status, out = post(c.director, "/api/call/1", {"call": call, "action": "ack"})
        assert status == 200 and out["sent"], out
        status, out = post(c.director, "/api/call/1", {"call": call, "action": "resolve", "reason": "scores checked"})
        assert status == 200 and out["call"]["reason"] == "scores checked", out
        assert [cmd["cmd"] for _, cmd in c.published.commands if cmd["cmd"].startswith("call_")] == ["call_ack", "call_resolve"]
        audit = get_json(c.director, "/api/audit?kind=call")["audit"]  # newest first: the director's two, after the call itself
        assert [(a["action"], a["who"]) for a in audit][:2] == [("call resolve", "Sam"), ("call ack", "Sam")], audit


@good("GET", "/api/start-absent")
@good("POST", "/api/start-absent")
def _start_absent(tmp_path, request):
    """Table 1's clock in setup with a keypad, nobody checked in, the scheduled start past: both sides
    are offered a late start (2.3.2(a)), and the one confirmation sends it."""
    with with_tsh(tmp_path) as c:
        c.clock(1)
        start = time.time() - 60
        assert post(c.director, "/api/round", {"start": start})[0] == 200
        plan = get_json(c.director, "/api/start-absent")
        assert plan["start"] == start and [(x["table"], x["players"]) for x in plan["tables"]] == [(1, [1, 2])], plan
        status, out = post(c.director, "/api/start-absent", {"tables": [1, 2]})
        assert status == 200 and out == {"sent": [{"table": 1, "players": [1, 2]}], "skipped": [2]}, out
        sent = [cmd for n, cmd in c.published.commands if cmd["cmd"] == "late_start"]
        assert [(cmd["players"], cmd["at"][:19]) for cmd in sent] == [([1, 2], time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start)))]


@good("POST", "/api/slip/{n:int}")
def _held_slip(tmp_path, request):
    """A slip signed before the clock's result is held (its result not known yet); the director
    sets it aside with a reason, audited."""
    with with_tsh(tmp_path) as c:
        clock = c.clock(1)
        clock.checkin(1, 1)
        clock.checkin(2, 2)
        clock.press(1)
        slip = clock.slip((400, 350))
        wait(lambda: get_json(c.director, "/api/snapshot")["paperless"]["held_slips"], 5)
        status, out = post(c.director, "/api/slip/1", {"game": slip["game"], "action": "dismiss"})
        assert status == 400 and "needs a reason" in out["error"]
        status, out = post(c.director, "/api/slip/1", {"game": slip["game"], "action": "reject", "reason": "a copied card's"})
        assert (status, out) == (200, {"ok": True, "action": "dismiss"})
        assert get_json(c.director, "/api/snapshot")["paperless"]["held_slips"] == []
        assert [a["action"] for a in get_json(c.director, "/api/audit?kind=slip")["audit"]][:1] == ["slip set aside"]


@good("GET", "/rules")
def _rules_page(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, _, h = c.director.call("GET", "/rules")
        assert status == 303 and h["location"] == "/static/rules.html"


@good("GET", "/api/event-rules")
def _get_rules(tmp_path, request):
    with inproc_console(tmp_path) as c:
        view = get_json(c.director, "/api/event-rules")
        assert view["rules"]["penalty_per_minute"] == 10 and view["started"] is False, view


@good("POST", "/api/event-rules")
def _set_rules(tmp_path, request):
    with inproc_console(tmp_path) as c:
        status, out = post(c.director, "/api/event-rules", {"rules": {"penalty_per_minute": 5}, "reason": "club rules"})
        assert status == 200 and out["changed"] is True and out["rules"]["penalty_per_minute"] == 5, out
        assert len(c.published.rules) == 1 and json.loads(c.published.rules[0])["penalty_per_minute"] == 5  # retained for the stations


# each route's good path (GOOD is filled by the functions above; one function may be several routes')
@pytest.mark.parametrize("path", sorted(set(GOOD.values()), key=lambda f: f.__name__), ids=lambda f: f.__name__.strip("_"))
def test_good_path(path, tmp_path, request):
    path(tmp_path, request)


# --- moved here from a console process or the demo hall (see the module's docstring) -----------------


def test_the_devices_api_needs_the_directors_session(make_broker, tmp_path):
    broker = make_broker(tables="", stations=0)
    with inproc_console(tmp_path / "console", broker) as console:
        http = console.http()
        assert http.call("GET", "/api/devices")[0] == 401
        token = http.csrf()
        assert http.call("POST", "/api/devices/assign", {"device": "x", "number": 1}, {"X-CSRF-Token": token})[0] == 401
        token = http.login(PASSWORD)
        status, body, _ = http.call("GET", "/api/devices")
        assert status == 200 and json.loads(body)["devices"] == []
        status, body, _ = http.call("POST", "/api/devices/assign", {"code": "../x", "number": 1}, {"X-CSRF-Token": token})
        assert status == 400 and "allowed are the 12 digits the device shows" in json.loads(body)["error"]
        # an assignment names the code read off the device, never a device id
        status, body, _ = http.call("POST", "/api/devices/assign", {"device": "pi-1001", "number": 1}, {"X-CSRF-Token": token})
        assert status == 400 and "code None" in json.loads(body)["error"]
        status, body, _ = http.call("POST", "/api/devices/remove", {"device": "../x"}, {"X-CSRF-Token": token})
        assert status == 400 and "allowed are the code the device shows" in json.loads(body)["error"]
        status, body, _ = http.call("POST", "/api/devices/assign", {"device": "nobody", "number": 1})
        assert status == 403  # no CSRF token


def test_nothing_without_login_and_csrf_on_every_command(tmp_path):
    with inproc_console(tmp_path) as hall:
        hall.clock(5)  # the demo hall's table 5: a clock the console has heard
        h = hall.http()
        assert h.call("GET", "/")[0] == 303
        for path in ("/api/snapshot", "/api/events", "/api/table/5", "/api/export/round.csv", "/static/app.js"):
            assert h.call("GET", path)[0] == 401, path
        assert h.call("POST", "/api/command", {"cmd": "identify", "tables": [1]})[0] == 401
        assert h.call("POST", "/api/events/any/watch", {"table": 5})[0] == 401
        assert h.call("POST", "/api/login", {"password": PASSWORD})[0] == 403  # no CSRF token
        token = h.csrf()
        status, body, _ = h.call("POST", "/api/login", {"password": PASSWORD}, {"X-CSRF-Token": token})
        assert status == 200
        token = json.loads(body)["csrf"]  # a new token for the new session
        assert h.call("POST", "/api/command", {"cmd": "identify", "tables": [8]})[0] == 403
        assert h.call("POST", "/api/command", {"cmd": "identify", "tables": [8]}, {"X-CSRF-Token": "forged"})[0] == 403
        status, body, _ = h.call("POST", "/api/command", {"cmd": "identify", "tables": [8]}, {"X-CSRF-Token": token})
        assert status == 200, body
        assert [(n, cmd["cmd"]) for n, cmd in hall.published.commands] == [(8, "identify")]  # the one sent, once
        status, body, _ = h.call("GET", "/api/table/5")
        assert status == 200


def test_five_wrong_passwords_lock_the_login(tmp_path):
    with inproc_console(tmp_path) as hall:
        h = hall.http()
        token = h.csrf()
        for _ in range(5):
            assert h.call("POST", "/api/login", {"password": "nope"}, {"X-CSRF-Token": token})[0] == 401
        status, body, _ = h.call("POST", "/api/login", {"password": PASSWORD}, {"X-CSRF-Token": token})
        assert status == 429 and b"try again in" in body


def test_a_command_in_flight_when_the_console_stops_is_acked_while_its_loop_runs(tmp_path):
    """The harness itself (support.inproc): a command still on its way to an in-process clock when
    the test leaves the console is carried and acked before the console's loop stops. Before, the
    courier was joined after the loop had gone, and a late ack raised "This portal is not running"
    in the courier's thread (seen under load as a warning from an unrelated test)."""
    failed: list[BaseException] = []
    with inproc_console(tmp_path) as c:
        clock = c.clock(4)
        gate = threading.Event()  # holds the command on the courier until the console is stopping
        take = clock.take

        def held_take(payload: bytes) -> None:
            gate.wait(30)
            try:
                take(payload)
            except BaseException as exc:  # noqa: BLE001 - recorded: the thread's own failure is the defect
                failed.append(exc)
                raise

        clock.take = held_take
        close = c.published.close

        def stopping() -> None:
            gate.set()
            close()

        c.published.close = stopping
        status, _ = post(c.director, "/api/command", {"cmd": "identify", "tables": [4]})
        assert status == 200
    assert gate.is_set() and not failed, failed
    assert [cmd["cmd"] for cmd in clock.commands] == ["identify"]
