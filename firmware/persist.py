"""Surviving power cuts: the store of a clock's games, its checkpoints, and restoring after a restart.

Four modules share the job: `firmware.journal_writer` appends lines to one journal (and is the seam
through which every write and fsync reaches the card), `firmware.checkpoint` is the checkpoint's
format, `firmware.restore` decides (pure) what a restart brings back, and this module's `GameStore`
owns the files and applies that decision.

`GameStore` owns a state directory:

    DIR/journals/game-000001.jsonl   one journal per game (finished ones stay as the archive)
    DIR/checkpoint.json              the live game's state, replaced atomically at least once a second
    DIR/lock                         flock'd while a clock uses DIR, so two clocks never share it

The runner calls `record(event, sync=False)` BEFORE applying each input: the line is written
(`os.write`, so it is in the kernel's page cache and survives a crash or SIGKILL of the process),
the clock acts on it and the displays are told, and then `sync()` fsyncs the batch, in the same
loop iteration, milliseconds later. So the fsync never sits between a press and the display; only
a power cut in that window can lose an input the clock acted on, and the restore then brings the
clock back neutralised anyway (the time of that last input is lost, at most). `record(event)` on
its own (`sync=True`) is durable on return. A crash mid-append leaves at most one torn last line;
every earlier line stays readable.

`checkpoint(clock, t_ns)` writes the clock settled at `t_ns` (a timestamp on this boot's monotonic
clock), the journal position it covers and this boot's id (temp file, fsync, rename, fsync the
directory), so after a crash the store knows the last moment the clock was seen alive, not just
the last press. While a player's clock runs, only the time between the last checkpoint and the
crash is lost: at most the checkpoint interval (the issue's bound: 1 s).

`start(now_ns)` after a restart folds the journal through the core exactly as the replay does
(skipping, with a logged reason, lines that cannot be used, such as a torn tail), takes the later
of the last journalled input and a checkpoint that agrees with the journal, and appends
`resume` with `at_ns` = that moment. Applying it brings the clock back neutralised, marked
restored, with the times of that moment; the downtime is charged to nobody. Because the resume
line is journalled, `rackside clock replay` reproduces the restore exactly.
"""

from __future__ import annotations

import datetime
import fcntl
import hashlib
import json
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rackside.atomic import Disk, write_atomic
from rackside.outage import Outage
from rackside.firmware import restore
from rackside.firmware.checkpoint import Checkpoint, make_checkpoint, parse_checkpoint
from rackside.game.clock import (
    Clock,
    ClockInputError,
    Input,
    Phase,
    Resume,
    Rules,
    apply,
    new_clock,
    settle,
)
from rackside.game import journal as journal_format
from rackside.game.journal import (
    JournalError,
    input_to_dict,
    make_header,
    read_journal,
    state_to_dict,
)
from rackside.firmware.journal_writer import JournalWriter
from rackside.game.replay import fold, fold_slip
from rackside.game.slip import Slip, slip_open
from rackside.game import table as table_core
from rackside.game.table import Table, TableInputError

log = logging.getLogger(__name__)

BOOT_ID_PATH = Path("/proc/sys/kernel/random/boot_id")
_JOURNAL_NAME = re.compile(r"^game-(\d{6,})\.jsonl$")


class StoreError(RuntimeError):
    """The state directory cannot be used (another clock holds it, or it cannot be written)."""


def read_boot_id(path: Path = BOOT_ID_PATH) -> str | None:
    """This boot's id (Linux): a monotonic timestamp means something only within one boot."""
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


# --- The store ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RestoreInfo:
    """What `start` found and did, for the runner to show and log."""

    journal: Path
    at_ns: int  # the last moment known on the old clock; the clock shows its state as of then
    resumed_ns: int  # the new clock's time at the restart
    from_checkpoint: bool  # at_ns came from the checkpoint (later than the last input)
    rebooted: bool | None  # None when the boot id is unknown
    problems: list[tuple[int, str]] = field(default_factory=list)  # journal lines skipped

    @property
    def downtime_ns(self) -> int | None:
        """How long the clock was off (known only without a reboot); never charged to anyone."""
        return None if self.rebooted is not False else self.resumed_ns - self.at_ns


