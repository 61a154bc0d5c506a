"""The paperless table at the console (issue 27): check-in, the director's calls, the signed slips.

The edge around three pure parts (checkin.py, incidents.py, signedslips.py): `Paperless` sits on the
`Console` (app.py), reads the page updates the hall state makes of each clock message (an input
"checkin", "call", "call_ack", "call_resolve"; an event "slip"; a table coming online or starting a
new game), sends the clocks their commands (`pairing`, `seat`, `call_ack`, `call_resolve`,
`slip_outcome`, and the round's `late_start`s: docs/hall.md), keeps what must survive a restart in
the results store (the open calls and the held slips, as settings; every director's step in its
audit), and tells the pages (`checkin` per table, `paperless` for the lists). What it uses of the
console is named in `Services` (the console's shell gives them: app.Console), never the console
itself; its endpoints are `routes(paperless)`, which the shell composes. Everything runs on the
console's event loop.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import partial
from typing import Any, Callable

from starlette.authentication import requires
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from rackside.hall.wire import commands

from ..state import checkin, requests
from . import incidents, signedslips
from ..scoring import results
from ..common.guard import DIRECTOR, json_object, now_iso
from ..common.guard import refused as _bad
from ..scoring.resultstore import CALL, SLIP, StoreError

log = logging.getLogger("rackside.hall.console")
SLIP_WHY = commands.FIELDS["slip_outcome"]["why"].most  # the longest why a slip_outcome carries
CONSOLE = "console"  # `by` of the commands the console sends by itself (pairing, seat, slip_outcome)
CALLS_KEY = "calls"  # the results store's settings: the calls, and the held slips
HELD_KEY = "held_slips"
COMMAND_ID = "pl-"  # the ids of the console's own paperless commands


@dataclass(frozen=True)
class Services:
    """What the paperless table uses of the console, each named (app.Console gives them)."""

    state: Any  # the hall state (hallstate.HallState): the tables, the round, the commands pending
    event: Any  # the event (event.Event): a result worked out and recorded, the results store's settings and audit
    publish: Callable[[str, Any], None]  # an update to every page (hub.Hub.publish)
    send: Callable[[int, dict], None]  # a command to a table's clock over the broker (ConnectionError: not sent)
    connected: Callable[[], bool]  # whether there is a way to the broker to send on
    results_changed: Callable[[], None]  # a result was recorded: the live tourney.js and the public view are built again


class Paperless:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.slips = signedslips.RECORD  # [console] slips (config.py): record a slip that agrees, or hold it
        self.checkins = checkin.CheckIns()
        self.incidents = incidents.Incidents()
        self.held = signedslips.Held()
        self.online: set[int] = set()
        self.paired: dict[int, tuple] = {}  # table -> (clock game, pairing fields) last sent
        store = services.event.store
        for p in self.incidents.restore(store.setting(CALLS_KEY, [])):
            log.warning("console: %s", p)
        self.held.restore(store.setting(HELD_KEY, []))

    # --- what the pages get -----------------------------------------------------------------------

    def snapshot(self) -> dict:
        tables = self.services.state.tables
        return {"checkins": [self.checkins.view(n, tables[n].seat if n in tables else None) for n in sorted(self.checkins.tables)],
                **self.lists()}

    def lists(self) -> dict:
        return {"wrong_tables": self.checkins.wrong_tables(), "calls": self.incidents.queue(), "held_slips": self.held.view(),
                "slips_setting": self.slips}

    def _publish_lists(self) -> None:
        self.services.publish("paperless", self.lists())

    def _publish_checkin(self, n: int) -> None:
        t = self.services.state.tables.get(n)
        self.services.publish("checkin", self.checkins.view(n, t.seat if t else None))

    # --- the clocks' messages, as the hall state's updates -------------------------------------------

    def on_update(self, kind: str, data) -> None:
        try:
            if kind == "table":
                self._table_changed(data["table"])
            elif kind == "event" and data["event"].get("kind") == "input":
                self._input(data["table"], data["event"])
            elif kind == "event" and data["event"].get("kind") == "result":
                self._result_came(data["table"], data["event"]["game"])
            elif kind == "slip":
                self.on_slip(data["table"], data["slip"])
            elif kind == "twice":  # hallstate.Table.used_twice: audited once a game; its slips are held
                self._audit(data["table"], "identity used twice", CONSOLE, data["why"], {"game": data["game"]})
        except StoreError as e:  # the store said what was not kept; the clock's message is in the history
            log.error("console: table %s: %s", data.get("table"), e)

    def _table_changed(self, n: int) -> None:
        t = self.services.state.tables.get(n)
        if t is None:
            return
        game = (t.state or {}).get("game")
        if self.checkins.forget_other_games(n, game):
            self._publish_checkin(n)
        if t.status != "online":
            self.online.discard(n)
            return
        came = n not in self.online
        self.online.add(n)
        self._send_pairing(t, again=came)

    def pairings_known(self) -> None:
        """The round's pairings changed (app.Console.apply_pairings): every seated online table's."""
        for n, t in sorted(self.services.state.tables.items()):
            if t.status == "online":
                self._send_pairing(t)

    def _send_pairing(self, t, again: bool = False) -> None:
        """The round's pairing, to a clock in setup (its game not begun) that does not have it yet,
        or came online again (a clock's own memory of it is not the console's to assume)."""
        st = t.state or {}
        if not t.seat or t.seat.get("round") != self.services.state.round.number or st.get("phase") not in (None, "setup"):
            return
        # `names` (issue 40) only to a clock that says it takes them: a clock of before refuses the field
        fields = commands.for_clock(checkin.pairing(t.seat), t.takes)
        names = tuple(fields["names"]) if "names" in fields else None
        # names in the key: a clock whose status comes to announce them gets the pairing again, with them
        game, pairing = st.get("game"), (fields["round"], tuple(fields["numbers"]), fields["starter"], names)
        last = self.paired.get(t.n)
        # a new game on the clock (the next round's new_game) gets it again; a state that merely names
        # the game the pairing went to before any state came does not
        if not again and last is not None and last[1] == pairing and (last[0] in (None, game)):
            self.paired[t.n] = (game or last[0], pairing)
            return
        if self.send(t.n, fields, CONSOLE):
            self.paired[t.n] = (game, pairing)

    def _input(self, n: int, event: dict) -> None:
        name = event.get("input")
        state = self.services.state
        if name == "checkin":
            t = state.tables.get(n)
            seats = {m: x.seat for m, x in state.tables.items() if x.seat}
            answer = self.checkins.check_in(n, event, t.seat if t else None, seats)
            if answer is not None:
                self.send(n, answer, CONSOLE)
            self._publish_checkin(n)
            self._publish_lists()  # a wrong-table check-in, or one this check-in resolved
        elif name == "call":
            if event.get("call") is None:
                return
            c = self.incidents.called(n, event)
            if c is not None:
                t = state.tables.get(n)
                if t is not None and (t.state or {}).get("game") == c.game:
                    # audited once, of the game the clock is on: a stray game's calls (a replay, a
                    # device's invention) are queued, one a table, and never fill the audit
                    self._audit(n, "call", CONSOLE, c.who, c.as_dict(), kind=CALL, game=c.game, device=True)
                self._keep_calls()
                self._publish_lists()
        elif name in ("call_ack", "call_resolve"):
            if self.incidents.answered_on_clock(n, event) is not None:
                self._keep_calls()
                self._publish_lists()

    # --- the signed slip (signedslips.py) ------------------------------------------------------------

    def on_slip(self, n: int, slip: dict) -> None:
        t = self.services.state.tables.get(n)
        if t is None:
            return
        if slip["game"] != (t.state or {}).get("game") and slip["game"] not in t.bound:
            # not the game the clock is on, nor one the console bound: no hold, audit or answer (a
            # device cannot push out a held slip, or fill the disk, with games it makes up)
            log.debug("console: table %d: a slip of game %s, which the table is not on, ignored", n, slip["game"])
            return
        why = signedslips.disagreement(slip, t.seat, t.current_result())
        if t.twice is not None and t.twice["game"] == slip["game"]:
            # issue 36: the table's identity was used by two connections in this game; which one signed
            # this slip is the director's to ask (docs/security.md "The paperless table")
            self._hold(n, slip, signedslips.twice_why(t.twice["why"], why), agrees=why is None, suspect=True)
            return
        if why is None and t.final is not None:  # recorded already: the slip is the same result, or refused (5.4.1)
            outcome, why = self.record(n, slip, f"signed at table {n}")
            # a refusal says what was recorded, by the clock's sides: the clock shows it, its players may dispute it
            self._answer(n, slip, outcome, why, self._recorded_as_signed(t, slip) if outcome == "refused" else None)
            return
        if why is None:
            why = self._rules_say(t, slip)
        if why is not None:
            self._hold(n, slip, why, agrees=False)
            return
        if self.slips == signedslips.HOLD:
            self._hold(n, slip, "the director's setting: a signed slip waits for the scorekeeper's click", agrees=True)
            return
        outcome, why = self.record(n, slip, f"signed at table {n}")
        held = self.held.of_game(n, slip["game"], self.binding(n, slip["game"]))
        if outcome == "recorded" and held is not None and not held.get("suspect") \
                and self.held.take(n, slip["game"]) is not None:  # the game's slip agrees now (a device that sent another)
            self._keep_held()
            self._publish_lists()
        self._answer(n, slip, outcome, why)

    def _result_came(self, n: int, game: str) -> None:
        """A clock's result after its slip (a resend brings the result after the game's events): a slip
        held for want of it is judged again, and the clock answered again."""
        held = self.held.of_game(n, game, self.binding(n, game))  # never an earlier game's that bore the id
        if held is not None and not held["agrees"] and not held.get("suspect"):
            self.held.take(n, game)
            self._keep_held()
            self.on_slip(n, held["slip"])
            self._publish_lists()

    def _rules_say(self, t, slip: dict) -> str | None:
        """What the results' rules (5.3.3, 2.3.5) leave to the director, or refuse, for this slip."""
        try:
            out = self.services.event.result(self.signed_as(t, slip), {"slip": list(slip["scores"])}, CONSOLE, now_iso(),
                                            self.services.state.round.number, entry=results.SIGNED)
        except results.ResultError as e:
            return str(e)
        return out["note"] if out["needs_director"] else None

    def signed_as(self, t, slip: dict):
        """Table `t` with its seat's players in the order they signed (the slip's sides)."""
        numbers = signedslips.signed_numbers(slip, t.seat, t.current_result())
        return replace(t, seat=signedslips.seat_as_signed(t.seat, numbers))

    def record(self, n: int, slip: dict, by: str) -> tuple[str, str | None]:
        """Record a slip that agrees: ("recorded", note) or ("refused", why): a result recorded
        already is changed by the director alone (5.4.1)."""
        t = self.services.state.tables[n]
        seated = self.signed_as(t, slip)
        try:
            out = self.services.event.result(seated, {"slip": list(slip["scores"]), "confirm": True}, by, now_iso(),
                                            self.services.state.round.number, entry=results.SIGNED)
        except results.ResultError as e:
            return "refused", str(e)
        t.final = seated.final
        self.services.results_changed()
        self.services.publish("table", t.tile())
        log.info("console: table %d's signed slip recorded (%s): %s", n, out["recorded"], out["scores"])
        return "recorded", out["note"] or None

    def _hold(self, n: int, slip: dict, why: str, agrees: bool, suspect: bool = False) -> None:
        bound = self.binding(n, slip["game"])
        known = self.held.of_game(n, slip["game"], bound)
        if known is not None and (known["slip"], known["why"], known["agrees"]) == (slip, why, agrees):
            self._answer(n, slip, "held", why)  # the same slip again (QoS 1, a resend): answered, audited once
            return
        self.held.hold(n, slip, why, agrees, suspect, bound)
        self._keep_held()
        t = self.services.state.tables.get(n)
        self._audit(n, "slip held", CONSOLE, why, slip, t, kind=SLIP, game=slip["game"], device=True)
        self._answer(n, slip, "held", why)
        self._publish_lists()

    def _recorded_as_signed(self, t, slip: dict) -> list | None:
        """The recorded result of the table's game, after penalties, by the slip's sides (None: unknown)."""
        final, names = t.final or {}, list(self.signed_as(t, slip).seat["names"]) if t.seat else None
        scores = final.get("scores")
        if not names or not isinstance(scores, list) or len(scores) != 2:
            return None
        if list(final.get("names") or []) == names:
            return list(scores)
        return list(reversed(scores)) if list(final.get("names") or []) == list(reversed(names)) else None

    def _answer(self, n: int, slip: dict, outcome: str, why: str | None, recorded: list | None = None) -> None:
        fields = {"cmd": "slip_outcome", "game": slip["game"], "outcome": outcome}
        if why:
            fields["why"] = why[:SLIP_WHY]  # the clock keeps what the command's schema allows
        if recorded is not None:
            fields["recorded"] = recorded
        self.send(n, fields, CONSOLE)

    def sides_of(self, t) -> dict:
        """Side -> TSH number at table `t`'s game: its check-ins in the clock's current game, else the
        sides its recorded result was recorded with (a console restarted keeps no check-in)."""
        here = self.checkins.tables.get(t.n)
        if here is not None and here.numbers and here.game == (t.state or {}).get("game"):
            return dict(here.numbers)
        return checkin.recorded_sides(t.final)

    def in_checkin_order(self, t):
        """Table `t` with its seat's players in the sides they sit at (checkin.on_sides: the clock's
        sides are the players' own, whichever way round the clock was put): what the result form,
        the record and the public view (publicserve.gather) pair each name with."""
        if not t.seat:
            return t
        seat = checkin.on_sides(t.seat, self.sides_of(t))
        return t if seat is t.seat else replace(t, seat=seat)

    # --- sending, keeping, auditing ------------------------------------------------------------------

    def send(self, n: int, fields: dict, by: str) -> bool:
        """A command to table `n`'s clock, checked by the clock's own parser first, journalled in the
        console's command log and the table's history, like a director's (app.command)."""
        services = self.services
        if not services.connected():
            return False
        c = {**fields, "by": by, "id": COMMAND_ID + uuid.uuid4().hex[:12], "sent_at": now_iso()}
        try:
            requests.checked_command(c)
        except ValueError as e:
            log.error("console: table %d: %s not sent: %s", n, fields.get("cmd"), e)
            return False
        services.state.command_sent(n, c)
        try:
            services.send(n, c)
        except ConnectionError as e:
            services.state.pending.pop(c["id"], None)
            log.warning("console: table %d: %s not sent: %s", n, fields.get("cmd"), e)
            return False
        services.publish("command", {"table": n, "command": c})
        return True

    def _keep_calls(self) -> None:
        self.services.event.store.put_setting(CALLS_KEY, self.incidents.rows())

    def binding(self, n: int, game: str) -> str | None:
        """Which game bears id `game` at table `n` now: its binding's `since`, the identity hallstate
        gives a game with its id (a reused id is bound afresh, HallState._renewed; a takeover that moves
        the round keeps it), or None if the console has no binding of it."""
        t = self.services.state.tables.get(n)
        b = t.bound.get(game) if t is not None else None
        return None if b is None else b.since

    def _keep_held(self) -> None:
        self.services.event.store.put_setting(HELD_KEY, self.held.rows())

    def _audit(self, n: int, action: str, who: str, reason: str, after: dict | None, t=None, kind: str = CALL,
               game: str | None = None, device: bool = False) -> None:
        """`device`: a row a device's message made (bounded per table, game and kind: resultstore.note)."""
        t = t or self.services.state.tables.get(n)
        seat = (t.seat if t else None) or {}
        self.services.event.store.note(now_iso(), who, action, seat.get("division", results.BY_TABLE),
                                      seat.get("round", self.services.state.round.number), n, reason, after,
                                      kind=kind, game=game, device=device)


