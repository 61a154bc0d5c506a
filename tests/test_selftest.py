"""`rackside clock selftest` (issue 26 item 3): the builder's walk through every button, each display's
segments, the turn LEDs and the buzzer, with a PASS/FAIL line per part.

On gpiozero's MockFactory the test plays the builder: it waits for each prompt and drives the pin
edges (a real press, bounce included); then the command itself runs in a pseudo-terminal on the
simulated board, answered with the terminal's keys."""

import os
import pty
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rackside.firmware.selftest import SelfTest, display_steps
from rackside.hardware.board import Board
from rackside.hardware.display import NullDisplay, RecordingDisplay
from rackside.hardware.drivers import open_display

from support.wait import wait

REPO = Path(__file__).resolve().parents[1]
PINS = {"left": 17, "right": 27, "neutralise": 22}
LEDS = {"left": 26, "right": 16}
QUESTIONS = 2 * len(display_steps()) + 2 + 1  # two displays, two LEDs, the buzzer


@pytest.fixture
def board():
    from gpiozero.pins.mock import MockFactory

    b = Board(PINS, buzzer_pin=12, pin_factory=MockFactory(), led_pins=LEDS)
    yield b
    b.close()


class Builder:
    """Runs the walk on its own thread and answers each prompt as `answer(prompt)` says."""

    def __init__(self, board, displays, answer, timeout_s=10.0, text_display=None):
        self.board, self.answer = board, answer
        self.said: list[str] = []
        self.lock = threading.Lock()
        self.test = SelfTest(board, displays, say=self._say, pin_names=dict(PINS), timeout_s=timeout_s, text_display=text_display)
        self.thread = threading.Thread(target=self.test.run, daemon=True)

    def _say(self, text):
        with self.lock:
            self.said.append(text)

    def press(self, name, bounces=2):
        pin = self.board.buttons[name].pin
        for _ in range(bounces):  # a mechanical contact bounces before it settles
            pin.drive_low()
            pin.drive_high()
        pin.drive_low()
        pin.drive_high()

    def play(self):
        self.thread.start()
        read = 0  # lines of the walk read so far
        while True:
            wait(lambda: len(self.said) > read or not self.thread.is_alive(), timeout=30)
            if len(self.said) <= read:
                break  # the walk ended and every line was read
            with self.lock:
                text = self.said[read]
            read += 1
            button = self.answer(text) if text.startswith("  ") else None  # prompts are indented
            if button:
                self.press(button)
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()
        return {r.part: (r.status, r.detail) for r in self.test.results}


def asked_for(text):
    for name, word in (("neutralise", "CENTRE"), ("left", "LEFT button (waiting"), ("right", "RIGHT button (waiting")):
        if text.startswith(f"  Press the {word}"):
            return name
    return None


def test_every_part_passes_when_each_button_is_pressed_and_every_question_answered_yes(board):
    displays = {s: RecordingDisplay(s) for s in ("left", "right")}
    lit = []

    def answer(text):
        if asked_for(text):
            return asked_for(text)
        lit.append((displays["left"].text, displays["right"].text, board.led_lit("left"), board.led_lit("right"), board.buzzing))
        return "left"  # yes

    results = Builder(board, displays, answer).play()
    assert set(s for s, _ in results.values()) == {"PASS", "SKIP"}, results
    assert len(results) == 3 + QUESTIONS + 1  # and the text display: not fitted
    assert results["text display"] == ("SKIP", "not fitted (no [text_display])")
    assert results["left button (BCM 17)"] == ("PASS", "")
    # each question showed what it asked about: segment a alone on all four digits, ..., the buzzer on
    from rackside.hardware import sevenseg

    assert lit[0][0] == sevenseg.Frame(cells=(sevenseg.A,) * 4, colon=False) and lit[0][1] == ""
    assert lit[len(display_steps())][1] == sevenseg.Frame(cells=(sevenseg.A,) * 4, colon=False)
    assert lit[-3][2:] == (True, False, False) and lit[-2][2:] == (False, True, False) and lit[-1][4] is True
    assert not board.buzzing and not board.led_lit("left")  # everything off at the end


def test_a_swapped_wire_a_missing_segment_and_a_silent_buzzer_each_fail_their_own_line(board):
    displays = {s: RecordingDisplay(s) for s in ("left", "right")}
    from rackside.hardware import sevenseg

    def answer(text):
        wanted = asked_for(text)
        if wanted == "neutralise":
            return "left"  # the centre's wire is on the left input: pressing the centre, the left answers
        if wanted:
            return wanted
        if displays["right"].text == sevenseg.Frame(cells=(sevenseg.C,) * 4, colon=False):
            return "right"  # no: segment c of the right display stays dark
        if board.buzzing:
            return "right"
        return "left"

    results = Builder(board, displays, answer).play()
    assert results["neutralise button (BCM 22)"] == ("FAIL", "the left button answered instead (wires swapped?)")
    assert results["right display segment c"] == ("FAIL", "the builder answered no")
    assert results["buzzer"] == ("FAIL", "the builder answered no")
    assert results["left display segment c"][0] == "PASS"
    assert sum(s == "FAIL" for s, _ in results.values()) == 3


