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
with a reason (5.4.1: a signed result sheet is final and binds the players and the director; the
players' own correction by agreement, 5.4.1(a), is before it is signed, and reversed scores are
corrected on petition, 5.4.1(b); the console records who changed it and why). Confirming the same result again changes nothing.

The audit is the director's (issue 36): every row has its table and its kind (AUDIT_KINDS: a
result, a call, a signed slip, an update, the event's rules changed), readable by either (`audit(table=, kind=)`,
`/api/audit?table=N&kind=K`). A row a device's message wrote (a call, a slip held: `device` 1) is
bounded where the device can write it: at most DEVICE_ROWS of a kind for each of a table's games,
beyond which they are folded into one count row ("and 1,234 more calls", its `folded` the count,
its time the latest), and a table keeps the device rows of its latest DEVICE_GAMES games only. A
director's row (a result confirmed or changed, a call answered, a slip set aside, an update sent)
is never dropped, folded or pushed out of a read: a read returns up to MAX_AUDIT_READ of each, the
director's and the devices', so no flood of device rows displaces a director's action.

Each clock game the console has seen is bound to the round it was started for (`games`: table,
the clock's game id, the round and seat it belongs to, and since when, by the clock's time), so a
result a clock delivers again after a restart goes to its own round's game (hallstate.py).

The store never replaces a file it cannot read: a database SQLite cannot open, or whose
`PRAGMA quick_check` fails, stops the console (`StoreError`, one line naming the file and how to
recover). A write the disk refuses (full, read-only, failing) is rolled back whole and raised as
`StoreError` saying what was not kept and what to do: nothing is reported as recorded that is not
on disk.

Owned by one thread: the console's event loop (a write is a few milliseconds; the clock never waits
on it, it is the console's own disk). Readers get plain `Recorded` values.
"""

from __future__ import annotations

import contextlib
import errno
import json
import sqlite3
from pathlib import Path

from ..common import limits
from .results import BY_TABLE, MAX_REASON, SIGNED, Recorded, ResultError

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    division TEXT NOT NULL, round INTEGER NOT NULL, pn_low INTEGER NOT NULL, pn_high INTEGER NOT NULL,
    tbl INTEGER NOT NULL, body TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (division, round, pn_low, pn_high)
);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT, tbl INTEGER NOT NULL, game TEXT NOT NULL, round INTEGER NOT NULL,
    seat TEXT, since TEXT, UNIQUE (tbl, game)
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL, action TEXT NOT NULL,
    division TEXT NOT NULL, round INTEGER NOT NULL, pn_low INTEGER NOT NULL, pn_high INTEGER NOT NULL,
    before TEXT, after TEXT, reason TEXT NOT NULL DEFAULT ''
);
"""
# issue 36: each row's table, kind and game, whether a device's message wrote it, and a count row's count
# (added to an older file's audit as it opens: AUDIT_COLUMNS)
AUDIT_COLUMNS = (("tbl", "INTEGER"), ("kind", "TEXT"), ("game", "TEXT"), ("device", "INTEGER NOT NULL DEFAULT 0"),
                 ("folded", "INTEGER NOT NULL DEFAULT 0"))
AUDIT_INDEX = "CREATE INDEX IF NOT EXISTS audit_device ON audit (device, tbl, game, kind, folded)"
RESULT, CALL, SLIP, UPDATE, RULES, DIVISION = "result", "call", "slip", "update", "rules", "division"
# what `/api/audit?kind=` takes (RULES: the event's [event] changed; DIVISION: a division removed, issue 35)
AUDIT_KINDS = (RESULT, CALL, SLIP, UPDATE, RULES, DIVISION)
MAX_AUDIT_READ = 5000  # audit rows returned at once, of the director's and of the devices' each
DEVICE_ROWS = 20  # a device's rows of one kind for one game of its table; the rest are one count row
DEVICE_GAMES = 8  # a table's games whose device rows are kept (the latest; a game has a few calls)
# the audit's device rows are thus at most MAX_TABLE * DEVICE_GAMES * 2 kinds (call, slip) * (DEVICE_ROWS + 1)


STORE_REFUSED = 507  # Insufficient Storage: an endpoint's answer when the store refused a write (StoreError)


class StoreError(Exception):
    """The results database cannot be opened or written: one line saying which file, why, and what
    the director does about it."""


IDENTITY = "identity"  # the settings row naming the hall and event the store belongs to (issue 35)


