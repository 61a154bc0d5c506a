"""One place says where configuration and state live, and every command agrees (issue 10, item 1)."""

from __future__ import annotations

import os
import re
import subprocess
import sys


from rackside import paths


def _clear(monkeypatch):
    for var in ("RACKSIDE_STATE_DIR", "STATE_DIRECTORY", "RACKSIDE_CONFIG_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)


def test_an_installed_pi_uses_the_services_state_and_config(monkeypatch, tmp_path):
    """The director's shell has no RACKSIDE_STATE_DIR; it must still see /var/lib/rackside, where the
    services write, or `rackside lexicon use` changes a lexicon the station never sees."""
    _clear(monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    system_state, system_config = tmp_path / "var-lib-rackside", tmp_path / "etc-rackside"
    monkeypatch.setattr(paths, "SYSTEM_STATE_DIR", system_state)
    monkeypatch.setattr(paths, "SYSTEM_CONFIG_DIR", system_config)
    # A laptop: nothing installed, so the user's own folders.
    assert paths.state_dir() == tmp_path / "home" / ".local" / "share" / "rackside"
    assert paths.config_dir() == tmp_path / "home" / ".config" / "rackside"
    # An installed Pi: the system folders, for every file.
    system_state.mkdir()
    system_config.mkdir()
    assert paths.state_dir() == system_state
    assert paths.config_dir() == system_config
    assert paths.challenge_log() == system_state / "challenges.jsonl"
    assert paths.lexicon_dir() == system_state / "lexicons"
    assert paths.station_settings() == system_state / "station.json"
    assert paths.clock_config() == system_config / "clock.toml"


def test_the_environment_wins(monkeypatch, tmp_path):
    _clear(monkeypatch)
    monkeypatch.setenv("STATE_DIRECTORY", f"{tmp_path / 'a'}:{tmp_path / 'b'}")  # systemd's, may list several
    assert paths.state_dir() == tmp_path / "a"
    monkeypatch.setenv("RACKSIDE_STATE_DIR", str(tmp_path / "mine"))
    assert paths.state_dir() == tmp_path / "mine"


def test_rackside_paths_prints_every_location(tmp_path):
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "state"), "RACKSIDE_CONFIG_DIR": str(tmp_path / "etc")}
    (tmp_path / "state").mkdir()
    out = subprocess.run([sys.executable, "-m", "rackside", "paths"], capture_output=True, text=True, env=env, check=True).stdout
    lines = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines())
    assert lines["state"] == str(tmp_path / "state")
    assert lines["config"] == f"{tmp_path / 'etc'}  (not yet created)"
    for what in ("journals", "challenge log", "lexicons", "station config", "clock config", "hall outbox"):
        assert what in lines, what


def test_a_reader_that_goes_away_is_not_a_traceback(tmp_path):
    """`rackside paths | head -1`: the reader closes the pipe; the command must not print a traceback."""
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "state"), "RACKSIDE_CONFIG_DIR": str(tmp_path / "etc")}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written: every write fails
    try:
        result = subprocess.run([sys.executable, "-m", "rackside", "paths"], stdout=write_end, stderr=subprocess.PIPE, text=True, env=env)
    finally:
        os.close(write_end)
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr
    assert result.returncode == 141

