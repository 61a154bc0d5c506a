"""A clock result belongs to one game (issue 23 item 3): each clock game is bound to the round it
was started for, kept across a console SIGKILL, so a round-1 game's result that reaches the console
again (a resend, the retained result) after the director moved to round 2 is never offered for
round 2's players. The real `rackside hall console` process, a real broker and a real table clock;
the binding rules themselves on the hall state."""

from __future__ import annotations

import json

from rackside.hall.director import takeover
from rackside.hall.console.shell.app import Console
from rackside.hall.console.scoring.resultstore import ResultStore

from support.console import ConsoleProcess, Http, cheap_hash
from support.hallclock import LiveClock, clock_config, send
from support.broker import Recorder
from support.wait import wait

TABLE = 7
PASSWORD = "bind-pw"
# four players, two rounds: round 1 has 1 v 2 at board 7, round 2 has 1 v 3 there
T_FILE = """Ames, Ann 1500 2 3; ; board 7 7; p12 1 1;
Bell, Bob 1400 1 4; ; board 7 8; p12 2 1;
Cole, Cat 1300 4 1; ; board 8 7; p12 1 2;
Dunn, Dan 1200 3 2; ; board 8 8; p12 2 2;
"""


def _tile(h: Http) -> dict:
    status, body, _ = h.call("GET", f"/api/table/{TABLE}")
    return json.loads(body)["tile"] if status == 200 else {}


def _round(h: Http, token: str, number: int) -> None:
    status, body, _ = h.call("POST", "/api/round", {"number": number}, {"X-CSRF-Token": token})
    assert status == 200, body


def test_a_round_1_result_resent_after_a_sigkill_in_round_2_is_not_offered_for_round_2(make_broker, tmp_path):
    broker = make_broker(tables=str(TABLE), stations=0)
    (tmp_path / "a.t").write_text(T_FILE)
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD, extra=f'tsh = ["{tmp_path / "a.t"}"]\n')
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, TABLE, game_time="5:00"), tmp_path / "clock")
    try:
        console.start()
        h = Http(console.url)
        token = h.login(PASSWORD)
        wait(lambda: _tile(h).get("status") == "online")
        assert _tile(h)["names"] == ["Ames, Ann", "Bell, Bob"]  # round 1 at table 7
        live.tap("right")  # round 1's game starts (the non-starter starts side 1's time)
        game = live.clock.store.journal_path.stem
        wait(lambda: (_tile(h).get("state") or {}).get("game") == game and _tile(h)["state"]["phase"] == "running")

        _round(h, token, 2)  # the director moves on; table 7 is still playing its round-1 game
        wait(lambda: _tile(h).get("names") == ["Ames, Ann", "Cole, Cat"])
        console.proc.kill()  # SIGKILL mid-round
        console.proc.wait(10)

        rec = Recorder(broker)
        live.command("end")  # the round-1 game ends while the console is down
        rec.wait_for(lambda r: any(e["kind"] == "result" for e in r.json("event")))
        console.start()
        h = Http(console.url)
        token = h.login(PASSWORD)
        wait(lambda: _tile(h).get("status") == "online" and _tile(h).get("round") == 2)
        # the clock's round-1 result delivered again, as a resend brings it
        send(broker, TABLE, {"id": "ask-again", "cmd": "resend", "game": game, "from_seq": 1})
        rec.wait_for(lambda r: sum(e["kind"] == "result" for e in r.json("event")) >= 2)
        rec.close()
        wait(lambda: any(e.get("kind") == "result" for e in json.loads(h.call("GET", f"/api/table/{TABLE}")[1])["history"]))

        tile = _tile(h)
        assert tile["names"] == ["Ames, Ann", "Cole, Cat"] and tile["result"] is None, tile  # not round 2's
        status, body, _ = h.call("POST", f"/api/result/{TABLE}", {"slip": [400, 350], "confirm": True}, {"X-CSRF-Token": token})
        assert status != 200 and b"of round 1's game" in body, body  # nothing to record for round 2 from round 1's clock
        assert json.loads(h.call("GET", "/api/audit")[1])["audit"] == []

        _round(h, token, 1)  # round 1's players get it
        tile = wait(lambda: (t := _tile(h)) and t["result"] and t)
        assert tile["names"] == ["Ames, Ann", "Bell, Bob"] and tile["result"]["game"] == game
        status, body, _ = h.call("POST", f"/api/result/{TABLE}", {"slip": [400, 350], "confirm": True}, {"X-CSRF-Token": token})
        assert status == 200 and json.loads(body)["round"] == 1, body
    finally:
        live.close()
        console.stop()


