"""The optional 3x4 keypad (issue 27 item 1), scanned through gpiozero's MockFactory pins.

The keypad's contacts are `hardware.keypad.MockMatrix`: closing a key joins its row pin to its
column pin as the wires would (a column reads low while a closed key joins it to a row driven low),
so the scanner's edges, scans and ghosts are the real ones. The rig's fake clock dates every edge;
`Scanner` does what the scanner's thread does (a round when an edge wakes it, another when the
round asked for one), each round a little after its wake-up, so no test sleeps.
"""

from __future__ import annotations

import queue
import threading

import pytest

from rackside.game.clock import NS_PER_MS, Phase
from rackside.game.messages import Key
from rackside.hardware.keypad import SCAN_INTERVAL_NS, Keypad

from support import keypad_scan as scan
from support.keypad_scan import COLUMNS, ROWS, WAKE_NS


class Scanner(scan.Scanner):
    """The scanner's thread on the rig's fake clock, with single edges and the waiting check."""

    def down(self, key: str) -> int:
        t = self.rig.now
        self.kp.drive(key, True)
        self._woken()
        return t

    def up(self, key: str) -> int:
        t = self.rig.now
        self.kp.drive(key, False)
        self._woken()
        return t

    @property
    def waiting(self) -> bool:
        """Waiting for an edge: no round is due (the thread sleeps without a timeout)."""
        self._woken()
        return self.due is None


@pytest.fixture
def kp(rig):
    keypad = Keypad(ROWS, COLUMNS, board=rig.board)
    yield keypad
    keypad.close()


@pytest.fixture
def scanner(rig, kp):
    s = Scanner(rig, kp)
    s.ms(5)  # the keypad's first scan (at start-up) is behind us
    return s


def keys(rig) -> list[Key]:
    """The keys on the clock's queue (taken off it, so the runner never sees them)."""
    out = []
    while True:
        try:
            out.append(rig.board.events.get_nowait())
        except queue.Empty:
            return [m for m in out if isinstance(m, Key)]


def test_a_single_press_is_dated_at_its_edge_and_released_once(rig, kp, scanner):
    scanner.ms(5)
    assert scanner.waiting and keys(rig) == []
    t0 = scanner.down("5")
    scanner.ms(3)
    assert keys(rig) == [Key(t0, "5", True)]  # the column's edge, not the scan 0.1 ms later
    scanner.ms(80)
    t1 = scanner.up("5")
    scanner.ms(40)
    released = keys(rig)
    assert [(k.key, k.down) for k in released] == [("5", False)]
    assert t1 <= released[0].t_ns <= t1 + WAKE_NS  # found open by the round its edge woke
    assert scanner.waiting  # back to waiting: no more scans
    scans = kp.scans
    scanner.ms(10_000)
    assert kp.scans == scans and keys(rig) == []


def test_bounce_on_press_and_release_is_one_press(rig, kp, scanner):
    """A contact that chatters for 1.5 ms as it closes and as it opens (a membrane's bounce), with the
    scanner's rounds landing in the chatter: one press at the first edge, one release."""
    t0 = rig.now
    for i, closed in enumerate((True, False, True, False, True, False, True)):
        (scanner.down if closed else scanner.up)("8")
        scanner.ms(0.25)
    scanner.ms(100)
    for closed in (False, True, False, True, False):
        (scanner.down if closed else scanner.up)("8")
        scanner.ms(0.3)
    scanner.ms(50)
    got = keys(rig)
    assert [(k.key, k.down) for k in got] == [("8", True), ("8", False)]
    assert got[0].t_ns == t0
    assert scanner.waiting


def test_a_spike_shorter_than_a_scan_is_no_key(rig, kp, scanner):
    """A contact closed for 20 us, open again before the scanner's round: nothing is reported and the
    scanner goes back to waiting."""
    kp.drive("3", True)
    rig.after_ms(0.02)
    kp.drive("3", False)
    scanner.ms(50)
    assert keys(rig) == [] and scanner.waiting


def test_a_held_key_is_one_press_and_no_repeats(rig, kp, scanner):
    t0 = scanner.down("0")
    scanner.ms(5_000)
    assert keys(rig) == [Key(t0, "0", True)]
    held_scans = kp.scans
    every = 5_000 * NS_PER_MS // SCAN_INTERVAL_NS
    assert every <= held_scans <= every + 3  # it polls while a key is down (its own edges wake nothing)...
    scanner.up("0")
    scanner.ms(50)
    assert [(k.key, k.down) for k in keys(rig)] == [("0", False)]
    scans = kp.scans
    scanner.ms(60_000)
    assert kp.scans == scans  # ...and never when none is


