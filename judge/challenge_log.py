"""The challenge log: an append-only JSON Lines journal of every adjudicated challenge.

Each record is one line, written with a single `write` and flushed to disk (`fsync`) before
`ChallengeLog.record` returns, so a verdict is only ever shown once it is on disk. The file is
readable by its owner only (0600): it holds per-word results, which are for the director alone
(3.10.7(b)). A crash mid-write can leave at most one torn last line; reading reports it and
ignores it, and every earlier record reads back. The next record starts on a fresh line.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from rackside.judge.adjudication import Adjudication, adjudicate

log = logging.getLogger(__name__)

RECORD_VERSION = 1
KINDS = ("self", "runner")
_STATION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")


def default_log_path() -> Path:
    """Where the station's challenge log lives: `paths.state_dir() / "challenges.jsonl"`."""
    from rackside import paths

    return paths.state_dir() / "challenges.jsonl"


def validate_station(station: str) -> str:
    """Station names go into record ids: 1-32 of A-Z a-z 0-9 . _ -, starting with a letter or digit."""
    if not isinstance(station, str) or not _STATION_RE.fullmatch(station):
        raise ValueError(
            f"station name {station!r} is not allowed: use 1-32 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (e.g. 'hall-2')"
        )
    return station


@dataclass(frozen=True)
class ChallengeRecord:
    id: str
    time: str
    station: str
    table: str | None
    lexicon_name: str
    lexicon_sha256: str
    words: tuple[str, ...]
    acceptable: bool
    per_word: tuple[bool, ...]
    kind: str = "self"

    @property
    def verdict(self) -> str:
        return "ACCEPTABLE" if self.acceptable else "UNACCEPTABLE"

    @property
    def adjudication(self) -> Adjudication:
        return Adjudication(self.words, self.acceptable, self.per_word)

    def to_json(self) -> str:
        return json.dumps(
            {
                "v": RECORD_VERSION,
                "id": self.id,
                "time": self.time,
                "station": self.station,
                "table": self.table,
                "kind": self.kind,
                "lexicon_name": self.lexicon_name,
                "lexicon_sha256": self.lexicon_sha256,
                "words": list(self.words),
                "verdict": self.verdict,
                "acceptable": self.acceptable,
                "per_word": list(self.per_word),
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, line: str) -> "ChallengeRecord":
        """Parse one log line; raises ValueError saying what is wrong."""
        data = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        try:
            words = tuple(data["words"])
            per_word = tuple(data["per_word"])
            record = cls(
                id=data["id"],
                time=data["time"],
                station=data["station"],
                table=data.get("table"),
                lexicon_name=data["lexicon_name"],
                lexicon_sha256=data["lexicon_sha256"],
                words=words,
                acceptable=data["acceptable"],
                per_word=per_word,
                kind=data.get("kind", "self"),
            )
        except KeyError as exc:
            raise ValueError(f"missing field {exc.args[0]!r}") from None
        except TypeError as exc:
            raise ValueError(f"malformed field ({exc})") from None
        for name in ("id", "time", "station", "lexicon_name", "lexicon_sha256", "kind"):
            if not isinstance(getattr(record, name), str):
                raise ValueError(f"field {name!r} is not text")
        if record.table is not None and not isinstance(record.table, str):
            raise ValueError("field 'table' is not text")
        if not all(isinstance(w, str) for w in words) or not all(isinstance(r, bool) for r in per_word):
            raise ValueError("malformed words or per_word")
        if len(words) != len(per_word) or not isinstance(record.acceptable, bool):
            raise ValueError("words, per_word and verdict do not agree")
        if record.acceptable != all(per_word):
            raise ValueError("the verdict does not agree with the per-word results")
        return record


@dataclass(frozen=True)
class LogProblem:
    """A line of the log that could not be read back (a torn last line after a crash, or damage)."""

    line_number: int
    reason: str
    text: str


@dataclass(frozen=True)
class Readjudication:
    record: ChallengeRecord
    now: Adjudication
    differs: bool
    message: str
    lexicon_name: str = ""
    same_lexicon: bool = True


class ChallengeLog:
    """The station's journal of challenges. `clock` returns wall-clock seconds since the epoch;
    it only stamps records for humans (ids are made unique independently of it)."""

    def __init__(self, path: Path, station: str, *, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self.station = validate_station(station)
        self._clock = clock
        self._lock = threading.Lock()
        self._last_id = ""
        self.problems: list[LogProblem] = []

    def _new_id(self, now: datetime) -> str:
        # Station name + UTC second + 24 random bits: unique across stations by the name, and
        # within a station by the random part; time-ordered to the second for humans.
        while True:
            candidate = f"{self.station}-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
            if candidate != self._last_id:
                self._last_id = candidate
                return candidate

    def record(self, adjudication: Adjudication, lexicon, *, table: str | None = None,
               kind: str = "self") -> ChallengeRecord:
        """Append one challenge and make it durable (write, fsync) before returning."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if table is not None:
            table = str(table).strip() or None
        now = datetime.fromtimestamp(self._clock(), tz=timezone.utc)
        with self._lock:
            rec = ChallengeRecord(
                id=self._new_id(now),
                time=now.isoformat(timespec="seconds"),
                station=self.station,
                table=table,
                lexicon_name=lexicon.name,
                lexicon_sha256=lexicon.source_sha256,
                words=tuple(adjudication.words),
                acceptable=bool(adjudication.acceptable),
                per_word=tuple(bool(r) for r in adjudication.per_word),
                kind=kind,
            )
            self._append(rec.to_json().encode("utf-8") + b"\n")
        return rec

    def _append(self, line: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            os.fchmod(fd, 0o600)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                # A crash left a torn line: start on a fresh line so this record reads back.
                line = b"\n" + line
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            _fsync_dir(self.path.parent)

    def records(self) -> list[ChallengeRecord]:
        """Every record that reads back, in order. Lines that do not (a torn last line after a
        crash, or damage) are logged as warnings, kept in `self.problems`, and skipped."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self.problems = []
            return []
        return self._parse(data)

    def _parse(self, data: bytes) -> list[ChallengeRecord]:
        problems: list[LogProblem] = []
        records: list[ChallengeRecord] = []
        lines = data.split(b"\n")
        torn_tail = lines[-1] != b""  # no final newline: the last write did not complete
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            last = number == len(lines)
            try:
                records.append(ChallengeRecord.from_json(raw.decode("utf-8")))
                if last and torn_tail:
                    # Complete JSON but no newline: the record was not fully made durable.
                    log.warning("%s: line %d is missing its final newline; kept", self.path, number)
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # deep nesting: damage too
                reason = "torn last line (a write was interrupted)" if last and torn_tail else f"unreadable ({exc})"
                problem = LogProblem(number, reason, raw[:80].decode("utf-8", "replace"))
                problems.append(problem)
                log.warning("%s: line %d ignored: %s", self.path, number, reason)
        self.problems = problems
        return records

    def find(self, challenge_id: str) -> ChallengeRecord | None:
        wanted = challenge_id.strip()
        for rec in self.records():
            if rec.id == wanted:
                return rec
        return None


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def readjudicate(record: ChallengeRecord, lexicon) -> Readjudication:
    """Re-judge a logged challenge (3.10.11). The re-adjudication is final unless it differs from
    the original, in which case the Tournament Director decides (3.10.11(c))."""
    now = adjudicate(record.words, lexicon)
    differs = now.acceptable != record.acceptable
    same_lexicon = lexicon.source_sha256 == record.lexicon_sha256
    note = "" if same_lexicon else (
        f" Note: judged with {lexicon.name} ({lexicon.source_sha256[:8]}), the original used "
        f"{record.lexicon_name} ({record.lexicon_sha256[:8]})."
    )
    if differs:
        message = (f"Re-adjudication gives {now.verdict}, the original was {record.verdict}: "
                   f"the Tournament Director must decide (3.10.11(c)).{note}")
    else:
        message = f"Re-adjudication agrees: {now.verdict}. This result is final (3.10.11(c)).{note}"
    return Readjudication(record, now, differs, message, getattr(lexicon, "name", ""), same_lexicon)


CSV_FIELDS = ("id", "time", "station", "table", "kind", "lexicon_name", "lexicon_sha256", "words",
              "verdict", "per_word")


def open_private(path: Path) -> TextIO:
    """Open `path` to write text readable by its owner only, like the log itself: exports hold
    the per-word results that players must never see (3.10.7(b))."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # O_CREAT's mode does not apply to a file that already existed
    return open(fd, "w", encoding="utf-8", newline="")


def export_csv(records: Iterable[ChallengeRecord], out: TextIO) -> int:
    """Write the records as CSV for the director (per-word results included). Returns the count."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    count = 0
    for rec in records:
        writer.writerow([
            rec.id, rec.time, rec.station, rec.table or "", rec.kind, rec.lexicon_name,
            rec.lexicon_sha256, " ".join(rec.words), rec.verdict,
            " ".join(f"{w}:{'ok' if ok else 'NOT'}" for w, ok in zip(rec.words, rec.per_word)),
        ])
        count += 1
    return count
