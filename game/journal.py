"""The clock journal: every input the clock was given, one JSON object a line (JSON Lines).

Line 1 is the header, `{"rackside_clock_journal": 1, "config": {...}}`; its config holds
`game_time_s` and every `Rules` field, so a replay runs the game under the rules it was played
under. Every later line is one input with its monotonic timestamp `t_ns`, for example
`{"t_ns": 5000000000, "input": "press", "player": 1}`. docs/journal.md documents every input and
field. Extra fields are allowed and ignored by the replay (`resume` carries some).

Every input line written since issue 9 also carries `seq`: the input's number in the game (1, 2,
...), counted for every input the clock acted on, written or not, so a reader sees a gap where a
full or failing card lost inputs. After such a gap the store writes a `state` line: the clock's
whole state, so a replay or a restore carries on from what the clock really showed
(docs/journal.md). Journals without `seq` (older ones) read as before.

This module converts between lines and the core's inputs and reads journals as a stream (one line
in memory at a time, so a journal of any size replays in constant memory); appending with fsync
lives in `firmware.persist`, folding a journal into a clock in `game.replay`.

Nothing in a journal can make the reader raise anything but `JournalError` for a bad header: a
number no clock can hold, nesting deep enough to exhaust the parser's recursion, bytes that are not
UTF-8 or a line of any length are all a bad header (line 1) or a damaged line, skipped with its number.
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, NamedTuple

from rackside.game.clock import (
    Adjust,
    Arrive,
    Clock,
    End,
    Ending,
    Forfeit,
    Input,
    LateStart,
    Neutralise,
    Phase,
    Press,
    Resume,
    Rules,
    Takeover,
    apply,
    view,
)
from rackside.game.slip import SlipKey, SlipOutcome, SlipSign
from rackside.game import slip as slips
from rackside.game import table as table_core

JOURNAL_VERSION = 1
HEADER_KEY = "rackside_clock_journal"
STATE = "state"  # the `input` name of a state line (not a clock input: see `StateRecord`)
# A real line is under 1 KiB (a state line about 700 bytes; a header with its settings a few KiB).
# Anything longer is damage: it is skipped without ever being held in memory whole.
MAX_LINE_BYTES = 64 * 1024
READ_BLOCK = 1 << 20  # journals are read in blocks of this many bytes: memory never grows past a few


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
    "takeover": (Takeover, ("player",)),
    # the signed result slip's inputs after the game's end (game.slip; the clock core leaves an
    # ended clock as it is, the slip folds them: game.replay.fold_slip)
    "slip_key": (SlipKey, ("key",)),
    "slip_sign": (SlipSign, ("player",)),
    "slip_outcome": (SlipOutcome, ("outcome", "why", "recorded")),
}
_NAMES = {cls: name for name, (cls, _) in _INPUTS.items()}
# ... and the table's inputs beside the clock (issue 27: check-in, the director's call), whose
# fields and checks game.table keeps
INPUT_NAMES = tuple(_INPUTS)  # the clock core's
TABLE_INPUT_NAMES = tuple(table_core.JOURNAL_INPUTS)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def input_to_dict(event: Input) -> dict:
    """The journal object for one core input: `t_ns`, `input`, then the input's own fields."""
    name = _NAMES.get(type(event))
    if name is None and table_core.is_table_input(event):
        return table_core.input_to_dict(event)
    if name is None:
        raise JournalError(f"not a clock input: {event!r}")
    d: dict[str, Any] = {"t_ns": event.t_ns, "input": name}
    for key in _INPUTS[name][1]:
        value = getattr(event, key)
        if key in OPTIONAL and value is None:
            continue  # a field later versions added: a line without it reads as before
        d[key] = list(value) if key in ("players", "recorded") else value
    return d


OPTIONAL = ("recorded",)  # slip_outcome's recorded result (issue 36): absent from older journals


def _field(d: dict, name: str, key: str) -> Any:
    if key in OPTIONAL:
        value = d.get(key)
        if value is None:
            return None
        if not (isinstance(value, list) and len(value) == 2 and all(_is_int(x) for x in value)):
            raise JournalError(f"{name!r} input: {key} must be two whole numbers, got {value!r}")
        return tuple(value)
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
    elif key in _SLIP_FIELDS:
        try:  # the slip core's own check, on an input holding just this field
            slips.check(_SLIP_FIELDS[key](value))
        except slips.SlipInputError as e:
            raise JournalError(f"{name!r} input: {e}") from None
    elif not _is_int(value):
        raise JournalError(f"{name!r} input: {key} must be an integer, got {value!r}")
    return value