def test_two_keys_at_once_are_both_reported_in_the_order_pressed(rig, kp, scanner):
    """2-key rollover: the next key down before the last one is up (fast typing) loses nothing."""
    t1 = scanner.down("1")
    scanner.ms(20)
    t6 = scanner.down("6")  # another column: its own edge dates it
    scanner.ms(20)
    scanner.up("1")
    scanner.ms(20)
    scanner.up("6")
    scanner.ms(50)
    got = keys(rig)
    assert [(k.key, k.down) for k in got] == [("1", True), ("6", True), ("1", False), ("6", False)]
    assert got[0].t_ns == t1 and got[1].t_ns == t6
    assert scanner.waiting


def test_a_second_key_in_a_held_keys_column_is_found_by_the_next_scan(rig, kp, scanner):
    """"2" held pulls its column low already, so "5" makes no edge: the scan while "2" is held finds
    it, dated at that scan (at most one scan interval late)."""
    scanner.down("2")
    scanner.ms(20)
    t5 = scanner.down("5")
    scanner.ms(30)
    got = keys(rig)
    assert [(k.key, k.down) for k in got] == [("2", True), ("5", True)]
    assert t5 <= got[1].t_ns <= t5 + SCAN_INTERVAL_NS


def test_two_keys_pressed_in_the_same_instant_come_in_keypad_order(rig, kp, scanner):
    t = rig.now
    kp.drive("3", True)
    kp.drive("1", True)
    scanner.ms(5)
    assert keys(rig) == [Key(t, "1", True), Key(t, "3", True)]


def test_a_third_key_that_could_be_a_ghost_is_not_taken(rig, kp, scanner):
    """With 1, 2 and 4 down, a matrix without diodes reads 5 too (4 joins row 2 to column 1, 1 joins
    that to row 1, 2 joins row 1 to column 2). The scanner takes no new key while more than two are
    down, so the ghost is never reported; the first two are."""
    scanner.down("1")
    scanner.ms(20)
    scanner.down("2")
    scanner.ms(20)
    scanner.down("4")
    assert {"1", "2", "4", "5"} <= kp._scan()  # the ghost, as the wires make it
    scanner.ms(50)
    for key in ("1", "2", "4"):
        scanner.up(key)
    scanner.ms(50)
    got = keys(rig)
    assert [(k.key, k.down) for k in got if k.down] == [("1", True), ("2", True)]
    assert sorted(k.key for k in got if not k.down) == ["1", "2"]
    assert scanner.waiting


def test_a_key_released_during_a_scan_is_not_reported(rig, kp, scanner):
    """The scan woken by "8"'s edge reads row 1 first; the contact opens before row 3 is read: no
    key, and the scanner goes back to waiting. The next press is reported as usual."""
    def release_at_row_1(row):
        if row == 1 and kp._scanning:
            kp.matrix.on_select = None
            kp.drive("8", False)

    kp.matrix.on_select = release_at_row_1
    scanner.down("8")
    scanner.ms(50)
    assert keys(rig) == [] and scanner.waiting
    t = scanner.down("8")
    scanner.ms(40)
    assert keys(rig) == [Key(t, "8", True)]


def test_a_key_pressed_as_a_scan_ends_is_not_lost(rig, kp, scanner):
    """A key closing while the scan drives its rows low again makes an edge the scanner takes for its
    own; the scanner reads the columns once the rows are low and scans again instead of waiting."""
    seen = []

    def press_at_restore(row):  # row 0 alone after rows 0 to 3 were read: the scan puts its rows back
        if kp._scanning:
            if row == 0 and 0 in seen and 3 in seen[seen.index(0):]:
                kp.matrix.on_select = None
                kp.drive("4", True)
            seen.append(row)

    kp.drive("2", True)  # a spike: its edge wakes the scanner, whose scan finds nothing down...
    kp.drive("2", False)
    kp.matrix.on_select = press_at_restore  # ...and "4" closes as that scan puts its rows back
    scanner.ms(50)
    got = keys(rig)
    assert [(k.key, k.down) for k in got] == [("4", True)]


