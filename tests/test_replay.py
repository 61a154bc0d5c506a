"""`rackside clock replay FILE [--json]` on the sample journals in tests/data/journals/, on bad
input, and fuzzed with arbitrary lines: it reports and skips, and never crashes."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rackside.game import replay
from rackside.game.clock import Neutralise, Press, Rules, apply
from rackside.game.journal import dumps, input_to_dict, make_header, read_journal
from rackside.firmware.cli import add_replay_arguments
from rackside.firmware.persist import GameStore

DATA = Path(__file__).parent / "data" / "journals"
ROOT = Path(__file__).resolve().parent.parent
S = 1_000_000_000


def replay_cli(path, *flags):
    parser = argparse.ArgumentParser()
    add_replay_arguments(parser)
    out, err = io.StringIO(), io.StringIO()
    code = replay.run(parser.parse_args([str(path), *flags]), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def replay_json(path):
    code, out, err = replay_cli(path, "--json")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 1  # one JSON object
    return json.loads(lines[0]), err


# --- The text replay ------------------------------------------------------------------------------


def test_text_replay_prints_every_input_with_both_players_times_overtime_and_penalty():
    code, out, err = replay_cli(DATA / "full_game.jsonl")
    assert code == 0 and err == ""
    rows = out.splitlines()
    assert "game time 25:00" in rows[0]
    assert rows[1].split()[:3] == ["line", "elapsed", "input"]
    body = rows[2:-2]
    assert [int(r.split()[0]) for r in body] == list(range(2, 14))  # one row per input line
    first = body[0].split()
    assert first[:4] == ["2", "0.000", "press", "2"] and first[4:10] == ["25:00.000", "0", "0", "25:00.000", "0", "0"]
    overtime_press = next(r for r in body if r.split()[0] == "11")
    assert "-1:05.400   65   20" in overtime_press  # 65 s over: 20 points (5.3)
    assert rows[-2].startswith("final: player 1: -1:14 (-1:14.400), overtime 74 s, penalty 20; player 2: 21:50")
    assert rows[-1].startswith("ended: end. 12 inputs applied, 0 problems, 0 restores")


def test_text_replay_names_the_lateness_forfeit_and_its_margin():
    code, out, _ = replay_cli(DATA / "late_optional_forfeit.jsonl")
    assert "ended: optional forfeit; forfeited by 2; player 1 wins by 75 points (2.3.6(a))" in out


# --- --json: the final state ----------------------------------------------------------------------------


def test_json_final_state_of_a_full_game():
    state, err = replay_json(DATA / "full_game.jsonl")
    assert err == ""
    p1, p2 = state["players"]
    assert p1 == {"player": 1, "remaining_ms": -74_400, "overtime_s": 74, "penalty": 20, "forfeit": False,
                  "display": "-1:14", "absent": False, "running": False}
    assert (p2["player"], p2["remaining_ms"], p2["overtime_s"], p2["penalty"], p2["forfeit"]) == (2, 1_310_000, 0, 0, False)
    assert state["phase"] == "ended" and state["ending"] == "end" and state["forfeits"] == []
    assert state["inputs_applied"] == 12 and state["problems"] == [] and state["lateness_margin"] is None


def test_json_lateness_forfeit_gives_the_margin_and_winner():
    state, _ = replay_json(DATA / "late_optional_forfeit.jsonl")
    assert state["ending"] == "optional forfeit" and state["forfeits"] == [2]
    assert state["winner_by_forfeit"] == 1 and state["lateness_margin"] == 75
    assert [p["remaining_ms"] for p in state["players"]] == [1_500_000, 840_000]  # 25:00 less 11:00
    assert state["players"][1]["forfeit"] and not state["players"][0]["forfeit"]


def test_json_overtime_forfeit_under_a_configured_game_time():
    state, _ = replay_json(DATA / "overtime_forfeit.jsonl")
    assert state["config"]["game_time_s"] == 120
    assert state["ending"] == "overtime forfeit" and state["forfeits"] == [1]
    p1 = state["players"][0]
    assert (p1["remaining_ms"], p1["overtime_s"], p1["penalty"], p1["forfeit"]) == (-600_000, 600, 100, True)


def test_json_both_late_each_assigned_game_time_less_own_lateness_then_adjusted():
    state, _ = replay_json(DATA / "both_late.jsonl")
    assert [p["remaining_ms"] for p in state["players"]] == [1_160_000, 900_000]


def test_json_power_cut_journal_reproduces_the_restore():
    state, _ = replay_json(DATA / "power_cut.jsonl")
    assert state["resumes"] == 1 and state["problems"] == []
    journal = read_journal(DATA / "power_cut.jsonl")
    resume_line = next(line for line in journal.lines if line.data["input"] == "resume")
    at_resume = replay.fold(journal, upto_line=resume_line.number)
    v = replay.final_view(at_resume)
    assert v.restored and v.phase.value == "neutralised"
    # player 1 ran 3-63 s and from 140 s to the checkpoint at 170.3 s; player 2 ran 63-140 s.
    # The crash came after the checkpoint: that last moment is what is shown, downtime never.
    assert [p.remaining_ms for p in v.players] == [1_500_000 - 60_000 - 30_300, 1_500_000 - 77_000]


# --- Bad input: reported with line numbers and skipped; missing file and bad header exit 2 -------------------


def test_malformed_lines_are_reported_with_their_line_numbers_and_skipped():
    state, err = replay_json(DATA / "malformed.jsonl")
    reported = [int(line.split(":")[1]) for line in err.splitlines()]
    assert reported == [4, 5, 6, 8, 9, 15]
    assert "not valid JSON" in err and "unknown input 'pause'" in err and "lacks the 'player' field" in err
    assert "time went backwards" in err and "forfeit line" in err and "incomplete last line" in err
    assert [p["line"] for p in state["problems"]] == [4, 5, 6, 8, 9, 15]
    # skipping them leaves exactly the game of the good lines
    good, _ = replay_json(DATA / "both_late.jsonl")
    assert state["players"] == good["players"] and state["inputs_applied"] == good["inputs_applied"]


def test_malformed_lines_are_reported_in_text_mode_too():
    code, out, err = replay_cli(DATA / "malformed.jsonl")
    assert code == 0 and "6 problems" in out and len(err.splitlines()) == 6


def test_missing_file_exits_2_with_a_clear_message(tmp_path):
    code, out, err = replay_cli(tmp_path / "nope.jsonl")
    assert code == 2 and out == "" and "nope.jsonl: no such file" in err


def test_bad_header_exits_2_with_a_clear_message():
    code, out, err = replay_cli(DATA / "bad_header.jsonl", "--json")
    assert code == 2 and out == ""
    assert "line 1: bad header" in err and "not a Rackside clock journal header" in err


@pytest.mark.parametrize("content", [b"", b"\n", b"\x89PNG\r\n\x1a\n\x00\x00"], ids=["empty", "blank", "binary"])
def test_empty_or_binary_files_exit_2(tmp_path, content):
    path = tmp_path / "j.jsonl"
    path.write_bytes(content)
    code, _, err = replay_cli(path)
    assert code == 2 and "bad header" in err


def test_a_directory_exits_2(tmp_path):
    code, _, err = replay_cli(tmp_path)
    assert code == 2 and "directory" in err


# --- The replay shares the core with the firmware --------------------------------------------------------


def test_replay_of_a_recorded_game_equals_the_firmwares_clock(tmp_path):
    store = GameStore(tmp_path, Rules())
    clock = store.start(0)
    for event in [Press(1 * S, 2), Press(5 * S, 1), Neutralise(6 * S), Neutralise(9 * S), Press(12 * S, 2)]:
        store.record(event)
        clock = apply(clock, event)
    path = store.journal_path
    store.close()
    assert replay.fold(read_journal(path)).clock == clock


def test_rackside_clock_replay_command_line():
    """The installed command: `rackside clock replay FILE --json` (firmware/cli.py wires it)."""
    result = subprocess.run(
        [sys.executable, "-m", "rackside", "clock", "replay", str(DATA / "overtime_forfeit.jsonl"), "--json"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["players"][0]["penalty"] == 100


# --- Fuzz: arbitrary lines never crash the replay --------------------------------------------------------------

HEADER = dumps(make_header(Rules(game_time_ms=60_000, forfeit_overtime_ms=60_000))) + "\n"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=6,
)
plausible = st.fixed_dictionaries(
    {"t_ns": st.one_of(st.integers(-(10**12), 10**13), json_values),
     "input": st.sampled_from(["press", "neutralise", "end", "adjust", "late_start", "arrive", "forfeit", "resume", "x"])},
    optional={
        "player": st.one_of(st.sampled_from([1, 2]), json_values),
        "players": st.one_of(st.lists(st.sampled_from([1, 2]), max_size=3), json_values),
        "remaining_ms": st.one_of(st.integers(-(10**7), 10**13), json_values),
        "at_ns": st.one_of(st.integers(-(10**13), 10**13), json_values),
    },
).map(lambda d: json.dumps(d).encode())
arbitrary_line = st.one_of(
    plausible,
    plausible,
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=30).filter(lambda b: b"\n" not in b),
    st.text(max_size=30).filter(lambda s: "\n" not in s).map(str.encode),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(arbitrary_line, max_size=25), st.booleans(), st.booleans())
def test_fuzz_arbitrary_lines_never_crash_the_replay(tmp_path, lines, torn, as_json):
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(HEADER.encode() + b"\n".join(lines) + (b"" if torn else b"\n"))
    if as_json:
        code, out, err = replay_cli(path, "--json")
        assert code == 0
        state = json.loads(out)
        assert state["inputs_applied"] + sum(1 for p in state["problems"] if p["line"] > 1) == state["lines_read"]
        assert len(state["players"]) == 2
    else:
        code, out, err = replay_cli(path)
        assert code == 0 and out.splitlines()[-1].startswith(
            ("ended", "running", "neutralised", "late", "setup")
        )
    for line in err.splitlines():  # every problem names its line
        assert line.startswith(f"{path}:") and int(line.split(":")[1]) >= 2


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200))
def test_fuzz_any_bytes_exit_0_or_2_never_crash(tmp_path, raw):
    path = tmp_path / "any.jsonl"
    path.write_bytes(raw)
    code, _, err = replay_cli(path, "--json")
    assert code in (0, 2)
    if code == 2:
        assert "bad header" in err


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 90 * S), st.sampled_from([1, 2])), max_size=20), st.integers(0, 4000))
def test_fuzz_cutting_a_valid_journal_anywhere_keeps_every_whole_line(tmp_path, presses, cut):
    """A crash mid-write leaves every earlier line readable: the replay of a journal cut at any
    byte equals the replay of its whole lines."""
    t, body = 0, HEADER
    for gap, p in presses:
        t += gap
        body += dumps(input_to_dict(Press(t, p))) + "\n"
    raw = body.encode()
    cut = len(HEADER) + cut % (len(raw) - len(HEADER) + 1)
    path = tmp_path / "cut.jsonl"
    path.write_bytes(raw[:cut])
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(raw[: raw.rindex(b"\n", 0, cut) + 1] if b"\n" in raw[:cut] else raw[:cut])
    state, _ = replay_json(path)
    expected, _ = replay_json(whole)
    if raw[:cut].endswith(b"}"):  # a line complete but for its newline is kept
        expected_full = tmp_path / "full.jsonl"
        expected_full.write_bytes(raw[:cut] + b"\n")
        expected, _ = replay_json(expected_full)
    assert state["players"] == expected["players"]


def _long_journal(state, inputs: int) -> tuple[Rules, int]:
    (state / "journals").mkdir(parents=True)
    rules = Rules(game_time_ms=99 * 60_000)
    t, lines = 10**12, [dumps(make_header(rules))]
    for seq in range(1, inputs + 1):
        t += 200_000_000 + seq % 7
        lines.append(dumps({**input_to_dict(Press(t, 2 - seq % 2)), "seq": seq}))
    (state / "journals" / "game-000001.jsonl").write_text("\n".join(lines) + "\n")
    return rules, t


def _peaks(state, rules, t) -> tuple[int, int]:
    """Peak memory allocated by a replay's fold, and by a restore, of the journal in `state`."""
    import tracemalloc

    tracemalloc.start()
    try:
        result = replay.fold(read_journal(state / "journals" / "game-000001.jsonl"))
        _, fold_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        store = GameStore(state, rules, boot_id="b")
        store.start(t + 10**9)
        store.close()
        _, restore_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.problems == [] and result.clock.phase.value == "running"
    return fold_peak, restore_peak


