"""The station as a program: `rackside kiosk` as systemd runs it, its exit status, its first frame,
the loop's sleeps and deadlines, the watchdog and stop signals.

The real pygame event queue under SDL's dummy driver, a fake clock, and small compiled lexicons
in a temporary folder (the rig and its shared helpers: tests/support/kiosk_rig.py)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pygame
import pytest

from rackside.kiosk.app import QUIT_STATUS
from rackside.kiosk.flow import NS
from rackside.kiosk.flow import Screen

from support.kiosk_rig import PIN, PIN_HASH, centre_of, make_app, post_keys, type_text


def test_quit_station_stays_stopped_under_systemd():
    """Issue 10 item 2: Restart=always brought a quit station back after 2 s. The director's quit
    exits with a status systemd is told not to restart on; a crash still restarts."""
    import configparser

    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.read(Path(__file__).resolve().parent.parent / "deploy" / "rackside-kiosk.service")
    assert unit["Service"]["Restart"] in {"always", "on-failure"}
    assert str(QUIT_STATUS) in unit["Service"]["RestartPreventExitStatus"].split()
    assert QUIT_STATUS not in {0, 1, 2}  # not a normal stop, a crash or a usage error


def test_director_quit_is_the_process_exit_status(tmp_path, monkeypatch):
    """The whole command: PIN, Quit station, and `rackside kiosk` exits QUIT_STATUS."""
    import subprocess
    import sys

    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{PIN_HASH}"\n[display]\nfullscreen = false\n'
                   f'[log]\npath = "{tmp_path / "log.jsonl"}"\n', encoding="utf-8")
    code = ("import pygame, sys\n"
            "from rackside.cli import main\n"
            "from rackside.kiosk import app as A\n"
            "orig = A.KioskApp.start\n"
            "def start(self):\n"
            "    orig(self)\n"
            "    for k in ['escape'] + list('" + PIN + "') + ['return']:\n"
            "        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.key.key_code(k), mod=0))\n"
            "    self.effects.carry_out(A.flow.Quit())\n"
            "A.KioskApp.start = start\n"
            "sys.exit(main(['kiosk', '--config', sys.argv[1]]))\n")
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", RACKSIDE_STATE_DIR=str(tmp_path / "state"))
    r = subprocess.run([sys.executable, "-c", code, str(cfg)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == QUIT_STATUS, r.stderr


@pytest.mark.parametrize("argv", [
    ["--config", "X"], ["--config=X", "--windowed"], ["--windowed", "--runner", "--size", "1920x1080", "--config", "X"],
    [],
])
def test_the_fast_path_takes_the_forms_systemd_and_directors_use(argv, monkeypatch):
    from rackside.kiosk import cli, station_cli

    got = []
    monkeypatch.setattr(station_cli, "main", lambda args: got.append(args) or 0)
    assert cli.fast(argv) == 0
    [args] = got
    full = __import__("rackside.cli", fromlist=["build_parser"]).build_parser("kiosk").parse_args(["kiosk", *argv])
    for name in ("config", "size", "windowed", "runner", "hash_pin", "check_config"):
        assert getattr(args, name) == getattr(full, name), name  # the same as the full parser's


@pytest.mark.parametrize("argv", [["--help"], ["--hash-pin"], ["--check-config"], ["--config"], ["--bogus"],
                                  ["--config", "a", "--config", "b"], ["--size"], ["extra"]])
def test_other_forms_go_to_the_full_parser(argv):
    from rackside.kiosk import cli

    assert cli.fast(argv) is None


def test_the_station_reaches_its_first_frame_without_argparse(tmp_path):
    import subprocess
    import sys

    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{PIN_HASH}"\n[display]\nfullscreen = false\n', encoding="utf-8")
    code = ("import sys\n"
            "from rackside.kiosk import app as A\n"
            "def run(self, after_first_frame=None):\n"
            "    self.start()\n"
            "    print(sorted(m for m in ('argparse', 'logging') if m in sys.modules))\n"
            "    self.shutdown()\n"
            "    return 0\n"
            "A.KioskApp.run = run\n"
            "from rackside.cli import main\n"
            "sys.exit(main(['kiosk', '--config', sys.argv[1]]))\n")
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", RACKSIDE_STATE_DIR=str(tmp_path / "state"))
    r = subprocess.run([sys.executable, "-c", code, str(cfg)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_no_display_exits_2_with_one_line(tmp_path):
    """Issue 10 item 10: with no display, `rackside kiosk` used to run invisibly (SDL's offscreen
    driver). It exits 2 and says where a station can run."""
    import subprocess
    import sys

    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{PIN_HASH}"\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items()
           if k not in {"DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"}}
    env.update(RACKSIDE_STATE_DIR=str(tmp_path / "state"), XDG_RUNTIME_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "rackside", "kiosk", "--config", str(cfg)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rackside kiosk: no display") and "SDL_VIDEODRIVER" in lines[0]


def test_run_loop_processes_the_queue_and_quits(tmp_path, monkeypatch):
    """The real loop (event.wait with a deadline timeout) with the real clock."""
    a, _ = make_app(tmp_path, monkeypatch)
    a.clock_ns = __import__("time").monotonic_ns
    a.start = lambda: None  # already started by make_app
    a.running = True
    post_keys("ESCAPE")
    for d in PIN:
        post_keys(d)
    post_keys("ENTER")
    x, y = centre_of_screen(a, Screen.DIRECTOR, "quit")
    w, h = a.surface.get_size()
    pygame.event.post(pygame.event.Event(pygame.FINGERDOWN, x=x / w, y=y / h, touch_id=1, finger_id=1))
    pygame.event.post(pygame.event.Event(pygame.FINGERUP, x=x / w, y=y / h, touch_id=1, finger_id=1))
    assert a.run() == QUIT_STATUS


def test_loop_sleeps_until_the_next_poll_or_deadline(app, monkeypatch):
    """Issue 11 item 3: no `event.wait` (it wakes ~900 times a second); the loop sleeps itself,
    20 wake-ups a second when idle, and a sleep ends exactly at a deadline (the result's 10 s)."""
    from rackside.hardware.sdnotify import Notifier

    wakes = []

    def fake_sleep(seconds):
        assert seconds > 0
        app.clock.advance(seconds)
        wakes.append(app.clock())
        if app.clock() - start > 30 * NS:
            app.running = False

    monkeypatch.setattr(app, "sleep", fake_sleep)
    monkeypatch.setattr(pygame.event, "wait", lambda *a: pytest.fail("event.wait wakes ~900/s"))
    start = app.clock()
    post_keys("1")
    type_text("qi")
    post_keys("TAB")
    app._loop(pygame, Notifier({}))
    st = app.station
    assert st.screen == Screen.IDLE and st.verdict_ns == start
    assert start + 10 * NS in wakes  # woke exactly when the result's hold ended
    idle = [t for t in wakes if t > start + 13 * NS]
    assert len(idle) <= 17 * 20 + 1  # 20 a second


def test_loop_draws_each_second_of_the_countdown_when_due(app, monkeypatch):
    from rackside.hardware.sdnotify import Notifier

    drawn = []
    real_render = type(app).render

    def render(force=False):
        drew = real_render(app, force)
        if drew:
            drawn.append((app.clock(), app.station.screen, app.station.countdown_s(app.clock())))
        return drew

    def fake_sleep(seconds):
        app.clock.advance(seconds)
        if app.station.screen == Screen.IDLE:
            app.running = False

    monkeypatch.setattr(app, "render", render)
    monkeypatch.setattr(app, "sleep", fake_sleep)
    post_keys("1")
    start = app.clock()
    app._loop(pygame, Notifier({}))
    counted = [(t - start, secs) for t, screen, secs in drawn if secs is not None]
    assert counted == [((50 + i) * NS, 10 - i) for i in range(10)]  # each second, on time
    assert drawn[-1][:2] == (start + 60 * NS, Screen.IDLE)


def test_the_loop_sleeps_through_the_apps_own_sleep_not_the_process_wide_one(app, monkeypatch):
    """A test gives the loop its own fake sleep beside its fake clock. Patching time.sleep for the
    whole process instead let any other thread that slept (a printer worker, a leftover client's
    loop) move the test's clock, and a countdown second went missing under load."""
    from rackside.hardware.sdnotify import Notifier

    def fake_sleep(seconds):
        app.clock.advance(seconds)
        if app.clock() - start > 2 * NS:
            app.running = False

    def process_wide_sleep(seconds):
        raise AssertionError("the kiosk loop called time.sleep, not its own sleep")

    app.sleep = fake_sleep
    monkeypatch.setattr(time, "sleep", process_wide_sleep)
    start = app.clock()
    app._loop(pygame, Notifier({}))
    assert app.clock() - start > 2 * NS


def test_loop_keeps_the_watchdog_fed(app, monkeypatch):
    """The unit is Type=notify with WatchdogSec=15: the station says READY and pings the watchdog."""
    import socket
    from rackside.hardware.sdnotify import Notifier

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(app.paths.settings.parent / "notify.sock")
    sock.bind(path)
    sock.settimeout(1)
    notifier = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "15000000"})

    def fake_sleep(seconds):
        app.clock.advance(seconds)
        if app.clock() - start > 20 * NS:
            app.running = False

    monkeypatch.setattr(app, "sleep", fake_sleep)
    start = app.clock()
    app._loop(pygame, notifier)
    got = []
    sock.settimeout(0.1)
    try:
        while True:
            got.append(sock.recv(100))
    except socket.timeout:
        pass
    sock.close()
    assert got.count(b"WATCHDOG=1") >= 3  # every 7.5 s over 20 s


def centre_of_screen(app, screen, target):
    saved = app.station.screen
    app.station.screen = screen
    try:
        return centre_of(app, target)
    finally:
        app.station.screen = saved


def test_a_stop_signal_during_the_logging_import_stops_the_station(app, monkeypatch):
    """systemd's SIGTERM can arrive while `logging` is being imported (it is set up right after
    READY=1): the handler must not log then, or the half-imported module raises in it."""
    import signal
    import sys
    import types

    monkeypatch.setitem(sys.modules, "logging", types.ModuleType("logging"))  # as mid-import: nothing in it yet
    app._on_signal(signal.SIGTERM, None)
    assert not app.running and app.exit_status == 0
