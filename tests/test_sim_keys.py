"""What the simulator's `e` and `d` keys do, as README.md and docs/clock.md say (issue 10 item 12):
`e` ends a game in progress (waiting for latecomers included) and does nothing before the first
press or after the end; `d` opens the director's menu at any time, neutralising a running clock."""

from rackside.game.clock import Phase


def key(rig, name):
    rig.after_ms(10)
    rig.board.command(name)  # what the window's and the terminal's `e`/`d` send
    rig.pump()


def test_e_before_the_first_press_does_nothing(rig):
    key(rig, "end")
    assert rig.view().phase is Phase.SETUP and rig.runner.menu is None
    assert rig.journal_inputs() == []


def test_e_ends_a_game_in_progress_and_then_does_nothing(rig):
    rig.after_ms(10)
    rig.tap("right")  # starts the left player's time (2.2)
    rig.advance_ms(5_000)
    key(rig, "end")
    assert rig.view().phase is Phase.ENDED and rig.runner.menu is None
    key(rig, "end")
    assert rig.view().phase is Phase.ENDED and rig.runner.menu is None
    assert [e["input"] for e in rig.journal_inputs()] == ["press", "end"]


def test_d_opens_the_menu_before_during_and_after_a_game(rig):
    key(rig, "menu")
    assert rig.runner.menu is not None
    rig.runner.menu = None  # (leaving the menu is the menu's own business, tested in test_menu.py)
    rig.after_ms(10)
    rig.tap("right")
    rig.advance_ms(2_000)
    key(rig, "menu")
    assert rig.runner.menu is not None and rig.view().phase is Phase.NEUTRALISED  # 1.4.3
    rig.runner.menu = None
    key(rig, "end")
    assert rig.view().phase is Phase.ENDED
    key(rig, "menu")
    assert rig.runner.menu is not None