_SLIP_FIELDS = {  # a text field of a slip input -> an input holding it, for slips.check
    "key": lambda v: SlipKey(0, v),
    "outcome": lambda v: SlipOutcome(0, v),
    "why": lambda v: SlipOutcome(0, slips.OUTCOMES[0], v),
}


def input_from_dict(d: Any) -> Input:
    """The core input for one journal object. Raises JournalError naming what is wrong."""
    if not isinstance(d, dict):
        raise JournalError(f"an input line must be a JSON object, got {type(d).__name__}")
    name = d.get("input")
    if isinstance(name, str) and name in table_core.JOURNAL_INPUTS and _is_int(d.get("t_ns")):
        try:
            return table_core.input_from_dict(name, d)
        except ValueError as e:
            raise JournalError(str(e)) from None
    if not isinstance(name, str) or name not in _INPUTS and name not in table_core.JOURNAL_INPUTS:
        if "input" not in d:
            raise JournalError("line lacks the 'input' field")
        raise JournalError(f"unknown input {name!r}: known inputs are {', '.join(INPUT_NAMES + TABLE_INPUT_NAMES)}")
    if "t_ns" not in d:
        raise JournalError(f"{name!r} input lacks the 't_ns' field")
    if not _is_int(d["t_ns"]):
        raise JournalError(f"{name!r} input: t_ns must be an integer (monotonic nanoseconds), got {d['t_ns']!r}")
    cls, keys = _INPUTS[name]
    return cls(d["t_ns"], *(_field(d, name, key) for key in keys))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a journal may hold")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 parses as infinity
        raise ValueError(f"{text} is too large a number")
    return value


