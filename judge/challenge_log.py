"""The challenge log: an append-only JSON Lines journal of every adjudicated challenge.

Each record is one line, written with a single `write` and flushed to disk (`fsync`) before
`ChallengeLog.record` returns, so a verdict is only ever shown once it is on disk. The file is
readable by its owner only (0600): it holds per-word results, which are for the director alone
(3.10.7(b)). A crash mid-write can leave at most one torn last line; reading reports it and
ignores it, and every earlier record reads back. The next record starts on a fresh line.

Each record's id ends in six random hex digits, unique in the log: that is its short id, which a
runner copies onto the slip and which `find` (the station, `rackside log show`, re-adjudication)
accepts in any case, as it accepts the full id in any case.
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
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from rackside.atomic import Disk, fsync_dir
from rackside.judge.adjudication import Adjudication, adjudicate
from rackside.values import Record

log = logging.getLogger(__name__)

RECORD_VERSION = 1
KINDS = ("self", "runner")
_STATION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
SHORT_ID_CHARS = 6


def short_id(challenge_id: str) -> str:
    """The 6-character short id of a record: the random end of its id, upper-cased for the
    station's upper-case keyboard and the runner's slip."""
    return challenge_id[-SHORT_ID_CHARS:].upper()


class AmbiguousId(ValueError):
    """A short id that matches more than one challenge (only possible in a log written before
    short ids were kept unique); the message asks for the full id."""


def default_log_path() -> Path:
    """Where the station's challenge log lives (`rackside.paths.challenge_log()`)."""
    from rackside import paths

    return paths.challenge_log()


def validate_station(station: str) -> str:
    """Station names go into record ids: 1-32 of A-Z a-z 0-9 . _ -, starting with a letter or digit."""
    if not isinstance(station, str) or not _STATION_RE.fullmatch(station):
        raise ValueError(
            f"station name {station!r} is not allowed: use 1-32 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (e.g. 'hall-2')"
        )
    return station


class ChallengeRecord(Record):
    __slots__ = ("id", "time", "station", "table", "lexicon_name", "lexicon_sha256", "words", "acceptable",
                 "per_word", "kind")
    _defaults = {"kind": "self"}
    id: str
    time: str
    station: str
    table: str | None
    lexicon_name: str
    lexicon_sha256: str
    words: tuple[str, ...]
    acceptable: bool
    per_word: tuple[bool, ...]
    kind: str

    @property
    def short_id(self) -> str:
        return short_id(self.id)

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


class LogProblem(Record):
    """A line of the log that could not be read back (a torn last line after a crash, or damage)."""

    __slots__ = ("line_number", "reason", "text")
    line_number: int
    reason: str
    text: str


class Readjudication(Record):
    """A re-adjudication (3.10.11): `differs` when the verdict differs from the original's,
    `same_lexicon` when the lexicon is the original's (by its checksum). Only the same verdict
    with the same lexicon is `final`; otherwise the Tournament Director decides (3.10.11(c))."""

    __slots__ = ("record", "now", "differs", "message", "lexicon_name", "same_lexicon")
    _defaults = {"lexicon_name": "", "same_lexicon": True}
    record: ChallengeRecord
    now: Adjudication
    differs: bool
    message: str
    lexicon_name: str
    same_lexicon: bool

    @property
    def final(self) -> bool:
        return self.same_lexicon and not self.differs


