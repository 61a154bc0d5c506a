"""Each rule, limit and topic name is defined once and imported everywhere else (issue 16 item 3).

- Topic names: only hall/wire/topics.py spells the topic tree's root (`rackside/v1`); every other module,
  bench and the page's scripts build topics with it (the console's bridge and hall state once
  hard-coded it).
- Command limits: only hall/wire/commands.py says how far a director may adjust a clock; the console
  once refused adjustments below -599,999 ms while the clocks took anything above -1,200,000 ms.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from rackside.hall.wire import commands, topics

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("firmware", "hall", "judge", "kiosk", "hardware", "rackside", "bench")


def python_sources():
    for top in PRODUCT:
        # rackside/ holds links to the other folders: each file once, where it really is
        yield from (p for p in sorted((ROOT / top).rglob("*.py")) if p.resolve().is_relative_to((ROOT / top).resolve()))


def page_scripts():
    return sorted((ROOT / "hall" / "console" / "static").glob("*.js"))


def string_literals(tree: ast.AST):
    """Every string constant that is not a docstring (a docstring may say what a topic looks like)."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node


def numbers(tree: ast.AST):
    """Every number the code spells, with constant arithmetic folded (20 * 60_000, -1_200_000)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant)):
            try:
                value = ast.literal_eval(node) if not isinstance(node, ast.BinOp) else eval(compile(ast.Expression(node), "", "eval"), {})
            except Exception:
                continue
            if isinstance(value, int) and not isinstance(value, bool):
                yield node, value


def where(p: Path) -> str:
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else p.name


def js_code_lines(path: Path):
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("//", 1)[0]
        if code.strip():
            yield i, code


def topic_roots_outside_topics_py(sources, scripts) -> list[str]:
    found = []
    for p in sources:
        if p.resolve() == (ROOT / "hall" / "wire" / "topics.py").resolve():
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        found += [f"{where(p)}:{n.lineno}" for n in string_literals(tree) if topics.ROOT in n.value]
    for p in scripts:
        found += [f"{where(p)}:{i}" for i, code in js_code_lines(p) if topics.ROOT in code]
    return found


def adjust_bounds_outside_commands_py(sources, scripts) -> list[str]:
    bounds = {commands.ADJUST_ABOVE_MS, commands.ADJUST_MAX_MS, -599_999}
    found = []
    for p in sources:
        if p.resolve() == (ROOT / "hall" / "wire" / "commands.py").resolve():
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        found += [f"{where(p)}:{n.lineno} ({v})" for n, v in numbers(tree) if v in bounds]
    spelled = {re.sub(r"(?<=\d)(?=(\d{3})+$)", "_?", str(abs(b))) for b in bounds}
    for p in scripts:
        for i, code in js_code_lines(p):
            if any(re.search(rf"(?<![\d_]){s}(?![\d_])", code) for s in spelled):
                found.append(f"{where(p)}:{i}")
    return found


def test_only_hall_topics_spells_the_topic_root():
    assert topic_roots_outside_topics_py(list(python_sources()), page_scripts()) == []


def test_only_hall_commands_says_how_far_a_clock_may_be_adjusted():
    assert adjust_bounds_outside_commands_py(list(python_sources()), page_scripts()) == []
    # and the console checks a director's command with hall.wire.commands itself, not a copy
    assert "commands.parse(" in (ROOT / "hall" / "console" / "requests.py").read_text(encoding="utf-8")


def test_the_checks_find_a_second_definition(tmp_path):
    bad = tmp_path / "bridge.py"
    bad.write_text('TOPIC = f"rackside/v1/{hall}/table/+/state"\nFLOOR_MS = -599_999\nTOO_LOW = -20 * 60_000\n')
    page = tmp_path / "app.js"
    page.write_text('const floor = -1200000; // the clocks\' floor\nfetch(`rackside/v1/${hall}`);\n')
    assert len(topic_roots_outside_topics_py([bad], [page])) == 2
    assert len(adjust_bounds_outside_commands_py([bad], [page])) == 3
