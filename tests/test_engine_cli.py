"""`rackside judge`, `rackside lexicon ...` and `rackside log ...`, run in-process through
`rackside.main`, with RACKSIDE_STATE_DIR pointing at a private folder (tests/conftest.py)."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from rackside import cli as rackside_cli
from rackside.judge.adjudication import adjudicate
from rackside.judge.challenge_log import ChallengeLog, default_log_path
from rackside.judge.lexicon import Lexicon, compile_lexicon, default_lexicon_path, lexicon_dir
from rackside.judge.settings import default_settings_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = rackside_cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def state(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("RACKSIDE_STATE_DIR", str(folder))
    return folder


@pytest.fixture()
def small(tmp_path) -> Path:
    src = tmp_path / "small.txt"
    src.write_text("# tiny\ncat\ndog\nqi\nzax\n")
    out = tmp_path / "small.rlex"
    compile_lexicon(src, out, "SMALL")
    return out


# --- judge ------------------------------------------------------------------------------------


def test_judge_with_an_explicit_lexicon(capsys, state, small):
    assert run(capsys, "judge", "--lexicon", str(small), "cat", " Dog ") == (0, "ACCEPTABLE\n", "")
    code, out, err = run(capsys, "judge", "--lexicon", str(small), "cat", "dogz", "qi")
    assert (code, out, err) == (1, "UNACCEPTABLE\n", "")
    assert "DOGZ" not in out  # never which word failed (3.10.7(b))
    assert not default_lexicon_path().exists()  # an explicit lexicon needs no default


def test_judge_uses_enable_until_a_director_sets_another(capsys, state, small):
    assert run(capsys, "judge", "zyzzyvas", "qat")[:2] == (0, "ACCEPTABLE\n")
    assert default_lexicon_path().exists()
    assert run(capsys, "judge", "zax")[:2] == (0, "ACCEPTABLE\n")  # ZAX is in ENABLE
    assert run(capsys, "judge", "qi")[:2] == (1, "UNACCEPTABLE\n")  # QI is not
    code, out, _ = run(capsys, "lexicon", "use", str(small))
    assert code == 0 and "SMALL (4 words" in out
    assert run(capsys, "judge", "qi")[:2] == (0, "ACCEPTABLE\n")
    assert run(capsys, "judge", "zyzzyvas")[:2] == (1, "UNACCEPTABLE\n")
    assert run(capsys, "lexicon", "use", "default")[0] == 0
    assert run(capsys, "judge", "qi")[:2] == (1, "UNACCEPTABLE\n")


@pytest.mark.parametrize(
    "words, message",
    [
        (["c4t"], "Word 1 'C4T' has a character that is not a letter A-Z"),
        (["cat", "x"], "Word 2 'X' is too short"),
        (["cat"] * 9, "at most 8"),
        (["abcdefghijklmnop"], "too long"),
    ],
)
def test_judge_bad_input_exits_2_with_a_message(capsys, state, small, words, message):
    code, out, err = run(capsys, "judge", "--lexicon", str(small), *words)
    assert code == 2 and out == ""
    assert message in err


def test_judge_bad_or_missing_lexicon_exits_2(capsys, state, small, tmp_path):
    code, out, err = run(capsys, "judge", "--lexicon", str(tmp_path / "none.rlex"), "cat")
    assert (code, out) == (2, "") and "none.rlex: cannot open the lexicon" in err
    damaged = tmp_path / "damaged.rlex"
    damaged.write_bytes(small.read_bytes()[:-10])
    code, out, err = run(capsys, "judge", "--lexicon", str(damaged), "cat")
    assert (code, out) == (2, "") and "damaged.rlex: truncated" in err


def test_a_configured_lexicon_that_disappears_is_an_error_not_a_fallback(capsys, state, small):
    assert run(capsys, "lexicon", "use", str(small))[0] == 0
    (lexicon_dir() / small.name).unlink()  # the copy `lexicon use` made in the lexicon folder
    code, out, err = run(capsys, "judge", "cat")
    assert (code, out) == (2, "") and "small.rlex: cannot open the lexicon" in err


def test_judge_prints_guidance(capsys, state, small):
    code, out, _ = run(capsys, "judge", "--lexicon", str(small), "--guidance", "cat", "dog")
    assert code == 0
    assert out == "ACCEPTABLE\nThe play stands. Challenger loses 10 points: 2 words × 5 (3.10.15(b)(ii)).\n"
    code, out, _ = run(capsys, "judge", "--lexicon", str(small), "--rule", "increasing", "--prior", "3", "cat")
    assert "Challenger loses 20 points" in out
    code, out, _ = run(capsys, "judge", "--lexicon", str(small), "--rule", "double", "cat", "dogs")
    assert out.splitlines() == ["UNACCEPTABLE", "The play comes off the board: the challenged player loses the turn (3.10.15(a))."]
    code, _, err = run(capsys, "judge", "--lexicon", str(small), "--rule", "triple", "cat")
    assert code == 2 and "allowed: single, 5-per-word" in err


def test_judge_reports_a_corrupt_settings_file(capsys, state, small):
    default_settings_path().parent.mkdir(parents=True, exist_ok=True)
    default_settings_path().write_text('{"challenge_rule": "triple"}')
    code, _, err = run(capsys, "judge", "cat")
    assert code == 2 and "key 'challenge_rule'" in err and "allowed:" in err


# --- lexicon ----------------------------------------------------------------------------------


def test_lexicon_compile_and_info(capsys, state, tmp_path):
    src = tmp_path / "list.txt"
    src.write_bytes("\ufeffCAT feline\r\nDOG\r\ncat\r\nABCDEFGHIJKLMNOPQ\r\n".encode("utf-16-le"))
    out_file = tmp_path / "out" / "t.rlex"
    code, out, err = run(capsys, "lexicon", "compile", str(src), "-o", str(out_file), "--name", "T24")
    assert code == 0, err
    assert "T24: 2 words" in out and "skipped 2 lines" in out
    assert "duplicate: 1" in out and "too long: 1" in out
    code, out, _ = run(capsys, "lexicon", "info", str(out_file))
    assert code == 0
    lines = dict(line.split(None, 1) if not line.startswith("source") else ("sha", line.split()[-1])
                 for line in out.splitlines())
    assert lines["name"] == "T24" and lines["words"] == "2"
    assert lines["sha"] == Lexicon.open(out_file).source_sha256


def test_lexicon_compile_errors_exit_2(capsys, state, tmp_path):
    code, _, err = run(capsys, "lexicon", "compile", str(tmp_path / "missing.txt"), "-o", str(tmp_path / "x.rlex"),
                       "--name", "X")
    assert code == 2 and "missing.txt: cannot read the word list" in err
    junk = tmp_path / "junk.rlex"
    junk.write_bytes(b"\x00" * 1000)
    code, _, err = run(capsys, "lexicon", "info", str(junk))
    assert code == 2 and "not a compiled Rackside lexicon" in err
    with pytest.raises(SystemExit):  # argparse: --name is required
        rackside_cli.main(["lexicon", "compile", str(junk), "-o", str(junk)])


def test_install_default_is_idempotent(capsys, state):
    code, out, _ = run(capsys, "lexicon", "install-default")
    assert code == 0 and str(default_lexicon_path()) in out
    mtime = os.stat(default_lexicon_path()).st_mtime_ns
    assert run(capsys, "lexicon", "install-default")[0] == 0
    assert os.stat(default_lexicon_path()).st_mtime_ns == mtime


def test_lexicon_use_refuses_a_bad_file(capsys, state, tmp_path):
    bad = tmp_path / "bad.rlex"
    bad.write_text("nope")
    code, _, err = run(capsys, "lexicon", "use", str(bad))
    assert code == 2 and "bad.rlex" in err
    assert not default_settings_path().exists()


# --- log --------------------------------------------------------------------------------------


@pytest.fixture()
def logged(state, small):
    log = ChallengeLog(default_log_path(), "hall-3")
    with Lexicon.open(small) as lex:
        a = log.record(adjudicate(("CAT", "DOG"), lex), lex, table="4")
        b = log.record(adjudicate(("CAT", "ZYZZYVAS"), lex), lex)
    return a, b


def test_log_export_csv(capsys, logged, tmp_path):
    code, out, err = run(capsys, "log", "export", "--csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["id"] for r in rows] == [logged[0].id, logged[1].id]
    assert rows[1]["per_word"] == "CAT:ok ZYZZYVAS:NOT"
    target = tmp_path / "export.csv"
    assert run(capsys, "log", "export", "--csv", "-o", str(target))[0] == 0
    assert target.read_text() == out
    assert target.stat().st_mode & 0o777 == 0o600  # per-word results: the director's eyes only


def test_log_reports_a_torn_last_line(capsys, logged):
    with open(default_log_path(), "ab") as f:
        f.write(b'{"v":1,"id":"hall-3-2')
    code, out, err = run(capsys, "log", "show")
    assert code == 0 and out.count("\n") == 2
    assert "line 3: torn last line" in err


def test_log_show_one(capsys, logged):
    code, out, _ = run(capsys, "log", "show", logged[1].id)
    assert code == 0 and "ZYZZYVAS        NOT acceptable" in out and "UNACCEPTABLE" in out
    code, _, err = run(capsys, "log", "show", "hall-3-none")
    assert code == 2 and "no challenge with id" in err


def test_log_readjudicate(capsys, logged, small):
    code, out, _ = run(capsys, "log", "readjudicate", "--lexicon", str(small), logged[1].id)
    assert code == 0 and "Re-adjudication agrees with the original: UNACCEPTABLE" in out
    # Judged against ENABLE (the configured default), ZYZZYVAS is good: the director decides.
    code, out, _ = run(capsys, "log", "readjudicate", logged[1].id)
    assert code == 1
    assert "the Tournament Director must decide (3.10.11(c))" in out
    code, _, err = run(capsys, "log", "readjudicate", "missing-id")
    assert code == 2 and "no challenge with id 'missing-id'" in err


def test_log_file_option(capsys, state, tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps({"x": 1}) + "\n")
    code, out, err = run(capsys, "log", "--file", str(path), "show")
    assert code == 0 and out == f"No challenges: {path} has no readable record.\n" and "line 1: unreadable" in err