class ChallengeLog:
    """The station's journal of challenges. `clock` returns wall-clock seconds since the epoch;
    it only stamps records for humans (ids are made unique independently of it). `disk` makes the
    file calls of each append (`rackside.atomic.Disk`: `os` itself, or a test's failing card)."""

    def __init__(self, path: Path, station: str, *, clock: Callable[[], float] = time.time,
                 log_problems: bool = True, disk: Disk = os) -> None:
        self.path = Path(path)
        self.disk = disk
        self.station = validate_station(station)
        self._clock = clock
        self._lock = threading.Lock()
        self._short_ids: set[str] | None = None  # of the records in the file, read at the first record
        self.problems: list[LogProblem] = []
        # The station logs each damaged line once (it reads the log each time the director opens
        # it); a command that reports `problems` itself passes log_problems=False, so the director
        # reads each warning once (issue 9).
        self._log_problems = log_problems
        self._warned: set[tuple[int, str, str]] = set()

    def _new_id(self, now: datetime) -> str:
        # Station name + UTC second + 24 random bits: unique across stations by the name, and
        # within the log by the random part, whose 6 hex digits are the short id (kept unique
        # here); time-ordered to the second for humans.
        if self._short_ids is None:
            self._short_ids = {r.short_id for r in self.records()}
        while True:
            candidate = f"{self.station}-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
            if short_id(candidate) not in self._short_ids:
                self._short_ids.add(short_id(candidate))
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
        disk = self.disk
        fd = disk.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            disk.fchmod(fd, 0o600)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                # A crash left a torn line: start on a fresh line so this record reads back.
                line = b"\n" + line
            view = memoryview(line)
            while view:
                written = disk.write(fd, view)
                view = view[written:]
            disk.fsync(fd)
        finally:
            disk.close(fd)
        if created:
            fsync_dir(self.path.parent, disk=disk)

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
                if self._log_problems and problem.values() not in self._warned:
                    self._warned.add(problem.values())
                    log.warning("%s: line %d ignored: %s", self.path, number, reason)
        self.problems = problems
        return records

    def find(self, challenge_id: str) -> ChallengeRecord | None:
        """The record with this id, in any case, or with this 6-character short id (the one
        lookup for the station and every command). Raises AmbiguousId for a short id that
        matches several records."""
        return find_record(self.records(), challenge_id)


def find_record(records: Iterable[ChallengeRecord], challenge_id: str) -> ChallengeRecord | None:
    """See ChallengeLog.find. Ids are typed on an upper-case keyboard, so case never matters."""
    wanted = challenge_id.strip().lower()
    if not wanted:
        return None
    by_short = []
    for rec in records:
        if rec.id.lower() == wanted:
            return rec
        if len(wanted) == SHORT_ID_CHARS and rec.id[-SHORT_ID_CHARS:].lower() == wanted:
            by_short.append(rec)
    if len(by_short) > 1:
        raise AmbiguousId(f"short id {challenge_id.strip().upper()} matches {len(by_short)} challenges: "
                          "give the full id")
    return by_short[0] if by_short else None


def readjudicate(record: ChallengeRecord, lexicon) -> Readjudication:
    """Re-judge a logged challenge (3.10.11). It is final only when it agrees with the original
    and used the original's lexicon (the same checksum); a different verdict, or another lexicon,
    goes to the Tournament Director (3.10.11(c))."""
    now = adjudicate(record.words, lexicon)
    differs = now.acceptable != record.acceptable
    same_lexicon = lexicon.source_sha256 == record.lexicon_sha256
    used = f"{lexicon.name} ({lexicon.source_sha256[:8]})"
    original = f"{record.lexicon_name} ({record.lexicon_sha256[:8]})"
    if differs:
        message = (f"Re-adjudication gives {now.verdict}, the original was {record.verdict}: "
                   "the Tournament Director must decide (3.10.11(c)).")
        if not same_lexicon:
            message += f" It also used another lexicon: {used}, the original {original}."
    elif not same_lexicon:
        message = (f"Re-adjudication gives {now.verdict}, as the original did, but with another lexicon: "
                   f"{used}, the original {original}. A re-adjudication is made with the original's lexicon: "
                   "the Tournament Director must decide (3.10.11(c)).")
    else:
        message = (f"Re-adjudication agrees with the original: {now.verdict}, with the same lexicon {used}. "
                   "This result is final (3.10.11(c)).")
    return Readjudication(record, now, differs, message, getattr(lexicon, "name", ""), same_lexicon)


CSV_FIELDS = ("id", "time", "station", "table", "kind", "lexicon_name", "lexicon_sha256", "words",
              "verdict", "per_word")


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
