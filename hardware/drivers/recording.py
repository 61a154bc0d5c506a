"""`driver = "recording"`: a display that remembers everything it was told and lights nothing.

The simulator's displays: `rackside clock --simulate` chooses this driver for both sides (and
gpiozero's mock pins), and the window or terminal draws what the displays were told. A config may
choose it too, e.g. a clock on real buttons whose displays are watched only through the hall.
"""

from __future__ import annotations

from rackside.hardware.display import Driver, RecordingDisplay

DRIVER = Driver(
    name="recording",
    summary="the simulator's display: remembers what it is told",
    keys={},
    open=lambda settings, *, name, **_: RecordingDisplay(name),
    wiring=lambda settings, title: f"{title}: simulated (recording), nothing to wire.",
    simulated=True,
    order=95,
)
