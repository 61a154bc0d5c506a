"""End to end: gpiozero mock pins -> board queue -> runner (debounce, gestures, core, journal) ->
recording displays, on a fake clock. Every assertion about time is exact to the nanosecond."""


import pytest

from rackside.game.clock import NS_PER_MS, NS_PER_S, Ending, Phase, Rules
from rackside.game.messages import Edge
from rackside.firmware.runner import CHECKPOINT_NS

from support.clock import T0
from support.firmware_rig import make_rig

GAME_NS = 25 * 60 * NS_PER_S


def start_left(rig, at_ms: float = 10):
    """The right player presses to start the left player's time (2.2); returns the edge time."""
    rig.after_ms(at_ms)
    t = rig.tap("right")
    assert rig.view().phase is Phase.RUNNING and rig.view().players[0].running
    return t


def test_rig_edges_carry_the_fake_clock_time(rig):
    rig.after_ms(12.345678).down("left")
    kind, t, button, down = rig.board.events.get_nowait()
    assert (kind, t, button, down) == ("edge", rig.now, "left", True)


def test_press_is_charged_from_its_edge_to_the_nanosecond(rig):
    t_start = start_left(rig)
    rig.advance_ms(7_000)
    rig.at(t_start + 7_123_456_789)
    rig.down("left")
    rig.after_ms(40).pump()  # the runner sees the edge 40 ms late: still charged from the edge
    assert rig.remaining_ns(1) == GAME_NS - 7_123_456_789
    assert rig.view().players[1].running
    assert rig.runner.clock.switched_ns == t_start + 7_123_456_789


def test_contact_bounce_on_press_and_release_switches_once_at_the_first_edge(rig):
    t_start = start_left(rig)
    t_press = t_start + 5 * NS_PER_S
    rig.at(t_press).down("left")
    for ms, down in [(0.4, False), (0.9, True), (2.5, False), (3.1, True), (6.0, False), (6.2, True)]:
        rig.at(t_press + round(ms * NS_PER_MS))
        rig.down("left") if down else rig.up("left")
    rig.pump()
    t_release = t_press + 120 * NS_PER_MS
    rig.at(t_release).up("left")
    for ms, down in [(0.3, True), (1.0, False), (4.0, True), (9.5, False)]:
        rig.at(t_release + round(ms * NS_PER_MS))
        rig.down("left") if down else rig.up("left")
    rig.advance_ms(200)
    assert rig.runner.clock.switched_ns == t_press
    assert rig.remaining_ns(1) == GAME_NS - 5 * NS_PER_S
    assert [e["input"] for e in rig.journal_inputs()] == ["press", "press"]  # start + one switch
    # and the left player's next press (after the line settled) switches back
    t_back = t_press + 3 * NS_PER_S
    rig.at(t_back).down("right").pump()
    assert rig.runner.clock.switched_ns == t_back
    assert rig.remaining_ns(2) == GAME_NS - 3 * NS_PER_S


def test_edges_are_fed_to_the_core_in_edge_order_whatever_order_they_were_queued(rig):
    t_start = start_left(rig)
    t = t_start + 4 * NS_PER_S
    rig.at(t + 5 * NS_PER_MS)
    # the back-end delivered the right player's edge before the left one's, though it came later
    rig.board.events.put(Edge(t + 300_000, "right", True))
    rig.board.events.put(Edge(t, "left", True))
    rig.pump()
    assert rig.runner.clock.switched_ns == t
    assert rig.view().players[1].running


@pytest.mark.parametrize("first", ["left", "right"])
def test_both_buttons_within_a_millisecond_the_running_players_edge_wins(rig, first):
    """Documented outcome: whichever edge came first, the running player's press switches the
    clock and the other press is part of the collision (Rules.switch_guard_ms)."""
    t_start = start_left(rig)
    t = t_start + 9 * NS_PER_S
    second = "right" if first == "left" else "left"
    rig.at(t).down(first)
    rig.at(t + 600_000).down(second)  # 0.6 ms later
    rig.advance_ms(50)
    rig.up(first).up(second).advance_ms(100)
    left_edge = t if first == "left" else t + 600_000
    assert rig.view().players[1].running  # the right player's time runs
    assert rig.runner.clock.switched_ns == left_edge
    assert rig.remaining_ns(1) == GAME_NS - (left_edge - t_start)


