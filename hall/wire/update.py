"""What an update from the console is (hall/device/update.py does it; docs/fleet.md, "Updates from the
console"): names and bounds shared by the console, the clock's command check and the updater,
the error an update is refused by (the console's check of a bundle is hall.wire.bundle), and
whether a version is older than the one installed (a downgrade, refused unless the director allows
it by name: issue 36). Pure."""

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


RELEASE = re.compile(r"^(\d+(?:\.\d+)*)")  # a version's release numbers (PEP 440), before any label


def older(version: str, built: str | None, installed: str | None, installed_built: str | None) -> bool | None:
    """Is `version` (built at `built`, ISO 8601 UTC as bundle.json says) older than `installed`? By
    their release numbers (0.1.0 < 0.2.0; 0.1.0 == 0.1), then, the same release, by when each was
    built (a local label, g<commit>, has no order). None when that cannot be told (no installed
    version, no release numbers, or the same release without both build times): not a downgrade."""
    if installed is None or version == installed:
        return None if installed is None else False
    mine, theirs = RELEASE.match(version), RELEASE.match(installed)
    if mine is None or theirs is None:
        return None
    a, b = ([int(x) for x in m.group(1).split(".")] for m in (mine, theirs))
    width = max(len(a), len(b))
    a, b = a + [0] * (width - len(a)), b + [0] * (width - len(b))
    if a != b:
        return a < b
    if isinstance(built, str) and isinstance(installed_built, str) and built != installed_built:
        return built < installed_built
    return None
