"""The touchscreen challenge station: pygame in, kiosk.flow in the middle, engine and printer out.

`KioskApp` is the pygame shell: it translates real pygame events (keys, fingers, mouse) into
kiosk.flow events stamped with an injected monotonic clock, hands the effects the flow asks for
(adjudicate, log, print, director's choices) to kiosk.effects, and redraws only when what is shown
changed. The main loop polls for
input and sleeps until the next poll or the next deadline (a timeout, the result hold, a
countdown's next second), so an idle station wakes about 20 times a second and uses next to no CPU.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable

from rackside.kiosk import flow
from rackside.kiosk.effects import Effects, LazyLog
from rackside.kiosk.flow import Activity, Close, Key, Screen, Station, Tap, Tick
from rackside.kiosk.layout import Geometry, buttons, check_touch_targets, hit
from rackside.kiosk.station_config import StationConfig, verify_pin

log = LazyLog(__name__)  # made at its first message (kiosk.effects.LazyLog)

WINDOW_TITLE = "Rackside challenge station"
# How often the loop looks for input: every 50 ms with nobody at the station (20 wake-ups a second,
# and a first touch is seen within 50 ms), every 10 ms for 2 s after any input so typing echoes at
# once. Deadlines (result hold, countdowns, timeouts) end a sleep early, exactly when due.
POLL_IDLE_NS = 50_000_000
POLL_ACTIVE_NS = 10_000_000
ACTIVE_FOR_NS = 2_000_000_000
# The exit status of "Quit station" on the director's screen. deploy/rackside-kiosk.service lists
# it in RestartPreventExitStatus=, so systemd's Restart=always brings back a crashed station but
# not one the director quit (issue 10 item 2); `sudo systemctl start rackside-kiosk` starts it.
QUIT_STATUS = 64


class NoDisplayError(RuntimeError):
    """No screen to draw on: SDL would fall back to an invisible (offscreen/dummy) driver."""


class Paths:
    """Where the station reads and writes; None means the default under paths.state_dir()."""

    def __init__(self, settings: Path | None = None, log: Path | None = None, lexicons: Path | None = None,
                 exports: Path | None = None, media: tuple[Path, ...] | None = None,
                 hall_status: Path | None = None) -> None:
        self.settings, self.log, self.lexicons, self.exports = settings, log, lexicons, exports
        self.media = media  # where USB sticks are mounted; None: /media and /run/media
        self.hall_status = hall_status  # what `rackside hall station` says about the hall (kiosk.hall_status)


class _Pointer:
    """The one press in progress: a tap counts when it is released on the target it began on."""

    def __init__(self) -> None:
        self.source: tuple | None = None
        self.target: str | None = None
        self.down_ns = 0


class KioskApp:
    def __init__(self, config: StationConfig, *, size: tuple[int, int] | None = None, fullscreen: bool | None = None,
                 mode: str | None = None, clock_ns: Callable[[], int] = time.monotonic_ns,
                 paths: Paths | None = None, timing: flow.Timing | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self.clock_ns = clock_ns
        # The loop's own sleep, beside its own clock: a test gives both (patching time.sleep instead
        # let any other thread of the process that slept move the test's clock).
        self.sleep = sleep
        self.fullscreen = config.fullscreen if fullscreen is None else fullscreen
        self.size = size or config.size
        self.paths = paths or Paths()
        mode = mode or config.mode
        self.station = Station(mode=mode, verify_pin=lambda pin: verify_pin(pin, config.pin_hash),
                               timing=timing or flow.Timing())
        printer = None
        if config.printer_url:
            from rackside.kiosk.docket import DocketPrinter

            printer = DocketPrinter(config.printer_url, config.printer_baudrate, config.printer_write_timeout,
                                    config.printer_status_check)
        # The judge core (lexicon, rule, log) is the service the CLI and the hall use too.
        from rackside.judge.service import JudgeService

        self.service = JudgeService(log_path=self.paths.log or config.log_path, station=config.name,
                                    settings_path=self.paths.settings, lexicon_folder=self.paths.lexicons)
        # What the flow's effects do (judge, print, the director's choices, an import): kiosk/effects.py.
        self.effects = Effects(self.station, self.service, config, self.paths, clock_ns=clock_ns, on_quit=self._quit,
                               printer=printer)
        self.running = True  # until the director quits or the OS stops the station
        self.exit_status = 0  # QUIT_STATUS once the director quits
        self._stop_signal: int | None = None  # SIGTERM/SIGINT, once one has arrived
        self.frames = 0
        self._pointer = _Pointer()
        self._hall_read_ns = 0  # when the idle screen next reads the hall status (0: at the first step)
        self._shown_key = None
        self.surface = None
        self.renderer = None
        self.geo: Geometry | None = None

    # -- start-up -----------------------------------------------------------------------------

    def load_engine(self) -> None:
        """Settings and lexicon: what the idle screen shows. A missing or corrupt lexicon is shown
        on the idle screen (the director fixes it from director mode); corrupt settings refuse to
        start."""
        from rackside.judge.penalties import ChallengeRule

        settings = self.service.reload_settings()
        self.station.rules = tuple((r.value, r.label) for r in ChallengeRule)
        self.station.show_rule(settings.challenge_rule.value, settings.challenge_rule.label)
        self.station.max_words = max(1, min(settings.max_words, flow.MAX_WORDS))
        self.effects.open_lexicon()

    @property
    def lexicon(self):
        return self.service.lexicon

    @lexicon.setter
    def lexicon(self, lexicon) -> None:
        self.service.lexicon = lexicon

    @property
    def settings(self):
        return self.service.settings

    @property
    def challenge_log(self):
        return self.service.challenge_log

    def warm_up(self) -> None:
        """Once the idle screen is up: open the log and load the JUDGE path (engine, printer
        module, the verdict's fonts), so the first challenge is as quick as every later one."""
        from rackside.judge import challenge_log  # noqa: F401
        from rackside.kiosk import docket  # noqa: F401  (loaded now, not at the first JUDGE)

        if self.effects.dockets is not None:
            import serial  # noqa: F401
        _ = self.challenge_log
        for size in (92, 40, 26, 20, 18):
            self.renderer.font(size)

    def open_window(self) -> None:
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        # SDL would turn SIGTERM and SIGINT into a window-close event, which leads to the PIN
        # screen; the station must stop when systemd stops it, so Python handles them (see run).
        os.environ["SDL_NO_SIGNAL_HANDLERS"] = "1"
        check_display()
        import pygame

        # Only the display and fonts: no audio or joystick start-up on the Pi.
        pygame.display.init()
        driver = pygame.display.get_driver()
        if driver in INVISIBLE_DRIVERS and os.environ.get("SDL_VIDEODRIVER") != driver:
            pygame.display.quit()
            raise NoDisplayError(f"SDL found only its {driver!r} driver. {NO_DISPLAY_HINT}")
        if driver == "x11":
            # SDL's default on X copies the whole window into a GL texture at every update, even a
            # 10x10 one (14 ms a frame at 1920x1080 under Xvfb, 2 ms at 800x480); its native XShm
            # framebuffer updates only the rectangles given (0.4 ms for a whole 1080p frame).
            os.environ.setdefault("SDL_FRAMEBUFFER_ACCELERATION", "0")
        pygame.font.init()
        # The station's own window icon, set before the window opens: without one, set_mode loads
        # pygame's bundled icon through importlib.resources (~3 ms of start-up, issue 11).
        pygame.display.set_icon(_window_icon(pygame))
        if self.fullscreen:
            self.surface = pygame.display.set_mode((0, 0), pygame.FULLSCREEN)
            pygame.mouse.set_visible(False)
        else:
            self.surface = pygame.display.set_mode(self.size)
        pygame.display.set_caption(WINDOW_TITLE)
        # Keys arrive as KEYDOWN; text input stays off so no IME or OS text field ever appears.
        pygame.key.stop_text_input()
        # Drop the events the station never uses, so moving a finger or the mouse wakes nothing.
        # (Listing them: set_blocked(None) walks every event type and costs ~4 ms at start-up.)
        pygame.event.set_blocked([
            pygame.MOUSEMOTION, pygame.FINGERMOTION, pygame.MOUSEWHEEL, pygame.KEYUP, pygame.TEXTINPUT,
            pygame.TEXTEDITING, pygame.JOYAXISMOTION, pygame.JOYBALLMOTION, pygame.JOYHATMOTION,
            pygame.JOYBUTTONDOWN, pygame.JOYBUTTONUP, pygame.AUDIODEVICEADDED, pygame.AUDIODEVICEREMOVED,
        ])
        self._relayout()

    def _relayout(self) -> None:
        from rackside.kiosk.screens import Renderer

        w, h = self.surface.get_size()
        self.geo = Geometry.for_display(w, h, self.config.width_mm, self.config.height_mm)
        check_touch_targets(self.geo)
        self.renderer = Renderer(self.surface, self.geo)
        self._shown_key = None

    def start(self) -> None:
        self.load_engine()
        self.open_window()
        self.station.last_input_ns = self.clock_ns()
        self.render()

    # -- the loop -----------------------------------------------------------------------------

    def run(self, after_first_frame: Callable[[], None] | None = None) -> int:
        """The station until the director quits (exit QUIT_STATUS) or the OS stops it (SIGTERM/SIGINT: 0).
        `after_first_frame` runs once the idle screen is up (the command sets up logging there)."""
        # The C module behind `signal`: the same handlers, without the enum classes `signal` builds
        # at import (~0.5 ms before the first frame, issue 11).
        import _signal as signal

        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()  # sets SDL's environment, then imports pygame
            # READY=1 as soon as the idle screen is up; logging's set-up (a few ms) comes after it.
            notifier = _notifier()
            notifier.ready(f"idle screen shown ({self.station.mode} mode)")  # (bench/kiosk_bench.py waits for it)
            if after_first_frame is not None:
                after_first_frame()
            log.info("idle screen shown")
            self.warm_up()
            import pygame

            log.info("challenge station ready: %s mode, %dx%d", self.station.mode, *self.surface.get_size())
            self._loop(pygame, notifier)
            if self._stop_signal is not None:
                log.info("stopping on signal %d", self._stop_signal)
            notifier.stopping()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.shutdown()
        return self.exit_status

    def _loop(self, pygame, notifier) -> None:
        """Poll for input, then sleep until the next poll or the next deadline, whichever is first.

        Why not `pygame.event.wait(timeout)`: SDL implements it by polling every millisecond or so,
        about 900 wake-ups a second on an idle station whatever the timeout (issue 11). Polling
        here every 50 ms when nobody is there (10 ms for a few seconds after input, so typing
        echoes at once) costs ~20 wake-ups a second, and the sleep ends exactly at a deadline (the
        result's hold, a countdown's next second, a timeout), so every timing still holds."""
        watchdog_ns = notifier.watchdog_period_ns()
        next_watchdog = self.clock_ns()
        last_input = next_watchdog
        due = None  # when the screen next changes by itself (decided before sleeping, checked after)
        while self.running:
            events = pygame.event.get()
            now = self.clock_ns()
            if events:
                last_input = now
            if events or (due is not None and now >= due):
                self.step(events)
            if watchdog_ns and now >= next_watchdog:
                notifier.watchdog()
                next_watchdog = now + watchdog_ns
            if not self.running:
                break
            now = self.clock_ns()
            due = _earliest(self.station.next_deadline_ns(now), self._background_deadline(now))
            poll = POLL_ACTIVE_NS if now - last_input < ACTIVE_FOR_NS else POLL_IDLE_NS
            wake = _earliest(now + poll, due, next_watchdog if watchdog_ns else None)
            if wake > now:
                self.sleep((wake - now) / 1e9)

    def _background_deadline(self, now: int) -> int | None:
        """When work running off the UI thread (an import, a docket) next needs a step, or the idle
        screen its next look at the hall status."""
        hall = self._hall_read_ns if self.station.screen == Screen.IDLE else None
        return _earliest(self.effects.deadline(now), hall)

    def _read_hall_status(self, now: int) -> None:
        """At the idle screen, every READ_EVERY_NS: the enrolment code or station id that
        `rackside hall station` wrote (a local file of a few bytes: the station never waits on the
        network). Other screens keep what was read, so a challenge never touches the file."""
        if self.station.screen != Screen.IDLE or now < self._hall_read_ns:
            return
        from rackside.kiosk import hall_status

        self.station.hall_notice = hall_status.notice(self.paths.hall_status or hall_status.default_path())
        self._hall_read_ns = now + hall_status.READ_EVERY_NS

    def _on_signal(self, signum, frame) -> None:
        # Only a flag: the signal can arrive while `logging` is half imported (it is set up after
        # READY=1), and logging from here would then raise. The loop logs it as it ends.
        self._stop_signal = signum
        self.running = False

    def step(self, events=None) -> None:
        """Translate and handle pending pygame events (or `events`), pass time, redraw if changed."""
        import pygame

        if events is None:
            events = pygame.event.get()
        for ev in events:
            t = self.clock_ns()
            if ev.type in (pygame.WINDOWEXPOSED,):
                self._shown_key = None
                self.renderer.invalidate()
            elif ev.type == pygame.WINDOWSIZECHANGED:
                self._relayout()
            for fev in self.translate(ev, t):
                self.feed(fev)
            if not self.running:
                return
        self.effects.poll()
        self.feed(Tick(self.clock_ns()))
        self._read_hall_status(self.clock_ns())
        self.render()

    def translate(self, ev, t_ns: int) -> list:
        """A pygame event as kiosk.flow events (usually none or one)."""
        import pygame

        if ev.type in (pygame.QUIT, pygame.WINDOWCLOSE):
            return [Close(t_ns)]
        if ev.type == pygame.KEYDOWN:
            if ev.key == pygame.K_F4 and ev.mod & pygame.KMOD_ALT:
                return [Close(t_ns)]
            name = _key_name(pygame, ev.key)
            return [Key(name, t_ns)] if name else [Activity(t_ns)]
        if ev.type in (pygame.MOUSEBUTTONDOWN, pygame.MOUSEBUTTONUP):
            if getattr(ev, "touch", False) or ev.button != 1:
                return []  # SDL's mouse copy of a touch: the FINGER event already counts
            return self._pointer_event(("mouse",), ev.type == pygame.MOUSEBUTTONDOWN, ev.pos, t_ns)
        if ev.type in (pygame.FINGERDOWN, pygame.FINGERUP):
            w, h = self.surface.get_size()
            pos = (ev.x * w, ev.y * h)
            return self._pointer_event(("finger", ev.touch_id, ev.finger_id), ev.type == pygame.FINGERDOWN, pos, t_ns)
        return []

    def _pointer_event(self, source: tuple, down: bool, pos, t_ns: int) -> list:
        target = hit(buttons(self.station, self.geo), *pos)
        if self.station.screen == Screen.RESULT:
            target = "dismiss"  # the whole result screen is one target
        if self.station.screen == Screen.IDLE and target is None:
            target = "start"  # anywhere on the idle screen starts a challenge
        p = self._pointer
        if down:
            # The latest press wins: a press whose release never came (lost, or dropped while a
            # docket printed) must not make every later touch wait for it.
            p.source, p.target, p.down_ns = source, target, t_ns
            return [Activity(t_ns)]  # a touch anywhere, even off every key, says someone is there
        if p.source != source:
            return []
        began_on, p.source, p.target = p.target, None, None
        st = self.station
        if st.screen == Screen.RESULT and p.down_ns - st.verdict_ns < st.timing.touch_ignore_ns:
            return []  # the touch began in the result's first 0.5 s: ignored, even if lifted later
        if target is not None and target == began_on:
            return [Tap(target, t_ns)]
        return []

    def feed(self, event) -> None:
        for effect in self.station.handle(event):
            self.effects.carry_out(effect)
        if self.station.screen == Screen.IDLE:
            self.effects.refresh_lexicon()  # one stat when nothing changed

    def _quit(self) -> None:
        """The director quit the station (the effect of "Quit station")."""
        log.info("director quit the station (exit status %d: systemd does not restart it)", QUIT_STATUS)
        self.running = False
        self.exit_status = QUIT_STATUS

    # -- drawing ------------------------------------------------------------------------------

    def _view_key(self, now: int) -> tuple:
        st = self.station
        locked_secs = (st.pin_pad.lock_until_ns - now + flow.NS - 1) // flow.NS if st.screen == Screen.LOCKED else 0
        return (st.screen, st.count, tuple(st.words), st.message, st.table, st.pin_pad, st.docket,
                st.verdict, st.director.page, st.director.selected, st.readjudication.typed, st.readjudication.view, st.director.note, st.lexicon,
                st.lexicon_error, st.rule_value, locked_secs, self._pointer.target, len(st.director.log_rows),
                st.director.lexicon_choices, st.countdown_s(now), st.imports.choices, st.imports.view, st.hall_notice)

    def render(self, force: bool = False) -> bool:
        """Redraw if what is shown changed; returns whether it drew."""
        import pygame

        now = self.clock_ns()
        key = self._view_key(now)
        if not force and key == self._shown_key:
            return False
        self.renderer.draw(self.station, now, self._pointer.target)
        areas = self.renderer.changed_areas()
        if areas is None or force:
            pygame.display.flip()
        elif areas:
            pygame.display.update(areas)
        self._shown_key = key
        self.frames += 1
        return True

    def save_screenshot(self, path: Path) -> None:
        import pygame

        self.render(force=True)
        pygame.image.save(self.surface, str(path))

    def shutdown(self) -> None:
        import pygame

        self.effects.close()  # the printer's thread closes its port
        self.service.close()
        pygame.display.quit()


INVISIBLE_DRIVERS = ("offscreen", "dummy")
NO_DISPLAY_HINT = ("Run it on the station's screen (SDL_VIDEODRIVER=kmsdrm, as the service does) or in a desktop "
                   "session with --windowed; SDL_VIDEODRIVER=dummy runs it headless for a test")


def check_display() -> None:
    """Refuse to start invisibly: with no driver chosen, no X or Wayland session and no DRM device,
    SDL would fall back to an offscreen window nobody sees (issue 10 item 10)."""
    if os.environ.get("SDL_VIDEODRIVER") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return
    if any(Path("/dev/dri").glob("card*")):
        return
    raise NoDisplayError(f"no DISPLAY, no WAYLAND_DISPLAY and no /dev/dri. {NO_DISPLAY_HINT}")


def _earliest(*times: int | None) -> int | None:
    return min((t for t in times if t is not None), default=None)


def _window_icon(pygame):
    """A 32x32 icon in the station's colours: an amber tile on its dark background."""
    icon = pygame.Surface((32, 32))
    icon.fill((14, 18, 24))
    icon.fill((255, 196, 0), (6, 6, 20, 20))
    return icon


def _notifier():
    from rackside.hardware.sdnotify import Notifier

    return Notifier()


def _key_name(pygame, key: int) -> str:
    if pygame.K_a <= key <= pygame.K_z:
        return chr(key).upper()
    if pygame.K_0 <= key <= pygame.K_9:
        return chr(key)
    if pygame.K_KP_1 <= key <= pygame.K_KP_9:
        return str(key - pygame.K_KP_1 + 1)
    if key == pygame.K_KP_0:
        return "0"
    return {
        pygame.K_SPACE: "SPACE", pygame.K_RETURN: "ENTER", pygame.K_KP_ENTER: "ENTER",
        pygame.K_BACKSPACE: "BACKSPACE", pygame.K_DELETE: "BACKSPACE", pygame.K_TAB: "TAB",
        pygame.K_ESCAPE: "ESCAPE", pygame.K_UP: "UP", pygame.K_DOWN: "DOWN", pygame.K_PAGEUP: "UP",
        pygame.K_PAGEDOWN: "DOWN", pygame.K_MINUS: "-", pygame.K_KP_MINUS: "-", pygame.K_PERIOD: ".",
    }.get(key, "")
