"""`driver = "none"`: a clock built without this display (it keeps only the latest text)."""

from __future__ import annotations

from rackside.hardware.display import Driver, NullDisplay

DRIVER = Driver(
    name="none",
    summary="no display fitted",
    keys={},
    open=lambda settings, *, name, **_: NullDisplay(name),
    order=90,
)
