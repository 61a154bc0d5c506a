"""The simulator window for real on SDL's dummy video driver: real pygame key events press the
mock pins, and the window draws what the display drivers were told."""

import pytest

pygame = pytest.importorskip("pygame")

from rackside.hardware.display import RecordingDisplay  # noqa: E402
from rackside.hardware.sim_window import LIT, SimWindow  # noqa: E402

from support.firmware_rig import make_rig  # noqa: E402


@pytest.fixture
def rig(monkeypatch, tmp_path):
    r = make_rig(monkeypatch, tmp_path)
    yield r
    r.close()


@pytest.fixture
def window(rig):
    w = SimWindow(rig.board, rig.displays)
    yield w
    w.close()


def post_key(kind, key):
    pygame.event.post(pygame.event.Event(kind, key=key, mod=0, unicode="", scancode=0))


def lit_pixels(w, panel):
    width = w.screen.get_width()
    x0, x1 = (0, width // 2) if panel == 0 else (width // 2, width)
    count = 0
    for x in range(x0, x1, 3):
        for y in range(80, 290, 3):
            if tuple(w.screen.get_at((x, y)))[:3] == LIT:
                count += 1
    return count


def test_shift_keys_press_the_mock_pins(rig, window):
    post_key(pygame.KEYDOWN, pygame.K_RSHIFT)
    assert window.poll()
    assert rig.board.buttons["right"].pin.state is False  # the contact pulls the line low
    post_key(pygame.KEYUP, pygame.K_RSHIFT)
    post_key(pygame.KEYDOWN, pygame.K_LSHIFT)
    assert window.poll()
    assert rig.board.buttons["right"].pin.state is True
    assert rig.board.buttons["left"].pin.state is False
    kinds = [rig.board.events.get_nowait()[2:] for _ in range(3)]
    assert kinds == [("right", True), ("right", False), ("left", True)]


def test_keys_drive_the_real_firmware_and_the_window_draws_the_drivers_texts(rig, window):
    post_key(pygame.KEYDOWN, pygame.K_SPACE)
    window.poll()
    rig.after_ms(80)
    post_key(pygame.KEYUP, pygame.K_SPACE)
    window.poll()
    rig.advance_ms(100)
    post_key(pygame.KEYDOWN, pygame.K_RSHIFT)
    window.poll()
    rig.after_ms(80)
    post_key(pygame.KEYUP, pygame.K_RSHIFT)
    window.poll()
    rig.advance_ms(5_000)  # the left player's time runs
    window.draw()
    assert window.drawn == ("24:55", "25:00") == rig.texts()
    assert lit_pixels(window, 0) > 0 and lit_pixels(window, 1) > 0


def test_the_window_draws_segments_for_what_it_was_told(rig):
    a, b = RecordingDisplay("left"), RecordingDisplay("right")
    w = SimWindow(rig.board, [a, b])
    try:
        a.show("88:88")
        b.show("1:11")
        w.draw()
        assert w.drawn == ("88:88", "1:11")
        assert lit_pixels(w, 0) > 2 * lit_pixels(w, 1) > 0
        b.show("    ")
        w.draw()
        assert lit_pixels(w, 1) == 0
    finally:
        w.close()


def test_director_and_quit_keys(rig, window):
    post_key(pygame.KEYDOWN, pygame.K_d)
    assert window.poll()
    assert rig.board.events.get_nowait()[::2] == ("cmd", "menu")
    post_key(pygame.KEYDOWN, pygame.K_q)
    assert window.poll() is False


def test_two_keys_for_one_button_hold_the_contact_until_both_are_up(rig, window):
    post_key(pygame.KEYDOWN, pygame.K_LSHIFT)
    post_key(pygame.KEYDOWN, pygame.K_z)
    post_key(pygame.KEYUP, pygame.K_LSHIFT)
    window.poll()
    assert rig.board.is_down("left")
    post_key(pygame.KEYUP, pygame.K_z)
    window.poll()
    assert not rig.board.is_down("left")


def test_screenshot_is_a_png(rig, window, tmp_path):
    rig.displays[0].show("-1:05")
    rig.displays[1].show("12:34")
    window.save(str(tmp_path / "shot.png"))
    img = pygame.image.load(str(tmp_path / "shot.png"))
    assert img.get_size() == window.screen.get_size()


def test_the_key_line_follows_the_menu(rig):
    """Issue 10: while the director's menu is open the window's key line says what each key does."""
    w = SimWindow(rig.board, rig.displays, key_help=rig.runner.menu_help)
    try:
        assert w.key_line().startswith("Left Shift / z: left")
        rig.board.command("menu")
        rig.pump()
        assert w.key_line() == "director's menu   Left Shift / z: (first item)   Space: adjust P1's time   Right Shift / m: next item"
        before = w._state()
        rig.after_ms(100).tap("right")
        assert w._state() != before  # the window redraws for a new key line
        assert "previous item" in w.key_line()
    finally:
        w.close()


# --- the optional keypad (issue 27 item 1) -------------------------------------------------------
@pytest.fixture
def keypad(rig):
    from rackside.hardware.keypad import Keypad

    kp = Keypad((4, 25, 13, 19), (18, 20, 21), board=rig.board)
    yield kp
    kp.close()


def key_colour(w, index):
    """The colour at the middle of keypad key `index` (0 = "1", ... 11 = "#"), off its label."""
    from rackside.hardware.sim_window import KEY_GAP, KEY_SIZE, KEYPAD_W

    x0 = w.screen.get_width() - KEYPAD_W + (KEYPAD_W - (3 * KEY_SIZE + 2 * KEY_GAP)) / 2
    r, c = divmod(index, 3)
    return tuple(w.screen.get_at((int(x0 + c * (KEY_SIZE + KEY_GAP) + 4), int(78 + r * (KEY_SIZE + KEY_GAP) + 4))))[:3]


def test_number_keys_press_the_keypad_and_the_window_draws_it(rig, keypad):
    from rackside.hardware.sim_window import BUTTON, BUTTON_DOWN

    w = SimWindow(rig.board, rig.displays, keypad=keypad)
    try:
        assert w.screen.get_width() == 1000 + 240  # a column for the keypad
        post_key(pygame.KEYDOWN, pygame.K_5)
        w.poll()
        assert keypad.is_down("5")
        assert not keypad.columns[1].pin.state  # the contact joins column 2 to its row, driven low
        w.draw()
        assert key_colour(w, 4) == BUTTON_DOWN and key_colour(w, 0) == BUTTON
        post_key(pygame.KEYUP, pygame.K_5)
        post_key(pygame.KEYDOWN, pygame.K_KP_MULTIPLY)  # the numeric keypad's *
        post_key(pygame.KEYDOWN, pygame.K_RIGHTBRACKET)  # ] is #: Shift is a player's button
        w.poll()
        assert not keypad.is_down("5") and keypad.is_down("*") and keypad.is_down("#")
        assert not rig.board.is_down("left") and not rig.board.is_down("right")
        w.draw()
        assert key_colour(w, 9) == BUTTON_DOWN and key_colour(w, 11) == BUTTON_DOWN and key_colour(w, 4) == BUTTON
        assert "keypad" in w.key_line()
    finally:
        w.close()


def test_without_a_keypad_number_keys_do_nothing(rig, window):
    post_key(pygame.KEYDOWN, pygame.K_5)
    assert window.poll()
    assert window.screen.get_width() == 1000 and "keypad" not in window.key_line()
    assert rig.board.events.empty()
