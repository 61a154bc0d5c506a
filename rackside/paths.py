"""Where Rackside's configuration and state live. Imports nothing of Rackside, so any module may use it.

Every command and every service resolves the same folders the same way, so a director's shell on an
installed Pi sees what the services see (issue 10):

- configuration: $RACKSIDE_CONFIG_DIR, else /etc/rackside when it exists (an installed Pi),
  else $XDG_CONFIG_HOME/rackside (~/.config/rackside);
- state (journals, checkpoints, challenge log, compiled lexicons, exports): $RACKSIDE_STATE_DIR,
  else systemd's $STATE_DIRECTORY, else /var/lib/rackside when it exists (an installed Pi),
  else $XDG_DATA_HOME/rackside (~/.local/share/rackside).

`config_dir()` and `state_dir()` give Paths. pathlib is imported when one is made, not with this
module: `rackside judge` finds its settings with `state_dir_name()` (a str) and never needs pathlib,
whose import (it brings `re`) costs more than the whole lookup (issue 11).
"""

from __future__ import annotations

import os

SYSTEM_CONFIG_DIR = "/etc/rackside"
SYSTEM_STATE_DIR = "/var/lib/rackside"


def _home() -> str:
    return os.path.expanduser("~")


def config_dir_name() -> str:
    """Where a director's configuration lives, as a str."""
    env = os.environ.get("RACKSIDE_CONFIG_DIR")
    if env:
        return env
    if os.path.isdir(SYSTEM_CONFIG_DIR):
        return os.fspath(SYSTEM_CONFIG_DIR)
    return os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.join(_home(), ".config"), "rackside")


def state_dir_name() -> str:
    """Where journals, checkpoints, logs and compiled lexicons are written, as a str."""
    env = os.environ.get("RACKSIDE_STATE_DIR") or os.environ.get("STATE_DIRECTORY")
    if env:
        return env.split(":")[0]
    if os.path.isdir(SYSTEM_STATE_DIR):
        # An installed Pi: the director's shell must see the services' lexicon, log and journals.
        return os.fspath(SYSTEM_STATE_DIR)
    return os.path.join(os.environ.get("XDG_DATA_HOME") or os.path.join(_home(), ".local", "share"), "rackside")


def config_dir() -> Path:
    """Where a director's configuration lives."""
    from pathlib import Path

    return Path(config_dir_name())


def state_dir() -> Path:
    """Where journals, checkpoints, logs and compiled lexicons are written."""
    from pathlib import Path

    return Path(state_dir_name())


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


def public_dir() -> Path:
    """The console's published public view (static JSON and its page), which `rackside hall publish` copies out."""
    return state_dir() / "public"


EVENTS = "events"  # the console's events, one folder each (hall/console/shell/eventdir.py), under the state folder


def events_dir() -> Path:
    """The console's events: each event's results, audit and sessions in a folder of its own."""
    return state_dir() / EVENTS


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
        "public view": public_dir(),
        "console events": events_dir(),
    }
