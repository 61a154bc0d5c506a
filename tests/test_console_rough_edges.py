"""Rough edges of the director's console page (issue 26 item 4), in headless Chromium against a real
Mosquitto and simulated tables running the real clock core (as tests/test_console_browser.py)."""

from __future__ import annotations

import pytest

from support import browser as chromium
from support.console import demo_hall

PASSWORD = "test-director-pw"

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")

SCRIPTS = {
    1: [(-120, ("press", 2))] + [(s, ("turn",)) for s in range(3, 300, 3)],  # running
    2: [(-1600, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))],  # finished
    3: [(-30, ("late_start", (2,)))],  # side 2 is late: their clock runs
    4: [],  # waiting to start
}


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    with demo_hall(tmp_path_factory.mktemp("console"), "1-4", [1, 2, 3, 4], SCRIPTS, PASSWORD) as h:
        yield h


def visible(page, selector):
    return page.locator(selector).is_visible()


def open_table(page, n):
    page.click(f'.tile[data-table="{n}"]')
    page.wait_for_function(f"() => document.getElementById('detail-title').textContent.startsWith('Table {n} ')")


def test_adjust_shows_no_game_time_and_arrival_is_offered_only_to_a_late_side(hall, browser):
    page = chromium.login(browser, hall.server.url, PASSWORD, (1920, 1080))
    page.wait_for_function("() => document.querySelectorAll('.tile').length === 4")
    page.wait_for_function("() => [...document.querySelectorAll('.tile')].every((t) => !t.classList.contains('offline'))")
    for n, offered in ((1, set()), (2, set()), (3, {2}), (4, set())):
        open_table(page, n)
        shown = {p for p in (1, 2) if visible(page, f'#detail-actions [data-quick="arrive{p}"]')}
        assert shown == offered, (n, shown)
    open_table(page, 1)
    page.click('#detail-actions [data-quick="adjust"]')
    page.wait_for_function("() => document.getElementById('commands').open")
    assert visible(page, "#cmd-time-row") and visible(page, "#cmd-reason-row")
    assert not visible(page, "#cmd-game-row")  # "Game time" belongs to next round's games only
    assert not visible(page, "#cmd-players")
    page.close()


@pytest.mark.parametrize("width", [800, 1600, 1920])
def test_the_header_keeps_every_button_on_screen_and_the_devices_link_is_legible(hall, browser, width):
    page = chromium.login(browser, hall.server.url, PASSWORD, (width, 900))
    page.wait_for_function("() => document.querySelectorAll('.tile').length === 4")
    for sel in ("#open-commands", "#open-results", "#open-round", "#open-feed", 'header a[href="/devices"]', "#logout"):
        box = page.locator(sel).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, (sel, box)
        inside = page.evaluate(f"""() => {{ const e = document.querySelector('{sel}'), h = document.querySelector('header');
            const r = e.getBoundingClientRect(), hr = h.getBoundingClientRect(); return r.bottom <= hr.bottom && r.top >= hr.top; }}""")
        assert inside, sel  # not clipped by the header's overflow
    color = page.evaluate("() => getComputedStyle(document.querySelector('header a[href=\"/devices\"]')).color")
    assert color not in ("rgb(0, 0, 238)", "rgb(85, 26, 139)"), color  # not the browser's default (visited) blue on dark
    page.close()


def test_the_empty_hall_points_to_the_devices_page(make_broker, tmp_path, browser):
    """`rackside hall console` on a hall where no device has been numbered yet: a blank page before."""
    from support.console import ConsoleProcess

    console = ConsoleProcess(make_broker(hall="emptyhall"), tmp_path, PASSWORD).start()
    try:
        page = chromium.login(browser, console.url + "/", PASSWORD, (1920, 1080))
        page.wait_for_function("() => document.body.dataset.ready === '1'")
        assert page.locator(".tile").count() == 0
        note = page.locator("#empty-hall")
        assert note.is_visible(), "a blank page"
        assert "Devices" in note.inner_text()
        assert note.locator('a[href="/devices"]').is_visible()
        page.close()
    finally:
        console.stop()


def test_the_challenge_feed_survives_a_console_restart(make_broker, tmp_path, browser):
    """Challenges are not retained on the broker: a restarted console's feed was empty."""
    import json

    from support.console import ConsoleProcess
    from support.wait import wait

    from rackside.hall.wire import topics

    broker = make_broker(hall="feedhall")
    console = ConsoleProcess(broker, tmp_path, PASSWORD).start()
    station = broker.client("station-1")
    summary = {"id": "station-1-20261201-101500-abcdef", "time": "2026-12-01T10:15:00+00:00", "table": 3, "kind": "self",
               "lexicon": "ENABLE", "lexicon_checksum": "ab" * 32, "words": 2, "verdict": "UNACCEPTABLE"}
    base = f"{topics.ROOT}/{broker.hall}/station/1"
    try:
        page = chromium.login(browser, console.url + "/", PASSWORD, (1920, 1080))
        page.wait_for_function("() => document.body.dataset.ready === '1'")
        station.publish(f"{base}/challenge", json.dumps(summary).encode(), qos=1).wait_for_publish(5)
        page.wait_for_function("() => document.querySelectorAll('#feed-list li').length === 1")
        page.close()
        console.stop()
        console.start()
        page = chromium.login(browser, console.url + "/", PASSWORD, (1920, 1080))
        page.wait_for_function("() => document.body.dataset.ready === '1'")
        feed = page.locator("#feed-list li")
        assert feed.count() == 1 and "UNACCEPTABLE" in feed.first.inner_text()
        page.close()
    finally:
        station.disconnect()
        console.stop()


def test_forty_tables_on_1920_are_legible_from_a_few_metres(tmp_path, browser):
    """At 40 tables the tiles were sized for 100: times about 14 px, "Nakamura B" cut to "Nakam…"."""
    tables = list(range(1, 41))
    scripts = {n: [(-60, ("press", 2))] for n in tables}
    with demo_hall(tmp_path, "1-40", tables, scripts, PASSWORD) as big:
        page = chromium.login(browser, big.server.url, PASSWORD, (1920, 1080))
        page.wait_for_function("() => document.querySelectorAll('.tile').length === 40")
        page.wait_for_function("() => [...document.querySelectorAll('.tile .name')].every((e) => e.textContent.trim())")
        sizes = page.evaluate("() => [...document.querySelectorAll('.tile .time')].map((e) => parseFloat(getComputedStyle(e).fontSize))")
        assert min(sizes) >= 28, min(sizes)
        cut = page.evaluate("() => [...document.querySelectorAll('.tile .name')].filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent)")
        assert cut == [], cut
        fits = page.evaluate("() => document.documentElement.scrollHeight <= window.innerHeight")
        assert fits  # all 40 on one screen
        page.close()
