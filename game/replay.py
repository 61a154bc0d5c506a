"""`rackside clock replay FILE [--json]`: audit a game from its journal.

The replay folds the journal's inputs through the same pure core the firmware runs
(`game.clock.apply`), so what it prints is what the clock showed. A line that cannot be used
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

from rackside.game.clock import (
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
    Takeover,
    View,
    apply,
    new_clock,
    settle,
    view,
)
from rackside.game import slip as slips
from rackside.game.journal import Journal, JournalError, Line, StateRecord, read_journal
from rackside.game import table as table_core
from rackside.game.table import Table, TableInputError
from rackside.game.rules_table import mmss

EXIT_OK = 0
EXIT_UNREADABLE = 2


MAX_PROBLEMS_KEPT = 1000  # problems beyond this are counted (and streamed to on_problem), not kept


@dataclass
class Replayed:
    """A journal folded into a clock: the clock after the last usable input, and what was skipped.
    Holds no lines: the journal is read one line at a time, so memory does not grow with it."""

    journal: Journal
    clock: Clock
    applied: int = 0  # inputs applied
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line number, why), the first 1000
    problem_count: int = 0  # every problem, kept or not
    lines_read: int = 0  # input lines seen (usable or not)
    resumes: int = 0
    last_resume_line: int | None = None
    last_resume_data: dict | None = None  # the last resume line's object (its boot_id)
    last_t_ns: int | None = None  # the last applied input's t_ns, on the current boot's clock
    last_seq: int = 0  # the highest input number seen (0: none, or a journal from before seq)
    lost: list[tuple[int, int]] = field(default_factory=list)  # input numbers the journal lacks
    states: int = 0  # state lines taken (after lost inputs)
    at_line_clock: Clock | None = None  # with fold(at_line=N): the clock after line N
    at_line_seq: int = 0
    last_line: int = 1  # the number of the last line read
    table: Table = field(default_factory=Table)  # check-in and calls (game.table), folded with the clock
    at_line_table: Table | None = None

    def problem(self, number: int, text: str) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append((number, text))


Step = Callable[[Line, Input, Clock], None]
_TABLE_KINDS = frozenset(table_core.INPUT_TYPES)


def _lost_text(ranges) -> str:
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges)


def fold(
    journal: Journal,
    *,
    upto_line: int | None = None,
    on_step: Step | None = None,
    on_problem: Callable[[int, str], None] | None = None,
    at_line: int | None = None,
    start: tuple[int, Clock, int] | tuple[int, Clock, int, int] | None = None,
    table: Table | None = None,
) -> Replayed:
    """Fold the journal's inputs (up to and including line `upto_line`, if given) into a clock, one
    line at a time. The firmware restores with this too, so a replay reproduces a restore exactly.

    Sequence numbers: an input whose `seq` jumps past the last one + 1 follows inputs the clock
    acted on but could not journal (a full card); that is reported at the line, and the `state`
    line the store wrote once it could is taken as the clock's state from there (the newest state
    the clock vouched for), reported too when it differs from what the journal alone gives. An
    input whose `seq` does not advance is a damaged or repeated line, skipped.
    `at_line=N` also keeps the clock as it stood after line N (a restore checks a checkpoint with
    it, in the same pass); `start=(N, clock, seq)` begins after line N from that clock instead, and
    `start=(N, clock, seq, offset)` also skips reading the lines before it (offset: the byte just
    past line N). `table` is the table's state (game.table) at the start (a checkpoint's):
    the table's inputs (check-in, calls) fold with the clock's, through `game.table.step`."""
    result = Replayed(journal=journal, clock=new_clock(journal.rules), table=table or Table())
    report = result.problem
    if on_problem is not None:

        def report(number: int, text: str) -> None:
            result.problem(number, text)
            on_problem(number, text)

    for note in journal.notes:
        report(1, note)
    after, skip_to = 1, None
    if start is not None:
        after, result.clock, result.last_seq = start[:3]
        result.last_t_ns = result.clock.since_ns
        if len(start) == 4:
            skip_to = (after, start[3])
    # The loop keeps its counters in locals and writes them back at the end: a long journal is
    # millions of iterations, and attribute access is most of the cost that is not the core's.
    clock, last_seq, applied, lines_read, last_t_ns = result.clock, result.last_seq, 0, 0, result.last_t_ns
    tables, step, table = _TABLE_KINDS, table_core.step, result.table
    never = 1 << 62  # a line number no journal reaches (an int: comparing with inf is slower)
    stop = upto_line if upto_line is not None else never
    snap = at_line if at_line is not None else never
    number = 1
    watch = min(stop, snap)  # one comparison per line for both
    for line in journal.iter_lines(skip_to):
        number, _, _, data, event, problem, seq = line
        if number <= after:
            continue
        if number > watch:
            if number > stop:
                break
            if number > snap:
                result.at_line_clock, result.at_line_seq, snap = clock, last_seq, never
                result.at_line_table = table
            watch = min(stop, snap)
        lines_read += 1
        kind = type(event)
        if kind is StateRecord:
            result.clock, result.last_seq, result.last_t_ns = clock, last_seq, last_t_ns
            _take_state(result, line, event, report)
            clock, last_seq, last_t_ns = result.clock, result.last_seq, result.last_t_ns
            if on_step is not None and clock is event.clock:
                on_step(line, event, clock)
            continue
        if event is None:
            report(number, problem or "unusable line")
            continue
        if seq is not None and seq != last_seq + 1:  # not the next input: a gap, or a repeat
            if last_seq and seq <= last_seq:
                report(number, f"{_describe(event)}: input number {seq} repeats or goes back (last was {last_seq}); skipped")
                continue
            gap = (last_seq + 1, seq - 1)
            result.lost.append(gap)
            report(
                number,
                f"inputs {_lost_text([gap])} were not journalled ({gap[1] - gap[0] + 1} the clock acted on while "
                "the card could not take them): times from here rely on the next state line",
            )
        try:
            if kind in tables:
                table, clock = step(table, clock, event)
            else:
                clock = apply(clock, event)
        except (ClockInputError, TableInputError) as e:
            report(number, f"{_describe(event)}: {e}; skipped")
            continue
        if seq is not None:
            last_seq = seq
        applied += 1
        last_t_ns = event.t_ns
        if kind is Resume:
            result.resumes += 1
            result.last_resume_line = number
            result.last_resume_data = data
        if on_step is not None:
            on_step(line, event, clock)
    result.clock, result.last_seq, result.last_t_ns = clock, last_seq, last_t_ns
    result.applied, result.lines_read, result.last_line = applied, lines_read, number
    result.table = table
    if at_line is not None and result.at_line_clock is None:
        result.at_line_clock, result.at_line_seq, result.at_line_table = clock, last_seq, table
    return result


def _take_state(result: Replayed, line: Line, state: StateRecord, report) -> None:
    """A state line: the clock's own state after inputs the journal lost. Taken when it is
    consistent with the journal (its rules, no earlier than the last input, covering every input
    numbered so far); the difference from the journal alone, if any, is reported."""
    c = result.clock
    if state.clock.rules != c.rules:
        report(line.number, "state line: its rules are not the journal's; skipped")
        return
    if c.since_ns is not None and state.t_ns < c.since_ns:
        report(line.number, f"state line: dated {state.t_ns} ns, before the last input ({c.since_ns} ns); skipped")
        return
    if state.seq < result.last_seq:
        report(line.number, f"state line: covers inputs up to {state.seq}, but input {result.last_seq} came before it; skipped")
        return
    try:
        journal_alone = settle(c, state.t_ns)
    except ClockInputError:
        journal_alone = None
    if journal_alone != state.clock:
        lost = list(state.lost) or [r for r in result.lost if r[0] <= state.seq] or ([(result.last_seq + 1, state.seq)] if state.seq > result.last_seq else [])
        known = f"inputs {_lost_text(lost)} were not journalled" if lost else "the journal lacks what the clock acted on"
        report(line.number, f"state line: {known}; the clock's own state at {state.t_ns} ns is taken from here")
        if state.seq > result.last_seq and not any(r[1] >= state.seq for r in result.lost):
            result.lost.append((result.last_seq + 1, state.seq))
    result.clock = state.clock
    result.last_seq = max(result.last_seq, state.seq)
    result.last_t_ns = state.t_ns
    result.states += 1


def fold_slip(journal: Journal, clock: Clock) -> slips.Slip | None:
    """The signed result slip of a game that ended (`clock`, its fold): begun from the clock's own
    result and given the journal's slip inputs in order (game.slip), else None (not ended, or
    an end with no slip). A second pass over the journal, made only for an ended game; it does not
    fold the clock (after the end nothing changes it), so a slip line the fold refused (one dated
    before the end: damage, the runner never writes one) counts here too. A repeated seq is skipped."""
    if clock.phase is not Phase.ENDED or clock.since_ns is None:
        return None
    s = slips.begin(view(clock, clock.since_ns))
    if s is None:
        return None
    last_seq = 0
    for line in journal.iter_lines():
        if line.seq is not None:
            if line.seq <= last_seq:
                continue
            last_seq = line.seq
        if isinstance(line.event, slips.INPUT_TYPES):
            s = slips.apply(s, line.event)  # the journal's reader checked each field (never raises)
    return s


def final_view(result: Replayed) -> View:
    """The clock as it stood at the last usable input."""
    c = result.clock
    return view(c, c.since_ns if c.since_ns is not None else 0)


# --- Text -----------------------------------------------------------------------------------------


def _describe(event: Input | StateRecord) -> str:
    if isinstance(event, StateRecord):
        return "state (the clock's own)"
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
    if isinstance(event, Takeover):
        return f"takeover: neutralised, player {event.player} to move"
    if isinstance(event, slips.INPUT_TYPES):
        return slips.describe(event)
    if table_core.is_table_input(event):
        return table_core.describe(event)
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
    # a table input before the first press (a pairing, a check-in: game.table) leaves the clock
    # undated: nothing has run, and its elapsed time is that of the input itself
    at = c.since_ns if c.since_ns is not None else event.t_ns
    v = view(c, at)
    elapsed_s = (at - c.origin_ns) / 1e9 if c.origin_ns is not None else 0.0
    p1, p2 = v.players
    return (
        f"{line.number:>5} {elapsed_s:>10.3f}  {_describe(event):<22} "
        f"{_clock_text(p1.remaining_ns):>12} {p1.overtime_s:>4} {p1.penalty:>4}  "
        f"{_clock_text(p2.remaining_ns):>12} {p2.overtime_s:>4} {p2.penalty:>4}  {_phase_text(v, c)}"
        + _origin_text(line.data)
    )


def _origin_text(data: dict | None) -> str:
    """A director's command from the hall: who sent it and why, as journalled (docs/journal.md)."""
    if not data or data.get("source") != "hall":
        return ""
    notes = [f"by {data['by']}"] if data.get("by") else []
    notes += [f"reason: {data['reason']}"] if data.get("reason") else []
    notes += [f"from {data['scheduled_start']}"] if data.get("scheduled_start") else []
    return "  (" + ", ".join(["hall", *notes]) + ")"


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
        "problem_count": result.problem_count,
        "lost_inputs": [list(r) for r in result.lost],
        "state_lines": result.states,
        "table": table_core.summary(result.table),
        "journal": str(result.journal.path),
        "config": {k: v for k, v in result.journal.header.get("config", {}).items()},
        "slip": slip_json(fold_slip(result.journal, result.clock)),
    }


