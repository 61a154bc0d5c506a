"""The results desk's endpoints: what the director does with results and TSH's files.

`POST /api/result/N` works out (and with `confirm: true` records) a table's result; `POST /api/tsh`
imports config.tsh with its .t files (or tourney.js); `POST /api/division/remove` takes a division
out, audited; `GET /api/results` is the page's Results table and `GET /api/export/round.csv` the
same rows as CSV (one view, scoring.results.round_view); `GET /api/export/tsh.txt` is TSH's score
entry, `GET /api/export/tourney.js` TSH's own file, live; `GET /api/audit` (and the page `/audit`)
who did what. The results themselves are worked out and kept by scoring/ and state/event.py; this
module checks each request and answers it, given its services (`Services`), never the console.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Awaitable, Callable

from starlette.authentication import requires
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from ..common import limits
from ..common.guard import DIRECTOR, json_object, now_iso
from ..common.guard import refused as _bad
from ..scoring import results, tsh, tshout
from ..scoring.resultstore import AUDIT_KINDS, STORE_REFUSED, StoreError
from ..state import requests
from ..state.event import decode_upload

log = logging.getLogger("rackside.hall.console")
STATIC = Path(__file__).parent.parent / "static"
TSH_NEEDS = ("TSH's score entry needs TSH files: the results recorded by table have no TSH player numbers. Import "
             "config.tsh with its .t files (or tourney.js) under Round & TSH; results recorded by table export as CSV.")


@dataclass(frozen=True)
class Services:
    """What the results desk uses of the console, each named (shell/app.Console gives them)."""

    state: Any  # the hall state (state.hallstate.HallState): the tables, the round on screen
    event: Any  # the event (state.event.Event): the divisions, the results and their store
    publish: Callable[[str, Any], None]  # an update to every page (shell.hub.Hub.publish)
    import_tsh: Callable[[dict[str, bytes]], list[str]]  # TSH files into the event, seated; the problems found
    divisions_view: Callable[[], dict]  # the divisions and their problems, as the page draws them
    apply_pairings: Callable[[], Any]  # the round's games seated again on the hall's tables
    results_changed: Callable[[], None]  # a result or TSH's data changed: tourney.js and the public view again
    tourney_js: Callable[[], Awaitable[tuple[str, list[str]]]]  # TSH's tourney.js with the results, and its problems
    seated: Callable[[Any], Any]  # a table with its players on the sides they checked in at (tableside.paperless)


@requires(DIRECTOR, status_code=401)
async def tsh_import(s: Services, request: Request) -> Response:
    """`{"files": [{"name", "data" (base64)}, ...]}`: config.tsh with its .t files, .t files, tourney.js."""
    try:
        body = await json_object(request)
        items = body.get("files") if "files" in body else [body]
        if not isinstance(items, list) or not items:
            raise ValueError("files must be a non-empty list of {name, data}")
        problems = s.import_tsh(dict(decode_upload(i) for i in items))
    except (ValueError, tsh.TshError) as e:
        return _bad(str(e))
    except StoreError as e:
        log.error("console: %s", e)
        return _bad(f"{e} The files are read for now but not kept: import them again once the disk has room, "
                    "or a restart starts without them.", STORE_REFUSED)
    return JSONResponse({**s.divisions_view(), "problems": problems[:limits.MAX_PROBLEMS_SHOWN]})


@requires(DIRECTOR, status_code=401)
async def division_remove(s: Services, request: Request) -> Response:
    """`{"division": NAME, "reason": TEXT}`: the division out of the event, audited (event.remove_division)."""
    rd = s.state.round
    try:
        body = await json_object(request)
        name = body.get("division")
        if not isinstance(name, str) or not name.strip():
            raise ValueError("division: allowed is the name of an imported division")
        reason = body.get("reason", "")
        if not isinstance(reason, str):
            raise ValueError("reason: allowed is text")
        s.event.remove_division(name.strip(), request.user.display_name, now_iso(), rd.number, reason)
    except ValueError as e:
        return _bad(str(e))
    except StoreError as e:
        log.error("console: %s", e)
        return _bad(f"{e} The division is still there.", STORE_REFUSED)
    if rd.division == name.strip():  # the division on screen is gone: show them all
        rd.division = ""
        try:
            s.event.save_round(rd.as_dict())
        except StoreError as e:  # shown as all divisions now; a restart shows the one it kept
            log.error("console: %s", e)
        s.publish("round", rd.as_dict())
    s.apply_pairings()  # its tables lose its games; the divisions' view goes to every page
    s.results_changed()
    return JSONResponse(s.divisions_view())


@requires(DIRECTOR, status_code=401)
async def result(s: Services, request: Request) -> Response:
    """A table's result: with `slip` (and `margin`, `decision`, `correction`; for a game with no
    clock result `no_clock`: {reason, penalties, ending, forfeit}; for a table with no TSH game
    `names`) it is worked out; with `confirm: true` it is recorded in the store (results.py and
    event.py say how)."""
    n = request.path_params["n"]
    try:
        body = await json_object(request)
        requests.result_body(body)
        t = s.state.tables.get(n)
        if t is None:
            if not 1 <= n <= limits.MAX_TABLE:
                return _bad("no such table", 404)
            # a table with no clock and no TSH game, never heard of: only its recorded slip makes it known
            t = s.state.new_table(n)
        seated = s.seated(t)  # the players' sides as they checked in (issue 27)
        out = s.event.result(seated, body, request.user.display_name, now_iso(), s.state.round.number)
        t.final = seated.final
    except (ValueError, results.ResultError) as e:
        return _bad(str(e), 409 if isinstance(e, results.NeedsDirector) else 400)
    except StoreError as e:  # nothing was kept: the page says so, and what to do (507: no room)
        log.error("console: table %d: %s", n, e)
        return _bad(str(e), STORE_REFUSED)
    if out.get("confirmed"):
        s.results_changed()
        s.state.adopt(t)
        s.publish("table", s.state.tables[n].tile())
        log.info("console: %s recorded table %d (division %s round %s): %s (%s)", request.user.display_name, n,
                 out["division"], out["round"], out["scores"], out["recorded"])
    return JSONResponse(out)


def _export_target(s: Services, request: Request) -> tuple[str, int]:
    """?division=&round= (default: the division on screen, the current round); ?by=table (or no
    TSH division at all): the results recorded by table (results.BY_TABLE). A division named in the
    query must be one the event has: it becomes the download's file name (a header)."""
    rd = s.state.round
    rnd = requests.whole(request.query_params.get("round", rd.number), "round", 1, tsh.MAX_ROUNDS)
    names = list(s.event.divisions)
    if request.query_params.get("by") == "table" or not names:
        return results.BY_TABLE, rnd
    asked = request.query_params.get("division")
    if asked and asked not in names:
        raise ValueError(f"no division {asked[:40]!r} to export: one of {', '.join(names)}")
    division = asked or rd.division
    if not division:
        if len(names) != 1:
            raise ValueError(f"name the division to export (?division=): one of {', '.join(names)}, or ?by=table")
        division = names[0]
    return division[:40], rnd


