"""The director's menu (1.4.1(b), 2.3.2-2.3.6): pure, navigated with the clock's three buttons.

The left display names the item, the right one shows its value. In the list, the left button goes
to the previous item, the right button to the next (the list stops at its ends: no wrapping), the
centre opens the item. `key_help` says what each button does at the moment (the simulator shows it
in place of its key line). Items:

- ``P1`` / ``P2``: adjust that player's remaining time (1.4.1(b)). The minutes blink: left/right
  take a minute off/add one; centre moves to the seconds (left/right: one second), centre again
  sets the time. Overtime is reached by going below 0:00 (it shows with a minus sign).
- ``LAtE``: late arrivals. Before the game: start the absent side's time (``P1``, ``P2`` or
  ``both``, 2.3.2(a), 2.3.3(a)). While waiting: mark an arrival (``Arr1``, ``Arr2``, 2.3.2(b)).
  After a late arrival with under 15 minutes assigned: that player's optional forfeit (``For1``,
  ``For2``, 2.3.4). Only offered when one of these applies.
- ``LEn``: the game time (length), then ``yES``/``no``: starts a new game with it (the runner's
  ``on_new_game`` keeps it for the following games: ``config.save_game_time``).
- ``rSEt``: ``yES``/``no``: a new game with the current game time.
- ``tAbL``: only on a clock that joined a hall with its join file: ask the director for a table
  number. The tens blink (left/right: ten less/more), centre moves to the units, centre again asks;
  the console shows the request and the director confirms it there (no clock numbers itself).
- ``donE``: back to the clock (still neutralised: the centre restarts it).

`press(button)` returns the menu's next state and the effects for the runner: `("adjust", player,
remaining_ms)`, `("late_start", players)`, `("arrive", player)`, `("forfeit", player)`,
`("new_game", game_time_ms)`, `("ask_table", n)`, `("exit",)`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rackside.game.clock import NS_PER_S, Phase, View, display_text
from rackside.game.render import BLINK_NS  # the menu blinks with the displays
from rackside.game.rules_table import CLOCK_KEYS
from rackside.hall.wire.topics import MAX_TABLE  # the hall's table numbers

MIN_GAME_S, MAX_TIME_S = CLOCK_KEYS["game_time"][1:3]  # a game time the [clock] table takes; 99:59, the most a display shows


@dataclass(frozen=True)
class Item:
    label: str
    kind: str  # "time" (adjust a player), "options", "length", "confirm", "table", "exit"
    player: int | None = None
    options: tuple[tuple[str, tuple], ...] = ()  # (text, effect)


@dataclass(frozen=True)
class Menu:
    items: tuple[Item, ...]
    index: int = 0
    mode: str = "list"  # "list", "minutes", "seconds", "option", "confirm", "tens", "units"
    value_s: int = 0  # the time being edited
    shown_s: int | None = None  # the time as shown when editing began: unchanged means no adjustment
    option: int = 0
    low_s: int = 0
    high_s: int = MAX_TIME_S
    pending: tuple = ()  # the effect a yES confirms

    @property
    def item(self) -> Item:
        return self.items[self.index]


def open_menu(v: View, game_time_ms: int, forfeit_overtime_ms: int, ask_table: bool = False) -> Menu:
    """The menu as it opens for the clock's state `v` (the clock is already neutralised);
    `ask_table`: the clock joined a hall and may ask the director for a table number."""
    items = [] if v.phase is Phase.ENDED else [Item("P1", "time", 1), Item("P2", "time", 2)]
    late: list[tuple[str, tuple]] = []
    if v.phase is Phase.SETUP:
        late += [("P1", ("late_start", (1,))), ("P2", ("late_start", (2,))), ("both", ("late_start", (1, 2)))]
        late += [(f"For{p.player}", ("forfeit", p.player)) for p in v.players if p.may_forfeit]
    elif v.phase is Phase.LATE:
        late += [(f"Arr{p.player}", ("arrive", p.player)) for p in v.players if p.absent]
        # the first of two late players may elect to forfeit before the other arrives (2.3.2(b), 2.3.4)
        late += [(f"For{p.player}", ("forfeit", p.player)) for p in v.players if p.may_forfeit]
    if late:
        items.append(Item("LAtE", "options", options=tuple(late)))
    items += [Item("LEn", "length"), Item("rSEt", "confirm")]
    items += [Item("tAbL", "table")] if ask_table else []
    items += [Item("donE", "exit")]
    m = Menu(items=tuple(items))
    return replace(m, value_s=game_time_ms // 1000, low_s=-(forfeit_overtime_ms // 1000) + 1)


def press(m: Menu, button: str, v: View, game_time_ms: int) -> tuple[Menu, list[tuple]]:
    """The menu after `button` ("left", "right" or "neutralise") is pressed; `v` is the clock now."""
    step = {"left": -1, "right": 1}.get(button, 0)
    if m.mode == "list":
        if step:  # the list stops at its ends: a director counting presses never wraps round
            return replace(m, index=max(0, min(len(m.items) - 1, m.index + step))), []
        item = m.item
        if item.kind == "time":
            remaining_s = _seconds(v.players[item.player - 1].remaining_ns)
            return replace(m, mode="minutes", value_s=remaining_s, shown_s=remaining_s, low_s=m.low_s, high_s=MAX_TIME_S), []
        if item.kind == "options":
            return replace(m, mode="option", option=0), []
        if item.kind == "length":
            return replace(m, mode="minutes", value_s=game_time_ms // 1000), []
        if item.kind == "confirm":
            return replace(m, mode="confirm", option=1, pending=("new_game", game_time_ms)), []
        if item.kind == "table":
            return replace(m, mode="tens", value_s=1), []
        return m, [("exit",)]
    if m.mode in ("tens", "units"):  # value_s holds the table number being chosen
        if step:
            size = 10 if m.mode == "tens" else 1
            return replace(m, value_s=max(1, min(MAX_TABLE, m.value_s + step * size))), []
        if m.mode == "tens":
            return replace(m, mode="units"), []
        return replace(m, mode="list"), [("ask_table", m.value_s), ("exit",)]
    if m.mode in ("minutes", "seconds"):
        low = MIN_GAME_S if m.item.kind == "length" else m.low_s
        if step:
            size = 60 if m.mode == "minutes" else 1
            return replace(m, value_s=max(low, min(MAX_TIME_S, m.value_s + step * size))), []
        if m.mode == "minutes":
            return replace(m, mode="seconds"), []
        if m.item.kind == "length":
            return replace(m, mode="confirm", option=1, pending=("new_game", m.value_s * 1000)), []
        if m.value_s == m.shown_s:  # the shown time is rounded: setting it would give time back
            return replace(m, mode="list"), []
        return replace(m, mode="list"), [("adjust", m.item.player, m.value_s * 1000)]
    if m.mode == "option":
        if step:
            return replace(m, option=max(0, min(len(m.item.options) - 1, m.option + step))), []
        return replace(m, mode="list"), [m.item.options[m.option][1], ("exit",)]
    if m.mode == "confirm":
        if step:  # left: yES, right: no (as they are written)
            return replace(m, option=0 if step < 0 else 1), []
        if m.option == 0:
            return replace(m, mode="list", pending=()), [m.pending, ("exit",)]
        return replace(m, mode="list", pending=()), []
    raise ValueError(f"unknown menu mode {m.mode!r}")


def texts(m: Menu, v: View, t_ns: int, game_time_ms: int) -> tuple[str, str]:
    """(left, right) display texts. The field being edited blinks (on for the first half of each
    second, from the grid of the monotonic clock)."""
    item = m.item
    blink_off = (t_ns // BLINK_NS) % 2 == 1
    if m.mode in ("minutes", "seconds"):
        text = display_text(m.value_s * NS_PER_S)
        if blink_off:
            mins, _, secs = text.partition(":")
            # blank as many digits as the minutes fill: at most two ("-1x" shares its first digit)
            text = f"{' ' * min(len(mins), 2)}:{secs}" if m.mode == "minutes" else f"{mins}:  "
        return item.label, text
    if m.mode in ("tens", "units"):
        digits = f"{m.value_s:>4}"
        if blink_off:  # the tens and above, or the units, blink
            digits = f"{'':>3}{digits[3]}" if m.mode == "tens" else f"{digits[:3]} "
        return item.label, digits
    if m.mode == "option":
        return item.label, item.options[m.option][0]
    if m.mode == "confirm":
        return item.label, ("yES", "no")[m.option]
    if item.kind == "time":
        return item.label, v.players[item.player - 1].text
    if item.kind == "length":
        return item.label, display_text(game_time_ms * 1_000_000)
    if item.kind == "options":
        return item.label, item.options[0][0]
    return item.label, ""


_OPEN = {"options": "choose", "length": "set the game time", "confirm": "new game", "table": "ask for a table number",
         "exit": "back to the clock"}


def key_help(m: Menu) -> dict[str, str]:
    """What each button does now, for the simulator's key line while the menu is open (issue 10):
    {"left": ..., "neutralise": ..., "right": ...}."""
    item = m.item
    if m.mode == "list":
        centre = f"adjust {item.label}'s time" if item.kind == "time" else f"{_OPEN[item.kind]}" + (
            f" ({item.label})" if item.kind == "options" else ""
        )
        return {
            "left": "previous item" if m.index > 0 else "(first item)",
            "neutralise": centre,
            "right": "next item" if m.index < len(m.items) - 1 else "(last item)",
        }
    if m.mode in ("tens", "units"):
        size = "10" if m.mode == "tens" else "1"
        centre = "to the units" if m.mode == "tens" else "ask the director for this table"
        return {"left": f"{size} less", "neutralise": centre, "right": f"{size} more"}
    if m.mode in ("minutes", "seconds"):
        unit = "minute" if m.mode == "minutes" else "second"
        if m.mode == "minutes":
            centre = "to the seconds"
        elif item.kind == "length":
            centre = "on to yES/no"
        else:
            centre = f"set {item.label}'s time"
        return {"left": f"1 {unit} less", "neutralise": centre, "right": f"1 {unit} more"}
    if m.mode == "option":
        last = len(item.options) - 1
        return {
            "left": "previous choice" if m.option > 0 else "(first choice)",
            "neutralise": f"choose {item.options[m.option][0]}",
            "right": "next choice" if m.option < last else "(last choice)",
        }
    return {"left": "yES", "neutralise": f"confirm {('yES', 'no')[m.option]}", "right": "no"}


def next_change_ns(m: Menu, t_ns: int) -> int | None:
    """When the menu's texts next change by themselves (a blinking field), or None."""
    if m.mode in ("minutes", "seconds", "tens", "units"):
        return (t_ns // BLINK_NS + 1) * BLINK_NS
    return None


def _seconds(remaining_ns: int) -> int:
    """Remaining time as the display shows it, in whole seconds (negative in overtime)."""
    return -(-remaining_ns // NS_PER_S)  # rounded up in time, truncated in overtime