class GameStore:
    """The journal and checkpoints of the games one table clock plays (see the module docstring)."""

    def __init__(self, directory: Path | str, rules: Rules, config: dict | None = None, *, boot_id: str | None = None,
                 disk: Disk = os) -> None:
        self.directory = Path(directory)
        self.disk = disk  # every write, fsync and rename on the card (firmware.journal_writer: the seam for faults)
        self.journal_dir = self.directory / "journals"
        self.checkpoint_path = self.directory / "checkpoint.json"
        self._configured_rules = rules
        self.rules = rules  # the rules in force: a restored game keeps the ones it was started under
        self.config = config
        self.boot_id = boot_id if boot_id is not None else read_boot_id()
        self.restore_info: RestoreInfo | None = None
        self.slip: Slip | None = None  # a restored ended game's result slip (game.slip), for the runner
        self._writer: JournalWriter | None = None
        self._lock_fd = -1
        self._mutex = threading.Lock()
        self._last_checkpoint: tuple[int, Clock] | None = None
        # Sequence numbers (issue 9): every input offered to `record` gets the next number, written
        # or not; `_journal_clock` is what the journal's lines give (the replay's fold, kept as we
        # write), None once unknown; `_lost` the numbers that could not be written since the last
        # state line. A checkpoint that finds the clock ahead of its journal writes a state line.
        self._seq = 0
        self._journal_clock: Clock | None = None
        self._lost: list[list[int]] = []
        self.table = Table()  # the table's check-in and calls (game.table): restored by `start`, kept by `record`
        self.write_errors = 0  # journal lines the card refused since start (the hall's health reports it)
        self.state_outage = Outage(log, "journal state line (the clock's state after lost inputs)")
        # The runner checkpoints every 0.9 s; a failing card must not flood the log (the journal is
        # still the record), so a failed checkpoint is logged once per outage.
        self.checkpoint_outage = Outage(
            log, "checkpoint",
            failed_msg="%(reason)s; the clock keeps counting and retries every checkpoint",
            recovered_msg="checkpoints work again (after %(failures)d failed: %(reason)s)",
        )

    # -- life cycle --

    @property
    def journal_path(self) -> Path | None:
        return self._writer.path if self._writer else None

    @property
    def game(self) -> str | None:
        """The current game's name: its journal's, "game-000003" (this store names the files)."""
        return self._writer.path.stem if self._writer else None

    def start(self, now_ns: int) -> Clock:
        """Restore the unfinished game in the directory, or start a new journal."""
        with self._mutex:
            if self._writer is not None:
                raise StoreError("GameStore.start called twice")
            self._open_directory()
            latest = self._latest_journal()
            if latest is not None:
                try:
                    clock = self._restore(latest, now_ns)
                except Exception:  # noqa: BLE001 - a restore that fails must not keep the clock down
                    # A bug (or damage nothing above foresaw) would otherwise fail every start under
                    # systemd's restart-always: keep the journal as it is, say so, play on.
                    log.exception("journal %s could not be restored; it is kept as it is and a new game starts", latest)
                    if self._writer is not None:
                        self._writer.close()
                        self._writer = None
                    clock = None
                if clock is not None:
                    return clock
            return self._begin(self._configured_rules, now_ns, source="start")

    def new_game(self, rules: Rules, now_ns: int, **notes: str) -> Clock:
        """Leave the current journal in the archive as it is and start a new game's journal.
        `notes` (a hall command's id as `command`, `by`, `reason`) go into its header: the new
        game's own record of who asked for it, read back so a redelivered command is not done twice.
        Raises `StoreError` when the new journal cannot be created; the current one is then
        still open, and `record` keeps writing to it."""
        with self._mutex:
            if self._lock_fd < 0:
                self._open_directory()
            return self._begin(rules, now_ns, source="new_game", **notes)

    def close(self) -> None:
        with self._mutex:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            if self._lock_fd >= 0:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = -1

    def __enter__(self) -> GameStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def last_seq(self) -> int:
        """The `seq` of the last input recorded (numbered whether or not it reached the card)."""
        return self._seq

    # -- the runner's calls --

    def record(self, event: Input, *, sync: bool = True, after: Clock | None = None, table_after: Table | None = None,
               **extra: Any) -> int:
        """Append `event` to the journal; call BEFORE applying it. The line is written at once (a
        crash of the process cannot lose it); it is fsync'd before returning when `sync` is true,
        else by the next `sync()`. Returns its `seq` (its number in the game). `extra` fields are written beside the
        input's own (documented in docs/journal.md). Raises OSError when the card cannot take the
        line; the next record starts on a fresh line. `after` is the clock the runner's core made of
        `event` (the core runs once per input): while the journal is in step (nothing lost since its
        last state line) it is what the journal's lines give; without it (tools, tests) the event is
        applied here. `table_after` is the table (game.table) after a table input: the
        checkpoints carry it, so a restore from one comes back to the same check-in step."""
        d = input_to_dict(event)
        d.update(extra)
        with self._mutex:
            if self._writer is None:
                raise StoreError("GameStore.record before start")
            if table_after is not None:
                self.table = table_after
            self._seq += 1  # numbered whether or not it reaches the card: a reader then sees a gap
            d["seq"] = self._seq
            try:
                self._writer.append(d, sync=sync)
            except OSError:
                self.write_errors += 1
                if self._lost and self._lost[-1][1] == self._seq - 1:
                    self._lost[-1][1] = self._seq
                else:
                    self._lost.append([self._seq, self._seq])
                raise
            if self._journal_clock is not None and after is not None:
                # in step, the runner's result is the journal's; behind it (an input lost), unknown:
                # the next checkpoint writes the clock's state
                self._journal_clock = after if not self._lost else None
            elif self._journal_clock is not None:
                try:
                    if table_core.is_table_input(event):
                        _, self._journal_clock = table_core.step(self.table, self._journal_clock, event)
                    else:
                        self._journal_clock = apply(self._journal_clock, event)
                except (ClockInputError, TableInputError):
                    self._journal_clock = None  # the replay skips it; the next checkpoint writes the state
            return self._seq

    def sync(self) -> None:
        """fsync the appends `record(..., sync=False)` left pending (nothing to do if none).
        Raises OSError when the card fails; the next call tries again."""
        with self._mutex:
            if self._writer is not None:
                self._writer.sync()

    def checkpoint(self, clock: Clock, t_ns: int) -> bool:
        """Snapshot `clock` settled at `t_ns` atomically. Call at least once a second while the game
        is live. A clock whose time is not moving (set up, neutralised, ended) is written only
        when the journal has grown since the last snapshot, to spare the SD card. Returns whether
        a checkpoint was written. Never raises for a disk fault: the journal is the record; the
        checkpoint only narrows the time lost."""
        with self._mutex:
            if self._writer is None:
                return False
            try:
                settled = settle(clock, t_ns) if clock.since_ns is not None else clock
            except ClockInputError as e:
                self.checkpoint_outage.failed(f"checkpoint at {t_ns} ns refused: {e}")
                return False
            try:
                self._writer.sync()  # the checkpoint vouches for the journal up to here: make it so
            except OSError as e:
                self.checkpoint_outage.failed(f"checkpoint skipped: journal {self._writer.path} not fsync'd: {e}")
                return False
            # the journal's lines give the clock's state (no input was lost), or a state line says it
            complete = self._journal_clock == clock or self._write_state(clock)
            lines = self._writer.lines
            moving = settled.phase in (Phase.RUNNING, Phase.LATE)
            if complete and not moving and self._last_checkpoint is not None and self._last_checkpoint[0] == lines:
                return False
            data = make_checkpoint(
                self._writer.path.name, lines, self._writer.size, t_ns, self.boot_id, settled, seq=self._seq, complete=complete,
                journal_sha256=self._writer.digest.hexdigest(), position=clock, table=self.table,
            )
            try:
                self._write_whole(self.checkpoint_path, data)
            except OSError as e:
                self.checkpoint_outage.failed(f"checkpoint not written to {self.checkpoint_path}: {e}")
                return False
            self._last_checkpoint = (lines, settled)
            self.checkpoint_outage.recovered()
            return True

    def _write_state(self, clock: Clock) -> bool:
        """The clock acted on inputs its journal lacks (a full card): journal its whole state, with
        the numbers of the inputs lost, so a replay and a restore carry on from what the clock
        showed. The state as of its last input (not settled to now): an edge the board delivers
        late, dated between that input and now, still applies after it, as it does in the runner.
        False (tried again at the next checkpoint) if the card still cannot take it."""
        if clock.since_ns is None:
            return False  # a clock that never started: there is nothing to state
        try:
            self._writer.append(state_to_dict(clock.since_ns, self._seq, clock, self._lost), sync=True)
        except OSError as e:
            self.state_outage.failed(f"{self._writer.path}: {e}; the checkpoint says its journal is incomplete")
            return False
        self.state_outage.recovered()
        log.warning("journal %s: the clock's state written after lost inputs %s", self._writer.path.name, self._lost or "(none numbered)")
        self._journal_clock, self._lost = clock, []
        return True

    # -- internals --

    def _write_whole(self, path: Path, data: bytes) -> None:
        """Replace `path` with `data` so that a crash leaves either the old file or the new one (a
        checkpoint, a new journal: readable by the director's audit tools, so 0644)."""
        write_atomic(path, data, mode=0o644, disk=self.disk)

    def _open_directory(self) -> None:
        try:
            self.journal_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise StoreError(f"cannot use state directory {self.directory}: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StoreError(f"another clock is using {self.directory}") from None
        self._lock_fd = fd
        for stale in self.journal_dir.glob("*.tmp"):  # a journal whose creation was cut short
            stale.unlink(missing_ok=True)

    def _journals(self) -> list[tuple[int, Path]]:
        found = []
        for path in self.journal_dir.iterdir():
            m = _JOURNAL_NAME.match(path.name)
            if m:
                found.append((int(m.group(1)), path))
        return sorted(found)

    def _latest_journal(self) -> Path | None:
        journals = self._journals()
        return journals[-1][1] if journals else None

    def _begin(self, rules: Rules, now_ns: int, source: str, **notes: str) -> Clock:
        """Create the next journal (temp, fsync, rename, fsync dir), and only once it is on the
        card switch to it and close the old one. If it cannot be created (a full or failing card),
        nothing changes: the old journal stays open and the error is raised as `StoreError`."""
        journals = self._journals()
        number = journals[-1][0] + 1 if journals else 1
        path = self.journal_dir / f"game-{number:06d}.jsonl"
        header = make_header(
            rules,
            boot_id=self.boot_id,
            started_ns=now_ns,
            source=source,  # "new_game": the director chose these rules for this game
            started_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),  # a label only
            settings=self.config,
            **notes,
        )
        text = json.dumps(header, separators=(",", ":"), default=str) + "\n"
        try:
            self._write_whole(path, text.encode("utf-8"))
            writer = JournalWriter(path, self.disk)
        except OSError as e:
            # Leave no half-made journal behind: an empty newest journal would be taken for this
            # game at the next start-up and hide the unfinished one before it (write_atomic has
            # already removed its own temporary file).
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
            raise StoreError(f"cannot create the new game's journal {path}: {e.strerror or e}") from e
        old, self._writer = self._writer, writer
        if old is not None:
            old.close()
        self.rules = rules
        self.restore_info = None
        self.slip = None
        self._last_checkpoint = None
        self._seq, self._journal_clock, self._lost = 0, new_clock(rules), []
        self.table = Table()
        try:
            self.checkpoint_path.unlink()
        except FileNotFoundError:
            pass
        except OSError as e:  # harmless: it names the old journal, so a restore ignores it
            log.warning("old checkpoint %s not removed: %s", self.checkpoint_path, e)
        log.info("new game journal %s", path)
        return new_clock(rules)

    def _load_checkpoint(self) -> Checkpoint | None:
        try:
            data = self.checkpoint_path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            log.warning("checkpoint %s unreadable, using the journal alone: %s", self.checkpoint_path, e)
            return None
        try:
            return parse_checkpoint(data)
        except ValueError as e:
            log.warning("checkpoint %s is corrupt (%s), using the journal alone", self.checkpoint_path, e)
            return None

    def _restore(self, path: Path, now_ns: int) -> Clock | None:
        """Restore the game in `path` if it is unfinished; None when a new journal should start.
        One pass over the journal, one line at a time (a journal of any length restores in
        constant memory); a second pass only after a full card (from the checkpoint's line on)."""
        checkpoint = self._load_checkpoint()
        try:
            journal = read_journal(path)
            if self._written_by_us(checkpoint, journal):
                return self._restore_after(checkpoint, journal, now_ns)
            # the checkpoint's position is checked in the same pass (`at_line`)
            at_line = checkpoint.lines if checkpoint is not None and checkpoint.journal == path.name else None
            result = fold(journal, at_line=at_line)
        except (OSError, JournalError) as e:
            log.error("journal %s cannot be restored (%s); it is kept as it is and a new game starts", path, e)
            return None
        for number, problem in result.problems:
            log.warning("%s:%d: %s", path, number, problem)
        kind = restore.start_kind(result, journal_rules=journal.rules, configured_rules=self._configured_rules,
                                  chosen_by_director=journal.header.get("source") == "new_game", torn=journal.torn,
                                  slip_open=self._slip_open(journal, result.clock))
        if kind is restore.Start.REUSE:
            self._writer = JournalWriter(path, self.disk)  # nothing happened in it yet: keep using it
            self.rules = journal.rules
            self._seq, self._journal_clock, self._lost = 0, new_clock(journal.rules), []
            return new_clock(journal.rules)
        if kind is restore.Start.NEW:
            return None
        if journal.rules != self._configured_rules:
            log.warning("restoring %s under the rules it was started with, not the configured ones", path)
        segment = restore.segment_boot(journal.header.get("boot_id"), result.last_resume_data)
        return self._resume(journal, result, checkpoint, segment, now_ns)

    def _slip_open(self, journal, clock: Clock) -> bool:
        """Fold an ended game's result slip (game.slip) into `self.slip`; whether it is still
        open (begun, and not yet answered by the console): then the ended game is resumed."""
        self.slip = fold_slip(journal, clock)
        return slip_open(self.slip)

    @staticmethod
    def _written_by_us(cp: Checkpoint | None, journal) -> bool:
        """Whether the checkpoint vouches for the journal's first `cp.size` bytes, byte for byte:
        same file, and the sha256 the store kept of what it wrote matches what is on the card.
        Then the state at that position is the checkpoint's (the store checked, when it wrote it,
        that its journal's lines give that state, or says they do not), and a restore reads only
        the lines after it: a long game restores at the speed of hashing, not of folding."""
        if cp is None or cp.journal_sha256 is None or cp.position is None or cp.journal != journal.path.name or cp.size > journal.size:
            return False
        if cp.position.since_ns is None:
            return False  # taken before the first input: there is no game to restore from it
        digest = hashlib.sha256()
        with open(journal.path, "rb") as f:
            left = cp.size
            while left > 0 and (chunk := f.read(min(journal_format.READ_BLOCK, left))):
                digest.update(chunk)
                left -= len(chunk)
        return left == 0 and digest.hexdigest() == cp.journal_sha256

    def _restore_after(self, cp: Checkpoint, journal, now_ns: int) -> Clock | None:
        """Restore from a checkpoint that vouches for the journal up to its position (see
        `_written_by_us`): fold only the lines after it, from its state."""
        result = fold(journal, start=(cp.lines, cp.position, cp.seq or 0, cp.size), table=cp.table)
        for number, problem in result.problems:
            log.warning("%s:%d: %s", journal.path, number, problem)
        kind = restore.start_kind(result, journal_rules=journal.rules, configured_rules=self._configured_rules,
                                  chosen_by_director=False, torn=journal.torn, from_checkpoint_position=True,
                                  slip_open=self._slip_open(journal, result.clock))
        if kind is restore.Start.NEW:
            return None
        # a checkpoint is written on the boot of the stretch it is in
        segment = restore.segment_boot(cp.boot_id, result.last_resume_data)
        return self._resume(journal, result, cp, segment, now_ns, verified=True)

    def _resume(self, journal, result, checkpoint, segment_boot, now_ns: int, *, verified: bool = False) -> Clock:
        """Journal the resume (after the state restored, when a checkpoint was taken over a
        journal that lacks inputs) and bring the clock back neutralised. What to trust is
        `firmware.restore`'s decision; this applies it."""
        path = journal.path
        at_ns, from_checkpoint = restore.last_moment(result, None, from_checkpoint_position=False)
        adopted = None
        if verified:
            # the fold began at the checkpoint's position
            at_ns, from_checkpoint = restore.last_moment(result, checkpoint.t_ns, from_checkpoint_position=True)
            if not checkpoint.complete:
                adopted = result
        elif checkpoint is not None:
            verdict = restore.checkpoint_verdict(checkpoint, result, journal_name=path.name, journal_size=journal.size,
                                                 segment=segment_boot)
            if verdict.ignored:
                log.warning("checkpoint ignored: %s", verdict.ignored)
            elif verdict.adopt:
                # A full card: the journal lost inputs the clock acted on, and the checkpoint holds
                # the state they gave. Trust it, the newest consistent state, and fold the lines
                # written after it on top.
                position = checkpoint.position or checkpoint.clock
                adopted = fold(journal, start=(checkpoint.lines, position, max(checkpoint.seq or 0, result.at_line_seq)),
                               table=checkpoint.table)
                log.warning("checkpoint taken over the journal: the journal lacks inputs the clock acted on (%s)", path.name)
                at_ns, from_checkpoint = restore.last_moment(adopted, checkpoint.t_ns, from_checkpoint_position=True)
            else:
                at_ns, from_checkpoint = restore.last_moment(result, checkpoint.t_ns, from_checkpoint_position=False)
        rebooted = restore.rebooted(self.boot_id, segment_boot)
        self._writer = JournalWriter(path, self.disk)
        self.rules = journal.rules
        clock, self._seq, self.table = result.clock, result.last_seq, result.table
        if adopted is not None:
            clock, self._seq, self.table = adopted.clock, max(result.last_seq, adopted.last_seq), adopted.table
            lost = restore.lost_inputs(result, checkpoint, verified=verified)
            # journal the state restored, so a replay reproduces this restore and shows the gap
            self._writer.append(state_to_dict(clock.since_ns, self._seq, clock, lost, source="checkpoint"))
        resume = Resume(t_ns=now_ns, at_ns=at_ns)
        self._seq += 1
        self._writer.append(
            {
                **input_to_dict(resume),
                "seq": self._seq,
                "boot_id": self.boot_id,
                "rebooted": rebooted,
                "from_checkpoint": from_checkpoint,
                "skipped_lines": [n for n, _ in result.problems if n > 1][:100],
            }
        )
        clock = apply(clock, resume)
        self._journal_clock, self._lost = clock, []
        self.restore_info = RestoreInfo(
            journal=path,
            at_ns=at_ns,
            resumed_ns=now_ns,
            from_checkpoint=from_checkpoint,
            rebooted=rebooted,
            problems=list(result.problems),
        )
        log.warning(
            "restored from %s (%s) %s, neutralised; downtime not charged",
            wall_label(at_ns, now_ns, rebooted, self.checkpoint_path if from_checkpoint else path),
            "checkpoint" if from_checkpoint else "last input",
            path.name,
        )
        return clock


def wall_label(at_ns: int, now_ns: int, rebooted: bool | None, recorded_in: Path) -> str:
    """When the monotonic moment `at_ns` was, as a wall-clock time (UTC) for people reading the
    log (issue 10: never a raw nanosecond count). On the same boot it follows from the monotonic
    clock; across a reboot (or an unknown boot) from the modification time of the file that
    recorded that moment. A label only, never used for a duration."""
    import time

    if rebooted is False:
        wall = time.time() - (now_ns - at_ns) / 1e9
    else:
        try:
            wall = recorded_in.stat().st_mtime
        except OSError:
            return "an unknown time"
    return datetime.datetime.fromtimestamp(wall, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


__all__ = ["GameStore", "RestoreInfo", "StoreError", "read_boot_id", "wall_label"]
