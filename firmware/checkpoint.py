"""The checkpoint file's format: the clock settled at a moment, the journal position it covers, and
what vouches for it (this boot's id, a sha256 of the journal's bytes up to that position, a sha256
of the checkpoint itself). Values and bytes only: `GameStore` (firmware.persist) writes and reads
the file, and `firmware.restore` decides what a checkpoint is worth after a restart. The fields
are documented in docs/journal.md ("Checkpoints").
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from rackside.game.clock import Clock
from rackside.game.journal import clock_from_dict, clock_to_dict
from rackside.game import table as table_core
from rackside.game.table import Table

CHECKPOINT_KEY = "rackside_clock_checkpoint"
CHECKPOINT_VERSION = 1


def _digest(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def make_checkpoint(
    journal: str, lines: int, size: int, t_ns: int, boot_id: str | None, clock: Clock, *, seq: int | None = None, complete: bool = True,
    journal_sha256: str | None = None, position: Clock | None = None, table: Table | None = None,
) -> bytes:
    body = {
        CHECKPOINT_KEY: CHECKPOINT_VERSION,
        "journal": journal,
        "lines": lines,
        "bytes": size,
        "t_ns": t_ns,
        "boot_id": boot_id,
        "seq": seq,  # the last input number the state includes
        "complete": complete,  # the journal's lines up to `lines` give this state (else inputs were lost)
        "journal_sha256": journal_sha256,  # of the journal's first `bytes` bytes
        # the clock as of its last input, not settled: the state a restore folds later lines onto
        "position_state": None if position is None else clock_to_dict(position),
        "state": clock_to_dict(clock),
    }
    if table is not None and table != Table():  # check-in and calls (game.table), as of the last input
        body["table_state"] = table_core.to_dict(table)
    return (json.dumps({**body, "sha256": _digest(body)}) + "\n").encode("ascii")


@dataclass(frozen=True)
class Checkpoint:
    journal: str
    lines: int
    size: int
    t_ns: int
    boot_id: str | None
    clock: Clock
    seq: int | None = None
    complete: bool = True  # False: the journal lacks inputs this state includes (a full card)
    journal_sha256: str | None = None  # of the journal's first `size` bytes, as the store wrote them
    position: Clock | None = None  # the clock as of its last input (unsettled), when recorded
    table: Table = Table()  # the table's check-in and calls as of its last input (game.table)


def parse_checkpoint(data: bytes) -> Checkpoint:
    """Raises ValueError (with the reason) for a checkpoint that is corrupt or not ours."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"not valid JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get(CHECKPOINT_KEY) != CHECKPOINT_VERSION:
        raise ValueError("not a Rackside clock checkpoint")
    digest = doc.pop("sha256", None)
    if digest != _digest(doc):
        raise ValueError("checksum mismatch")
    try:
        checkpoint = Checkpoint(
            journal=str(doc["journal"]),
            lines=int(doc["lines"]),
            size=int(doc["bytes"]),
            t_ns=int(doc["t_ns"]),
            boot_id=doc["boot_id"],
            clock=clock_from_dict(doc["state"]),
            seq=None if doc.get("seq") is None else int(doc["seq"]),
            complete=doc.get("complete", True) is not False,
            journal_sha256=doc.get("journal_sha256") if isinstance(doc.get("journal_sha256"), str) else None,
            position=None if doc.get("position_state") is None else clock_from_dict(doc["position_state"]),
            table=Table() if doc.get("table_state") is None else table_core.from_dict(doc["table_state"]),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"malformed state: {e!r}") from None
    return checkpoint
