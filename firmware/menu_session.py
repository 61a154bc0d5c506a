"""The director's menu as the runner holds it: the one open menu, and what a press asks of the clock.

`firmware.menu` is the menu itself (pure values, navigated with three buttons); the runner owns one
`MenuSession` and asks it: which menu is open (`menu`), open it, a button was pressed, what do the displays
show, when does that change. A press comes back as the clock's own inputs (`Adjust`, `LateStart`,
`Arrive`, `Forfeit`: the runner checks, journals and applies them like any other) and three things
only the runner can do: `NewGame` (a new game with this game time), `AskTable` (the output that can
ask the hall for a table number, `hall.device.enrolled_output`) and `CLOSED` (the menu closed: the
runner resets its gestures). So a new menu item changes `firmware.menu` and, if it asks the clock
for something new, this module; the runner does not change. Pure: no I/O, no clock of its own.
"""

from __future__ import annotations

from typing import NamedTuple

from rackside.firmware import menu as menus
from rackside.game.clock import Adjust, Arrive, Forfeit, Input, LateStart, Rules, View


class NewGame(NamedTuple):
    """Start a new game with `game_time_ms` a player (the menu's LEn or rSEt, confirmed)."""

    game_time_ms: int


class AskTable(NamedTuple):
    """Ask the director for table number `table` (the menu's tAbL)."""

    table: int


class Closed(NamedTuple):
    """The menu closed (its donE, or an item that closes it)."""


CLOSED = Closed()

Step = Input | NewGame | AskTable | Closed


class MenuSession:
    """The director's menu on this clock: None while closed (`menu`, an immutable `firmware.menu.Menu`)."""

    __slots__ = ("menu",)

    def __init__(self) -> None:
        self.menu: menus.Menu | None = None

    def open(self, v: View, rules: Rules, ask_table: bool) -> None:
        """Open the menu on the clock as `v` shows it (the runner has neutralised a running game, 1.4.3)."""
        self.menu = menus.open_menu(v, rules.game_time_ms, rules.forfeit_overtime_ms, ask_table=ask_table)

    def press(self, button: str, v: View, t_ns: int, game_time_ms: int) -> list[Step]:
        """`button` pressed at `t_ns` with the clock showing `v`: what the runner must do, in order."""
        self.menu, effects = menus.press(self.menu, button, v, game_time_ms)
        steps: list[Step] = []
        for effect in effects:
            kind = effect[0]
            if kind == "adjust":
                steps.append(Adjust(t_ns, effect[1], effect[2]))
            elif kind == "late_start":
                steps.append(LateStart(t_ns, tuple(effect[1])))
            elif kind == "arrive":
                steps.append(Arrive(t_ns, effect[1]))
            elif kind == "forfeit":
                steps.append(Forfeit(t_ns, effect[1]))
            elif kind == "new_game":
                steps.append(NewGame(effect[1]))
            elif kind == "ask_table":
                steps.append(AskTable(effect[1]))
            elif kind == "exit":
                self.menu = None
                steps.append(CLOSED)
        return steps

    def texts(self, v: View, t_ns: int, game_time_ms: int) -> tuple[str, str]:
        """What the two displays show while the menu is open."""
        return menus.texts(self.menu, v, t_ns, game_time_ms)

    def next_change_ns(self, t_ns: int) -> int | None:
        """When the open menu's displays next change (a blink)."""
        return menus.next_change_ns(self.menu, t_ns)

    def key_help(self) -> dict[str, str] | None:
        """What each button does while the menu is open, else None (any thread may ask: the menu
        is an immutable value, read once)."""
        menu = self.menu
        return None if menu is None else menus.key_help(menu)
