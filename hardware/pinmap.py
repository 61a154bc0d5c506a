"""Pin maps: which BCM GPIO each button, display and the buzzer is wired to.

A pin map is a TOML table (`hardware/pins.toml` holds the reference build's defaults; the clock's
config may carry its own copy)::

    [buttons]            # wired to ground; the Pi's internal pull-ups hold them high
    left = 17
    right = 27
    neutralise = 22
    [displays.left]      # any table a display driver accepts (`hardware.drivers`)
    driver = "tm1637"
    clk = 5
    dio = 6
    [displays.right]
    driver = "tm1637"
    clk = 23
    dio = 24
    [buzzer]             # optional; `enabled = false` (or no table) for none
    pin = 12
    [leds]               # turn indicators beside the buttons; optional like the buzzer
    left = 26
    right = 16
    [keypad]             # the optional 3x4 keypad (hardware.keypad); used only with enabled = true
    enabled = false
    rows = [4, 25, 13, 19]      # top row (1 2 3) first; driven low by the scanner
    columns = [18, 20, 21]      # left column (1 4 7 *) first; inputs with the Pi's pull-ups
    [pins]               # optional: which GPIO chip the BCM numbers are lines of
    chip = 0             # /dev/gpiochip0; absent: gpiozero's own choice (hardware.board.gpio_factory)

Loading refuses, naming the key and the allowed values: an unknown key, a number outside the
header's BCM GPIO 2-27, and a pin used twice (naming both uses). A keypad's pins are claimed only when
it is enabled; a `[keypad]` table may leave out its rows and columns, which are then the reference
build's (so `[keypad] enabled = true` is all a clock config needs for the reference wiring). What a display uses is what its
driver claims: a TM1637 its CLK and DIO, a serial display on the Pi's own UART BCM 14 and 15 (so
a button there is refused too) and its port. A claim may name a bus (a MAX7219's SCLK and MOSI name
its SPI bus): then it shares the pin with other claims of the same bus, and with nothing else, as
gpiozero's `reserve_pins` lets two SPI interfaces of one bus hold its clock (each device's
`_conflicts_with`); a chip select is one display's alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rackside import tomlfile
from rackside.game.messages import BUTTONS
from rackside.hardware.bcm import PinMapError, check_bcm
from rackside.hardware.drivers import check_display_spec, driver_of

DEFAULT_PATH = Path(__file__).resolve().with_name("pins.toml")  # resolved: a message names the checkout's file
DISPLAYS = ("left", "right")
CHIP_MAX = 63  # /dev/gpiochipN: the [pins] chip setting's range
KEYPAD_LINES = {"rows": 4, "columns": 3}  # a 3x4 keypad's lines (hardware.keypad)
LEDS = ("left", "right")  # a turn LED beside each player's button


@dataclass(frozen=True)
class KeypadPins:
    rows: tuple[int, ...]  # BCM, top row first
    columns: tuple[int, ...]  # BCM, left column first
    enabled: bool  # fitted and scanned; a disabled keypad claims no pin (it is only drawn)


@dataclass(frozen=True)
class PinMap:
    buttons: dict[str, int]
    displays: dict[str, dict[str, Any]]
    buzzer: int | None
    leds: dict[str, int] = field(default_factory=dict)  # turn LEDs, side -> BCM; empty when not fitted
    uses: tuple[tuple[str, int], ...] = field(default=())  # (use, BCM) for every claimed pin
    keypad: KeypadPins | None = None  # the [keypad] table, enabled or not; None when there is none
    chip: int | None = None  # [pins] chip: the /dev/gpiochipN whose lines are the BCM numbers; None: gpiozero's choice

    def use_of(self, bcm: int) -> str | None:
        return next((use for use, pin in self.uses if pin == bcm), None)


def _table(raw: dict, key: str, where: str, required: bool = True) -> dict:
    value = raw.get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise PinMapError(f"{where}{key}: {'missing' if value is None else 'must be a table'}")
    return value


def _unknown(table: dict, allowed: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise PinMapError(f"{where}{key}: unknown key (allowed: {', '.join(allowed)})")


def _keypad(raw: dict, defaults: dict, p: str) -> KeypadPins | None:
    """The [keypad] table over `defaults` (the reference build's), checked; None when neither has one."""
    table = _table(raw, "keypad", p, required=False)
    if not table and not defaults:
        return None
    _unknown(table, ("enabled", *KEYPAD_LINES), f"{p}keypad.")
    table = {**defaults, **table}
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise PinMapError(f"{p}keypad.enabled: {enabled!r} (allowed: true, false)")
    lines: dict[str, tuple[int, ...]] = {}
    for name, count in KEYPAD_LINES.items():
        value = table.get(name)
        if not isinstance(value, list) or len(value) != count:
            raise PinMapError(f"{p}keypad.{name}: {'missing' if value is None else repr(value)} (allowed: a list of {count} BCM GPIO numbers)")
        lines[name] = tuple(check_bcm(bcm, f"{p}keypad.{name}[{i}]") for i, bcm in enumerate(value))
    return KeypadPins(rows=lines["rows"], columns=lines["columns"], enabled=enabled)


def _chip(raw: dict, p: str) -> int | None:
    """[pins] chip: the GPIO chip (a number N of /dev/gpiochipN); None when not set."""
    table = _table(raw, "pins", p, required=False)
    _unknown(table, ("chip",), f"{p}pins.")
    chip = table.get("chip")
    if chip is not None and (isinstance(chip, bool) or not isinstance(chip, int) or not 0 <= chip <= CHIP_MAX):
        raise PinMapError(f"{p}pins.chip: {chip!r} (allowed: a GPIO chip number 0-{CHIP_MAX}, as in /dev/gpiochipN)")
    return chip


def reference_keypad() -> dict:
    """The reference build's [keypad] table (hardware/pins.toml), the defaults of any other."""
    try:
        table = tomlfile.read(DEFAULT_PATH).get("keypad", {})
    except tomlfile.TomlFileError:
        return {}
    return table if isinstance(table, dict) else {}


def parse_pinmap(raw: dict, source: str = "pin map", prefix: str = "", keypad_defaults: dict | None = None) -> PinMap:
    """Validate a pin-map table (as `tomllib` gives it). `prefix` is the table's own name in a
    bigger config (e.g. "pins."), so errors name the key as the user wrote it. `keypad_defaults`
    fills in what its [keypad] table leaves out (see the module docstring)."""
    p = prefix
    try:
        _unknown(raw, ("buttons", "displays", "buzzer", "leds", "keypad", "pins"), p)
        chip = _chip(raw, p)
        uses: list[tuple[str, int]] = []  # (use, BCM)
        devices: list[tuple[str, str]] = []  # (use, a device other than a pin, in words)
        shared: dict[str, str] = {}  # use -> the bus whose line it is, which other uses of that bus share

        buttons_raw = _table(raw, "buttons", p)
        _unknown(buttons_raw, BUTTONS, f"{p}buttons.")
        buttons = {}
        for name in BUTTONS:
            if name not in buttons_raw:
                raise PinMapError(f"{p}buttons.{name}: missing (needed: {', '.join(BUTTONS)})")
            buttons[name] = check_bcm(buttons_raw[name], f"{p}buttons.{name}")
            uses.append((f"{p}buttons.{name}", buttons[name]))

        displays_raw = _table(raw, "displays", p)
        _unknown(displays_raw, DISPLAYS, f"{p}displays.")
        displays = {}
        for name in DISPLAYS:
            where = f"{p}displays.{name}"
            if name not in displays_raw:
                raise PinMapError(f"{where}: missing (needed: {', '.join(DISPLAYS)}; use driver = \"none\" for no display)")
            spec = check_display_spec(displays_raw[name], where)
            displays[name] = spec
            for key, claimed, *bus in driver_of(spec).claims(spec):
                (uses if isinstance(claimed, int) else devices).append((f"{where}.{key}", claimed))
                if bus:  # a bus line: shared with other claims of the same bus (the SPI bus's SCLK)
                    shared[f"{where}.{key}"] = bus[0]

        buzzer_raw = _table(raw, "buzzer", p, required=False)
        _unknown(buzzer_raw, ("pin", "enabled"), f"{p}buzzer.")
        enabled = buzzer_raw.get("enabled", bool(buzzer_raw))
        if not isinstance(enabled, bool):
            raise PinMapError(f"{p}buzzer.enabled: {enabled!r} (allowed: true, false)")
        buzzer = None
        if enabled:
            if "pin" not in buzzer_raw:
                raise PinMapError(f"{p}buzzer.pin: missing (or set {p}buzzer.enabled = false)")
            buzzer = check_bcm(buzzer_raw["pin"], f"{p}buzzer.pin")
            uses.append((f"{p}buzzer.pin", buzzer))

        leds_raw = _table(raw, "leds", p, required=False)
        _unknown(leds_raw, (*LEDS, "enabled"), f"{p}leds.")
        leds_on = leds_raw.get("enabled", bool(leds_raw))
        if not isinstance(leds_on, bool):
            raise PinMapError(f"{p}leds.enabled: {leds_on!r} (allowed: true, false)")
        leds: dict[str, int] = {}
        if leds_on:
            for name in LEDS:
                if name not in leds_raw:
                    raise PinMapError(f"{p}leds.{name}: missing (needed: {', '.join(LEDS)}; or set {p}leds.enabled = false)")
                leds[name] = check_bcm(leds_raw[name], f"{p}leds.{name}")
                uses.append((f"{p}leds.{name}", leds[name]))

        keypad = _keypad(raw, keypad_defaults or {}, p)
        if keypad is not None and keypad.enabled:
            for name in KEYPAD_LINES:
                for i, bcm in enumerate(getattr(keypad, name)):
                    uses.append((f"{p}keypad.{name}[{i}]", bcm))

        seen: dict[int, str] = {}
        for use, bcm in uses:
            if bcm in seen and (shared.get(use) is None or shared.get(use) != shared.get(seen[bcm])):
                raise PinMapError(f"BCM {bcm} is used twice: {seen[bcm]} and {use}")
            seen.setdefault(bcm, use)
        claimed: dict[str, str] = {}
        for use, device in devices:
            if device in claimed:
                raise PinMapError(f"{device} is used twice: {claimed[device]} and {use}")
            claimed[device] = use
    except PinMapError as exc:
        raise PinMapError(f"{source}: {exc}") from None
    return PinMap(buttons=buttons, displays=displays, buzzer=buzzer, leds=leds, uses=tuple(uses), keypad=keypad, chip=chip)


def load_pinmap(path: str | Path | None = None) -> PinMap:
    """Load and validate a pin-map file (default: the reference build's `hardware/pins.toml`)."""
    path = Path(path) if path is not None else DEFAULT_PATH
    try:
        raw = tomlfile.read(path)
    except tomlfile.TomlFileError as exc:
        raise PinMapError(f"{path}: cannot read: {exc}" if exc.io else f"{path}: {exc}") from None
    return parse_pinmap(raw, source=str(path))
