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
