"""The director's PIN on the challenge station: the digits typed and the lockout, as a plain value.

The station's flow (`kiosk.flow.Station`) holds one `PinPad` and replaces it on each key; the PIN
and LOCKED screens read it. Five wrong PINs in a row lock director mode for the station's
`Timing.lockout_ns` (60 s), so a player cannot try PINs at the rate they can type; a right PIN
forgives the wrong ones before it. The PIN itself is never held here: `check` is given the
station's `verify_pin` (the app's comparison with the configured hash). Pure: times are the caller's
monotonic nanoseconds.
"""

from __future__ import annotations

from typing import Callable

from rackside.values import Record

PIN_MAX = 8  # digits a PIN may have: more are not taken
PIN_TRIES = 5  # wrong PINs in a row that lock director mode

# What `PinPad.check` found.
OPEN = "open"  # the right PIN: the director's screens
LOCKED = "locked"  # locked now, by this wrong PIN or one before it
WRONG = "wrong"  # a wrong PIN, tries left: `message` says how many


class PinPad(Record):
    """The PIN being typed (`digits`), the line under it (`message`), the wrong PINs in a row and
    until when director mode is locked."""

    __slots__ = ("digits", "message", "wrong_tries", "lock_until_ns")
    _defaults = {"digits": "", "message": "", "wrong_tries": 0, "lock_until_ns": 0}
    digits: str
    message: str
    wrong_tries: int
    lock_until_ns: int

    def locked(self, t_ns: int) -> bool:
        return t_ns < self.lock_until_ns

    def typed(self, action: str) -> "PinPad":
        """A key on the PIN screen ("digit:7", "backspace"; anything else changes nothing)."""
        if action == "backspace":
            return self.replace(digits=self.digits[:-1])
        if action.startswith("digit:"):
            digits = self.digits + action[6:] if len(self.digits) < PIN_MAX else self.digits
            return self.replace(digits=digits, message="")
        return self

    def cleared(self) -> "PinPad":
        """The digits and the message forgotten (leaving the screen); the tries and the lock kept."""
        return self.replace(digits="", message="")

    def check(self, verify: Callable[[str], bool], t_ns: int, lockout_ns: int) -> tuple["PinPad", str]:
        """The typed digits entered at `t_ns`: the pad after it (digits cleared) and OPEN, LOCKED or
        WRONG. While locked the digits are not even tried."""
        if self.locked(t_ns):
            return self.cleared(), LOCKED
        pin, pad = self.digits, self.replace(digits="")
        if pin and verify(pin):
            return pad.replace(wrong_tries=0), OPEN
        wrong = self.wrong_tries + 1
        if wrong >= PIN_TRIES:
            return pad.replace(wrong_tries=0, lock_until_ns=t_ns + lockout_ns), LOCKED
        left = PIN_TRIES - wrong
        return pad.replace(wrong_tries=wrong, message=f"Wrong PIN: {left} {'try' if left == 1 else 'tries'} left"), WRONG
