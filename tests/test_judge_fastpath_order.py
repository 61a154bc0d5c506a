"""`rackside judge --lexicon FILE WORD...` says the same on its fast path as through the full parser
(judge.fastpath's promise), also when both the lexicon and a word are bad: the full path (`cmd_judge`)
opens the lexicon first and reports it; the fast path checked the words first and named the word."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("words", [["c4t"], ["cat", "d0g"]])
def test_a_missing_lexicon_and_a_bad_word_give_the_full_paths_message(tmp_path, monkeypatch, capsys, words):
    from rackside import cli as rackside_cli
    from rackside.judge import fastpath

    monkeypatch.setenv("RACKSIDE_STATE_DIR", str(tmp_path / "state"))
    argv = ["--lexicon", str(tmp_path / "missing.rlex"), *words]
    fast = fastpath.fast(argv)
    fast_out = capsys.readouterr()
    args = rackside_cli.build_parser("judge").parse_args(["judge", *argv])
    full = args.func(args)
    full_out = capsys.readouterr()
    assert fast is not None  # answered on the fast path
    assert (fast, fast_out.out, fast_out.err) == (full, full_out.out, full_out.err)
