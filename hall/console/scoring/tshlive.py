"""The live `tourney.js` (tshout.py) from the console's event, and the file kept up to date.

`gather(event)` takes what it is made of on the console's event loop (the results store's one
owner, resultstore.py): the event's divisions, its recorded results, its TSH files and options, all
values nothing changes in place (an import makes new ones). `render(gathered)` writes it, off the
loop (a thread: a 1,000-player division with 30 rounds recorded takes a few hundred ms,
bench/tourney_js_bench.py).

`LiveFile` writes it into a folder (`[console] tourney_js`, else the console's state directory)
whenever the results or the TSH files change, at most once every WRITE_EVERY_S, whole or not at all
(rackside.atomic: a page or a sync that polls it never reads half a file), readable by all (0644: it
holds only what TSH itself publishes). The disk write runs off the event loop; a write the disk
refuses is logged once and tried again at the next change.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from pathlib import Path, PurePosixPath

from rackside.atomic import write_atomic

from . import tshout
from .results import Recorded

log = logging.getLogger("rackside.hall.console")
WRITE_EVERY_S = 2.0  # at most one write in this time, however many results come in
FILE_MODE = 0o644  # public: what TSH publishes, for a web server or a sync to read


class Carried:
    """carried() of each imported tourney.js, read again only when its bytes change (a 6-division
    event's file is a few hundred KB: reading it at every write would cost the loop for nothing)."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[str, dict]] = {}

    def of(self, files: dict[str, bytes | str]) -> dict[str, dict]:
        out = {}
        for name, data in files.items():
            base = PurePosixPath(name.replace("\\", "/")).name
            if not base.endswith(".js"):
                continue
            raw = data.encode("utf-8") if isinstance(data, str) else data
            digest = hashlib.sha256(raw).hexdigest()
            if self.seen.get(base, ("",))[0] != digest:
                text = data if isinstance(data, str) else raw.decode("utf-8", errors="replace")
                self.seen[base] = (digest, tshout.carried(text.lstrip("\ufeff"), base))
            out[base] = self.seen[base][1]
        return out


class Rows:
    """The store's results, each decoded once: read again, only a result that changed is decoded
    (a 15,000-result event: 15 ms on the loop instead of 250, bench/tourney_js_bench.py)."""

    def __init__(self) -> None:
        self.decoded: dict[str, Recorded] = {}

    def of(self, store) -> list[Recorded]:
        keep = {b: self.decoded.get(b) or Recorded.from_dict(json.loads(b)) for b in store.bodies()}
        self.decoded = keep  # bounded by the store: what is no longer there is dropped
        return list(keep.values())


def gather(event, rows: Rows | None = None) -> tuple:
    """What the event's tourney.js is made of, taken on the event loop."""
    results = (rows or Rows()).of(event.store)
    return (list(event.divisions.values()), results, event.entry_config(), dict(event.files),
            event.config.options if event.config is not None else None)


def render(gathered: tuple, carried: Carried | None = None) -> tuple[str, list[str]]:
    """The event's tourney.js, and what of the results could not go in (each naming its table)."""
    divisions, rows, entry_config, files, options = gathered
    live, problems = tshout.live_divisions(divisions, rows, entry_config)
    return tshout.tourney_js(live, options, (carried or Carried()).of(files)), problems


class LiveFile:
    """tourney.js in `folder`, rewritten after `changed()`, at most once every `every_s`."""

    def __init__(self, folder: Path, gather, render, every_s: float = WRITE_EVERY_S) -> None:
        self.path = Path(folder) / tshout.FILE_NAME
        self.gather = gather  # () -> what render needs, called on the event loop
        self.render = render  # gathered -> text, called on a thread
        self.every_s = every_s
        self.dirty = asyncio.Event()
        self.written: str | None = None
        self.failing = False
        self.dirty.set()  # written once at start: the folder has the event as the console has it

    def changed(self) -> None:
        self.dirty.set()

    async def run(self) -> None:
        while True:
            await self.dirty.wait()
            self.dirty.clear()
            try:
                text = await asyncio.to_thread(self.render, self.gather())
            except Exception:  # a bug here must not stop the console: said, and tried at the next change
                log.exception("console: tourney.js could not be built")
                text = None
            if text is not None and text != self.written:
                try:
                    await asyncio.to_thread(write_atomic, self.path, text, FILE_MODE)
                    self.written = text
                    if self.failing:
                        log.info("console: %s written again", self.path)
                    self.failing = False
                except OSError as e:
                    if not self.failing:
                        log.error("console: %s cannot be written (%s): tried again at the next result", self.path, e)
                    self.failing = True
            await asyncio.sleep(self.every_s)
