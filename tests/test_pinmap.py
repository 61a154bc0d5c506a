"""Pin maps: the reference build's defaults, refusals that name the key, and the generated wiring
diagram and table that must match hardware/pins.toml."""

from __future__ import annotations

import copy
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rackside.hardware import wiring
from rackside.hardware.pinmap import DEFAULT_PATH, PinMapError, load_pinmap, parse_pinmap

REPO = Path(__file__).resolve().parents[1]
DEFAULT = tomllib.loads(DEFAULT_PATH.read_text())


def variant(**changes) -> dict:
    """The default map with dotted keys changed, e.g. variant(**{"buttons.left": 5})."""
    raw = copy.deepcopy(DEFAULT)
    for dotted, value in changes.items():
        *path, last = dotted.split(".")
        table = raw
        for key in path:
            table = table.setdefault(key, {})
        if value is None:
            table.pop(last, None)
        else:
            table[last] = value
    return raw


def test_reference_build_defaults():
    pm = load_pinmap()
    assert pm.buttons == {"left": 17, "right": 27, "neutralise": 22}
    assert pm.displays["left"] == {"driver": "tm1637", "clk": 5, "dio": 6, "brightness": 7, "half_period_us": 0, "dio_pull": "up", "refresh_s": 5.0}
    assert (pm.displays["right"]["clk"], pm.displays["right"]["dio"]) == (23, 24)
    assert pm.buzzer == 12
    bcms = [bcm for _, bcm in pm.uses]
    assert len(bcms) == len(set(bcms)) == 10  # 8, and the two turn LEDs (issue 10 item 6)
    assert pm.leds == {"left": 26, "right": 16}
    # Kept free: ID EEPROM, I2C, SPI0, UART, PCM.
    assert not set(bcms) & {0, 1, 2, 3, 7, 8, 9, 10, 11, 14, 15, 18, 19, 20, 21}


def test_pin_used_twice_names_both_uses():
    with pytest.raises(PinMapError, match=r"BCM 17 is used twice: buttons.left and displays.right.dio"):
        parse_pinmap(variant(**{"displays.right.dio": 17}))
    with pytest.raises(PinMapError, match=r"BCM 12 is used twice: buttons.neutralise and buzzer.pin"):
        parse_pinmap(variant(**{"buttons.neutralise": 12}))


@pytest.mark.parametrize("value", [0, 1, 28, 40, -3, "17", True, 17.0])
def test_pin_outside_the_header_gpio_range(value):
    with pytest.raises(PinMapError, match=r"buttons.right: .* is not a usable pin \(allowed: BCM GPIO numbers 2-27\)"):
        parse_pinmap(variant(**{"buttons.right": value}))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"lights": {}}, r"lights: unknown key \(allowed: buttons, displays, buzzer, leds, keypad, pins\)"),
        ({"pins.chip": -1}, r"pins.chip: -1 \(allowed: a GPIO chip number 0-63, as in /dev/gpiochipN\)"),
        ({"pins.chip": "gpiochip1"}, r"pins.chip: 'gpiochip1' \(allowed: a GPIO chip number 0-63"),
        ({"pins.chip": True}, r"pins.chip: True \(allowed"),
        ({"pins.line": 3}, r"pins.line: unknown key \(allowed: chip\)"),
        ({"displays.left.dio_pull": "down"}, r"displays.left.dio_pull: 'down' \(allowed: up, off\)"),
        ({"keypad.enabled": "yes"}, r"keypad.enabled: 'yes' \(allowed: true, false\)"),
        ({"keypad.rows": [4, 25, 13]}, r"keypad.rows: \[4, 25, 13\] \(allowed: a list of 4 BCM GPIO numbers\)"),
        ({"keypad.columns": None}, r"keypad.columns: missing \(allowed: a list of 3 BCM GPIO numbers\)"),
        ({"keypad.columns": [18, 20, 99]}, r"keypad.columns\[2\]: 99 is not a usable pin"),
        ({"keypad.lines": 7}, r"keypad.lines: unknown key \(allowed: enabled, rows, columns\)"),
        ({"keypad.enabled": True, "keypad.rows": [4, 25, 13, 17]}, r"BCM 17 is used twice: buttons.left and keypad.rows\[3\]"),
        ({"leds.middle": 4}, r"leds.middle: unknown key \(allowed: left, right, enabled\)"),
        ({"leds.right": None}, r"leds.right: missing \(needed: left, right; or set leds.enabled = false\)"),
        ({"leds.enabled": 1}, r"leds.enabled: 1 \(allowed: true, false\)"),
        ({"leds.left": 17}, r"BCM 17 is used twice: buttons.left and leds.left"),
        ({"buttons.centre": 16}, r"buttons.centre: unknown key \(allowed: left, right, neutralise\)"),
        ({"buttons.neutralise": None}, r"buttons.neutralise: missing \(needed: left, right, neutralise\)"),
        ({"displays.middle": {"driver": "none"}}, r"displays.middle: unknown key \(allowed: left, right\)"),
        ({"displays.right": None}, r"displays.right: missing .*driver = \"none\""),
        ({"displays.left.driver": "ht16k33"}, r"displays.left.driver: 'ht16k33' \(allowed: tm1637, serial, max7219, none\)"),
        ({"buzzer.volume": 3}, r"buzzer.volume: unknown key \(allowed: pin, enabled\)"),
        ({"buzzer.enabled": "yes"}, r"buzzer.enabled: 'yes' \(allowed: true, false\)"),
        ({"buzzer.pin": None, "buzzer.enabled": True}, r"buzzer.pin: missing"),
    ],
)
def test_bad_tables_name_the_key_and_allowed_values(changes, message):
    with pytest.raises(PinMapError, match=message):
        parse_pinmap(variant(**changes))


