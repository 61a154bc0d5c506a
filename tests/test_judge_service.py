"""The judge service (judge/service.py): one behaviour for the station, `rackside judge` and
`rackside log` — finding a challenge by id (any case, or its 6-character short id), CSV export
written atomically, re-adjudication under 3.10.11 — and the commands a director runs around it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rackside import cli as rackside_cli
from rackside.judge.adjudication import adjudicate
from rackside.judge.challenge_log import ChallengeLog, default_log_path
from rackside.judge.lexicon import Lexicon, compile_lexicon, default_lexicon_path, lexicon_dir


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = rackside_cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def make(tmp_path: Path, name: str, words: str) -> Path:
    src = tmp_path / f"{name}.txt"
    src.write_text(words.replace(" ", "\n") + "\n")
    out = tmp_path / f"{name.lower()}.rlex"
    compile_lexicon(src, out, name)
    return out


@pytest.fixture()
def small(tmp_path) -> Path:
    return make(tmp_path, "SMALL", "cat dog qi zax")


@pytest.fixture()
def logged(small):
    log = ChallengeLog(default_log_path(), "hall-3")
    with Lexicon.open(small) as lex:
        return [log.record(adjudicate(("CAT",), lex), lex, table="7"),
                log.record(adjudicate(("QI", "ZYZZYVAS"), lex), lex, table="9")]


# --- finding a challenge: the station and the CLI agree (issue 8 item 2, issue 10 item 9) ------


def test_short_id_is_six_characters_and_unique_in_the_log(logged):
    from rackside.judge.challenge_log import short_id

    ids = [short_id(r.id) for r in logged]
    assert all(len(s) == 6 for s in ids) and len(set(ids)) == 2
    assert all(s == s.upper() for s in ids)  # typed on the station's upper-case keyboard


def test_a_new_short_id_never_repeats_one_in_the_log(tmp_path, monkeypatch, small):
    from rackside.judge import challenge_log as logmod

    draws = iter(["abc123", "abc123", "abc123", "def456"])
    monkeypatch.setattr(logmod.secrets, "token_hex", lambda n: next(draws))
    log = ChallengeLog(tmp_path / "c.jsonl", "s1")
    with Lexicon.open(small) as lex:
        first = log.record(adjudicate(("CAT",), lex), lex)
        # A fresh reader of the same file (another process) must not reuse it either.
        second = ChallengeLog(tmp_path / "c.jsonl", "s1").record(adjudicate(("CAT",), lex), lex)
    assert logmod.short_id(first.id) == "ABC123" and logmod.short_id(second.id) == "DEF456"


@pytest.mark.parametrize("how", ["exact", "lower", "upper", "short", "short-lower"])
def test_cli_finds_a_challenge_as_the_station_does(capsys, logged, how):
    from rackside.judge.challenge_log import short_id

    rec = logged[1]
    wanted = {"exact": rec.id, "lower": rec.id.lower(), "upper": rec.id.upper(), "short": short_id(rec.id),
              "short-lower": short_id(rec.id).lower()}[how]
    code, out, err = run(capsys, "log", "show", wanted)
    assert code == 0, err
    assert rec.id in out and "ZYZZYVAS" in out
    code, out, err = run(capsys, "log", "readjudicate", wanted)
    assert rec.id in out


def test_service_find_is_the_one_lookup(logged, tmp_path):
    from rackside.judge.challenge_log import short_id
    from rackside.judge.service import JudgeService

    service = JudgeService(log_path=default_log_path(), station="hall-3")
    rec = logged[0]
    for text in (rec.id, rec.id.upper(), f"  {rec.id.lower()} ", short_id(rec.id), short_id(rec.id).lower()):
        assert service.find(text) == rec
    assert service.find("nope") is None


def test_log_lists_show_the_short_id(capsys, logged):
    from rackside.judge.challenge_log import short_id

    code, out, _ = run(capsys, "log", "show")
    assert code == 0
    for rec in logged:
        assert short_id(rec.id) in out


# --- CSV export: atomic everywhere ---------------------------------------------------------


def test_cli_export_is_atomic(capsys, logged, tmp_path, monkeypatch):
    """A failure half-way through an export leaves the director's previous export whole."""
    from rackside.judge import challenge_log as logmod

    out = tmp_path / "export.csv"
    out.write_text("the previous export\n")

    def broken(records, stream):
        stream.write("id,time\npartial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(logmod, "export_csv", broken)
    code, _, err = run(capsys, "log", "export", "--csv", "-o", str(out))
    assert code == 2 and "No space left on device" in err
    assert out.read_text() == "the previous export\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".export")] == []


def test_service_export_is_private_and_complete(logged, tmp_path):
    from rackside.judge.service import JudgeService

    service = JudgeService(log_path=default_log_path(), station="hall-3")
    out = tmp_path / "x.csv"
    assert service.export_csv(out) == 2
    assert out.stat().st_mode & 0o777 == 0o600
    assert len(out.read_text().splitlines()) == 3


# --- re-adjudication (issue 9 item 4, 3.10.11) ----------------------------------------------


def test_readjudication_with_the_same_lexicon_and_verdict_says_they_agree(capsys, logged, small):
    code, out, _ = run(capsys, "log", "readjudicate", "--lexicon", str(small), logged[1].id)
    assert code == 0
    assert "agrees with the original" in out and "same lexicon" in out and "final (3.10.11(c))" in out


def test_readjudication_with_another_lexicon_says_so_and_refers_the_director(capsys, logged, tmp_path):
    # Same verdict (QI ZYZZYVAS unacceptable in both), but another lexicon.
    other = make(tmp_path, "OTHER", "cat dog qi")
    code, out, _ = run(capsys, "log", "readjudicate", "--lexicon", str(other), logged[1].id)
    assert code == 1
    assert "another lexicon" in out and "OTHER" in out and "SMALL" in out
    assert "3.10.11" in out and "Tournament Director" in out
    assert "agrees with the original" not in out


def test_readjudication_with_another_verdict_says_so_and_refers_the_director(logged, tmp_path):
    from rackside.judge.service import JudgeService

    other = make(tmp_path, "OTHER", "cat dog qi zyzzyvas")
    service = JudgeService(log_path=default_log_path(), station="hall-3")
    with Lexicon.open(other) as lex:
        r = service.readjudicate(logged[1].id, lex)
    assert r.differs and not r.same_lexicon and not r.final
    assert "gives ACCEPTABLE, the original was UNACCEPTABLE" in r.message
    assert "Tournament Director" in r.message and "3.10.11(c)" in r.message


def test_the_log_records_the_lexicons_full_checksum(logged, small):
    with Lexicon.open(small) as lex:
        assert logged[0].lexicon_sha256 == lex.source_sha256 and len(lex.source_sha256) == 64


# --- rackside log show: warnings once, unreadable / missing / empty (issue 9 item 10, 10 item 11)


def test_log_show_prints_each_warning_once(capsys, logged):
    with open(default_log_path(), "ab") as f:
        f.write(b"{not json}\n")
    code, out, err = run(capsys, "log", "show")
    assert code == 0
    assert err.count("line 3") == 1, err


def test_log_show_of_a_file_it_cannot_read_exits_non_zero(capsys, tmp_path):
    folder = tmp_path / "a-folder.jsonl"
    folder.mkdir()
    code, out, err = run(capsys, "log", "--file", str(folder), "show")
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and str(folder) in err


def test_log_show_of_a_missing_file_exits_non_zero_with_one_line(capsys, tmp_path):
    missing = tmp_path / "MISSING.jsonl"
    code, out, err = run(capsys, "log", "--file", str(missing), "show")
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and "MISSING.jsonl" in err and "no challenge log" in err


def test_an_empty_log_says_so(capsys, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    code, out, err = run(capsys, "log", "--file", str(empty), "show")
    assert code == 0 and "no challenges" in out.lower()


# --- the lexicon says what it is (issue 10 items 3 and 4) -----------------------------------


def test_judge_says_when_the_lexicon_is_the_bundled_demonstration_list(capsys):
    code, out, err = run(capsys, "judge", "qi")
    assert (code, out) == (1, "UNACCEPTABLE\n")
    assert "demonstration" in err and "QI" in err and "CSW" in err and "NWL" in err
    assert "rackside lexicon compile" in err and "rackside lexicon use" in err


def test_judge_with_a_tournament_lexicon_says_nothing_more(capsys, small):
    assert run(capsys, "judge", "--lexicon", str(small), "qi") == (0, "ACCEPTABLE\n", "")


def test_judge_with_the_demonstration_list_named_says_so_too(capsys):
    code, out, err = run(capsys, "judge", "--lexicon", str(_installed_default()), "qi")
    assert (code, out) == (1, "UNACCEPTABLE\n") and "demonstration" in err


def test_lexicon_info_without_a_file_shows_the_current_one(capsys, small):
    code, out, _ = run(capsys, "lexicon", "info")
    assert code == 0 and "ENABLE" in out and "demonstration" in out
    assert run(capsys, "lexicon", "use", str(small))[0] == 0
    code, out, _ = run(capsys, "lexicon", "info")
    assert code == 0 and "SMALL" in out and "demonstration" not in out


def test_lexicon_use_copies_the_file_into_the_lexicon_folder(capsys, small):
    code, out, _ = run(capsys, "lexicon", "use", str(small))
    assert code == 0
    copied = lexicon_dir() / small.name
    assert copied.read_bytes() == small.read_bytes()
    small.unlink()  # the director's USB stick is gone: the station still has its copy
    assert run(capsys, "judge", "zax")[:2] == (0, "ACCEPTABLE\n")
    assert "next idle screen" in out  # what a running station does


def test_a_running_station_picks_up_lexicon_use_at_its_next_idle_screen(capsys, small, tmp_path):
    from rackside.judge.service import JudgeService

    service = JudgeService(log_path=tmp_path / "c.jsonl", station="s1")
    service.open_lexicon()
    assert service.lexicon.name == "ENABLE"
    assert run(capsys, "lexicon", "use", str(small))[0] == 0
    assert service.refresh_lexicon() is True  # the station calls this at its idle screen
    assert service.lexicon.name == "SMALL"
    assert service.refresh_lexicon() is False  # nothing changed since


def test_lexicon_info_of_the_default_says_how_to_install_the_tournaments(capsys):
    code, out, _ = run(capsys, "lexicon", "info", str(_installed_default()))
    assert code == 0 and "demonstration" in out and "CSW" in out and "NWL" in out


def _installed_default() -> Path:
    from rackside.judge.lexicon import install_default_lexicon

    return install_default_lexicon()


def test_lexicon_copy_is_atomic_and_refuses_a_corrupt_file(capsys, tmp_path):
    bad = tmp_path / "bad.rlex"
    bad.write_bytes(b"junk" * 100)
    code, _, err = run(capsys, "lexicon", "use", str(bad))
    assert code == 2 and not (lexicon_dir() / "bad.rlex").exists()
    assert not default_lexicon_path().parent.exists() or all(
        not p.name.startswith(".") for p in default_lexicon_path().parent.iterdir())


def test_no_kiosk_package_data_and_judge_owns_enable():
    import tomllib

    from rackside.judge import lexicon

    repo = Path(__file__).resolve().parents[1]
    data = tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "data/*" not in data["rackside.kiosk"] and data["rackside.judge"] == ["data/*"]
    assert lexicon.DEFAULT_SOURCE.is_file() and "judge" in lexicon.DEFAULT_SOURCE.parts


def test_the_judge_command_path_imports_nothing_it_does_not_need(tmp_path, small):
    """`rackside judge --lexicon FILE WORD` imports none of dataclasses, logging, tomllib, hashlib, nor
    argparse, pathlib, re, enum or json, each of which costs more than the lookup (issue 11)."""
    import subprocess
    import sys

    code = ("import sys; from rackside import cli; rc = cli.main(['judge', '--lexicon', sys.argv[1], 'CAT']); "
            "print(' '.join(sorted(m for m in ('dataclasses', 'logging', 'tomllib', 'hashlib', 'tempfile', "
            "'rackside.firmware.cli', 'rackside.kiosk.cli', 'rackside.judge.cli', 'inspect', 'typing', 'argparse', 'pathlib', 're', 'enum', "
            "'json', 'collections') if m in sys.modules)))")
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "s")}
    out = subprocess.run([sys.executable, "-c", code, str(small)], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines()[-1] == "", out.stdout


@pytest.mark.parametrize("argv", [
    ["--lexicon", "{small}", "cat"],
    ["--lexicon={small}", "cat", " Dog ", "qi"],
    ["cat", "--lexicon", "{small}"],
    ["--lexicon", "{small}", "cat", "dogz"],
    ["--lexicon", "{small}", "ca t"],
    ["--lexicon", "{small}", "c4t"],
    ["--lexicon", "{small}", "x"],
    ["--lexicon", "{small}"] + ["cat"] * 9,
    ["--lexicon", "{missing}", "cat"],
    ["--lexicon", "{junk}", "cat"],
    ["--lexicon", "{enable}", "qi"],
])
def test_the_judge_fast_path_answers_exactly_as_the_full_command(capsys, tmp_path, small, argv):
    from rackside.judge import cli as judge_cli

    (tmp_path / "junk.rlex").write_bytes(b"junk" * 100)
    enable = _installed_default()
    argv = [a.format(small=small, missing=tmp_path / "missing.rlex", junk=tmp_path / "junk.rlex", enable=enable)
            for a in argv]
    fast = judge_cli.fast(argv)
    fast_out = capsys.readouterr()
    assert fast is not None  # this form has a fast path
    args = rackside_cli.build_parser("judge").parse_args(["judge", *argv])
    full = args.func(args)
    full_out = capsys.readouterr()
    assert (fast, fast_out.out, fast_out.err) == (full, full_out.out, full_out.err)


@pytest.mark.parametrize("argv", [["cat"], ["--guidance", "--lexicon", "x", "cat"], ["--lexicon", "x"],
                                  ["--lex", "x", "cat"], ["--lexicon", "x", "--lexicon", "y", "cat"], ["--help"]])
def test_other_forms_of_judge_take_the_full_parser(argv):
    from rackside.judge import cli as judge_cli

    assert judge_cli.fast(argv) is None


# station.json files: (text, whether the fast path reads it itself); every other file goes the full way.
SETTINGS_FILES = [
    ('{"max_words": 1}\n', True),
    ('{"version": 1, "lexicon_path": null, "challenge_rule": "5-per-word", "max_words": 2}', True),
    ('{\n  "version": 1,\n  "lexicon_path": "csw.rlex",\n  "challenge_rule": "dingle",\n  "max_words": 20\n}\n', True),
    (" \r\n{}\t\n", True),
    ('{"max_words": 1} {"max_words": 2}', False),  # extra data: refused
    ('{"max_words": 0}', False),
    ('{"max_words": 21}', False),
    ('{"max_words": 2.0}', False),
    ('{"max_words": true}', False),
    ('{"max_words": NaN}', False),
    ('{"max_words": 3, "colour": "red"}', False),  # unknown key: refused
    ('{"version": 2}', False),
    ('{"version": true, "max_words": 1}', False),  # read as version 1 by the full path
    ('{"challenge_rule": "FIVE_PER_WORD", "max_words": 1}', False),  # an alias the full path accepts
    ('{"challenge_rule": "triple"}', False),
    ('{"lexicon_path": "  "}', False),
    ('{"lexicon_path": 7}', False),
    ('[1, 2]', False),
    ('{"max_words": 1', False),
    ('{"max_words" 1}', False),
    ('\ufeff{"max_words": 1}', False),
    ("", False),
    (b"\xff\xfe{}", False),
]


@pytest.mark.parametrize("text, plain", SETTINGS_FILES)
@pytest.mark.parametrize("words", [["cat", "dog"], ["cat"], ["cat", "dogz", "qi"]])
def test_the_judge_fast_path_applies_settings_exactly_as_the_full_command(capsys, small, text, plain, words):
    from rackside.judge import cli as judge_cli
    from rackside.judge.settings import default_settings_path

    path = default_settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    argv = ["--lexicon", str(small), *words]
    fast = judge_cli.fast(argv)
    fast_out = capsys.readouterr()
    assert (fast is not None) == plain
    args = rackside_cli.build_parser("judge").parse_args(["judge", *argv])
    full = args.func(args)
    full_out = capsys.readouterr()
    if plain:
        assert (fast, fast_out.out, fast_out.err) == (full, full_out.out, full_out.err)
    else:
        assert (fast_out.out, fast_out.err) == ("", "")


def test_a_settings_folder_in_place_of_the_file_takes_the_full_path(small):
    from rackside.judge import cli as judge_cli
    from rackside.judge.settings import default_settings_path

    default_settings_path().mkdir(parents=True)
    assert judge_cli.fast(["--lexicon", str(small), "cat"]) is None


def test_the_fast_path_knows_the_settings_keys_and_rules_the_full_path_accepts():
    from rackside.judge import fastpath as judge_cli
    from rackside.judge import settings
    from rackside.judge.penalties import ChallengeRule

    assert judge_cli._SETTINGS_KEYS == set(settings._KEYS)
    assert judge_cli._RULE_VALUES == {rule.value for rule in ChallengeRule}
    for rule in ChallengeRule:  # each is read back as itself
        assert settings.StationSettings.from_dict({"challenge_rule": rule.value}).challenge_rule is rule


def test_judging_with_settings_imports_neither_json_nor_re(tmp_path, small):
    import subprocess
    import sys

    state = tmp_path / "s"
    state.mkdir()
    (state / "station.json").write_text('{"version": 1, "lexicon_path": null, "challenge_rule": "double", "max_words": 8}')
    code = ("import sys; from rackside import cli; rc = cli.main(['judge', '--lexicon', sys.argv[1], 'CAT']); "
            "print(rc, ' '.join(sorted(m for m in ('json', 'json.decoder', 're', 'enum', 'pathlib', 'argparse', "
            "'rackside.judge.settings', 'rackside.judge.penalties') if m in sys.modules)))")
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(state)}
    out = subprocess.run([sys.executable, "-c", code, str(small)], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines()[-1] == "0 ", out.stdout


def test_the_fast_path_looks_for_the_settings_where_paths_says_they_are():
    import os

    from rackside import paths

    assert os.path.join(paths.state_dir_name(), "station.json") == str(paths.station_settings())


@pytest.mark.parametrize("argv, code, out", [
    (["judge", "--lexicon", "{small}", "cat", "qi"], 0, "ACCEPTABLE\n"),  # the fast path, ended by os._exit
    (["judge", "--lexicon", "{small}", "catz"], 1, "UNACCEPTABLE\n"),
    (["judge", "--lexicon", "{small}", "c4t"], 2, ""),
    (["judge", "--guidance", "--lexicon", "{small}", "cat"], 0, "ACCEPTABLE\n"),  # the full path, sys.exit
])
def test_the_rackside_process_answers_as_main_does(tmp_path, small, argv, code, out):
    """`python -m rackside` (as bin/rackside) ends a fast-path command without finalisation: its
    output still arrives whole, through a pipe, with the same exit code as `main`."""
    import subprocess
    import sys

    argv = [a.format(small=small) for a in argv]
    env = {**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "s")}
    proc = subprocess.run([sys.executable, "-m", "rackside", *argv], capture_output=True, text=True, env=env)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout.startswith(out) and (code != 2 or proc.stderr.startswith("rackside: error: Word 1"))
    inproc = subprocess.run([sys.executable, "-c", "import sys; from rackside.cli import main; "
                             "print(end='', flush=True); sys.exit(main(sys.argv[1:]))", *argv],
                            capture_output=True, text=True, env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (inproc.returncode, inproc.stdout, inproc.stderr)


def test_a_reader_that_goes_away_ends_the_fast_path_quietly(tmp_path, small):
    """As for every other command (`main`): 141, no traceback, when the pipe is closed early."""
    import subprocess
    import sys

    env = {**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "s")}
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the answer is written
    try:
        proc = subprocess.run([sys.executable, "-m", "rackside", "judge", "--lexicon", str(small), "cat"],
                              stdout=w, stderr=subprocess.PIPE, text=True, env=env)
    finally:
        os.close(w)
    assert proc.returncode == 141 and "Traceback" not in proc.stderr, proc.stderr
