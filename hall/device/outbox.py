"""The outbox: every event, result and ack is on disk before it is published, and deleted only when
the broker has acknowledged it. stdlib sqlite3 in WAL mode (one file, transactions, a crash or
SIGKILL leaves it consistent), used by one thread only: the publisher's.

`synchronous=NORMAL`: a commit survives the process being killed (it is in the WAL, in the page
cache) but not necessarily a power cut. That is deliberate: the clock's journal is fsync'd, and at
start-up the publisher puts back into the outbox every journal line the outbox has not seen
(`progress`: the last journal `seq` of each game), so a power cut loses nothing the journal kept, and the SD card is spared an fsync per
event.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

ANSWERED_KEEP = 256  # command ids remembered on disk, to ack a redelivered command without doing it twice

SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL,
    qos INTEGER NOT NULL DEFAULT 1,
    retain INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS answered (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,  -- a director's command id
    ack BLOB NOT NULL  -- the ack it was given: sent again if the broker redelivers the command
);
CREATE TABLE IF NOT EXISTS progress (
    game TEXT PRIMARY KEY,
    seq INTEGER NOT NULL DEFAULT 0,  -- the journal seq of the last input put in the outbox
    result INTEGER NOT NULL DEFAULT 0  -- the game's result was put in the outbox
);
"""


class Outbox:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.path.chmod(0o600)
        self.commits = 0  # transactions written (the bench counts disk writes per game)

    def put(
        self,
        rows: list[tuple[str, bytes, int, int]],
        progress: dict[str, tuple[int, bool]] | None = None,
        answered: dict[str, bytes] | None = None,
    ) -> None:
        """Append (topic, payload, qos, retain) rows, record games' progress (game -> (seq, result
        put)) and commands' acks (id -> ack payload; the last ANSWERED_KEEP are kept), in one
        transaction."""
        if not rows and not progress and not answered:
            return
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT INTO outbox (topic, payload, qos, retain) VALUES (?, ?, ?, ?)", rows)
            for game, (seq, result) in (progress or {}).items():
                self.db.execute(
                    "INSERT INTO progress (game, seq, result) VALUES (?, ?, ?) "
                    "ON CONFLICT(game) DO UPDATE SET seq=max(seq, excluded.seq), result=max(result, excluded.result)",
                    (game, seq, int(result)),
                )
            if answered:
                self.db.executemany(
                    "INSERT INTO answered (id, ack) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET ack=excluded.ack",
                    list(answered.items()),
                )
                self.db.execute("DELETE FROM answered WHERE n <= (SELECT max(n) FROM answered) - ?", (ANSWERED_KEEP,))
        self.commits += 1

    def answered(self) -> dict[str, bytes]:
        """The commands answered, oldest first (id -> ack payload)."""
        return dict(self.db.execute("SELECT id, ack FROM answered ORDER BY n").fetchall())

    def progress(self, game: str) -> tuple[int, bool]:
        row = self.db.execute("SELECT seq, result FROM progress WHERE game = ?", (game,)).fetchone()
        return (row[0], bool(row[1])) if row else (0, False)

    def pending(self, after_id: int, limit: int) -> list[tuple[int, str, bytes, int, int]]:
        return self.db.execute(
            "SELECT id, topic, payload, qos, retain FROM outbox WHERE id > ? ORDER BY id LIMIT ?", (after_id, limit)
        ).fetchall()

    def delete(self, ids: list[int]) -> None:
        if not ids:
            return
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany("DELETE FROM outbox WHERE id = ?", [(i,) for i in ids])
        self.commits += 1

    def __len__(self) -> int:
        return self.db.execute("SELECT count(*) FROM outbox").fetchone()[0]

    def close(self) -> None:
        self.db.close()
