"""The tournament as the console holds it: TSH's divisions (all at once), the hall's seating for the
round, and the results store.

TSH files come in as bytes (`import_files`): a `config.tsh` names the divisions and their files and
says how to read them (encoding, comments, score limit, tables); `.t` files without one are named
after the file; a `tourney.js` brings every division it has. What was imported is kept in the store,
so a restarted console has the same divisions. Results go through `result()`: the clock's result,
the slip, the rules (results.py), the director's decision where one is needed, then the store.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import PurePosixPath

from . import hallplan, limits, results, tsh
from .hallstate import Table
from .resultstore import ResultStore

MAX_FILE_BYTES = limits.MAX_BODY_BYTES  # one TSH file: no more than a request may carry
MAX_FILES = limits.MAX_TSH_FILES
FILES_KEY = "tsh_files"
ROUND_KEY = "round"


class Event:
    def __init__(self, store: ResultStore) -> None:
        self.store = store
        self.config: tsh.Config | None = None
        self.divisions: dict[str, tsh.Division] = {}  # in config.tsh's order, else import order
        self.problems: list[str] = []  # what the last imports could not place
        self.files: dict[str, bytes] = {}

    @property
    def limits(self) -> results.Limits:
        return results.Limits(max_score=self.config.max_score if self.config else results.TSH_MAX_SCORE)

    # --- TSH in --------------------------------------------------------------------------------

    def restore(self) -> list[str]:
        """The files imported before a restart, read again."""
        kept = self.store.setting(FILES_KEY, {}) or {}
        try:
            if not isinstance(kept, dict):
                raise TypeError("not a table of files")
            files = {name: data["text"] if isinstance(data, dict) else base64.b64decode(data, validate=True)
                     for name, data in kept.items()}
            return self.import_files(files, keep=False) if files else []
        except (tsh.TshError, TypeError, KeyError, ValueError, binascii.Error) as e:
            # The console must start whatever it kept: the director imports the files again.
            return [f"the kept TSH files could not be read again ({e}): import them again"]

    def import_files(self, files: dict[str, bytes | str], keep: bool = True) -> list[str]:
        """Read TSH files (name -> bytes as on disk, or text already decoded); returns the problems
        (each naming its file and line). A division imported again replaces the one before."""
        if len(files) > MAX_FILES:
            raise tsh.TshError(f"at most {MAX_FILES} files at once, not {len(files)}")
        for name, data in files.items():
            if len(data) > MAX_FILE_BYTES or (isinstance(data, str) and len(data.encode("utf-8")) > MAX_FILE_BYTES):
                raise tsh.TshError(f"{name}: {len(data)} bytes, more than the {MAX_FILE_BYTES} a TSH file may have")
        by_base = {PurePosixPath(n.replace("\\", "/")).name: (n, d) for n, d in files.items()}
        problems: list[str] = []
        new: list[tsh.Division] = []
        cfg_entry = by_base.get("config.tsh")
        if cfg_entry is not None:
            cfg = tsh.parse_config(_text(cfg_entry[1], "utf-8"), cfg_entry[0])
            self.config = cfg
            problems += cfg.problems
        cfg = self.config
        used: set[str] = {"config.tsh"}
        if cfg is not None:
            for div_name, fname in cfg.divisions:
                entry = by_base.get(PurePosixPath(fname).name)
                if entry is None:
                    if cfg_entry is not None and div_name not in self.divisions:
                        problems.append(f"{cfg.source}: division {div_name}: its file {fname} was not given")
                    continue
                used.add(PurePosixPath(fname).name)
                text = _text(entry[1], cfg.encoding)
                new.append(tsh.parse_t(text, div_name, entry[0], cfg.inline_comments))
        for base, (name, data) in by_base.items():
            if base in used:
                continue
            head = _text(data[:200], "utf-8").lstrip("\ufeff \t\r\n")
            if base.endswith(".js") or head.startswith("newt") or head.startswith("//"):
                new.extend(tsh.parse_tourney_js(_text(data, "utf-8"), name))
            elif base.endswith(".t"):
                enc = cfg.encoding if cfg else tsh.DEFAULT_ENCODING
                new.append(tsh.parse_t(_text(data, enc), base[:-2], name, cfg.inline_comments if cfg else False))
            else:
                problems.append(f"{name}: not a TSH file (config.tsh, a .t file or tourney.js): not read")
        for d in new:
            self.divisions[d.name] = d
            problems += d.problems
        if cfg is not None:
            rank = {n.lower(): i for i, (n, _) in enumerate(cfg.divisions)}
            self.divisions = dict(sorted(self.divisions.items(), key=lambda kv: rank.get(kv[0].lower(), len(rank))))
        if keep:  # by file name: the same file imported again replaces the one kept
            self.files.update({PurePosixPath(n.replace("\\", "/")).name: d for n, d in files.items()})
            self.store.put_setting(FILES_KEY, {n: {"text": d} if isinstance(d, str) else base64.b64encode(d).decode()
                                               for n, d in self.files.items()})
        else:
            self.files = dict(files)
        self.problems = problems
        return problems

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
            key = (r.division, r.round, tuple(sorted(r.numbers)))
            out[key] = tile_final(r)
        return out

    # --- results -------------------------------------------------------------------------------

    def result(self, t: Table, body: dict, by: str, at: str) -> dict:
        """Work out (and with `confirm`, record) a table's result. Raises ResultError."""
        clock = t.current_result()
        if clock is None:
            game = f" for division {t.seat['division']} round {t.seat['round']} ({t.names[0]} v {t.names[1]})" if t.seat else ""
            withheld = t.withheld()  # a result bound to another round's game (hallstate.Bound)
            raise results.ResultError(f"table {t.n}: no clock result yet{game}" + (f"; {withheld}" if withheld else ""))
        res = results.ClockResult.from_event(t.n, clock.get("game"), clock)
        slip = body.get("slip")
        if slip is not None and (not isinstance(slip, list) or len(slip) != 2):
            raise results.ResultError("type both scores")
        margin = body.get("margin")
        final = results.final_scores(res, None if slip is None else tuple(slip),
                                     None if margin in (None, "") else margin, self.limits)
        decision = body.get("decision")
        if decision is not None:
            if not isinstance(decision, dict):
                raise results.ResultError("decision must be an object with a reason (and the scores)")
            if not final.needs_director:
                raise results.ResultError("this result needs no decision: it follows from the slip and the rules")
            scores = decision.get("scores")
            final = results.decide(final, str(decision.get("reason") or ""), None if scores is None else tuple(scores),
                                   self.limits)
        seat = t.seat or {}
        out = {"scores": list(final.scores), "penalties": list(final.penalties), "note": final.note,
               "needs_director": final.needs_director, "forfeits": list(final.forfeits),
               "division": seat.get("division"), "round": seat.get("round"), "label": seat.get("label")}
        if body.get("confirm") is not True:
            return out
        if t.seat is None:
            raise results.ResultError(f"table {t.n}: no TSH game is seated here this round, so the result has no "
                                      "players to be recorded for: import the division's TSH files")
        if final.needs_director:
            raise results.NeedsDirector(f"table {t.n}: {final.note}. Enter the director's decision with a reason first.")
        rec = results.Recorded.of(t.seat["division"], t.seat["round"], t.n, t.seat["numbers"], t.seat["names"], res,
                                  None if slip is None else tuple(int(x) for x in slip), final, by, at)
        what = self.store.record(rec, by, str(body.get("correction") or ""), "decide" if decision is not None else None)
        t.final = tile_final(rec)
        return {**out, "confirmed": True, "recorded": what}

    def export_rows(self, division: str, round_: int) -> list[results.Recorded]:
        return self.store.results(division, round_)

    def save_round(self, round_dict: dict) -> None:
        self.store.put_setting(ROUND_KEY, round_dict)

    def saved_round(self) -> dict | None:
        return self.store.setting(ROUND_KEY)


def _text(data: bytes | str, encoding: str) -> str:
    """A file's text: bytes decoded as TSH does (tsh.decode_t: BOM, the encoding), text as given."""
    return data.lstrip("\ufeff") if isinstance(data, str) else tsh.decode_t(data, encoding)


def tile_final(r: results.Recorded) -> dict:
    return {"scores": list(r.scores), "penalties": list(r.penalties), "note": r.note, "by": r.by,
            "forfeits": list(r.forfeits), "decision": r.decision, "division": r.division, "round": r.round}


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
