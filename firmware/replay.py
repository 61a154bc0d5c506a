"""`rackside clock replay FILE [--json]`: audit a game from its journal.

The replay folds the journal's inputs through the same pure core the firmware runs
(`firmware.clock.apply`), so what it prints is what the clock showed. A line that cannot be used
(bad JSON, an unknown input, a missing field, time going backwards) is reported on stderr with its
line number and skipped, exactly as the firmware skips it when it restores after a power cut; the
replay never stops early. A missing file or a bad header exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rackside.firmware.clock import (
    NS_PER_MS,
    Adjust,
    Arrive,
    Clock,
    ClockInputError,
    End,
    Forfeit,
    Input,
    LateStart,
    Neutralise,
    Phase,
    Press,
    Resume,
    View,
    apply,
    new_clock,
    view,
)
from rackside.firmware.journal import Journal, JournalError, Line, read_journal

EXIT_OK = 0
EXIT_UNREADABLE = 2


@dataclass
class Replayed:
    """A journal folded into a clock: the clock after the last usable input, and what was skipped."""

    journal: Journal
    clock: Clock
    applied: int = 0  # inputs applied
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line number, why skipped)
    lines_read: int = 0  # input lines seen (usable or not)
    resumes: int = 0
    last_resume_line: int | None = None
    last_t_ns: int | None = None  # the last applied input's t_ns, on the current boot's clock


Step = Callable[[Line, Input, Clock], None]


def fold(journal: Journal, *, upto_line: int | None = None, on_step: Step | None = None) -> Replayed:
    """Fold the journal's inputs (up to and including line `upto_line`, if given) into a clock.
    The firmware restores with this too, so a replay reproduces a restore exactly."""
    result = Replayed(journal=journal, clock=new_clock(journal.rules))
    result.problems.extend((1, note) for note in journal.notes)
    for line in journal.lines:
        if upto_line is not None and line.number > upto_line:
            break
        result.lines_read += 1
        if line.event is None:
            result.problems.append((line.number, line.problem or "unusable line"))
            continue
        try:
            result.clock = apply(result.clock, line.event)
        except ClockInputError as e:
            result.problems.append((line.number, f"{_describe(line.event)}: {e}; skipped"))
            continue
        result.applied += 1
        result.last_t_ns = line.event.t_ns
        if isinstance(line.event, Resume):
            result.resumes += 1
            result.last_resume_line = line.number
        if on_step is not None:
            on_step(line, line.event, result.clock)
    return result


def final_view(result: Replayed) -> View:
    """The clock as it stood at the last usable input."""
    c = result.clock
    return view(c, c.since_ns if c.since_ns is not None else 0)


# --- Text -----------------------------------------------------------------------------------------


def _describe(event: Input) -> str:
    if isinstance(event, Press):
        return f"press {event.player}"
    if isinstance(event, Neutralise):
        return "neutralise"
    if isinstance(event, End):
        return "end"
    if isinstance(event, Adjust):
        return f"adjust {event.player} to {_clock_text(event.remaining_ms * NS_PER_MS)}"
    if isinstance(event, LateStart):
        return "late_start " + ",".join(str(p) for p in event.players)
    if isinstance(event, Arrive):
        return f"arrive {event.player}"
    if isinstance(event, Forfeit):
        return f"forfeit {event.player}"
    if isinstance(event, Resume):
        return "resume (restored)"
    return type(event).__name__.lower()


def _clock_text(remaining_ns: int) -> str:
    """Exact remaining time for an audit, to the millisecond: 24:47.877, -1:05.300."""
    sign = "-" if remaining_ns < 0 else ""
    ms = abs(remaining_ns) // NS_PER_MS
    return f"{sign}{ms // 60_000}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def _phase_text(v: View, c: Clock) -> str:
    if v.phase is Phase.RUNNING:
        return f"running {c.side}"
    if v.phase is Phase.NEUTRALISED:
        return f"neutralised ({c.side} to restart)"
    if v.phase is Phase.ENDED:
        return f"ended: {v.ending.value}" if v.ending else "ended"
    if v.phase is Phase.LATE:
        return "late: waiting for " + ",".join(str(p.player) for p in v.players if p.absent)
    return v.phase.value


HEAD = f"{'line':>5} {'elapsed':>10}  {'input':<22} {'P1 remaining':>12} {'ot':>4} {'pen':>4}  {'P2 remaining':>12} {'ot':>4} {'pen':>4}  phase"


def format_step(line: Line, event: Input, c: Clock) -> str:
    v = view(c, c.since_ns)
    elapsed_s = (c.since_ns - c.origin_ns) / 1e9
    p1, p2 = v.players
    return (
        f"{line.number:>5} {elapsed_s:>10.3f}  {_describe(event):<22} "
        f"{_clock_text(p1.remaining_ns):>12} {p1.overtime_s:>4} {p1.penalty:>4}  "
        f"{_clock_text(p2.remaining_ns):>12} {p2.overtime_s:>4} {p2.penalty:>4}  {_phase_text(v, c)}"
    )


def summary_json(result: Replayed) -> dict:
    """The final state as one JSON object (the `--json` output)."""
    v = final_view(result)
    c = result.clock
    players = [
        {
            "player": p.player,
            "remaining_ms": p.remaining_ms,
            "overtime_s": p.overtime_s,
            "penalty": p.penalty,
            "forfeit": p.forfeit,
            "display": p.text,
            "absent": p.absent,
            "running": p.running,
        }
        for p in v.players
    ]
    return {
        "players": players,
        "phase": v.phase.value,
        "ending": v.ending.value if v.ending else None,
        "forfeits": list(v.forfeits),
        "winner_by_forfeit": v.winner_by_forfeit(),
        "lateness_margin": v.lateness_margin,
        "restored": v.restored,
        "elapsed_ms": 0 if c.origin_ns is None else (c.since_ns - c.origin_ns) // NS_PER_MS,
        "neutral_ms": c.neutral_ns // NS_PER_MS,
        "inputs_applied": result.applied,
        "lines_read": result.lines_read,
        "resumes": result.resumes,
        "problems": [{"line": n, "problem": p} for n, p in result.problems],
        "journal": str(result.journal.path),
        "config": {k: v for k, v in result.journal.header.get("config", {}).items()},
    }


def _rules_text(journal: Journal) -> str:
    r = journal.rules

    def mmss(ms: int) -> str:
        return f"{ms // 60_000}:{ms // 1000 % 60:02d}"

    return (
        f"game time {mmss(r.game_time_ms)}, {r.penalty_per_minute} points per minute of overtime, "
        f"forfeit at {mmss(r.forfeit_overtime_ms)} overtime, lateness forfeit margin {r.lateness_forfeit_margin}"
    )


# --- CLI ------------------------------------------------------------------------------------------


def run(args: argparse.Namespace, *, stdout=None, stderr=None) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    path: Path = args.file
    try:
        journal = read_journal(path)
    except FileNotFoundError:
        print(f"rackside clock replay: {path}: no such file", file=err)
        return EXIT_UNREADABLE
    except IsADirectoryError:
        print(f"rackside clock replay: {path}: is a directory, not a journal", file=err)
        return EXIT_UNREADABLE
    except OSError as e:
        print(f"rackside clock replay: {path}: cannot read: {e.strerror or e}", file=err)
        return EXIT_UNREADABLE
    except JournalError as e:
        print(f"rackside clock replay: {path}: line 1: bad header: {e}", file=err)
        return EXIT_UNREADABLE

    def print_step(line: Line, event: Input, c: Clock) -> None:
        print(format_step(line, event, c), file=out)

    if not args.json:
        print(f"{path}: {_rules_text(journal)}", file=out)
        print(HEAD, file=out)
    result = fold(journal, on_step=None if args.json else print_step)
    for number, problem in result.problems:
        print(f"{path}:{number}: {problem}", file=err)

    if args.json:
        print(json.dumps(summary_json(result)), file=out)
        return EXIT_OK
    v = final_view(result)
    verdict = _phase_text(v, result.clock)
    if v.forfeits:
        verdict += f"; forfeited by {' and '.join(str(p) for p in v.forfeits)}"
        if v.winner_by_forfeit() and v.lateness_margin is not None:
            verdict += f"; player {v.winner_by_forfeit()} wins by {v.lateness_margin} points (2.3.6(a))"
    finals = "; ".join(
        f"player {p.player}: {p.text} ({_clock_text(p.remaining_ns)}), overtime {p.overtime_s} s, penalty {p.penalty}"
        for p in v.players
    )
    print(f"final: {finals}", file=out)
    print(
        f"{verdict}. {result.applied} inputs applied, {len(result.problems)} problems, {result.resumes} restores.",
        file=out,
    )
    return EXIT_OK

