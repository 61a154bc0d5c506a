"""The event's rules on the director's page (issue 38): `/rules` (static/rules.html, rules.js).

`GET /api/event-rules` gives the rules the console runs (hall.wire.eventrules.EventRules.as_dict),
what the page draws them with (eventrules.form: each key's label, clause and range, from the clock's
own rules table, and the presets), console.toml's [event] as last read, and whether the event's play
has begun (event.Event.started). `POST /api/event-rules` `{"rules": {key: value, ...}, "confirm":
true, "reason": "..."}` changes some of them: checked whole as [event] is (eventrules.edit: one line
naming `event.<key>` and what is allowed), then kept in the store with their audit row and the round's
game time, in one transaction (a refusal keeps none of it; a restart runs them while
console.toml's [event] is unchanged, event.Event.rules_at_start), retained again on the rules topic
for the stations, and from then on in each new game the console sends. Before the event's first game
begins the change needs nothing more; after, `confirm: true` and a reason (409 without). A game in
progress is never changed: a clock takes rules only with its next new game (firmware.requests).
A new game time is the round's too (the round's game time is what a new game from the console runs).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable

from starlette.authentication import requires
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from rackside.game.rules_table import ConfigError
from rackside.hall.wire import eventrules

from ..state.event import CONFIG_RULES_KEY
from ..common.guard import DIRECTOR, json_object, now_iso
from ..common.guard import refused as _bad
from ..scoring.resultstore import STORE_REFUSED, StoreError
from ..scoring.results import MAX_REASON

log = logging.getLogger("rackside.hall.console")
BODY_KEYS = ("rules", "confirm", "reason")
STARTED = ("the event's first game has begun: a change of its rules needs \"confirm\": true and a reason (both "
           "audited); games in progress keep theirs, each clock takes the new rules with its next new game")


@dataclass(frozen=True)
class Services:
    """What the rules page uses of the console, each named (app.Console gives them). `started` and
    `view` read only `state` and `event`."""

    state: Any  # the hall state (hallstate.HallState): the tables' games, the round
    event: Any  # the event (event.Event): its rules, the round kept, the store's settings and audit
    publish: Callable[[str, Any], None]  # an update to every page (hub.Hub.publish)
    publish_rules: Callable[[dict], None]  # the event's rules, retained for the stations (bridge.Bridge.publish_rules)


def started(s) -> bool:
    """Whether the event's play has begun (event.Event.started): a clock's game of a round (bound
    to one) past its first press, besides what the store says."""
    begun = any(t.playing() is not None and t.state.get("phase") != "setup" for t in s.state.tables.values())
    return s.event.started(s.state.round.number, begun)


def view(s) -> dict:
    """What the rules page draws: the rules, their form (ranges and choices), console.toml's."""
    return {"rules": s.event.rules.as_dict(), **eventrules.form(), "started": started(s),
            "config": s.event.store.setting(CONFIG_RULES_KEY), "max_reason": MAX_REASON}


def checked(body: dict, current: eventrules.EventRules, begun: bool) -> tuple[eventrules.EventRules, str]:
    """The body's new rules and reason, or ValueError (one line naming the key), or PermissionError
    (the event has begun and the change is not confirmed with a reason)."""
    unknown = sorted(set(body) - set(BODY_KEYS))
    if unknown:
        raise ValueError(f"unknown key {unknown[0][:40]!r}: allowed keys are {', '.join(BODY_KEYS)}")
    if not isinstance(body.get("rules"), dict):
        raise ValueError(f"rules must be an object of [event]'s keys: {', '.join(eventrules.KEYS)}")
    rules = eventrules.edit(current, body["rules"])  # ConfigError (a ValueError) naming event.<key>
    reason = body.get("reason", "")
    if not isinstance(reason, str) or len(reason) > MAX_REASON:
        raise ValueError(f"reason must be text of at most {MAX_REASON} characters")
    reason = " ".join(reason.split())
    confirm = body.get("confirm", False)
    if not isinstance(confirm, bool):
        raise ValueError("confirm must be true or false")
    if begun and rules != current and not (confirm and reason):
        raise PermissionError(STARTED)
    return rules, reason


async def page(request: Request) -> Response:
    """/rules: the page itself is a static file the console serves to a logged-in director (as /devices)."""
    return RedirectResponse("/static/rules.html" if request.user.is_authenticated else "/login", status_code=303)


@requires(DIRECTOR, status_code=401)
async def get_rules(s: Services, request: Request) -> Response:
    return JSONResponse(view(s))


@requires(DIRECTOR, status_code=401)
async def set_rules(s: Services, request: Request) -> Response:
    event, rd = s.event, s.state.round
    try:
        rules, reason = checked(await json_object(request), event.rules, started(s))
    except (ValueError, ConfigError) as e:
        return _bad(str(e))
    except PermissionError as e:
        return _bad(str(e), 409)
    if rules == event.rules:
        return JSONResponse({**view(s), "changed": False})
    who = request.user.display_name
    # a new game from the console runs the round's game time: a new game time is the round's too
    round_after = None
    if rules.rules.game_time_ms != event.rules.rules.game_time_ms:
        round_after = {**rd.as_dict(), "game_time_ms": rules.rules.game_time_ms}
    try:  # the round, the rules and their audit row in one transaction: all kept, or nothing
        event.change_rules(rules, who, now_iso(), rd.number, reason,
                           round_after)
    except StoreError as e:  # not kept: the rules and the round as they were
        log.error("console: %s", e)
        return _bad(f"{e} The event's rules are unchanged.", STORE_REFUSED)
    if round_after is not None:
        rd.game_time_ms = round_after["game_time_ms"]
    s.publish_rules(eventrules.payload(rules))  # the stations' challenge rule (3.10.15)
    s.publish("round", rd.as_dict())
    s.publish("rules", {"rules": event.state_rules(), "event_rules": rules.as_dict()})
    log.info("console: %s changed the event's rules: %s%s", who, rules.summary(), f" ({reason})" if reason else "")
    return JSONResponse({**view(s), "changed": True})


def routes(s: Services) -> list[Route]:
    """The rules page's endpoints, each given `s` (the console's shell composes them: app.routes)."""
    return [
        Route("/rules", page),
        Route("/api/event-rules", partial(get_rules, s)),
        Route("/api/event-rules", partial(set_rules, s), methods=["POST"]),
    ]
