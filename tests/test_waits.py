"""No test waits a guessed time (issue 24 item 5): a check that sleeps and then asserts that nothing
arrived passes when the message is merely late, and one that sleeps and then asserts that something
did fails on a loaded machine. Tests wait on a condition (tests/support/wait.py) or a barrier: a
round trip the broker answers only after everything before it (support.broker.ping, as Mosquitto's
own tests `do_ping`), or a sentinel published after the thing under test, which MQTT delivers after
it.

A static scan of tests/ and tests/support/: every sleep (`time.sleep`, `asyncio.sleep`, Playwright's
`wait_for_timeout`, a fresh `Event().wait(...)`), every `assert not until(...)` (a condition that did
not come true within a guessed time) and every `pytest.raises(TimeoutError)` is refused unless the
allow-list below names it, by file, function and call, with the reason it is not a guess. A sleep
may stand for real time that must pass (a press held down, a game's clock running): that is a lower
bound, which load only lengthens, never a wait for something else to happen. (Code a test runs from
a string, test_sim_idle's SCRIPT, is not scanned: its sleeps hold a key down for real.)
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# (file under tests/, function, call) -> why it is not a guess
ALLOWED = {
    ("test_tsh_tourneyjs.py", "test_a_burst_of_results_is_one_write_an_interval_and_a_refusing_disk_is_said_once.<locals>.until",
     "asyncio.sleep(0.01)"):
        "the poll of an async condition wait (support.wait's, on the event loop the file's writer runs on)",
    ("test_tsh_tourneyjs.py", "test_a_burst_of_results_is_one_write_an_interval_and_a_refusing_disk_is_said_once.<locals>.burst",
     "asyncio.sleep(0)"):
        "yields to the writer's task between changes: the burst lands within its 60 s interval, so none is written by design",
    ("support/wait.py", "until", "time.sleep(poll)"):
        "the poll of the condition wait every test uses",
    ("support/hallclock.py", "LiveClock.tap", "time.sleep(hold_s)"):
        "a press is held down for real: the board's debounce needs the contact closed this long",
    ("support/hallclock.py", "LiveClock.tap", "time.sleep(0.05)"):
        "the release is held for real (15 ms debounce) before the next press",
    ("support/hallclock.py", "LiveClock.key", "time.sleep(hold_s)"):
        "a keypad key is held down for real: the keypad's scanner debounces the contact this long",
    ("support/hallclock.py", "LiveClock.command", "time.sleep(left / 1000000000.0)"):
        "a command dated at_ns is sent once that moment of the monotonic clock has passed: real time that load only lengthens",
    ("test_hall_takeover.py", "test_a_spare_continues_a_killed_clocks_game_with_its_last_times", "time.sleep(1.3)"):
        "player 1's time runs for real between the presses: a lower bound, which load only lengthens",
    ("test_hall_takeover.py", "test_a_spare_continues_a_killed_clocks_game_with_its_last_times", "time.sleep(0.7)"):
        "player 2's time runs for real between the presses: a lower bound, which load only lengthens",
    ("test_hall_takeover.py", "test_a_takeover_from_the_command_line_survives_the_command_ending", "time.sleep(0.5)"):
        "player 2's time runs for real between the presses: a lower bound, which load only lengthens",
    ("test_hall_clock.py", "test_commands_late_start_arrive_new_game_and_identify", "time.sleep(1.2)"):
        "over a second of lateness passes for real before the player arrives (2.3.2(b)): a lower bound",
    ("test_hall_faults.py", "broker_outage_mid_game", "time.sleep(max(0.0, min(1.0, t_end - time.monotonic())))"):
        "presses spread over the outage's real seconds (the outage is real time)",
    ("support/console.py", "call.<locals>.receive", "asyncio.sleep(3600)"):
        "after the body the client neither sends nor leaves: an ASGI receive that never returns, as a real server's",
    ("test_console_audit.py", "test_a_flood_of_calls_at_the_device_rate_never_displaces_a_directors_correction",
     "time.sleep(1 / rate)"):
        "the flood's pace after its burst: calls at the console's device rate, as a copied card sends them (real time)",
}

GUESSES = {"TimeoutError", "queue.Empty", "subprocess.TimeoutExpired", "asyncio.TimeoutError"}


def guessed_waits(tree: ast.AST) -> list[tuple[str, str]]:
    """(function, call) of every sleep and every wait for nothing in `tree` (a test module)."""
    sleep_names = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and node.module in ("time", "asyncio") for a in node.names if a.name == "sleep"}
    found: list[tuple[str, str]] = []

    def visit(node: ast.AST, scope: list[str], in_function: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):  # named as __qualname__ names it
            inner = [*scope, *(["<locals>"] if in_function else []), node.name]
            for child in ast.iter_child_nodes(node):
                visit(child, inner, not isinstance(node, ast.ClassDef))
            return
        where = ".".join(scope) or "<module>"
        if isinstance(node, ast.Call):
            f = node.func
            name = ast.unparse(f)
            if (name in ("time.sleep", "asyncio.sleep") or (isinstance(f, ast.Name) and f.id in sleep_names)
                    or (isinstance(f, ast.Attribute) and f.attr == "wait_for_timeout")
                    or (isinstance(f, ast.Attribute) and f.attr == "wait" and isinstance(f.value, ast.Call)
                        and ast.unparse(f.value.func) in ("Event", "threading.Event"))
                    or (name == "pytest.raises" and node.args and ast.unparse(node.args[0]) in GUESSES)):
                found.append((where, ast.unparse(node)))
        if (isinstance(node, ast.Assert) and isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
                and isinstance(node.test.operand, ast.Call) and ast.unparse(node.test.operand.func).split(".")[-1] in ("until", "wait")):
            found.append((where, ast.unparse(node.test)))
        for child in ast.iter_child_nodes(node):
            visit(child, scope, in_function)

    visit(tree, [], False)
    return found


def test_guessed_waits_finds_each_kind():
    source = (
        "import time, asyncio, threading, pytest, queue\n"
        "from time import sleep as nap\n"
        "from support.wait import until\n"
        "def test_a(page):\n"
        "    time.sleep(0.3)\n"
        "    nap(1)\n"
        "    page.wait_for_timeout(500)\n"
        "    threading.Event().wait(0.2)\n"
        "    assert not until(lambda: False, 1)\n"
        "    with pytest.raises(queue.Empty):\n"
        "        pass\n"
        "class Rig:\n"
        "    def tap(self):\n"
        "        def later():\n"
        "            asyncio.sleep(1)\n"
        "def test_b(fake):\n"
        "    def sleep(s): pass\n"
        "    sleep(5)\n"  # the test's own fake: not a sleep
        "    assert until(lambda: True)\n"
        "    with pytest.raises(ValueError):\n"
        "        pass\n"
    )
    assert guessed_waits(ast.parse(source)) == [
        ("test_a", "time.sleep(0.3)"), ("test_a", "nap(1)"), ("test_a", "page.wait_for_timeout(500)"),
        ("test_a", "threading.Event().wait(0.2)"), ("test_a", "not until(lambda: False, 1)"), ("test_a", "pytest.raises(queue.Empty)"),
        ("Rig.tap.<locals>.later", "asyncio.sleep(1)"),
    ]


def every_guessed_wait() -> dict[tuple[str, str, str], int]:
    found: dict[tuple[str, str, str], int] = {}
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS)
        if rel.parts[0] == "data":
            continue
        for where, call in guessed_waits(ast.parse(path.read_text(), str(path))):
            key = (rel.as_posix(), where, call)
            found[key] = found.get(key, 0) + 1
    return found


def test_no_test_sleeps_and_then_asserts():
    unexplained = sorted(k for k in every_guessed_wait() if k not in ALLOWED)
    assert unexplained == [], (
        "wait on a condition (support.wait.wait/until) or a barrier (support.broker.ping, a sentinel), not a guessed time;"
        " a sleep that stands for real time passing goes in ALLOWED with its reason:\n"
        + "\n".join(f"  {f}: {fn}: {call}" for f, fn, call in unexplained))


def test_the_allow_list_names_only_waits_that_are_there():
    stale = sorted(set(ALLOWED) - set(every_guessed_wait()))
    assert stale == [], f"no longer in the tests: take them out of ALLOWED: {stale}"
    assert all(reason.strip() for reason in ALLOWED.values())
