"""Issue 10: a game time set in the director's menu is kept for the following games (a state file
the config loader honours, written atomically), and the restore is logged with a wall time."""

from __future__ import annotations

import argparse
import logging
import os

import pytest

from rackside.firmware import config as clock_config
from rackside.game.clock import NS_PER_S, Phase
from rackside.firmware.config import load_config, save_game_time

from support.clock import FakeClock


def test_a_saved_game_time_overrides_the_configs(tmp_path):
    assert load_config(None, state_dir=tmp_path).rules.game_time_ms == 25 * 60_000
    save_game_time(tmp_path, 26 * 60_000, config_game_time_ms=25 * 60_000)
    path = tmp_path / clock_config.GAME_TIME_FILE
    assert path.is_file() and oct(path.stat().st_mode & 0o777) == "0o600"
    loaded = load_config(None, state_dir=tmp_path)
    assert loaded.rules.game_time_ms == 26 * 60_000
    assert loaded.config_game_time_ms == 25 * 60_000  # what the config itself says
    assert load_config(None).rules.game_time_ms == 25 * 60_000  # no state dir: the config alone


def test_setting_the_configs_own_game_time_removes_the_saved_one(tmp_path):
    save_game_time(tmp_path, 26 * 60_000, config_game_time_ms=25 * 60_000)
    save_game_time(tmp_path, 25 * 60_000, config_game_time_ms=25 * 60_000)
    assert not (tmp_path / clock_config.GAME_TIME_FILE).exists()
    assert load_config(None, state_dir=tmp_path).rules.game_time_ms == 25 * 60_000


def test_a_config_edited_since_wins_over_the_saved_game_time(tmp_path, caplog):
    save_game_time(tmp_path, 26 * 60_000, config_game_time_ms=25 * 60_000)
    cfg = tmp_path / "clock.toml"
    cfg.write_text('[clock]\ngame_time = "30:00"\n')
    with caplog.at_level(logging.INFO):
        assert load_config(cfg, state_dir=tmp_path).rules.game_time_ms == 30 * 60_000
    assert "config's game time changed" in caplog.text


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe not text", b"[clock]\ngame_time = 'banana'\n", b"[clock]\ngame_time = \"26:00\"\n", b"[[[", b'[clock]\ngame_time = "26:00"\nbogus = 1\n[menu]\nreplaces = "25:00"\n'],
)
def test_a_damaged_saved_game_time_is_ignored_with_one_line(tmp_path, caplog, content):
    (tmp_path / clock_config.GAME_TIME_FILE).write_bytes(content)
    with caplog.at_level(logging.WARNING):
        assert load_config(None, state_dir=tmp_path).rules.game_time_ms == 25 * 60_000
    assert len(caplog.records) == 1 and clock_config.GAME_TIME_FILE in caplog.text


def make_clock(monkeypatch, state_dir, fake):
    import gpiozero.pins.mock as mock
    from gpiozero.pins.mock import MockFactory

    from rackside.firmware.cli import Clock

    monkeypatch.setattr(mock, "monotonic", fake.seconds)
    args = argparse.Namespace(config=None, simulate=True, state_dir=state_dir, terminal=True)
    clock = Clock(args, clock_ns=fake, pin_factory=MockFactory())
    clock.start()
    return clock


def tap(clock, fake, button, ms=100):
    fake.ns += ms * 1_000_000
    clock.board.drive(button, True)
    clock.runner.pump()
    fake.ns += 80_000_000
    clock.board.drive(button, False)
    clock.runner.pump()
    fake.ns += 30_000_000
    clock.runner.pump()


def test_a_game_time_set_in_the_menu_is_kept_for_the_following_games_after_a_restart(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("RACKSIDE_CONFIG_DIR", str(tmp_path / "no-config"))
    state = tmp_path / "state"
    fake = FakeClock()
    clock = make_clock(monkeypatch, state, fake)
    try:
        clock.board.command("menu")
        clock.runner.pump()
        while clock.displays[0].text != "LEn":
            tap(clock, fake, "right")
        tap(clock, fake, "neutralise")  # minutes
        tap(clock, fake, "right")  # 26 minutes
        tap(clock, fake, "neutralise")  # seconds
        tap(clock, fake, "neutralise")  # yES/no
        tap(clock, fake, "left")  # yES
        tap(clock, fake, "neutralise")
        assert clock.runner.menu is None and clock.runner.rules.game_time_ms == 26 * 60_000
        tap(clock, fake, "right")  # play the game, then end it
        fake.ns += 5 * NS_PER_S
        clock.board.command("end")
        clock.runner.pump()
        assert clock.runner.clock.phase is Phase.ENDED
    finally:
        clock.runner.close()
        clock.close()
    fake.ns += 60 * NS_PER_S
    clock = make_clock(monkeypatch, state, fake)  # restart: a new game, not the ended one
    try:
        assert clock.runner.clock.phase is Phase.SETUP
        assert clock.runner.rules.game_time_ms == 26 * 60_000
        clock.runner.pump()
        assert (clock.displays[0].text, clock.displays[1].text) == ("26:00", "26:00")
    finally:
        clock.runner.close()
        clock.close()


def test_the_restore_is_logged_with_a_wall_time_never_nanoseconds(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("RACKSIDE_CONFIG_DIR", str(tmp_path / "no-config"))
    state = tmp_path / "state"
    fake = FakeClock()
    clock = make_clock(monkeypatch, state, fake)
    tap(clock, fake, "right")  # the game runs
    fake.ns += 7 * NS_PER_S
    clock.runner.pump()
    clock.board.close()
    clock.store.close()  # a power cut: no clean shutdown
    fake.ns += 30 * NS_PER_S
    with caplog.at_level(logging.INFO):
        clock = make_clock(monkeypatch, state, fake)
    try:
        restored = [r.getMessage() for r in caplog.records if "restored" in r.getMessage()]
        assert restored and all(" ns" not in m for m in restored)
        assert any("restored from 2" in m and "UTC" in m for m in restored), restored  # "from 2026-..."
    finally:
        clock.runner.close()
        clock.close()


def test_the_wall_time_across_a_reboot_comes_from_the_file_that_recorded_the_moment(tmp_path):
    from rackside.firmware.persist import wall_label

    f = tmp_path / "checkpoint.json"
    f.write_text("{}")
    os.utime(f, (1_764_495_000, 1_764_495_000))  # 2025-11-30 09:30:00 UTC
    assert wall_label(5, 10**12, True, f) == "2025-11-30 09:30:00 UTC"
    assert wall_label(5, 10**12, None, tmp_path / "gone") == "an unknown time"
