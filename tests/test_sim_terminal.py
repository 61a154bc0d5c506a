"""The terminal simulator: 7-segment art, keys, redraw only on change, and (through the real
`rackside clock --simulate` in a pty) no press a person can make lost."""

import io
import json
import os
import pty
import select
import sys
import time

from rackside.hardware.display import RecordingDisplay
from rackside.hardware.terminal import GAP_S, MIN_DOWN_S, TAP_S, TerminalSim, big_digits, screen

from support.terminal import read_until, reap
from support.wait import until, wait


class FakeBoard:
    def __init__(self):
        self.driven, self.commands = [], []

    def drive(self, name, down):
        self.driven.append((name, down))

    def command(self, name):
        self.commands.append(name)


def test_big_digits_show_the_segments_and_colon():
    rows = big_digits("24:59")
    assert rows == [
        " _         _   _  ",
        " _| |_| o |_  |_| ",
        "|_    | o  _|  _| ",
    ]


def test_big_digits_minus_ten_uses_the_shared_minus_one_cell():
    rows = big_digits("-10:00")
    assert rows[1].startswith(" _|")  # g and b (the "-1" cell), then a 0
    assert big_digits("2459")[1][8] == " " and big_digits("24:59")[1][8] == "o"  # the colon off, on


def test_keys_tap_the_buttons_and_commands_go_to_the_board():
    b = FakeBoard()
    t = TerminalSim(b, [RecordingDisplay(), RecordingDisplay()], stdout=io.StringIO())
    start = time.monotonic()
    assert t.key("m") and t.key("m")  # two presses, the second while the first's contact is closed
    assert b.driven == [("right", True)]
    t.release_due(now=start + MIN_DOWN_S + 0.001)  # the first is cut short ...
    assert b.driven == [("right", True), ("right", False)]
    t.release_due(now=start + MIN_DOWN_S + GAP_S + 0.002)  # ... and the second tapped after it: never merged
    assert b.driven == [("right", True), ("right", False), ("right", True)]
    t.release_due(now=start + 10)
    assert b.driven[-1] == ("right", False) and t.buttons.next_at() is None
    assert t.key("d") and b.commands == ["menu"]
    assert t.key("q") is False


def test_redraws_only_when_a_text_changes():
    out = io.StringIO()
    a, b = RecordingDisplay(), RecordingDisplay()
    a.show("25:00")
    b.show("25:00")
    t = TerminalSim(FakeBoard(), [a, b], stdout=out)
    t.draw()
    first = out.getvalue()
    t.draw()
    assert out.getvalue() == first
    a.show("24:59")
    t.draw()
    assert len(out.getvalue()) > len(first)
    assert "LEFT PLAYER" in screen(("End", "P 20"))


def test_the_key_line_says_what_each_key_does_while_the_menu_is_open():
    """Issue 10: the runner's `menu_help` (None outside the menu) replaces the key line."""
    out = io.StringIO()
    help_ = [None]
    t = TerminalSim(FakeBoard(), [RecordingDisplay(), RecordingDisplay()], stdout=out, key_help=lambda: help_[0])
    t.draw()
    assert "d: director menu" in out.getvalue()
    help_[0] = {"left": "(first item)", "neutralise": "adjust P1's time", "right": "next item"}
    t.draw()  # nothing else changed: the new key line alone redraws
    last = out.getvalue().rsplit("Rackside table clock", 1)[1]
    assert "director's menu   z: (first item)   space: adjust P1's time   m: next item" in last
    assert "d: director menu" not in last


class FakeKeypad:
    def __init__(self):
        self.driven = []

    def drive(self, key, down):
        self.driven.append((key, down))


def test_keypad_keys_tap_the_keypad_and_it_is_drawn():
    """Issue 27 item 1: 0-9, * and # (or [ and ]) tap the keypad's contacts as z/m/space tap the buttons."""
    out = io.StringIO()
    b, kp = FakeBoard(), FakeKeypad()
    t = TerminalSim(b, [RecordingDisplay(), RecordingDisplay()], stdout=out, keypad=kp)
    assert t.key("5") and t.key("5") and t.key("]") and t.key("*")
    assert kp.driven == [("5", True), ("#", True), ("*", True)] and b.driven == []
    t.draw()
    last = out.getvalue()
    assert "KEYPAD" in last and "[5]" in last and "[#]" in last and " 1 " in last and "0-9 * #" in last
    t.release_due(now=10**9)
    assert sorted(kp.driven[3:]) == [("#", False), ("*", False), ("5", False)]


def test_without_a_keypad_the_number_keys_do_nothing_and_the_screen_is_as_before():
    out = io.StringIO()
    b = FakeBoard()
    t = TerminalSim(b, [RecordingDisplay(), RecordingDisplay()], stdout=out)
    assert t.key("5") and b.driven == [] and b.commands == []
    t.draw()
    assert "KEYPAD" not in out.getvalue() and out.getvalue() == screen(("", ""), {n: False for n in ("left", "right", "neutralise")})


def test_presses_a_tenth_of_a_second_apart_all_count_in_the_real_simulator(tmp_path):
    """Issue 35 item 6: 25 presses of one key 0.1 s apart, typed into the real `rackside clock
    --simulate` in a terminal (a pty), are 25 presses: in the director's menu each left press takes
    a minute off P1, so 25:00 becomes 0:00. (On the old code a press within TAP_S of the last
    one kept its contact closed, merging them: about 1 minute came off.)"""
    state = tmp_path / "state"
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real command in a real terminal, no window
        env = dict(os.environ, RACKSIDE_STATE_DIR=str(state), TERM="xterm")
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        os.execve(sys.executable, [sys.executable, "-m", "rackside", "clock", "--simulate"], env)

    def journal():
        found = list((state / "clock" / "journals").glob("game-*.jsonl"))
        return [json.loads(line) for line in found[0].read_text().splitlines()[1:]] if found else []

    def drain(until_t):  # read what the simulator draws (its pty must not fill) until until_t
        while (left := until_t - time.monotonic()) > 0:
            if select.select([fd], [], [], left)[0]:
                os.read(fd, 65536)

    try:
        read_until(fd, b"RIGHT PLAYER")
        os.write(fd, b"m")  # the right player starts the left player's time
        wait(lambda: [e["input"] for e in journal()] == ["press"])
        os.write(fd, b"d")  # the director's menu (neutralises)
        read_until(fd, b"adjust P1's time")
        os.write(fd, b" ")  # P1's minutes
        read_until(fd, b"to the seconds")
        start = time.monotonic()
        for i in range(25):
            drain(start + i * 0.1)
            os.write(fd, b"z")  # a minute off, each
        drain(time.monotonic() + TAP_S)
        os.write(fd, b" ")  # to the seconds
        read_until(fd, b"set P1's time")
        os.write(fd, b" ")  # set
        adjust = until(lambda: [e for e in journal() if e["input"] == "adjust"])
        os.write(fd, b"q")
        read_until(fd, b"\x1b[?25h")
    finally:
        status = reap(pid)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert adjust and adjust[0]["player"] == 1 and adjust[0]["remaining_ms"] == 0, journal()  # 25 minutes off 25:00
