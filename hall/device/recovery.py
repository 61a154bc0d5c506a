"""What the clock's hall publisher reads back from the clock's journals (never from memory), on its
worker thread: the inputs and results the outbox never saw (after a crash, a power cut or a full
queue), the ids of the commands the journals hold (so a redelivered one is not applied twice), and
the events a console asks for again (`resend`).

The journals are the clock's (firmware.persist: `journals/game-000003.jsonl`); the game's name is
the file's, as the store named it. State lines are not inputs and are never published. Replaying a
journal (for a finished game's result) happens here only: at start-up, after an outage, or for a
`resend` of a game that ended; never per input.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable, NamedTuple

from rackside.game.journal import MAX_LINE_BYTES, JournalError, read_journal
from rackside.hall.wire import resend
from rackside.hall.wire.payloads import ack_payload, journal_event, journal_slip
from rackside.hall.wire.resend import INPUT_TYPES, header_event, journal_result, stand_alone

log = logging.getLogger(__name__)

RECENT = 2  # journals read at start-up: the current game and the one before it

Row = tuple[str, bytes, int, int]  # (topic, payload, qos, retain), as hall.device.outbox stores it


class Recovered(NamedTuple):
    game: str
    rows: list[Row]  # events (and a finished game's result) the outbox had not seen
    seq: int  # the last journal seq now in the outbox
    result: bool  # the result is now in the outbox


class JournalRecovery:
    def __init__(self, journal_dir: Path | None, topic: dict[str, str]) -> None:
        self.journal_dir = Path(journal_dir) if journal_dir is not None else None
        self.topic = topic
        self.left_out: set[str] = set()  # practice games said once (RECENT at most are read)

    def _recent(self) -> list[Path]:
        if self.journal_dir is None or not self.journal_dir.is_dir():
            return []
        return sorted(self.journal_dir.glob("game-*.jsonl"))[-RECENT:]

    def result_rows(self, payload: bytes) -> list[Row]:
        """A result: an event, and the same JSON retained on `result` (a console restarted later has it)."""
        return [(self.topic["event"], payload, 1, 0), (self.topic["result"], payload, 1, 1)]

    def missing(self, progress: Callable[[str], tuple[int, bool]]) -> list[Recovered]:
        """Every input of the recent journals past the outbox's `progress(game)` (seq, result put),
        and a finished game's result not yet put."""
        found = []
        for path in self._recent():
            game = path.stem
            seen, result = progress(game)
            try:
                journal = read_journal(path)
                if stand_alone(journal.header):
                    if game not in self.left_out:
                        self.left_out.add(game)
                        log.info("hall: %s was played without the hall (a practice game): not published", game)
                    continue
                rows: list[Row] = []
                last = seen
                for jl in journal.iter_lines():
                    if jl.seq is None or jl.seq <= seen or not isinstance(jl.event, INPUT_TYPES):
                        continue  # before issue 9's seq, already in the outbox, damaged, or a state line
                    rows.append((self.topic["event"], journal_event(jl, game), 1, 0))
                    signed = journal_slip(jl, game)  # a result slip made final by this signature
                    if signed is not None:
                        rows.append((self.topic["event"], signed, 1, 0))
                    last = max(last, jl.seq)
                done = result
                ended = None if result else journal_result(journal, game)
                if ended is not None:
                    rows += self.result_rows(ended)
                    done = True
            except (OSError, JournalError) as e:
                log.warning("hall: journal %s not read for the outbox: %s", path, e)
                continue
            if rows:
                log.info("hall: %d message(s) of %s recovered from the journal into the outbox", len(rows), game)
                found.append(Recovered(game, rows, last, done))
        return found

    def event_of(self, game: str) -> tuple[str, str | None, bool]:
        """The event the hall started `game` for (its journal header's `event`, from the new_game
        that started it; issue 35), "" for a game the hall did not start for an event (the clock's
        own first game, a stand-alone practice game) or whose header cannot be read; the id of
        the command that started it (None: none); whether it was played stand-alone."""
        if self.journal_dir is None:
            return "", None, False
        try:
            with open(self.journal_dir / f"{game}.jsonl", "rb") as f:
                header = json.loads(f.readline(MAX_LINE_BYTES))
            command = header.get("command")
            return header_event(header), (command if isinstance(command, str) else None), stand_alone(header)
        except (OSError, ValueError, AttributeError):
            return "", None, False

    def answered(self, now_wall_ns: int) -> dict[str, bytes]:
        """The hall commands the recent journals hold, with the ack each had: an input's (with its
        seq) and a new game's (its journal's header names the command)."""
        answers: dict[str, bytes] = {}
        for path in self._recent():
            try:
                journal = read_journal(path)
                cid = journal.header.get("command")
                if isinstance(cid, str):
                    answers[cid] = ack_payload(cid, True, None, None, now_wall_ns)
                for jl in journal.iter_lines():
                    data = jl.data or {}
                    cid = data.get("command")
                    if data.get("source") == "hall" and isinstance(cid, str) and isinstance(jl.event, INPUT_TYPES):
                        answers[cid] = ack_payload(cid, True, None, jl.seq, now_wall_ns)
            except (OSError, JournalError) as e:
                log.warning("hall: journal %s not read for the commands it holds: %s", path, e)
        return answers

    def resend(self, game: str, first: int, last: int | None) -> tuple[bool, str | None, list[Row]]:
        """(ok, remark or why not, rows): hall.wire.resend's answer, on the event topic."""
        ok, remark, payloads = resend.answer(self.journal_dir, game, first, last)
        return ok, remark, [(self.topic["event"], p, 1, 0) for p in payloads]
