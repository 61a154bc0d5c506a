"""Display drivers, found by name, as gpiozero finds its pin factories.

A display table in a pin map names its driver (``[displays.left] driver = "tm1637"``). The driver
of that name is found (`rackside.registry`, as the clock's outputs are), in order:

1. among drivers `register()`'d in this process (a test, a plug-in that registers itself);
2. as this package's module of that name (`hardware/drivers/tm1637.py`, `serial.py`, `none.py`,
   `recording.py`), whose `DRIVER` is a `hardware.display.Driver`;
3. in the `rackside.displays` entry-point group, which a separately installed package declares.

So a new driver is one file: its display class and its `DRIVER` declaration (its config keys with
their defaults and checks, the pins and ports it claims, its part of the wiring diagram, its
factory). Nothing that uses drivers (this registry, the pin map, the wiring diagram, the clock)
names one. Importing a driver module imports no hardware library; opening a display does.
"""

from __future__ import annotations

import pkgutil
import time
from typing import Any, Callable

from rackside.hardware.bcm import PinMapError
from rackside.hardware.display import REQUIRED, Display, Driver
from rackside.registry import Registry

ENTRY_POINT_GROUP = "rackside.displays"


def _modules() -> dict[str, str]:
    """This package's driver modules, by name: read from `__path__` each time, so a module dropped
    into the folder (or a folder added to `__path__`) is found."""
    return {m.name: f"{__name__}.{m.name}:DRIVER" for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}


REGISTRY = Registry(ENTRY_POINT_GROUP, _modules, lambda driver: isinstance(driver, Driver))


def register(driver: Driver) -> None:
    """Make `driver` available by its name (replaces a driver of that name)."""
    REGISTRY.register(driver.name, driver)


def unregister(name: str) -> None:
    REGISTRY.unregister(name)


def find(name: Any) -> Driver | None:
    """The driver called `name`, or None."""
    return REGISTRY.find(name)


def available() -> list[Driver]:
    """Every driver that can be named, hardware first, in each driver's `order`."""
    found = [d for d in map(find, REGISTRY.names()) if d is not None]
    return sorted(found, key=lambda d: (d.simulated, d.order, d.name))


def _allowed() -> str:
    drivers = available()
    real = ", ".join(d.name for d in drivers if not d.simulated)
    simulated = ", ".join(d.name for d in drivers if d.simulated)
    return f"(allowed: {real})" + (f" or, simulated, {simulated}" if simulated else "")


def check_display_spec(spec: Any, where: str = "display") -> dict[str, Any]:
    """Validate a display table and return it complete with defaults (`driver` first).

    Raises PinMapError (a ValueError) naming the key (`where.key`) and the allowed values.
    """
    if not isinstance(spec, dict):
        raise PinMapError(f"{where}: must be a table such as {{driver = \"tm1637\", clk = 23, dio = 24}}")
    name = spec.get("driver")
    driver = find(name)
    if driver is None:
        got = "missing" if name is None else repr(name)
        raise PinMapError(f"{where}.driver: {got} {_allowed()}")
    for key in spec:
        if key != "driver" and key not in driver.keys:
            raise PinMapError(
                f"{where}.{key}: unknown key for driver {driver.name!r} (allowed: {', '.join(['driver', *driver.keys])})"
            )
    out: dict[str, Any] = {"driver": driver.name}
    for key, k in driver.keys.items():
        if key in spec:
            out[key] = k.check(spec[key], f"{where}.{key}")
        elif k.default is REQUIRED:
            needed = ", ".join(n for n, kk in driver.keys.items() if kk.default is REQUIRED)
            raise PinMapError(f"{where}.{key}: missing (driver {driver.name!r} needs {needed})")
        else:
            out[key] = k.default
    if driver.check is not None:
        driver.check(out, where)
    return out


def driver_of(spec: dict) -> Driver:
    """The driver of a display table already checked by `check_display_spec`."""
    driver = find(spec["driver"])
    if driver is None:
        raise PinMapError(f"display driver {spec['driver']!r} is no longer available")
    return driver


def open_display(
    spec: dict, *, name: str = "display", pin_factory: Any = None, clock_ns: Callable[[], int] = time.monotonic_ns
) -> Display:
    """Build the display a config table describes, e.g. ``{driver = "tm1637", clk = 23, dio = 24}``,
    ``{driver = "serial", url = "/dev/ttyUSB0", baudrate = 9600}``, ``{driver = "none"}`` or
    ``{driver = "recording"}``.

    A bad table raises ValueError naming the key and the allowed values. A device that is absent or
    unplugged does not: the driver logs it and keeps retrying (see `hardware.display.DeviceDisplay`).
    `pin_factory` is gpiozero's (None: gpiozero's default, which honours GPIOZERO_PIN_FACTORY).
    """
    settings = check_display_spec(spec, name)
    driver = driver_of(settings)
    del settings["driver"]
    return driver.open(settings, name=name, pin_factory=pin_factory, clock_ns=clock_ns)
