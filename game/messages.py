"""What travels on the table clock's one queue: button edges, keypad keys, commands, requests, the stop.

Everything that reaches the runner goes through one `queue.SimpleQueue` (see `firmware.runner`):
the board's pin callbacks put `Edge`s, the optional keypad's scanner (`hardware.keypad`) puts
`Key`s, the simulator's keyboard puts `Command`s, the hall's command subscriber (and anything else
off the runner's thread) puts `Request`s through `Runner.submit`, and `Runner.stop` puts a `Stop`.
Each message is a typed, immutable tuple whose second field is its monotonic-ns time, so a batch
sorts by time with one key and reads in a log as the record it is:
``Edge(t, "left", True) == ("edge", t, "left", True)``.

`BUTTONS` is defined here, once: the board wires them, the gestures read them, the pin map checks them.
`KEYPAD_KEYS` likewise: the keypad's scanner lays them out, the simulators map them, the runner checks them.
Imports nothing of Rackside.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

BUTTONS = ("left", "right", "neutralise")  # left = player 1, right = player 2, the centre neutralises
PLAYER_OF = {"left": 1, "right": 2}
# The optional 3x4 keypad's keys, row by row as on the keypad (hardware.keypad reads rows of three).
KEYPAD_KEYS = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "*", "0", "#")
# Optional on any request: who sent it, why, from when, the hall command's id. Journalled beside the
# input a request becomes (firmware.runner), and told to every output with it (`Applied.notes`).
NOTES = ("by", "reason", "scheduled_start", "command", "event")  # event: a hall new_game's (issue 35)


class _Edge(NamedTuple):
    kind: str
    t_ns: int
    button: str
    down: bool


class Edge(_Edge):
    """A button's contact closed (`down`) or opened at `t_ns`; from the board's pin callbacks."""

    __slots__ = ()

    def __new__(cls, t_ns: int, button: str, down: bool) -> "Edge":
        return super().__new__(cls, "edge", t_ns, button, down)


class _Key(NamedTuple):
    kind: str
    t_ns: int
    key: str
    down: bool


class Key(_Key):
    """A keypad key (one of `KEYPAD_KEYS`), debounced: pressed (`down`, dated at the contact's first
    closing edge) or released (dated at its last opening edge). From `hardware.keypad`'s scanner."""

    __slots__ = ()

    def __new__(cls, t_ns: int, key: str, down: bool) -> "Key":
        return super().__new__(cls, "key", t_ns, key, down)


class _Command(NamedTuple):
    kind: str
    t_ns: int
    name: str


class Command(_Command):
    """A command of the simulator's keyboard, the same as a long press: "menu", "end", "stop", and
    "call" (the director's call, issue 27: # held on the keypad, or the three buttons)."""

    __slots__ = ()

    def __new__(cls, t_ns: int, name: str) -> "Command":
        return super().__new__(cls, "cmd", t_ns, name)


Reply = Callable[[bool, str], None]  # (accepted, why): called on the runner's thread, must not block


class _Request(NamedTuple):
    kind: str
    t_ns: int
    name: str
    args: Mapping[str, Any]
    source: str
    reply: Reply | None


class Request(_Request):
    """A command from off the table (the hall's director, a test): `name` with its `args`, dated
    `t_ns` (when it arrived), journalled with `source` beside the input it applies, answered through
    `reply(accepted, why)`. The names the runner knows are `firmware.requests.REQUESTS`."""

    __slots__ = ()

    def __new__(
        cls, t_ns: int, name: str, args: Mapping[str, Any] | None = None, *, source: str = "hall", reply: Reply | None = None
    ) -> "Request":
        return super().__new__(cls, "request", t_ns, name, dict(args or {}), source, reply)


class _Stop(NamedTuple):
    kind: str
    t_ns: int


class Stop(_Stop):
    """Stop the runner's loop (a quit key, SIGTERM, the end of a test)."""

    __slots__ = ()

    def __new__(cls, t_ns: int) -> "Stop":
        return super().__new__(cls, "stop", t_ns)


Message = Edge | Key | Command | Request | Stop