# --- the director's endpoints -----------------------------------------------------------------------


@requires(DIRECTOR, status_code=401)
async def call_answer(p: Paperless, request: Request) -> Response:
    """`{"call": "call-K", "action": "ack"}` or `{"call", "action": "resolve", "reason"}`: the
    director's answer to a table's call, sent to its clock (call_ack, call_resolve) and audited."""
    n = request.path_params["n"]
    who = request.user.display_name
    try:
        body = await json_object(request)
        action, call = body.get("action"), body.get("call")
        if action not in ("ack", "resolve"):
            raise ValueError("action must be ack or resolve")
        if not isinstance(call, str):
            raise ValueError('call must be the call\'s id ("call-K")')
        at = now_iso()
        if action == "ack":
            c = p.incidents.acknowledge(n, call, who, at)
            fields = {"cmd": "call_ack", "call": call}
        else:
            reason = body.get("reason")
            if not isinstance(reason, str):
                raise ValueError("a call is resolved with a reason (it is audited, and journalled on the clock)")
            c = p.incidents.resolve(n, call, who, at, reason[:commands.NOTES['reason']])
            fields = {"cmd": "call_resolve", "call": call, "reason": c.reason}
    except ValueError as e:  # CallError is one
        return _bad(str(e))
    p._audit(n, f"call {action}", who, c.reason, c.as_dict(), kind=CALL, game=c.game)
    p._keep_calls()
    sent = p.send(n, fields, who)
    p._publish_lists()
    log.info("console: %s: %s table %d's %s", who, action, n, call)
    return JSONResponse({"call": c.shown(), "sent": sent})


