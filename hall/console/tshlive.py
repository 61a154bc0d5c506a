"""The live `tourney.js` (tshout.py) from the console's event, and the file kept up to date.

`render(event)` builds it on the console's event loop (the results store's one owner, resultstore.py):
the event's divisions, its recorded results, config.tsh's options (or the imported tourney.js's).

`LiveFile` writes it into a folder (`[console] tourney_js`, else the console's state directory)
whenever the results or the TSH files change, at most once every WRITE_EVERY_S, whole or not at all
(rackside.atomic: a page or a sync that polls it never reads half a file), readable by all (0644: it
holds only what TSH itself publishes). The disk write runs off the event loop; a write the disk
refuses is logged once and tried again at the next change.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from pathlib import Path, PurePosixPath

from rackside.atomic import write_atomic

from . import tshout

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


def render(event, carried: Carried | None = None) -> tuple[str, list[str]]:
    """The event's tourney.js now, and what of the results could not go in (each naming its table)."""
    live, problems = tshout.live_divisions(list(event.divisions.values()), event.store.results(), event.entry_config())
    bases = (carried or Carried()).of(event.files)
    options = event.config.options if event.config is not None else None
    return tshout.tourney_js(live, options, bases), problems


class LiveFile:
    """tourney.js in `folder`, rewritten after `changed()`, at most once every `every_s`."""

    def __init__(self, folder: Path, build, every_s: float = WRITE_EVERY_S) -> None:
        self.path = Path(folder) / tshout.FILE_NAME
        self.build = build  # () -> text, called on the event loop
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
                text = self.build()
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
