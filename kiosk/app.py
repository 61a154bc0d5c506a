"""The touchscreen challenge station: pygame in, kiosk.flow in the middle, engine and printer out.

`KioskApp` translates real pygame events (keys, fingers, mouse) into kiosk.flow events stamped
with an injected monotonic clock, carries out the effects the flow asks for (adjudicate, log,
print, director's choices), and redraws only when what is shown changed. The main loop sleeps in
`pygame.event.wait` until the next input or the next deadline (a timeout, the result hold, the
lockout countdown, or at most half a second), so an idle station uses next to no CPU.
"""

from __future__ import annotations

import logging
import math
import os
import time
from pathlib import Path
from typing import Callable

from rackside.kiosk import flow
from rackside.kiosk.flow import (Close, Key, LexiconChoice, LexiconInfo, LogRow, ReadjudicationView, Screen, Station, Tap,
                        Tick, Verdict)
from rackside.kiosk.layout import Geometry, buttons, check_touch_targets, hit
from rackside.kiosk.station_config import StationConfig, verify_pin

log = logging.getLogger(__name__)

WINDOW_TITLE = "Rackside challenge station"
# Longest sleep in the event wait with nothing due. Python runs signal handlers only when the wait
# returns, so this bounds how long a SIGTERM from systemd waits; waking twice a second to find
# nothing changed draws nothing and costs nothing measurable.
MAX_WAIT_MS = 500


class Paths:
    """Where the station reads and writes; None means the default under paths.state_dir()."""

    def __init__(self, settings: Path | None = None, log: Path | None = None, lexicons: Path | None = None,
                 exports: Path | None = None) -> None:
        self.settings, self.log, self.lexicons, self.exports = settings, log, lexicons, exports


class _Pointer:
    """The one press in progress: a tap counts when it is released on the target it began on."""

    def __init__(self) -> None:
        self.source: tuple | None = None
        self.target: str | None = None
        self.down_ns = 0


