"""Clock outputs: everything the runner tells about the game goes through this one small protocol.

The runner (`firmware.runner`) knows no display, buzzer, journal or network. It hands

- each input the core accepted to every output's `applied(entry)`: an `Applied` with the input, the
  journal's own `seq` for it (its number in the game, 1, 2, ...: the journal has already written
  it; None while the journal cannot be written), the `game` (its journal's name), the input's
  `source` and `notes` (a hall command's id, who sent it and why), the clock after it and its time,
- what the clock shows, once per loop iteration, to `view(frame, t_ns)`,
- the end of the iteration to `flush(t_ns)` (after every output has seen the frame: the journal's
  fsync never delays a display),
- and asks `next_due_ns(t_ns)` when it next needs to be woken for an output (a checkpoint, a retry).

`start()` is called once the runner has restored the game, before its loop, and `close()` once
when the runner stops. Every output is built here, by name, through the
registry below, in one place (`assemble`): the turn LEDs, the displays, the buzzer, the configured
`[[outputs]]`, the hall publisher, and the journal/store (`firmware.journal_output`, which also
restores and numbers the inputs, so the runner is handed it by name as well). A config adds one:

    [[outputs]]            # in the clock's TOML config, one table per output
    name = "scoreboard"    # looked up in the registry below; the other keys go to its factory
    ...

A name is found (`rackside.registry`, as the display drivers are), in order, in `register()`'d
factories (tests, plug-ins that import themselves), in `BUILTIN` (lazily imported
"module:attribute" strings), and in the `rackside.outputs` entry-point group (a separate package
adds an output by declaring one, as gpiozero finds its pin factories).
A factory is called as ``factory(context, settings)`` and returns an output; it refuses bad settings
with `OutputConfigError` naming the key and what is allowed. Adding an output is a new module and a
config entry: no change to the runner.

Rules for an output, because the clock never waits on anything: every method returns at once (slow
work goes to the output's own thread behind a bounded queue) and never raises (faults are logged
once per outage, `rackside.outage.Outage`). The runner still guards each call, and an output that
raises is logged once and kept.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NamedTuple, Protocol, runtime_checkable

from rackside.outage import Outage
from rackside.registry import Registry

if TYPE_CHECKING:  # annotations only: importing this module costs nothing of the core
    from rackside.game.clock import Clock, Input, Rules, View
    from rackside.game.messages import Message

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "rackside.outputs"


class Frame(NamedTuple):
    """What the clock shows at one moment: the core's `view`, the two displays' `texts` (the
    director's menu's while it is open), the core `clock` itself (for snapshots), whether the
    `menu` is open, and the `game`: its journal's name, "game-000003" (None while the new game's
    journal is pending); and what a text display says in words (issue 40, firmware.text_render):
    the `table` (game.table.Table), the game's `slip` (game.slip.Slip or None), whether a
    `keypad` is fitted, whether the power-cut banner shows (`restored`) and a check-in waiting for
    its player to confirm their name (`confirm`)."""

    view: "View"
    texts: tuple[str, str]
    clock: "Clock"
    menu: bool
    game: str | None
    table: Any = None
    slip: Any = None
    keypad: bool = False
    restored: bool = False
    confirm: Any = None  # (side, number) a text display asks that side to confirm before it checks in


class Applied(NamedTuple):
    """One input the core accepted, as every output is told it (`Output.applied`)."""

    input: "Input"
    seq: int | None  # the journal's own seq for it (1, 2, ... in its game); None: not written
    game: str | None  # the journal's name ("game-000003"); None while the new game's journal is pending
    source: str | None  # None: the table (buttons, the director's menu); "hall": a director's command
    notes: Mapping[str, str]  # journalled beside it: the hall command's id ("command"), "by", "reason", "scheduled_start"
    clock: "Clock"  # the state after it
    t_ns: int


@runtime_checkable
class Output(Protocol):
    """One thing the runner tells about the game. Subclass it to inherit the do-nothing defaults."""

    def applied(self, entry: Applied) -> None:
        """The core accepted `entry.input` (dated `entry.t_ns`), the journal wrote it as `entry.seq`."""

    def view(self, frame: Frame, t_ns: int) -> None:
        """What the clock shows at `t_ns`; called every loop iteration, changed or not."""

    def flush(self, t_ns: int) -> None:
        """The end of a loop iteration: make durable or send what this iteration gave you."""

    def next_due_ns(self, t_ns: int) -> int | None:
        """When the runner must next call `flush` without any input (None: never)."""
        return None

    def start(self) -> None:
        """The runner restored the game and is about to loop: start a thread here, if any. From
        here on, every call comes from the runner's loop (its one thread)."""

    def close(self) -> None:
        """The runner stops: finish up. Devices are released by whoever opened them."""


