"""A real tournament day with two divisions in one hall (issue 18), end to end: a real Mosquitto,
simulated clocks running the real clock core, `rackside hall console` as its own process reading
config.tsh and its .t files, and Debian's headless Chromium. Both divisions' tables on one screen,
results confirmed in both, the division and the round switched back and forth, the console
SIGKILLed and started again: every confirmed result is still there and both divisions export as
TSH accepts them."""

from __future__ import annotations

import json

import pytest


from support import browser as chromium
from support.tshmodel import Tsh
from support.console import ConsoleProcess, Http, sim_clocks, tsh_files

pytestmark = pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")

PASSWORD = "two-division-day"
GAME_S = 1500

# TSH's files as TSH writes them: config.tsh names the divisions in order; each .t is ISO-8859-1.
CONFIG_TSH = "# two divisions, one hall\ndivision A a.t\ndivision B b.t\nconfig max_rounds = 2\n"
A_T = ("Adams, Ann             1500 2 3; ; board 1 2; p12 1 2\n"
       "Baker, Bob             1400 1 4; ; board 1 1; p12 2 1\n"
       "Cole, Cy               1300 4 1; ; board 2 2; p12 1 1\n"
       "Dunn, Di               1200 3 2; ; board 2 1; p12 2 2\n")
B_T = ("M\xfcller, J\xfcrgen        1600 2 3; ; board 1 2; p12 1 2\n"
       "N\xfa\xf1ez, Mar\xeda           1550 1 4; ; board 1 1; p12 2 1\n"
       "Ortiz, Al              1500 4 1; ; board 2 2; p12 1 1\n"
       "Patel, Raj             1450 3 2; ; board 2 1; p12 2 2\n")

END = [(-900, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))]
SCRIPTS = {
    1: [(-1600, ("press", 2)), (-1.0, ("press", 1)), (0.2, ("end",))],  # A board 1: side 1 99 s over, 20 off (5.3)
    2: END,  # A board 2
    3: END,  # B board 1
    4: [(-1501, ("late_start", (2,)))],  # B board 2: side 2 never came, a lateness forfeit (2.3.5)
}


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    from support.broker import Broker

    d = tmp_path_factory.mktemp("day")
    broker = Broker(d / "broker", tables="1-4", stations=0).start()
    extra = tsh_files(d / "console", {"config.tsh": CONFIG_TSH, "a.t": A_T.encode("latin-1"), "b.t": B_T.encode("latin-1")})
    console = ConsoleProcess(broker, d / "console", PASSWORD, extra=extra).start()
    sim = sim_clocks(broker, SCRIPTS, d / "journals", GAME_S)
    day = type("Day", (), {})()
    day.broker, day.console, day.sim, day.dir, day.extra = broker, console, sim, d, extra
    yield day
    sim.close()
    day.console.stop()
    broker.stop()


def record(page, table: int, slip=None, margin=None) -> str:
    """The scorekeeper's way: the tile, the slip (or the margin), the confirmation; what the form says."""
    page.click(f'#tiles .tile[data-table="{table}"]')
    page.wait_for_selector("#detail-result:not([hidden])")
    if slip:
        page.fill("#slip1", str(slip[0]))
        page.fill("#slip2", str(slip[1]))
    if margin:
        page.fill("#margin", str(margin))
    page.click("#result-form button[type=submit]")
    page.wait_for_selector("#confirm[open]")
    asked = page.text_content("#confirm-text")
    page.click("#confirm-ok")
    page.wait_for_selector("#result-out >> text=recorded")
    page.click("#detail .close")
    return asked


def note(page, table: int) -> str:
    return page.text_content(f'#tiles .tile[data-table="{table}"] .note')