class ResultStore:
    """`path` None: in memory (the demo and tests that need no disk). `identity` ({"hall", "event"}):
    the hall and event this store is for; a store that records another is refused whole
    (`StoreError`), and a new one records it."""

    def __init__(self, path: Path | None, identity: dict | None = None) -> None:
        self.path = None if path is None else Path(path)
        where = ":memory:" if self.path is None else self.path
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(where, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            # a damaged file is refused whole, before anything is read from it or written to it
            damage = [row[0] for row in self.db.execute("PRAGMA quick_check(1)")]
            if damage != ["ok"]:
                raise sqlite3.DatabaseError("damaged: " + " ".join(" ".join(damage).split())[:160])
            self.db.executescript(SCHEMA)
            _add_audit_columns(self.db)
            if self.path is not None:
                self.path.chmod(0o600)
            if identity is not None:
                self._own(identity)
        except (sqlite3.Error, OSError) as e:
            raise StoreError(f"the results database {where} cannot be opened ({' '.join(_why(e).split())}); it is left "
                             f"as it is: move it aside (mv {where} {where}.damaged) to start with an empty one, and recover "
                             "what it held with sqlite3's .recover (docs/console.md, \"When the results store fails\")") from None

    def _own(self, identity: dict) -> None:
        """The store is this hall's and this event's: recorded on a new store, checked on a kept one."""
        kept = self.setting(IDENTITY)
        if kept is None:
            if self.db.execute("SELECT 1 FROM results UNION ALL SELECT 1 FROM audit LIMIT 1").fetchone() is not None:
                kept = {"hall": "?", "event": "? (a store from before events had names)"}
            else:
                self.put_setting(IDENTITY, identity)
                return
        if not isinstance(kept, dict):
            kept = {"hall": "?", "event": repr(kept)[:40]}
        if kept != identity:
            self.db.close()
            raise StoreError(f"the results database {self.path} belongs to hall {kept.get('hall')!r} event "
                             f"{kept.get('event')!r}, not hall {identity.get('hall')!r} event {identity.get('event')!r}: "
                             "refused whole, nothing of it read into this event and it is left as it is (each event keeps its own: "
                             "`rackside hall event` lists them; docs/console.md, \"Events\")")

    @contextlib.contextmanager
    def _write(self, what: str, again: str = "do it again"):
        """One write: SQLite's refusal (disk full, read-only, I/O error) becomes a StoreError naming
        what was not kept and what to do (`again`: how to retry), the transaction rolled back."""
        try:
            yield
        except sqlite3.Error as e:
            _Transaction(self.db).rollback()
            why = _why(e)
            raise StoreError(f"{what} was NOT recorded: {self.path or 'the in-memory store'} cannot be written ({why}). "
                             f"{_REMEDY.get(why, _REMEDY['other'])}, then {again}.") from None

    def put_setting(self, key: str, value) -> None:
        """What the console must find again after a restart (the round, the imported TSH files)."""
        with self._write({"tsh_files": "the TSH import"}.get(key, f"the {key.replace('_', ' ')}")):
            self.db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (key, json.dumps(value)))

    def bind_game(self, table: int, game: str, round_: int, seat: dict | None, since: str | None) -> None:
        """Table `table`'s clock game `game` belongs to round `round_` (and, known then, `seat`): kept
        across restarts; bound again, it becomes the table's latest. At most GAMES_BOUND a table."""
        with self._write(f"table {table}'s game {game} (round {round_})"), self._tx():
            self.db.execute("DELETE FROM games WHERE tbl=? AND game=?", (table, game))
            self.db.execute("INSERT INTO games (tbl, game, round, seat, since) VALUES (?, ?, ?, ?, ?)",
                            (table, game, round_, None if seat is None else json.dumps(seat), since))
            self.db.execute("DELETE FROM games WHERE tbl=? AND id NOT IN (SELECT id FROM games WHERE tbl=? "
                            "ORDER BY id DESC LIMIT ?)", (table, table, limits.GAMES_BOUND))

    def bound_games(self) -> list[tuple[int, str, int, dict | None, str | None]]:
        """Every kept binding (table, game, round, seat, since), oldest first."""
        rows = self.db.execute("SELECT tbl, game, round, seat, since FROM games ORDER BY id").fetchall()
        return [(t, g, r, None if s is None else json.loads(s), since) for t, g, r, s, since in rows]

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
        with self._write(f"the result of table {r.table} (division {r.division} round {r.round}, "
                         f"{r.names[0]} v {r.names[1]})", "confirm again: the slip is still needed"), self._tx():
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
            self.db.execute("INSERT INTO audit (at, who, action, division, round, pn_low, pn_high, before, after, reason, "
                            "tbl, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (r.at, who, what, *key, None if before is None else json.dumps(before.as_dict()), body, reason,
                             r.table, RESULT))
            return what

    def note(self, at: str, who: str, action: str, division: str, round_: int, table: int, reason: str = "",
             after: dict | None = None, kind: str = CALL, game: str | None = None, device: bool = False) -> None:
        """An audited step that is not a result (issue 27: a director's call acknowledged or
        resolved, a signed slip held or refused), keyed by its table (pn_low 0, pn_high the table).
        `device`: written by a device's message (a call, a slip held), so bounded: at most DEVICE_ROWS
        of `kind` for table `table`'s game `game`, then one count row, and the device rows of the
        table's latest DEVICE_GAMES games only. A director's step (`device` False) is always kept."""
        if kind not in AUDIT_KINDS:
            raise ValueError(f"audit kind {kind!r}: allowed are {', '.join(AUDIT_KINDS)}")
        reason = " ".join(str(reason or "").split())[:MAX_REASON]
        after_text = None if after is None else json.dumps(after)
        with self._write(f"the audit of table {table}'s {action}"), self._tx():
            if device:
                mine = (table, game or "", kind)
                kept = self.db.execute("SELECT COUNT(*) FROM audit WHERE device=1 AND tbl=? AND game=? AND kind=? "
                                       "AND folded=0", mine).fetchone()[0]
                if kept >= DEVICE_ROWS:
                    count = self.db.execute("SELECT id, folded FROM audit WHERE device=1 AND tbl=? AND game=? AND kind=? "
                                            "AND folded>0", mine).fetchone()
                    folded = 1 if count is None else count[1] + 1
                    said = f"and {folded:,} more {kind}{'s' if folded > 1 else ''} of this game (the first {DEVICE_ROWS} are kept)"
                    if count is not None:
                        self.db.execute("UPDATE audit SET at=?, folded=?, reason=?, after=? WHERE id=?",
                                        (at, folded, said, after_text, count[0]))
                        return
                    action, reason = f"{kind}s folded", said
                self.db.execute("INSERT INTO audit (at, who, action, division, round, pn_low, pn_high, before, after, reason, "
                                "tbl, kind, game, device, folded) VALUES (?, ?, ?, ?, ?, 0, ?, NULL, ?, ?, ?, ?, ?, 1, ?)",
                                (at, who, action, division, round_, table, after_text, reason, table, kind, game or "",
                                 1 if kept >= DEVICE_ROWS else 0))
                if kept == 0:  # a game new to this kind: the table's oldest games' device rows go
                    self.db.execute("DELETE FROM audit WHERE device=1 AND tbl=? AND game NOT IN (SELECT game FROM audit "
                                    "WHERE device=1 AND tbl=? GROUP BY game ORDER BY MAX(id) DESC LIMIT ?)",
                                    (table, table, DEVICE_GAMES))
                return
            self.db.execute("INSERT INTO audit (at, who, action, division, round, pn_low, pn_high, before, after, reason, "
                            "tbl, kind, game) VALUES (?, ?, ?, ?, ?, 0, ?, NULL, ?, ?, ?, ?, ?)",
                            (at, who, action, division, round_, table, after_text, reason, table, kind, game))

    def check(self, r: Recorded, reason: str = "") -> None:
        """What `record` would refuse, said before anything is confirmed: a change to a result
        already recorded without a reason (5.4.1: final once signed)."""
        row = self.db.execute("SELECT body FROM results WHERE division=? AND round=? AND pn_low=? AND pn_high=?",
                              self.key(r)).fetchone()
        before = None if row is None else Recorded.from_dict(json.loads(row[0]))
        if before is not None and not before.same_result(r) and not " ".join(str(reason or "").split()):
            raise _correction_needs_reason(before, r)

    def results(self, division: str | None = None, round_: int | None = None) -> list[Recorded]:
        where, args = _where(division, round_)
        q = "SELECT body FROM results" + where
        return [Recorded.from_dict(json.loads(b)) for (b,) in self.db.execute(q + " ORDER BY division, round, tbl", args)]

    def bodies(self) -> list[str]:
        """Every result as kept (its JSON text): for a reader that keeps its own decoded copies and
        decodes only what changed (tshlive.Rows: decoding every result is most of a full read)."""
        return [b for (b,) in self.db.execute("SELECT body FROM results ORDER BY division, round, tbl")]

    def audit(self, division: str | None = None, round_: int | None = None, table: int | None = None,
              kind: str | None = None) -> list[dict]:
        """The audit, newest first, of one division, round, table or kind (AUDIT_KINDS) or all: up to
        MAX_AUDIT_READ of the director's rows and as many of the devices', so a device's flood never
        pushes a director's row out."""
        where, args = _where(division, round_, table, kind)
        cols = "id, at, who, action, division, round, pn_low, pn_high, before, after, reason, tbl, kind, game, device, folded"
        rows = []
        for device in (0, 1):
            q = f"SELECT {cols} FROM audit" + (where + " AND" if where else " WHERE") + " device=?"
            rows += self.db.execute(q + " ORDER BY id DESC LIMIT ?", (*args, device, MAX_AUDIT_READ)).fetchall()
        keys = ("at", "who", "action", "division", "round", "pn_low", "pn_high", "before", "after", "reason", "table",
                "kind", "game", "device", "folded")
        out = []
        for row in sorted(rows, key=lambda r: r[0], reverse=True):
            d = dict(zip(keys, row[1:]))
            d["before"] = None if d["before"] is None else json.loads(d["before"])
            d["after"] = None if d["after"] is None else json.loads(d["after"])
            d["device"] = bool(d["device"])
            out.append(d)
        return out

    def audit_rows(self) -> tuple[int, int]:
        """How many rows the audit keeps: (the director's, the devices')."""
        d, v = self.db.execute("SELECT COALESCE(SUM(device=0), 0), COALESCE(SUM(device=1), 0) FROM audit").fetchone()
        return d, v

    @contextlib.contextmanager
    def together(self, what: str):
        """Several writes as one (a change of the event's rules: the round's game time, the rules and
        their audit row): all kept, or (StoreError naming `what`) none. The writes inside join this
        transaction rather than opening their own."""
        with self._write(what), self._tx():
            yield

    def _tx(self):
        # inside `together`, a write is part of its transaction (SQLite has no nested BEGIN)
        return contextlib.nullcontext() if self.db.in_transaction else _Transaction(self.db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an exception): a result and its audit row together."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            try:
                self.db.execute("COMMIT")
                return
            except sqlite3.Error:
                self.rollback()  # a COMMIT the disk refused leaves the transaction open: end it
                raise
        self.rollback()

    def rollback(self) -> None:
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:  # SQLite rolled it back itself (SQLITE_FULL may): nothing is kept
                pass


