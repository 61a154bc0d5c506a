"""`rackside.registry`: the one helper both plug-in registries (the clock's outputs, the display
drivers) find things with. Their own tests (test_clock_outputs.py, test_display_drivers.py) add a
plug-in each way through them; this holds the lookup order and the check on what is found."""

from __future__ import annotations

from rackside.registry import Registry

BUILTIN = {"tau": "math:tau", "pi": "math:pi", "nothing": "math:no_such_name"}


def floats() -> Registry:
    return Registry("rackside.tests-none", lambda: BUILTIN, lambda thing: isinstance(thing, float))


def test_a_built_in_name_is_imported_when_asked_for_and_registered_ones_come_first():
    r = floats()
    assert r.find("pi") == 3.141592653589793
    r.register("pi", 3.0)
    assert r.find("pi") == 3.0  # even after the built-in was found once
    r.unregister("pi")
    assert r.find("pi") == 3.141592653589793
    assert r.names() == ["nothing", "pi", "tau"]


def test_what_is_not_found_or_not_accepted_is_none():
    r = floats()
    r.register("text", "not checked: registered things are the registrant's business")
    assert r.find("nothing") is None and r.find("nosuch") is None
    assert r.find("") is None and r.find(None) is None and r.find(3) is None
    rejecting = Registry("rackside.tests-none", lambda: BUILTIN, lambda thing: False)
    assert rejecting.find("tau") is None
