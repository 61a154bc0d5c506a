"""`rackside clock`: the table clock firmware, on a Pi's pins or on the simulated board.

    rackside clock                       run on the GPIO pins of the pin map (a Pi)
    rackside clock --simulate            the same firmware on gpiozero's mock pins, in a window
                                         (or in the terminal when no display is available)
    rackside clock --simulate --terminal force the terminal
    rackside clock --simulate --headless no window or terminal: run until stopped, as on a Pi
    rackside clock replay FILE [--json]  audit a game from its journal
    rackside clock selftest [--simulate] the builder's walk through every button, segment, LED
                                         and the buzzer, a PASS/FAIL line per part (docs/clock.md)

The config is `--config FILE`, else `clock.toml` in the config directory (paths.config_dir())
when there is one, else the defaults shipped in firmware/clock.toml. A bad config exits 2 with one
line naming the key and what is allowed.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

EXIT_CONFIG = 2


def register(sub: Any) -> None:
    p = sub.add_parser(
        "clock",
        help="the table clock (use --simulate on a laptop)",
        description=__doc__.splitlines()[0],
        epilog="Simulator keys: Left Shift or z = left player, Right Shift or m = right player, "
        "Space = centre (neutralise), d = director's menu, e = end the game, q or Esc = quit. "
        "With a keypad ([keypad] enabled = true): 0-9, * and # (in the window also [ for * and ] for #).",
    )
    p.add_argument("--simulate", action="store_true", help="run on gpiozero's mock pins with a window or terminal")
    p.add_argument("--terminal", action="store_true", help="with --simulate: draw in this terminal, not a window")
    p.add_argument("--headless", action="store_true",
                   help="with --simulate: no window or terminal, run until stopped as on a Pi (the installer's readiness check)")
    p.add_argument("--config", type=Path, metavar="FILE", help="clock config (TOML)")
    p.add_argument("--state-dir", type=Path, metavar="DIR", help="where journals and checkpoints go")
    p.add_argument("--hall", metavar="URL", help="put this clock on a hall: mqtt://HOST[:PORT], mqtts://... or auto (overrides [hall] url and the join file's url)")
    p.add_argument("--hall-credentials", type=Path, metavar="FILE", help="this table's credentials file (overrides [hall] credentials)")
    p.add_argument("--hall-join", type=Path, metavar="FILE", help="join the hall with its join file: the director numbers this clock (docs/fleet.md)")
    p.add_argument("--fault", action="append", default=[], metavar="NAME",
                   help="with --simulate: report this health fault to the hall (undervoltage, hot, disk-full, unsynced, ...; docs/hall.md)")
    p.add_argument("--device-id", metavar="ID", help="with --hall-join: this device's id (default: the Pi's serial number, else /etc/machine-id)")
    p.set_defaults(func=run_clock)
    clock_sub = p.add_subparsers(dest="clock_command", metavar="SUBCOMMAND")
    r = clock_sub.add_parser("replay", help="audit a game from its journal", description="Audit a game from its journal.")
    add_replay_arguments(r)
    r.set_defaults(func=run_replay)
    t = clock_sub.add_parser(
        "selftest", help="walk through every button, display segment, turn LED and the buzzer (before an event)",
        description="The builder's self-test: press each button, confirm each display segment, turn LED and the "
        "buzzer with the left (yes) and right (no) buttons; a PASS/FAIL line per part.",
    )
    # SUPPRESS: given before `selftest` (`rackside clock --simulate selftest`) the clock's own options count too
    t.add_argument("--simulate", action="store_true", default=argparse.SUPPRESS,
                   help="on gpiozero's mock pins, drawn in this terminal (keys z, m, space)")
    t.add_argument("--config", type=Path, metavar="FILE", default=argparse.SUPPRESS, help="clock config (TOML) whose pin map to test")
    t.add_argument("--timeout", type=float, metavar="S", default=30.0, help="how long to wait for each press (default 30)")
    t.set_defaults(func=run_selftest)


def add_replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", type=Path, help="a clock journal (.jsonl)")
    parser.add_argument("--json", action="store_true", help="print the final state as one JSON object")


def run_replay(args: argparse.Namespace) -> int:
    # Imported here, not at start-up: every rackside command builds this parser, and the kiosk's
    # cold start should not pay for the clock's modules.
    from rackside.game import replay

    return replay.run(args)


def run_selftest(args: argparse.Namespace) -> int:
    from rackside.firmware import selftest  # here, as for replay: only this command pays for it

    return selftest.run(args, config_file=config_path(getattr(args, "config", None)), display_spec=display_spec, exit_config=EXIT_CONFIG)


def state_dir_is_default(args: argparse.Namespace) -> bool:
    """Whether this clock uses the state folder's own outbox (paths.outbox()): not when --state-dir
    or --device-id gave it a folder of its own (a second clock must not share the first's queue)."""
    return args.state_dir is None and not getattr(args, "device_id", None)


def config_path(arg: Path | None) -> Path | None:
    if arg is not None:
        return arg
    from rackside import paths

    candidate = paths.clock_config()
    return candidate if candidate.is_file() else None


def state_path(arg: Path | None, device_id: str | None = None) -> Path:
    """--state-dir, else the journals folder; with --device-id (several simulators on one machine,
    docs/fleet.md) a folder of that device's own inside it, so a second clock is not refused as
    "another clock is using" the first one's."""
    if arg is not None:
        return arg
    from rackside import paths

    if device_id:
        from rackside.firmware.config import ConfigError
        from rackside.hall.wire.join import check_device_id

        try:  # a folder name: no '/'; and not '.' or '..'
            if device_id.strip(".") == "":
                raise ValueError(f"device id {device_id!r}: not a folder of its own")
            check_device_id(device_id)
        except ValueError as e:
            raise ConfigError(f"--device-id: {e}") from None
        return paths.journals_dir() / device_id
    return paths.journals_dir()


SIMULATED_DISPLAY = {"driver": "recording"}  # the simulator draws what the displays were told


def display_spec(pins: Any, side: str, simulated: bool) -> dict:
    """A display's table: the pin map's, or with --simulate the recording driver's (a setting,
    like gpiozero's mock pin factory: the rest of the clock is the same)."""
    return dict(SIMULATED_DISPLAY if simulated else pins.displays[side])


class Clock:
    """One assembled table clock: config, board, displays, journal store and runner."""

    def __init__(self, args: argparse.Namespace, *, clock_ns=time.monotonic_ns, pin_factory: Any = None) -> None:
        from dataclasses import asdict

        from rackside.firmware.config import ConfigError, load_config
        from rackside.firmware.outputs import OutputConfigError, OutputContext, assemble
        from rackside.firmware.persist import GameStore
        from rackside.firmware.runner import Runner
        from rackside.hardware.board import Board
        from rackside.hardware.drivers import open_display
        from rackside.hardware.sdnotify import Notifier

        from rackside.firmware.config import save_game_time

        state_dir = state_path(args.state_dir, getattr(args, "device_id", None))
        # ConfigError: the caller exits 2. The state dir holds the menu's game time (issue 10).
        self.config = load_config(config_path(args.config), state_dir=state_dir)
        fw, pins = self.config.firmware, self.config.pins
        self.simulated = bool(args.simulate)
        if self.simulated and pin_factory is None:
            from gpiozero.pins.mock import MockFactory

            pin_factory = MockFactory()
        elif pin_factory is None:
            from rackside.hardware.board import gpio_factory

            pin_factory = gpio_factory(pins.chip)  # [pins] chip; None: gpiozero's default
        self.board = Board(
            pins.buttons,
            buzzer_pin=pins.buzzer if fw.buzzer else None,
            pin_factory=pin_factory,
            clock_ns=clock_ns,
            led_pins=pins.leds,
        )
        self.keypad = None  # the optional keypad ([keypad] enabled = true): its keys into the board's queue
        try:
            if pins.keypad is not None and pins.keypad.enabled:
                from rackside.hardware.keypad import Keypad

                self.keypad = Keypad(pins.keypad.rows, pins.keypad.columns, board=self.board, settle_ns=fw.settle_ms * 1_000_000)
            self.displays = [
                open_display(display_spec(pins, side, self.simulated), name=f"{side} display", pin_factory=self.board.factory, clock_ns=clock_ns)
                for side in ("left", "right")
            ]
            from rackside.hardware.textdisplay import open_text_display

            # the optional text display ([text_display], issue 40); the simulator's with --simulate
            self.text_display = open_text_display(self.config.text_display, simulated=self.simulated)
            hall = self._hall_settings(args)
            # "hall": whether this clock's games are played on a hall: one played stand-alone (a
            # practice game) is never published into a hall later (hall/device/recovery.py, issue 35)
            settings = {**asdict(fw), "simulated": self.simulated, "pins": dict(pins.buttons), "hall": hall is not None}
            self.store = GameStore(state_dir, self.config.rules, config=settings)
            config_game_time_ms = self.config.config_game_time_ms or self.config.rules.game_time_ms
            context = OutputContext(
                config=self.config, rules=self.config.rules, board=self.board, clock_ns=clock_ns,
                state_dir=state_dir, simulated=self.simulated, submit=self.board.events.put,
                displays=tuple(self.displays), store=self.store, hall=hall,
                keypad=self.keypad is not None, text_display=self.text_display,
            )
            try:  # every output, built by name in one place (firmware.outputs.assemble)
                self.outputs, journal, self.hall = assemble(self.config.outputs, context, buzzer=fw.buzzer)
            except OutputConfigError as exc:
                # a value from the command line (--hall) is the command's, not the config file's (issue 35)
                raise ConfigError(str(exc) if exc.option is not None else f"{self.config.path}: {exc}") from None
            self.runner = Runner(
                rules=self.config.rules,
                store=journal,
                events=self.board.events,
                clock_ns=clock_ns,
                notifier=Notifier(),
                outputs=self.outputs,
                settle_ns=fw.settle_ms * 1_000_000,
                hold_ns=fw.long_press_ms * 1_000_000,
                chord_ns=fw.chord_ms * 1_000_000,
                restored_banner_ns=fw.restored_s * 1_000_000_000,
                initially_down=self.board.initially_down(),
                on_new_game=lambda rules: save_game_time(state_dir, rules.game_time_ms, config_game_time_ms),
                keypad=self.keypad is not None,  # the check-in shows on the displays (issue 27)
                confirm_names=self.text_display is not None,  # each player confirms their name there (issue 40)
            )
        except BaseException:
            if self.keypad is not None:
                self.keypad.close()
            self.board.close()
            raise

    def _hall_settings(self, args: argparse.Namespace) -> dict | None:
        """What puts this clock on a hall: [hall] with --hall / --hall-credentials / --hall-join over
        it (the hall output's factory, hall.device.clock_factory, checks it); None when nothing does."""
        table = self.config.data.get("hall")
        url, creds = getattr(args, "hall", None), getattr(args, "hall_credentials", None)
        join = getattr(args, "hall_join", None)
        if creds is not None:
            join = None  # credentials given: this clock is that table
        elif join is None and isinstance(table, dict):
            from rackside.hall.net.config import JOIN, HallConfigError

            if table.get(JOIN):
                from rackside.firmware.config import ConfigError
                from rackside.hall.device import joinfile

                try:  # "auto": the config folder's join.toml, else the boot partition's
                    join = joinfile.resolve(table[JOIN], self.config.path.parent)
                except HallConfigError as e:
                    raise ConfigError(f"{self.config.path}: {e}") from None
        if table is None and url is None and creds is None and join is None:
            return None
        if creds is not None and (table is None or isinstance(table, dict)):
            table = {**(table or {}), "credentials": str(creds)}
        return {"section": table, "url": url, "base": self.config.path.parent, "default_outbox": state_dir_is_default(args),
                "join": join, "device": getattr(args, "device_id", None),
                "faults": tuple(getattr(args, "fault", None) or ()) if self.simulated else ()}

    def start(self) -> None:
        self.runner.start()  # restores the game, then starts the outputs (the hall's thread)
        if self.keypad is not None:
            self.keypad.start()

    def close(self) -> None:
        if getattr(self, "hall", None) is not None:
            self.hall.close()  # the runner closes its outputs when its loop ends; this covers a runner never run
        for display in getattr(self, "displays", []):
            try:
                display.close()
            except Exception as exc:  # noqa: BLE001 - release the rest anyway
                log.debug("closing display: %s", exc)
        if getattr(self, "text_display", None) is not None:
            self.text_display.close()
        if getattr(self, "keypad", None) is not None:
            self.keypad.close()
        self.board.close()
        self.store.close()


def run_clock(args: argparse.Namespace) -> int:
    from rackside.firmware.config import ConfigError
    from rackside.firmware.persist import StoreError

    from gpiozero.exc import GPIOZeroError

    if getattr(args, "fault", None) and not args.simulate:  # a real Pi reports its own health, never an invented one
        print("rackside clock: --fault is for the simulator: add --simulate", file=sys.stderr)
        return EXIT_CONFIG
    try:
        clock = Clock(args)
    except ConfigError as exc:
        print(f"rackside clock: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except GPIOZeroError as exc:  # e.g. no pin back-end on a laptop: one line, not a traceback
        print(f"rackside clock: cannot use the GPIO pins ({exc}); without them, run `rackside clock --simulate`", file=sys.stderr)
        return 1
    try:
        clock.start()
    except StoreError as exc:
        print(f"rackside clock: {exc}", file=sys.stderr)
        clock.close()
        return 1
    try:
        if args.simulate and not args.headless:
            return simulate(clock, terminal=args.terminal)
        return run_on_pins(clock)
    finally:
        clock.close()


def run_on_pins(clock: Clock) -> int:
    """The clock on a Pi: the runner's loop in this thread; SIGTERM (systemd stop) ends it cleanly."""
    previous = signal.signal(signal.SIGTERM, lambda *_: clock.runner.stop())
    try:
        clock.runner.run()  # closes itself (final checkpoint, STOPPING=1) however it ends
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


def display_available() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def simulate(clock: Clock, *, terminal: bool = False) -> int:
    """The runner on its own thread (as on a Pi, where it is the one consumer of the queue); the
    window or terminal in this one, pressing the mock pins and drawing what the displays were told."""
    from rackside.game.clock import Phase

    thread = threading.Thread(target=clock.runner.run, name="runner", daemon=True)
    thread.start()

    def ended() -> bool:  # the runner's clock is an immutable value: any thread may read it
        game = clock.runner.clock
        return game is not None and game.phase is Phase.ENDED

    try:
        ui = None
        if not terminal and display_available():
            try:
                from rackside.hardware.sim_window import SimWindow

                ui = SimWindow(clock.board, clock.displays, key_help=clock.runner.menu_help, keypad=clock.keypad, ended=ended,
                               text_display=clock.text_display)
            except Exception as exc:  # noqa: BLE001 - no usable window: fall back to the terminal
                log.warning("no simulator window (%s); drawing in the terminal", exc)
        if ui is None:
            from rackside.hardware.terminal import TerminalSim

            ui = TerminalSim(clock.board, clock.displays, key_help=clock.runner.menu_help, keypad=clock.keypad, ended=ended,
                             text_display=clock.text_display)
        ui.run(lambda: not thread.is_alive())
    except KeyboardInterrupt:
        pass
    finally:
        clock.runner.stop()
        thread.join(timeout=5)
    return 0