def test_a_held_button_does_not_repeat(rig):
    start_left(rig)
    rig.after_ms(2_000).down("left").pump()
    switched = rig.runner.clock.switched_ns
    rig.advance_ms(60_000)  # held for a minute
    assert rig.runner.clock.switched_ns == switched
    assert rig.view().players[1].running
    assert len(rig.journal_inputs()) == 2


def test_every_input_is_journalled_before_it_is_applied(rig, monkeypatch):
    seen = []
    record = rig.store.record

    def spy(event, **extra):
        seen.append((event, rig.runner.clock.since_ns))  # the clock has not moved yet
        return record(event, **extra)

    monkeypatch.setattr(rig.store, "record", spy)
    t_start = start_left(rig)
    rig.after_ms(1_500).tap("left")
    assert [e.t_ns for e, _ in seen] == [t_start, t_start + 100 * NS_PER_MS + 1_500 * NS_PER_MS]
    assert seen[1][1] == t_start  # when the second press was recorded, the core was still at the first
    on_disk = rig.journal_inputs()
    assert [(d["input"], d["player"], d["t_ns"]) for d in on_disk] == [("press", 2, seen[0][0].t_ns), ("press", 1, seen[1][0].t_ns)]


def test_checkpoints_at_least_once_a_second_while_live_and_not_in_setup(rig, monkeypatch):
    times = []
    checkpoint = rig.store.checkpoint
    monkeypatch.setattr(rig.store, "checkpoint", lambda c, t: times.append(t) or checkpoint(c, t))
    rig.advance_ms(5_000)
    assert times == []  # nothing to save before the game starts
    start_left(rig)
    t0 = rig.now
    rig.advance_ms(10_000)
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(times) >= 10 and max(gaps) <= CHECKPOINT_NS
    assert times[-1] >= t0 + 9 * NS_PER_S
    assert (rig.state_dir / "checkpoint.json").exists()


def test_displays_are_told_only_when_their_text_changes(rig):
    start_left(rig)
    before = [len(d.shown) for d in rig.displays]
    rig.advance_ms(10_000)
    left, right = rig.displays
    assert len(left.shown) - before[0] == 10  # one text a second on the running display
    assert len(right.shown) == before[1]  # the waiting display is not told anything
    assert all(a != b for a, b in zip(left.shown, left.shown[1:]))


def test_the_loop_sleeps_until_the_next_digit_changes(rig):
    """No busy loop: the wait is computed to the moment the running display's text changes."""
    t_start = start_left(rig)
    rig.advance_to(T0 + CHECKPOINT_NS)  # the first checkpoint is due then; the next one a period later
    rig.at(t_start + 950 * NS_PER_MS).pump()
    assert rig.runner.next_due_ns(rig.now) == t_start + NS_PER_S  # 25:00 -> 24:59 after exactly 1 s
    assert rig.runner.wait_s(rig.now) == pytest.approx(0.05)


def test_an_idle_clock_before_the_game_waits_on_input_only(monkeypatch, tmp_path):
    r = make_rig(monkeypatch, tmp_path)
    try:
        assert r.runner.next_due_ns(r.now) is None
        assert r.runner.wait_s(r.now) == 60.0
    finally:
        r.close()


