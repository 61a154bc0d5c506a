"""One entry per command (issue 37 item 2): hall.wire.commands.SPECS says each director's command's
name, fields with their bounds, who answers it on the clock, how it becomes the runner's request and
that request a game input. The console's requests, the clock's intake and hall output, the runner's
answer and the demo read it, and spell no command's name themselves: adding a command is its entry
(with an example) and this file walks it end to end."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from rackside.firmware import requests as runner_requests
from rackside.game.journal import input_to_dict
from rackside.game.messages import Request
from rackside.hall.console.state import requests as console_requests
from rackside.hall.device.intake import Accepted, CommandIntake
from rackside.hall.wire import commands

ROOT = Path(__file__).resolve().parent.parent
TABLE = 14  # the clock's own table number (its hall config's)


def console_sends(name: str, example: dict) -> dict:
    """What the console sends for the command: from the page's body (the director's page), else a
    command its own code made, checked as it checks those (paperless, takeover, updates)."""
    spec = commands.SPECS[name]
    if spec.page:
        body = {"cmd": name, "tables": [3], **{k: v for k, v in example.items() if k not in console_requests.CONSOLE_FILLS}}
        sent = console_requests.command(body, None, 20 * 60_000, "director")
        return {"id": f"t-{name}", **sent}
    sent = {"id": f"t-{name}", "cmd": name, "by": "director", **example}
    console_requests.checked_command(sent)
    return sent


def clock_receives(sent: dict) -> commands.Command:
    """The clock's hall intake (hall.device.intake), as the broker delivers the command."""
    decision = CommandIntake().receive(json.dumps(sent).encode(), None, None)
    assert isinstance(decision, Accepted), decision
    return decision.command


@pytest.mark.parametrize("name", commands.NAMES)
def test_each_command_goes_from_the_console_over_the_wire_to_the_clocks_answerer(name, rig):
    spec = commands.SPECS[name]
    assert spec.answerer in commands.ANSWERERS
    cmd = clock_receives(console_sends(name, spec.example))
    assert (cmd.id, cmd.name, cmd.by) == (f"t-{name}", name, "director")

    if spec.answerer not in commands.RUNNER_ANSWERS:  # resend, update: the hall output's, never the runner's
        assert name not in runner_requests.REQUESTS
        with pytest.raises(commands.CommandError):
            cmd.request(TABLE)
        return
    args = cmd.request(TABLE)
    assert args["command"] == cmd.id  # journalled beside the input, so a redelivery is acked, not applied again
    if spec.game_input is not None:  # a game input the journal writes, dated as the runner dates it
        event = spec.game_input(rig.now, args)
        assert input_to_dict(event)["t_ns"] == rig.now
        if spec.answerer == "clock":
            assert cmd.clock_input(rig.now) == event
    answers = []
    rig.runner.submit(Request(rig.now, name, args, source="hall", reply=lambda ok, why: answers.append((ok, why))))
    rig.pump()
    assert len(answers) == 1
    ok, why = answers[0]
    # the runner takes the request's arguments as they are: whatever it answers is about the game, not the request
    assert "takes" not in why and "unknown command" not in why and "must be" not in why, why
    if ok and spec.answerer in ("clock", "table"):
        assert rig.journal_inputs()[-1]["command"] == cmd.id


def test_every_list_of_commands_is_read_off_the_table():
    """A new entry is a new command everywhere: the envelope's `cmd`, the schemas, the table's own,
    the simulated clock's keypad commands."""
    from rackside.hall.console.demohall import sim

    assert commands.NAMES == tuple(commands.SPECS) == tuple(commands.SCHEMAS) == tuple(commands.FIELDS)
    assert commands.ENVELOPE["cmd"].values == commands.NAMES
    assert commands.TABLE_COMMANDS == commands.answered_by("table")
    assert set(sim.KEYPAD_COMMANDS) == set(commands.answered_by("table", "slip"))
    assert {n for n, s in commands.SPECS.items() if s.runner_check is not None} <= set(runner_requests.ARGS)


def test_the_page_sends_what_the_table_says_and_the_runner_answers_what_the_table_says():
    assert console_requests.PAGE_COMMANDS == tuple(n for n, s in commands.SPECS.items() if s.page)
    runner = {n: s.takes for n, s in commands.SPECS.items() if s.answerer in commands.RUNNER_ANSWERS}
    assert {n: runner_requests.REQUESTS[n] for n in runner} == runner
    assert set(runner_requests.REQUESTS) - set(runner) == set(runner_requests.OWN)  # the runner's own: menu, notice...
    assert not set(runner_requests.OWN) & set(commands.NAMES)


# --- no product file on a command's path spells a command's name ---------------------------------------

# Where a command travels: the console's check, the clock's intake, hall output and runner's answer,
# the demo's clock (its `_command`; the demo's scripts are steps of a story, not commands).
COMMAND_PATH = {
    "hall/console/state/requests.py": None,
    "hall/device/intake.py": None,
    "hall/device/clock_output.py": None,
    "firmware/requests.py": None,
    "hall/console/demohall/sim.py": "_command",
}


def names_spelled(source: str, names: tuple[str, ...], function: str | None = None) -> list[str]:
    """`line: "name"` for each string in `source` (docstrings aside; inside `function` only, if
    given) that is a command's name."""
    tree = ast.parse(source)
    roots = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function] if function else [tree]
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    found = set()
    for root in roots:
        for node in ast.walk(root):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
                    and id(node) not in docstrings):
                found.add(f"{node.lineno}: {node.value!r}")
    return sorted(found)


def test_no_file_on_a_commands_path_spells_a_commands_name():
    found = {path: spelled for path, function in COMMAND_PATH.items()
             if (spelled := names_spelled((ROOT / path).read_text(encoding="utf-8"), commands.NAMES, function))}
    assert found == {}, "read the command's entry (hall.wire.commands.SPECS) instead of spelling its name"


def test_the_spelling_check_can_fail():
    source = ('"""late_start is a docstring"""\n'
              'def _command(r):\n    if r.name == "late_start":\n        return {"players": [2]}\n'
              'def story():\n    return ("arrive", 1)\n')
    assert names_spelled(source, commands.NAMES) == ["3: 'late_start'", "6: 'arrive'"]
    assert names_spelled(source, commands.NAMES, "_command") == ["3: 'late_start'"]


def test_the_demos_clock_answers_every_command_in_the_table(tmp_path):
    """The demo's simulated tables read the table too: each command gets one ack (an update, which a
    simulated clock cannot install, once raised in the demo's scheduler and was never answered)."""
    from rackside.hall.console.demohall.sim import SimHall

    sim = SimHall("h", "127.0.0.1", 1, {3: ("table-3", "pw", "table-3")}, tmp_path / "journals")  # never connected
    acks = []
    sim._ack = lambda t, cid, ok, reason=None, **extra: acks.append((cid, ok, reason))
    table = sim.tables[3]
    for name, spec in commands.SPECS.items():
        sim._command(table, json.dumps(console_sends(name, spec.example)).encode())
        assert [cid for cid, _, _ in acks] == [f"t-{name}"], acks
        if spec.answerer in ("clock", "game"):  # its game input journalled, as a clock journals it
            assert acks[0][1] is True, acks
        acks.clear()
