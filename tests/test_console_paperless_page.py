"""The paperless table on the director's page (issue 27), in Debian's headless Chromium against the real
`rackside hall console` process and a real Mosquitto, the clocks publishing as clocks with keypads do
(support.keypadclock):

- a check-in shows on the tile: who sits on which side (the way round the players put the clock,
  1.4.5), checked in (✓) and the starter TSH names (★, 2.1);
- the incident queue (apart from the challenges): a call shows its table, side, time and how long it
  has waited, ticking; the director acknowledges it and resolves it with a reason, the clock is told;
  a player at the wrong table is listed with where they play;
- at the scheduled start the page offers one confirmation, listing every table not checked in and its
  absent sides; confirmed, each of those clocks gets its late start from the scheduled start
  (2.3.2(a), 2.3.3(a)), and no other clock does.
"""

from __future__ import annotations

import time

import pytest

from rackside.game.call import BUTTONS, KEYPAD

from support import browser as chromium
from support.paperless import PASSWORD, Hall
from support.wait import wait

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")


@pytest.fixture
def hall(tmp_path):
    h = Hall(tmp_path)
    for n in (1, 2, 3):
        h.clock(n)
    yield h
    h.close()


def name_text(page, n: int, side: int) -> str:
    return page.text_content(f'#tiles .tile[data-table="{n}"] .s{side} .name')


def test_check_in_calls_and_the_start_of_absent_sides_on_the_page(hall, browser):
    page = chromium.login(browser, hall.console.url + "/", PASSWORD)
    two = hall.clocks[2]
    two.checkin(1, 3)  # Cole, the non-starter, put the clock with her on side 1
    two.checkin(2, 4)  # Dunn: TSH's starter (p12)
    page.wait_for_function("() => document.querySelector('#tiles .tile[data-table=\"2\"] .s2 .name').textContent.startsWith('★')")
    assert name_text(page, 2, 1) == "✓ Cole C" and name_text(page, 2, 2) == "★ Dunn D"
    hall.clocks[3].checkin(2, 5)  # Eng at table 3; Fox not yet here
    page.wait_for_function("() => document.querySelector('#tiles .tile[data-table=\"3\"] .s2 .name').textContent.startsWith('✓')")
    assert name_text(page, 3, 2) == "✓ Eng E" and not name_text(page, 3, 1).startswith("✓")
    hall.clocks[3].checkin(1, 5)  # Fox typed Eng's number (issue 40): refused at the clock, shown here
    page.wait_for_selector('#tiles .tile[data-table="3"] .note >> text="CHECK-IN side 1: #5 Eng, Ed is checked in on side 2"')
    assert not name_text(page, 3, 1).startswith("✓")

    # a player at the wrong table, and a call: the header says so, the queue lists them
    hall.clocks[1].checkin(1, 6)  # Fox, at table 1
    wait(lambda: hall.clocks[1].sent("seat"))
    call = hall.clocks[1].call(2)
    page.wait_for_function("() => document.querySelector('#open-calls').textContent.includes('Calls 1')")
    assert "wrong table 1" in page.text_content("#open-calls")
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text=/^CALL side 2: waiting since/')
    page.click("#open-calls")
    item = page.locator(f'#call-list li[data-table="1"][data-call="{call}"]')
    item.wait_for()
    assert "table 1 · side 2 ·" in item.text_content() and "waiting 0:0" in item.text_content()
    before = item.locator(".waited").text_content()
    page.wait_for_function(f"() => document.querySelector('#call-list li[data-call=\"{call}\"] .waited').textContent !== {before!r}")
    assert page.text_content("#wrong-list") == "table 1 side 1: player 6 (Fox, Flo) plays at table 3"
    assert page.text_content("#feed-count") == "0"  # apart from the challenges
    page.screenshot(path=str(hall.dir / "calls.png"))
    item.locator("button", has_text="Acknowledge").click()
    wait(lambda: hall.clocks[1].sent("call_ack"))
    page.wait_for_function(f"() => document.querySelector('#call-list li[data-call=\"{call}\"]').textContent.includes('acknowledged by ')")
    page.locator(f'#call-list li[data-call="{call}"] button', has_text="Resolve").click()
    page.fill("#reason-input", "")
    page.click("#reason-ok")  # no reason: nothing is sent
    page.locator(".toast.bad", has_text="reason").wait_for()
    page.locator(f'#call-list li[data-call="{call}"] button', has_text="Resolve").click()
    page.fill("#reason-input", "score sheet lent: rule 5.5.3")
    page.click("#reason-ok")
    resolved = wait(lambda: hall.clocks[1].sent("call_resolve"))
    assert resolved[0]["reason"] == "score sheet lent: rule 5.5.3" and len(resolved) == 1
    page.wait_for_function(f"() => document.querySelector('#call-list li[data-call=\"{call}\"]').classList.contains('resolved')")
    page.wait_for_function("() => !document.querySelector('#tiles .tile[data-table=\"1\"] .note').textContent.startsWith('CALL')")
    # `#` held alone is the keypad's call, the three buttons' gesture the buttons': neither has a side
    for n, how, who in ((1, KEYPAD, "the keypad"), (2, BUTTONS, "the buttons")):
        other = hall.clocks[n].call(None, how)
        item = page.locator(f'#call-list li[data-table="{n}"][data-call="{other}"]')
        item.wait_for()
        assert f"table {n} · {who} ·" in item.text_content(), item.text_content()
        page.wait_for_selector(f'#tiles .tile[data-table="{n}"] .note >> text=/^CALL {who}: waiting since/')
        assert hall.post(f"/api/call/{n}", {"call": other, "action": "resolve", "reason": "seen"})[0] == 200
    page.click("#calls .close")

    # the scheduled start: one confirmation for every table not checked in
    assert page.is_hidden("#start-absent")
    assert hall.post("/api/round", {"start": int(time.time()) - 5})[0] == 200
    page.wait_for_selector("#start-absent", state="visible")
    page.click("#start-absent")
    page.wait_for_selector("#confirm[open]")
    text = page.text_content("#confirm-text")
    # table 3's side 1 is in conflict (USEd): its player is there, typing, so it is not started as absent
    assert "at 1 table(s): table 1 (both sides)?" in text and "2.3.2(a), 2.3.3(a)" in text, text
    page.screenshot(path=str(hall.dir / "start-absent.png"))
    page.click("#confirm-ok")
    page.locator(".toast.ok", has_text="late start sent to 1 table(s)").wait_for()
    assert wait(lambda: hall.clocks[1].sent("late_start"))[0]["players"] == [1, 2]
    assert not hall.clocks[2].sent("late_start") and not hall.clocks[3].sent("late_start")
    assert not page.errors, page.errors
    page.close()
