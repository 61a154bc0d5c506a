"""What the station's screen says about the hall (issue 19, docs/fleet.md): its enrolment code while
it waits for a station id, then its station id.

`rackside hall station` (hall.device.station, a process of its own: the station never touches the network)
writes one small file in the state folder, owner-only, replaced whole (a reader sees the old file
or the new one, never half of one):

    {"code": "0348", "station": null}    said hello: waiting for a station id
    {"code": "0348", "station": "2"}     the director gave it station 2

and removes it when it stops. The kiosk reads it at its idle screen every READ_EVERY_NS (a local
file of a few dozen bytes, never the network); a missing file shows nothing, a bad one one log line
naming it and nothing on screen.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from rackside.atomic import write_atomic

log = logging.getLogger(__name__)

FILE_NAME = "hall-station.json"
MAX_BYTES = 512  # the file is under 60 bytes; anything longer is not ours
READ_EVERY_NS = 2_000_000_000  # a newly assigned id is on screen within 2 s
_CODE = re.compile(r"^[0-9]{1,12}$")  # hall.wire.join.code: CODE_DIGITS digits


def default_path() -> Path:
    from rackside import paths

    return paths.state_dir() / FILE_NAME


def write(path: Path, code: str, station: str | None) -> None:
    """Replace the file with this code and station id (None: waiting), readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"code": code, "station": station}))  # owner-only by default


def remove(path: Path) -> None:
    path.unlink(missing_ok=True)


def notice(path: Path) -> str:
    """The line the idle screen shows ("" for none)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return ""
    except OSError as e:
        log.warning("%s: cannot read the hall status: %s", path, e)
        return ""
    try:
        if len(data) > MAX_BYTES:
            raise ValueError(f"longer than {MAX_BYTES} bytes")
        d = json.loads(data)
        code, station = d["code"], d["station"]
        if not isinstance(code, str) or not _CODE.match(code):
            raise ValueError(f"code {code!r} is not digits")
        from rackside.hall.wire.topics import NAME  # a station id is a topic level (re only: no network)

        if station is not None and (not isinstance(station, str) or not NAME.match(station)):
            raise ValueError(f"station {station!r} is not a station id")
    except (ValueError, KeyError, TypeError, RecursionError) as e:
        log.warning("%s: not a hall status (%s): nothing shown", path, str(e)[:80])
        return ""
    spaced = " ".join(code[i:i + 4] for i in range(0, len(code), 4))  # as the console lists it (hall.wire.join.code_text)
    return f"Hall: station {station}" if station else f"Hall: code {spaced} · waiting for a station id"
