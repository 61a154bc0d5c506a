"""The shape of the code, checked: one import name, no import cycles, no subsystem importing the
entry point (issue 8), the layers (issue 37: the game imports only itself and the leaves; only the
clock program's own entry points import firmware), the hall's rooms (issue 24), the console's feature
packages (issue 37). Imports inside functions count: hiding a cycle in a function only moves the
failure to run time."""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rackside"
ENTRY_POINT = "rackside.cli"
# Modules any layer may import: they import nothing of Rackside themselves.
LEAVES = {"rackside", "rackside.paths", "rackside.outage", "rackside.atomic", "rackside.values", "rackside.tomlfile",
          "rackside.registry", "rackside.scrypthash"}


def product_modules() -> dict[str, Path]:
    """Every module of the installed package, by dotted name (symlinked subsystems followed)."""
    modules: dict[str, Path] = {}
    paths = [Path(d) / f for d, _, files in os.walk(PACKAGE, followlinks=True) for f in files if f.endswith(".py")]
    for path in sorted(paths):  # os.walk follows the subsystem links (Path.rglob does not before 3.13)
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = ["rackside", *rel.parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The product modules `name` imports anywhere in its body (function-level included)."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for target in targets:
            # `import rackside.a.b` imports rackside.a.b; `from rackside.a import b` imports b if it
            # is a module, else rackside.a. Parent packages' __init__ run too, but they import nothing.
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = product_modules()
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_the_graph_sees_every_subsystem():
    graph = import_graph()
    for subsystem in ("firmware", "game", "kiosk", "hardware", "judge", "hall"):
        assert any(name.startswith(f"rackside.{subsystem}") for name in graph), subsystem
    # The checker itself can fail: a function-level import is an edge.
    assert "rackside.game.clock" in graph["rackside.firmware.runner"] or any(
        "rackside.game.clock" in deps for deps in graph.values()
    )


def test_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert cycles == [], "import cycles (function-level imports count):\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_find_cycles_finds_one():
    # The checker can fail: a made-up graph with a cycle through a function-level import.
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_subsystem_imports_the_entry_point():
    offenders = sorted(name for name, deps in import_graph().items() if ENTRY_POINT in deps and name != "rackside.__main__")
    assert offenders == [], f"these import the entry point {ENTRY_POINT}: {offenders}"


def test_leaf_modules_import_nothing_of_rackside():
    graph = import_graph()
    for leaf in LEAVES:
        assert graph[leaf] == set(), f"{leaf} must import nothing of Rackside: {graph[leaf]}"


def test_product_code_never_imports_the_bare_subsystem_names():
    """Only `rackside` is installed; `import firmware` works in a source checkout by accident only."""
    bare = {"firmware", "game", "kiosk", "hardware", "judge", "hall"}
    offenders = []
    for name, path in product_modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                heads = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                heads = [node.module.split(".")[0]]
            else:
                continue
            offenders += [f"{name}: {h}" for h in heads if h in bare]
    assert offenders == []


@pytest.mark.parametrize("subsystem", ["firmware", "game", "kiosk", "hardware", "judge", "hall"])
def test_subsystems_are_links_to_the_top_level_folders(subsystem):
    link = PACKAGE / subsystem
    assert link.is_symlink() and link.resolve() == (ROOT / subsystem).resolve()


# --- The layering of every subsystem (issue 37 item 1). `game/` is the rules of the game and its
# record (docs/architecture.md, "The game"): it imports nothing of Rackside's but itself and the
# leaves, so firmware, wire, console and the demo all use the same rules. `firmware/` is the program
# that runs on a clock's Pi: nothing imports it but its own entry points and the adapters that run
# inside that program, each listed here with the reason (tests and bench may import it).

GAME = "rackside.game"
FIRMWARE = "rackside.firmware"
WIRE = "rackside.hall.wire"
# Outside firmware/, the only modules that may import it, and why.
FIRMWARE_USERS = {
    ENTRY_POINT: "`rackside clock` registers firmware.cli's commands (by name, through importlib)",
    "rackside.hall.device.clock_factory": "the clock's `hall` output, found by name in firmware.outputs' registry",
    "rackside.hall.device.clock_output": "the clock's `hall` output: a firmware.outputs.Output run by the clock's runner",
    "rackside.hardware.keypad": "the clock's keypad scanner, debounced by firmware.debounce as the buttons are",
    "rackside.switch": "switches versions between games only: reads the clock's checkpoint (firmware.persist)",
}


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """`module -> imported (rule)` for each import across the layers that the layering forbids."""
    found = []
    for name, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if inside(name, GAME) and not inside(dep, GAME) and dep not in LEAVES:
                found.append(f"{name} -> {dep} (the game imports only the game and the leaves)")
            elif inside(dep, FIRMWARE) and not inside(name, FIRMWARE) and name not in FIRMWARE_USERS:
                found.append(f"{name} -> {dep} (only the clock program's own entry points and adapters import firmware)")
    return found


def test_the_layers_import_only_what_they_may():
    violations = layer_violations(import_graph())
    assert violations == [], "imports across the layers (docs/architecture.md, \"Layers\"):\n" + "\n".join(violations)


def test_the_firmware_users_are_real_and_none_is_the_wire():
    """The list of firmware's users stays true: each exists, imports firmware, and is not the wire
    (the contract both ends speak takes its bounds from the game)."""
    graph = import_graph()
    for user in FIRMWARE_USERS:
        if user == ENTRY_POINT:  # by name: `"clock": "rackside.firmware.cli"`, imported with importlib
            assert f'"{FIRMWARE}.cli"' in (PACKAGE / "cli.py").read_text(encoding="utf-8")
            continue
        assert any(inside(d, FIRMWARE) for d in graph[user]), f"{user} no longer imports firmware: take it off FIRMWARE_USERS"
        assert not inside(user, WIRE) and not inside(user, GAME), user


def test_the_wire_console_and_demo_take_the_rules_from_the_game():
    graph = import_graph()
    for user in (f"{WIRE}.commands", f"{WIRE}.messages", f"{WIRE}.eventrules", f"{WIRE}.resend",
                 "rackside.hall.console.scoring.results", "rackside.hall.console.demohall.sim", f"{FIRMWARE}.runner"):
        assert any(inside(d, GAME) for d in graph[user]), user


def test_the_map_names_the_game_and_firmware_users_as_the_code_has_them():
    """docs/architecture.md's table of the game's modules is game/'s, and the move script's; each of
    firmware's users is named there."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## The game and who uses it", 1)[1].split("\n## ", 1)[0]
    in_doc = set(re.findall(r"^\| `(\w+)\.py` \|", section, re.M))
    in_game = {p.stem for p in (ROOT / "game").glob("*.py") if p.stem != "__init__"}
    moved = ast.literal_eval(re.search(r"^MOVED = (\(.*?\))$", (ROOT / "tools" / "refactor" / "move_game.py").read_text(encoding="utf-8"), re.M).group(1))
    assert in_doc == in_game == set(moved)
    for user in FIRMWARE_USERS:  # by its name or its file (rackside/switch.py, hall/device/clock_output.py)
        names = {f"`{user}`", f"`{user.replace('.', '/')}.py`", f"`{user.removeprefix('rackside.').replace('.', '/')}.py`"}
        assert any(n in section for n in names), f"docs/architecture.md, \"The game and who uses it\", does not name {user}"


def test_the_layer_check_can_fail():
    # Each rule broken once, in a made-up graph (firmware's modules here are ones that stay there, so
    # tools/refactor/move_game.py leaves this test as it is).
    graph = {
        "rackside.game.checkin": {"rackside.hall.wire.topics", "rackside.game.clock"},
        "rackside.game.slip": {"rackside.values", "rackside.firmware.outputs"},
        "rackside.hall.wire.payloads": {"rackside.firmware.journal_writer", "rackside.game.clock"},
        "rackside.hall.console.demohall.sim": {"rackside.firmware.runner"},
        "rackside.hall.device.clock_output": {"rackside.firmware.outputs"},
        "rackside.firmware.runner": {"rackside.firmware.outputs", "rackside.game.clock", "rackside.hall.wire.commands"},
    }
    assert layer_violations(graph) == [
        "rackside.game.checkin -> rackside.hall.wire.topics (the game imports only the game and the leaves)",
        "rackside.game.slip -> rackside.firmware.outputs (the game imports only the game and the leaves)",
        "rackside.hall.console.demohall.sim -> rackside.firmware.runner (only the clock program's own entry points and adapters import firmware)",
        "rackside.hall.wire.payloads -> rackside.firmware.journal_writer (only the clock program's own entry points and adapters import firmware)",
    ]


# --- The tests' own shape (issue 8 item 6): helpers live in tests/support/, never in a test module.
# Importing a test module runs its module-level code and collects its tests a second time under
# another name (its fixtures too), and ties one subject's tests to another's.


def imports_of_test_modules(source: str) -> list[str]:
    """The test modules (`test_*`) a source imports: by an import statement anywhere in it, or by
    name through `__import__` / `importlib.import_module`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + [f"{node.module or ''}.{a.name}" for a in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("__import__", "import_module")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names = [node.args[0].value]
        else:
            continue
        found += [n for n in names if any(part.startswith("test_") for part in n.split("."))]
    return sorted(set(found))


def test_no_test_module_imports_another():
    sources = sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").glob("*.py")])
    offenders = {str(p.relative_to(ROOT)): found for p in sources if (found := imports_of_test_modules(p.read_text(encoding="utf-8")))}
    assert offenders == {}, f"move the shared helpers to tests/support/ and import them from there: {offenders}"


def test_the_check_finds_imports_of_test_modules():
    # The checker can fail: every way the tests used to reach into another test module.
    source = (
        "from test_firmware_support import rig\n"
        "def f():\n"
        "    from tests.test_kiosk import runner_judge\n"
        "    return __import__('tests.test_kiosk', fromlist=['records'])\n"
        "import test_bounce\n"
        "from support.kiosk_rig import make_app\n"
    )
    assert imports_of_test_modules(source) == [
        "test_bounce", "test_firmware_support", "test_firmware_support.rig", "tests.test_kiosk", "tests.test_kiosk.runner_judge",
    ]


# --- The hall's rooms (issue 24 item 1): hall/ is split by where the code runs. `wire` is the v1
# contract both ends speak and imports no other room; `net` is a connection to the broker, used by
# every end; `device` runs on a clock or a station, `director` and `console` on the director's
# machine, and neither side imports the other's code. `rackside.hall.cli` composes the rooms'
# commands and is the one module of the hall outside them.

HALL = "rackside.hall"
ROOMS = ("wire", "net", "device", "director", "console")
HALL_OUTSIDE_ROOMS = {HALL, f"{HALL}.cli"}
# room -> the rooms it may not import
FORBIDDEN = {
    "wire": {"net", "device", "director", "console"},
    "net": {"device", "director", "console"},
    "device": {"director", "console"},
    "director": {"device"},
    "console": {"device"},
}


def room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] == ["rackside", "hall"] and len(parts) > 2 and parts[2] in ROOMS:
        return parts[2]
    return None


def room_violations(graph: dict[str, set[str]]) -> list[str]:
    """`module -> imported` for every import one room may not make (function-level ones count),
    and for every room module importing the hall's command line."""
    found = []
    for name, deps in sorted(graph.items()):
        room = room_of(name)
        if room is None:
            continue
        for dep in sorted(deps):
            if room_of(dep) in FORBIDDEN[room] or dep == f"{HALL}.cli":
                found.append(f"{name} -> {dep}")
    return found


def test_every_hall_module_is_in_a_room():
    loose = sorted(n for n in product_modules() if n.startswith(f"{HALL}.") and n not in HALL_OUTSIDE_ROOMS and room_of(n) is None)
    assert loose == [], f"put these in one of hall/{{{','.join(ROOMS)}}}/ (docs/architecture.md, \"The hall's rooms\"): {loose}"


def test_the_rooms_import_only_what_they_may():
    violations = room_violations(import_graph())
    assert violations == [], "imports across rooms the rooms may not make (docs/architecture.md):\n" + "\n".join(violations)


def test_the_room_check_can_fail():
    # Each rule broken once, in a made-up graph, as a module would break it.
    graph = {
        "rackside.hall.console.demohall.sim": {"rackside.hall.device.clock_output", "rackside.hall.wire.payloads"},
        "rackside.hall.console.fleet.devices": {"rackside.hall.director.fleet", "rackside.hall.net.client"},
        "rackside.hall.director.fleet": {"rackside.hall.device.enrol"},
        "rackside.hall.device.update": {"rackside.hall.console.fleet.updates", "rackside.hall.wire.update"},
        "rackside.hall.device.enrol": {"rackside.hall.director.dynsec"},
        "rackside.hall.wire.join": {"rackside.hall.net.config"},
        "rackside.hall.net.link": {"rackside.hall.device.outbox"},
        "rackside.hall.director.tail": {"rackside.hall.cli"},
        "rackside.hall.cli": {"rackside.hall.device.station", "rackside.hall.director.provision"},
    }
    assert room_violations(graph) == [
        "rackside.hall.console.demohall.sim -> rackside.hall.device.clock_output",
        "rackside.hall.device.enrol -> rackside.hall.director.dynsec",
        "rackside.hall.device.update -> rackside.hall.console.fleet.updates",
        "rackside.hall.director.fleet -> rackside.hall.device.enrol",
        "rackside.hall.director.tail -> rackside.hall.cli",
        "rackside.hall.net.link -> rackside.hall.device.outbox",
        "rackside.hall.wire.join -> rackside.hall.net.config",
    ]



# --- The console by feature (issue 37 item 3). hall/console/ is packages (tools/refactor/move_console.py
# moved the modules; its PACKAGES names the same packages as here). Shared, from the bottom, each
# importing only those before it: `common` (every bound; the HTTP edge's checks), `scoring` (results
# and TSH), `state` (the hall's state and the event). The features may import the shared packages,
# never one another and never the shell; the `shell` composes them (app.routes, each feature given
# its services, never the Console); the demo runs a console, so it may import the shell; `cli.py`
# (the console's commands) is the one module outside the packages.

CONSOLE = f"{HALL}.console"
CONSOLE_SHARED = ("common", "scoring", "state")
CONSOLE_FEATURES = ("resultsdesk", "tableside", "fleet", "publichall", "rules")
CONSOLE_PACKAGES = (*CONSOLE_SHARED, *CONSOLE_FEATURES, "shell", "demohall")
CONSOLE_OUTSIDE = {CONSOLE, f"{CONSOLE}.cli"}


def console_package(module: str) -> str | None:
    parts = module.split(".")
    return parts[3] if inside(module, CONSOLE) and len(parts) > 3 and parts[3] in CONSOLE_PACKAGES else None


def console_may_import(package: str) -> set[str]:
    """The console's packages `package` may import besides itself."""
    if package in CONSOLE_SHARED:
        return set(CONSOLE_SHARED[:CONSOLE_SHARED.index(package)])
    if package in CONSOLE_FEATURES:
        return set(CONSOLE_SHARED)
    return {*CONSOLE_SHARED, *CONSOLE_FEATURES, *({"shell"} if package == "demohall" else set())}


def console_violations(graph: dict[str, set[str]]) -> list[str]:
    """`module -> imported` for each import between the console's packages that the layout forbids,
    and for each package module importing the console's command line."""
    found = []
    for name, deps in sorted(graph.items()):
        package = console_package(name)
        if package is None:
            continue
        for dep in sorted(deps):
            other = console_package(dep)
            if dep == f"{CONSOLE}.cli" or (other not in (None, package) and other not in console_may_import(package)):
                found.append(f"{name} -> {dep}")
    return found


def test_every_console_module_is_in_a_package_the_move_script_names():
    loose = sorted(n for n in product_modules() if inside(n, CONSOLE) and n not in CONSOLE_OUTSIDE and console_package(n) is None)
    assert loose == [], f"put these in one of hall/console/{{{','.join(CONSOLE_PACKAGES)}}}/ (docs/architecture.md): {loose}"
    script = (ROOT / "tools" / "refactor" / "move_console.py").read_text(encoding="utf-8")
    named = re.findall(r'(?m)^    "(\w+)": \(\(', script)
    assert sorted(named) == sorted(CONSOLE_PACKAGES), "move_console.py's PACKAGES and this test name the same packages"


def test_the_consoles_packages_import_only_what_they_may():
    violations = console_violations(import_graph())
    assert violations == [], "imports between the console's packages the layout forbids (docs/architecture.md):\n" + "\n".join(violations)


def test_no_feature_reaches_for_the_console_object():
    """A feature is given its services (each a named field: app.Console builds them); it never takes
    the Console off the app (`request.app.state.console`) nor keeps it (`self.console`)."""
    reaching = sorted(f"{n}: {m}" for n, path in product_modules().items() if console_package(n) in CONSOLE_FEATURES
                      for m in sorted(set(re.findall(r"app\.state\.console|self\.console\b", path.read_text(encoding="utf-8")))))
    assert reaching == [], "a feature takes named services, not the Console:\n" + "\n".join(reaching)


def test_the_console_check_can_fail():
    # Each rule broken once, in a made-up graph, as a module would break it.
    c = CONSOLE
    graph = {
        f"{c}.tableside.paperless": {f"{c}.shell.app", f"{c}.state.hallstate", f"{c}.scoring.results"},  # a feature -> the shell
        f"{c}.publichall.publicserve": {f"{c}.tableside.paperless", f"{c}.common.guard"},  # a feature -> another
        f"{c}.state.hallstate": {f"{c}.fleet.updates", f"{c}.scoring.results"},  # the shared state -> a feature
        f"{c}.scoring.results": {f"{c}.state.checkin"},  # a lower shared package -> a higher one
        f"{c}.common.limits": {f"{c}.scoring.tsh"},
        f"{c}.shell.app": {f"{c}.demohall.sim", f"{c}.rules.rulespage"},  # the shell -> the demo
        f"{c}.fleet.devices": {f"{c}.cli"},
        f"{c}.demohall.demo": {f"{c}.shell.serve", f"{c}.state.event"},  # allowed: the demo runs a console
    }
    assert console_violations(graph) == [
        f"{c}.common.limits -> {c}.scoring.tsh",
        f"{c}.fleet.devices -> {c}.cli",
        f"{c}.publichall.publicserve -> {c}.tableside.paperless",
        f"{c}.scoring.results -> {c}.state.checkin",
        f"{c}.shell.app -> {c}.demohall.sim",
        f"{c}.state.hallstate -> {c}.fleet.updates",
        f"{c}.tableside.paperless -> {c}.shell.app",
    ]

# No re-exports: a name of the hall is imported from the module that defines it, never through one
# that merely imports it (a device module handing the console a contract's name made the console
# depend on the device). Checked in the product, tests/ and bench/, for `from M import NAME` and
# for `M.NAME` on a module bound by an import.


def hall_names_imported(path: Path) -> set[str]:
    """The names a module binds by importing them from the hall (anywhere in its body)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith(HALL):
            names |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.startswith(HALL)}
    return names


def names_through_another_module(source: str, modules: dict[str, Path], where: str) -> list[str]:
    """`where: NAME from M` for each name of the hall imported from (or read off) a module M that
    itself imported it from another hall module. (Patching a module's own import of a library name,
    `monkeypatch.setattr(recovery, "read_journal", ...)`, is not a re-export.)"""
    imported: dict[str, set[str]] = {}

    def through(module: str, name: str) -> bool:
        if f"{module}.{name}" in modules or modules[module].name == "__init__.py":
            return False
        if module not in imported:
            imported[module] = hall_names_imported(modules[module])
        return name in imported[module]

    found = []
    bound: dict[str, str] = {}  # a local name -> the hall module it is
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith(HALL):
            for alias in node.names:
                if f"{node.module}.{alias.name}" in modules:
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                elif node.module in modules and through(node.module, alias.name):
                    found.append(f"{where}: {alias.name} from {node.module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name.startswith(HALL) and alias.name in modules:
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                and through(bound[node.value.id], node.attr)):
            found.append(f"{where}: {node.attr} from {bound[node.value.id]}")
    return sorted(set(found))


def test_no_hall_name_is_imported_through_another_module():
    modules = product_modules()
    sources = {name: path for name, path in modules.items()}
    sources.update({str(p.relative_to(ROOT)): p for p in [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").glob("*.py")]})
    offenders = [f for where, path in sorted(sources.items())
                 for f in names_through_another_module(path.read_text(encoding="utf-8"), modules, where)]
    assert offenders == [], "import each name from the module that defines it:\n" + "\n".join(offenders)


def test_the_re_export_check_can_fail():
    modules = product_modules()
    source = (
        "from rackside.hall.device.update import TOKEN_HEADER, Updater\n"   # TOKEN_HEADER is wire.update's
        "from rackside.hall.device import clock_output, recovery\n"
        "from rackside.hall.wire import payloads\n"
        "clock_output.HallOutput, clock_output.Link, payloads.state_payload\n"  # Link is net.link's
        "recovery.read_journal, clock_output.commands\n"  # a library's name: not the hall's; a module of the hall: is
    )
    assert names_through_another_module(source, modules, "x") == [
        "x: Link from rackside.hall.device.clock_output", "x: TOKEN_HEADER from rackside.hall.device.update",
        "x: commands from rackside.hall.device.clock_output",
    ]
