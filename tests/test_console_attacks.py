"""Issue 17's attacks on the console, rerun against a real Mosquitto and the real `rackside hall
console` process (tests/support/console.py: ConsoleProcess). Each must fail to do harm. Other
machines on the hall's network are other loopback addresses (127.0.0.2, ...): the console tells
them apart by address, as it would real ones. Each test takes seconds."""

from __future__ import annotations

import json
import re
import socket
import ssl
import threading
import time
import urllib.error
from pathlib import Path

import pytest

from rackside.hall.console.common import limits

from support.broker import Broker
from support.console import ConsoleProcess, Http
from support.wait import until, wait

PASSWORD = "attack-test-pw"
STATIC = Path(__file__).parent.parent / "hall" / "console" / "static"


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    d = tmp_path_factory.mktemp("attacks")
    broker = Broker(d / "broker", tables="1-8", stations=2).start()
    proc = ConsoleProcess(broker, d / "console", PASSWORD).start()
    proc.broker = broker
    yield proc
    proc.stop()
    broker.stop()


def director(hall, source=None) -> tuple[Http, str]:
    h = Http(hall.url, source)
    return h, h.login(PASSWORD)


def publish(broker, user, topic, payload: bytes, retain=False) -> None:
    c = broker.client(user)
    c.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)
    c.disconnect()
    c.loop_stop()


# --- sessions, headers, the page -----------------------------------------------------------------


def test_logout_ends_the_session_for_every_copy_of_the_cookie(hall):
    h, token = director(hall)
    thief = Http(hall.url)
    for cookie in h.jar:
        thief.jar.set_cookie(cookie)
    assert thief.call("GET", "/api/snapshot")[0] == 200
    assert h.call("POST", "/api/logout", {}, {"X-CSRF-Token": token})[0] == 200
    assert thief.call("GET", "/api/snapshot")[0] == 401  # the copied cookie was good for 12 h before
    assert h.call("GET", "/api/snapshot")[0] == 401


def test_every_response_carries_the_security_headers(hall):
    h, _ = director(hall)
    for path in ("/", "/login", "/api/snapshot", "/static/app.js", "/api/nothing"):
        _, _, headers = h.call("GET", path)
        csp = headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp, path
        assert headers["Referrer-Policy"] == "no-referrer" and headers["X-Frame-Options"] == "DENY", path


def test_the_page_has_no_inline_script():
    """The CSP allows scripts only from the console's own files: the page must need nothing else."""
    for page in STATIC.glob("*.html"):
        html = page.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), page.name
        assert not re.search(r"\son[a-z]+\s*=", html), page.name
        assert "javascript:" not in html and "<style" not in html and " style=" not in html, page.name


# --- results ------------------------------------------------------------------------------------


def test_a_slip_is_two_whole_numbers_and_a_bad_one_is_a_400(hall):
    root = f"rackside/v1/{hall.broker.hall}"
    players = [{"player": p, "remaining_ms": 1000, "overtime_s": 0, "penalty": 0, "forfeit": False} for p in (1, 2)]
    result = {"kind": "result", "game": "game-000001", "seq": 0, "ending": "end", "players": players, "forfeits": [],
              "winner_by_forfeit": None, "lateness_margin": None, "at": "2026-11-30T11:02:40.008+00:00"}
    publish(hall.broker, "table-6", f"{root}/table/6/event", json.dumps(result).encode())
    h, token = director(hall)
    assert until(lambda: json.loads(h.call("GET", "/api/table/6")[1]).get("tile", {}).get("result"))
    csrf = {"X-CSRF-Token": token}
    for bad in ({"slip": "12"}, {"slip": [1, None]}, {"slip": [1, 2, 3]}, {"slip": ["a", "b"]}, {"slip": {"a": 1}},
                {"slip": [350, 300], "margin": "x"}, {"slip": [True, 3]}):
        status, body, _ = h.call("POST", "/api/result/6", bad, csrf)
        assert status == 400, (bad, status, body)
    status, body, _ = h.call("POST", "/api/result/6", {"slip": [350, 300]}, csrf)
    assert status == 200 and json.loads(body)["scores"] == [350, 300]


