"""The console's results, on disk: every confirmed result and every change to one, kept for good.

stdlib sqlite3 in the state directory (`console-results.sqlite`), WAL with synchronous=FULL: a
result the director confirmed is on disk before the page hears "recorded", and survives the console
being killed (SIGKILL) or the power going. Results are keyed by division, round and the two TSH
player numbers (lower first), so changing the view, the round or the division never touches one.
A game with no TSH players (a hall without TSH files, a table TSH does not seat) is kept by round
and table: division "", pn_low 0 (TSH numbers start at 1, so it is no TSH game's), pn_high the table.

Every write is audited in the same transaction: who, when, what (confirm, slip, correct, decide),
the result before and after, and the reason ("slip": a result recorded from the slip alone, with
no clock record; the reason is why there is none). A result already confirmed changes only as a correction
with a reason (5.4.1(a): a signed slip is final unless corrected; the console records who did it
and why). Confirming the same result again changes nothing.

Owned by one thread: the console's event loop (a write is a few milliseconds; the clock never waits
on it, it is the console's own disk). Readers get plain `Recorded` values.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from .results import BY_TABLE, MAX_REASON, Recorded, ResultError

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    division TEXT NOT NULL, round INTEGER NOT NULL, pn_low INTEGER NOT NULL, pn_high INTEGER NOT NULL,
    tbl INTEGER NOT NULL, body TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (division, round, pn_low, pn_high)
);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL, action TEXT NOT NULL,
    division TEXT NOT NULL, round INTEGER NOT NULL, pn_low INTEGER NOT NULL, pn_high INTEGER NOT NULL,
    before TEXT, after TEXT, reason TEXT NOT NULL DEFAULT ''
);
"""
MAX_AUDIT_READ = 5000  # audit rows returned at once (the file keeps them all)


class ResultStore:
    """`path` None: in memory (the demo and tests that need no disk)."""

    def __init__(self, path: Path | None) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(":memory:" if self.path is None else self.path, isolation_level=None,
                                  check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        if self.path is not None:
            self.path.chmod(0o600)

    def put_setting(self, key: str, value) -> None:
        """What the console must find again after a restart (the round, the imported TSH files)."""
        self.db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (key, json.dumps(value)))

    def setting(self, key: str, default=None):
        row = self.db.execute("SELECT value FROM settings WHERE key=?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def close(self) -> None:
        self.db.close()

    @staticmethod
    def key(r: Recorded) -> tuple[str, int, int, int]:
        a, b = r.numbers
        if a is None and b is None and r.division == BY_TABLE:
            return (BY_TABLE, r.round, 0, r.table)
        if a is None or b is None:
            raise ResultError(f"table {r.table}: no TSH player numbers for this game: import the division's TSH file first")
        return (r.division, r.round, min(a, b), max(a, b))

    def get(self, division: str, round_: int, pn1: int, pn2: int) -> Recorded | None:
        row = self.db.execute("SELECT body FROM results WHERE division=? AND round=? AND pn_low=? AND pn_high=?",
                              (division, round_, min(pn1, pn2), max(pn1, pn2))).fetchone()
        return None if row is None else Recorded.from_dict(json.loads(row[0]))

    def record(self, r: Recorded, who: str, reason: str = "", action: str | None = None) -> str:
        """Keep `r`. Returns what happened: "confirm" (new), "same" (already so), "correct" (changed,
        with `reason`) or the given `action` (e.g. "decide"). A change without a reason is refused."""
        key = self.key(r)
        reason = " ".join(str(reason or "").split())[:MAX_REASON]
        with self._tx():
            row = self.db.execute("SELECT body FROM results WHERE division=? AND round=? AND pn_low=? AND pn_high=?",
                                  key).fetchone()
            before = None if row is None else Recorded.from_dict(json.loads(row[0]))
            if before is not None and before.same_result(r):
                return "same"
            if before is not None and not reason:
                raise _correction_needs_reason(before, r)
            what = action or ("confirm" if before is None else "correct")
            if what == "confirm" and r.no_clock:
                what, reason = "slip", reason or r.no_clock  # the audit says why there is no clock record
            body = json.dumps(r.as_dict(), separators=(",", ":"))
            self.db.execute("INSERT OR REPLACE INTO results (division, round, pn_low, pn_high, tbl, body, updated_at) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", (*key, r.table, body, r.at))
            self.db.execute("INSERT INTO audit (at, who, action, division, round, pn_low, pn_high, before, after, reason) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (r.at, who, what, *key, None if before is None else json.dumps(before.as_dict()), body, reason))
            return what

    def check(self, r: Recorded, reason: str = "") -> None:
        """What `record` would refuse, said before anything is confirmed: a change to a result
        already recorded without a reason (5.4.1(a))."""
        row = self.db.execute("SELECT body FROM results WHERE division=? AND round=? AND pn_low=? AND pn_high=?",
                              self.key(r)).fetchone()
        before = None if row is None else Recorded.from_dict(json.loads(row[0]))
        if before is not None and not before.same_result(r) and not " ".join(str(reason or "").split()):
            raise _correction_needs_reason(before, r)

    def results(self, division: str | None = None, round_: int | None = None) -> list[Recorded]:
        where, args = _where(division, round_)
        q = "SELECT body FROM results" + where
        return [Recorded.from_dict(json.loads(b)) for (b,) in self.db.execute(q + " ORDER BY division, round, tbl", args)]

    def audit(self, division: str | None = None, round_: int | None = None) -> list[dict]:
        where, args = _where(division, round_)
        q = "SELECT at, who, action, division, round, pn_low, pn_high, before, after, reason FROM audit" + where
        rows = self.db.execute(q + " ORDER BY id DESC LIMIT ?", (*args, MAX_AUDIT_READ)).fetchall()
        keys = ("at", "who", "action", "division", "round", "pn_low", "pn_high", "before", "after", "reason")
        out = []
        for row in rows:
            d = dict(zip(keys, row))
            d["before"] = None if d["before"] is None else json.loads(d["before"])
            d["after"] = None if d["after"] is None else json.loads(d["after"])
            out.append(d)
        return out

    def _tx(self):
        return _Transaction(self.db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an exception): a result and its audit row together."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, kind, value, tb) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _correction_needs_reason(before: Recorded, r: Recorded) -> ResultError:
    game = f"division {r.division} round {r.round}" if r.division else f"round {r.round} table {r.table}"
    return ResultError(f"{game}: {before.names[0]} v {before.names[1]} is already recorded "
                       f"{before.scores[0]}-{before.scores[1]}: a correction needs a reason (5.4.1(a))")


def _where(division: str | None, round_: int | None) -> tuple[str, list]:
    """The WHERE clause (with its parameters) picking one division, one round, both or neither."""
    clauses, args = [], []
    for column, value in (("division", division), ("round", round_)):
        if value is not None:
            clauses.append(f"{column}=?")
            args.append(value)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args