def test_a_held_key_released_during_a_scan_is_released_once(rig, kp, scanner):
    t = scanner.down("9")
    scanner.ms(40)

    def release_at_row_0(row):
        if row == 0 and kp._scanning:
            kp.matrix.on_select = None
            kp.drive("9", False)

    kp.matrix.on_select = release_at_row_0
    scanner.ms(60)
    got = keys(rig)
    assert got[0] == Key(t, "9", True) and [(k.key, k.down) for k in got[1:]] == [("9", False)]
    assert scanner.waiting


def test_a_key_held_at_start_up_is_not_a_press(rig):
    """A key already down when the clock starts (the keypad opened again on the same contacts) must be
    released first, as a button held at start-up must."""
    first = Keypad(ROWS, COLUMNS, board=rig.board)
    first.drive("7", True)
    first.close()
    kp = Keypad(ROWS, COLUMNS, board=rig.board)
    try:
        assert kp.is_down("7") and kp.debouncers["7"].raw_down
        s = Scanner(rig, kp)
        s.ms(100)
        s.up("7")
        s.ms(50)
        assert keys(rig) == []
        t = s.down("7")
        s.ms(20)
        assert keys(rig) == [Key(t, "7", True)]
    finally:
        kp.close()


def test_the_runner_takes_keys_and_uses_none_yet(rig, kp, scanner):
    """No flow uses the keypad yet (issue 27 items 2-4): a key changes nothing the clock shows or
    journals, and is counted."""
    rig.after_ms(10)
    rig.tap("right")  # a game running: the left player's time (2.2)
    before = rig.journal_inputs()
    scanner.down("4")
    scanner.ms(50)
    scanner.up("4")
    scanner.ms(50)
    rig.pump()
    assert rig.runner.keys_unused == 2  # its press and its release
    assert rig.journal_inputs() == before and rig.view().phase is Phase.RUNNING
    rig.runner.submit(Key(rig.now, "A", True))  # not a key of the keypad: refused with a line
    rig.pump()
    assert rig.runner.keys_unused == 2


def test_the_scanner_thread_waits_on_edges_and_delivers_keys():
    """The real thread on real time, through MockFactory: a press and its release reach the queue."""
    from gpiozero.pins.mock import MockFactory

    from rackside.hardware.board import Board

    board = Board({"left": 17, "right": 27, "neutralise": 22}, pin_factory=MockFactory())
    kp = Keypad(ROWS, COLUMNS, board=board)
    kp.start()
    try:
        kp.drive("#", True)
        press = board.events.get(timeout=10)
        assert (press.key, press.down) == ("#", True)
        kp.drive("#", False)
        release = board.events.get(timeout=10)
        assert (release.key, release.down) == ("#", False) and release.t_ns > press.t_ns
    finally:
        kp.close()
        board.close()
    assert not any(t.name == "keypad" and t.is_alive() for t in threading.enumerate())


def test_a_clock_without_a_keypad_opens_none_and_one_with_it_scans(tmp_path):
    import argparse

    from gpiozero.pins.mock import MockFactory

    from rackside.firmware.cli import Clock

    def clock(config_text):
        path = tmp_path / "clock.toml"
        path.write_text(config_text)
        args = argparse.Namespace(config=path, state_dir=tmp_path / "state", simulate=True, hall=None,
                                  hall_credentials=None, hall_join=None, device_id=None)
        return Clock(args, pin_factory=MockFactory())

    without = clock("[input]\nsettle_ms = 15\n")
    try:
        assert without.keypad is None
        opened = {p.info.name for p in without.board.factory.pins.values()}
        assert "GPIO17" in opened and not opened & {f"GPIO{n}" for n in (*ROWS, *COLUMNS)} and not any(t.name == "keypad" for t in threading.enumerate())
    finally:
        without.close()
    with_ = clock("[keypad]\nenabled = true\n")
    try:
        assert with_.keypad is not None and with_.config.pins.keypad.rows == ROWS
        with_.start()
        with_.keypad.drive("5", True)
        got = with_.board.events.get(timeout=10)
        assert (got.key, got.down) == ("5", True)
    finally:
        with_.keypad.drive("5", False)
        with_.runner.close()
        with_.close()