class OutputConfigError(ValueError):
    """An `[[outputs]]` entry that cannot be used; the message names the key and what is allowed.
    `option`: the command-line option whose value it is (`--hall`: hall.net.config.HallConfigError's),
    None when it is the config file's (firmware.cli names the file then)."""

    def __init__(self, line: str, *, option: str | None = None) -> None:
        super().__init__(line)
        self.option = option


class OutputContext(NamedTuple):
    """What a factory may use to build its output."""

    config: Any  # the clock's `firmware.config.LoadedConfig` (its `data` has every section)
    rules: "Rules"
    board: Any  # `hardware.board.Board`, or None
    clock_ns: Callable[[], int]
    state_dir: Any  # pathlib.Path of the clock's state
    simulated: bool
    submit: Callable[["Message"], None]  # put a message on the runner's queue (any thread)
    displays: tuple = ()  # the opened displays (left, right): `hardware.display` objects
    store: Any = None  # the journal store (`firmware.persist.GameStore`)
    hall: Any = None  # the hall's [hall] table with the command line's overrides, or None: not on a hall
    keypad: bool = False  # a keypad is fitted ([keypad] enabled): its players can check in (issue 27)
    text_display: Any = None  # the opened text display (hardware.textdisplay), or None: none fitted (issue 40)


Factory = Callable[[OutputContext, dict], Output]

# Built-in names, imported only when a config asks for them.
BUILTIN: dict[str, str] = {
    "turn_leds": "rackside.firmware.led_output:factory",
    "displays": "rackside.firmware.display_output:factory",
    "buzzer": "rackside.firmware.buzzer_output:factory",
    "hall": "rackside.hall.device.clock_factory:factory",
    "journal": "rackside.firmware.journal_output:factory",
    "recording": "rackside.firmware.outputs:RecordingOutput",
    "text_display": "rackside.firmware.text_output:factory",
}
REGISTRY = Registry(ENTRY_POINT_GROUP, lambda: BUILTIN, callable)


def register(name: str, factory: Factory) -> None:
    """Make `factory` available as `[[outputs]] name = "<name>"` (replaces an earlier one)."""
    REGISTRY.register(name, factory)


def unregister(name: str) -> None:
    REGISTRY.unregister(name)


def names() -> list[str]:
    """Every output name that can be configured."""
    return REGISTRY.names()


def find(name: str) -> Factory:
    """The factory registered as `name`; OutputConfigError naming the allowed names if none is."""
    factory = REGISTRY.find(name)
    if factory is None:
        raise OutputConfigError(f"outputs: name {name!r} is not a known output (allowed: {', '.join(names())})")
    return factory


