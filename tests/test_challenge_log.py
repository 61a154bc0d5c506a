"""The challenge log: durable appends, owner-only file, torn lines after a crash, re-adjudication
(3.10.11) and CSV export."""

from __future__ import annotations

import csv
import io
import json
import logging
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rackside.judge.adjudication import adjudicate
from rackside.judge.challenge_log import (
    ChallengeLog,
    ChallengeRecord,
    default_log_path,
    export_csv,
    readjudicate,
    validate_station,
)
from support.disk import Disk


@dataclass
class FakeLexicon:
    """Anything with `in`, a name and a source SHA-256 can be logged against."""

    words: frozenset
    name: str = "TESTLEX"
    source_sha256: str = "ab" * 32

    def __contains__(self, word):
        return word in self.words


LEX = FakeLexicon(frozenset({"CAT", "DOG", "QI"}))
NOW = 1_795_000_000.0  # a fixed wall clock for record times


def make_log(path: Path, station: str = "hall-1") -> ChallengeLog:
    return ChallengeLog(path, station, clock=lambda: NOW)


def test_record_is_written_whole_and_reads_back(tmp_path):
    path = tmp_path / "log" / "challenges.jsonl"
    log = make_log(path)
    rec = log.record(adjudicate(("CAT", "XQ"), LEX), LEX, table="12", kind="runner")
    assert rec.id.startswith("hall-1-")
    assert rec.time == "2026-11-18T11:06:40+00:00"
    assert (rec.station, rec.table, rec.kind) == ("hall-1", "12", "runner")
    assert (rec.lexicon_name, rec.lexicon_sha256) == ("TESTLEX", "ab" * 32)
    assert rec.words == ("CAT", "XQ") and rec.per_word == (True, False) and not rec.acceptable
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    assert json.loads(raw)["verdict"] == "UNACCEPTABLE"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert log.records() == [rec]
    assert log.find(rec.id) == rec
    assert log.find("nope") is None