_REMEDY = {  # what the director does, by what SQLite said
    "the disk is full": "Free space on the console's disk (or move its state directory to a bigger one)",
    "the file is read-only": "Make the state directory writable for the console",
    "other": "Check the console's disk",
}


def _why(e: BaseException) -> str:
    """SQLite's reason in the director's words."""
    text, name, err = str(e), getattr(e, "sqlite_errorname", None) or "", getattr(e, "errno", None)
    if name == "SQLITE_FULL" or err == errno.ENOSPC or "disk is full" in text:
        return "the disk is full"
    if name.startswith("SQLITE_READONLY") or err == errno.EROFS or "readonly" in text:
        return "the file is read-only"
    return text[:200]


def _correction_needs_reason(before: Recorded, r: Recorded) -> ResultError:
    game = f"division {r.division} round {r.round}" if r.division else f"round {r.round} table {r.table}"
    signed = " (signed by both players at the clock: only the director changes it)" if before.entry == SIGNED else ""
    # 5.4.1(b): scores accidentally reversed between winner and loser are corrected on petition
    was, now = (before.slip, r.slip) if before.slip and r.slip else (before.scores, r.scores)  # as typed, before penalties
    reversed_ = tuple(now) == tuple(reversed(was)) and not r.forfeits and now[0] != now[1]
    petition = "; these are its scores reversed, corrected on petition (5.4.1(b))" if reversed_ else ""
    return ResultError(f"{game}: {before.names[0]} v {before.names[1]} is already recorded "
                       f"{before.scores[0]}-{before.scores[1]}{signed}: a correction needs a reason (5.4.1){petition}")


