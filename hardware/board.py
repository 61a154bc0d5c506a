"""The clock's buttons and buzzer on gpiozero: every edge, timestamped, into one queue.

The buttons are gpiozero input devices (a `Button` without its hold thread, see
`edge_button_class`) on the pin map's BCM pins, wired to ground against the Pi's pull-ups
(`pull_up=True`), created with `bounce_time=None`: debouncing is ours (`firmware.debounce`),
done from edge timestamps, because gpiozero's bounce_time drops the edges we need to date a press.

On a Pi the pin back-end calls us on its own threads. The callback does the least it can: date the
edge and put an `Edge(t_ns, button, down)` (`game.messages`) on ONE `queue.SimpleQueue`, which
the runner's single thread consumes. Commands from a simulator's keyboard go into the same queue as
`Command(t_ns, name)`, so the runner never needs a lock.

Dating an edge: gpiozero reports each pin change with the back-end's `ticks` (lgpio: the kernel's
CLOCK_MONOTONIC timestamp of the GPIO event; MockFactory: `time.monotonic()` when the pin was
driven). We convert it with the factory's public API, as the age of the edge subtracted from now:
``edge_ns = now_ns - round(factory.ticks_diff(factory.ticks(), ticks) * 1e9)``, so the time charged
does not include however long the back-end thread took to call us.

No gpiozero import happens at module import time.
"""

from __future__ import annotations

import logging
import queue
import time
from typing import Any, Callable

from rackside.game.messages import BUTTONS, Command, Edge
from rackside.outage import Outage

log = logging.getLogger(__name__)

MAX_EDGE_AGE_NS = 5_000_000_000  # an older "edge" is nonsense from the back-end: date it now

_edge_button_class = None


def edge_button_class():
    """A gpiozero input device for a button that also reports every pin change with its ticks.

    Why `DigitalInputDevice` and not `Button`: a `Button` is a `DigitalInputDevice` plus
    `HoldMixin`, whose thread wakes every 100 ms per button, forever, to time `when_held`; we time
    long presses from the edges ourselves (`firmware.gestures`), so that would be 30 wake-ups a
    second of an idle clock for nothing. Button's names (`is_pressed`, `when_pressed`, ...) are
    kept as aliases, as gpiozero's `Button` defines them.

    Why a subclass overriding `_fire_events`: gpiozero's `when_pressed` callbacks carry no
    timestamp, and `pin.when_changed` (which does) already belongs to the device itself
    (`DigitalInputDevice._pin_changed`); replacing or chaining it would break the device's own
    state and events. `EventsMixin._fire_events(ticks, new_active)` is gpiozero's documented hook
    for descendants ("should be called by descendents whenever the is_active property is likely to
    have changed ... *ticks* must be set to the time when the change occurred"), it receives the
    back-end's ticks for every change, and it is the same in gpiozero 1.6 and 2.0. We see the
    change first, then let gpiozero handle it as usual.
    """
    global _edge_button_class
    if _edge_button_class is None:
        from gpiozero import DigitalInputDevice

        class EdgeButton(DigitalInputDevice):
            def __init__(self, pin: Any, *, on_edge: Callable[[float, bool], None], **kwargs: Any) -> None:
                self._on_edge = None  # the initial state report during __init__ is not an edge
                super().__init__(pin, **kwargs)
                self._on_edge = on_edge

            def _fire_events(self, ticks, new_active):  # noqa: ANN001 - gpiozero's signature
                on_edge = self._on_edge
                if on_edge is not None:
                    on_edge(ticks, bool(new_active))
                super()._fire_events(ticks, new_active)

            # gpiozero's Button names for the same things
            is_pressed = DigitalInputDevice.is_active
            when_pressed = DigitalInputDevice.when_activated
            when_released = DigitalInputDevice.when_deactivated
            wait_for_press = DigitalInputDevice.wait_for_active
            wait_for_release = DigitalInputDevice.wait_for_inactive

        _edge_button_class = EdgeButton
    return _edge_button_class


def gpio_factory(chip: int | None) -> Any:
    """The pin factory for the pin map's `[pins] chip`: None (gpiozero's default, which honours
    GPIOZERO_PIN_FACTORY) when no chip is set, else gpiozero's lgpio back-end on /dev/gpiochip`chip`.

    Why a subclass: gpiozero 2.0.1's `LGPIOFactory(chip=)` ignores its argument (it opens chip 4 on
    a Pi 5 whose revision says so, else chip 0). A real Pi never needs the setting (its header's
    lines are gpiochip0, or gpiochip4 on a Pi 5 with an older kernel, which gpiozero chooses itself);
    a board whose header is another chip (the arm64 VM's gpio-sim chip is gpiochip1, after QEMU's
    PL061; tools/arm64-gpio) does. Only the configured chip is opened."""
    if chip is None:
        return None
    import lgpio
    from gpiozero.pins.lgpio import LGPIOFactory, LGPIOPin
    from gpiozero.pins.local import LocalPiFactory

    class ChipLGPIOFactory(LGPIOFactory):
        def __init__(self, chip: int) -> None:
            # LGPIOFactory.__init__ (gpiozero 2.0.1) on `chip` instead of its own choice: it would
            # open that chip first, which the clock's user may not be allowed to (the VM's gpiochip0).
            LocalPiFactory.__init__(self)
            self._handle = lgpio.gpiochip_open(chip)
            self._chip = chip
            self.pin_class = LGPIOPin

    return ChipLGPIOFactory(chip)