def test_existing_file_is_made_owner_only(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("")
    path.chmod(0o644)
    make_log(path).record(adjudicate(("CAT",), LEX), LEX)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_each_record_is_fsynced_before_record_returns(tmp_path):
    path = tmp_path / "c.jsonl"
    synced = []
    disk = Disk()
    # the lines in the file as each fsync of it is made
    disk.listeners.append(lambda name, at: synced.append(path.read_bytes().count(b"\n")) if (name, at) == ("fsync", path) else None)
    log = ChallengeLog(path, "hall-1", clock=lambda: NOW, disk=disk)
    for n in range(1, 4):
        log.record(adjudicate(("CAT",), LEX), LEX)
        assert n in synced  # an fsync ran with the nth line written, before record returned


def test_ids_are_unique_across_stations_and_records(tmp_path):
    path = tmp_path / "shared.jsonl"
    logs = [make_log(path, f"station-{i}") for i in range(3)]
    ids = [lg.record(adjudicate(("CAT",), LEX), LEX).id for _ in range(50) for lg in logs]
    assert len(set(ids)) == len(ids)
    assert all(i.split("-2026")[0] in {"station-0", "station-1", "station-2"} for i in ids)
    assert len(logs[0].records()) == 150


@pytest.mark.parametrize("bad", ["", " x", "a b", "x" * 33, "-lead", "hall/1", "ünï"])
def test_bad_station_names_are_refused(bad):
    with pytest.raises(ValueError, match="station name"):
        validate_station(bad)


def test_bad_kind_is_refused(tmp_path):
    with pytest.raises(ValueError, match="kind"):
        make_log(tmp_path / "c.jsonl").record(adjudicate(("CAT",), LEX), LEX, kind="robot")
    assert not (tmp_path / "c.jsonl").exists()


def test_missing_log_reads_as_empty(tmp_path):
    assert make_log(tmp_path / "none.jsonl").records() == []
    assert default_log_path().name == "challenges.jsonl"


def test_a_torn_last_line_is_reported_ignored_and_the_next_record_reads_back(tmp_path, caplog):
    path = tmp_path / "c.jsonl"
    log = make_log(path)
    first = log.record(adjudicate(("CAT",), LEX), LEX)
    second = log.record(adjudicate(("DOG", "QI"), LEX), LEX)
    full = log.record(adjudicate(("QI",), LEX), LEX).to_json()
    # A crash mid-write: half of a third line reaches the disk, with no newline.
    with open(path, "ab") as f:
        f.write(full.encode()[: len(full) // 2])
    with caplog.at_level(logging.WARNING, logger="rackside.judge.challenge_log"):
        records = log.records()
    assert records[:2] == [first, second] and len(records) == 3
    assert [p.reason for p in log.problems] == ["torn last line (a write was interrupted)"]
    assert "line 4 ignored" in caplog.text
    # The next record starts on a fresh line, so it reads back; the torn line stays ignored.
    fourth = log.record(adjudicate(("DOG",), LEX), LEX)
    assert log.records()[-1] == fourth
    assert len(log.records()) == 4
    assert len(log.problems) == 1 and log.problems[0].line_number == 4


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 6), data=st.data())
def test_a_crash_at_any_byte_keeps_every_complete_record(n, data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.jsonl"
        log = make_log(path)
        recs = [log.record(adjudicate(("CAT", "DOG")[: 1 + i % 2], LEX), LEX, table=str(i)) for i in range(n)]
        raw = path.read_bytes()
        cut = data.draw(st.integers(0, len(raw)), label="cut")
        path.write_bytes(raw[:cut])
        complete = raw[:cut].count(b"\n")
        tail = raw[:cut].rsplit(b"\n", 1)[-1]
        whole_tail = bool(tail) and tail == raw.split(b"\n")[complete]  # cut just before a newline
        got = log.records()
        assert got == recs[: complete + whole_tail]
        assert len(log.problems) == (1 if tail and not whole_tail else 0)


def test_damaged_lines_in_the_middle_are_skipped(tmp_path):
    path = tmp_path / "c.jsonl"
    log = make_log(path)
    a = log.record(adjudicate(("CAT",), LEX), LEX)
    with open(path, "ab") as f:
        f.write(b'{"not": "a record"}\n\xff\xfe\n[1,2]\n')
    b = log.record(adjudicate(("DOG",), LEX), LEX)
    assert log.records() == [a, b]
    assert len(log.problems) == 3


def test_a_line_of_deeply_nested_brackets_is_skipped_not_a_crash(tmp_path):
    path = tmp_path / "c.jsonl"
    log = make_log(path)
    a = log.record(adjudicate(("CAT",), LEX), LEX)
    with open(path, "ab") as f:
        f.write(b"[" * 100_000 + b"\n")
    b = log.record(adjudicate(("DOG",), LEX), LEX)
    assert log.records() == [a, b]
    assert len(log.problems) == 1


def test_an_export_over_an_existing_file_is_owner_only(tmp_path):
    from rackside.judge.service import JudgeService

    target = tmp_path / "export.csv"
    target.write_text("old")
    target.chmod(0o644)
    JudgeService(log_path=tmp_path / "none.jsonl").export_csv(target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text().startswith("id,time,")


def test_malformed_records_are_refused():
    rec = ChallengeRecord("s-1", "t", "s", None, "L", "00", ("CAT",), True, (False,))
    with pytest.raises(ValueError, match="verdict"):
        ChallengeRecord.from_json(rec.to_json())
    good = json.loads(ChallengeRecord("s-1", "t", "s", "3", "L", "00", ("CAT",), True, (True,)).to_json())
    assert ChallengeRecord.from_json(json.dumps(good)).table == "3"
    for key, value, message in [("id", 7, "'id' is not text"), ("table", 3, "'table' is not text"),
                                ("per_word", [1], "malformed"), ("words", 5, "malformed field")]:
        with pytest.raises(ValueError, match=message):
            ChallengeRecord.from_json(json.dumps({**good, key: value}))
    with pytest.raises(ValueError, match="missing field 'words'"):
        ChallengeRecord.from_json(json.dumps({k: v for k, v in good.items() if k != "words"}))


def test_readjudication_agreeing_is_final(tmp_path):
    log = make_log(tmp_path / "c.jsonl")
    rec = log.record(adjudicate(("CAT", "DOG"), LEX), LEX)
    result = readjudicate(log.find(rec.id), LEX)
    assert not result.differs and result.same_lexicon
    assert result.now.acceptable
    assert result.final
    assert result.message == ("Re-adjudication agrees with the original: ACCEPTABLE, with the same lexicon "
                              "TESTLEX (abababab). This result is final (3.10.11(c)).")


def test_readjudication_that_differs_goes_to_the_director(tmp_path):
    log = make_log(tmp_path / "c.jsonl")
    rec = log.record(adjudicate(("CAT", "ZAX"), LEX), LEX)
    newer = FakeLexicon(frozenset({"CAT", "ZAX"}), name="NEWLEX", source_sha256="cd" * 32)
    result = readjudicate(rec, newer)
    assert result.differs and not result.same_lexicon
    assert "Re-adjudication gives ACCEPTABLE, the original was UNACCEPTABLE" in result.message
    assert "the Tournament Director must decide (3.10.11(c))" in result.message
    assert "NEWLEX (cdcdcdcd)" in result.message and "TESTLEX (abababab)" in result.message
    assert not result.final


def test_csv_export(tmp_path):
    log = make_log(tmp_path / "c.jsonl")
    log.record(adjudicate(("CAT", "ZAX"), LEX), LEX, table="7")
    log.record(adjudicate(("DOG",), LEX), LEX)
    out = io.StringIO()
    assert export_csv(log.records(), out) == 2
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["verdict"] for r in rows] == ["UNACCEPTABLE", "ACCEPTABLE"]
    assert rows[0]["words"] == "CAT ZAX" and rows[0]["per_word"] == "CAT:ok ZAX:NOT" and rows[0]["table"] == "7"
    assert rows[1]["table"] == "" and rows[1]["station"] == "hall-1"
