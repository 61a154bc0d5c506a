"""The `rackside` command's parser: an unknown option after a subcommand is reported with that
subcommand's usage (issue 10 item 11), not the top-level `rackside [-h] [--version] [-v] COMMAND`.

argparse by itself hands a subparser's unrecognised arguments up to the top-level parser, which
reports them with its own usage; these tests hold every subcommand to its own."""

import pytest

from rackside import cli as rackside_cli


@pytest.mark.parametrize(
    "argv, prog",
    [
        (["clock", "--bogus"], "rackside clock"),
        (["clock", "--simulate", "--bogus"], "rackside clock"),
        (["clock", "replay", "game.jsonl", "--bogus"], "rackside clock replay"),
        (["kiosk", "--bogus"], "rackside kiosk"),
        (["judge", "--bogus", "QI"], "rackside judge"),
        (["judge", "QI", "--bogus"], "rackside judge"),
        (["lexicon", "info", "--bogus"], "rackside lexicon info"),
        (["lexicon", "--bogus", "info"], "rackside lexicon"),
        (["log", "show", "--bogus"], "rackside log show"),
        (["log", "--bogus", "show"], "rackside log"),
        (["paths", "--bogus"], "rackside paths"),
        (["paths", "extra"], "rackside paths"),
    ],
)
def test_unknown_option_reports_the_subcommands_own_usage(argv, prog, capsys):
    with pytest.raises(SystemExit) as exit_:
        rackside_cli.main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {prog} "), err
    bad = argv[-1] if argv[-1] in ("--bogus", "extra") else "--bogus"
    assert err.rstrip("\n").splitlines()[-1] == f"{prog}: error: unrecognized arguments: {bad}"


def test_unknown_option_before_the_command_is_the_top_levels(capsys):
    with pytest.raises(SystemExit) as exit_:
        rackside_cli.main(["--bogus", "paths"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: rackside [-h]")
    assert err.rstrip("\n").splitlines()[-1] == "rackside: error: unrecognized arguments: --bogus"


def test_known_options_still_parse():
    args = rackside_cli.build_parser("clock").parse_args(["clock", "--simulate", "--terminal"])
    assert args.simulate and args.terminal and args.func.__name__ == "run_clock"
    args = rackside_cli.build_parser("log").parse_args(["log", "--file", "x.jsonl", "show", "abc123"])
    assert args.id == "abc123" and str(args.file) == "x.jsonl"