@pytest.mark.slow
def test_a_long_journal_replays_and_restores_in_constant_memory(tmp_path, monkeypatch):
    """Issue 9, item 8: a 100 MB journal took 1.97 GB to replay. Memory, unlike time, is
    deterministic, so it is tested here (bench/replay_bench.py measures RSS and speed on 100 MB):
    a journal 4 times as long may not need more memory to replay or to restore (before the fix,
    about 20 bytes of memory for every byte of journal). Read in 64 KiB blocks here, so both
    journals are many blocks long."""
    from rackside.game import journal as journal_module

    monkeypatch.setattr(journal_module, "READ_BLOCK", 64 * 1024)
    short = _peaks(tmp_path / "short", *_long_journal(tmp_path / "short", 8_000))
    long = _peaks(tmp_path / "long", *_long_journal(tmp_path / "long", 32_000))
    size = (tmp_path / "long" / "journals" / "game-000001.jsonl").stat().st_size
    assert size > 1_800_000
    for what, a, b in (("fold", short[0], long[0]), ("restore", short[1], long[1])):
        assert b < a + 300_000, f"{what}: {a / 1e6:.2f} MB for 8,000 inputs, {b / 1e6:.2f} MB for 32,000"
        assert b < 1_000_000, f"{what} peaked at {b / 1e6:.2f} MB for a {size / 1e6:.1f} MB journal"
