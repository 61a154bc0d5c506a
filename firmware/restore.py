"""What to do with the latest journal after a restart: the restore decision, as plain values.

Pure (tests/test_pure_cores.py): `GameStore` (firmware.persist) reads the journal and the
checkpoint and folds them (game.replay); these functions decide, from what that found, whether
the game goes on, which moment the clock comes back at, and whether the checkpoint's state must
stand in for inputs the journal lacks. Each decision is tested on values (tests/test_restore.py);
the files are GameStore's. The journal and checkpoint formats are in docs/journal.md.

`fold` arguments are `game.replay.Replayed` results; `checkpoint` ones
`firmware.checkpoint.Checkpoint`s. Both are read by attribute only.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from rackside.game.clock import ClockInputError, Phase, Rules, settle


class Start(enum.Enum):
    """After the first fold of the latest journal."""

    REUSE = "reuse"  # nothing was played and its rules are still wanted: keep writing to it
    NEW = "new"  # over (or nothing was played under rules no longer wanted): start a new journal
    RESUME = "resume"  # an unfinished game: bring it back, neutralised


def start_kind(fold: Any, *, journal_rules: Rules, configured_rules: Rules, chosen_by_director: bool, torn: bool,
               from_checkpoint_position: bool = False, slip_open: bool = False) -> Start:
    """REUSE a journal with no line after its header when its rules are still wanted (the
    configured ones, or ones the director chose for this game with "new game") and it is not
    torn; NEW for any other journal with nothing played, or an ended game; else RESUME. A fold
    that began at a checkpoint's position (a game was under way there) is NEW only if it ended.
    An ended game whose result slip is begun and not yet answered by the console (`slip_open`,
    game.slip) is RESUMEd: a power cut mid-typing or mid-signing comes back to the same step."""
    if not from_checkpoint_position and fold.applied == 0 and fold.states == 0:
        wanted = journal_rules == configured_rules or chosen_by_director
        return Start.REUSE if fold.lines_read == 0 and wanted and not torn else Start.NEW
    return Start.NEW if fold.clock.phase is Phase.ENDED and not slip_open else Start.RESUME


def segment_boot(boot_id: str | None, last_resume: dict | None) -> str | None:
    """The boot the journal's latest stretch of timestamps belongs to: that of its last resume
    line, else `boot_id` (the header's, or a vouching checkpoint's)."""
    if last_resume is not None:
        return last_resume.get("boot_id", boot_id)
    return boot_id


def rebooted(this_boot: str | None, segment: str | None) -> bool | None:
    """Whether the machine rebooted since the stretch (None when either boot id is unknown)."""
    return None if this_boot is None or segment is None else this_boot != segment


@dataclass(frozen=True)
class Verdict:
    """What a checkpoint is worth against a journal it does not vouch for byte by byte."""

    ignored: str | None  # why it cannot vouch for the journal's latest moment (logged), or None
    adopt: bool = False  # its state stands in for inputs the journal lacks (a full card)


def checkpoint_verdict(checkpoint: Any, fold: Any, *, journal_name: str, journal_size: int, segment: str | None) -> Verdict:
    """Judge `checkpoint` against `fold`, the whole journal folded with `at_line` = the
    checkpoint's line (so `fold.at_line_clock` is the journal's clock at its position)."""
    cp = checkpoint
    if cp.journal != journal_name:
        return Verdict(f"it is for {cp.journal}, not {journal_name}")
    if cp.size > journal_size:
        return Verdict(f"it covers {cp.size} bytes but the journal has {journal_size}")
    if fold.last_resume_line is not None and cp.lines < fold.last_resume_line:
        return Verdict("it predates the last restore (its times are on an older clock)")
    if cp.boot_id != segment:
        return Verdict("it was written on another boot")
    upto = fold.at_line_clock
    try:
        expected = settle(upto, cp.t_ns) if upto.since_ns is not None else upto
    except ClockInputError as e:
        return Verdict(f"its time is before the inputs it covers ({e})")
    if expected == cp.clock:
        return Verdict(None)
    if not cp.complete or (cp.seq or 0) > fold.at_line_seq:
        return Verdict(None, adopt=True)  # the store knew its journal lacked inputs: the checkpoint has them
    return Verdict("its state disagrees with the journal it covers, which it says is complete")


def last_moment(fold: Any, checkpoint_t_ns: int | None, *, from_checkpoint_position: bool) -> tuple[int, bool]:
    """The last moment known on the old clock, and whether it is the checkpoint's: the later of
    the last journalled input and the checkpoint's time (`None`: no checkpoint to trust). When
    `fold` began at the checkpoint's position, a restore journalled after it puts the
    checkpoint's time on an older clock: the fold's own time then stands."""
    if checkpoint_t_ns is None or checkpoint_t_ns <= fold.last_t_ns:
        return fold.last_t_ns, False
    if from_checkpoint_position and fold.last_resume_line is not None:
        return fold.last_t_ns, False
    return checkpoint_t_ns, True


def lost_inputs(fold: Any, checkpoint: Any, *, verified: bool) -> list[list[int]]:
    """The input numbers a state line taken from `checkpoint` reports lost: those the fold
    found missing; else, from a checkpoint judged against the whole journal, the numbers between
    the journal's last at the checkpoint's position and the checkpoint's own."""
    lost = [list(r) for r in fold.lost]
    if lost or verified:
        return lost
    return [[fold.at_line_seq + 1, checkpoint.seq]] if (checkpoint.seq or 0) > fold.at_line_seq else []
