"""The table's flows as the runner holds them: a keypad key or a player's press turned into the
table's inputs (game.table: check-in, the director's call). Pure, like firmware.menu_session:
the runner journals and applies what this returns, and asks `deadline` when to wake.

Keys (game.messages.Key, debounced by hardware.keypad):

- before the game (setup, or waiting for latecomers): a digit is typed, `*` clears what was typed
  (game.checkin.CLEAR_KEY); each is journalled (`key`), so a power cut mid-number comes back
  with the digits typed so far. With digits typed, a player's own button is their check-in
  (2.3.1(b), 1.4.5), not a start;
- any time: `#` (game.call.CALL_KEY) held `CALL_HOLD_NS` calls the director (from no side: the
  call's `how` is KEYPAD); a player's own button pressed while `#` is held calls at once, from that
  side (SIDE: the call says which side called). The three buttons' gesture calls from no side (BUTTONS).

With a text display (issue 40, `confirm`), the first press with digits typed does not check in: the
text display names the player those digits are ("Left: Jones #31? Press your button again") and the
same side's second press, the digits unchanged, is the check-in; a key typed in between (or `*`)
starts again. So each player confirms their own name before the press counts; the pending
confirmation is not journalled (after a power cut the player presses again).

A press the table takes (a check-in, a call) never reaches the clock core; the starter's own press
before the game (2.2: the non-starter starts the starter's time) is not a start once the starter's
side is known (`press` says `REFUSED`). Every other press goes to the clock as today, so a clock
with no keypad (no key ever arrives) behaves exactly as before.
"""

from __future__ import annotations

from rackside.game import call as call_core
from rackside.game import checkin as checkin_core
from rackside.game.call import BUTTONS, CALL_HOLD_NS, CALL_KEY, KEYPAD, SIDE
from rackside.game.checkin import CheckIn, Typed
from rackside.game.clock import Phase
from rackside.game.table import Table

REFUSED = "refused"  # `press`: the press is not a start (2.2), and goes nowhere
BEFORE_GAME = (Phase.SETUP, Phase.LATE)


class TableSession:
    def __init__(self, *, keypad: bool = False, call_hold_ns: int = CALL_HOLD_NS, confirm: bool = False) -> None:
        self.keypad = keypad  # a keypad is fitted: the displays show the check-in
        self.confirm = confirm  # a text display is fitted: a check-in is confirmed by a second press (issue 40)
        self.confirming: tuple[int, str] | None = None  # (side, the digits) pressed once, awaiting the second press
        self.call_hold_ns = call_hold_ns
        self.call_key_since: int | None = None  # `#` is held since then (its call not made yet)

    def cancel(self) -> None:
        """Forget a `#` being held (the director's menu opened: its release never comes here)."""
        self.call_key_since = None

    def deadline(self) -> int | None:
        """When holding `#` makes the call (None: not held)."""
        return None if self.call_key_since is None else self.call_key_since + self.call_hold_ns

    def key(self, key: str, down: bool, t: int, table: Table, phase: Phase) -> list | None:
        """The table inputs a key makes (a list, maybe empty), or None when no flow used it."""
        if key == CALL_KEY:
            if down:
                self.call_key_since = t
                return []
            held, self.call_key_since = self.call_key_since, None
            # released before its call: a tap, which no flow of these uses (another may: the slip's)
            return None if held is not None else []
        if not down:
            return None
        if phase in BEFORE_GAME and (key in checkin_core.DIGITS or key == checkin_core.CLEAR_KEY):
            if key == checkin_core.CLEAR_KEY and not table.seating.typed:
                return None  # nothing to clear
            self.confirming = None  # the digits change: a pending confirmation is for other digits
            return [Typed(t, key)]
        return None

    def tick(self, t: int, table: Table) -> list:
        """What is due at `t`: `#` held long enough calls the director (from no side in particular)."""
        due = self.deadline()
        if due is None or t < due:
            return []
        self.call_key_since = None
        made = call_core.next_call(table.calls, due, KEYPAD)
        return [made] if made is not None else []

    def press(self, player: int, t: int, table: Table, phase: Phase) -> list | str | None:
        """A player's own button: the table inputs it is (a check-in, a call), `REFUSED`, or None:
        the clock's press, as always."""
        if self.call_key_since is not None:
            self.call_key_since = None  # `#` held and a button: that side's call, now
            made = call_core.next_call(table.calls, t, SIDE, player)
            return [made] if made is not None else []
        s = table.seating
        if phase in BEFORE_GAME and checkin_core.taking_digits(s):
            if self.confirm and self.confirming != (player, s.typed):
                self.confirming = (player, s.typed)  # the text display asks: is this you? (issue 40)
                return []
            self.confirming = None
            return [CheckIn(t, player, int(s.typed))]
        if phase is Phase.SETUP and checkin_core.refuses_start(s, player):
            return REFUSED
        return None

    def confirm_shown(self, table: Table) -> tuple[int, int] | None:
        """(side, number) the text display asks that side to confirm, or None."""
        c = self.confirming
        if c is None or c[1] != table.seating.typed or not c[1]:
            return None
        return c[0], int(c[1])

    def gesture_call(self, t: int, table: Table) -> list:
        """The three buttons' call gesture (firmware.gestures): a call from no side in particular."""
        made = call_core.next_call(table.calls, t, BUTTONS)
        return [made] if made is not None else []