def test_the_gpio_chip_is_a_setting_and_absent_means_gpiozeros_choice():
    assert load_pinmap().chip is None
    assert parse_pinmap(variant(**{"pins.chip": 1})).chip == 1


def test_a_pins_table_alone_goes_with_the_reference_build(tmp_path):
    from rackside.firmware.config import load_config

    config = tmp_path / "clock.toml"
    config.write_text("[pins]\nchip = 1\n")
    pins = load_config(config).pins
    assert pins.chip == 1 and pins.buttons == load_pinmap().buttons


def test_error_names_the_source_and_prefix():
    with pytest.raises(PinMapError, match=r"^/etc/rackside/clock.toml: pins.buttons.left: 99 is not a usable pin"):
        parse_pinmap(variant(**{"buttons.left": 99}), source="/etc/rackside/clock.toml", prefix="pins.")


def test_the_keypad_is_optional_and_claims_its_pins_only_when_enabled():
    """Issue 27 item 1: the reference build lists the keypad's pins but does not fit it, so a clock
    works as before; enabled, its 7 pins are claimed like any other (and checked for double use)."""
    pm = load_pinmap()
    assert pm.keypad.enabled is False and (pm.keypad.rows, pm.keypad.columns) == ((4, 25, 13, 19), (18, 20, 21))
    assert not any(use.startswith("keypad") for use, _ in pm.uses)
    assert parse_pinmap(variant(**{"keypad.rows": [4, 25, 13, 17]})).keypad.enabled is False  # not claimed: no clash
    on = parse_pinmap(variant(**{"keypad.enabled": True}))
    assert [bcm for use, bcm in on.uses if use.startswith("keypad")] == [4, 25, 13, 19, 18, 20, 21]
    assert parse_pinmap(variant(**{"keypad": None})).keypad is None  # an older pin map: no keypad
    # A table that leaves out its lines gets the reference build's (a clock config's `[keypad] enabled = true`).
    only = parse_pinmap(variant(**{"keypad": {"enabled": True}}), keypad_defaults=DEFAULT["keypad"])
    assert only.keypad.enabled and only.keypad.rows == (4, 25, 13, 19)


def test_buzzer_is_optional():
    assert parse_pinmap(variant(**{"buzzer": None})).buzzer is None
    assert parse_pinmap(variant(**{"buzzer.enabled": False})).buzzer is None


def test_serial_display_on_the_pi_uart_claims_gpio_14_and_15():
    serial = {"driver": "serial", "url": "/dev/serial0", "baudrate": 9600}
    pm = parse_pinmap(variant(**{"displays.left": serial}))
    assert pm.use_of(14) == "displays.left.url (/dev/serial0 TXD)"
    with pytest.raises(PinMapError, match=r"BCM 15 is used twice: displays.left.url \(/dev/serial0 RXD\) and buzzer.pin"):
        parse_pinmap(variant(**{"displays.left": serial, "buzzer.pin": 15}))
    usb = {"driver": "serial", "url": "/dev/ttyUSB0"}
    assert parse_pinmap(variant(**{"displays.left": usb, "buzzer.pin": 15})).buzzer == 15
    with pytest.raises(PinMapError, match=r"serial port '/dev/ttyUSB0' is used twice"):
        parse_pinmap(variant(**{"displays.left": usb, "displays.right": usb}))