def test_a_table_that_does_not_exist_adds_no_tile(hall):
    h, _ = director(hall)
    assert h.call("GET", "/api/table/999999")[0] == 404
    assert h.call("GET", "/api/table/7")[0] == 404  # provisioned, never heard from
    tables = [t["table"] for t in json.loads(h.call("GET", "/api/snapshot")[1])["tables"]]
    assert 999999 not in tables and 7 not in tables


# --- an outsider without a password --------------------------------------------------------------


def _raw(source: str, data: bytes, port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    s.sendall(data)
    return s


def test_an_unauthenticated_1_gb_body_is_refused_unread(hall):
    before = hall.rss_mib()
    s = _raw("127.0.0.3", b"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 1073741824\r\n\r\n", hall.port)
    sent = 0
    try:
        while sent < 64 * 2**20:  # it stops reading long before 64 MiB of the 1 GiB
            s.sendall(b"x" * 2**20)
            sent += 2**20
    except OSError:
        pass
    finally:
        s.close()
    s = _raw("127.0.0.3", b"POST /api/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", hall.port)
    try:
        chunk = b"x" * 65536
        for _ in range(8):  # 512 KiB, no length said
            s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        answer = s.recv(200)
    except OSError:
        answer = b"HTTP/1.1 413"  # cut off while sending
    finally:
        s.close()
    assert answer.startswith(b"HTTP/1.1 413") or answer.startswith(b"HTTP/1.1 403"), answer
    assert hall.rss_mib() - before < 32
    assert hall.rss_mib() <= 256
    h = Http(hall.url)
    assert h.call("POST", "/api/login", None, {"Content-Length": "999999999"})[0] == 413


def test_half_sent_requests_cannot_hold_the_console(hall):
    """1,100 half-sent requests used to hold every file descriptor. One address gets at most
    MAX_CONNECTIONS_PER_SOURCE; the rest are closed at once; a request's headers must arrive within
    HEADER_TIMEOUT_S; the director, elsewhere, is served throughout."""
    held = []
    t_first = time.monotonic()
    try:
        for i in range(limits.MAX_CONNECTIONS_PER_SOURCE + 40):
            try:
                held.append(_raw("127.0.0.4", b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ", hall.port))
            except OSError:
                pass
        h, _ = director(hall)
        assert h.call("GET", "/api/snapshot")[0] == 200
        closed = lambda: sum(_closed(s) for s in held)  # noqa: E731
        assert until(lambda: closed() >= 40, limits.HEADER_TIMEOUT_S), closed()  # the ones over the cap,
        assert time.monotonic() - t_first < limits.HEADER_TIMEOUT_S  # at once: before any header deadline
        # every half-sent request is cut off at the header deadline (and none answered)
        assert until(lambda: closed() == len(held), limits.HEADER_TIMEOUT_S + 15), (closed(), len(held))
    finally:
        for s in held:
            s.close()


def _closed(s: socket.socket) -> bool:
    """The console closed this connection (an end of file or a reset; what it read stays read)."""
    s.settimeout(0.01)
    try:
        return s.recv(1) == b""
    except (TimeoutError, BlockingIOError):
        return False
    except OSError:
        return True


def test_the_director_logs_in_during_a_password_guessing_attack(hall):
    stop = threading.Event()
    answers: list[int] = []

    def guess(source):
        attacker = Http(hall.url, source)
        token = attacker.csrf()
        while not stop.is_set():
            status = attacker.call("POST", "/api/login", {"password": "guess", "name": "director"}, {"X-CSRF-Token": token})[0]
            answers.append(status)

    threads = [threading.Thread(target=guess, args=(f"127.0.0.{10 + i}",)) for i in range(3)]
    for t in threads:
        t.start()
    try:
        wait(lambda: 429 in answers)  # the attack is under way: its guesses are being refused
        for _ in range(5):
            h, _ = director(hall)  # asserts a 200 each time
            assert h.call("GET", "/api/snapshot")[0] == 200
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert answers.count(401) <= 3 * limits.LOGIN_FREE_TRIES + 6 and answers.count(429) > 0, answers.count(401)


# --- a faulty or hostile device ------------------------------------------------------------------


def _players(**over):
    return [{"player": p, "remaining_ms": 60_000, "overtime_s": 0, "penalty": 0, "forfeit": False, "absent": False, **over}
            for p in (1, 2)]


def _state(seq=1, game="game-000001", **over) -> dict:
    return {"seq": seq, "game": game, "phase": "running", "running": 1, "players": _players(), "ending": None,
            "sent_at": "2026-11-30T10:31:02.417+00:00", **over}


def _events_first(h: Http, hall) -> dict:
    """The event stream's first message (the snapshot), read off a raw socket with the session's cookie."""
    cookie = "; ".join(f"{c.name}={c.value}" for c in h.jar)
    s = socket.create_connection(("127.0.0.1", hall.port), timeout=10)
    try:
        s.sendall(f"GET /api/events HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\n\r\n".encode())
        buf = b""
        while b"\n\n" not in buf.split(b"\r\n\r\n", 1)[-1] or b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    data = next(line for line in body.decode().splitlines() if line.startswith("data: "))
    return json.loads(data[6:])


def test_no_device_message_breaks_the_snapshot_or_the_stream(hall):
    """A 2 KB payload nested ~1000 deep used to make every /api/snapshot a 500 and every event
    stream empty; type-confused fields broke the page; each is refused and shown on its tile."""
    b, root = hall.broker, f"rackside/v1/{hall.broker.hall}"
    deep = b'{"seq": 1, "game": "g", "players": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    publish(b, "table-1", f"{root}/table/1/status", b"online", retain=True)
    bad = [deep, json.dumps(_state(players={"1": 1})).encode(), json.dumps(_state(players=[None])).encode(),
           json.dumps(_state(players=_players(remaining_ms="1:00"))).encode(), b"\xff\xfe", b"[]"]
    for payload in bad:
        publish(b, "table-1", f"{root}/table/1/state", payload, retain=True)
    result = {"kind": "result", "game": "game-000001", "seq": 0, "ending": "end", "players": _players(), "forfeits": "1",
              "winner_by_forfeit": None, "lateness_margin": None, "at": None}
    publish(b, "table-1", f"{root}/table/1/event", json.dumps(result).encode())
    h, _ = director(hall)

    def table_1():
        return next((t for t in json.loads(h.call("GET", "/api/snapshot")[1])["tables"] if t["table"] == 1), None)

    t = until(lambda: (x := table_1()) and len(x["problems"]) >= len(bad) + 1 and x)
    assert t and t["state"] is None and t["result"] is None, t
    assert any("nested deeper" in p for p in t["problems"]) and any("forfeits" in p for p in t["problems"])
    assert any("players" in p for p in t["problems"]), t["problems"]
    assert h.call("GET", "/api/table/1")[0] == 200
    assert _events_first(h, hall)["hall"] == b.hall
    # and a good state after them is shown, with the clock core's default rules when it sends none
    publish(b, "table-1", f"{root}/table/1/state", json.dumps(_state(seq=2)).encode(), retain=True)
    t = until(lambda: (x := table_1()) and x["state"] and x)
    assert t["state"]["rules"]["penalty_per_minute"] == 10 and t["state"]["seq"] == 2
    publish(b, "table-1", f"{root}/table/1/state", b"", retain=True)  # leave no retained state behind


def test_a_games_own_rules_are_passed_through_checked(hall):
    b, root = hall.broker, f"rackside/v1/{hall.broker.hall}"
    publish(b, "table-2", f"{root}/table/2/status", b"online")
    rules = {"game_time_ms": 1_200_000, "penalty_per_minute": 5, "forfeit_overtime_ms": 300_000, "lateness_forfeit_margin": 50}
    publish(b, "table-2", f"{root}/table/2/state", json.dumps(_state(rules=rules)).encode())
    h, _ = director(hall)
    tile = until(lambda: next((t for t in json.loads(h.call("GET", "/api/snapshot")[1])["tables"]
                              if t["table"] == 2 and t["state"]), None))
    assert {k: tile["state"]["rules"][k] for k in rules} == rules  # the keys an older clock leaves out: the core's defaults
    publish(b, "table-2", f"{root}/table/2/state", json.dumps(_state(seq=2, rules={**rules, "game_time_ms": -5})).encode())
    tile = until(lambda: next((t for t in json.loads(h.call("GET", "/api/snapshot")[1])["tables"]
                              if t["table"] == 2 and t["problems"]), None))
    assert "game_time_ms" in tile["problems"][-1] and tile["state"]["seq"] == 1


def test_a_station_naming_tables_that_do_not_exist_adds_no_tile(hall):
    b, root = hall.broker, f"rackside/v1/{hall.broker.hall}"
    c = b.client("station-1")
    for n in [5, 8, 999, 3041, 99999, "x", -1, None]:
        c.publish(f"{root}/station/1/challenge", json.dumps({"id": f"s{n}", "table": n, "verdict": None}), qos=1).wait_for_publish(5)
    c.disconnect()
    c.loop_stop()
    h, _ = director(hall)
    snap = until(lambda: (s := json.loads(h.call("GET", "/api/snapshot")[1])) and len(s["feed"]) >= 4 and s)  # 5, 8, 999 and none
    tables = {t["table"] for t in snap["tables"]}
    assert not tables & {5, 8, 999, 3041, 99999}, tables
    assert len([p for p in snap["station_problems"]["1"] if "table" in p]) == 4  # 3041, 99999, "x", -1: refused, on the station


def _stream_granted(h: Http, hall) -> dict | None:
    """The event stream's first message, or None while the console refuses a new stream (503)."""
    try:
        return _events_first(h, hall)
    except AssertionError:
        return None


def settled(hall, h: Http) -> None:
    """A barrier: once this returns, the console has read every message the broker routed to it
    before. A sentinel state from table 6, which nobody floods (a flooding table's own messages may
    be dropped by the console's rate limit): the broker delivers to the console in order."""
    settled.n = getattr(settled, "n", 0) + 1
    seq = 10_000 + settled.n
    publish(hall.broker, "table-6", f"rackside/v1/{hall.broker.hall}/table/6/state", json.dumps(_state(seq=seq)).encode())

    def seen() -> bool:
        try:
            tables = json.loads(h.call("GET", "/api/snapshot")[1])["tables"]
        except (TimeoutError, urllib.error.URLError):  # a console still reading a flood on a loaded machine: not yet
            return False
        return any(t["table"] == 6 and (t["state"] or {}).get("seq") == seq for t in tables)

    wait(seen, 60)


def _rss_ok(hall):
    assert hall.rss_mib() <= 256, hall.rss_mib()


def test_one_device_flooding_cannot_delay_the_others(hall):
    """10,000 messages a second from one table made other tables' updates up to 17.6 s late and grew
    the console for ever (the `seen` set)."""
    b, root = hall.broker, f"rackside/v1/{hall.broker.hall}"
    publish(b, "table-4", f"{root}/table/4/status", b"online")
    flood = b.client("table-3")
    for i in range(1, 20_001):
        ev = {"kind": "input", "game": "game-000009", "seq": i, "t_ns": i, "input": "press", "player": 1 + i % 2, "at": None}
        flood.publish(f"{root}/table/3/event", json.dumps(ev), qos=0)
    publish(b, "table-4", f"{root}/table/4/state", json.dumps(_state(seq=7)).encode())
    t0 = time.monotonic()
    h, _ = director(hall)
    assert until(lambda: any(t["table"] == 4 and t["state"] and t["state"]["seq"] == 7
                            for t in json.loads(h.call("GET", "/api/snapshot")[1])["tables"]), timeout=5)
    assert time.monotonic() - t0 < 5
    flood.publish(f"{root}/table/3/status", b"online", qos=1).wait_for_publish(30)  # the broker has routed the flood
    flood.disconnect()
    flood.loop_stop()
    settled(hall, h)  # and the console has read it
    _rss_ok(hall)
    three = until(lambda: next((t for t in json.loads(h.call("GET", "/api/snapshot")[1])["tables"]
                               if t["table"] == 3 and any("rate limit" in p for p in t["problems"])), None), timeout=10)
    assert three, "the dropped messages are reported on the flooding table's tile"
    assert len(json.loads(h.call("GET", "/api/table/3")[1])["history"]) <= limits.HISTORY


def test_200_event_streams_and_a_stalled_one_stay_bounded(hall):
    h, _ = director(hall)
    cookie = "; ".join(f"{c.name}={c.value}" for c in h.jar)
    streams, answers = [], []
    for i in range(200):
        s = socket.create_connection(("127.0.0.1", hall.port), timeout=10, source_address=(f"127.0.0.{30 + i // limits.MAX_CONNECTIONS_PER_SOURCE}", 0))
        s.sendall(f"GET /api/events HTTP/1.1\r\nHost: x\r\nCookie: {cookie}\r\n\r\n".encode())
        streams.append(s)
        answers.append(s.recv(12))  # one at a time: a burst of more than limits.MAX_WAITING unread would be thinned
    assert answers.count(b"HTTP/1.1 200") == limits.MAX_STREAMS and answers.count(b"HTTP/1.1 503") == 200 - limits.MAX_STREAMS
    try:
        # none of the open streams reads from here on: large states from a table fill their queues
        b, root = hall.broker, f"rackside/v1/{hall.broker.hall}"
        c = b.client("table-5")
        c.publish(f"{root}/table/5/status", b"online", qos=1).wait_for_publish(5)
        pad = _players()
        for i in range(1, 1_900):
            st = _state(seq=i, players=pad, game="game-" + ("%06d" % i) + "x" * 50)
            c.publish(f"{root}/table/5/state", json.dumps(st) + " " * 3000, qos=0)
        c.publish(f"{root}/table/5/status", b"online", qos=1).wait_for_publish(30)  # the broker has routed them all
        c.disconnect()
        c.loop_stop()
        settled(hall, h)  # and the console has read them all
        _rss_ok(hall)
        assert h.call("GET", "/api/snapshot")[0] == 200  # the director's other requests are served
    finally:
        for s in streams:
            s.close()
    # the slots are freed: a new page gets its stream (once the console has seen the sockets close)
    first = wait(lambda: _stream_granted(h, hall))
    assert first["hall"] == hall.broker.hall


def test_a_malformed_result_is_refused_not_a_500(hall):
    """A clock result without its players (or with them type-confused) used to be kept, and taking
    the slip for it raised inside the handler: HTTP 500."""
    b, root = hall.broker, f"rackside/v1/{hall.broker.hall}"
    publish(b, "table-8", f"{root}/table/8/status", b"online")
    for bad in ({"kind": "result", "game": "game-000004", "seq": 0, "ending": "end"},
                {"kind": "result", "game": "game-000004", "seq": 0, "ending": "end", "players": [{"player": 1}, {"player": 2}],
                 "forfeits": [], "winner_by_forfeit": None, "lateness_margin": None, "at": None}):
        publish(b, "table-8", f"{root}/table/8/event", json.dumps(bad).encode())
        publish(b, "table-8", f"{root}/table/8/result", json.dumps(bad).encode())
    h, token = director(hall)
    assert until(lambda: len(json.loads(h.call("GET", "/api/table/8")[1])["tile"]["problems"]) >= 4)
    status, body, _ = h.call("POST", "/api/result/8", {"slip": [350, 300]}, {"X-CSRF-Token": token})
    assert status in (400, 404, 409), (status, body)


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian's chromium is not installed (setup.sh --dev)")
def test_the_page_works_under_its_content_security_policy(hall):
    """The CSP forbids inline script and style: Chromium must report no violation while the login
    and the hall's page load and draw, and must refuse to show the console in a frame."""
    from playwright.sync_api import sync_playwright

    from support import browser as chromium

    with sync_playwright() as p:
        b = chromium.launch(p)
        try:
            seen: list[str] = []
            page = b.new_page()
            page.on("console", lambda m: seen.append(m.text))
            page.goto(hall.url + "/login")
            page.fill("#password", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_selector("body[data-ready='1']")
            page.goto("data:text/html,<iframe src='" + hall.url + "/login'></iframe>")  # until its load event, the frame's included
            framed = page.frames[-1]
            assert framed.url.startswith("chrome-error:")  # refused: frame-ancestors 'none'
            assert not [m for m in seen if "Content Security Policy" in m and "frame-ancestors" not in m], seen
        finally:
            b.close()


# --- a crowd of half-open connections from many addresses (issue 25, item 4) -------------------


@pytest.fixture(scope="module")
def https_hall(tmp_path_factory):
    """The console as the hall runs it: HTTPS with the hall's certificate (a fresh process, so its
    memory is measured from its own start)."""
    d = tmp_path_factory.mktemp("crowd")
    broker = Broker(d / "broker", tables="", stations=0, tls=True).start()
    tls = broker.dir / "tls"
    proc = ConsoleProcess(broker, d / "console", PASSWORD, extra=f'ca_file = "{tls / "ca.crt"}"\n'
                          f'certfile = "{tls / "server.crt"}"\nkeyfile = "{tls / "server.key"}"\n').start()
    proc.broker, proc.tls = broker, ssl.create_default_context(cafile=str(tls / "ca.crt"))
    proc.url = f"https://127.0.0.1:{proc.port}"
    yield proc
    proc.stop()
    broker.stop()


class _Https(Http):
    def __init__(self, base, context):
        super().__init__(base)
        import urllib.request

        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar),
                                                  urllib.request.HTTPSHandler(context=context))


def _crowd(hall, handshake: bool) -> list:
    """1,100 half-open connections, 55 from each of 20 addresses (127.0.0.2 .. 127.0.0.21): under
    the old per-address cap of 64, over the old global cap of 512. With `handshake`, each finishes
    TLS and sends half a request's headers; without, it sends nothing at all."""
    held = []
    for i in range(1100):
        try:
            s = socket.create_connection(("127.0.0.1", hall.port), timeout=2, source_address=(f"127.0.0.{2 + i % 20}", 0))
            if handshake:
                s = hall.tls.wrap_socket(s, server_hostname="127.0.0.1")
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            held.append(s)
        except OSError:
            pass  # refused or cut off at once: what the console should do with most of them
    return held


@pytest.mark.parametrize("handshake", [True, False], ids=["half-sent-requests", "no-tls-handshake"])
def test_a_crowd_of_half_open_connections_cannot_starve_the_director(https_hall, handshake):
    """1,100 half-sent requests from 20 addresses used to fill the global cap of 512: the
    director's page got 1 answer in 36 (503), and the console's RSS rose from 36 to 340 MiB and
    stayed there (each TLS connection holds asyncio's 256 KiB buffer). A connection that never
    finished its TLS handshake was counted nowhere and held for 60 s."""
    h = _Https(https_hall.url, https_hall.tls)
    h.login(PASSWORD)
    before = https_hall.rss_mib()
    held = _crowd(https_hall, handshake)
    try:
        answers = [h.call("GET", "/api/snapshot")[0] for _ in range(36)]
        during = https_hall.rss_mib()
        assert answers.count(200) == 36, answers
        assert during - before < 96, (before, during)  # limits.MAX_WAITING TLS connections at most
    finally:
        for s in held:
            s.close()
    assert wait(lambda: https_hall.rss_mib() - before < 24, timeout=15), (before, https_hall.rss_mib())
    assert "Traceback" not in https_hall.log_path.read_text()  # nor a log a crowd can fill


def test_a_burst_of_one_connection_from_each_of_200_addresses_is_not_thinned(hall):
    """200 clocks fetching an update at once each open one connection: more than MAX_WAITING wait
    for their request together, and none may be closed for it (only an address with several
    waiting, a crowd, is thinned; the total cap bounds the rest)."""
    assert 200 > limits.MAX_WAITING
    held = [socket.create_connection(("127.0.0.1", hall.port), timeout=10, source_address=(f"127.0.1.{1 + i}", 0))
            for i in range(200)]
    try:
        for s in held:  # all 200 are open and waiting before any request is sent
            s.sendall(b"GET /update/bundle.tar.gz HTTP/1.1\r\nHost: x\r\nX-Rackside-Update-Token: none\r\n\r\n")
        answers = []
        for s in held:
            try:
                answers.append(s.recv(12))
            except OSError as e:
                answers.append(repr(e).encode())
        assert all(a.startswith(b"HTTP/1.1 4") for a in answers), [a for a in answers if not a.startswith(b"HTTP/1.1 4")][:3]
    finally:
        for s in held:
            s.close()