def _start_plan(p: Paperless) -> list[dict]:
    state = p.services.state
    return checkin.absent_sides(state.tables, p.checkins, state.round.number)


@requires(DIRECTOR, status_code=401)
async def start_absent_plan(p: Paperless, request: Request) -> Response:
    """The late starts the one confirmation at the scheduled start offers (2.3.2(a), 2.3.3(a))."""
    rd = p.services.state.round
    return JSONResponse({"start": rd.start, "tables": _start_plan(p)})


@requires(DIRECTOR, status_code=401)
async def start_absent(p: Paperless, request: Request) -> Response:
    """`{"tables": [n, ...]}` (the tables the director confirmed): a late start of each one's absent
    sides, dated from the round's scheduled start, as the Commands dialog sends it."""
    rd = p.services.state.round
    who = request.user.display_name
    try:
        body = await json_object(request)
        confirmed = set(requests.tables(body))
        if rd.start is None:
            raise ValueError("the round has no scheduled start: set it under Round & TSH first")
        early = rd.start - datetime.now(timezone.utc).timestamp()
        if early > 0:
            raise ValueError(f"the scheduled start is {int(early) + 1} s away: absent players' clocks start from it (2.3.2(a), 2.3.3(a))")
        plan = [x for x in _start_plan(p) if x["table"] in confirmed]
        cmds = [(x, requests.command({"cmd": "late_start", "players": x["players"]}, rd.start, rd.game_time_ms, who)) for x in plan]
    except ValueError as e:
        return _bad(str(e))
    if not p.services.connected():
        return _bad("not connected to the broker", 503)
    sent = []
    for x, cmd in cmds:
        if p.send(x["table"], {k: v for k, v in cmd.items() if k != "by"}, who):
            sent.append({"table": x["table"], "players": x["players"]})
    log.info("console: %s started the absent sides of %d tables", who, len(sent))
    return JSONResponse({"sent": sent, "skipped": sorted(confirmed - {x["table"] for x in sent})})


