"""The clock journal: every input the clock was given, one JSON object a line (JSON Lines).

Line 1 is the header, `{"rackside_clock_journal": 1, "config": {...}}`; its config holds
`game_time_s` and every `Rules` field, so a replay runs the game under the rules it was played
under. Every later line is one input with its monotonic timestamp `t_ns`, for example
`{"t_ns": 5000000000, "input": "press", "player": 1}`. docs/journal.md documents every input and
field. Extra fields are allowed and ignored by the replay (`resume` carries some).

This module only converts between lines and the core's inputs and reads whole journals; appending
with fsync lives in `firmware.persist`, folding a journal into a clock in `firmware.replay`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rackside.firmware.clock import (
    Adjust,
    Arrive,
    End,
    Forfeit,
    Input,
    LateStart,
    Neutralise,
    Press,
    Resume,
    Rules,
)

JOURNAL_VERSION = 1
HEADER_KEY = "rackside_clock_journal"


class JournalError(ValueError):
    """A journal line (or header) that cannot be understood. The message says why, without the
    line number: readers add it."""


# --- Inputs <-> dicts -------------------------------------------------------------------------

# input name -> (class, the fields after t_ns, in the order they are written)
_INPUTS: dict[str, tuple[type, tuple[str, ...]]] = {
    "press": (Press, ("player",)),
    "neutralise": (Neutralise, ()),
    "end": (End, ()),
    "adjust": (Adjust, ("player", "remaining_ms")),
    "late_start": (LateStart, ("players",)),
    "arrive": (Arrive, ("player",)),
    "forfeit": (Forfeit, ("player",)),
    "resume": (Resume, ("at_ns",)),
}
_NAMES = {cls: name for name, (cls, _) in _INPUTS.items()}
INPUT_NAMES = tuple(_INPUTS)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def input_to_dict(event: Input) -> dict:
    """The journal object for one core input: `t_ns`, `input`, then the input's own fields."""
    name = _NAMES.get(type(event))
    if name is None:
        raise JournalError(f"not a clock input: {event!r}")
    d: dict[str, Any] = {"t_ns": event.t_ns, "input": name}
    for key in _INPUTS[name][1]:
        value = getattr(event, key)
        d[key] = list(value) if key == "players" else value
    return d


def _field(d: dict, name: str, key: str) -> Any:
    if key not in d:
        raise JournalError(f"{name!r} input lacks the {key!r} field")
    value = d[key]
    if key == "player":
        if not _is_int(value) or value not in (1, 2):
            raise JournalError(f"{name!r} input: player must be 1 or 2, got {value!r}")
    elif key == "players":
        if (
            not isinstance(value, list)
            or not value
            or len(value) > 2
            or any(not _is_int(p) or p not in (1, 2) for p in value)
            or len(set(value)) != len(value)
        ):
            raise JournalError(f"{name!r} input: players must be a list of 1 and/or 2, got {value!r}")
        value = tuple(value)
    elif not _is_int(value):
        raise JournalError(f"{name!r} input: {key} must be an integer, got {value!r}")
    return value


def input_from_dict(d: Any) -> Input:
    """The core input for one journal object. Raises JournalError naming what is wrong."""
    if not isinstance(d, dict):
        raise JournalError(f"an input line must be a JSON object, got {type(d).__name__}")
    name = d.get("input")
    if not isinstance(name, str) or name not in _INPUTS:
        if "input" not in d:
            raise JournalError("line lacks the 'input' field")
        raise JournalError(f"unknown input {name!r}: known inputs are {', '.join(INPUT_NAMES)}")
    if "t_ns" not in d:
        raise JournalError(f"{name!r} input lacks the 't_ns' field")
    if not _is_int(d["t_ns"]):
        raise JournalError(f"{name!r} input: t_ns must be an integer (monotonic nanoseconds), got {d['t_ns']!r}")
    cls, keys = _INPUTS[name]
    return cls(d["t_ns"], *(_field(d, name, key) for key in keys))


def parse_line(text: str) -> Input:
    """One journal line (without its newline) as a core input."""
    try:
        d = json.loads(text)
    except ValueError as e:  # JSONDecodeError, and UnicodeDecodeError from bad bytes
        raise JournalError(f"not valid JSON: {e}") from None
    return input_from_dict(d)


