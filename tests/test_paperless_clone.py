"""A copied card cannot decide its own table's game (issue 36 item 1), through `rackside hall console` as
its own process, a real Mosquitto and a clock with a keypad as the hall sees it (support.keypadclock,
with its Last Will and its "online" on every reconnect, as hall.net.link).

The adversary: a player who copied their own table's SD card (its credentials file: user, password,
the bound client id) and has a phone on the hall Wi-Fi. The card connects only under the table's
bound client id, so the broker closes the real clock's connection ("already connected, closing old
connection") and publishes its Last Will. The red team's break was a slip 10-990 for table 1's own
game, sent while the game ran: held for want of the clock's result, then recorded "signed at the
clock" when the result came, and the players' real 410-390 refused as "already recorded".
"""

from __future__ import annotations

import time

from rackside.hall.wire import payloads, topics

from support.paperless import Hall
from support.wait import wait


def clone_slip(h: Hall, clock, scores: tuple[int, int], sign_first: bool = False) -> None:
    """Table `clock.n`'s copied card, on a phone (support.keypadclock's `clock`): see `card_slip`."""
    card_slip(h, clock.n, clock.game, clock.seq + 1, list(clock.numbers), scores, sign_first)


def card_slip(h: Hall, n: int, game: str, seq: int, numbers: list, scores: tuple[int, int], sign_first: bool = False) -> None:
    """Table `n`'s copied card, on a phone: its login and client id, one slip of `game` at `seq`
    (after its own signature's input event if `sign_first`, as a clock does), then gone."""
    card = h.broker.client(topics.table_user(n))  # the card's user, password and bound client id
    try:
        topic = topics.table(h.broker.hall, n, "event")
        if sign_first:
            line = {"t_ns": time.monotonic_ns(), "input": "slip_sign", "player": 2}
            card.publish(topic, payloads.event_payload(line, game, seq, time.time_ns()), qos=1).wait_for_publish(10)
        slip = {"kind": "slip", "game": game, "seq": seq, "scores": list(scores), "penalties": [0, 0],
                "final": list(scores), "numbers": numbers, "at": payloads.iso(time.time_ns())}
        card.publish(topic, payloads.dumps(slip), qos=1).wait_for_publish(10)
    finally:
        card.loop_stop()
        card.disconnect()


def held_of(h: Hall, n: int) -> dict | None:
    return next((x for x in h.paperless()["held_slips"] if x["table"] == n), None)


def test_a_copied_cards_slip_while_the_game_runs_is_held_and_the_players_slip_is_the_directors(tmp_path):
    h = Hall(tmp_path)
    try:
        one = h.running(1, (1, 2))  # Adams starts Baker's time: the game runs

        clone_slip(h, one, (10, 990))
        held = wait(lambda: held_of(h, 1))
        assert held["slip"]["scores"] == [10, 990], held
        wait(lambda: h.tile(1)["status"] == "online")  # the real clock took its connection back

        # the game ends at the clock; its result does not make the copied card's slip count
        one.press(2, 300)
        one.end(1)
        wait(lambda: h.tile(1)["result"])
        wait(lambda: h.tile(1)["final"] or (held_of(h, 1) or {}).get("suspect") is not None)
        assert "1" not in h.csv(), "the copied card's 10-990 was recorded"
        held = held_of(h, 1)
        assert held["slip"]["scores"] == [10, 990] and held.get("suspect") is True and held["agrees"] is False, held
        assert "copied card" in held["why"] and "table 1" in held["why"], held
        tile = h.tile(1).get("twice")
        assert tile and tile["game"] == one.game, tile
        assert [a for a in h.audit() if a["action"] == "identity used twice" and a["pn_high"] == 1]

        # the players sign 410-390 at the clock: held for the director too (which connection signed
        # what is theirs to ask), it agrees, and the director accepts it (audited)
        one.slip((410, 390))
        real = wait(lambda: (x := held_of(h, 1)) and x["slip"]["scores"] == [410, 390] and x)
        assert real["agrees"] is True and real["suspect"] is True, real
        assert h.post("/api/slip/1", {"game": one.game, "action": "accept"})[0] == 200
        row = wait(lambda: h.csv().get("1"))
        assert (row["score1"], row["score2"]) == ("410", "390"), row
        assert held_of(h, 1) is None
        assert wait(lambda: [c for c in one.sent("slip_outcome") if c["outcome"] == "recorded"])
    finally:
        h.close()


