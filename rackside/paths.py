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
