"""The tournament as the console holds it: TSH's divisions (all at once), the hall's seating for the
round, and the results store.

TSH files come in as bytes (`import_files`): a `config.tsh` names the divisions and their files and
says how to read them (encoding, comments, score limit, tables); `.t` files without one are named
after the file; a `tourney.js` brings every division it has. What was imported is kept in the store,
so a restarted console has the same divisions. Results go through `result()`: the clock's result
(or, with none, the slip alone: "no clock record"), the slip, the event's rules ([event]: `rules`, never
the built-in defaults) and results.py's, the director's
decision where one is needed, then the store; a table with no TSH game is recorded by table.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from pathlib import PurePosixPath

from rackside.game.rules_table import ConfigError
from rackside.hall.wire import eventrules
from rackside.hall.wire.eventrules import EventRules

from ..scoring import hallplan, results, tsh
from ..common import limits
from .contract import state_rules
from .hallstate import Table, table_key
from ..scoring.resultstore import DIVISION, RULES, ResultStore, StoreError

MAX_FILE_BYTES = limits.MAX_BODY_BYTES  # one TSH file: no more than a request may carry
MAX_FILES = limits.MAX_TSH_FILES
FILES_KEY = "tsh_files"
REMOVED_KEY = "tsh_removed_divisions"  # divisions the director removed: not read back from the kept files
ROUND_KEY = "round"
RULES_KEY = "event_rules"  # the event's rules the console last ran (a change is audited)
CONFIG_RULES_KEY = "event_rules_config"  # console.toml's [event] as the console last read it (rules_at_start)
STARTED_KEY = "event_started"  # the event's first game has begun (started): a change of rules is confirmed from then on


class Event:
    def __init__(self, store: ResultStore) -> None:
        self.store = store
        self.config: tsh.Config | None = None
        self.divisions: dict[str, tsh.Division] = {}  # in config.tsh's order, else import order
        self.problems: list[str] = []  # what the last imports could not place
        self.files: dict[str, bytes] = {}
        self.js_options: dict = {}  # tourney.js's options (score entry, ranking), for an event without config.tsh
        self.removed: set[str] = set()  # divisions the director removed (REMOVED_KEY); importing one again brings it back
        self.rules = EventRules()  # the event's rules ([event], issue 38): a slip with no clock record is reckoned with them

    def state_rules(self) -> dict:
        """The event's rules as a clock's state carries its game's (hall.wire.messages.STATE_RULES)."""
        return state_rules(self.rules.rules)

    def rules_at_start(self, config: EventRules) -> tuple[EventRules, bool]:
        """The rules a (re)started console runs, read only: console.toml's [event] when it is not
        what the console read at its last start (or none was read: the director's new word), else
        those kept (a change made on the rules page since survives a restart). With them, whether
        they are not those the console last ran (or none were kept)."""
        kept = self.store.setting(RULES_KEY)
        if kept is not None and self.store.setting(CONFIG_RULES_KEY) == config.as_dict():
            try:
                return eventrules.from_table(kept, "the kept event rules"), False
            except ConfigError:  # not what this version writes: console.toml's, as at a first start
                pass
        return config, kept != config.as_dict()

    def set_rules(self, config: EventRules, who: str, at: str, round_: int,
                  start: tuple[EventRules, bool] | None = None) -> bool:
        """The event's rules at the console's start, from [event] (`config`) or kept (rules_at_start;
        `start`: what it gave already, not worked out again): kept, and audited when they are not
        those the console last ran (a change between rounds, or in one). True when they are not the
        ones kept (or none were)."""
        self.rules, changed = start if start is not None else self.rules_at_start(config)
        if changed:
            if self.store.setting(RULES_KEY) is not None:
                self.store.note(at, who, "rules", "", round_, 0, f"the event's rules are now {self.rules.summary()}",
                                self.rules.as_dict(), kind=RULES)
            self.store.put_setting(RULES_KEY, self.rules.as_dict())
        if self.store.setting(CONFIG_RULES_KEY) != config.as_dict():
            self.store.put_setting(CONFIG_RULES_KEY, config.as_dict())
        return changed

    def started(self, round_number: int, a_game_begun: bool) -> bool:
        """Whether the event's play has begun: a game of it past its first press on a clock
        (`a_game_begun`, the hall's), a round after the first, or a result recorded. From then on a
        change of rules needs a confirmation and a reason; once seen, kept (STARTED_KEY), so neither
        a restart nor a clock gone quiet makes it "not begun" again."""
        if self.store.setting(STARTED_KEY):
            return True
        if not (round_number > 1 or a_game_begun or self.store.bodies()):
            return False
        try:
            self.store.put_setting(STARTED_KEY, True)
        except StoreError:  # said when the next write fails; begun all the same
            pass
        return True

    def change_rules(self, rules: EventRules, who: str, at: str, round_: int, reason: str,
                     round_dict: dict | None = None) -> None:
        """The director's change on the rules page (rulespage.py): kept (RULES_KEY), so a restart runs
        them while console.toml's [event] is unchanged (rules_at_start), with the round (`round_dict`:
        a new game time is the round's too) and the audit row of the change (its reason and what they
        were), in one transaction: StoreError, nothing of it kept, the rules as they were."""
        was, now = self.rules.as_dict(), rules.as_dict()
        changes = "; ".join(f"{k} {was[k]} -> {now[k]}" for k in now if now[k] != was.get(k))
        why = f"{reason}: {changes}" if reason else changes
        with self.store.together("the change of the event's rules"):
            if round_dict is not None:
                self.save_round(round_dict)
            self.store.put_setting(RULES_KEY, rules.as_dict())
            self.store.note(at, who, "rules", "", round_, 0, why, rules.as_dict(), kind=RULES)
        self.rules = rules

    @property
    def limits(self) -> results.Limits:
        return results.Limits(max_score=self.config.max_score if self.config else results.TSH_MAX_SCORE,
                              lateness_margin=self.rules.rules.lateness_forfeit_margin)

    # --- TSH in --------------------------------------------------------------------------------

    def restore(self) -> list[str]:
        """The files imported before a restart, read again."""
        kept = self.store.setting(FILES_KEY, {}) or {}
        removed = self.store.setting(REMOVED_KEY, []) or []
        self.removed = {str(n) for n in removed} if isinstance(removed, list) else set()
        try:
            if not isinstance(kept, dict):
                raise TypeError("not a table of files")
            files = {name: data["text"] if isinstance(data, dict) else base64.b64decode(data, validate=True)
                     for name, data in kept.items()}
            return self.import_files(files, keep=False) if files else []
        except (tsh.TshError, TypeError, KeyError, ValueError, binascii.Error) as e:
            # The console must start whatever it kept: the director imports the files again.
            return [f"the kept TSH files could not be read again ({e}): import them again"]

    def import_files(self, files: dict[str, bytes | str], keep: bool = True, revive: bool = True) -> list[str]:
        """Read TSH files (name -> bytes as on disk, or text already decoded); returns the problems
        (each naming its file and line). A division imported again replaces the one before; a
        tourney.js is the whole event (TSH writes every division into it), so importing one replaces
        the event: no division, config.tsh or file of an earlier import stays beside it. A division
        the director removed comes back when imported again (`revive`; not the config's files read
        at each start)."""
        if len(files) > MAX_FILES:
            raise tsh.TshError(f"at most {MAX_FILES} files at once, not {len(files)}")
        for name, data in files.items():
            if len(data) > MAX_FILE_BYTES or (isinstance(data, str) and len(data.encode("utf-8")) > MAX_FILE_BYTES):
                raise tsh.TshError(f"{name}: {len(data)} bytes, more than the {MAX_FILE_BYTES} a TSH file may have")
        by_base = {PurePosixPath(n.replace("\\", "/")).name: (n, d) for n, d in files.items()}
        problems: list[str] = []
        new: list[tsh.Division] = []
        cfg_entry = by_base.get("config.tsh")
        # a tourney.js in the files: the event is theirs alone (nothing is changed until all are read)
        whole = any(base != "config.tsh" and _is_tourney_js(base, data) for base, (_n, data) in by_base.items())
        before = {} if whole else self.divisions
        cfg = None if whole else self.config
        if cfg_entry is not None:
            cfg = tsh.parse_config(_text(cfg_entry[1], "utf-8"), cfg_entry[0])
            problems += cfg.problems
        js_options = {} if whole else self.js_options
        used: set[str] = {"config.tsh"}
        if cfg is not None:
            for div_name, fname in cfg.divisions:
                entry = by_base.get(PurePosixPath(fname).name)
                if entry is None:
                    if cfg_entry is not None and div_name not in before:
                        problems.append(f"{cfg.source}: division {div_name}: its file {fname} was not given")
                    continue
                used.add(PurePosixPath(fname).name)
                text = _text(entry[1], cfg.encoding)
                new.append(tsh.parse_t(text, div_name, entry[0], cfg.inline_comments))
        for base, (name, data) in by_base.items():
            if base in used:
                continue
            if _is_tourney_js(base, data):
                new.extend(tsh.parse_tourney_js(_text(data, "utf-8"), name))
                js_options = tsh.tourney_js_options(_text(data, "utf-8"), name)
            elif base.endswith(".t"):
                enc = cfg.encoding if cfg else tsh.DEFAULT_ENCODING
                new.append(tsh.parse_t(_text(data, enc), base[:-2], name, cfg.inline_comments if cfg else False))
            else:
                problems.append(f"{name}: not a TSH file (config.tsh, a .t file or tourney.js): not read")
        if keep and revive:  # a division imported again is the director's again (a tourney.js: the whole event)
            back = set(self.removed) if whole else self.removed & {d.name for d in new}
            if back:
                self.removed -= back
                self.store.put_setting(REMOVED_KEY, sorted(self.removed))
        self.config, self.js_options, self.divisions = cfg, js_options, dict(before)
        for d in new:
            if d.name in self.removed:
                continue
            self.divisions[d.name] = d
            problems += d.problems
        if cfg is not None:
            rank = {n.lower(): i for i, (n, _) in enumerate(cfg.divisions)}
            self.divisions = dict(sorted(self.divisions.items(), key=lambda kv: rank.get(kv[0].lower(), len(rank))))
        if keep:  # by file name: the same file imported again replaces the one kept (a tourney.js: all)
            if whole:
                self.files = {}
            self.files.update({PurePosixPath(n.replace("\\", "/")).name: d for n, d in files.items()})
            self.store.put_setting(FILES_KEY, {n: {"text": d} if isinstance(d, str) else base64.b64encode(d).decode()
                                               for n, d in self.files.items()})
        else:
            self.files = dict(files)
        self.problems = problems
        return problems

    def remove_division(self, name: str, who: str, at: str, round_: int, reason: str = "") -> dict:
        """Take a division out of the event (issue 35: an import added divisions and none could be
        removed), audited. A division with a recorded result is refused: its results stay where the
        exports find them. Its TSH files stay kept; importing the division again brings it back."""
        if name not in self.divisions:
            raise ValueError(f"division {str(name)[:40]!r}: allowed are {', '.join(self.divisions) or 'none (no division is imported)'}")
        recorded = len(self.store.results(name))
        if recorded:
            raise ValueError(f"division {name} has {recorded} recorded result(s): it cannot be removed (its results stay in the exports)")
        d = self.divisions[name]
        after = {"players": len(d.players), "rounds": d.rounds}
        self.store.note(at, who, "remove division", name, round_, 0, reason, after=after, kind=DIVISION)  # audited first: a full disk changes nothing
        self.removed.add(name)
        self.store.put_setting(REMOVED_KEY, sorted(self.removed))
        del self.divisions[name]
        return after

    def summary(self) -> list[dict]:
        return [{"name": d.name, "players": len(d.players), "rounds": d.rounds, "problems": len(d.problems)}
                for d in self.divisions.values()]

    # --- the round -----------------------------------------------------------------------------

    def seating(self, round_: int) -> tuple[dict[int, dict], list[str]]:
        seats, problems = hallplan.plan(list(self.divisions.values()), self.config, round_)
        return {n: s.as_dict() for n, s in seats.items()}, problems

    def finals(self, round_: int) -> dict[tuple, dict]:
        """The round's confirmed results, by seat_key, as a tile shows them."""
        out = {}
        for r in self.store.results(round_=round_):
            key = table_key(r.round, r.table) if r.division == results.BY_TABLE else (r.division, r.round, tuple(sorted(r.numbers)))
            out[key] = tile_final(r)
        return out

    # --- results -------------------------------------------------------------------------------

    def result(self, t: Table, body: dict, by: str, at: str, round_: int | None = None,
               entry: str = results.TYPED) -> dict:
        """Work out (and with `confirm`, record) a table's result. Raises ResultError.

        What the director has decides how: the clock's result of this round's game here, or, with
        none, the result slip alone (`no_clock`: the reason, the penalties written on the slip, how
        the game ended), marked "no clock record" (5.4.1: the signed slip is the record). A table
        with no TSH game this round is recorded by table (`round_`, the names as typed, optional).
        `entry`: the scores were typed from the paper slip (the form) or signed at the clock (issue 27).

        `body`'s types are as hall.console.state.requests.result_body checked and left them (a page's
        request), or as the console built it (a signed slip's scores, hall.console.tableside.paperless): they
        are not checked again here; the rules (results.py) check the values."""
        clock = t.current_result()
        no_clock = body.get("no_clock")
        game = f" for division {t.seat['division']} round {t.seat['round']} ({t.names[0]} v {t.names[1]})" if t.seat else ""
        reason = ""
        if clock is not None:
            if no_clock is not None:
                raise results.ResultError(f"table {t.n}: this game has a clock result: its time penalties are the "
                                          "clock's (5.3), so it is recorded from the clock, not as a slip with no clock record")
            res = results.ClockResult.from_event(t.n, clock.get("game"), clock)
        else:
            if no_clock is None:
                withheld = t.withheld()  # the clock's result is of another game (hallstate.Bound)
                raise results.ResultError(
                    f"table {t.n}: no clock result{game}" + (f" ({withheld})" if withheld else "") + ": record it from "
                    "the result slip, with the reason the game has no clock record (a clock that broke, no clock at "
                    "this table, a lost journal) and any time penalties written on the slip")
            reason = " ".join(str(no_clock.get("reason") or "").split())[:results.MAX_REASON]
            if not reason:
                raise results.ResultError(f"table {t.n}: a result with no clock record needs the reason there is none "
                                          "(it is recorded and audited)")
            res = results.slip_result(t.n, no_clock.get("ending"), no_clock.get("forfeit"),
                                      no_clock.get("penalties", [0, 0]), self.state_rules())
        if t.seat is not None and body.get("names") is not None:
            raise results.ResultError(f"table {t.n}: the players are TSH's ({t.names[0]} v {t.names[1]}): names are typed "
                                      "only for a game recorded by table")
        names = tuple(t.seat["names"]) if t.seat else tuple(body.get("names") or ("", ""))
        slip = body.get("slip")
        margin = body.get("margin")
        final = results.final_scores(res, None if slip is None else tuple(slip),
                                     None if margin in (None, "") else margin, self.limits)
        decision = body.get("decision")
        if decision is not None:
            if not final.needs_director:
                raise results.ResultError("this result needs no decision: it follows from the slip and the rules")
            scores = decision.get("scores")
            final = results.decide(final, str(decision.get("reason") or ""), None if scores is None else tuple(scores),
                                   self.limits)
        if reason:
            final = replace(final, note=f"{results.NO_CLOCK} ({reason})" + (f"; {final.note}" if final.note else ""))
        seat = t.seat or {}
        division = seat.get("division", results.BY_TABLE)
        rnd = seat.get("round", round_)
        out = {"scores": list(final.scores), "penalties": list(final.penalties), "note": final.note,
               "needs_director": final.needs_director, "forfeits": list(final.forfeits),
               "division": seat.get("division"), "round": rnd, "label": seat.get("label"),
               "tsh_table": seat.get("tsh_table", ""), "no_clock": reason, "by_table": t.seat is None}
        numbers = tuple(t.seat["numbers"]) if t.seat else (None, None)
        rec = None if rnd is None else results.Recorded.of(division, rnd, t.n, numbers, names, res,
                                                           None if slip is None else tuple(int(x) for x in slip),
                                                           final, by, at, no_clock=reason,
                                                           tsh_table=seat.get("tsh_table", ""), entry=entry)
        correction = str(body.get("correction") or "")
        if rec is not None and not final.needs_director:
            self.store.check(rec, correction)  # refused now, before the page asks to confirm, as record() would
        if body.get("confirm") is not True:
            return out
        if rec is None:
            raise results.ResultError(f"table {t.n}: no TSH game is seated here: the round to record it for is needed")
        if final.needs_director:
            raise results.NeedsDirector(f"table {t.n}: {final.note}. Enter the director's decision with a reason first.")
        what = self.store.record(rec, by, correction, "decide" if decision is not None else None)
        t.final = tile_final(rec)
        return {**out, "confirmed": True, "recorded": what}

    def export_rows(self, division: str | None, round_: int) -> list[results.Recorded]:
        return self.store.results(division, round_)

    def tsh_export(self, division: str, round_: int) -> results.TshExport:
        """TSH's score entry for the round, byes included: the division as TSH's files have it and
        config.tsh's `entry` and `bye_spread` (or tourney.js's, without config.tsh; results.to_tsh)."""
        return results.to_tsh(division, round_, self.export_rows(division, round_), self.divisions.get(division),
                              self.entry_config())

    def entry_config(self) -> tsh.Config | None:
        """What TSH's score entry reads (`entry`, `bye_spread`, ...): config.tsh, else tourney.js's."""
        return self.config or (tsh.Config(options=dict(self.js_options)) if self.js_options else None)

    def options(self) -> dict:
        """TSH's options of the event, from whichever file it came in: config.tsh's, else tourney.js's
        `config` (what the ranking reads, standings.py, and the score entry)."""
        return dict(self.config.options) if self.config is not None else dict(self.js_options)

    def save_round(self, round_dict: dict) -> None:
        self.store.put_setting(ROUND_KEY, round_dict)

    def saved_round(self) -> dict | None:
        return self.store.setting(ROUND_KEY)


