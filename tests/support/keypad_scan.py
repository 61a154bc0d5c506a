"""The optional keypad's scanner (hardware.keypad) on a firmware rig's fake clock: a test presses a
key on gpiozero's mock pins and lets the scanner's rounds run as its thread would, without sleeping.
(`Scanner` is tests/test_keypad.py's stepping too; `KeypadRig` is for the flows that read the keypad: issue 27.)"""

from __future__ import annotations

from rackside.game.clock import NS_PER_MS
from rackside.hardware.keypad import Keypad

ROWS, COLUMNS = (4, 25, 13, 19), (18, 20, 21)  # hardware/pins.toml's [keypad]
WAKE_NS = 100_000  # the scanner thread's wake-up after an edge: 0.1 ms


class Scanner:
    """The scanner's thread on the rig's fake clock: a round when an edge wakes it, another when the
    round asked for one, each a little after its wake-up (tests/test_keypad.py steps it by hand)."""

    def __init__(self, rig, keypad) -> None:
        self.rig, self.kp = rig, keypad
        self.due: int | None = None

    def _woken(self) -> None:
        if self.kp._wake.is_set():
            self.kp._wake.clear()
            t = self.rig.now + WAKE_NS
            self.due = t if self.due is None else min(self.due, t)

    def until(self, t_ns: int) -> None:
        """Let time pass to `t_ns`, running every round due before it."""
        while True:
            self._woken()
            if self.due is None or self.due > t_ns:
                break
            self.rig.at(max(self.due, self.rig.now))
            delay = self.kp.service()
            self.due = None if delay is None else self.rig.now + round(delay * 1e9)
        self.rig.at(t_ns)

    def ms(self, ms: float):
        self.until(self.rig.now + round(ms * NS_PER_MS))
        return self


class KeypadRig(Scanner):
    """A `Keypad` on `rig`'s board, its rounds run on the rig's clock; `type` presses keys in turn."""

    def __init__(self, rig) -> None:
        super().__init__(rig, Keypad(ROWS, COLUMNS, board=rig.board))
        self.ms(5)  # the first scan (at start-up)

    def press(self, key: str, hold_ms: float = 60) -> None:
        """Press and release `key`; the runner handles the keys the scanner put on its queue."""
        self.kp.drive(key, True)
        self._woken()
        self.ms(hold_ms)
        self.kp.drive(key, False)
        self._woken()
        self.ms(40)
        self.rig.pump()

    def type(self, keys: str) -> None:
        for k in keys:
            self.press(k)

    def close(self) -> None:
        self.kp.close()
