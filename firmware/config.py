"""The table clock's configuration: a TOML file, checked whole before anything starts.

A bad value is refused with its key and the allowed values or range (`ConfigError`), and the program
exits non-zero; nothing half-configured ever runs. Times may be written "25:00" or as seconds.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rackside import tomlfile
from rackside.game.clock import Rules
from rackside.firmware.debounce import DEFAULT_SETTLE_NS
from rackside.firmware.gestures import DEFAULT_CHORD_NS, DEFAULT_HOLD_NS
from rackside.game.rules_table import (  # noqa: F401 (CLOCK_KEYS, rules_*: this module's names too)
    CLOCK_KEYS,
    ConfigError,
    check_keys,
    duration_s,
    int_in_range,
    mmss,
    rules_from_table,
    rules_to_table,
)
from rackside.tomlfile import TomlFileError

log = logging.getLogger(__name__)

DEFAULT_CONFIG = Path(__file__).resolve().with_name("clock.toml")  # resolved: a message names the checkout's file, not .venv/rackside-import's link
# The game time the director set in the menu (LEn), kept for the following games (issue 10). A
# state file in the clock's state directory, not a rewrite of clock.toml: the config may be
# read-only to the service (/etc/rackside, owned by root) or the defaults shipped in the package,
# and rewriting a director's commented TOML would lose the comments (tomllib only reads).
GAME_TIME_FILE = "game_time.toml"


# The firmware's own sections: key -> (low, high, default). The timing defaults are the pure
# modules' own (debounce, gestures), so there is one place for each.
INPUT_KEYS = {
    "settle_ms": (1, 100, DEFAULT_SETTLE_NS // 1_000_000),  # the line released this long before a press
    "long_press_ms": (1000, 10_000, DEFAULT_HOLD_NS // 1_000_000),  # centre held: end; both held: menu
    "chord_ms": (50, 2000, DEFAULT_CHORD_NS // 1_000_000),  # both player buttons within this: a chord
}
DISPLAY_KEYS = {
    "restored_s": (1, 120, 10),  # how long the displays say a game was restored after a power cut
}
SOUND_KEYS = {"buzzer": False}  # sound the buzzer at 0:00 and at forfeit (tournament halls are quiet)
PINMAP_SECTIONS = ("buttons", "displays", "buzzer", "leds", "keypad", "pins")  # the pin map, as in hardware/pins.toml
SECTIONS = ("clock", "input", "display", "sound", "hall", *PINMAP_SECTIONS, "outputs", "text_display")  # [hall]: rackside.hall.net.config


@dataclass(frozen=True)
class Firmware:
    """The [input], [display] and [sound] sections: how the firmware around the core behaves."""

    settle_ms: int = INPUT_KEYS["settle_ms"][2]
    long_press_ms: int = INPUT_KEYS["long_press_ms"][2]
    chord_ms: int = INPUT_KEYS["chord_ms"][2]
    restored_s: int = DISPLAY_KEYS["restored_s"][2]
    buzzer: bool = SOUND_KEYS["buzzer"]


def firmware_from_data(data: dict) -> Firmware:
    values: dict[str, Any] = {}
    for section, keys in (("input", INPUT_KEYS), ("display", DISPLAY_KEYS)):
        table = check_keys(section, data.get(section, {}), set(keys))
        for key, (low, high, default) in keys.items():
            values[key] = int_in_range(f"{section}.{key}", table.get(key, default), low, high)
    sound = check_keys("sound", data.get("sound", {}), set(SOUND_KEYS))
    buzzer = sound.get("buzzer", SOUND_KEYS["buzzer"])
    if not isinstance(buzzer, bool):
        raise ConfigError(f"sound.buzzer = {buzzer!r}: allowed are true and false")
    return Firmware(buzzer=buzzer, **values)


def pinmap_from_data(data: dict, source: str) -> Any:
    """The pin map: the config's own [buttons]/[displays]/[buzzer]/[leds] tables when it has any
    (all are then checked together, as in hardware/pins.toml), else the reference build's defaults.
    A [keypad] table alone is the reference build with a keypad (`[keypad] enabled = true`), its
    rows and columns the reference build's unless given; a [pins] table (its `chip`) likewise goes
    with the reference build's pins. A pin used twice is refused, naming both uses."""
    from rackside import tomlfile
    from rackside.hardware.pinmap import DEFAULT_PATH, PinMapError, load_pinmap, parse_pinmap, reference_keypad

    try:
        own = ("keypad", "pins")  # tables that go with the reference build's pins when alone
        if any(section in data for section in PINMAP_SECTIONS if section not in own):
            raw = {k: data[k] for k in PINMAP_SECTIONS if k in data}
        elif any(section in data for section in own):
            raw = {**tomlfile.read(DEFAULT_PATH), **{k: data[k] for k in own if k in data}}
        else:
            return load_pinmap()
        return parse_pinmap(raw, source=source, keypad_defaults=reference_keypad())
    except PinMapError as e:
        raise ConfigError(str(e)) from None


@dataclass(frozen=True)
class LoadedConfig:
    path: Path
    data: dict  # the whole parsed file, for the sections other modules own
    rules: Rules  # the config's rules, with the menu's saved game time when there is one
    firmware: Firmware = Firmware()
    pins: Any = None  # hardware.pinmap.PinMap
    config_game_time_ms: int | None = None  # the config file's own game time
    outputs: tuple = ()  # the [[outputs]] tables, each with a known name (firmware.outputs)
    text_display: dict | None = None  # [text_display], checked (hardware.textdisplay); None: none fitted (issue 40)