class Board:
    """The three buttons (and the optional buzzer and turn LEDs) of one table clock.

    `pins` maps "left", "right", "neutralise" to BCM numbers; `buzzer_pin` is a BCM number or None;
    `led_pins` maps "left", "right" to the turn LEDs' BCM numbers (empty: none fitted).
    `pin_factory` None means gpiozero's default (GPIOZERO_PIN_FACTORY, e.g. "mock" or "lgpio").
    Whoever draws the board (the simulator) can `watch(callback)`: the callback is called, on the
    runner's thread, after an LED or the buzzer was switched.
    """

    def __init__(
        self,
        pins: dict[str, int],
        *,
        buzzer_pin: int | None = None,
        pin_factory: Any = None,
        clock_ns: Callable[[], int] = time.monotonic_ns,
        events: "queue.SimpleQueue | None" = None,
        led_pins: dict[str, int] | None = None,
    ) -> None:
        EdgeButton = edge_button_class()
        self.events: queue.SimpleQueue = events if events is not None else queue.SimpleQueue()
        self._clock_ns = clock_ns
        self._warned = False
        self.buttons: dict[str, Any] = {}
        self.buzzer = None
        self.leds: dict[str, Any] = {}
        self.watchers: list[Callable[[], None]] = []
        # One outage per LED: retried at every change, logged once per outage (a working LED beside
        # a dead one must not end the dead one's outage).
        self._led_outages: dict[str, Outage] = {}
        self.factory = pin_factory
        try:
            for name in BUTTONS:
                self.buttons[name] = EdgeButton(
                    pins[name],
                    pull_up=True,
                    bounce_time=None,
                    pin_factory=pin_factory,
                    on_edge=self._edge_callback(name),
                )
                self.factory = self.buttons[name].pin_factory
            if buzzer_pin is not None:
                from gpiozero import Buzzer

                self.buzzer = Buzzer(buzzer_pin, pin_factory=self.factory)
            if led_pins:
                from gpiozero import LED

                for side, bcm in led_pins.items():
                    self.leds[side] = LED(bcm, pin_factory=self.factory)
        except Exception:
            self.close()
            raise

    def _edge_callback(self, name: str) -> Callable[[float, bool], None]:
        put = self.events.put

        def on_edge(ticks: float, down: bool) -> None:
            put(Edge(self.edge_ns(ticks), name, down))

        return on_edge

    def edge_ns(self, ticks: float) -> int:
        """The monotonic time (ns, on `clock_ns`) of an edge the back-end dated `ticks`."""
        now = self._clock_ns()
        f = self.factory
        age_ns = round(f.ticks_diff(f.ticks(), ticks) * 1e9)
        if 0 <= age_ns <= MAX_EDGE_AGE_NS:
            return now - age_ns
        if not self._warned:  # once: a back-end with broken ticks would otherwise flood the log
            self._warned = True
            log.warning("pin back-end reported an edge %.3f s old; dating edges on arrival instead", age_ns / 1e9)
        return now

    def clock_ns(self) -> int:
        """Now, on the clock the board dates its edges with (the keypad's scanner uses it too)."""
        return self._clock_ns()

    def initially_down(self) -> dict[str, bool]:
        """Which buttons are held right now (a button held at start-up is not a press)."""
        return {name: bool(b.is_active) for name, b in self.buttons.items()}

    def command(self, name: str) -> None:
        """Queue a command (e.g. "menu", "end", "stop") for the runner, dated now."""
        self.events.put(Command(self._clock_ns(), name))

    # --- the simulated board: press the mock pins ----------------------------------------------

    def drive(self, name: str, down: bool) -> None:
        """Close (`down`) or open a button's contact. Only on gpiozero's MockFactory pins."""
        pin = self.buttons[name].pin
        if down:
            pin.drive_low()
        else:
            pin.drive_high()

    def is_down(self, name: str) -> bool:
        return bool(self.buttons[name].is_active)

    # --- buzzer --------------------------------------------------------------------------------

    def beep(self, kind: str) -> None:
        """"zero": two short beeps (a player's time reached 0:00); "forfeit": one long beep."""
        if self.buzzer is None:
            return
        try:
            if kind == "forfeit":
                self.buzzer.beep(on_time=1.5, off_time=0.1, n=1, background=True)
            else:
                self.buzzer.beep(on_time=0.15, off_time=0.15, n=2, background=True)
        except Exception as exc:  # noqa: BLE001 - a dead buzzer never stops the clock
            log.warning("buzzer: %s", exc)
            return
        self._changed()

    @property
    def buzzing(self) -> bool:
        return self.buzzer is not None and bool(self.buzzer.is_active)

    # --- turn LEDs -----------------------------------------------------------------------------

    def set_led(self, side: str, on: bool) -> None:
        """Light (or put out) the turn LED beside `side`'s button; nothing if none is fitted."""
        led = self.leds.get(side)
        if led is None:
            return
        outage = self._led_outages.get(side) or self._led_outages.setdefault(side, Outage(log, f"turn LED {side}"))
        try:
            led.value = bool(on)
        except Exception as exc:  # noqa: BLE001 - a dead LED never stops the clock
            outage.failed(exc)
            return
        outage.recovered()
        self._changed()

    def led_lit(self, side: str) -> bool:
        led = self.leds.get(side)
        try:
            return led is not None and bool(led.is_lit)
        except Exception:  # noqa: BLE001 - a closed board: drawn unlit
            return False

    def watch(self, callback: Callable[[], None]) -> None:
        """Call `callback()` after every LED or buzzer change (it must not block)."""
        self.watchers.append(callback)

    def _changed(self) -> None:
        for callback in self.watchers:
            callback()

    def close(self) -> None:
        for device in [*self.buttons.values(), self.buzzer, *self.leds.values()]:
            if device is not None:
                try:
                    device.close()
                except Exception as exc:  # noqa: BLE001 - closing must release the rest
                    log.debug("closing %r: %s", device, exc)
