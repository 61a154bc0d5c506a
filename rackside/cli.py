"""The `rackside` command: one entry point whose subcommands are Rackside's programs.

Each subsystem registers its own subcommands (`firmware.cli`, `kiosk.cli`, `judge.cli`), so this module
only composes them and sets up logging; `rackside.paths` knows where configuration and state live.
"""

from __future__ import annotations

import sys

# Nothing else at import: argparse (with `re` and `enum`) is imported when the full parser is
# built, so a command with a fast path answers without it (issue 11). Where configuration and
# state live is `rackside.paths`.

# Which subsystem registers each command. `rackside COMMAND ...` imports only that subsystem's
# cli module, so a director's `rackside judge WORD` never pays for the clock's or the station's
# imports (issue 11); `rackside --help` and an unknown command load them all.
SUBSYSTEM_CLIS = {
    "clock": "rackside.firmware.cli",
    "kiosk": "rackside.kiosk.cli",
    "judge": "rackside.judge.cli",
    "lexicon": "rackside.judge.cli",
    "log": "rackside.judge.cli",
    "hall": "rackside.hall.cli",
    "bundle": "rackside.bundle",
    "switch": "rackside.switch",
    "update": "rackside.update",
}


def _command_of(argv: list[str]) -> str | None:
    """The command word of `argv` (skipping the top-level options), or None."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
        if arg == "--":
            return None
    return None


# Commands whose subsystem answers their commonest form before argparse is even imported:
# `fast(argv)` returns an exit code, or None for any other form, which the full parser handles.
FAST_PATHS = {"judge": "rackside.judge.fastpath", "kiosk": "rackside.kiosk.cli"}


def show_paths(args: argparse.Namespace) -> int:
    """`rackside paths`: where this machine's configuration and state are, as every command sees them."""
    from rackside import paths

    width = max(len(k) for k in paths.all_paths())
    for what, path in paths.all_paths().items():
        mark = "" if path.exists() else "  (not yet created)"
        print(f"{what:<{width}}  {path}{mark}")
    return 0


def _version_action():
    """`--version`, asking the package's metadata only when used (importlib.metadata costs
    milliseconds every command would pay if the parser asked it up front, issue 11)."""
    import argparse

    class Version(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            from rackside import running_version

            print(f"rackside {running_version()}")
            parser.exit()

    return Version


def _subcommand_parser_class():
    """The parser class of every subcommand (and, inherited, of their own subcommands).

    argparse lets a subcommand's parser keep the arguments it does not know and hands them up to
    the top-level parser, which reports them with its own usage: `rackside clock --bogus` printed
    `usage: rackside [-h] [--version] [-v] COMMAND ...`. Everything after a command word belongs to
    that command, so its parser reports them itself, with its own usage (issue 10, item 11)."""
    import argparse

    class SubcommandParser(argparse.ArgumentParser):
        def parse_known_args(self, args=None, namespace=None):
            namespace, extras = super().parse_known_args(args, namespace)
            if extras:
                self.error(f"unrecognized arguments: {' '.join(extras)}")
            return namespace, extras

    return SubcommandParser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `rackside` parser; given a known `command`, with only its subsystem's subcommands."""
    import argparse
    import importlib

    wanted = SUBSYSTEM_CLIS.get(command)
    modules = [wanted] if wanted else list(dict.fromkeys(SUBSYSTEM_CLIS.values()))
    parser = argparse.ArgumentParser(prog="rackside", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action=_version_action(), nargs=0, help="show the running version and exit")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_subcommand_parser_class())
    for name in modules:
        importlib.import_module(name).register(sub)
    paths_cmd = sub.add_parser("paths", help="where configuration, state, journals, logs and lexicons are")
    paths_cmd.set_defaults(func=show_paths)
    return parser


def _set_up_logging(verbose: int) -> None:
    # Imported here: `logging` costs several milliseconds, and the judge's commands report to the
    # director with print, so they do without it unless asked (-v) (issue 11).
    import logging

    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(verbose, 2)]
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not verbose:
        # The hall's routine events (a device's code, an assignment, mDNS advertising) are INFO, not
        # WARNING, so `journalctl -p warning` shows faults only; they are still shown by default:
        # the director reads a device's code there.
        logging.getLogger("rackside.hall").setLevel(logging.INFO)


def _fast(argv: list[str]) -> int | None:
    """The exit code of a command its subsystem answered on its fast path, else None."""
    if argv and argv[0] in FAST_PATHS:
        __import__(FAST_PATHS[argv[0]])  # (importlib itself would cost more than the module)
        return sys.modules[FAST_PATHS[argv[0]]].fast(argv[1:])
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    code = _fast(argv)
    if code is not None:
        return code
    parser = build_parser(_command_of(argv))
    args = parser.parse_args(argv)
    # A subcommand may set `logging=False`: it reports on stdout/stderr itself.
    if args.verbose or getattr(args, "logging", True):
        _set_up_logging(args.verbose)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return _broken_pipe()


def _broken_pipe() -> int:
    # The reader went away (`rackside log show | head`): the pipe's business, not a traceback.
    # Point stdout at /dev/null so the interpreter's own flush at exit cannot fail again.
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 141  # 128 + SIGPIPE, as a shell reports a command killed by the broken pipe


def run() -> None:
    """The `rackside` process (bin/rackside, `python -m rackside`): `main`, then exit.

    A command answered on its fast path ends the process with `os._exit` once stdout and stderr
    are flushed, skipping the interpreter's finalisation (tearing down every module and a last
    garbage collection): about 2 ms, a fifth of Python's own start-up, measured in
    bench/startup.py (issue 11). That is safe there and nowhere else: a fast path starts no
    thread, registers no atexit handler, sets up no logging and leaves no file open or buffered
    but stdout and stderr. A reader that went away gets 141, as from `main`; any other failure to
    flush exits the ordinary way, so Python reports it as it would for any command."""
    argv = sys.argv[1:]
    try:
        code = _fast(argv)
    except BrokenPipeError:
        sys.exit(_broken_pipe())
    if code is None:
        sys.exit(main(argv))
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        sys.exit(_broken_pipe())
    except OSError:
        sys.exit(code)  # the interpreter's own flush at exit reports it, as for any command
    import os

    os._exit(code)


if __name__ == "__main__":
    run()