def save_game_time(state_dir: Path | str, game_time_ms: int, config_game_time_ms: int) -> None:
    """Keep the menu's game time for the following games: written atomically to GAME_TIME_FILE in
    `state_dir` (or removed when it is the config's own). It records the config's game time it
    replaces, so a director who later edits clock.toml gets what the file says. Raises OSError."""
    path = Path(state_dir) / GAME_TIME_FILE
    if game_time_ms == config_game_time_ms:
        path.unlink(missing_ok=True)
        return
    from rackside.atomic import write_atomic

    Path(state_dir).mkdir(parents=True, exist_ok=True)
    write_atomic(
        path,
        "# The game time set in the clock's director's menu (LEn), kept for the following games.\n"
        "# It is used while clock.toml's game time is still the one it replaces; delete this file\n"
        "# (or set the config's game time in the menu) to go back to the config.\n"
        f'[clock]\ngame_time = "{mmss(game_time_ms)}"\n\n[menu]\nreplaces = "{mmss(config_game_time_ms)}"\n',
    )


def _saved_game_time(state_dir: Path, config_game_time_ms: int) -> int | None:
    """The menu's saved game time, if any and still meant. A damaged file is ignored with one
    line (the config's game time is used): it is the clock's own state, and nothing stops a clock."""
    path = Path(state_dir) / GAME_TIME_FILE
    try:
        data = tomlfile.read(path)
        clock = check_keys("clock", data.get("clock"), {"game_time"})
        menu = check_keys("menu", data.get("menu"), {"replaces"})
        if set(data) != {"clock", "menu"} or "game_time" not in clock or "replaces" not in menu:
            raise ConfigError("needs [clock] game_time and [menu] replaces")
        low, high = CLOCK_KEYS["game_time"][1:3]
        game_time_s = duration_s("clock.game_time", clock["game_time"], low, high)
        replaces_s = duration_s("menu.replaces", menu["replaces"], low, high)
    except TomlFileError as e:
        if e.missing:
            return None
        log.warning("%s: ignored, using the config's game time (%s)", path, e)
        return None
    except ConfigError as e:
        log.warning("%s: ignored, using the config's game time (%s)", path, e)
        return None
    if replaces_s * 1000 != config_game_time_ms:
        log.info(
            "%s: the config's game time changed since the menu set %s; using the config's %s",
            path,
            mmss(game_time_s * 1000),
            mmss(config_game_time_ms),
        )
        return None
    return game_time_s * 1000


def load_config(path: Path | None = None, state_dir: Path | str | None = None) -> LoadedConfig:
    """Read and check a clock config file; `None` means the defaults shipped beside this module.
    Every section is checked before anything starts; the first problem raises ConfigError naming
    the file, the key and what is allowed. With `state_dir`, a game time the director set in the
    menu (`save_game_time`) replaces the config's."""
    path = Path(path) if path is not None else DEFAULT_CONFIG
    try:
        data = tomlfile.read(path)
    except TomlFileError as e:
        if e.missing:
            raise ConfigError(f"{path}: no such config file") from None
        raise ConfigError(f"{path}: cannot be read: {e}" if e.io else f"{path}: {e}") from None
    try:
        unknown = sorted(set(data) - set(SECTIONS))
        if unknown:
            raise ConfigError(f"unknown section [{unknown[0]}]: allowed sections are {', '.join(SECTIONS)}")
        rules = rules_from_table(data.get("clock"))
        firmware = firmware_from_data(data)
        outputs = outputs_from_data(data)
        text_display = text_display_from_data(data)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    pins = pinmap_from_data(data, str(path))
    if text_display is not None:  # the text display takes the I2C bus: no other part may use its pins
        from rackside.hardware.textdisplay import I2C_PINS

        for line, bcm in I2C_PINS.items():
            use = pins.use_of(bcm) if pins is not None else None
            if use is not None:
                raise ConfigError(f"{path}: BCM {bcm} is used twice: {use} and text_display ({line.upper()}, the I2C bus)")
    config_game_time_ms = rules.game_time_ms
    if state_dir is not None:
        saved = _saved_game_time(Path(state_dir), config_game_time_ms)
        if saved is not None:
            log.info("game time %s, as set in the director's menu (the config says %s)", mmss(saved), mmss(config_game_time_ms))
            rules = replace(rules, game_time_ms=saved)
    return LoadedConfig(
        path=path, data=data, rules=rules, firmware=firmware, pins=pins, config_game_time_ms=config_game_time_ms, outputs=outputs,
        text_display=text_display,
    )


def outputs_from_data(data: dict) -> tuple:
    """The [[outputs]] tables: each names an output the registry knows (`firmware.outputs`); its
    factory checks the rest when the clock is assembled."""
    if "outputs" not in data:
        return ()
    from rackside.firmware.outputs import OutputConfigError, check_entries

    try:
        return check_entries(data["outputs"])
    except OutputConfigError as e:
        raise ConfigError(str(e)) from None


def text_display_from_data(data: dict) -> dict | None:
    """The [text_display] table with its driver's defaults (hardware.textdisplay), or None."""
    from rackside.hardware.textdisplay import TextDisplayError, check_spec

    try:
        return check_spec(data.get("text_display"))
    except TextDisplayError as e:
        raise ConfigError(str(e)) from None