def loads(text: str | bytes) -> Any:
    """json.loads for journal text: NaN, Infinity and numbers past a float's range are refused, and
    every way parsing can fail (bad JSON, bad UTF-8, nesting past the recursion limit, an integer
    past Python's digit limit) is one JournalError."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise JournalError("not valid JSON: nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, the digit limit, ours above
        raise JournalError(f"not valid JSON: {e}") from None


def parse_line(text: str) -> Input:
    """One journal line (without its newline) as a core input."""
    return input_from_dict(loads(text))


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
        if (
            isinstance(game_time_s, bool)
            or not isinstance(game_time_s, (int, float))
            or not 0 < game_time_s < 10**9  # no game lasts 30 years; a bigger number is damage
        ):
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
        header = loads(text)
    except JournalError as e:
        raise JournalError(f"the first line is not a journal header ({e})") from None
    if not isinstance(header, dict) or HEADER_KEY not in header:
        raise JournalError(f"the first line is not a Rackside clock journal header (no {HEADER_KEY!r} key)")
    version = header[HEADER_KEY]
    if version != JOURNAL_VERSION or isinstance(version, bool):
        raise JournalError(f"journal format version {version!r} is not supported (this Rackside reads {JOURNAL_VERSION})")
    if "config" not in header:
        raise JournalError("the header lacks 'config'")
    try:
        rules, notes = rules_from_config(header["config"])
    except JournalError:
        raise
    except (ValueError, TypeError, OverflowError) as e:  # any other damage is a bad header too
        raise JournalError(f"the header's config is not valid: {e}") from None
    return header, rules, notes


# --- State lines: the clock's whole state, after inputs were lost ----------------------------------


def clock_to_dict(c: Clock) -> dict:
    """Every field of a Clock as JSON values (for state lines and checkpoints)."""
    d: dict[str, Any] = {}
    for f in fields(Clock):
        value = getattr(c, f.name)
        if f.name == "rules":
            value = {r.name: getattr(value, r.name) for r in fields(Rules)}
        elif isinstance(value, (Phase, Ending)):
            value = value.value
        elif isinstance(value, tuple):
            value = list(value)
        d[f.name] = value
    return d


def _check_value(name: str, kind: str, value: Any) -> Any:
    """One Clock field from JSON, checked against its annotation, so a damaged state can never
    reach the core with a wrong type (the core would raise TypeError, not ClockInputError)."""
    optional = kind.endswith(" | None")
    base = kind.removesuffix(" | None")
    if value is None:
        if optional:
            return None
        raise JournalError(f"state: {name} must not be null")
    if base == "int" and _is_int(value):
        return value
    if base == "bool" and isinstance(value, bool):
        return value
    if base == "Phase":
        try:
            return Phase(value)
        except ValueError:
            pass
    if base == "Ending":
        try:
            return Ending(value)
        except ValueError:
            pass
    if base == "Rules" and isinstance(value, dict):
        if set(value) != set(_RULE_FIELDS) or not all(_is_int(v) for v in value.values()):
            raise JournalError(f"state: rules must hold the integer fields {', '.join(_RULE_FIELDS)}")
        try:
            return Rules(**value)
        except ValueError as e:
            raise JournalError(f"state: rules: {e}") from None
    m = re.fullmatch(r"tuple\[(int|bool)(, \1|, \.\.\.)\]", base)
    if m and isinstance(value, list):
        item = _is_int if m.group(1) == "int" else (lambda v: isinstance(v, bool))
        if (m.group(2) == ", ..." or len(value) == 2) and all(item(v) for v in value):
            return tuple(value)
    raise JournalError(f"state: {name} must be {kind}, got {value!r}")


def clock_from_dict(d: Any) -> Clock:
    """A Clock from `clock_to_dict`'s output, every field checked. Raises JournalError (a
    ValueError) for anything else."""
    if not isinstance(d, dict):
        raise JournalError("state must be a JSON object")
    values: dict[str, Any] = {}
    for f in fields(Clock):
        if f.name not in d:
            raise JournalError(f"state lacks {f.name!r}")
        values[f.name] = _check_value(f.name, str(f.type), d[f.name])
    try:
        clock = Clock(**values)
    except (TypeError, ValueError) as e:
        raise JournalError(f"state: {e}") from None
    if clock.side not in (None, 1, 2) or any(p not in (1, 2) for p in clock.forfeits):
        raise JournalError("state: side and forfeits must name player 1 or 2")
    if clock.pressed is not None and clock.pressed[0] not in (1, 2):
        raise JournalError("state: pressed must name player 1 or 2")
    return clock


@dataclass(frozen=True)
class StateRecord:
    """A `state` line: the clock as it stood at `t_ns` (settled there), including inputs the
    journal lost. `seq` is the last input it includes; `lost` the input numbers the store knew it
    could not write, as [first, last] ranges."""

    t_ns: int
    seq: int
    clock: Clock
    lost: tuple[tuple[int, int], ...] = ()


def state_to_dict(t_ns: int, seq: int, clock: Clock, lost: list | tuple = (), **extra: Any) -> dict:
    return {"t_ns": t_ns, "input": STATE, "seq": seq, "lost": [list(r) for r in lost], **extra, "state": clock_to_dict(clock)}


def _state_from_dict(d: dict) -> StateRecord:
    t_ns, seq = d.get("t_ns"), d.get("seq")
    if not _is_int(t_ns) or not _is_int(seq) or seq < 0:
        raise JournalError("a state line needs integer t_ns and seq")
    lost = d.get("lost", [])
    if not isinstance(lost, list) or not all(
        isinstance(r, list) and len(r) == 2 and all(_is_int(x) and x > 0 for x in r) and r[0] <= r[1] for r in lost
    ):
        raise JournalError("state line: lost must be a list of [first, last] input numbers")
    clock = clock_from_dict(d.get("state"))
    if clock.since_ns != t_ns:
        raise JournalError("state line: its state is not settled at its t_ns")
    _check_playable(clock)
    return StateRecord(t_ns, seq, clock, tuple(tuple(r) for r in lost))


def _check_playable(clock: Clock) -> None:
    """A state line replaces the clock a replay or a restore carries on from: one whose fields are
    each well typed but together make no sense (running with no side) would crash the core later,
    in a running clock. So try it now: shown, and given each input, as the runner would."""
    t = clock.since_ns
    try:
        view(clock, t + 1)
        for event in (Press(t + 1, 1), Press(t + 1, 2), Neutralise(t + 1), End(t + 1), Arrive(t + 1, 1), Forfeit(t + 1, 2), Adjust(t + 1, 1, 60_000)):
            view(apply(clock, event), t + 2)
    except Exception as e:  # noqa: BLE001 - any failure of the core on it means the state is damaged
        raise JournalError(f"state line: not a state the clock can be in ({type(e).__name__}: {e})") from None


# --- Reading a journal, one line at a time ------------------------------------------------------


class Line(NamedTuple):
    """One line after the header as read: its 1-based line number, its byte offset, its raw object,
    its sequence number (None in older journals), and either what it holds (a core input or a
    `StateRecord`) or the problem that kept it out. (A named tuple: a replay makes millions.)"""

    number: int
    offset: int
    end: int  # byte offset just past this line's newline (or the end of file for a torn tail)
    data: dict | None
    event: Input | StateRecord | None
    problem: str | None = None
    seq: int | None = None


# The line the clock writes most, parsed without the JSON decoder: replaying a long journal is
# mostly this. Only text json.loads would read as the same object matches (no leading zeros, no
# spaces); anything else takes the general path.
_PRESS = re.compile(rb'\{"t_ns":(0|[1-9][0-9]{0,24}),"input":"press","player":([12]),"seq":([1-9][0-9]{0,24})\}')
# The next commonest (a challenge is two): still one in every fifty lines, and the JSON decoder
# costs ten times the match.
_NEUTRALISE = re.compile(rb'\{"t_ns":(0|[1-9][0-9]{0,24}),"input":"neutralise","seq":([1-9][0-9]{0,24})\}')


def parse_record(chunk: bytes) -> tuple[dict, Input | StateRecord, int | None]:
    """One line's bytes as (object, input or state, seq). Raises JournalError saying why not."""
    m = _PRESS.fullmatch(chunk)
    if m is not None:  # the common case (also inlined in Journal.iter_lines)
        t_ns, player, seq = int(m.group(1)), int(m.group(2)), int(m.group(3))
        return {"t_ns": t_ns, "input": "press", "player": player, "seq": seq}, Press(t_ns, player), seq
    m = _NEUTRALISE.fullmatch(chunk)
    if m is not None:
        t_ns, seq = int(m.group(1)), int(m.group(2))
        return {"t_ns": t_ns, "input": "neutralise", "seq": seq}, Neutralise(t_ns), seq
    d = loads(chunk)
    if not isinstance(d, dict):
        raise JournalError(f"an input line must be a JSON object, got {type(d).__name__}")
    seq = d.get("seq")
    if seq is not None and (not _is_int(seq) or seq < 1):
        raise JournalError(f"seq must be a positive integer (the input's number), got {seq!r}")
    if d.get("input") == STATE:
        return d, _state_from_dict(d), seq
    return d, input_from_dict(d), seq


