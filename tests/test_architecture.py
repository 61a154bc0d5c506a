"""The shape of the code, checked: one import name, no import cycles, no subsystem importing the
entry point (issue 8). Imports inside functions count: hiding a cycle in a function only moves the
failure to run time."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rackside"
ENTRY_POINT = "rackside.cli"
# Modules any layer may import: they import nothing of Rackside themselves.
LEAVES = {"rackside", "rackside.paths", "rackside.outage", "rackside.atomic", "rackside.values", "rackside.tomlfile"}


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
    for subsystem in ("firmware", "kiosk", "hardware", "judge", "hall"):
        assert any(name.startswith(f"rackside.{subsystem}") for name in graph), subsystem
    # The checker itself can fail: a function-level import is an edge.
    assert "rackside.firmware.clock" in graph["rackside.firmware.runner"] or any(
        "rackside.firmware.clock" in deps for deps in graph.values()
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
    bare = {"firmware", "kiosk", "hardware", "judge", "hall"}
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


@pytest.mark.parametrize("subsystem", ["firmware", "kiosk", "hardware", "judge", "hall"])
def test_subsystems_are_links_to_the_top_level_folders(subsystem):
    link = PACKAGE / subsystem
    assert link.is_symlink() and link.resolve() == (ROOT / subsystem).resolve()


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
