"""The terminal simulator's pure parts: 7-segment art, keys, redraw only on change."""

import io

from rackside.hardware.display import RecordingDisplay
from rackside.hardware.terminal import TerminalSim, big_digits, screen


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
    assert t.key("m") and t.key("m")  # a terminal's key repeat keeps the contact closed
    assert b.driven == [("right", True)]
    t.release_due(now=10**9)
    assert b.driven == [("right", True), ("right", False)]
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