def dumps(d: dict) -> str:
    """One line of journal text (no newline): compact, ASCII-only, so a line is one JSON value
    and never contains a raw newline."""
    return json.dumps(d, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


# --- The header --------------------------------------------------------------------------------

_RULE_FIELDS = tuple(f.name for f in fields(Rules))


def rules_to_config(rules: Rules) -> dict:
    """The header's `config`: `game_time_s` (as the issue asks) and every Rules field."""
    game_time_s = rules.game_time_ms // 1000 if rules.game_time_ms % 1000 == 0 else rules.game_time_ms / 1000
    config: dict[str, Any] = {"game_time_s": game_time_s}
    for name in _RULE_FIELDS:
        config[name] = getattr(rules, name)
    return config


def rules_from_config(config: Any) -> tuple[Rules, list[str]]:
    """The Rules a journal header's config describes, and notes about fields that were missing
    (they take WESPA's defaults). Raises JournalError for a config that cannot be used."""
    if not isinstance(config, dict):
        raise JournalError("the header's 'config' must be a JSON object")
    notes: list[str] = []
    values: dict[str, int] = {}
    game_time_s = config.get("game_time_s")
    if game_time_s is None and "game_time_ms" not in config:
        raise JournalError("the header's config lacks 'game_time_s'")
    if game_time_s is not None:
        if isinstance(game_time_s, bool) or not isinstance(game_time_s, (int, float)) or not game_time_s > 0:
            raise JournalError(f"the header's game_time_s must be a positive number, got {game_time_s!r}")
        values["game_time_ms"] = round(game_time_s * 1000)
    defaults = Rules()
    for name in _RULE_FIELDS:
        if name not in config:
            if name not in values:
                notes.append(f"the header's config lacks {name!r}; using {getattr(defaults, name)}")
            continue
        value = config[name]
        if not _is_int(value):
            raise JournalError(f"the header's {name} must be an integer, got {value!r}")
        if name == "game_time_ms" and "game_time_ms" in values and values[name] != value:
            raise JournalError(f"the header's game_time_s ({game_time_s!r}) and game_time_ms ({value}) disagree")
        values[name] = value
    try:
        return Rules(**values), notes
    except ValueError as e:
        raise JournalError(f"the header's config is not valid: {e}") from None


def make_header(rules: Rules, **extra: Any) -> dict:
    """The header object. `extra` (boot id, start time, the runner's settings) is recorded for the
    reader and ignored by the replay."""
    header: dict[str, Any] = {HEADER_KEY: JOURNAL_VERSION, "config": rules_to_config(rules)}
    header.update({k: v for k, v in extra.items() if v is not None})
    return header


def parse_header(text: str) -> tuple[dict, Rules, list[str]]:
    """Check a header line; return the header object, its Rules and notes on missing fields."""
    try:
        header = json.loads(text)
    except ValueError as e:
        raise JournalError(f"the first line is not a journal header (not valid JSON: {e})") from None
    if not isinstance(header, dict) or HEADER_KEY not in header:
        raise JournalError(f"the first line is not a Rackside clock journal header (no {HEADER_KEY!r} key)")
    version = header[HEADER_KEY]
    if version != JOURNAL_VERSION or isinstance(version, bool):
        raise JournalError(f"journal format version {version!r} is not supported (this Rackside reads {JOURNAL_VERSION})")
    if "config" not in header:
        raise JournalError("the header lacks 'config'")
    rules, notes = rules_from_config(header["config"])
    return header, rules, notes


# --- Reading a whole journal -------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One input line as read: its 1-based line number, its byte offset, its raw object, and
    either the parsed input or the problem that kept it out."""

    number: int
    offset: int
    end: int  # byte offset just past this line's newline (or the end of file for a torn tail)
    data: dict | None
    event: Input | None
    problem: str | None = None


@dataclass
class Journal:
    path: Path
    header: dict
    rules: Rules
    notes: list[str]  # about the header (missing fields defaulted)
    lines: list[Line] = field(default_factory=list)  # every line after the header
    size: int = 0  # bytes read
    torn: bool = False  # the file does not end with a newline: the last write was cut short

    @property
    def problems(self) -> list[tuple[int, str]]:
        return [(line.number, line.problem) for line in self.lines if line.problem is not None]


def read_journal(path: Path | str) -> Journal:
    """Read a journal whole. Raises OSError if it cannot be read and JournalError if its header is
    bad; every other fault is a per-line problem, and reading carries on (a crash mid-write leaves
    every earlier line readable). Blank lines are skipped silently."""
    path = Path(path)
    raw = path.read_bytes()
    return parse_journal(raw, path)


def parse_journal(raw: bytes, path: Path | str = "<journal>") -> Journal:
    path = Path(path)
    if not raw.strip():
        raise JournalError("the file is empty: no journal header")
    chunks = raw.split(b"\n")
    torn = not raw.endswith(b"\n")
    if not torn:
        chunks.pop()  # the empty piece after the final newline
    try:
        header_text = chunks[0].decode("utf-8")
    except UnicodeDecodeError:
        raise JournalError("the first line is not a journal header (not UTF-8 text)") from None
    header, rules, notes = parse_header(header_text)
    journal = Journal(path=path, header=header, rules=rules, notes=notes, size=len(raw), torn=torn)
    offset = len(chunks[0]) + 1
    for index, chunk in enumerate(chunks[1:], start=2):
        start, offset = offset, min(offset + len(chunk) + 1, len(raw))
        is_tail = torn and index == len(chunks)
        if not chunk.strip():
            continue
        data = event = problem = None
        try:
            data = json.loads(chunk.decode("utf-8"))
            event = input_from_dict(data)
        except (UnicodeDecodeError, ValueError) as e:  # JournalError is a ValueError
            problem = str(e) if isinstance(e, JournalError) else f"not valid JSON: {e}"
            if is_tail:
                problem = f"incomplete last line (a write cut short): {problem}"
        journal.lines.append(
            Line(
                number=index,
                offset=start,
                end=offset,
                data=data if isinstance(data, dict) else None,
                event=event,
                problem=problem,
            )
        )
    return journal
