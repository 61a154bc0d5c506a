"""The pure cores stay pure (issue 16 item 6): the modules docs/architecture.md calls pure cores
import no I/O, threads or clocks, and call none of the built-ins that do I/O. Checked on the source
(AST), so a function-level import counts, and transitively through Rackside: a pure core may import
only other pure cores. Replay, fuzzing and the property tests rely on this."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The pure cores, as docs/architecture.md lists them (keep the two in step).
PURE_CORES = {
    "rackside.values": "rackside/values.py",
    "rackside.game.clock": "game/clock.py",
    "rackside.firmware.debounce": "firmware/debounce.py",
    "rackside.firmware.gestures": "firmware/gestures.py",
    "rackside.firmware.menu": "firmware/menu.py",
    "rackside.firmware.menu_session": "firmware/menu_session.py",
    "rackside.game.render": "game/render.py",
    "rackside.firmware.text_render": "firmware/text_render.py",
    "rackside.game.messages": "game/messages.py",
    "rackside.hardware.sevenseg": "hardware/sevenseg.py",
    "rackside.hardware.tm1637_decode": "hardware/tm1637_decode.py",  # issue 39: the TM1637 wire, decoded
    "rackside.game.rules_table": "game/rules_table.py",
    "rackside.firmware.restore": "firmware/restore.py",
    "rackside.game.slip": "game/slip.py",
    "rackside.game.checkin": "game/checkin.py",  # issue 27: check-in at the table
    "rackside.game.call": "game/call.py",  # issue 27: the director's call
    "rackside.game.table": "game/table.py",  # ... composed, with their effects on the clock
    "rackside.firmware.table_session": "firmware/table_session.py",  # ... a key or a press as their inputs
    "rackside.kiosk.flow": "kiosk/flow.py",
    "rackside.kiosk.pin": "kiosk/pin.py",
    "rackside.kiosk.director": "kiosk/director.py",
    "rackside.kiosk.wordlists": "kiosk/wordlists.py",
    "rackside.kiosk.readjudication": "kiosk/readjudication.py",
    "rackside.kiosk.layout": "kiosk/layout.py",
    "rackside.judge.adjudication": "judge/adjudication.py",
    "rackside.judge.penalties": "judge/penalties.py",
    "rackside.hall.wire.topics": "hall/wire/topics.py",
    "rackside.hall.wire.commands": "hall/wire/commands.py",
    "rackside.hall.wire.update": "hall/wire/update.py",
    "rackside.hall.wire.schema": "hall/wire/schema.py",
    "rackside.hall.wire.messages": "hall/wire/messages.py",
    "rackside.hall.wire.eventrules": "hall/wire/eventrules.py",  # issue 38: the event's rules, one value
    "rackside.hall.director.takeover": "hall/director/takeover.py",  # the takeover commands, and the game a takeover continues (hallstate)
    "rackside.hall.wire.health": "hall/wire/health.py",
    "rackside.hall.device.healthparse": "hall/device/healthparse.py",
    "rackside.hall.console.state.health": "hall/console/state/health.py",
    "rackside.hall.console.fleet.readiness": "hall/console/fleet/readiness.py",
    "rackside.hall.console.state.hallstate": "hall/console/state/hallstate.py",
    "rackside.hall.console.state.contract": "hall/console/state/contract.py",
    "rackside.hall.console.state.requests": "hall/console/state/requests.py",
    "rackside.hall.console.common.limits": "hall/console/common/limits.py",
    "rackside.hall.console.scoring.results": "hall/console/scoring/results.py",
    "rackside.hall.console.scoring.tsh": "hall/console/scoring/tsh.py",
    "rackside.hall.console.scoring.jsliteral": "hall/console/scoring/jsliteral.py",
    "rackside.hall.console.scoring.hallplan": "hall/console/scoring/hallplan.py",
    "rackside.hall.console.scoring.standings": "hall/console/scoring/standings.py",  # TSH's ranking
    "rackside.hall.console.publichall.public": "hall/console/publichall/public.py",  # the public hall's documents
    "rackside.hall.console.state.checkin": "hall/console/state/checkin.py",  # issue 27: check-in against the round's pairings
    "rackside.hall.console.tableside.incidents": "hall/console/tableside/incidents.py",  # issue 27: the calls' queue
    "rackside.hall.console.tableside.signedslips": "hall/console/tableside/signedslips.py",  # issue 27: whether a signed slip agrees
}

# Modules that do I/O, run threads or processes, read a clock or randomness, or drive hardware.
FORBIDDEN_MODULES = {
    "os", "io", "sys", "socket", "ssl", "select", "selectors", "signal", "threading", "_thread", "multiprocessing",
    "concurrent", "asyncio", "queue", "subprocess", "time", "pathlib", "shutil", "tempfile", "glob", "fcntl",
    "mmap", "ctypes", "logging", "sqlite3", "urllib", "http", "random", "secrets", "uuid", "sched", "atexit",
    "builtins", "importlib", "pygame", "paho", "gpiozero", "serial", "zeroconf", "starlette", "uvicorn",
    "marisa_trie", "lgpio",
}
# In-memory buffers are not I/O: `io.StringIO` (the results' CSV is written to a string) may be used.
IN_MEMORY = {"io": {"StringIO", "BytesIO"}}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "breakpoint", "__import__"}
# Methods that read the system clock, whatever they are called on (datetime.now(), date.today()).
CLOCK_METHODS = {"now", "utcnow", "today", "fromtimestamp", "utcfromtimestamp"}


def problems_in(source: str, where: str, package: str = "") -> tuple[list[str], set[str]]:
    """What in `source` is not pure (one line each), and the Rackside names it imports (`package`:
    the module's package, for its relative imports)."""
    tree = ast.parse(source, where)
    found: list[str] = []
    rackside: set[str] = set()
    names: dict[str, str] = {}  # local name -> forbidden module it is bound to

    def check_module(module: str, line: int, alias: str | None, attrs: tuple[str, ...] = ()) -> None:
        head = module.split(".")[0]
        if head == "rackside":
            rackside.update([module] + [f"{module}.{a}" for a in attrs])
        elif head in IN_MEMORY and attrs and set(attrs) <= IN_MEMORY[head]:
            pass
        elif head in IN_MEMORY and not attrs:
            names[alias or head] = head
        elif head in FORBIDDEN_MODULES:
            found.append(f"{where}:{line}: imports {module}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                check_module(a.name, node.lineno, a.asname)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([module] if module else []))
            check_module(module, node.lineno, None, tuple(a.name for a in node.names))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in FORBIDDEN_CALLS:
                found.append(f"{where}:{node.lineno}: calls {f.id}()")
            elif isinstance(f, ast.Attribute) and f.attr in CLOCK_METHODS:
                found.append(f"{where}:{node.lineno}: reads the system clock (.{f.attr}())")
    for node in ast.walk(tree):  # `import io` is allowed only for its in-memory buffers
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names:
            module = names[node.value.id]
            if node.attr not in IN_MEMORY[module]:
                found.append(f"{where}:{node.lineno}: uses {module}.{node.attr}")
    return found, rackside


def module_of(name: str) -> str | None:
    """The Rackside module `name` is (`rackside.x.y`), or is a name in (`rackside.x.y.Name`)."""
    while name.count("."):
        rel = name.split(".")[1:]
        base = ROOT / ("rackside" if rel[0] not in SUBSYSTEMS else "") / Path(*rel)
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return name
        name = name.rpartition(".")[0]
    return None


SUBSYSTEMS = {"firmware", "game", "kiosk", "hardware", "judge", "hall"}


def check(modules: dict[str, str], root: Path = ROOT) -> list[str]:
    """Every problem of every module in `modules`, a Rackside import of something not in it included
    (packages on the way, whose __init__ import nothing, excepted)."""
    out: list[str] = []
    for name, rel in sorted(modules.items()):
        found, imported = problems_in((root / rel).read_text(encoding="utf-8"), rel, name.rpartition(".")[0])
        out += found
        for target in sorted({module_of(t) for t in imported} - {None}):
            if target in modules or any(m.startswith(target + ".") for m in modules) or target == "rackside":
                continue
            out.append(f"{rel}: imports {target}, which is not a pure core")
    return out


def test_the_pure_cores_import_no_io_threads_or_clocks():
    assert check(PURE_CORES) == []


def test_every_pure_core_named_exists_and_the_docs_name_them():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for name, rel in PURE_CORES.items():
        assert (ROOT / rel).is_file(), rel
        assert Path(rel).stem in doc, f"docs/architecture.md does not name the pure core {rel}"


def test_every_module_of_the_game_but_its_record_is_a_pure_core():
    """docs/architecture.md, "The game and who uses it": all of game/ but journal.py (its reader opens
    the file it is given) and replay.py (its command prints) is pure (issue 37)."""
    record = {"journal", "replay"}
    game = {p.stem for p in (ROOT / "game").glob("*.py") if p.stem != "__init__"}
    assert record <= game
    assert {f"rackside.game.{m}" for m in game - record} <= set(PURE_CORES)


BREAKAGES = [
    ("import os\n", "imports os"),
    ("import time as clock_\n", "imports time"),
    ("from threading import Thread\n", "imports threading"),
    ("from pathlib import Path\n", "imports pathlib"),
    ("def _f():\n    import socket\n", "imports socket"),  # a function-level import counts
    ("def _f():\n    return open('x')\n", "calls open()"),
    ("from datetime import datetime\ndef _f():\n    return datetime.now()\n", "reads the system clock"),
    ("import io\ndef _f():\n    return io.open('x')\n", "uses io.open"),
    ("from rackside.firmware import persist\n", "not a pure core"),  # an adapter, transitively impure
]


@pytest.mark.parametrize("line, complaint", BREAKAGES)
def test_a_broken_copy_of_the_clock_core_fails(tmp_path, line, complaint):
    """The check can fail: a copy of game/clock.py with one impure line added."""
    copy = tmp_path / "game" / "clock.py"
    copy.parent.mkdir()
    copy.write_text((ROOT / "game" / "clock.py").read_text(encoding="utf-8") + "\n" + line, encoding="utf-8")
    found = check({"rackside.game.clock": "game/clock.py"}, root=tmp_path)
    assert any(complaint in p for p in found), found


def test_in_memory_buffers_are_allowed():
    found, _ = problems_in("import io\nbuf = io.StringIO()\nfrom io import BytesIO\n", "x.py")
    assert found == []
