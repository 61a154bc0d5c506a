"""The challenge engine's subcommands: `rackside judge`, `rackside lexicon ...`, `rackside log ...`.

Each command is a thin edge over `judge.service`, the one behaviour the station shares.

Exit codes: 0 success (for `judge`: ACCEPTABLE), 1 UNACCEPTABLE (or a re-adjudication that is not
final: another verdict or another lexicon, 3.10.11(c)), 2 bad input or a bad/missing file, with
the reason in one line on stderr.
"""

from __future__ import annotations

import os
import sys

# argparse and pathlib are imported by `register` and the commands that need them, not here.
# `rackside judge --lexicon FILE WORD...` is answered by judge.fastpath without importing this
# module at all (issue 11); `fast` is also here, for the same answer from `cli.main`'s callers.
from rackside.judge.fastpath import EXIT_ERROR, EXIT_OK, EXIT_UNACCEPTABLE, _demonstration_warning, _fail, fast


def register(sub) -> None:
    from pathlib import Path

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
    info = lsub.add_parser("info", help="verify a lexicon file (default: the station's current one) and print its "
                                            "name, word count and source SHA-256")
    info.add_argument("file", type=Path, metavar="FILE", nargs="?")
    info.set_defaults(func=cmd_lexicon_info)
    inst = lsub.add_parser("install-default", help="compile the shipped ENABLE lexicon if it is missing or stale")
    inst.set_defaults(func=cmd_lexicon_install_default)
    use = lsub.add_parser("use", help="copy a compiled FILE into the lexicon folder and make it the station's lexicon "
                                          "('default' for ENABLE); a running station picks it up at its next idle screen")
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
    show = logsub.add_parser("show", help="list the log's challenges, or show one by id (any case) or short id")
    show.add_argument("id", nargs="?", metavar="ID")
    show.set_defaults(func=cmd_log_show)
    rej = logsub.add_parser("readjudicate", help="re-judge a logged challenge by its id (3.10.11)")
    rej.add_argument("id", metavar="ID")
    rej.add_argument("--lexicon", type=Path, metavar="FILE", help="lexicon to use (default: the configured one)")
    rej.set_defaults(func=cmd_log_readjudicate)


def _service(args: argparse.Namespace, **kwargs):
    from rackside.judge.service import JudgeService

    # Reading accepts every station's records; the CLI reports damaged lines itself, once each.
    return JudgeService(log_path=getattr(args, "file", None), log_problems=False, **kwargs)


def cmd_judge(args: argparse.Namespace) -> int:
    from rackside.judge.adjudication import ChallengeInputError
    from rackside.judge.penalties import ChallengeRule
    from rackside.judge.service import LexiconError, SettingsError

    service = _service(args)
    try:
        rule = ChallengeRule.parse(args.rule) if args.rule else None
        if args.prior is not None and args.prior < 0:
            raise ValueError(f"--prior must be 0 or more, got {args.prior}")
        service.settings  # a corrupt settings file is refused before any lexicon is opened
        lexicon = service.open_lexicon(args.lexicon)
        judgement = service.check(args.words, prior=args.prior, rule=rule)
    except (ChallengeInputError, LexiconError, SettingsError, ValueError) as exc:
        return _fail(str(exc))
    finally:
        service.close()
    print(judgement.adjudication.verdict)
    if args.guidance or args.rule:
        print(judgement.guidance)
    _demonstration_warning(lexicon)
    return EXIT_OK if judgement.adjudication.acceptable else EXIT_UNACCEPTABLE


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
    from pathlib import Path

    from rackside.judge.lexicon import FORMAT_VERSION, Lexicon, LexiconError, demonstration_note
    from rackside.judge.service import SettingsError

    try:
        if args.file is None:
            service = _service(args)
            path = service.configured_lexicon_path()
            print(f"current        the station's lexicon (set with: rackside lexicon use FILE)")
        else:
            path = args.file
        with Lexicon.open(path) as lexicon:
            print(f"name           {lexicon.name}")
            print(f"words          {lexicon.word_count}")
            print(f"source SHA-256 {lexicon.source_sha256}")
            print(f"file           {path}")
            print(f"format         version {FORMAT_VERSION}, {Path(path).stat().st_size} bytes, checksum OK")
            note = demonstration_note(lexicon)
            if note:
                print(f"note           {note}")
    except (LexiconError, SettingsError, OSError) as exc:
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
    from rackside.judge.service import LexiconError, SettingsError

    service = _service(args)
    try:
        lexicon, copy = service.use_lexicon_file(None if args.file == "default" else args.file)
        saved = service.settings_file
    except (LexiconError, SettingsError, OSError) as exc:
        return _fail(str(exc))
    if lexicon is None:
        print(f"station lexicon set to the default ENABLE in {saved}")
        print("rackside: note: ENABLE is the bundled demonstration list (no QI, ZA or OK); see rackside lexicon info")
    else:
        print(f"station lexicon set to {lexicon.name} ({lexicon.word_count} words, {lexicon.short_checksum}) in {saved}")
        from pathlib import Path  # here: the judge's fast path never loads pathlib

        if Path(args.file).resolve() == copy.resolve():  # chosen from the folder itself: nothing was copied
            print(f"already in the lexicon folder: {copy}")
        else:
            print(f"copied to the lexicon folder: {copy}")
    print("a running station picks it up at its next idle screen")
    return EXIT_OK