@dataclass
class Journal:
    """A journal's header, and its lines as a stream: `iter_lines()` reads the file again each
    time, one line at a time. `lines` and `problems` read it whole (for tests and small tools)."""

    path: Path
    header: dict
    rules: Rules
    notes: list[str]  # about the header (missing fields defaulted)
    size: int  # bytes, when opened
    torn: bool  # the file does not end with a newline: the last write was cut short
    header_end: int  # byte offset of line 2
    _open: Callable[[], BinaryIO]

    def iter_lines(self, after: tuple[int, int] | None = None) -> Iterator[Line]:
        """Every non-blank line after the header, in order, read in 1 MiB blocks. A line longer
        than MAX_LINE_BYTES is reported without being held whole; a last line with no newline is
        the torn one (a complete object there is still read). `after=(line number, byte offset
        just past it)` starts after that line without reading what comes before."""
        number, offset = after if after is not None else (1, self.header_end)
        size = self.size
        too_long = f"line too long (over {MAX_LINE_BYTES} bytes): damaged"
        match, new_object, new_tuple = _PRESS.fullmatch, object.__new__, tuple.__new__
        # Lines come a block's worth at a time (one generator step per block, not per line): a
        # replay is millions of lines, and per-line overhead outside the core is most of its cost.
        for lines, pos, kind in _split_lines(self._open, offset, size):
            for chunk in lines:
                number += 1
                start = pos
                pos = end = start + len(chunk) + 1
                m = match(chunk)  # the common case, inline: no call, no JSON decoder
                if m is not None:
                    t_text, player_text, seq_text = m.groups()
                    t_ns, player, seq = int(t_text), 1 if player_text == b"1" else 2, int(seq_text)
                    # Press(t_ns, player) and Line(...) without their Python-level __init__ and
                    # __new__: a replay builds one of each per press, a third of the reader's work
                    event = new_object(Press)
                    d = event.__dict__
                    d["t_ns"] = t_ns
                    d["player"] = player
                    if end > size:  # a complete press with no newline: the torn last line
                        end = size
                    yield new_tuple(Line, (number, start, end, {"t_ns": t_ns, "input": "press", "player": player, "seq": seq}, event, None, seq))
                    continue
                if end > size:
                    end = size
                if kind == _TOO_LONG:
                    yield Line(number, start, end, None, None, too_long)
                    continue
                if not chunk.strip():
                    continue
                try:
                    data, event, seq = parse_record(chunk)
                except JournalError as e:
                    problem = str(e)
                    if kind == _UNFINISHED:
                        problem = f"incomplete last line (a write cut short): {problem}"
                    yield Line(number, start, end, None, None, problem)
                    continue
                yield Line(number, start, end, data, event, None, seq)

    @property
    def lines(self) -> list[Line]:
        return list(self.iter_lines())

    @property
    def problems(self) -> list[tuple[int, str]]:
        return [(line.number, line.problem) for line in self.iter_lines() if line.problem is not None]