@requires(DIRECTOR, status_code=401)
async def held_slip(p: Paperless, request: Request) -> Response:
    """`{"game": G, "action": "record"}` (or "accept"): the scorekeeper's one click on a held slip that
    agrees; `{"game": G, "action": "dismiss", "reason"}` (or "reject"): a held slip set aside (recorded
    by hand instead, or not the players': a copied card's). Both audited."""
    n = request.path_params["n"]
    who = request.user.display_name
    try:
        body = await json_object(request)
        game, action = body.get("game"), body.get("action")
        held = p.held.get(n, game) if isinstance(game, str) else None
        if held is None:
            return _bad(f"table {n} has no held slip of game {str(game)[:24]!r}", 404)
        action = {"accept": "record", "reject": "dismiss"}.get(action, action)  # the director's words (issue 36)
        if action == "record":
            now = p.binding(n, game)
            if now is not None and held.get("bound") not in (None, now):
                raise ValueError(f"this slip is of an earlier game at table {n} that bore the id {game} (bound since {held['bound']}); "
                                 "the table's game of that id now is another. Record that game's result from the form, "
                                 "then set the slip aside")
            t = p.services.state.tables.get(n)
            why = signedslips.disagreement(held["slip"], t.seat if t else None, t.current_result() if t else None)
            why = why or (p._rules_say(t, held["slip"]) if t else "no such table")
            if why:
                raise ValueError(f"this slip cannot be recorded as signed: {why}. Record the result from the form "
                                 "(a correction or the director's decision, with a reason), then set the slip aside")
            outcome, note = p.record(n, held["slip"], who)
            if outcome != "recorded":
                raise ValueError(note)
            p._answer(n, held["slip"], outcome, note)  # the clock shows what was recorded for its game
        elif action == "dismiss":
            reason = " ".join(str(body.get("reason") or "").split())
            if not reason:
                raise ValueError("setting a signed slip aside needs a reason (it is audited)")
            p._audit(n, "slip set aside", who, reason, held["slip"], kind=SLIP, game=game)
        else:
            raise ValueError("action must be record or dismiss")
    except (ValueError, results.ResultError) as e:
        return _bad(str(e))
    except StoreError as e:
        return _bad(str(e), 507)
    p.held.take(n, game)
    p._keep_held()
    p._publish_lists()
    return JSONResponse({"ok": True, "action": action})


def routes(p: Paperless) -> list[Route]:
    """The paperless table's endpoints, each given `p` (the console's shell composes them: app.routes)."""
    return [
        Route("/api/call/{n:int}", partial(call_answer, p), methods=["POST"]),
        Route("/api/start-absent", partial(start_absent_plan, p), methods=["GET"]),
        Route("/api/start-absent", partial(start_absent, p), methods=["POST"]),
        Route("/api/slip/{n:int}", partial(held_slip, p), methods=["POST"]),
    ]