def _where(division: str | None, round_: int | None, table: int | None = None, kind: str | None = None) -> tuple[str, list]:
    """The WHERE clause (with its parameters) picking one division, round, table, kind, several or none."""
    clauses, args = [], []
    for column, value in (("division", division), ("round", round_), ("tbl", table), ("kind", kind)):
        if value is not None:
            clauses.append(f"{column}=?")
            args.append(value)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def _add_audit_columns(db: sqlite3.Connection) -> None:
    """An older file's audit gains AUDIT_COLUMNS, its rows their table, kind and game from what they
    kept (a note's table is its pn_high; a result's is in its body), its calls and held slips marked as
    a device's (the console wrote them of a clock's message)."""
    have = {row[1] for row in db.execute("PRAGMA table_info(audit)")}
    missing = [(name, kind) for name, kind in AUDIT_COLUMNS if name not in have]
    if missing:
        with _Transaction(db):
            for name, kind in missing:
                db.execute(f"ALTER TABLE audit ADD COLUMN {name} {kind}")
            db.execute("UPDATE audit SET tbl = CASE WHEN pn_low=0 THEN pn_high ELSE json_extract(after, '$.table') END, "
                       f"kind = CASE WHEN action IN ('call', 'call ack', 'call resolve') THEN '{CALL}' "
                       f"WHEN action IN ('slip held', 'slip set aside') THEN '{SLIP}' WHEN action='rules' THEN '{RULES}' ELSE '{RESULT}' END, "
                       "game = CASE WHEN pn_low=0 THEN json_extract(after, '$.game') END, "
                       "device = (who='console' AND action IN ('call', 'slip held'))")
    db.execute(AUDIT_INDEX)
