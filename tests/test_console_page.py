"""The console's page on its own terms (issues 16.3, 17.2, 17.6): the rules it shows come from each
game's state (or the console's defaults, sent as data), a field of the wrong type is a problem on
its own tile and never stops the others, only tiles on screen are drawn (their times once a
second), and every list the page keeps is bounded.

A real Mosquitto, two simulated tables, the console under uvicorn and Debian's headless Chromium.
Tables 3 and 4 are not simulated: the tests publish their states by hand as those tables' own MQTT
users, as a clock with other rules (or a confused one) would. Where a test needs many tables or
fields no server would relay, it hands them to the page's own `updateTable`, as the event stream does.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from support import browser as chromium
from support.console import demo_hall

PASSWORD = "test-director-pw"

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")

SCRIPTS = {
    1: [(-120, ("press", 2))] + [(s, ("turn",)) for s in range(3, 300, 3)],
    2: [(-60, ("press", 2))],
}


def iso_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def overtime_state(seq: int, rules: dict | None) -> dict:
    """Side 1's time running, 95 s into overtime, as a clock's retained state (docs/hall.md)."""
    st = {"seq": seq, "game": "g1", "phase": "running", "running": 1, "ending": None, "sent_at": iso_now(),
          "players": [{"player": 1, "remaining_ms": -95_000, "overtime_s": 95, "penalty": 0, "forfeit": False},
                      {"player": 2, "remaining_ms": 300_000, "overtime_s": 0, "penalty": 0, "forfeit": False}]}
    if rules is not None:
        st["rules"] = rules
    return st


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    with demo_hall(tmp_path_factory.mktemp("console-page"), "1-4", [1, 2], SCRIPTS, PASSWORD) as h:
        yield h


def publish_state(hall, n: int, state) -> None:
    c = hall.broker.client(f"table-{n}")
    try:
        payload = state if isinstance(state, bytes) else json.dumps(state).encode()
        c.publish(f"rackside/v1/{hall.broker.hall}/table/{n}/state", payload, qos=1, retain=True).wait_for_publish(5)
    finally:
        c.disconnect()
        c.loop_stop()


def note(page, n: int) -> str:
    return page.text_content(f'.tile[data-table="{n}"] .note')


def test_a_games_own_penalty_rule_is_shown_and_the_consoles_defaults_otherwise(hall, browser):
    five = {"game_time_ms": 1_500_000, "penalty_per_minute": 5, "forfeit_overtime_ms": 600_000, "lateness_forfeit_margin": 75}
    publish_state(hall, 3, overtime_state(7, five))  # 95 s over: 2 minutes or part thereof (5.3)
    publish_state(hall, 4, overtime_state(7, None))  # no rules in the state: the console's defaults
    page = chromium.login(browser, hall.server.url, PASSWORD)
    page.wait_for_selector('.tile[data-table="3"].overtime')
    page.wait_for_selector('.tile[data-table="4"].overtime')
    assert note(page, 3) == "side 1 overtime: −10 so far (5.3)"
    assert note(page, 4) == "side 1 overtime: −20 so far (5.3)"  # WESPA's 10 a minute, from the snapshot
    assert page.get_attribute('.tile[data-table="3"] .s1 .time', "title") == "penalty so far: 10"
    # the forfeit line is the game's too: a clock that forfeits at 1 minute over stops the tile there
    publish_state(hall, 3, overtime_state(8, {**five, "forfeit_overtime_ms": 60_000}))
    page.wait_for_function("() => document.querySelector('.tile[data-table=\"3\"] .s1 .time').textContent === '-1:00'")
    assert page.errors == []
    page.close()


def test_a_new_game_with_5_points_a_minute_shows_5_points_a_minute(hall, browser):
    """A director's new_game with other rules (hall.wire.commands) reaches a simulated clock, whose state
    then carries them (hall.wire.payloads.state_payload): its first overtime second is 5 points, not 10."""
    page = chromium.login(browser, hall.server.url, PASSWORD)
    director = hall.broker.client("director")
    topic = f"rackside/v1/{hall.broker.hall}/table/2/cmd"
    try:
        cmd = {"id": "five-a-minute", "cmd": "new_game", "game_time": "1:00", "rules": {"penalty_per_minute": 5}}
        director.publish(topic, json.dumps(cmd).encode(), qos=1).wait_for_publish(5)
        page.wait_for_function("() => document.querySelector('.tile[data-table=\"2\"] .s1 .time').textContent === '1:00'")
        cmd = {"id": "two-seconds", "cmd": "adjust", "player": 1, "remaining_ms": 2000, "reason": "the test's short game"}
        director.publish(topic, json.dumps(cmd).encode(), qos=1).wait_for_publish(5)
        page.wait_for_function("() => document.querySelector('.tile[data-table=\"2\"] .s1 .time').textContent === '0:02'")
    finally:
        director.disconnect()
        director.loop_stop()
    hall.sim.act(2, ("press", 2))  # side 1's two seconds run out
    page.wait_for_selector('.tile[data-table="2"].overtime', timeout=6000)
    assert note(page, 2) == "side 1 overtime: −5 so far (5.3)"
    assert page.errors == []
    page.close()


CONFUSED = {  # what a buggy or hostile device could make a server relay, one field at a time
    901: {"state": {"phase": "running", "running": 1, "players": {"player": 1}}},
    902: {"state": {"phase": "running", "players": [None]}},
    903: {"state": {"phase": "ended", "players": []}, "result": {"kind": "result", "forfeits": "1,2", "players": "x"}},
    904: {"state": "running"},
    905: {"state": {}},
    906: {"state": {"phase": "x" * 1_000_000, "players": [{"player": 1, "remaining_ms": "ten"}]}, "names": ["y" * 1_000_000, {"a": 1}]},
    907: {"state": {"phase": "running", "running": 1, "sent_at": "yesterday", "players": [{"player": 1, "remaining_ms": 1000}],
                    "rules": {"penalty_per_minute": "ten"}}, "final": {"scores": "390-388"}, "challenge": 5},
}


def test_type_confused_fields_are_a_problem_on_their_own_tile_and_the_others_still_draw(hall, browser):
    page = chromium.login(browser, hall.server.url, PASSWORD)
    page.wait_for_selector('.tile[data-table="1"].running')
    for n, fields in CONFUSED.items():
        page.evaluate("t => app.updateTable(t)", {"table": n, "status": "online", **fields})
    page.evaluate("app.updateTable({table: 'x'}); app.updateTable(null); app.updateTable({table: -3, state: {}})")  # no tile at all
    for n in CONFUSED:
        page.wait_for_selector(f'.tile[data-table="{n}"][data-problem]', state="attached")
        assert note(page, n).startswith("problem: "), n
        assert len(note(page, n)) < 300
    assert "players is not a list" in page.get_attribute('.tile[data-table="901"]', "data-problem")
    assert "result.forfeits is not a list" in page.get_attribute('.tile[data-table="903"]', "data-problem")
    assert len(page.text_content('.tile[data-table="906"]')) < 1000  # a megabyte of text is cut to what a tile shows
    assert page.locator(".tile").count() == 4 + len(CONFUSED)
    # the other tiles still tick
    first = page.text_content('.tile[data-table="1"] .side.turn .time')
    page.wait_for_function("t => document.querySelector('.tile[data-table=\"1\"] .side.turn .time').textContent !== t",
                           arg=first, timeout=4000)
    # and through the broker: a confused state from a real device breaks nothing either
    publish_state(hall, 4, {"phase": "running", "players": {"1": "x"}, "rules": [], "sent_at": 5})
    publish_state(hall, 4, b'{"phase": [' + b"[" * 60 + b"]" * 60 + b"]}")
    # the console refuses both at its boundary and says so on the table's own tile
    page.wait_for_selector('.tile[data-table="4"][data-problem*="refused"]', state="attached", timeout=5000)
    assert note(page, 4).startswith("problem: refused ")
    first = page.text_content('.tile[data-table="1"] .side.turn .time')
    page.wait_for_function("t => document.querySelector('.tile[data-table=\"1\"] .side.turn .time').textContent !== t",
                           arg=first, timeout=4000)
    assert page.errors == []
    page.close()


MANY = """n0 => {
  const now = new Date(Date.now() + app.skewMs).toISOString();
  for (let n = n0; n < n0 + 300; n++) app.updateTable({table: n, status: "online", names: ["Brown, Ann", "Evans, Dara"],
    state: {seq: 1, game: "g", phase: "running", running: 1, sent_at: now,
            players: [{player: 1, remaining_ms: 900000 + n * 7}, {player: 2, remaining_ms: 800000}]}});
}"""
SETTLED = """() => !app.sortPending && [...app.tiles].every(([n, d]) => {
  const r = d.getBoundingClientRect();  // the observer's view of each tile is where the tile is
  return app.visible.has(n) === (!d.hidden && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth);
})"""
WATCH = """() => {
  window.__ticks = {};
  window.__since = performance.now();
  new MutationObserver((ms) => { for (const m of ms) {
    const tile = (m.target.nodeType === 1 ? m.target : m.target.parentNode).closest('#tiles .tile');
    if (tile && m.target.parentNode && (m.target.classList?.contains('time') || m.target.parentNode.classList?.contains('time'))) {
      const n = tile.dataset.table; window.__ticks[n] = (window.__ticks[n] || 0) + 1; } } })
    .observe(document.getElementById('tiles'), {subtree: true, childList: true, characterData: true});
}"""


def test_only_tiles_on_screen_are_redrawn_and_their_times_once_a_second(hall, browser):
    page = chromium.login(browser, hall.server.url, PASSWORD, viewport=(1000, 600))
    page.wait_for_selector('.tile[data-table="1"]')
    page.evaluate(MANY, 2000)
    page.wait_for_function(SETTLED, timeout=15000)  # the observer has seen where each tile is
    page.evaluate(WATCH)
    # on screen, the running times tick once a second: four ticks seen, in one second's turn of the
    # page's loop that would draw a tile off screen too
    page.wait_for_function("() => Math.max(0, ...Object.values(window.__ticks)) >= 4", timeout=20000)
    ticks, seconds = page.evaluate("[window.__ticks, (performance.now() - window.__since) / 1000]")
    near = set(page.evaluate("""() => [...document.querySelectorAll('#tiles .tile')].filter((d) => {
        const r = d.getBoundingClientRect(); return r.bottom > -200 && r.top < innerHeight + 200; }).map((d) => d.dataset.table)"""))
    assert ticks, "no tile ticked"
    assert set(ticks) <= near, f"tiles off screen were drawn: {sorted(set(ticks) - near)[:10]}"
    assert len(near) < 150  # most of the 300 are off screen
    assert max(ticks.values()) <= seconds + 2, (ticks, seconds)  # once a second (and a second's slack each end)
    # a tile scrolled into view is drawn at once, with its time of now
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")  # the last row: table 2299's
    page.wait_for_function("""() => {
        const t = app.tables.get(2299), d = app.tiles.get(2299);
        return d.querySelector('.s1 .time').textContent === app.clockText(app.liveRemaining(t.state, t.state.players[0])); }""",
                           timeout=3000)
    assert page.errors == []
    page.close()


def test_every_list_the_page_keeps_is_bounded(hall, browser):
    page = chromium.login(browser, hall.server.url, PASSWORD)
    page.click('.tile[data-table="1"]')
    page.wait_for_selector("#detail-history li")
    limits = page.evaluate("app.PAGE_LIMITS")
    # counted in the same turn of the page's loop as they were added: table 1 plays on, and a live
    # event arriving before the count would be the newest entry (it did, on a loaded machine)
    kept = page.evaluate("""() => { for (let i = 0; i < 3000; i++) app.addHistory({kind: 'input', seq: 100000 + i, input: 'press', player: 1});
                           for (let i = 0; i < 1000; i++) app.addFeed({station: '1', table: 1, verdict: 'ACCEPTABLE', time: new Date().toISOString()});
                           for (let i = 0; i < 100; i++) app.toast('message ' + i);
                           const history = document.querySelectorAll('#detail-history li');
                           return {history: history.length, first: history[0].textContent, last: history[history.length - 1].textContent,
                                   feed: document.querySelectorAll('#feed-list li').length,
                                   toasts: document.querySelectorAll('#toasts .toast').length}; }""")
    assert kept["history"] == limits["history"] == 500
    assert kept["first"].endswith("#102999 press 1") and kept["last"].endswith("#102500 press 1")  # newest first, oldest dropped
    assert kept["feed"] == limits["feed"]
    assert kept["toasts"] <= limits["toasts"]
    # and still bounded with the live events that came since
    assert page.locator("#detail-history li").count() == limits["history"]
    assert page.locator("#feed-list li").count() <= limits["feed"]
    assert page.errors == []
    page.close()


def test_a_frozen_state_does_not_tick_and_says_why(hall, browser):
    """Issue 23.4: an offline clock's last state, and an earlier round's game the clock has left, are
    shown as they were (a spare takes over an offline clock's last state's times, docs/fleet.md)."""
    page = chromium.login(browser, hall.server.url, PASSWORD)
    page.wait_for_selector('.tile[data-table="1"].running')
    sent = "2026-11-30T14:02:11.000+00:00"  # long ago: a ticking tile would show its side deep in overtime
    st = {"seq": 9, "game": "g", "phase": "running", "running": 1, "sent_at": sent,
          "players": [{"player": 1, "remaining_ms": 754_300}, {"player": 2, "remaining_ms": 801_000}]}
    page.evaluate("([st, t]) => { app.updateTable({table: 950, status: 'offline', state: st});"
                  " app.updateTable({table: 951, status: 'online', earlier: true, clock_on: {division: 'A', round: 2}, state: st,"
                  " names: ['Adams, Ann', 'Baker, Bob'], division: 'A', tsh_table: '12'}); }", [st, 0])
    page.wait_for_selector('.tile[data-table="951"]', state="attached")
    since = page.evaluate(f"new Date(Date.parse('{sent}')).toTimeString().slice(0, 8)")
    assert note(page, 950) == f"offline since {since}"
    assert note(page, 951) == "left unfinished: clock on A round 2's game"
    assert page.get_attribute('.tile[data-table="951"]', "data-cls") == "waiting"
    assert page.text_content('.tile[data-table="951"] .where') == "A · 12"  # a TSH table that does not name its division
    for _ in range(2):
        second = page.evaluate("app.lastSecond")
        page.wait_for_function(f"() => app.lastSecond >= {second + 1}")
        for n in (950, 951):
            assert page.text_content(f'.tile[data-table="{n}"] .s1 .time') == "12:35"
            assert page.text_content(f'.tile[data-table="{n}"] .s2 .time') == "13:21"
    assert page.errors == []
    page.close()


# Counts the browser's frames, and for each new seq of a table's state the frame and the moment
# (performance.now) it arrived in, and the frame and moment its tile showed it (a MutationObserver
# on data-seq: the DOM, whatever the clock time).
FRAMES = """() => {
  window.__frame = 0;
  const count = () => { window.__frame++; requestAnimationFrame(count); };
  requestAnimationFrame(count);
  window.__arrived = new Map(); window.__shown = [];
  // a state new to the page as it reaches it: from the hall's stream (heard after the page's own
  // handler, in the same turn: before any frame) or handed to the page's updateTable (BUSY's)
  const seq = new Map([...app.tables].map(([n, t]) => [n, t.state && t.state.seq]));
  window.__arrive = (raw) => {
    const st = raw && raw.state;
    if (st && typeof st.seq === 'number' && seq.get(raw.table) !== st.seq) { seq.set(raw.table, st.seq); __arrived.set(`${raw.table} ${st.seq}`, [__frame, performance.now()]); }
  };
  app.stream.source.addEventListener('table', (e) => __arrive(JSON.parse(e.data)));
  new MutationObserver((ms) => { for (const m of ms) {
    const key = `${m.target.dataset.table} ${m.target.dataset.seq}`;
    if (!__arrived.has(key)) continue;
    const [frame, at] = __arrived.get(key);
    __shown.push([Number(m.target.dataset.table), Number(m.target.dataset.seq), __frame, performance.now() - at]);
    __arrived.delete(key);
  } }).observe(document.getElementById('tiles'), {subtree: true, attributes: true, attributeFilter: ['data-seq']});
}"""
# Two other tiles, each changing five times a second: the first 10 ms into a tenth of a second of the
# console's clock (a timer set for it each time: an interval would keep one phase for the whole run,
# and one past 70 ms would part every pair), the second 30 ms after it.
BUSY = """() => { let k = 0; const change = (n, k) => { const raw = {table: n, status: "online", names: ["Brown, Ann", "Evans, Dara"],
  state: {seq: k, game: "g", phase: "running", running: 1 + (k % 2), sent_at: new Date(Date.now() + app.skewMs).toISOString(),
          players: [{player: 1, remaining_ms: 900000 - k * 1000}, {player: 2, remaining_ms: 800000}]}}; __arrive(raw); app.updateTable(raw); };
  window.__busy = true;
  const next = () => setTimeout(() => { if (!__busy) return; k++; change(960, k); setTimeout(() => change(961, k), 30); next(); },
                                210 - app.nowMs() % 100);
  next(); }"""
# Two readings of a table's running time, each drawn by a tick, the second the first that differs:
# [text, lastSecond, the state's sentAt] each. Both are of one state (a clock repeats its state every
# STATE_EVERY_S: the model changes, not the tile) that is older than the tick's second: a state sent
# after it shows its own moment's time (app.js liveRemaining), up to a second ahead, so the next tick
# may show the same text (it did: "-0:18" at one second, "-0:19" two seconds later).
TICKED = """n => {
  const st = app.tables.get(n) && app.tables.get(n).state, el = document.querySelector(`.tile[data-table="${n}"] .side.turn .time`);
  if (!st || !el) return false;
  const now = [el.textContent, app.lastSecond, st.sentAt], first = window.__ticked;
  if (st.sentAt === null || st.sentAt > app.lastSecond * 1000 || (first && first[2] !== now[2])) { window.__ticked = null; return false; }
  if (!first) { window.__ticked = now; return false; }
  return now[0] !== first[0] && [first, now];
}"""
SLACK_MS = 400  # a loaded machine's late timer and frame, over the page's own wait (the page before waited up to 1,000 ms)


def test_a_press_is_shown_within_a_tenth_of_a_second_and_the_times_tick_once_a_second(hall, browser):
    """Issue 28.4: a press reaches its tile at the first frame after the next tenth of a second of
    the console's clock, not at the next second's (the page before waited for the second), even
    while other tiles change; changes in the same tenth share one frame (two tiles changing 30 ms
    apart are mostly drawn together); the running times still step once a second, by one second a
    second."""
    page = chromium.login(browser, hall.server.url, PASSWORD)
    page.wait_for_selector('.tile[data-table="1"].running')
    slot_ms = page.evaluate("app.CHANGE_SLOT_MS")
    assert 0 < slot_ms <= 100  # issue 28.4's press to tile p99 is 150 ms, the delivery's included
    page.evaluate(FRAMES)
    page.evaluate(BUSY)
    page.wait_for_selector('.tile[data-table="961"]')
    page.wait_for_function("() => __shown.filter(([n]) => n === 961).length >= 15")  # the busy tiles are drawn as they change
    seq = page.evaluate("app.tables.get(1).state.seq")  # (the page's model: its tile may be a tenth behind)
    hall.sim.act(1, ("turn",))  # table 1's clock: the running side ends its turn (3.1.1(c))
    page.wait_for_function("seq => __shown.some(([n, s]) => n === 1 && s > seq)", arg=seq, timeout=10000)
    page.evaluate("__busy = false")
    shown = page.evaluate("__shown")
    waits = [ms for n, s, _, ms in shown if n == 1 and s > seq]
    assert waits and max(waits) <= slot_ms + SLACK_MS, shown  # the press: at the next tenth's frame
    assert all(ms <= slot_ms + SLACK_MS for *_, ms in shown), shown  # and so was every other change
    frames = {(n, s): f for n, s, f, _ in shown}
    pairs = [(frames[(960, k)], frames[(961, k)]) for (n, k) in frames if n == 960 and (961, k) in frames]
    together = sum(a == b for a, b in pairs)
    assert len(pairs) >= 10 and together * 2 > len(pairs), pairs  # a change 30 ms after another in its tenth shares its frame

    # the times tick: table 2's running time changes with no input, by the seconds gone by
    (before, second, _), (after, second_after, _) = page.wait_for_function(TICKED, arg=2, timeout=10000).json_value()

    def seconds(text: str) -> int:
        m, s = text.lstrip("-").split(":")
        return (-1 if text.startswith("-") else 1) * (int(m) * 60 + int(s))

    assert seconds(before) - seconds(after) == second_after - second >= 1, (before, after, second, second_after)
    assert page.errors == []
    page.close()


def test_a_repeated_state_costs_no_frame_after_the_snapshot_too(hall, browser):
    """A clock repeats its state every STATE_EVERY_S with nothing new but the times, which the page
    computes itself: the tile is not drawn again, the first repeat after the page's snapshot too. It
    was: the snapshot's tiles had no look to compare with, so that repeat cost a frame and drew its
    own moment's time between two ticks (the frame test's tick read it as a step)."""
    page = chromium.login(browser, hall.server.url, PASSWORD)
    page.wait_for_function("() => app.tables.has(2) && app.tables.get(2).state && document.body.dataset.ready === '1'")
    redrawn = page.evaluate("""() => { const raw = app.rawTiles.get(2), sent = Date.parse(raw.state.sent_at) + 1000;
      app.updateTable({...raw, state: {...raw.state, sent_at: new Date(sent).toISOString()}});
      return app.stale.has(2); }""")
    assert redrawn is False
    assert page.errors == []
    page.close()


# Where each side's name text starts on a tile (a Range over the text: the arrow is the name's
# ::before), and the arrow's colour on each side.
NAME_LEFTS = """n => [1, 2].map((side) => {
  const name = document.querySelector(`.tile[data-table="${n}"] .s${side} .name`);
  const r = document.createRange(); r.selectNodeContents(name);
  const text = [...name.childNodes].find((c) => c.nodeType === 3);
  r.selectNode(text);
  return [r.getBoundingClientRect().left - name.getBoundingClientRect().left, getComputedStyle(name, '::before').color,
          name.parentElement.classList.contains('turn')];
})"""


def test_a_press_moves_the_arrow_not_the_names(hall, browser):
    """Issue 28.4: whose turn it is shows as the arrow before that side's name, which is always
    there and coloured only on the side to move: a press changes two colours, never where a name
    starts (the names stood still for the director), and never makes or unmakes a box (a pseudo-
    element made at each press had the browser lay out the page's layers again, bench/frame_cost)."""
    page = chromium.login(browser, hall.server.url, PASSWORD)
    page.wait_for_selector('.tile[data-table="1"] .side.turn')
    first = page.evaluate(NAME_LEFTS, 1)
    hall.sim.act(1, ("turn",))  # the running side ends its turn (3.1.1(c))
    # until the arrow is on the other side (table 1's script turns too, every 3 s: two turns in one
    # tenth of a second are drawn in one frame, and the arrow is back where it was)
    page.wait_for_function("turn => document.querySelector('.tile[data-table=\"1\"] .s1').classList.contains('turn') !== turn", arg=first[0][2])
    after = page.evaluate(NAME_LEFTS, 1)
    for sides in (first, after):
        (left_1, colour_1, turn_1), (left_2, colour_2, turn_2) = sides
        assert turn_1 != turn_2, sides  # one side to move
        assert left_1 == left_2 > 0, sides  # both names start after the arrow's room
        on, off = (colour_1, colour_2) if turn_1 else (colour_2, colour_1)
        assert on == "rgb(88, 214, 141)" and off == "rgba(0, 0, 0, 0)", sides
    assert [s[2] for s in first] != [s[2] for s in after]  # the turn moved
    assert [s[0] for s in first] == [s[0] for s in after]  # the names did not
    assert page.errors == []
    page.close()