def _is_tourney_js(base: str, data: bytes | str) -> bool:
    head = _text(data[:200], "utf-8").lstrip("\ufeff \t\r\n")
    return base.endswith(".js") or head.startswith("newt") or head.startswith("//")


def _text(data: bytes | str, encoding: str) -> str:
    """A file's text: bytes decoded as TSH does (tsh.decode_t: BOM, the encoding), text as given."""
    return data.lstrip("\ufeff") if isinstance(data, str) else tsh.decode_t(data, encoding)


def tile_final(r: results.Recorded) -> dict:
    return {"scores": list(r.scores), "penalties": list(r.penalties), "note": r.note, "by": r.by,
            "forfeits": list(r.forfeits), "decision": r.decision, "division": r.division, "round": r.round,
            # the clock's final times, for a tile of an earlier round once the clock plays another game
            "remaining_ms": None if r.remaining_ms is None else list(r.remaining_ms), "overtime_s": list(r.overtime_s),
            "no_clock": r.no_clock, "names": list(r.names), "entry": r.entry or results.TYPED,
            "numbers": list(r.numbers),  # TSH's players at side 1 and 2, as recorded (checkin.on_sides)
            "signed": r.entry == results.SIGNED}


def decode_upload(item: dict) -> tuple[str, bytes | str]:
    """One uploaded file: `{"name", "data"}` (base64, the bytes as they are on disk: a .t file is
    ISO-8859-1 unless config.tsh says otherwise) or `{"name", "text"}` (already text: not decoded again)."""
    if not isinstance(item, dict):
        raise ValueError("each file must be an object with a name and its data")
    name = str(item.get("name") or "").strip()[:200]
    if not name:
        raise ValueError("a file needs its name (config.tsh, a.t, tourney.js)")
    if isinstance(item.get("data"), str):
        try:
            data = base64.b64decode(item["data"], validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{name}: data is not base64") from None
    elif isinstance(item.get("text"), str):
        data = item["text"]
    else:
        raise ValueError(f"{name}: no data")
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{name}: {len(data)} bytes, more than the {MAX_FILE_BYTES} a TSH file may have")
    return name, data