def _msg(console: Console, n: int, leaf: str, data: dict) -> None:
    console.on_message(f"rackside/v1/h/table/{n}/{leaf}", json.dumps(data).encode())


def _state(game: str, seq: int, at: str, phase: str = "running") -> dict:
    players = [{"player": p, "remaining_ms": 60_000, "overtime_s": 0, "penalty": 0, "forfeit": False} for p in (1, 2)]
    return {"seq": seq, "game": game, "phase": phase, "running": 1, "players": players, "ending": None, "sent_at": at}


def _result(game: str) -> dict:
    players = [{"player": p, "remaining_ms": 1000, "overtime_s": 0, "penalty": 0, "forfeit": False} for p in (1, 2)]
    return {"kind": "result", "game": game, "seq": 0, "ending": "end", "players": players, "forfeits": [],
            "winner_by_forfeit": None, "lateness_margin": None, "at": None}


def test_a_spares_game_takes_the_round_of_the_game_it_continues_and_a_reused_id_is_a_new_game(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    console = Console("h", cheap_hash("pw"), store=store)
    t = console.state.table(3)
    _msg(console, 3, "state", _state("game-000001", 4, "2026-05-01T10:00:00+00:00"))
    console.state.round.number = 2
    console.apply_pairings()
    assert t.bound["game-000001"].round == 1
    # a spare takes over table 3's round-1 game, under an id from its own journals
    _msg(console, 3, "state", _state("game-000009", 0, "2026-05-01T10:20:00+00:00", "setup"))
    assert "game-000009" not in t.bound  # not started: no round yet
    adjust = {"kind": "input", "game": "game-000009", "seq": 1, "t_ns": 5, "input": "adjust", "player": 1,
              "remaining_ms": 60_000, "source": "hall", "at": "2026-05-01T10:20:01+00:00"}
    _msg(console, 3, "event", adjust)
    assert t.bound["game-000009"].round == 2  # started in round 2: until its takeover says otherwise
    old_state = json.dumps({**_state("game-000001", 4, "2026-05-01T10:00:00+00:00"), "to_move": 1}).encode()
    sent = takeover.commands(old_state, table=3, old_device="pi-old", new_device="pi-spare", stamp="s1")
    reason = sent[-1]["reason"]  # what the spare journals with its takeover input, as hall.director.takeover wrote it
    _msg(console, 3, "event", {"kind": "input", "game": "game-000009", "seq": 3, "t_ns": 5, "input": "takeover",
                               "player": 1, "source": "hall", "reason": reason, "at": None})
    assert t.bound["game-000009"].round == 1
    _msg(console, 3, "state", _state("game-000001", 5, "2026-05-01T10:10:00+00:00"))  # the old clock's, delivered late
    assert t.bound["game-000001"].round == 1  # not taken for a new game
    _msg(console, 3, "state", _state("game-000009", 4, "2026-05-01T10:21:00+00:00"))
    _msg(console, 3, "result", _result("game-000009"))
    assert t.current_result() is None  # round 2 on screen: the spare's result is round 1's
    console.state.round.number = 1
    console.apply_pairings()
    assert t.current_result()["game"] == "game-000009"

    # a restarted console finds the bindings in the store
    again = Console("h", cheap_hash("pw"), store=ResultStore(tmp_path / "r.sqlite"))
    assert 3 not in again.state.tables  # no tile until table 3 speaks (or a pairing seats a game there)
    assert {g: b.round for g, b in again.state.table(3).bound.items()} == {"game-000001": 1, "game-000009": 1}

    # later, in round 3, another clock at table 3 numbers its game game-000001 again: a new game
    console.state.round.number = 3
    console.apply_pairings()
    _msg(console, 3, "state", _state("game-000001", 0, "2026-05-01T11:30:00+00:00", "setup"))
    assert t.bound["game-000001"].round == 1  # waiting in setup: not yet a game of any round
    _msg(console, 3, "state", _state("game-000001", 1, "2026-05-01T11:31:00+00:00"))
    assert t.bound["game-000001"].round == 3
    # but a state of the old game-000001 delivered late (queued while the console was down) is not
    _msg(console, 3, "state", _state("game-000009", 5, "2026-05-01T10:25:00+00:00"))
    assert t.bound["game-000009"].round == 1


def test_a_spare_that_takes_over_a_round_1_game_in_round_2_gives_its_result_to_round_1(make_broker, tmp_path):
    """The old clock dies mid-game after the director moved on to round 2; a spare on table 7 gets
    hall.director.takeover's commands (its own journals number its games from 1 again) and finishes the
    game; its result is round 1's, also after a console SIGKILL, never round 2's."""
    from rackside.hall.wire import topics

    broker = make_broker(tables=str(TABLE), stations=0)
    (tmp_path / "a.t").write_text(T_FILE)
    console = ConsoleProcess(broker, tmp_path / "console", PASSWORD, extra=f'tsh = ["{tmp_path / "a.t"}"]\n')
    config = clock_config(tmp_path / "clock.toml", broker, TABLE, game_time="5:00")
    old = LiveClock(config, tmp_path / "old")
    spare = None
    rec = Recorder(broker)
    try:
        console.start()
        h = Http(console.url)
        token = h.login(PASSWORD)
        wait(lambda: _tile(h).get("status") == "online")
        old.tap("right")
        game = old.clock.store.journal_path.stem
        wait(lambda: (_tile(h).get("state") or {}).get("phase") == "running")
        _round(h, token, 2)
        old.close()  # the old clock is gone mid-game
        state_topic = topics.table(broker.hall, TABLE, "state")
        last = [p for t, p, _ in rec.messages if t == state_topic][-1]  # its last state, as the director has it

        spare = LiveClock(config, tmp_path / "spare")
        wait(lambda: _tile(h).get("status") == "online")
        for cmd in takeover.commands(last, table=TABLE, old_device="pi-old", new_device="pi-spare", stamp="t1"):
            send(broker, TABLE, cmd)
        wait(lambda: any(x.get("input") == "takeover" for x in spare.journal()))
        spare_game = spare.clock.store.journal_path.stem
        # the console has the spare's game, bound to round 1: round 2's tile says the clock is on round 1's game
        wait(lambda: any(e.get("input") == "takeover" and e.get("game") == spare_game
                         for e in json.loads(h.call("GET", f"/api/table/{TABLE}")[1])["history"]))
        assert _tile(h)["earlier"] is True and _tile(h)["clock_on"] == {"division": "a", "round": 1}
        console.proc.kill()  # and the console is SIGKILLed while the spare plays on
        console.proc.wait(10)
        spare.tap("neutralise")  # the centre press resumes the side to move
        spare.command("end")
        rec.wait_for(lambda r: any(e["kind"] == "result" and e["game"] == spare_game for e in r.json("event")))

        console.start()
        h = Http(console.url)
        token = h.login(PASSWORD)
        wait(lambda: (t := _tile(h)).get("round") == 2 and any(
            e.get("kind") == "result" for e in json.loads(h.call("GET", f"/api/table/{TABLE}")[1])["history"]))
        assert _tile(h)["result"] is None  # round 2's players: not theirs
        _round(h, token, 1)
        tile = wait(lambda: (t := _tile(h)) and t["result"] and t)
        assert tile["names"] == ["Ames, Ann", "Bell, Bob"] and tile["result"]["game"] == spare_game
        status, body, _ = h.call("POST", f"/api/result/{TABLE}", {"slip": [380, 360], "confirm": True}, {"X-CSRF-Token": token})
        assert status == 200 and json.loads(body)["round"] == 1, body
    finally:
        rec.close()
        if spare is not None:
            spare.close()
        console.stop()


def test_a_game_started_before_the_director_moves_on_waits_in_setup_for_its_round():
    """new_game on every table at the end of round 1, then the round switch: the new games are
    round 2's, since none was started (pressed) before the switch."""
    console = Console("h", cheap_hash("pw"))
    _msg(console, 3, "state", _state("game-000001", 9, "2026-05-01T10:00:00+00:00", "ended"))
    _msg(console, 3, "state", _state("game-000002", 0, "2026-05-01T10:30:00+00:00", "setup"))
    console.state.round.number = 2
    console.apply_pairings()
    _msg(console, 3, "state", _state("game-000002", 1, "2026-05-01T10:35:00+00:00"))
    t = console.state.tables[3]
    assert {g: b.round for g, b in t.bound.items()} == {"game-000001": 1, "game-000002": 2}


def test_a_result_stays_with_the_seat_it_was_played_at_when_the_pairings_change():
    console = Console("h", cheap_hash("pw"))
    seat = lambda names, numbers: {"division": "A", "label": "3", "round": 1, "names": names, "numbers": numbers}  # noqa: E731
    console.state.set_seats({3: seat(["Ames", "Bell"], [1, 2])}, {})
    _msg(console, 3, "state", _state("game-000001", 1, "2026-05-01T10:00:00+00:00"))
    _msg(console, 3, "result", _result("game-000001"))
    t = console.state.tables[3]
    assert t.current_result() is not None and t.withheld() == ""
    console.state.set_seats({3: seat(["Cole", "Dunn"], [3, 4])}, {})  # TSH files imported again: others at table 3
    assert t.current_result() is None
    assert "another game of round 1 (Ames v Bell" in t.withheld()


def test_after_a_restart_an_earlier_rounds_resent_result_goes_to_that_rounds_tile(tmp_path):
    """The binding decides both what a result is offered for and which game a tile shows: a round-1
    result resent after a restart, while the clock plays its round-2 game, is kept with its own game
    (Table.past) and shown and offered on round 1's tile, never round 2's."""
    console = Console("h", cheap_hash("pw"), store=ResultStore(tmp_path / "r.sqlite"))
    _msg(console, 3, "state", _state("game-000001", 4, "2026-05-01T10:00:00+00:00"))
    console.state.round.number = 2
    console.apply_pairings()
    _msg(console, 3, "state", _state("game-000002", 1, "2026-05-01T10:40:00+00:00"))  # round 2's game begins

    again = Console("h", cheap_hash("pw"), store=ResultStore(tmp_path / "r.sqlite"))  # after a SIGKILL
    again.state.round.number = 2
    again.apply_pairings()
    _msg(again, 3, "state", _state("game-000002", 2, "2026-05-01T10:41:00+00:00"))
    _msg(again, 3, "result", _result("game-000001"))  # the clock answers a resend of round 1's game
    t = again.state.tables[3]
    assert t.current_result() is None and t.tile()["earlier"] is False and t.tile()["state"]["game"] == "game-000002"
    again.state.round.number = 1
    again.apply_pairings()
    tile = t.tile()
    assert tile["earlier"] is True and tile["clock_on"] == {"division": None, "round": 2}
    assert tile["result"]["game"] == "game-000001" and t.current_result()["game"] == "game-000001"


def test_a_game_id_used_again_at_a_table_by_another_clock_keeps_its_own_seqs_slip_and_result():
    """A game's identity is its table, its id and its binding, not the id alone (review: seqs keyed by
    game id). Table 3's clock played game-000001 (seqs 1-6, a slip, a result, a second device seen);
    a spare at table 3 numbers its own game game-000001 again, later: its events are not repeats, its
    slip not a redelivery, its result not a second device's, and the old mark does not hold it. Table
    4's game-000001 at the same time is its own table's."""
    from rackside.hall.console.state.hallstate import HallState
    h = HallState("h")
    P = "rackside/v1/h/table/"

    def put(n: int, leaf: str, data: dict) -> list:
        return h.on_message(f"{P}{n}/{leaf}", json.dumps(data).encode())

    def inputs(n: int, game: str, minute: int, ending: dict) -> list:
        out = []
        for seq in range(1, 7):
            name = "slip_sign" if seq == 6 else "press"
            out += put(n, "event", {"kind": "input", "game": game, "seq": seq, "t_ns": seq, "input": name, "player": 1,
                                    "at": f"2026-05-01T{minute // 60:02d}:{minute % 60:02d}:{seq:02d}+00:00"})
        put(n, "state", _state(game, 6, f"2026-05-01T{minute // 60:02d}:{minute % 60:02d}:30+00:00", "ended"))
        put(n, "result", {**_result(game), **ending})
        return out

    def slip(game: str) -> dict:
        return {"kind": "slip", "game": game, "seq": 6, "scores": [400, 380], "penalties": [0, 0], "final": [400, 380],
                "numbers": [1, 2], "ending": "end", "forfeits": [], "at": None}

    inputs(3, "game-000001", 600, {"ending": "end"})
    put(3, "event", slip("game-000001"))
    t = h.tables[3]
    t.used_twice("game-000001", "table 3 sent two different results of game game-000001")
    put(3, "state", _state("game-000002", 1, "2026-05-01T10:30:00+00:00"))  # the clock's next game
    # table 4 plays its own game-000001 meanwhile: its own seqs
    assert [k for k, _ in inputs(4, "game-000001", 620, {"ending": "end"})].count("event") == 6
    # later a spare at table 3 numbers its game game-000001 again
    put(3, "state", _state("game-000001", 0, "2026-05-01T11:00:00+00:00", "setup"))
    late = [{"player": 1, "remaining_ms": -61_000, "overtime_s": 61, "penalty": 20, "forfeit": False},
            {"player": 2, "remaining_ms": 1000, "overtime_s": 0, "penalty": 0, "forfeit": False}]
    events = inputs(3, "game-000001", 661, {"players": late})
    assert [k for k, _ in events].count("event") == 6  # none dropped as a repeat of the old game's
    assert [e["seq"] for e in t.history if e.get("kind") == "input" and e["game"] == "game-000001"] == [1, 2, 3, 4, 5, 6] * 2
    assert t.result["players"][0]["penalty"] == 20 and t.twice is None  # its own result, no second device
    out = put(3, "event", slip("game-000001"))
    assert [k for k, _ in out] == ["slip", "event"]  # the new game's slip, kept: not a redelivery of the old one's
    assert t.bound["game-000001"].since == "2026-05-01T11:01:01+00:00"
    assert h.tables[4].twice is None and h.tables[4].result["players"][0]["penalty"] == 0


def test_a_tables_used_twice_mark_is_kept_across_a_console_restart(tmp_path):
    """Issue 36's mark (a table's identity used by two devices in a game) was held in memory only: a
    restarted console forgot the clone, and let the game's next slip through. It is kept in the
    event's store and read back at start; a mark cleared with its game id bound afresh stays cleared."""
    store = ResultStore(tmp_path / "r.sqlite")
    console = Console("h", cheap_hash("pw"), store=store)
    _msg(console, 3, "state", _state("game-000001", 5, "2026-05-01T10:00:05+00:00"))
    _msg(console, 3, "state", _state("game-000001", 4, "2026-05-01T10:00:06+00:00"))  # a second device: back in seq
    mark = console.state.tables[3].twice
    assert mark is not None and "jumped back" in mark["why"]
    store.close()

    again = Console("h", cheap_hash("pw"), store=ResultStore(tmp_path / "r.sqlite"))
    assert 3 not in again.state.tables  # no tile until table 3 speaks
    _msg(again, 3, "state", _state("game-000001", 6, "2026-05-01T10:00:07+00:00"))
    t = again.state.tables[3]
    assert t.twice == mark and t.tile()["twice"] == mark  # the clone is not forgotten
    # a slip of that game is held for the director, as before the restart
    for seq in (7, 8):
        _msg(again, 3, "event", {"kind": "input", "game": "game-000001", "seq": seq, "t_ns": seq, "input": "slip_sign",
                                 "player": 1, "at": None})
    _msg(again, 3, "state", _state("game-000001", 8, "2026-05-01T10:00:09+00:00", "ended"))
    _msg(again, 3, "event", {"kind": "slip", "game": "game-000001", "seq": 8, "scores": [400, 380], "penalties": [0, 0],
                             "final": [400, 380], "numbers": [1, 2], "ending": "end", "forfeits": [], "at": None})
    held = again.paperless.held.get(3, "game-000001")
    assert held is not None and held["suspect"]


def test_a_slip_held_for_a_game_whose_id_a_later_game_reuses_stays_that_games(tmp_path):
    """A held slip belongs to its game's binding, not to the id alone (f-hall's review: held slips keyed
    by table and game id). Table 3's clock dies after its players sign game-000001: the slip is held
    for want of the clock's result. The table moves on to game-000002; later a spare numbers its own
    game game-000001. Its result is not the held slip's missing result: the slip is not judged again
    against it, the spare is told nothing of a slip it never sent, the audit has the hold once, and
    the director cannot record the old slip as signed against the new game (setting it aside works)."""
    from support.inproc import inproc_console
    from support.console import post

    slip = {"kind": "slip", "game": "game-000001", "seq": 6, "scores": [400, 380], "penalties": [0, 0],
            "final": [400, 380], "numbers": [1, 2], "ending": "end", "forfeits": [], "at": None}

    def msg(c, leaf: str, data: dict) -> None:
        c.deliver(f"rackside/v1/{c.published.hall}/table/3/{leaf}", json.dumps(data).encode())

    def outcomes(c) -> list[str]:
        return [cmd["outcome"] for n, cmd in c.published.commands if n == 3 and cmd["cmd"] == "slip_outcome"]

    with inproc_console(tmp_path / "console") as c:
        held = c.console.paperless.held
        for seq in range(1, 7):  # the old game's presses and its players' signature, then their slip
            msg(c, "event", {"kind": "input", "game": "game-000001", "seq": seq, "t_ns": seq, "player": 1,
                             "input": "slip_sign" if seq == 6 else "press", "at": f"2026-05-01T10:00:{seq:02d}+00:00"})
        msg(c, "event", slip)  # held: the clock died before its result came
        assert [(h["table"], h["slip"]["game"]) for h in held.view()] == [(3, "game-000001")]
        assert outcomes(c) == ["held"]
        msg(c, "state", _state("game-000002", 1, "2026-05-01T10:40:00+00:00"))  # the table moved on
        msg(c, "state", _state("game-000001", 1, "2026-05-01T11:20:00+00:00"))  # a spare's own game-000001
        msg(c, "result", _result("game-000001"))  # the spare's result
        assert outcomes(c) == ["held"]  # the spare is told nothing of the old slip
        assert [h["slip"]["scores"] for h in held.view()] == [[400, 380]]  # still held, the old game's
        holds = [a for a in c.console.event.store.audit(None, table=3) if a["action"] == "slip held"]
        assert len(holds) == 1, holds
        status, out = post(c.director, "/api/slip/3", {"game": "game-000001", "action": "record"})
        assert status == 400 and "an earlier game" in out["error"], out
        status, out = post(c.director, "/api/slip/3", {"game": "game-000001", "action": "dismiss",
                                                         "reason": "the dead clock's game"})
        assert status == 200, out
        assert held.view() == []