def test_a_copied_card_that_signs_after_the_end_before_the_players_is_held(tmp_path):
    """The card takes the client id over after the clock's result and sends a signature and a slip
    that continue the clock's sequence: the broker's Last Will came first, so the console knows
    another connection sent them; the director rejects the slip (audited)."""
    h = Hall(tmp_path)
    try:
        four = h.ended(4, (7, 8))
        clone_slip(h, four, (10, 990), sign_first=True)
        wait(lambda: h.tile(4)["final"] or held_of(h, 4))
        assert "4" not in h.csv(), "the copied card's 10-990 was recorded"
        held = held_of(h, 4)
        assert held["slip"]["scores"] == [10, 990] and held.get("suspect") is True, held
        assert "taken over" in held["why"] and "Last Will" in held["why"], held
        assert h.tile(4)["twice"]["game"] == four.game
        status, out = h.post("/api/slip/4", {"game": four.game, "action": "reject", "reason": "not what the players signed"})
        assert status == 200, out
        assert held_of(h, 4) is None and "4" not in h.csv()
        assert [a for a in h.audit() if a["action"] == "slip set aside" and a["pn_high"] == 4]
    finally:
        h.close()


def test_the_red_teams_script_prints_held_for_each_slip_attack(tmp_path):
    """tools/redteam/slip_clone.py, run from outside with a table's copied credentials file: at table
    1 while its game runs, at table 4 after its end before the players sign. Every attack HELD,
    nothing recorded (on the old console, the one after the end was recorded: BROKEN)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from support.paperless import PASSWORD

    h = Hall(tmp_path)
    script = Path(__file__).resolve().parents[1] / "tools" / "redteam" / "slip_clone.py"

    def red_team(n: int) -> list[str]:
        run = subprocess.run([sys.executable, str(script), "--card", str(h.broker.credentials(f"table-{n}")),
                              "--url", h.broker.url, "--console", h.console.url],
                             env={**os.environ, "RACKSIDE_DIRECTOR_PASSWORD": PASSWORD}, capture_output=True, text=True, timeout=120)
        lines = run.stdout.splitlines()
        assert len(lines) == 2 and not [x for x in lines if ": BROKEN" in x] and run.returncode == 0, (run.stdout, run.stderr)
        return lines

    try:
        h.running(1, (1, 2))
        h.ended(4, (7, 8))
        assert all(": HELD (" in x for x in red_team(1))
        running, signed = red_team(4)
        assert running.startswith("slip while running: SKIPPED") and signed.startswith("signed as the clock: HELD ("), (running, signed)
        assert "1" not in h.csv() and "4" not in h.csv()
    finally:
        h.close()


def test_a_result_recorded_that_the_players_did_not_sign_is_shown_on_their_clock(tmp_path):
    """A result of table 4's game is recorded before its players sign (here the director's form; a
    copied card's with the clock switched off is the same to the clock): their slip is refused, and the
    console's answer carries what was recorded, by the clock's sides, for the clock to show and its
    players to dispute at their buttons (tests/test_slip_runner.py shows the clock's side)."""
    from support.console import post

    h = Hall(tmp_path)
    try:
        four = h.ended(4, (8, 7))  # Hart at side 1: the clock's sides are not TSH's order
        # the form takes the players in the sides they checked in at: Hart 300 at side 1, Gill 400
        status, out = post(h.h, "/api/result/4", {"slip": [300, 400], "confirm": True})
        assert status == 200, out
        four.slip((412, 350))
        answer = wait(lambda: next((c for c in four.sent("slip_outcome") if c["game"] == four.game), None))
        assert answer["outcome"] == "refused" and answer["recorded"] == [300, 400], answer
    finally:
        h.close()


def test_the_marked_tile_and_the_held_slips_why_on_the_directors_page(tmp_path, browser):
    """The tile says the table's identity was used twice; the held slip says why, in the paperless list."""
    import pytest

    from support import browser as chromium
    from support.paperless import PASSWORD

    if not chromium.have_chromium():
        pytest.skip("Debian's chromium is not installed (setup.sh --dev)")
    h = Hall(tmp_path)
    try:
        one = h.running(1, (1, 2))
        page = chromium.login(browser, h.console.url + "/", PASSWORD)
        clone_slip(h, one, (10, 990))
        wait(lambda: h.tile(1)["status"] == "online" and h.tile(1)["twice"])
        page.wait_for_selector('#tiles .tile[data-table="1"] .note >> text="identity used twice: slips held"')
        page.wait_for_function("() => document.querySelector('#held-list').textContent.includes('copied card')")
        assert "10–990" in page.text_content("#held-list")
        # the page still open (its EventSource streaming), the console stops on SIGTERM by itself: the
        # stream never ended, uvicorn waited for its connection to close, and the process was killed
        # after support.broker.end_process's 10 s (this test took 13 s, 10 of them that wait)
        # (uvicorn, its shutdown done, raises the signal it caught again: the exit is SIGTERM's, not SIGKILL's)
        import signal

        proc = h.console.proc
        h.console.stop()
        assert proc.returncode == -signal.SIGTERM, f"the console did not stop on SIGTERM with a page open (exit {proc.returncode})"
    finally:
        h.close()


def test_the_red_teams_break_against_a_real_keypad_clock(tmp_path):
    """The same break against the clock's own firmware (firmware.cli.Clock on gpiozero's MockFactory
    pins, its keypad through the real scanner, its hall output's Last Will and reconnects,
    support.hallclock.LiveClock): the copied card's 10-990 while the game runs is held; the players
    type and sign 412-350 at the clock, which is held for the director (the game's identity was used
    twice), accepted, recorded, and the clock shows rEC."""
    from rackside.game.clock import Phase
    from rackside.game.slip import Step

    from support.hallclock import LiveClock, clock_config

    h = Hall(tmp_path)
    live = None
    try:
        live = LiveClock(clock_config(tmp_path / "clock1.toml", h.broker, 1, game_time="25:00", keypad=True), tmp_path / "state1")
        wait(lambda: h.tile(1)["status"] == "online")
        for number, side in (("1", "left"), ("2", "right")):  # Adams at side 1, Baker at side 2 (2.3.1(b))
            for k in number:
                live.key(k)
            live.tap(side)
        wait(lambda: live.runner.table.seating.seated == (1, 2))
        live.tap("right")  # Baker starts Adams's time, Adams being TSH's starter (2.2)
        state = wait(lambda: (st := h.tile(1)["state"] or {}).get("phase") == "running" and st)

        card_slip(h, 1, state["game"], state["seq"] + 1, [1, 2], (10, 990))
        assert wait(lambda: held_of(h, 1))["slip"]["scores"] == [10, 990]
        wait(lambda: h.tile(1)["status"] == "online")  # the clock took its connection back, and said so

        live.command("end")
        wait(lambda: live.runner.clock.phase is Phase.ENDED and h.tile(1)["result"])
        wait(lambda: h.tile(1)["final"] or held_of(h, 1).get("suspect") is not None)
        assert "1" not in h.csv(), "the copied card's 10-990 was recorded"
        assert held_of(h, 1).get("suspect") is True and (h.tile(1).get("twice") or {}).get("game") == state["game"]
        for k in "412#350#":
            live.key(k)
        live.tap("left")
        wait(lambda: live.runner.slip_session.slip.signed[0])
        live.tap("right")
        wait(lambda: live.runner.slip_session.slip.step is Step.FINAL)
        real = wait(lambda: (x := held_of(h, 1)) and x["slip"]["scores"] == [412, 350] and x)
        assert real["agrees"] is True and "1" not in h.csv(), real
        assert h.post("/api/slip/1", {"game": state["game"], "action": "accept"})[0] == 200
        assert wait(lambda: live.runner.slip_session.slip.outcome == "recorded")
        row = h.csv()["1"]
        assert (row["score1"], row["score2"], row["entry"]) == ("412", "350", "signed at the clock"), row
    finally:
        if live is not None:
            live.close()
        h.close()
