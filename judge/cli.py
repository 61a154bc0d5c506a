"""The challenge engine's subcommands: `rackside judge`, `rackside lexicon ...`, `rackside log ...`.

Exit codes: 0 success (for `judge`: ACCEPTABLE), 1 UNACCEPTABLE (or a re-adjudication that
differs), 2 bad input or a bad/missing file, with the reason on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK = 0
EXIT_UNACCEPTABLE = 1
EXIT_ERROR = 2


def _fail(message: str) -> int:
    print(f"rackside: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def register(sub) -> None:
    judge = sub.add_parser(
        "judge",
        help="adjudicate a challenge: ACCEPTABLE or UNACCEPTABLE for the whole play",
        description="Adjudicate a challenge (3.10.7): prints ACCEPTABLE (exit 0) if every word is in the "
                    "lexicon, else UNACCEPTABLE (exit 1); never which word failed. Exit 2 on bad input.",
    )
    judge.add_argument("--lexicon", type=Path, metavar="FILE",
                       help="compiled lexicon to use (default: the configured one, ENABLE until a director sets another)")
    judge.add_argument("--rule", metavar="RULE",
                       help="also print the penalty guidance for this challenge rule (default: the configured rule "
                            "when --guidance is given)")
    judge.add_argument("--guidance", action="store_true", help="also print the penalty guidance (3.10.15)")
    judge.add_argument("--prior", type=int, metavar="N",
                       help="the challenger's earlier unsuccessful challenges this game (for dingle, 5-then-10, increasing)")
    judge.add_argument("words", nargs="+", metavar="WORD")
    judge.set_defaults(func=cmd_judge, logging=False)

    lexicon = sub.add_parser("lexicon", help="compile and inspect lexicons",
                             description="Compile word lists into lexicons and inspect them.")
    lexicon.set_defaults(logging=False)
    lsub = lexicon.add_subparsers(dest="lexicon_command", metavar="ACTION", required=True)
    comp = lsub.add_parser("compile", help="compile a word list into a lexicon file",
                           description="Compile a word list (UTF-8 or UTF-16 with BOM, LF or CRLF, any case, # comments, "
                                       "'WORD definition' lines) into a lexicon file. Keeps words of 2-15 letters A-Z.")
    comp.add_argument("src", type=Path, metavar="SRC")
    comp.add_argument("-o", "--output", type=Path, required=True, metavar="OUT", dest="out")
    comp.add_argument("--name", required=True, help="the lexicon's name, e.g. CSW24")
    comp.set_defaults(func=cmd_lexicon_compile)
    info = lsub.add_parser("info", help="verify a lexicon file and print its name, word count and source SHA-256")
    info.add_argument("file", type=Path, metavar="FILE")
    info.set_defaults(func=cmd_lexicon_info)
    inst = lsub.add_parser("install-default", help="compile the shipped ENABLE lexicon if it is missing or stale")
    inst.set_defaults(func=cmd_lexicon_install_default)
    use = lsub.add_parser("use", help="set the station's lexicon (a compiled FILE, or 'default' for ENABLE)")
    use.add_argument("file", metavar="FILE|default")
    use.set_defaults(func=cmd_lexicon_use)

    logp = sub.add_parser("log", help="read and export the challenge log",
                          description="Read the challenge log (director only: it holds per-word results).")
    logp.add_argument("--file", type=Path, metavar="LOG", help="the log file (default: the state folder's challenges.jsonl)")
    logp.set_defaults(logging=False)
    logsub = logp.add_subparsers(dest="log_command", metavar="ACTION", required=True)
    export = logsub.add_parser("export", help="export the log")
    export.add_argument("--csv", action="store_true", required=True, help="as CSV (the only format)")
    export.add_argument("-o", "--output", type=Path, metavar="OUT", help="write to OUT instead of stdout")
    export.set_defaults(func=cmd_log_export)
    show = logsub.add_parser("show", help="list the log's challenges, or show one by id")
    show.add_argument("id", nargs="?", metavar="ID")
    show.set_defaults(func=cmd_log_show)
    rej = logsub.add_parser("readjudicate", help="re-judge a logged challenge by its id (3.10.11)")
    rej.add_argument("id", metavar="ID")
    rej.add_argument("--lexicon", type=Path, metavar="FILE", help="lexicon to use (default: the configured one)")
    rej.set_defaults(func=cmd_log_readjudicate)


def _open_lexicon(path: Path | None):
    """The lexicon named on the command line, else the configured one (may raise)."""
    from rackside.judge.lexicon import Lexicon
    from rackside.judge.settings import load_settings, open_configured_lexicon

    if path is not None:
        return Lexicon.open(path)
    return open_configured_lexicon(load_settings())


def cmd_judge(args: argparse.Namespace) -> int:
    from rackside.judge.adjudication import ChallengeInputError, ChallengeRule, adjudicate, normalise_words, penalty_guidance
    from rackside.judge.lexicon import LexiconError
    from rackside.judge.settings import SettingsError, load_settings

    try:
        settings = load_settings()
        words = normalise_words(args.words, max_words=settings.max_words)
        rule = ChallengeRule.parse(args.rule) if args.rule else settings.challenge_rule
        if args.prior is not None and args.prior < 0:
            raise ValueError(f"--prior must be 0 or more, got {args.prior}")
        lexicon = _open_lexicon(args.lexicon)
    except (ChallengeInputError, LexiconError, SettingsError, ValueError) as exc:
        return _fail(str(exc))
    with lexicon:
        result = adjudicate(words, lexicon)
    print(result.verdict)
    if args.guidance or args.rule:
        print(penalty_guidance(rule, result, args.prior))
    return EXIT_OK if result.acceptable else EXIT_UNACCEPTABLE


def cmd_lexicon_compile(args: argparse.Namespace) -> int:
    from rackside.judge.lexicon import LexiconError, compile_lexicon

    try:
        report = compile_lexicon(args.src, args.out, args.name)
    except LexiconError as exc:
        return _fail(str(exc))
    print(report.summary())
    print(f"source SHA-256 {report.source_sha256}")
    print(f"wrote {args.out}")
    return EXIT_OK


def cmd_lexicon_info(args: argparse.Namespace) -> int:
    from rackside.judge.lexicon import FORMAT_VERSION, Lexicon, LexiconError

    try:
        with Lexicon.open(args.file) as lexicon:
            print(f"name           {lexicon.name}")
            print(f"words          {lexicon.word_count}")
            print(f"source SHA-256 {lexicon.source_sha256}")
            print(f"format         version {FORMAT_VERSION}, {args.file.stat().st_size} bytes, checksum OK")
    except LexiconError as exc:
        return _fail(str(exc))
    return EXIT_OK


def cmd_lexicon_install_default(args: argparse.Namespace) -> int:
    from rackside.judge.lexicon import LexiconError, install_default_lexicon

    try:
        path = install_default_lexicon()
    except LexiconError as exc:
        return _fail(str(exc))
    print(f"default lexicon ENABLE ready: {path}")
    return EXIT_OK


def cmd_lexicon_use(args: argparse.Namespace) -> int:
    from rackside.judge.lexicon import Lexicon, LexiconError
    from rackside.judge.settings import SettingsError, load_settings, save_settings

    try:
        settings = load_settings()
        if args.file == "default":
            settings.lexicon_path = None
            label = "the default ENABLE"
        else:
            path = Path(args.file).expanduser().resolve()
            with Lexicon.open(path) as lexicon:  # refuse a file that would not open at the table
                label = f"{lexicon.name} ({lexicon.word_count} words, {lexicon.short_checksum})"
            settings.lexicon_path = path
        saved = save_settings(settings)
    except (LexiconError, SettingsError, OSError) as exc:
        return _fail(str(exc))
    print(f"station lexicon set to {label} in {saved}")
    return EXIT_OK


def _log(args: argparse.Namespace):
    from rackside.judge.challenge_log import ChallengeLog, default_log_path

    # The station name only matters when writing; reading accepts every station's records.
    return ChallengeLog(args.file or default_log_path(), "reader")


def _read_log(args: argparse.Namespace):
    """(log, records), with unreadable lines warned about on stderr; or (log, None) after saying
    why the log cannot be read at all."""
    challenge_log = _log(args)
    try:
        records = challenge_log.records()
    except OSError as exc:
        _fail(f"{challenge_log.path}: cannot read the log: {exc.strerror or exc}")
        return challenge_log, None
    for problem in challenge_log.problems:
        print(f"rackside: warning: {challenge_log.path} line {problem.line_number}: {problem.reason}",
              file=sys.stderr)
    return challenge_log, records


def cmd_log_export(args: argparse.Namespace) -> int:
    from rackside.judge.challenge_log import export_csv, open_private

    challenge_log, records = _read_log(args)
    if records is None:
        return EXIT_ERROR
    if args.output:
        try:
            with open_private(args.output) as out:
                export_csv(records, out)
        except OSError as exc:
            return _fail(f"{args.output}: cannot write: {exc.strerror or exc}")
        print(f"wrote {len(records)} challenges to {args.output}", file=sys.stderr)
    else:
        export_csv(records, sys.stdout)
    return EXIT_OK


def cmd_log_show(args: argparse.Namespace) -> int:
    challenge_log, records = _read_log(args)
    if records is None:
        return EXIT_ERROR
    if args.id:
        matches = [r for r in records if r.id == args.id.strip()]
        if not matches:
            return _fail(f"no challenge with id {args.id!r} in {challenge_log.path}")
        rec = matches[0]
        print(f"id        {rec.id}\ntime      {rec.time}\nstation   {rec.station}\ntable     {rec.table or '-'}")
        print(f"kind      {rec.kind}\nlexicon   {rec.lexicon_name} ({rec.lexicon_sha256})")
        print(f"verdict   {rec.verdict}")
        for word, ok in zip(rec.words, rec.per_word):
            print(f"  {word:<15} {'acceptable' if ok else 'NOT acceptable'}")
        return EXIT_OK
    for rec in records:
        print(f"{rec.id}  {rec.time}  table {rec.table or '-':<4} {rec.verdict:<12} {' '.join(rec.words)}")
    return EXIT_OK


def cmd_log_readjudicate(args: argparse.Namespace) -> int:
    from rackside.judge.challenge_log import readjudicate
    from rackside.judge.lexicon import LexiconError
    from rackside.judge.settings import SettingsError

    challenge_log = _log(args)
    try:
        record = challenge_log.find(args.id)
    except OSError as exc:
        return _fail(f"{challenge_log.path}: cannot read the log: {exc.strerror or exc}")
    if record is None:
        return _fail(f"no challenge with id {args.id!r} in {challenge_log.path}")
    try:
        lexicon = _open_lexicon(args.lexicon)
    except (LexiconError, SettingsError) as exc:
        return _fail(str(exc))
    with lexicon:
        result = readjudicate(record, lexicon)
    print(f"{record.id}: {' '.join(record.words)}")
    print(result.message)
    return EXIT_UNACCEPTABLE if result.differs else EXIT_OK