def test_a_two_division_day_survives_a_sigkill(day, browser):
    page = chromium.login(browser, day.console.url, PASSWORD)
    # both divisions' tables on one screen, each tile naming its division; Latin-1 names read as TSH does
    for n in (1, 2, 3):  # (selectors, not wait_for_function: the page's CSP allows no eval)
        page.wait_for_selector(f'#tiles .tile[data-table="{n}"].finished', timeout=20000)
    page.wait_for_selector('#tiles .tile[data-table="4"].forfeit', timeout=20000)
    where = {n: page.text_content(f'#tiles .tile[data-table="{n}"] .where') for n in range(1, 5)}
    assert where == {1: "A", 2: "A", 3: "B", 4: "B"}
    assert page.get_attribute('#tiles .tile[data-table="3"] .s1 .name', "title") == "Müller, Jürgen"
    assert page.is_visible('#tiles .tile[data-table="1"]') and page.is_visible('#tiles .tile[data-table="4"]')

    # a command dialog names the divisions of its tables; a division's name stands for its tables
    page.click("#open-commands")
    page.select_option("#cmd", "identify")
    page.fill("#cmd-tables", "B, 1")
    page.click("#cmd-next")
    page.wait_for_selector("#confirm[open]")
    assert page.text_content("#confirm-text") == "flash the displays on tables 1 (division A) and 3, 4 (division B)?"
    page.click("#confirm button[value=cancel]")

    # results in both divisions, each form and confirmation naming its division
    assert "division A round 1, table 1: 390 – 388" in record(page, 1, slip=(410, 388))
    assert "division B round 1, table 3: 401 – 399" in record(page, 3, slip=(401, 399))
    assert "division B" in record(page, 4, margin=90)  # 2.3.6(a): the director raises the margin
    # the tiles say so once the page draws the change
    page.wait_for_selector('#tiles .tile[data-table="4"] .note >> text="recorded: forfeit by side 2, 90 (not rated)"')
    assert note(page, 1) == "recorded 390–388"

    # show one division, then the other, then round 2 and back: nothing recorded is lost or misplaced
    page.select_option("#show-division", "B")
    page.wait_for_selector('#tiles .tile[data-table="1"][hidden]', state="attached")
    assert page.is_visible('#tiles .tile[data-table="3"]')
    page.select_option("#show-division", "A")
    page.wait_for_selector('#tiles .tile[data-table="3"][hidden]', state="attached")
    page.wait_for_selector('#tiles .tile[data-table="1"]:not([hidden])')
    h = Http(day.console.url)
    token = h.login(PASSWORD, "Chief TD")
    assert h.call("POST", "/api/round", {"number": 2, "division": ""}, {"X-CSRF-Token": token})[0] == 200
    page.wait_for_selector('#tiles .tile[data-table="1"] .s1 .name[title="Baker, Bob"]')
    page.wait_for_selector('#tiles .tile[data-table="4"] .s1 .name[title="Ortiz, Al"]')
    assert "recorded" not in note(page, 1) and "recorded" not in note(page, 4)  # round 2: no old notes
    assert h.call("POST", "/api/round", {"number": 1}, {"X-CSRF-Token": token})[0] == 200
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text=recorded 390–388')
    page.wait_for_selector('#tiles .tile[data-table="4"] .note >> text=recorded: forfeit')
    page.close()

    # the console killed outright (SIGKILL), then started again on the same state directory
    day.console.proc.kill()
    day.console.proc.wait()
    day.console = ConsoleProcess(day.broker, day.dir / "console", PASSWORD, extra=day.extra).start()
    page = chromium.login(browser, day.console.url, PASSWORD)
    page.wait_for_selector('#tiles .tile[data-table="4"] .note >> text=recorded: forfeit', timeout=20000)
    page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="recorded 390–388"')
    page.wait_for_selector('#tiles .tile[data-table="3"] .note >> text="recorded 401–399"')
    assert not page.errors, page.errors
    page.close()

    # both divisions export from the store, as TSH's score entry accepts them
    h = Http(day.console.url)
    h.login(PASSWORD)
    _, a, a_headers = h.call("GET", "/api/export/tsh.txt?division=A&round=1")
    b = h.call("GET", "/api/export/tsh.txt?division=B&round=1")[1].decode()
    assert a.decode() == "a 1 A\n1 390 2 388\n\n"
    assert a_headers["X-Rackside-Unscored-Players"] == "3,4"  # A's board 2 was not recorded: named, not guessed
    assert b == "pair 3 0 1 B\npair 4 0 1 B\na 1 B\n1 401 2 399\n3 90\n4 -90\n\n"
    # fed to TSH's own score entry (support/tshmodel.py): division B ends round 1 with every player scored
    from rackside.hall.console.scoring import tsh as tshfiles

    tsh_now = Tsh.load([tshfiles.parse_t(A_T, "A"), tshfiles.parse_t(B_T, "B")])
    assert [m for m in tsh_now.feed(a.decode() + b) if m.error] == []
    assert tsh_now.unscored("A", 1) == [3, 4] and tsh_now.unscored("B", 1) == []
    csv_b = h.call("GET", "/api/export/round.csv?division=B&round=1")[1].decode().splitlines()
    assert len(csv_b) == 3 and ",lateness forfeit,no," in csv_b[2]
    audit = json.loads(h.call("GET", "/api/audit")[1])["audit"]
    assert sorted((x["division"], x["action"], x["who"]) for x in audit) == [("A", "confirm", "director"), ("B", "confirm", "director"),
                                                                              ("B", "confirm", "director")]
    snap = json.loads(h.call("GET", "/api/snapshot")[1])
    assert [d["name"] for d in snap["divisions"]] == ["A", "B"] and snap["tsh_problems"] == []