def _export_name(division: str, rnd: int, ext: str) -> str:
    return f"{division or 'tables'}-round{rnd}.{ext}"


@requires(DIRECTOR, status_code=401)
async def export_csv(s: Services, request: Request) -> Response:
    try:
        division, rnd = _export_target(s, request)
    except ValueError as e:
        return _bad(str(e))
    rows = s.event.export_rows(division, rnd)
    return Response(results.to_csv(rows), media_type="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{_export_name(division, rnd, "csv")}"'})


@requires(DIRECTOR, status_code=401)
async def results_view(s: Services, request: Request) -> Response:
    """The page's Results table: the round's results as the CSV has them (results.round_view), its
    columns and rows as JSON. ?round= (default: the current round), ?division= one division (else
    every division); the results recorded by table (no TSH game) are shown with any division, as their tiles are."""
    divisions = s.event.divisions
    try:
        rnd = requests.whole(request.query_params.get("round", s.state.round.number), "round", 1, tsh.MAX_ROUNDS)
        division = request.query_params.get("division") or None
        if division is not None and division not in divisions:
            raise ValueError(f"no division {division[:40]!r}: one of {', '.join(divisions) or 'none'}, or none for all")
    except ValueError as e:
        return _bad(str(e))
    rows = s.event.export_rows(division, rnd)
    if division is not None:
        rows += s.event.export_rows(results.BY_TABLE, rnd)
    view = results.round_view(rows)
    return JSONResponse({"round": rnd, "division": division or "", **view.as_dict()})


@requires(DIRECTOR, status_code=401)
async def export_tsh(s: Services, request: Request) -> Response:
    try:
        division, rnd = _export_target(s, request)
    except ValueError as e:
        return _bad(str(e))
    if division == results.BY_TABLE:
        return _bad(TSH_NEEDS)
    try:
        ex = s.event.tsh_export(division, rnd)
    except results.ResultError as e:
        return _bad(str(e))
    headers = {"Content-Disposition": f'attachment; filename="{_export_name(division, rnd, "tsh")}"'}
    if ex.missing:
        headers["X-Rackside-Missing-Tables"] = ",".join(map(str, ex.missing))
    if ex.unscored:  # TSH will still want these players' scores: games not recorded here yet
        headers["X-Rackside-Unscored-Players"] = ",".join(map(str, ex.unscored))
    if ex.problems:  # what TSH will refuse or the export could not write, each naming its table
        headers["X-Rackside-Export-Problems"] = " | ".join(ex.problems)[:2000]
    return PlainTextResponse(ex.text, headers=headers)


@requires(DIRECTOR, status_code=401)
async def export_tourney_js(s: Services, request: Request) -> Response:
    """TSH's own tourney.js, live: TSH's data with the recorded results (tshout.py), as
    letsplayscrabble's overlays and TSH's scoreboard read it; the same file is kept in
    `[console] tourney_js` (tshlive.LiveFile)."""
    text, problems = await s.tourney_js()
    headers = {"Cache-Control": "no-store", "Content-Disposition": f'inline; filename="{tshout.FILE_NAME}"'}
    if problems:  # results TSH's files pair otherwise: left out, each naming its table
        headers["X-Rackside-Export-Problems"] = " | ".join(problems)[:2000].encode("ascii", "replace").decode()
    return Response(text, media_type=tshout.MEDIA_TYPE, headers=headers)


@requires(DIRECTOR, status_code=401)
async def audit(s: Services, request: Request) -> Response:
    """Who confirmed or changed which result, answered which call, held or set aside which slip, sent
    which update: when, before and after (newest first); `?division=`, `?table=N`, `?kind=K`
    (resultstore.AUDIT_KINDS) pick rows. A device's rows never push a director's out (resultstore)."""
    q = request.query_params
    try:
        table = requests.whole(q["table"], "table", 1, limits.MAX_TABLE) if q.get("table") else None
        kind = q.get("kind") or None
        if kind is not None and kind not in AUDIT_KINDS:
            raise ValueError(f"kind {kind[:40]!r}: allowed are {', '.join(AUDIT_KINDS)}")
    except ValueError as e:
        return _bad(str(e))
    rows = s.event.store.audit(q.get("division") or None, table=table, kind=kind)
    return JSONResponse({"audit": rows, "kinds": list(AUDIT_KINDS)})


async def audit_page(request: Request) -> Response:
    if not request.user.is_authenticated:
        return RedirectResponse("/login", status_code=303)
    return FileResponse(STATIC / "audit.html", headers={"Cache-Control": "no-store"})


def routes(s: Services) -> list[Route]:
    """The results desk's endpoints, each given `s` (the shell composes them: shell/app.routes)."""
    return [
        Route("/api/tsh", partial(tsh_import, s), methods=["POST"]),
        Route("/api/division/remove", partial(division_remove, s), methods=["POST"]),
        Route("/api/result/{n:int}", partial(result, s), methods=["POST"]),
        Route("/api/results", partial(results_view, s)),
        Route("/api/export/round.csv", partial(export_csv, s)),
        Route("/api/export/tsh.txt", partial(export_tsh, s)),
        Route("/api/export/tourney.js", partial(export_tourney_js, s)),
        Route("/api/audit", partial(audit, s)),
        Route("/audit", audit_page),
    ]