def check_entries(raw: Any) -> tuple[dict, ...]:
    """The config's `outputs` array, checked as far as it can be before anything is built: a list
    of tables each with a known `name`."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise OutputConfigError("outputs: must be an array of tables, written [[outputs]] with a name = \"...\"")
    for i, entry in enumerate(raw):
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise OutputConfigError(f"outputs[{i}].name: {'missing' if name is None else repr(name)} (allowed: {', '.join(names())})")
        find(name)
    return tuple(dict(e) for e in raw)


def build(entries: Iterable[Mapping], context: OutputContext, labels: Iterable[str] | None = None) -> list[Output]:
    """Build the outputs, in order. A factory's OutputConfigError (or ValueError) is raised naming
    the entry (`labels`: how each is named; by default `outputs[i] (name)`, its place in the
    config); nothing half-built is left running."""
    built: list[Output] = []
    entries = list(entries)
    labels = list(labels) if labels is not None else [f"outputs[{i}] ({e['name']})" for i, e in enumerate(entries)]
    try:
        for entry, label in zip(entries, labels):
            settings = {k: v for k, v in entry.items() if k != "name"}
            try:
                built.append(find(entry["name"])(context, settings))
            except ValueError as exc:
                raise OutputConfigError(f"{label}: {exc}", option=getattr(exc, "option", None)) from None
    except BaseException:
        for output in built:
            try:
                output.close()
            except Exception:  # noqa: BLE001 - closing what was built before the error
                pass
        raise
    return built


def assemble(configured: Iterable[Mapping], context: OutputContext, *,
             buzzer: bool) -> tuple[list[Output], Output, Output | None]:
    """Every output of a clock, built through the registry in one place: (the outputs in the order
    they are told, the journal, the hall publisher or None). The turn LEDs when the board has them,
    the displays, the text display when one is fitted, the buzzer when `buzzer`, the configured `[[outputs]]`, the hall publisher when
    `context.hall` puts the clock on a hall; then the journal, which the runner also calls by name
    (write-ahead). The hall publisher is named apart because the clock's shell hands it the runner."""
    before = ["turn_leds"] if context.board is not None and getattr(context.board, "leds", None) else []
    before += ["displays"] + (["text_display"] if context.text_display is not None else []) + (["buzzer"] if buzzer else [])
    after = (["hall"] if context.hall is not None else []) + ["journal"]
    configured = list(configured)
    entries = [{"name": n} for n in before] + configured + [{"name": n} for n in after]
    labels = before + [f"outputs[{i}] ({e['name']})" for i, e in enumerate(configured)] + after
    built = build(entries, context, labels)
    return built[:-1], built[-1], (built[-2] if context.hall is not None else None)


def no_settings(settings: Mapping) -> None:
    """For a built-in output that takes no keys: refuse any, naming the first."""
    if settings:
        raise OutputConfigError(f"unknown key {sorted(settings)[0]!r} (this output takes none)")


class Guarded:
    """Calls an output so that nothing it raises reaches the clock's loop: the first exception of
    each outage of each method is logged, and the output is kept (the next call may work again)."""

    __slots__ = ("output", "outages")

    def __init__(self, output: Output) -> None:
        self.output = output
        self.outages: dict[str, Outage] = {}  # method -> its outage, once one failed

    def call(self, method: str, *args: Any) -> Any:
        try:
            result = getattr(self.output, method)(*args)
        except Exception as exc:  # noqa: BLE001 - an output's bug must never stop the clock
            outage = self.outages.get(method)
            if outage is None:
                outage = self.outages[method] = Outage(log, f"clock output {type(self.output).__name__}.{method}")
            outage.failed(repr(exc))
            return None
        if self.outages:
            outage = self.outages.get(method)
            if outage is not None:
                outage.recovered()
        return result


class RecordingOutput(Output):
    """`[[outputs]] name = "recording"`: remembers everything it was given (tests, the docs' tools,
    and the smallest example of an output). `limit` bounds how many of each it keeps."""

    def __init__(self, context: OutputContext | None = None, settings: dict | None = None) -> None:
        settings = dict(settings or {})
        limit = settings.pop("limit", 10_000)
        if settings:
            raise OutputConfigError(f"unknown key {sorted(settings)[0]!r} (allowed: limit)")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise OutputConfigError(f"limit: {limit!r} (allowed: a whole number of at least 1)")
        self.limit = limit
        self.inputs: list[Applied] = []
        self.frames: list[tuple[Frame, int]] = []
        self.flushes = 0
        self.closed = False

    def applied(self, entry: Applied) -> None:
        self.inputs.append(entry)
        del self.inputs[: -self.limit]

    def view(self, frame: Frame, t_ns: int) -> None:
        if not self.frames or self.frames[-1][0] != frame:
            self.frames.append((frame, t_ns))
            del self.frames[: -self.limit]

    def flush(self, t_ns: int) -> None:
        self.flushes += 1

    def close(self) -> None:
        self.closed = True
