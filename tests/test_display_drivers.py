"""The display-driver registry (`hardware.drivers`): a driver is found by name, declares its keys,
pins and wiring, and a new one is one file: added here by the test alone, with no change to the
registry, the pin map, the wiring diagram or the clock. `--simulate` only chooses the recording
driver. No import cycle in the hardware layer, function-level imports included."""

from __future__ import annotations

import argparse
import ast
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rackside.hardware import drivers, wiring
from rackside.hardware.bcm import PinMapError, check_bcm
from rackside.hardware.display import Driver, Key, RecordingDisplay, REQUIRED, whole
from rackside.hardware.drivers import check_display_spec, open_display
from rackside.hardware.pinmap import parse_pinmap

REPO = Path(__file__).resolve().parent.parent


class MatrixDisplay(RecordingDisplay):
    """A pretend MAX7219 8x32 LED matrix: records, like the simulator's display."""

    def __init__(self, name: str, *, din: int, cs: int, clk: int, intensity: int) -> None:
        super().__init__(name)
        self.pins = (din, cs, clk)
        self.intensity = intensity


MATRIX = Driver(
    name="matrix",  # not "max7219": a real driver has that name (drivers/max7219.py), which this would shadow
    summary="MAX7219 LED matrix on SPI",
    keys={"din": Key(REQUIRED, check_bcm), "cs": Key(REQUIRED, check_bcm), "clk": Key(REQUIRED, check_bcm), "intensity": Key(8, whole(0, 15))},
    open=lambda s, *, name, **_: MatrixDisplay(name, **s),
    claims=lambda s: [("din", s["din"]), ("cs", s["cs"]), ("clk", s["clk"])],
    wiring=lambda s, title: ("MAX7219 LED matrix", [
        ("DIN", s["din"], "signal", ""), ("CS", s["cs"], "signal", ""), ("CLK", s["clk"], "signal", ""),
        ("VCC", None, "5V", ""), ("GND", None, "GND", ""),
    ]),
)


def pin_map(left: dict, right: dict | None = None) -> dict:
    return {
        "buttons": {"left": 17, "right": 27, "neutralise": 22},
        "displays": {"left": left, "right": right or {"driver": "tm1637", "clk": 23, "dio": 24}},
    }


@pytest.fixture
def matrix():
    drivers.register(MATRIX)
    yield MATRIX
    drivers.unregister("matrix")


def test_a_registered_driver_is_used_everywhere_by_name(matrix):
    pm = parse_pinmap(pin_map({"driver": "matrix", "din": 10, "cs": 8, "clk": 11}))
    assert pm.displays["left"] == {"driver": "matrix", "din": 10, "cs": 8, "clk": 11, "intensity": 8}
    assert pm.use_of(8) == "displays.left.cs"  # its pins are claimed like any other
    with pytest.raises(PinMapError, match=r"BCM 17 is used twice: buttons.left and displays.left.clk"):
        parse_pinmap(pin_map({"driver": "matrix", "din": 10, "cs": 8, "clk": 17}))
    with pytest.raises(PinMapError, match=r"displays.left.intensity: 16 \(allowed: a whole number 0-15\)"):
        parse_pinmap(pin_map({"driver": "matrix", "din": 10, "cs": 8, "clk": 11, "intensity": 16}))
    with pytest.raises(PinMapError, match=r"displays.left.cs: missing \(driver 'matrix' needs din, cs, clk\)"):
        parse_pinmap(pin_map({"driver": "matrix", "din": 10, "clk": 11}))
    display = open_display(pm.displays["left"], name="left display")
    display.show("1:00")
    assert isinstance(display, MatrixDisplay) and display.pins == (10, 8, 11) and display.text == "1:00"
    svg = ET.fromstring(wiring.render_svg(pm))
    texts = " ".join(el.text or "" for el in svg.iter("{http://www.w3.org/2000/svg}text"))
    assert "MAX7219 LED matrix" in texts and "GPIO8" in texts
    assert "| Left display | CS | 24 (GPIO8) | 8 |  |" in wiring.render_table(pm)
    with pytest.raises(PinMapError, match=r"\(allowed: tm1637, serial, max7219, matrix, none\) or, simulated, recording"):
        check_display_spec({"driver": "ht16k33"})


def test_a_new_driver_is_one_file_dropped_into_the_drivers_folder(tmp_path, monkeypatch):
    folder = tmp_path / "drivers"
    folder.mkdir()
    (folder / "blinkt.py").write_text(textwrap.dedent('''
        """driver = "blinkt": a pretend LED bar that only remembers the text."""
        from rackside.hardware.display import Driver, Key, RecordingDisplay, whole

        DRIVER = Driver(
            name="blinkt", summary="an LED bar", keys={"level": Key(3, whole(0, 9))},
            open=lambda s, *, name, **_: RecordingDisplay(name),
        )
    '''))
    monkeypatch.setattr(drivers, "__path__", [*drivers.__path__, str(folder)])
    monkeypatch.setattr(drivers.REGISTRY, "_found", {})
    monkeypatch.delitem(sys.modules, "rackside.hardware.drivers.blinkt", raising=False)
    pm = parse_pinmap(pin_map({"driver": "blinkt", "level": 4}))
    assert pm.displays["left"] == {"driver": "blinkt", "level": 4}
    assert isinstance(open_display(pm.displays["left"]), RecordingDisplay)
    assert "Left display: none fitted." in wiring.render_table(pm)


