"""What a clock answers to a console's `resend` (docs/hall.md): the events of one game as its
journal holds them (game.journal), and the game's result, replayed from the journal, if it ended.

Both ends that answer one live here, in the room both may import: a clock's publisher
(hall/device/recovery.py, on its worker thread) and the demo's simulated tables (hall/console/demohall/sim.py),
whose journals are the firmware's format too. Reading a journal is file I/O: never on a clock's
thread.
"""

from __future__ import annotations

import json
from pathlib import Path

from rackside.game.clock import Adjust, Arrive, End, Forfeit, LateStart, Neutralise, Phase, Press, Resume, view
from rackside.game.journal import JournalError, read_journal
from rackside.game import slip
from rackside.game.table import INPUT_TYPES as TABLE_INPUT_TYPES
from rackside.hall.wire.payloads import journal_event, journal_slip, result_payload
from rackside.hall.wire.topics import EVENT

# what is published of a journal: the clock's inputs, the table's (check-in, calls: issue 27) and a
# result slip's (game.slip)
INPUT_TYPES = (Press, Neutralise, End, Adjust, LateStart, Arrive, Forfeit, Resume, *TABLE_INPUT_TYPES, *slip.INPUT_TYPES)
RESEND_MAX_EVENTS = 500  # events one resend command brings at most (the console asks again from there)


def header_event(header: dict) -> str:
    """The event a journal's header says the hall started its game for (its new_game's `event`,
    issue 35); "" none."""
    event = header.get("event")
    return event if isinstance(event, str) and EVENT.match(event) else ""


def stand_alone(header: dict) -> bool:
    """A game the clock played without a hall (its header's settings say `"hall": false`: a
    stand-alone practice game, issue 35); a journal from before the setting says nothing: False."""
    settings = header.get("settings")
    return isinstance(settings, dict) and settings.get("hall") is False


def journal_result(journal, game: str) -> bytes | None:
    """A journal's game's result, replayed, with its event as its state says it; None: not ended."""
    from rackside.game.replay import fold

    folded = fold(journal).clock
    if folded.phase is not Phase.ENDED or folded.since_ns is None:
        return None
    return result_payload(view(folded, folded.since_ns), game, None, event=header_event(journal.header),
                          alone=stand_alone(journal.header))


def answer(journal_dir: Path | None, game: str, first: int, last: int | None) -> tuple[bool, str | None, list[bytes]]:
    """(ok, remark or why not, event payloads): the events of `game` with first <= seq <= last, at
    most RESEND_MAX_EVENTS, and its result if it ended and no `last` was asked for (all on `event`)."""
    path = Path(journal_dir) / f"{game}.jsonl" if journal_dir is not None else None
    if path is None or not path.is_file():
        return False, f"resend: {game} is not in this clock's journals", []
    try:
        journal = read_journal(path)
        out: list[bytes] = []
        for jl in journal.iter_lines():
            if jl.seq is None or jl.seq < first or (last is not None and jl.seq > last) or not isinstance(jl.event, INPUT_TYPES):
                continue
            if len(out) == RESEND_MAX_EVENTS:
                upto = json.loads(out[-1])["seq"]
                return True, f"resend: at most {RESEND_MAX_EVENTS} events a command: ask again from seq {upto + 1}", out
            out.append(journal_event(jl, game))
            signed = journal_slip(jl, game)  # the signature that made the slip final: the slip too
            if signed is not None:
                out.append(signed)
        result = journal_result(journal, game) if last is None else None
        if result is not None:
            out.append(result)
    except (OSError, JournalError) as e:
        return False, f"resend: {game}'s journal cannot be read: {e}", []
    return True, None, out