def slip_json(s: slips.Slip | None) -> dict | None:
    """The slip as `--json` shows it (None: no slip begun)."""
    if s is None or s.step is slips.Step.UNTYPED:
        return None
    return {"step": s.step.value, "scores": list(s.scores), "penalties": list(s.charged),
            "final": None if s.final is None else list(s.final), "signed": list(s.signed),
            "recounted": s.recounted, "outcome": s.outcome, "why": s.why}


def _rules_text(journal: Journal) -> str:
    r = journal.rules
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

    slip = [None]  # the signed result slip, folded as its inputs are printed (game.slip)

    def print_step(line: Line, event: Input, c: Clock) -> None:
        text = format_step(line, event, c)
        if isinstance(event, slips.INPUT_TYPES):
            if slip[0] is None:
                slip[0] = slips.begin(view(c, c.since_ns))
            if slip[0] is not None:
                slip[0] = slips.apply(slip[0], event)
                text += "  " + slips.summary(slip[0])
        print(text, file=out)

    if not args.json:
        print(f"{path}: {_rules_text(journal)}", file=out)
        print(HEAD, file=out)
    def print_problem(number: int, problem: str) -> None:  # as found: the journal is streamed
        print(f"{path}:{number}: {problem}", file=err)

    result = fold(journal, on_step=None if args.json else print_step, on_problem=print_problem)

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
    signed = fold_slip(journal, result.clock)
    if signed is not None and signed.step is not slips.Step.UNTYPED:
        print(f"result slip: {slips.summary(signed)}", file=out)
    print(
        f"{verdict}. {result.applied} inputs applied, {result.problem_count} problems, {result.resumes} restores"
        + (f", inputs {_lost_text(result.lost)} not journalled (state lines taken: {result.states})." if result.lost else "."),
        file=out,
    )
    return EXIT_OK