_WHOLE, _TOO_LONG, _UNFINISHED = 0, 1, 2  # what `_split_lines` says of each batch


def _split_lines(opener: Callable[[], BinaryIO], start: int, size: int) -> Iterator[tuple[list[bytes], int, int]]:
    """The lines from `start` up to `size` bytes (what the file held when opened: lines appended
    since are not read), in 1 MiB blocks, as batches `(lines without their newlines, byte offset
    of the first, kind)`: each line of a batch starts just past the one before. A line over
    MAX_LINE_BYTES comes alone as ([b""], offset, _TOO_LONG), its bytes dropped as read; a last
    line with no newline alone as _UNFINISHED."""
    with opener() as f:
        f.seek(start)
        read, carry, skip_start = start, b"", None  # skip_start: a too-long line being dropped
        while read < size:
            data = f.read(min(READ_BLOCK, size - read))
            if not data:
                break
            block_start, read = read, read + len(data)
            if skip_start is not None:
                nl = data.find(b"\n")
                if nl < 0:
                    continue
                yield [b""], skip_start, _TOO_LONG
                skip_start, data, block_start = None, data[nl + 1 :], block_start + nl + 1
            if carry:
                data, block_start, carry = carry + data, block_start - len(carry), b""
            lines = data.split(b"\n")
            tail = lines.pop()  # after the last newline: the start of a line the next block ends
            pos = block_start
            if lines and max(map(len, lines)) < MAX_LINE_BYTES:  # the usual block: all of it at once
                yield lines, pos, _WHOLE
                pos += sum(map(len, lines)) + len(lines)
            else:
                for line in lines:
                    if len(line) >= MAX_LINE_BYTES:
                        yield [b""], pos, _TOO_LONG
                    else:
                        yield [line], pos, _WHOLE
                    pos += len(line) + 1
            if len(tail) >= MAX_LINE_BYTES:
                skip_start = pos
            else:
                carry = tail
        if skip_start is not None:
            yield [b""], skip_start, _TOO_LONG
        elif carry:
            yield [carry], read - len(carry), _UNFINISHED


def _open_journal(path: Path, opener: Callable[[], BinaryIO]) -> Journal:
    with opener() as f:
        size = f.seek(0, io.SEEK_END)
        if size:
            f.seek(size - 1)
            torn = f.read(1) != b"\n"
        else:
            torn = False
        f.seek(0)
        first = f.readline(MAX_LINE_BYTES + 1)
    if not first.strip():
        raise JournalError("the file is empty: no journal header" if size == 0 or not first else "the first line is blank: no journal header")
    if len(first) > MAX_LINE_BYTES:
        raise JournalError(f"the first line is not a journal header (over {MAX_LINE_BYTES} bytes)")
    header, rules, notes = parse_header(first.rstrip(b"\n"))
    return Journal(path=path, header=header, rules=rules, notes=notes, size=size, torn=torn, header_end=len(first), _open=opener)


def read_journal(path: Path | str) -> Journal:
    """Open a journal: its header is read and checked now, its lines when iterated (each pass
    reads the file again, in constant memory). Raises OSError if it cannot be read and
    JournalError if its header is bad; every other fault is a per-line problem (a crash mid-write
    leaves every earlier line readable). Blank lines are skipped silently."""
    path = Path(path)
    return _open_journal(path, lambda: open(path, "rb"))


def parse_journal(raw: bytes, path: Path | str = "<journal>") -> Journal:
    """A journal held in memory (tests, the power-loss harness's snapshots)."""
    return _open_journal(Path(path), lambda: io.BytesIO(raw))