@pytest.mark.parametrize(
    "toml, words",
    [
        ('[keypad]\nenabled = "yes"\n', ["keypad.enabled", "true, false"]),
        ("[keypad]\nenabled = true\nrows = [4, 25, 13]\n", ["keypad.rows", "a list of 4 BCM GPIO numbers"]),
        ("[keypad]\nenabled = true\nrows = [4, 25, 13, 17]\n", ["BCM 17 is used twice", "buttons.left", "keypad.rows[3]"]),
        ("[keypad]\nkeys = 12\n", ["keypad.keys", "allowed: enabled, rows, columns"]),
    ],
)
def test_a_bad_keypad_config_names_the_key_and_the_allowed_values(tmp_path, capsys, toml, words):
    """Through `rackside clock`: exit 2 and one line naming the key and what is allowed."""
    from rackside import cli as rackside_cli

    path = tmp_path / "clock.toml"
    path.write_text(toml)
    code = rackside_cli.main(["clock", "--simulate", "--terminal", "--config", str(path), "--state-dir", str(tmp_path / "state")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("rackside clock: ")
    for w in words:
        assert w in err


def test_the_simulator_in_a_terminal_draws_the_keypad_and_taps_it(tmp_path):
    """`rackside clock --simulate` with `[keypad] enabled = true`, in a real terminal (a pty)."""
    import json
    import os
    import pty
    import sys

    from support.terminal import read_until, reap

    config = tmp_path / "clock.toml"
    config.write_text("[keypad]\nenabled = true\n")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real command in a real terminal
        env = dict(os.environ, RACKSIDE_STATE_DIR=str(tmp_path / "state"), TERM="xterm")
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        os.execve(sys.executable, [sys.executable, "-m", "rackside", "clock", "--simulate", "--config", str(config)], env)
    try:
        read_until(fd, b"KEYPAD")
        os.write(fd, b"5")
        read_until(fd, b"[5]")  # the contact drawn closed,
        read_until(fd, b" 5 ")  # then open again
        os.write(fd, b"m")  # the buttons work as ever
        read_until(fd, b"[#] m")
        os.write(fd, b"q")
        read_until(fd, b"\x1b[?25h")
    finally:
        status = reap(pid)  # (killed if a step above failed: never a hung suite)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    journal = next((tmp_path / "state" / "clock" / "journals").glob("game-*.jsonl"))
    inputs = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    # before the game a digit is typed for check-in (issue 27), and the button then pressed is that
    # player's check-in with the number typed (game.checkin), not a start
    assert [(i["input"], i.get("key"), i.get("number")) for i in inputs] == [("key", "5", None), ("checkin", None, 5)]


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rackside.game.messages import KEYPAD_KEYS  # noqa: E402

chatter = st.lists(st.floats(0.02, 1.0), max_size=6).map(lambda xs: xs[: len(xs) // 2 * 2])  # an even count of toggles
press = st.tuples(st.sampled_from(KEYPAD_KEYS), chatter, st.floats(30, 400), chatter, st.floats(30, 200))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(press, min_size=1, max_size=6))
def test_any_bouncing_presses_one_at_a_time_are_each_one_press_and_one_release(rig, presses):
    """Each press: a contact that chatters as it closes and as it opens (up to 6 toggles, 0.02-1 ms
    apart), held 30-400 ms, then left open 30-200 ms. Each is reported once, in order, dated between
    its first edge and the end of its chatter; each is released once; the scanner ends up waiting."""
    keys(rig)
    kp = Keypad(ROWS, COLUMNS, board=rig.board)
    try:
        s = Scanner(rig, kp)
        s.ms(5)
        windows = []
        for key, closing, hold_ms, opening, gap_ms in presses:
            first = s.down(key)
            closed = True
            for gap in closing:
                s.ms(gap)
                (s.up if closed else s.down)(key)
                closed = not closed
            windows.append((key, first, rig.now))
            s.ms(hold_ms)
            s.up(key)
            closed = False
            for gap in opening:
                s.ms(gap)
                (s.up if closed else s.down)(key)
                closed = not closed
            s.ms(gap_ms)
        s.ms(50)
        got = keys(rig)
        pressed = [k for k in got if k.down]
        assert [k.key for k in pressed] == [w[0] for w in windows]
        for k, (_, first, last) in zip(pressed, windows):
            assert first <= k.t_ns <= last
        assert [k.key for k in got if not k.down] == [w[0] for w in windows]
        assert s.waiting
    finally:
        kp.close()
