"""The requests the runner answers: a command from off the table, checked, applied, answered.

A `game.messages.Request` reaches the runner's queue from the hall (`Runner.submit`, on the
hall's worker thread) or from a simulator; the runner hands each to its `Requests`, on its own
thread, in time order with the buttons'. `Requests.answer` checks the request's name and arguments
(`REQUESTS`: the arguments each takes; a director's command's are its entry's in
hall.wire.commands.SPECS, which also builds the game input it becomes), carries it out on the runner's
clock as the director's menu would (the input handed to the runner's public `apply`, `new_game`,
`command`: journalled like a button's input) and says whether it was done; `handle` replies to the requester. Two requests only change what the
displays show, and their state is owned here: a director's `identify` (8888 flashes so the table is
found) and the enrolment's `notice` (texts shown before a game's first press); the runner asks
`texts` and `next_change_ns`. The table's requests (issue 27: `pairing`, `seat`, `call_ack`,
`call_resolve`) become the table's inputs (game.table), journalled through the runner's
`apply(..., table=True)`; a pairing that arrives once the game is under way is for the next game, and is
journalled as that game's first input.

A hall's `new_game` carries the event's rules (the console's [event], issue 38). Refused while a
game runs (that game is never changed), its rules are still the next game's: the runner's `rules`,
which the director's menu (`LEn`, `rSEt`) starts its next game with. A new game whose rules are not
the clock's own (clock.toml's, the fallback of a clock with no hall) shows the mismatch before its
first press: `HALL` `rULE` for RULES_NOTICE_S, the table's sign that the hall's rules, not its card's, apply.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from rackside.game import render
from rackside.game.clock import Forfeit, Neutralise, Phase, Rules, View
from rackside.game import checkin
from rackside.game.checkin import Pairing
from rackside.game.messages import NOTES, Request
from rackside.hall.wire import commands
from rackside.hall.wire.schema import Invalid, Schema, Text, Whole

log = logging.getLogger(__name__)

# The requests the runner answers (`Runner.submit(Request(...))`), with the arguments each takes:
# its own (a test's, the simulator's keyboard, the hall's enrolment), then every director's command
# the runner answers, as hall.wire.commands.SPECS has it (one entry per command: its arguments, the
# game input they become, who answers it).
OWN = {
    "menu": (),
    "end": (),
    "stop": (),
    "neutralise": (),
    "forfeit": ("player",),
    # the hall's enrolment: (left, right) texts shown before a game's first press (its code while it
    # waits for a table number, its number once given), for `seconds` (0: until replaced)
    "notice": ("left", "right", "seconds"),
}
OWN_INPUTS = {"neutralise": lambda t, a: Neutralise(t), "forfeit": lambda t, a: Forfeit(t, a["player"])}
RUNNER_COMMANDS = {n: commands.SPECS[n] for n in commands.answered_by(*commands.RUNNER_ANSWERS)}
REQUESTS = {**OWN, **{n: s.takes for n, s in RUNNER_COMMANDS.items()}}
OPTIONAL_ARGS = {n: s.optional for n, s in RUNNER_COMMANDS.items() if s.optional}
MAX_NOTICE_CHARS = 8
RULES_NOTICE = ("HALL", "rULE")  # a new game under the hall's rules, not clock.toml's (issue 38)
RULES_NOTICE_S = 5

# The values of the arguments the runner checks itself (the core checks its inputs'), one schema per
# request (hall.wire.schema); a command's are its entry's (`runner_check`: identify's seconds are the
# hall command's own field), so the hall's parser and the runner cannot disagree.
ARGS = {
    "notice": Schema({"left": Text(MAX_NOTICE_CHARS, least=0), "right": Text(MAX_NOTICE_CHARS, least=0),
                      "seconds": Whole(0, 600)}),
    **{n: s.runner_check for n, s in RUNNER_COMMANDS.items() if s.runner_check is not None},
}


class Requests:
    """The runner's requests from off the table; made by the `Runner` it answers for, on its thread."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner  # the `firmware.runner.Runner` that owns it (not imported: it imports this)
        self.notice: tuple[str, str, int | None] | None = None  # (left, right, until): shown in phase setup
        self.identify_until_ns: int | None = None  # a director's "identify": the displays flash
        self.next_pairing: Request | None = None  # a pairing that came once the game was under way: the next game's

    def texts(self, v: View, now: int) -> tuple[str, str] | None:
        """What the displays show for a request at `now` (the menu, when open, comes first), else None."""
        if self.identify_until_ns is not None and now < self.identify_until_ns:
            return ("8888", "8888") if (now // render.BLINK_NS) % 2 == 0 else ("", "")
        if self.notice is not None and v.phase is Phase.SETUP and (self.notice[2] is None or now < self.notice[2]):
            return self.notice[0], self.notice[1]
        return None

    def next_change_ns(self, now: int) -> int | None:
        """When what `texts` shows next changes: the identify's next blink or end, the notice's end."""
        times = []
        if self.identify_until_ns is not None and now < self.identify_until_ns:
            times.append(min(self.identify_until_ns, (now // render.BLINK_NS + 1) * render.BLINK_NS))
        if self.notice is not None and self.notice[2] is not None and now < self.notice[2]:
            times.append(self.notice[2])
        return min(times) if times else None

    def handle(self, r: Request, t: int) -> None:
        """A command from off the table: checked, applied like the director's menu would, answered."""
        ok, why = self.answer(r, t)
        if not ok:
            log.warning("%s request %r refused: %s", r.source, r.name, why)
        if r.reply is not None:
            try:
                r.reply(ok, why)
            except Exception as exc:  # noqa: BLE001 - a requester's bug never stops the clock
                log.error("reply to %s request %r failed: %r", r.source, r.name, exc)

    def answer(self, r: Request, t: int) -> tuple[bool, str]:
        """Check `r` and carry it out on the runner's clock: (True, "") or (False, why not)."""
        runner = self.runner
        if r.name not in REQUESTS:
            return False, f"unknown command (allowed: {', '.join(REQUESTS)})"
        wanted = REQUESTS[r.name]
        extra = sorted(set(r.args) - set(wanted) - set(OPTIONAL_ARGS.get(r.name, ())) - set(NOTES))
        missing = [k for k in wanted if k not in r.args]
        if extra or missing:
            return False, f"{r.name} takes {', '.join(wanted) or 'no arguments'}" + (f" (missing {missing[0]})" if missing else f" (not {extra[0]})")
        a = r.args
        if r.name in ARGS:
            try:
                ARGS[r.name].check(a)
            except Invalid as e:
                return False, f"{r.name}: {e}"
        spec = RUNNER_COMMANDS.get(r.name)
        answerer = spec.answerer if spec is not None else None
        if r.name == "notice":  # display only: shown whenever the menu is closed again
            seconds = a["seconds"]
            self.notice = (a["left"], a["right"], t + seconds * 1_000_000_000 if seconds else None)
            return True, ""
        if answerer == "slip":  # the menu may be open: the answer is journalled and shown after it
            return runner.slip_session.outcome(a["game"], a["outcome"], a["why"], t, recorded=a.get("recorded"), source=r.source, **_notes(a, spec))
        if answerer == "table":  # the table's (issue 27): applied while the menu is open too
            return self._table(r, t)
        if runner.menu is not None and r.name != "stop":
            return False, "the director's menu is open on the clock"
        if r.name in ("menu", "end", "stop"):
            before = (runner.menu, runner.clock)
            runner.command(r.name, t)
            done = r.name == "stop" or (runner.menu, runner.clock) != before
            return (True, "") if done else (False, f"{r.name} does nothing in phase {runner.phase(t).value}")
        if answerer == "display":  # identify: the displays flash so the table is found
            self.identify_until_ns = t + a["seconds"] * 1_000_000_000
            return True, ""
        if answerer == "game":
            return self._new_game(a, t)
        if "players" in a and isinstance(a["players"], (list, tuple)):  # a late start: else LateStart refuses it
            # 2.3.3(a) is for players not yet here: one who checked in (2.3.1(b)) since the hall
            # planned it is seated, and their time is not a latecomer's
            seating = runner.table.seating
            here = [p for p in a["players"] if p in checkin.SIDES and checkin.checked_in(seating, p)]
            if here:
                a = {**a, "players": [p for p in a["players"] if p not in here]}
                if not a["players"]:
                    return False, f"{r.name}: side {' and '.join(map(str, here))} checked in: nobody to start late"
        try:
            event = (spec.game_input if spec is not None else OWN_INPUTS[r.name])(t, a)
        except (TypeError, ValueError) as exc:
            return False, str(exc)
        before = runner.clock
        ok, why = runner.apply(event, source=r.source, **_notes(a, spec))
        if not ok:
            return False, why
        return (True, "") if runner.clock != before else (False, f"{r.name} changes nothing in phase {runner.phase(t).value}")

    def _new_game(self, a: dict, t: int) -> tuple[bool, str]:
        """A hall's new game, with the event's rules (issue 38)."""
        runner = self.runner
        # Checked here, on the clock as it is now: the hall's own check reads the last frame's
        # phase, which a start pressed a moment before the command has not reached yet.
        phase = runner.phase(t)
        if phase in (Phase.RUNNING, Phase.LATE):
            if a.get("rules") is not None and a["rules"] != runner.rules:  # the next game's, never this one's
                runner.rules = a["rules"]
                return False, (f"the game is {phase.value}: neutralise or end it first "
                               "(it keeps its rules; the clock's next game runs these)")
            return False, f"the game is {phase.value}: neutralise or end it first"
        if a.get("rules") is not None:
            runner.rules = a["rules"]
        runner.new_game(a["game_time_ms"], t, _notes(a))
        if not same_game_rules(runner.rules, runner.own_rules):
            self.notice = (*RULES_NOTICE, t + RULES_NOTICE_S * 1_000_000_000)
        return True, ""

    def _table(self, r: Request, t: int) -> tuple[bool, str]:
        """A table request (issue 27) as the table's input, journalled and applied by the runner."""
        runner, a, spec = self.runner, r.args, RUNNER_COMMANDS[r.name]
        event = spec.game_input(t, a)  # a pairing's table: this clock's number, checked by the core (game.checkin)
        if isinstance(event, Pairing) and runner.phase(t) not in (Phase.SETUP, Phase.LATE):
            self.next_pairing = r  # 2.1: for the game that follows this one; journalled when it starts
            return True, ""
        return runner.apply(event, table=True, source=r.source, **_notes(a, spec))

    def new_game(self, t: int) -> None:
        """A new game began: the pairing kept for it is its first input."""
        r, self.next_pairing = self.next_pairing, None
        if r is not None:
            self._table(r._replace(t_ns=t), t)


def same_game_rules(a: Rules, b: Rules) -> bool:
    """The same rules but for the game time (a round's, or the menu's) and the buttons' guard (the device's)."""
    return replace(a, game_time_ms=1, switch_guard_ms=0) == replace(b, game_time_ms=1, switch_guard_ms=0)


def _notes(a: dict, spec: commands.Spec | None = None) -> dict[str, str]:
    """Who sent a request and why, journalled beside its input (not a command's own field of that
    name: call_resolve's reason is the call's)."""
    own = spec.fields if spec is not None else ()
    return {k: str(a[k]) for k in NOTES if a.get(k) is not None and k not in own}