def test_load_refuses_bad_files(tmp_path):
    bad = tmp_path / "pins.toml"
    bad.write_text("[buttons]\nleft = \n")
    with pytest.raises(PinMapError, match=rf"^{bad}: not valid TOML"):
        load_pinmap(bad)
    with pytest.raises(PinMapError, match="cannot read"):
        load_pinmap(tmp_path / "missing.toml")


# --- the generated wiring diagram and table ---------------------------------------------------------
def test_committed_wiring_svg_is_generated_from_pins_toml():
    committed = (REPO / "docs" / "wiring.svg").read_text()
    assert committed == wiring.render_svg(load_pinmap()), "regenerate: python -m rackside.hardware.wiring > docs/wiring.svg"


def test_readme_wiring_table_is_generated_from_pins_toml():
    readme = (REPO / "hardware" / "README.md").read_text()
    start, end = "<!-- wiring-table:start -->\n", "<!-- wiring-table:end -->"
    table = readme[readme.index(start) + len(start): readme.index(end)]
    assert table.strip() == wiring.render_table(load_pinmap()).strip(), "regenerate: python -m rackside.hardware.wiring --table"


def test_svg_shows_every_pin_of_the_map():
    pm = load_pinmap()
    svg = wiring.render_svg(pm)
    root = ET.fromstring(svg)
    texts = {el.text for el in root.iter("{http://www.w3.org/2000/svg}text")}
    for use, bcm in pm.uses:
        assert f"GPIO{bcm}" in texts, use
    assert {"Buttons", "Left display", "Right display", "Buzzer (optional)", "Keypad 3×4 (optional)"} <= texts
    for bcm in (*pm.keypad.rows, *pm.keypad.columns):  # drawn though not fitted (issue 27 item 1)
        assert f"GPIO{bcm}" in texts


def test_table_rows_agree_with_the_header():
    table = wiring.render_table(load_pinmap())
    assert "| Buttons | left player | 11 (GPIO17) | 17 | internal pull-up |" in table
    assert "| Left display | CLK | 29 (GPIO5) | 5 |  |" in table
    assert "| Right display | DIO | 18 (GPIO24) | 24 | module's own pull-up |" in table
    assert "| Buzzer (optional) | NPN base via 1 kΩ | 32 (GPIO12) | 12 |  |" in table
    for pin, (name, bcm) in wiring.HEADER.items():  # the header table itself: 28 GPIOs, 40 pins
        assert 1 <= pin <= 40 and (bcm is None) == (name in ("GND", "3V3", "5V"))
    assert len(wiring.PHYSICAL) == 28


def test_other_maps_draw_too(tmp_path):
    raw = variant(**{
        "displays.left": {"driver": "serial", "url": "/dev/serial0"},
        "displays.right": {"driver": "serial", "url": "/dev/ttyUSB0"},
        "buttons.left": 4, "buttons.right": 26, "buttons.neutralise": 16, "buzzer": None, "leds": None,
    })
    pm = parse_pinmap(raw)
    root = ET.fromstring(wiring.render_svg(pm))
    texts = " ".join(el.text or "" for el in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "SparkFun Serial 7-Segment" in texts and "/dev/ttyUSB0" in texts and "GPIO14" in texts


def test_cli(tmp_path):
    svg = subprocess.run([sys.executable, "-m", "rackside.hardware.wiring"], capture_output=True, text=True, cwd=REPO)
    assert svg.returncode == 0 and svg.stdout.startswith("<svg")
    bad = tmp_path / "p.toml"
    bad.write_text("[buttons]\nleft = 1\n")
    result = subprocess.run([sys.executable, "-m", "rackside.hardware.wiring", "--pins", str(bad)], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 2 and "buttons.left: 1 is not a usable pin" in result.stderr


def test_a_fitted_keypad_is_drawn_and_tabled_and_a_clashing_unfitted_one_is_left_out():
    on = parse_pinmap(variant(**{"keypad.enabled": True}))
    root = ET.fromstring(wiring.render_svg(on))
    texts = {el.text for el in root.iter("{http://www.w3.org/2000/svg}text")}
    assert "Keypad 3×4" in texts and "→ keypad R1" in texts and "→ keypad C3" in texts
    assert "| Keypad 3×4 | C1: column 1 (1 4 7 *) | 12 (GPIO18) | 18 | internal pull-up |" in wiring.render_table(on)
    clash = parse_pinmap(variant(**{"keypad.rows": [4, 25, 13, 17]}))  # not fitted, one pin a button's
    assert "Keypad" not in wiring.render_table(clash)