def test_a_driver_from_another_package_is_found_by_its_entry_point(tmp_path, monkeypatch):
    (tmp_path / "segled.py").write_text(textwrap.dedent('''
        from rackside.hardware.display import Driver, NullDisplay
        DRIVER = Driver(name="segled", summary="another package's display", keys={},
                        open=lambda s, *, name, **_: NullDisplay(name))
    '''))
    info = tmp_path / "segled-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: segled\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[rackside.displays]\nsegled = segled:DRIVER\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(drivers.REGISTRY, "_found", {})
    assert drivers.find("segled") is not None
    assert open_display({"driver": "segled"}).__class__.__name__ == "NullDisplay"


def test_the_built_in_drivers_declare_themselves():
    names = [d.name for d in drivers.available()]
    assert names[:4] == ["tm1637", "serial", "max7219", "none"] and names[-1] == "recording"
    assert drivers.find("recording").simulated and not drivers.find("tm1637").simulated
    assert set(drivers.find("tm1637").keys) == {"clk", "dio", "brightness", "half_period_us", "dio_pull", "refresh_s"}
    assert drivers.find("nosuch") is None and drivers.find(None) is None
    assert isinstance(open_display({"driver": "recording"}, name="left"), RecordingDisplay)
    with pytest.raises(PinMapError, match=r"display.x: unknown key for driver 'recording' \(allowed: driver\)"):
        open_display({"driver": "recording", "x": 1})


def clock_args(tmp_path, toml: str, simulate: bool) -> argparse.Namespace:
    config = tmp_path / "clock.toml"
    config.write_text(toml)
    return argparse.Namespace(simulate=simulate, terminal=True, config=config, state_dir=tmp_path / "state")


def test_simulate_only_chooses_the_recording_driver(tmp_path):
    from gpiozero.pins.mock import MockFactory

    from rackside.firmware.cli import Clock

    clock = Clock(clock_args(tmp_path, "", simulate=True), pin_factory=MockFactory())
    try:
        assert [type(d) for d in clock.displays] == [RecordingDisplay, RecordingDisplay]
        assert [d.name for d in clock.displays] == ["left display", "right display"]
    finally:
        clock.close()
    # the same displays without --simulate, from a setting: real (mock) pins, recording displays
    toml = (REPO / "hardware" / "pins.toml").read_text().replace('driver = "tm1637"\nclk = 5\ndio = 6', 'driver = "recording"')
    clock = Clock(clock_args(tmp_path, toml, simulate=False), pin_factory=MockFactory())
    try:
        assert type(clock.displays[0]) is RecordingDisplay and type(clock.displays[1]).__name__ == "TM1637Display"
    finally:
        clock.close()


def test_the_pins_chip_setting_chooses_the_clocks_pin_factory(tmp_path, monkeypatch):
    """`[pins] chip` reaches gpiozero's lgpio factory (hardware.board.gpio_factory; lgpio itself is
    only on a Pi or in tools/arm64-gpio's VM, so the factory is swapped for a MockFactory here)."""
    from gpiozero.pins.mock import MockFactory

    from rackside.firmware.cli import Clock
    from rackside.hardware import board

    asked = []
    monkeypatch.setattr(board, "gpio_factory", lambda chip: asked.append(chip) or MockFactory())
    toml = (REPO / "hardware" / "pins.toml").read_text().replace('driver = "tm1637"\nclk = 5\ndio = 6', 'driver = "recording"').replace('driver = "tm1637"\nclk = 23\ndio = 24', 'driver = "recording"') + "\n[pins]\nchip = 1\n"
    clock = Clock(clock_args(tmp_path, toml, simulate=False))
    try:
        assert asked == [1] and type(clock.board.factory) is MockFactory
    finally:
        clock.close()


def imports_of(path: Path, package: str) -> set[str]:
    """Every rackside module `path` imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("rackside.")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rackside"):
            for a in node.names:  # `from rackside.hardware import sevenseg` imports a module
                sub = f"{node.module}.{a.name}"
                found.add(sub if module_path(sub) is not None else node.module)
    return found


def module_path(name: str) -> Path | None:
    rel = Path(*name.split(".")[1:])
    for candidate in (REPO / rel.with_suffix(".py"), REPO / rel / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def test_the_hardware_layer_has_no_import_cycle():
    modules = {}
    for path in sorted((REPO / "hardware").rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        modules["rackside." + ".".join(parts)] = path
    graph = {m: {i for i in imports_of(p, m) if i in modules and i != m} for m, p in modules.items()}
    cycles = []

    def visit(node, stack):
        for nxt in graph[node]:
            if nxt in stack:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in done:
                visit(nxt, stack + [nxt])
        done.add(node)

    done: set[str] = set()
    for m in graph:
        if m not in done:
            visit(m, [m])
    assert cycles == []
    assert "rackside.hardware.pinmap" not in graph["rackside.hardware.display"]
    assert graph["rackside.hardware.drivers.tm1637"] >= {"rackside.hardware.display"}