class KioskApp:
    def __init__(self, config: StationConfig, *, size: tuple[int, int] | None = None, fullscreen: bool | None = None,
                 mode: str | None = None, clock_ns: Callable[[], int] = time.monotonic_ns,
                 paths: Paths | None = None, timing: flow.Timing | None = None):
        self.config = config
        self.clock_ns = clock_ns
        self.fullscreen = config.fullscreen if fullscreen is None else fullscreen
        self.size = size or config.size
        self.paths = paths or Paths()
        mode = mode or config.mode
        self.station = Station(mode=mode, verify_pin=lambda pin: verify_pin(pin, config.pin_hash),
                               timing=timing or flow.Timing())
        self.printer = None
        if config.printer_url:
            from rackside.kiosk.docket import DocketPrinter

            self.printer = DocketPrinter(config.printer_url, config.printer_baudrate, config.printer_write_timeout,
                                         config.printer_status_check)
        # The judge core (lexicon, rule, log) is the service the CLI and the hall use too.
        from rackside.judge.service import JudgeService

        self.service = JudgeService(log_path=self.paths.log or config.log_path, station=config.name,
                                    settings_path=self.paths.settings, lexicon_folder=self.paths.lexicons)
        self.running = True  # until the director quits or the OS stops the station
        self.frames = 0
        self._pointer = _Pointer()
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
        self._open_lexicon()

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

        if self.printer is not None:
            import serial  # noqa: F401
        _ = self.challenge_log
        for size in (92, 40, 26, 20, 18):
            self.renderer.font(size)

    def _open_lexicon(self) -> None:
        from rackside.judge.service import LexiconError

        try:
            self.service.open_lexicon()
        except (LexiconError, OSError) as exc:
            log.error("no lexicon: %s", exc)
            self.station.show_lexicon(None, str(exc))
            return
        self._show_lexicon()

    def _show_lexicon(self) -> None:
        from rackside.judge.lexicon import DEMONSTRATION_SHORT, is_demonstration

        lexicon = self.service.lexicon
        self.station.show_lexicon(LexiconInfo(lexicon.name, lexicon.word_count, lexicon.short_checksum),
                                  notice=DEMONSTRATION_SHORT if is_demonstration(lexicon) else "")

    def _refresh_lexicon(self) -> None:
        """At the idle screen: judge with a lexicon or rule `rackside lexicon use` chose since."""
        if self.service.refresh_lexicon():
            self._show_lexicon()
        rule = self.service.rule
        if rule.value != self.station.rule_value:
            self.station.show_rule(rule.value, rule.label)

    def open_window(self) -> None:
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        # SDL would turn SIGTERM and SIGINT into a window-close event, which leads to the PIN
        # screen; the station must stop when systemd stops it, so Python handles them (see run).
        os.environ["SDL_NO_SIGNAL_HANDLERS"] = "1"
        import pygame

        # Only the display and fonts: no audio or joystick start-up on the Pi.
        pygame.display.init()
        pygame.font.init()
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

    def run(self) -> int:
        """The station until the director quits (exit 0) or the OS stops it (SIGTERM/SIGINT)."""
        import signal

        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()  # sets SDL's environment, then imports pygame
            log.info("idle screen shown")
            self.warm_up()
            import pygame

            log.info("challenge station ready: %s mode, %dx%d", self.station.mode, *self.surface.get_size())
            while self.running:
                now = self.clock_ns()
                deadline = self.station.next_deadline_ns(now)
                # Sleep until input or the next deadline (a timeout, the result hold, the lockout).
                wait_ms = MAX_WAIT_MS if deadline is None else max(1, math.ceil((deadline - now) / 1e6))
                first = pygame.event.wait(min(wait_ms, MAX_WAIT_MS))
                if not self.running:
                    break
                self.step([first] + pygame.event.get())
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.shutdown()
        return 0

    def _on_signal(self, signum, frame) -> None:
        log.info("stopping on signal %d", signum)
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
            elif ev.type == pygame.WINDOWSIZECHANGED:
                self._relayout()
            for fev in self.translate(ev, t):
                self.feed(fev)
            if not self.running:
                return
        self.feed(Tick(self.clock_ns()))
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
            return [Key(name, t_ns)] if name else []
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
            return []
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
            self.carry_out(effect)
        if self.station.screen == Screen.IDLE:
            self._refresh_lexicon()  # one stat when nothing changed

    # -- effects ------------------------------------------------------------------------------

    def carry_out(self, effect) -> None:
        getattr(self, f"_do_{type(effect).__name__.lower()}")(effect)

    def _do_judge(self, eff: flow.Judge) -> None:
        from rackside.judge.adjudication import ChallengeInputError
        from rackside.judge.service import NoLexicon

        try:
            # Durable (fsync'd) before anyone sees the verdict.
            judgement = self.service.judge(eff.words, table=eff.table or self.config.table, kind=eff.kind)
        except (NoLexicon, ChallengeInputError) as exc:
            self.station.reject_words(str(exc))
            return
        except OSError as exc:
            log.error("challenge not logged: %s", exc)
            self.station.reject_words(f"The challenge could not be logged ({exc.strerror or exc}): call the director")
            return
        record, adjudication = judgement.record, judgement.adjudication
        verdict = Verdict(
            acceptable=adjudication.acceptable,
            words=adjudication.words,
            lexicon=f"{self.lexicon.name} ({self.lexicon.short_checksum})",
            guidance=judgement.guidance,
            challenge_id=record.id,
            kind=eff.kind,
            short_id=record.short_id,
        )
        printing = self.printer is not None and eff.kind == "runner"
        self.station.show_verdict(verdict, self.clock_ns(), printing=printing)
        self.render()  # the verdict is on screen before the printer is touched
        if printing:
            from rackside.kiosk.docket import Docket

            ok, why = self.printer.print_docket(Docket(
                record.id, _docket_time(record.time), record.table, verdict.lexicon, record.words, record.acceptable,
                record.short_id))
            self.station.docket_done(ok, why)
            # Touches and keys made while the port was busy would be stamped now, possibly past the
            # 0.5 s touch-ignore, though they came during it: drop them (a later touch still counts).
            import pygame

            pygame.event.clear([pygame.KEYDOWN, pygame.FINGERDOWN, pygame.FINGERUP, pygame.MOUSEBUTTONDOWN,
                                pygame.MOUSEBUTTONUP])

    def _do_listlexicons(self, eff) -> None:
        choices = []
        for path, info, error in self.service.list_lexicons():
            if error is None:
                choices.append(LexiconChoice(str(path), LexiconInfo(*info).label))
            else:
                choices.append(LexiconChoice(str(path), f"{path.name}: unreadable", error))
        self.station.show_lexicons(choices)
        if not choices:
            self.station.note(f"No compiled lexicons in {self.service.lexicon_folder_path}")

    def _do_chooselexicon(self, eff: flow.ChooseLexicon) -> None:
        from rackside.judge.service import LexiconError, SettingsError

        try:
            lexicon = self.service.choose_lexicon(eff.path)
        except (LexiconError, OSError) as exc:
            self.station.note(f"Lexicon not changed: {exc}")
            return
        except SettingsError as exc:
            self.station.note(f"Lexicon not changed: cannot save the settings ({exc})")
            return
        self._show_lexicon()
        self.station.note(f"Now judging with {lexicon.name}")
        log.info("director chose lexicon %s (%s)", lexicon.name, eff.path)

    def _do_chooserule(self, eff: flow.ChooseRule) -> None:
        from rackside.judge.service import SettingsError

        try:
            rule = self.service.choose_rule(eff.value)
        except (OSError, SettingsError) as exc:
            self.station.note(f"Rule not changed: cannot save the settings ({exc})")
            return
        self.station.show_rule(rule.value, rule.label)
        self.station.note(f"Challenge rule: {rule.label}")

    def _rows(self) -> list[LogRow]:
        return [LogRow(r.id, r.time, r.kind, r.table, f"{r.lexicon_name} ({r.lexicon_sha256[:8]})", r.words,
                       r.acceptable, r.per_word) for r in reversed(self.challenge_log.records())]

    def _do_loadlog(self, eff) -> None:
        try:
            self.station.show_log(self._rows())
        except OSError as exc:
            self.station.note(f"Cannot read the log: {exc}")

    def _do_exportlog(self, eff) -> None:
        from datetime import datetime

        from rackside import paths

        folder = self.paths.exports or self.config.export_dir or paths.state_dir() / "exports"
        # Wall-clock time only names the file for humans.
        out = folder / f"challenges-{self.config.name}-{datetime.now():%Y%m%d-%H%M%S}.csv"
        try:
            count = self.service.export_csv(out)  # atomic and owner-only, as `rackside log export`
        except OSError as exc:
            self.station.note(f"Export failed: {exc}")
            return
        self.station.note(f"Exported {count} challenges to {out}")

    def _do_readjudicate(self, eff: flow.Readjudicate) -> None:
        from rackside.judge.challenge_log import AmbiguousId
        from rackside.judge.service import NoLexicon, NotInLog

        wanted = eff.challenge_id.strip()
        try:
            # The one lookup (full id in any case, or the short id), as `rackside log readjudicate`.
            r = self.service.readjudicate(wanted)
        except NoLexicon as exc:
            self.station.show_readjudication(None, str(exc))
            return
        except NotInLog:
            self.station.show_readjudication(None, f"No challenge with id {wanted} in this station's log")
            return
        except AmbiguousId as exc:
            self.station.show_readjudication(None, str(exc))
            return
        except OSError as exc:  # as in the log view: reported, never the end of the station
            self.station.show_readjudication(None, f"Cannot read the log: {exc}")
            return
        record = r.record
        row = LogRow(record.id, record.time, record.kind, record.table,
                     f"{record.lexicon_name} ({record.lexicon_sha256[:8]})", record.words, record.acceptable,
                     record.per_word)
        self.station.show_readjudication(ReadjudicationView(
            row, r.now.acceptable, r.now.per_word, not r.final, r.message,
            f"{self.lexicon.name} ({self.lexicon.short_checksum})"))
        log.info("re-adjudicated %s: %s", record.id, r.message)

    def _do_quit(self, eff) -> None:
        log.info("director quit the station")
        self.running = False

    # -- drawing ------------------------------------------------------------------------------

    def _view_key(self, now: int) -> tuple:
        st = self.station
        locked_secs = (st.lock_until_ns - now + flow.NS - 1) // flow.NS if st.screen == Screen.LOCKED else 0
        return (st.screen, st.count, tuple(st.words), st.message, st.table, len(st.pin), st.pin_message, st.docket,
                st.verdict, st.page, st.selected, st.readj_id, st.readj, st.director_note, st.lexicon,
                st.lexicon_error, st.rule_value, locked_secs, self._pointer.target, len(st.log_rows),
                st.lexicon_choices)

    def render(self, force: bool = False) -> bool:
        """Redraw if what is shown changed; returns whether it drew."""
        import pygame

        now = self.clock_ns()
        key = self._view_key(now)
        if not force and key == self._shown_key:
            return False
        self.renderer.draw(self.station, now, self._pointer.target)
        pygame.display.flip()
        self._shown_key = key
        self.frames += 1
        return True

    def save_screenshot(self, path: Path) -> None:
        import pygame

        self.render(force=True)
        pygame.image.save(self.surface, str(path))

    def shutdown(self) -> None:
        import pygame

        if self.printer is not None:
            self.printer.close()
        self.service.close()
        pygame.display.quit()


def _docket_time(iso: str) -> str:
    """'2026-11-29T12:00:03+00:00' -> '2026-11-29 12:00:03 UTC' for the slip."""
    from datetime import datetime

    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return dt.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if dt.utcoffset() is not None and not dt.utcoffset() else "")


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