def test_centre_neutralises_at_once_and_colons_blink(rig):
    t_start = start_left(rig)
    t_n = t_start + 3_200 * NS_PER_MS
    rig.at(t_n).down("neutralise").pump()
    assert rig.view().phase is Phase.NEUTRALISED
    rig.after_ms(80).up("neutralise").pump()
    rig.advance_to((rig.now // 500_000_000 + 1) * 500_000_000)
    a = rig.texts()
    rig.advance_ms(500)
    b = rig.texts()
    rig.advance_ms(500)
    c = rig.texts()
    rig.advance_ms(500)
    d = rig.texts()
    # the colons blink in the seconds that show the time; the others say HOLd (issue 10 item 6)
    assert {a, b, c, d} == {("24:57", "25:00"), ("2457", "2500"), ("HOLd", "HOLd")}
    assert rig.remaining_ns(1) == GAME_NS - (t_n - t_start)
    # a tap restarts the left player's time, charged from the tap's edge
    t_r = rig.after_ms(4_000).now
    rig.tap("neutralise")
    assert rig.view().players[0].running
    assert rig.runner.clock.switched_ns == t_r


def test_holding_the_centre_3_s_ends_the_game_and_shows_final_times_and_penalties(rig):
    t_start = start_left(rig)
    rig.at(t_start + 2 * NS_PER_S).down("neutralise")
    rig.advance_ms(2_999)
    assert rig.view().phase is Phase.NEUTRALISED
    rig.advance_ms(1)
    v = rig.view()
    assert v.phase is Phase.ENDED and v.ending is Ending.END
    rig.up("neutralise").advance_ms(100)
    assert rig.view().phase is Phase.ENDED  # the release does nothing
    seen = set()
    for _ in range(3):
        rig.advance_to((rig.now // NS_PER_S + 1) * NS_PER_S)
        seen.add(rig.texts())
    assert seen == {("24:58", "25:00"), ("End", "End"), ("P  0", "P  0")}
    assert [e["input"] for e in rig.journal_inputs()][-2:] == ["neutralise", "end"]


def test_holding_the_centre_while_neutralised_ends_the_game_without_restarting_the_clock(rig):
    t_start = start_left(rig)
    rig.at(t_start + NS_PER_S).tap("neutralise")
    rig.after_ms(2_000).down("neutralise").advance_ms(3_000)
    assert rig.view().phase is Phase.ENDED
    assert rig.remaining_ns(1) == GAME_NS - NS_PER_S
    assert [e["input"] for e in rig.journal_inputs()] == ["press", "neutralise", "end"]


def test_both_player_buttons_held_while_neutralised_open_the_menu_without_starting_anyone(rig):
    t_start = start_left(rig)
    rig.at(t_start + 2 * NS_PER_S).tap("neutralise")
    before = rig.remaining_ns(1), rig.remaining_ns(2)
    rig.after_ms(1_000).down("left").after_ms(150).down("right").pump()
    rig.advance_ms(3_000)
    assert rig.runner.menu is not None
    assert rig.texts() == ("P1", "24:58")
    rig.up("left").up("right").advance_ms(100)
    assert rig.view().phase is Phase.NEUTRALISED
    assert (rig.remaining_ns(1), rig.remaining_ns(2)) == before
    assert [e["input"] for e in rig.journal_inputs()] == ["press", "neutralise"]


def test_menu_adjusts_a_players_time(rig):
    start_left(rig)
    rig.after_ms(500).tap("neutralise")
    rig.board.command("menu")
    rig.pump()
    assert rig.runner.menu is not None
    rig.after_ms(100).tap("right")  # P1 -> P2
    assert rig.texts()[0] == "P2"
    rig.after_ms(100).tap("neutralise")  # edit P2's minutes
    for _ in range(2):
        rig.after_ms(100).tap("left")  # -2 minutes
    rig.after_ms(100).tap("neutralise")  # to the seconds
    for _ in range(3):
        rig.after_ms(100).tap("right")  # +3 seconds
    rig.after_ms(100).tap("neutralise")  # set
    assert rig.remaining_ns(2) == (23 * 60 + 3) * NS_PER_S
    adjust = rig.journal_inputs()[-1]
    assert adjust["input"] == "adjust" and adjust["player"] == 2 and adjust["remaining_ms"] == (23 * 60 + 3) * 1000


def test_menu_late_start_and_arrival(rig):
    rig.board.command("menu")  # before the game
    rig.pump()
    for _ in range(2):
        rig.after_ms(100).tap("right")
    assert rig.texts()[0] == "LAtE"
    rig.after_ms(100).tap("neutralise")
    rig.after_ms(100).tap("neutralise")  # P1 is absent
    t_late = rig.now - 100 * NS_PER_MS
    assert rig.runner.menu is None and rig.view().phase is Phase.LATE
    rig.advance_ms(4_000)
    assert "LAtE" in {d for d in rig.displays[0].shown}
    rig.board.command("menu")
    rig.pump()
    for _ in range(2):
        rig.after_ms(100).tap("right")
    rig.after_ms(100).tap("neutralise")
    assert rig.texts() == ("LAtE", "Arr1")
    t_arrive = rig.after_ms(100).now
    rig.tap("neutralise")
    v = rig.view()
    assert v.phase is Phase.SETUP and not v.players[0].absent
    # the time showing at the confirm, rounded up as the display shows it (2.3.3(b))
    assert rig.remaining_ns(1) == -(-(GAME_NS - (t_arrive - t_late)) // NS_PER_S) * NS_PER_S


def late_start(rig, option: str) -> int:
    """Start the absent side(s) from the director's menu before the game; returns when."""
    rig.board.command("menu")
    rig.pump()
    while rig.texts()[0] != "LAtE":
        rig.after_ms(100).tap("right")
    rig.after_ms(100).tap("neutralise")
    while rig.texts()[1] != option:
        rig.after_ms(100).tap("right")
    t = rig.after_ms(100).now
    rig.tap("neutralise")
    assert rig.runner.menu is None and rig.view().phase is Phase.LATE
    return t


def test_2_3_3_b_the_centre_press_at_the_table_records_the_arrival_at_its_edge(rig):
    """Issue 9: one centre press, no menu; dated at its edge, not at its release."""
    t_late = late_start(rig, "P2")
    rig.advance_to(t_late + 300 * NS_PER_S - 250 * NS_PER_MS)
    t_arrive = rig.after_ms(250).now
    rig.tap("neutralise", hold_ms=700)  # a slow press: acted on at release, dated at the edge
    assert t_arrive == t_late + 300 * NS_PER_S
    v = rig.view()
    assert v.phase is Phase.SETUP and not v.players[1].absent and rig.runner.menu is None
    assert (rig.remaining_ns(1), rig.remaining_ns(2)) == (GAME_NS, 20 * 60 * NS_PER_S)
    assert rig.journal_inputs()[-1] == {"t_ns": t_arrive, "input": "neutralise", "seq": 2}  # seq: issue 9
    rig.board.command("end")  # not a game in progress yet: nothing to end
    rig.after_ms(100).tap("left")  # 2.2: player 1 starts player 2's time
    assert rig.view().players[1].running


def test_2_3_3_b_a_latecomer_arriving_with_2_s_showing_is_not_forfeited(rig):
    t_late = late_start(rig, "P1")
    rig.advance_to(t_late + GAME_NS - 2 * NS_PER_S)
    assert rig.texts()[0] in ("0:02", "LAtE")
    rig.tap("neutralise")
    v = rig.view()
    assert v.phase is Phase.SETUP and v.ending is None
    assert rig.remaining_ns(1) == 2 * NS_PER_S


def test_2_3_2_both_absent_first_arrival_by_own_button_second_by_the_centre(rig):
    t_late = late_start(rig, "both")
    rig.advance_to(t_late + 3 * 60 * NS_PER_S)
    t1 = rig.now
    rig.tap("right")  # player 2 arrives first: their side stops, player 1's runs on (2.3.2(b))
    rig.advance_ms(1_000)
    v = rig.view()
    assert v.phase is Phase.LATE and v.players[0].absent and not v.players[1].absent
    assert rig.remaining_ns(2) == GAME_NS - (t1 - t_late)
    rig.advance_to(t_late + 8 * 60 * NS_PER_S)
    rig.tap("neutralise")  # player 1 arrives: neutralise (2.3.2(c))
    v = rig.view()
    assert v.phase is Phase.SETUP
    assert (rig.remaining_ns(1), rig.remaining_ns(2)) == (17 * 60 * NS_PER_S, 22 * 60 * NS_PER_S)
    assert [e["input"] for e in rig.journal_inputs()] == ["late_start", "press", "neutralise"]


def test_menu_new_game_with_another_game_time(rig):
    start_left(rig)
    rig.after_ms(3_000).tap("neutralise")
    rig.board.command("menu")
    rig.pump()
    while rig.texts()[0] != "LEn":
        rig.after_ms(50).tap("right")
    rig.after_ms(50).tap("neutralise")
    rig.after_ms(50).tap("right")  # 26 minutes
    rig.after_ms(50).tap("neutralise")  # seconds
    rig.after_ms(50).tap("neutralise")  # done: now yES/no, defaulting to no
    assert rig.texts() == ("LEn", "no")
    rig.after_ms(50).tap("left")
    assert rig.texts() == ("LEn", "yES")
    old_journal = rig.store.journal_path
    rig.after_ms(50).tap("neutralise")
    assert rig.runner.menu is None
    assert rig.store.journal_path != old_journal
    assert rig.texts() == ("26:00", "26:00")
    assert rig.view().phase is Phase.SETUP


def test_restored_game_comes_back_neutralised_and_says_so(monkeypatch, tmp_path):
    r = make_rig(monkeypatch, tmp_path)
    start_left(r)
    r.advance_ms(5_000)
    r.board.close()
    r.store.close()  # a power cut: no clean shutdown of the runner
    r2 = make_rig(monkeypatch, tmp_path)
    try:
        v = r2.view()
        assert v.restored and v.phase is Phase.NEUTRALISED
        seen = set()
        for _ in range(4):
            r2.advance_ms(500)
            seen |= set(r2.texts())
        assert "rStd" in seen
        r2.advance_ms(12_000)
        assert "rStd" not in set(r2.texts())
    finally:
        r2.close()


def test_buzzer_sounds_at_zero_and_at_forfeit(monkeypatch, tmp_path):
    rules = Rules(game_time_ms=60_000, forfeit_overtime_ms=60_000)
    r = make_rig(monkeypatch, tmp_path, rules=rules, buzzer=True)
    beeps = []
    monkeypatch.setattr(r.board, "beep", beeps.append)
    try:
        start_left(r)
        r.advance_ms(59_000)
        assert beeps == []
        r.advance_ms(1_000)
        assert beeps == ["zero"]
        assert r.texts()[0] == "0:00"
        r.advance_ms(60_000)
        assert beeps == ["zero", "forfeit"]
        assert r.view().ending is Ending.OVERTIME_FORFEIT
    finally:
        r.close()


def test_the_buzzer_pin_really_beeps(monkeypatch, tmp_path):
    r = make_rig(monkeypatch, tmp_path, buzzer=True)
    try:
        r.board.beep("zero")
        pin = r.factory.pin(12)
        assert r.board.buzzer is not None and pin.function == "output"
    finally:
        r.close()


def test_journal_replays_to_the_same_clock(rig, tmp_path):
    from rackside.game.clock import run
    from rackside.game.journal import read_journal

    start_left(rig)
    rig.after_ms(4_000).tap("left")
    rig.after_ms(2_000).tap("right")
    journal = read_journal(rig.store.journal_path)
    replayed = run([line.event for line in journal.lines if line.event is not None], rig.rules)
    assert replayed.played_ns == rig.runner.clock.played_ns


def test_stop_command_ends_the_loop(rig):
    rig.runner.stop()
    assert rig.runner.step(0) is False


class FakeNotifier:
    def __init__(self, period_ns):
        self.period_ns, self.sent = period_ns, []

    def watchdog_period_ns(self):
        return self.period_ns

    def ready(self, status=None):
        self.sent.append("READY")

    def watchdog(self):
        self.sent.append("WATCHDOG")

    def stopping(self, status=None):
        self.sent.append("STOPPING")


def test_systemd_ready_then_watchdog_pings_on_time_even_when_idle(monkeypatch, tmp_path):
    n = FakeNotifier(5 * NS_PER_S)
    r = make_rig(monkeypatch, tmp_path, notifier=n)
    try:
        assert n.sent[-1] == "READY" and n.sent.count("WATCHDOG") == 1
        assert r.runner.next_due_ns(r.now) == T0 + 5 * NS_PER_S  # an idle clock still wakes for it
        r.advance_ms(20_000)
        assert n.sent.count("WATCHDOG") == 5
    finally:
        r.close()
    assert n.sent[-1] == "STOPPING"


def test_a_press_held_back_when_the_clock_stops_is_not_lost(rig):
    rig.after_ms(10).down("right").pump()  # before the game: held back until release
    t = rig.now
    rig.runner.close()
    assert rig.journal_inputs() == [{"t_ns": t, "input": "press", "player": 2, "seq": 1}]
