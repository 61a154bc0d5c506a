"""A word list from a USB stick: find it, compile it off the UI thread, report what it became.

A tournament loads its lexicon (CSW or NWL, never shipped) at the station with no keyboard or
shell: the director's lexicon screen lists the word lists on removable media, and the chosen one is
compiled by the ordinary lexicon compiler (`compile_bytes`) in a worker thread while the screen
shows a progress bar. The station's loop polls `ImportJob.progress()`; nothing here touches the
screen, and the compiled file is verified by opening it exactly as the station will.

Where removable media appear: udisks2 mounts them under /run/media/<user>/<label> (or
/media/<user>/<label> on Debian and Raspberry Pi OS), usbmount and hand mounts under /media/<label>.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

MEDIA_ROOTS = (Path("/media"), Path("/run/media"))
WORD_LIST_SUFFIXES = (".txt",)
MAX_DEPTH = 4  # /run/media/<user>/<label>/<folder>/list.txt
MAX_FOUND = 200  # a stick full of text files must not flood the director's screen
MAX_BYTES = 64 << 20  # CSW24 is ~3 MB; anything this size is not a word list
_CHUNK = 1 << 18
# How the bar is shared out: reading dominates on a slow stick and is measured by bytes; the
# compiler itself is one call (about a second for 280,000 words on a Pi 4), then the check.
READ_SHARE, COMPILE_SHARE = 0.6, 0.3


class WordListFile:
    __slots__ = ("path", "size", "root")

    def __init__(self, path: Path, size: int, root: Path) -> None:
        self.path, self.size, self.root = path, size, root

    @property
    def label(self) -> str:
        """'CSW24.txt · 2.9 MB · on HALL-USB/lexicons' (the folder below the mount root)."""
        try:
            where = str(self.path.parent.relative_to(self.root))
        except ValueError:
            where = str(self.path.parent)
        return f"{self.path.name} · {_size(self.size)} · on {where}"


def _size(n: int) -> str:
    if n >= 100_000:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e3:.0f} kB" if n >= 1000 else f"{n} bytes"


def find_word_lists(roots=MEDIA_ROOTS) -> list[WordListFile]:
    """Text files up to MAX_DEPTH folders below each root, hidden ones left out, sorted by path."""
    found: list[WordListFile] = []

    def walk(folder: Path, depth: int) -> None:
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return  # unreadable, or unplugged while we looked
        for e in entries:
            if len(found) >= MAX_FOUND or e.name.startswith("."):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH:
                        walk(Path(e.path), depth + 1)
                elif e.is_file() and e.name.lower().endswith(WORD_LIST_SUFFIXES):
                    size = e.stat().st_size
                    if 0 < size <= MAX_BYTES:
                        found.append(WordListFile(Path(e.path), size, Path(root)))
            except OSError:
                continue

    for root in roots:
        walk(Path(root), 1)
    return sorted(found, key=lambda f: str(f.path).lower())


def lexicon_name_for(path: Path) -> str:
    """The lexicon's name from its file name: 'csw24.txt' -> 'CSW24'."""
    return Path(path).name.rsplit(".", 1)[0].strip().upper() or "IMPORTED"


class ImportResult:
    """What the director sees: the lexicon it became and what the compiler skipped, or why not."""

    __slots__ = ("out", "name", "words", "checksum", "skipped", "error")

    def __init__(self, out: Path | None = None, name: str = "", words: int = 0, checksum: str = "",
                 skipped: tuple[str, ...] = (), error: str = "") -> None:
        self.out, self.name, self.words, self.checksum, self.skipped, self.error = (
            out, name, words, checksum, skipped, error)


def skipped_lines(report) -> tuple[str, ...]:
    """The compiler's skipped lines, one line of text per reason, with up to three examples."""
    from rackside.judge.lexicon import SKIP_REASONS

    total = sum(report.skipped.values())
    out = [f"Skipped {total:,} line{'s' if total != 1 else ''}" + (":" if total else "")]
    for reason in SKIP_REASONS:
        count = report.skipped.get(reason, 0)
        if count:
            shown = ", ".join(f"line {n} {text!r}" for n, text in report.examples.get(reason, []))
            out.append(f"{reason}: {count:,}" + (f" (e.g. {shown})" if shown else ""))
    if report.comment_lines:
        out.append(f"{report.comment_lines:,} comment lines ignored")
    return tuple(out)


class ImportJob:
    """Compile `src` into `out` in a daemon thread. `progress()` is (fraction, stage); `result` is
    None until the thread has finished, then an ImportResult (with `error` set on failure)."""

    def __init__(self, src: Path, out: Path, name: str | None = None) -> None:
        self.src, self.out = Path(src), Path(out)
        self.name = name or lexicon_name_for(src)
        self._lock = threading.Lock()
        self._fraction, self._stage = 0.0, "Reading"
        self.result: ImportResult | None = None
        self._thread = threading.Thread(target=self._run, name="lexicon-import", daemon=True)

    def start(self) -> "ImportJob":
        self._thread.start()
        return self

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    @property
    def done(self) -> bool:
        return self.result is not None

    def progress(self) -> tuple[float, str]:
        with self._lock:
            return self._fraction, self._stage

    def _set(self, fraction: float, stage: str) -> None:
        with self._lock:
            self._fraction, self._stage = fraction, stage

    def _run(self) -> None:
        try:
            self.result = self._compile()
        except Exception as exc:  # a worker must always report: the screen waits for it
            self.result = ImportResult(error=f"{self.src.name}: {exc}")

    def _compile(self) -> ImportResult:
        from rackside.judge.lexicon import Lexicon, LexiconError, compile_bytes

        try:
            size = self.src.stat().st_size
            if size > MAX_BYTES:
                return ImportResult(error=f"{self.src.name}: {_size(size)} is too large for a word list")
            chunks, got = [], 0
            with open(self.src, "rb") as fh:
                while chunk := fh.read(_CHUNK):
                    chunks.append(chunk)
                    got += len(chunk)
                    self._set(READ_SHARE * min(1.0, got / max(size, 1)), "Reading")
        except OSError as exc:
            return ImportResult(error=f"{self.src.name}: cannot read it ({exc.strerror or exc}); "
                                      "was the stick removed?")
        self._set(READ_SHARE, "Compiling")
        try:
            report = compile_bytes(b"".join(chunks), self.out, self.name, label=self.src.name)
            self._set(READ_SHARE + COMPILE_SHARE, "Checking")
            with Lexicon.open(self.out) as lexicon:  # verified as the station will open it
                result = ImportResult(self.out, lexicon.name, lexicon.word_count, lexicon.short_checksum,
                                      skipped_lines(report))
        except LexiconError as exc:
            return ImportResult(error=str(exc))
        self._set(1.0, "Done")
        return result