def test_no_press_times_out_and_unanswerable_questions_say_why(board):
    displays = {"left": RecordingDisplay("left"), "right": NullDisplay("right")}
    results = Builder(board, displays, lambda text: None, timeout_s=0.2).play()
    assert results["left button (BCM 17)"] == ("FAIL", "no press in 0.2 s")
    assert results["right display"] == ("SKIP", 'not fitted (driver = "none")')
    assert results["left display segment a"][1].startswith("not checked: the left and right buttons answer")


def test_a_held_button_and_an_unplugged_tm1637_are_found_without_asking(board):
    board.buttons["right"].pin.drive_low()  # shorted to ground before the walk
    displays = {
        "left": open_display({"driver": "tm1637", "clk": 5, "dio": 6}, name="left display", pin_factory=board.factory),
        "right": RecordingDisplay("right"),
    }
    results = Builder(board, displays, lambda text: asked_for(text) or "left", timeout_s=0.5).play()
    assert results["right button (BCM 27)"][1].startswith("closed before it was pressed")
    status, detail = results["left display"]
    assert status == "FAIL" and "no acknowledgement from the TM1637 on CLK=BCM5 DIO=BCM6" in detail
    displays["left"].close()


# --- through the command, on the simulated board in a terminal ------------------------------------


class Screen:
    """What the command wrote, read on: `expect` returns once `needle` appears after the last one."""

    def __init__(self, fd):
        self.fd, self.seen, self.at = fd, b"", 0

    def expect(self, needle, timeout_s=20.0):
        deadline = time.monotonic() + timeout_s
        while needle not in self.seen[self.at:]:
            left = deadline - time.monotonic()
            assert left > 0, f"{needle!r} never appeared; got {self.seen[-600:]!r}"
            if select.select([self.fd], [], [], left)[0]:
                self.seen += os.read(self.fd, 4096)
        self.at = self.seen.index(needle, self.at) + len(needle)


def test_the_command_walks_the_simulated_board_in_a_terminal(tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("DISPLAY", None)
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rackside", "clock", "selftest", "--simulate", "--timeout", "20"],
        stdin=slave, stdout=slave, stderr=slave, env=env, cwd=tmp_path,
    )
    os.close(slave)
    screen = Screen(master)
    try:
        screen.expect(b"Press the LEFT button")
        os.write(master, b"z")
        screen.expect(b"Press the RIGHT button")
        os.write(master, b"m")
        screen.expect(b"Press the CENTRE")
        os.write(master, b"z")  # the wrong key: the centre's line fails, naming the left
        for n in range(QUESTIONS):
            screen.expect(b"RIGHT = no;")
            os.write(master, b"m" if n == 2 else b"z")  # "no" to the left display's segment c
        screen.expect(b"not fitted")
        assert proc.wait(timeout=20) == 1  # a part failed
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    seen = screen.seen
    text = seen.decode()
    assert "PASS  left button (BCM 17)" in text and "PASS  right button (BCM 27)" in text
    assert "FAIL  neutralise button (BCM 22): the left button answered instead (wires swapped?)" in text
    assert "FAIL  left display segment c: the builder answered no" in text
    assert "PASS  right display digit 4" in text and "PASS  buzzer (BCM 12)" in text
    assert "(*) left" in text and "BZZZ" in text  # the simulated board drawn as it is asked about
    assert f"self-test: {3 + QUESTIONS - 2} passed, 2 failed, 1 not fitted" in text  # no text display


def test_a_bad_pin_map_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "clock.toml"
    bad.write_text("[buttons]\nleft = 17\nright = 17\nneutralise = 22\n")
    out = subprocess.run([sys.executable, "-m", "rackside", "clock", "selftest", "--config", str(bad)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr


def test_a_text_display_shows_every_row_numbered_and_the_builder_confirms_it(board):
    """Issue 40: the optional text display's rows, each numbered to its last column."""
    from rackside.hardware.textdisplay import SimTextDisplay

    displays = {s: RecordingDisplay(s) for s in ("left", "right")}
    text = SimTextDisplay(16, 2)
    seen = []

    def answer(prompt):
        if asked_for(prompt):
            return asked_for(prompt)
        if prompt.startswith("  Text display"):
            seen.append(text.lines)
            return "right"  # no: row 2 stays dark
        return "left"

    results = Builder(board, displays, answer, text_display=text).play()
    assert seen == [("Row 1 ABCDEFGHI|", "Row 2 ABCDEFGHI|")]
    assert results["text display"] == ("FAIL", "the builder answered no")
    assert text.lines == (" " * 16, " " * 16)  # cleared after