def _read_log(args: argparse.Namespace):
    """(service, records), with unreadable lines warned about on stderr, once each; or
    (service, None) after saying in one line why the log cannot be read at all."""
    service = _service(args)
    path = service.challenge_log.path
    if args.file is not None and not path.exists():
        _fail(f"{path}: no challenge log there (the station's log is {_default_log()})")
        return service, None
    try:
        records = service.records()
    except OSError as exc:
        _fail(f"{path}: cannot read the log: {exc.strerror or exc}")
        return service, None
    for problem in service.problems:
        print(f"rackside: warning: {path} line {problem.line_number}: {problem.reason}", file=sys.stderr)
    return service, records


def _default_log():
    from rackside.judge.challenge_log import default_log_path

    return default_log_path()


def cmd_log_export(args: argparse.Namespace) -> int:
    from rackside.judge.challenge_log import export_csv

    service, records = _read_log(args)
    if records is None:
        return EXIT_ERROR
    if args.output:
        try:
            count = service.export_csv(args.output)
        except OSError as exc:
            return _fail(f"{args.output}: cannot write: {exc.strerror or exc}")
        print(f"wrote {count} challenges to {args.output}", file=sys.stderr)
    else:
        export_csv(records, sys.stdout)
    return EXIT_OK


def cmd_log_show(args: argparse.Namespace) -> int:
    from rackside.judge.challenge_log import AmbiguousId

    service, records = _read_log(args)
    if records is None:
        return EXIT_ERROR
    path = service.challenge_log.path
    if args.id:
        try:
            rec = service.find(args.id)
        except AmbiguousId as exc:
            return _fail(str(exc))
        if rec is None:
            return _fail(f"no challenge with id {args.id!r} in {path}")
        print(f"id        {rec.id}\nshort id  {rec.short_id}\ntime      {rec.time}\nstation   {rec.station}")
        print(f"table     {rec.table or '-'}\nkind      {rec.kind}\nlexicon   {rec.lexicon_name} ({rec.lexicon_sha256})")
        print(f"verdict   {rec.verdict}")
        for word, ok in zip(rec.words, rec.per_word):
            print(f"  {word:<15} {'acceptable' if ok else 'NOT acceptable'}")
        return EXIT_OK
    if not records:
        where = "does not exist yet" if not path.exists() else "is empty" if not service.problems else "has no readable record"
        print(f"No challenges: {path} {where}.")
        return EXIT_OK
    for rec in records:
        print(f"{rec.short_id}  {rec.id}  {rec.time}  table {rec.table or '-':<4} {rec.verdict:<12} {' '.join(rec.words)}")
    return EXIT_OK


def cmd_log_readjudicate(args: argparse.Namespace) -> int:
    from rackside.judge.challenge_log import AmbiguousId
    from rackside.judge.service import LexiconError, NotInLog, SettingsError

    service, records = _read_log(args)
    if records is None:
        return EXIT_ERROR
    try:
        record = service.find(args.id)
        if record is None:
            raise NotInLog(f"no challenge with id {args.id!r} in {service.challenge_log.path}")
        lexicon = service.open_lexicon(args.lexicon)
        result = service.readjudicate(record.id, lexicon)
    except (AmbiguousId, NotInLog, LexiconError, SettingsError, OSError) as exc:
        return _fail(str(exc))
    finally:
        service.close()
    print(f"{record.id} ({record.short_id}): {' '.join(record.words)}")
    print(result.message)
    return EXIT_OK if result.final else EXIT_UNACCEPTABLE
