"""`rackside judge --lexicon FILE WORD...`, the form a director types at the table, answered before
argparse or the rest of the judge's commands (judge.cli) are imported: Python's own start-up, the
lexicon reader and the adjudication core, and little else (issue 11). Exit codes as judge.cli.
"""

import os
import sys

EXIT_OK = 0
EXIT_UNACCEPTABLE = 1
EXIT_ERROR = 2


def _fail(message: str) -> int:
    print(f"rackside: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def fast(argv: list[str]) -> int | None:
    """`rackside judge --lexicon FILE WORD...` (also `--lexicon=FILE`), answered with nothing but
    the adjudication core and the lexicon reader imported, for a director's whole command to take
    little more than Python's own start-up. The director's station.json still applies (its number
    of words, and a bad file is refused): see `_plain_max_words`. Any other form (another option,
    no --lexicon, settings not read plainly) returns None and goes through the full parser and
    `cmd_judge`, which tests hold to the same output for the same arguments and settings."""
    lexicon_file, words, i = None, [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--lexicon" and lexicon_file is None and i + 1 < len(argv):
            lexicon_file, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--lexicon=") and lexicon_file is None:
            lexicon_file, i = arg[len("--lexicon="):], i + 1
            continue
        if not arg or arg.startswith("-"):
            return None
        words.append(arg)
        i += 1
    if not lexicon_file or lexicon_file.startswith("-") or not words:
        return None
    max_words = _plain_max_words()
    if max_words is None:
        return None  # settings this path does not read plainly (or a file to refuse): the full path
    from rackside.judge.adjudication import ChallengeInputError, adjudicate, normalise_words
    from rackside.judge.lexicon import Lexicon, LexiconError

    try:  # the lexicon before the words, as cmd_judge: with both bad, the same message
        with Lexicon.open(lexicon_file) as lexicon:
            result = adjudicate(normalise_words(words, max_words=max_words), lexicon)
    except (ChallengeInputError, LexiconError) as exc:
        return _fail(str(exc))
    print(result.verdict)
    _demonstration_warning(lexicon)
    return EXIT_OK if result.acceptable else EXIT_UNACCEPTABLE


# What `fast` accepts in station.json without judge.settings, whose imports (pathlib, enum for
# the rules) cost more than the lookup. Tests hold these to judge.settings and ChallengeRule.
_SETTINGS_KEYS = frozenset({"version", "lexicon_path", "challenge_rule", "max_words"})
_RULE_VALUES = frozenset({"single", "5-per-word", "5-per-turn", "10-per-word", "10-per-turn", "double", "dingle",
                          "5-then-10", "increasing"})


class _PlainJSON:
    """json.loads's own settings for its C scanner (`_json.make_scanner`): strict, plain dicts,
    ints and floats; NaN and Infinity (parse_constant None) fail, so take the full path."""

    strict = True
    object_hook = object_pairs_hook = parse_constant = None
    parse_float, parse_int = float, int


def _plain_max_words() -> int | None:
    """The number of words a challenge may name, from the director's station.json (the default
    when there is none), or None unless the file is one the full path would accept with certainty
    and read the same: a JSON object of only the known keys, version 1, the rule by its config
    string, max_words a whole number in range. Anything else, including every file the full path
    refuses, goes through `cmd_judge` and `judge.settings`, which give the one message for it.

    JSON is parsed by json's own C scanner: `import json` brings `re` (with `enum`), about 9 ms
    in this venv, more than the whole command; the scanner costs 0.2 ms (issue 11)."""
    from rackside import paths
    from rackside.judge.adjudication import DEFAULT_MAX_WORDS, MAX_WORDS_LIMIT

    # paths.station_settings() as a str, without pathlib (a test holds the two to the same file)
    try:
        with open(os.path.join(paths.state_dir_name(), "station.json"), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return DEFAULT_MAX_WORDS  # as load_settings: no file, the defaults
    except OSError:
        return None
    try:
        from _json import make_scanner

        text = raw.decode("utf-8")
        start = len(text) - len(text.lstrip(" \t\n\r"))  # json's whitespace
        data, end = make_scanner(_PlainJSON)(text, start)
    except Exception:  # not JSON, or not this CPython's scanner: the full path says which
        return None
    if text[end:].strip(" \t\n\r") or type(data) is not dict or not _SETTINGS_KEYS.issuperset(data):
        return None
    version = data.get("version", 1)
    path = data.get("lexicon_path")
    rule = data.get("challenge_rule", "5-per-word")
    max_words = data.get("max_words", DEFAULT_MAX_WORDS)
    if (type(version) is not int or version != 1 or not (path is None or type(path) is str and path.strip())
            or type(rule) is not str or rule not in _RULE_VALUES
            or type(max_words) is not int or not 1 <= max_words <= MAX_WORDS_LIMIT):
        return None
    return max_words


def _demonstration_warning(lexicon) -> None:
    from rackside.judge.lexicon import demonstration_note

    note = demonstration_note(lexicon)
    if note:
        print(f"rackside: note: {note}", file=sys.stderr)
