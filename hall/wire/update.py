"""What an update from the console is (hall/device/update.py does it; docs/fleet.md, "Updates from the
console"): names and bounds shared by the console, the clock's command check and the updater,
and the error an update is refused by (the console's check of a bundle is hall.wire.bundle). Pure."""

from __future__ import annotations

import re

MAX_BUNDLE_BYTES = 512 * 1024 * 1024  # a bundle: source and wheels for two Pythons are ~100 MB
DOWNLOAD_PATH = "/update/bundle.tar.gz"  # the console serves the bundle here, to a valid token only
TOKEN_HEADER = "X-Rackside-Update-Token"
TOKEN = re.compile(r"^[A-Za-z0-9_-]{32,64}$")
VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$")  # an /opt/rackside/<version> folder name
SHA256 = re.compile(r"^[0-9a-f]{64}$")
MAX_URL_CHARS = 300
MAX_WAIT_S = 6 * 3600  # the longest a clock waits for its game to end before switching (between rounds)
MAX_WHY_CHARS = 300  # the outcome's reason in the ack (the console takes acks of at most 2 KB)
OUTCOMES = ("switched", "not switched", "failed")  # an update command's ack says which


class UpdateError(ValueError):
    """Why a bundle is refused, in one line."""
