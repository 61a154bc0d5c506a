"""Where Rackside's configuration and state live. Imports nothing of Rackside, so any module may use it.

Every command and every service resolves the same folders the same way, so a director's shell on an
installed Pi sees what the services see (issue 10):

- configuration: $RACKSIDE_CONFIG_DIR, else /etc/rackside when it exists (an installed Pi),
  else $XDG_CONFIG_HOME/rackside (~/.config/rackside);
- state (journals, checkpoints, challenge log, compiled lexicons, exports): $RACKSIDE_STATE_DIR,
  else systemd's $STATE_DIRECTORY, else /var/lib/rackside when it exists (an installed Pi),
  else $XDG_DATA_HOME/rackside (~/.local/share/rackside).
"""

from __future__ import annotations

import os
from pathlib import Path

SYSTEM_CONFIG_DIR = Path("/etc/rackside")
SYSTEM_STATE_DIR = Path("/var/lib/rackside")


def config_dir() -> Path:
    """Where a director's configuration lives."""
    env = os.environ.get("RACKSIDE_CONFIG_DIR")
    if env:
        return Path(env)
    if SYSTEM_CONFIG_DIR.is_dir():
        return SYSTEM_CONFIG_DIR
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "rackside"


def state_dir() -> Path:
    """Where journals, checkpoints, logs and compiled lexicons are written."""
    env = os.environ.get("RACKSIDE_STATE_DIR") or os.environ.get("STATE_DIRECTORY")
    if env:
        return Path(env.split(":")[0])
    if SYSTEM_STATE_DIR.is_dir():
        # An installed Pi: the director's shell must see the services' lexicon, log and journals.
        return SYSTEM_STATE_DIR
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "rackside"


# Each file's one name. The subsystems ask here, so `rackside paths` and the programs never disagree.
def clock_config() -> Path:
    return config_dir() / "clock.toml"


def station_config() -> Path:
    return config_dir() / "station.toml"


def hall_dir() -> Path:
    """Provisioned hall credentials for this device, and the broker's files on the director's machine."""
    return config_dir() / "hall"


def journals_dir() -> Path:
    return state_dir() / "clock"


def challenge_log() -> Path:
    return state_dir() / "challenges.jsonl"


def lexicon_dir() -> Path:
    return state_dir() / "lexicons"


def station_settings() -> Path:
    return state_dir() / "station.json"


def exports_dir() -> Path:
    return state_dir() / "exports"


def outbox() -> Path:
    """The hall publisher's store-and-forward queue (SQLite)."""
    return state_dir() / "hall-outbox.sqlite"


def all_paths() -> dict[str, Path]:
    """What `rackside paths` prints, in order."""
    return {
        "config": config_dir(),
        "clock config": clock_config(),
        "station config": station_config(),
        "hall credentials": hall_dir(),
        "state": state_dir(),
        "journals": journals_dir(),
        "challenge log": challenge_log(),
        "lexicons": lexicon_dir(),
        "station settings": station_settings(),
        "exports": exports_dir(),
        "hall outbox": outbox(),
    }
