"""Each rule, limit and topic name is defined once and imported everywhere else (issue 16 item 3).

- Topic names: only hall/wire/topics.py spells the topic tree's root (`rackside/v1`); every other module,
  bench and the page's scripts build topics with it (the console's bridge and hall state once
  hard-coded it).
- Command limits: only hall/wire/commands.py says how far a director may adjust a clock; the console
  once refused adjustments below -599,999 ms while the clocks took anything above -1,200,000 ms.
- Every other rule and limit (issue 24 item 2, `RULES`): the table limit, WESPA's timing rules, the
  overtime forfeit's points, TSH's score limits, identify's longest flash, the blink period, a
  word's letters, a typed score's bound; each had two to eight homes. A home is found from its
  module (`__file__`), so moving a module moves its home with it. And the clock core's forfeit
  endings, which the console's results and the page's scripts spelled again.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from rackside.game import call, checkin, clock, render, rules_table, slip
from rackside.hall.wire import commands, topics
from rackside.hall.console.common import limits
from rackside.hall.console.scoring import tsh
from rackside.judge import adjudication

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("firmware", "game", "hall", "judge", "kiosk", "hardware", "rackside", "bench")


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
    assert "commands.parse(" in (ROOT / "hall" / "console" / "state" / "requests.py").read_text(encoding="utf-8")


def test_the_checks_find_a_second_definition(tmp_path):
    bad = tmp_path / "bridge.py"
    bad.write_text('TOPIC = f"rackside/v1/{hall}/table/+/state"\nFLOOR_MS = -599_999\nTOO_LOW = -20 * 60_000\n')
    page = tmp_path / "app.js"
    page.write_text('const floor = -1200000; // the clocks\' floor\nfetch(`rackside/v1/${hall}`);\n')
    assert len(topic_roots_outside_topics_py([bad], [page])) == 2
    assert len(adjust_bounds_outside_commands_py([bad], [page])) == 3


# --- every rule and limit with one home (issue 24 item 2) ------------------------------------------
# Each entry: what it is, the module that defines it (its home: the only file that may spell it),
# the values the rest of the product may not spell anywhere (`anywhere`: numbers distinctive enough
# that any copy is one), the values it may not spell near a name matching `near` (a small number such
# as 15 or 60 means many things: it is a copy of the rule only where the code names the rule), and
# texts no string may hold ("25:00"). Numbers are found with constant arithmetic folded.

WESPA = clock.Rules()


def mmss(ms: int) -> str:
    return f"{ms // 60_000}:{ms // 1000 % 60:02d}"


RULES = [
    # (what, home, anywhere, near, values near it, texts)
    ("the table limit", checkin, {checkin.MAX_TABLE}, None, set(), set()),
    ("WESPA's game time (5.3.5)", clock, {WESPA.game_time_ms}, r"game_time", {WESPA.game_time_ms // 1000},
     {mmss(WESPA.game_time_ms)}),
    ("WESPA's time penalty (5.3.2)", clock, set(), r"per_minute", {WESPA.penalty_per_minute}, set()),
    ("WESPA's overtime forfeit (5.3.3)", clock, {WESPA.forfeit_overtime_ms}, r"forfeit|overtime",
     {WESPA.forfeit_overtime_ms // 1000}, {mmss(WESPA.forfeit_overtime_ms)}),
    ("WESPA's lateness margin (2.3.6(a))", clock, set(), r"margin|lateness", {WESPA.lateness_forfeit_margin}, set()),
    ("WESPA's optional forfeit (2.3.4)", clock, {WESPA.optional_forfeit_below_ms}, r"optional",
     {WESPA.optional_forfeit_below_ms // 1000}, {mmss(WESPA.optional_forfeit_below_ms)}),
    ("WESPA's courtesy draw (3.10.6(a))", clock, set(), r"courtesy",
     {WESPA.courtesy_draw_after_ms, WESPA.courtesy_draw_after_ms // 1000}, {mmss(WESPA.courtesy_draw_after_ms)}),
    ("the overtime forfeit's penalty points (5.3.3)", clock, set(), r"forfeit", {clock.OVERTIME_FORFEIT_POINTS}, set()),
    ("TSH's score limits", tsh, {tsh.DEFAULT_MAX_SCORE, tsh.MIN_SCORE}, None, set(), set()),
    ("identify's longest flash", commands, set(), r"identify", {commands.IDENTIFY_MAX_S}, set()),
    ("the displays' blink period", render, {render.BLINK_NS}, r"blink", set(), set()),
    ("the longest game time and overtime (99:59, 19:59)", rules_table,
     {rules_table.CLOCK_KEYS["game_time"][2], rules_table.CLOCK_KEYS["forfeit_overtime"][2]}, None, set(), set()),
    ("a word's letters", adjudication, set(), r"letters", {adjudication.MIN_LETTERS, adjudication.MAX_LETTERS}, set()),
    ("a typed score's bound", slip, set(), r"score|slip|margin", {limits.SCORE_BOUND, -limits.SCORE_BOUND}, set()),
    # issue 27: a call's reason (the clock journals it, the hall's command and event carry it)
    ("a call's reason", call, set(), r"reason", {call.MAX_REASON_CHARS}, set()),
    # an event's rounds: TSH's player lines, the console's round, a pairing's round on the clock
    ("the rounds of an event", checkin, set(), r"round", {checkin.MAX_ROUND}, set()),
]


def test_the_clock_and_the_console_take_the_same_rounds():
    """A pairing's round (game.checkin, hall.wire) and the console's (TSH's player lines, its
    config's round) are one limit: a round the console may be in is one the clock takes."""
    from rackside.hall.console.shell import config

    assert checkin.MAX_ROUND == tsh.MAX_ROUNDS == config.MAX_ROUND == topics.MAX_ROUND


def test_the_simulators_keypad_commands_are_the_tables_and_the_slips_answer():
    from rackside.hall.console.demohall import sim

    assert set(sim.KEYPAD_COMMANDS) == {*commands.TABLE_COMMANDS, "slip_outcome"}
    assert 'KEYPAD_COMMANDS = commands.answered_by("table", "slip")' in Path(sim.__file__).read_text(encoding="utf-8")


def _names(node: ast.AST) -> set[str]:
    """The names a target or an operand spells: `x`, `self.x`, `d["x"]`."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str):
            out.add(n.slice.value)
    return out


def _texts(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def named_numbers(tree: ast.AST):
    """(node, value, names) for every number the code spells, `names` being what it is bound to or
    checked against: an assignment's target, a parameter or keyword, a dict key, the names it is
    compared with, a call's text arguments (`_int(x, "score", ...)`) and the texts an enclosing `if`
    tests (`if name == "identify":`)."""
    found = []

    def visit(node: ast.AST, names: frozenset) -> None:
        if isinstance(node, ast.If):  # its test's texts name its body, not its elif/else
            inner = names | _texts(node.test)
            visit(node.test, inner)
            for child in node.body:
                visit(child, inner)
            for child in node.orelse:
                visit(child, names)
            return
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                key = {k.value} if isinstance(k, ast.Constant) and isinstance(k.value, str) else set()
                if k is not None:
                    visit(k, names)
                visit(v, names | key)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = a.posonlyargs + a.args
            for arg, default in zip(positional[len(positional) - len(a.defaults):], a.defaults):
                visit(default, names | {arg.arg})
            for arg, default in zip(a.kwonlyargs, a.kw_defaults):
                if default is not None:
                    visit(default, names | {arg.arg})
            for child in ([node.body] if isinstance(node, ast.Lambda) else node.body):
                visit(child, names)
            return
        extra: set[str] = set()
        if isinstance(node, ast.Assign):
            extra = set().union(*(_names(t) for t in node.targets))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            extra = _names(node.target)
        elif isinstance(node, ast.keyword) and node.arg:
            extra = {node.arg}
        elif isinstance(node, ast.Compare):
            extra = _names(node)
        elif isinstance(node, ast.Call):
            extra = {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
        names = names | extra
        if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant)):
            try:
                value = ast.literal_eval(node) if not isinstance(node, ast.BinOp) else eval(compile(ast.Expression(node), "", "eval"), {})
            except Exception:
                value = None
            if isinstance(value, int) and not isinstance(value, bool):
                found.append((node, value, names))
                return  # 10 * 60 is 600: its 60 is a unit, not a rule
        for child in ast.iter_child_nodes(node):
            visit(child, names)

    visit(tree, frozenset())
    return found


def _js_number(value: int) -> re.Pattern:
    digits = re.sub(r"(?<=\d)(?=(\d{3})+$)", "_?", str(abs(value)))
    return re.compile(rf"(?<![\w.]){'-' if value < 0 else ''}{digits}(?![\w.])")


def _duration(text: str) -> re.Pattern:
    return re.compile(rf"(?<![\d:]){re.escape(text)}(?![\d:])")  # "10:00", not 10:00 in "2026-11-30T10:00:00"


@functools.lru_cache(maxsize=None)
def _read(p: Path) -> tuple[list, list]:
    tree = ast.parse(p.read_text(encoding="utf-8"))
    return named_numbers(tree), list(string_literals(tree))


def second_homes(rule, sources, scripts) -> list[str]:
    """Where the product spells `rule` outside its home."""
    what, home, anywhere, near, close, texts = rule
    home_file = Path(home.__file__).resolve()
    texts = [_duration(t) for t in texts]
    found = []
    for p in sources:
        if p.resolve() == home_file:
            continue
        spelled, strings = _read(p)
        for n, v, names in spelled:
            if v in anywhere or (v in close and any(re.search(near, x, re.IGNORECASE) for x in names)):
                found.append(f"{where(p)}:{n.lineno} ({v})")
        found += [f"{where(p)}:{n.lineno} ({n.value!r})" for n in strings if any(t.search(n.value) for t in texts)]
    for p in scripts:
        for i, code in js_code_lines(p):
            if (any(_js_number(v).search(code) for v in anywhere)
                    or (near and re.search(near, code, re.IGNORECASE) and any(_js_number(v).search(code) for v in close))
                    or any(t.search(code) for t in texts)):
                found.append(f"{where(p)}:{i}")
    return sorted(set(found))


@pytest.mark.parametrize("rule", RULES, ids=[r[0] for r in RULES])
def test_each_rule_and_limit_has_one_home(rule):
    assert second_homes(rule, list(python_sources()), page_scripts()) == [], f"{rule[0]} outside {rule[1].__name__}"


# A clock's time as m:ss (25:00, -1:05) is static/clocktext.js's `clockText`, imported by the
# script of every console page that shows one (ready.js had its own `mmss`, the paperless drawer its
# own count), the public page too: its folder of files (hall.console.publichall.public.PAGE_FILES) carries clocktext.js.
TIME_FORMAT = re.compile(r"%\s*60\)\.padStart\(2")


def outside(home: str, pattern: re.Pattern, scripts) -> list[str]:
    """Where a script other than `home` has code matching `pattern`, as file:line."""
    return [f"{where(p)}:{i}" for p in scripts if p.name != home for i, code in js_code_lines(p) if pattern.search(code)]


def time_formats_outside_clocktext_js(scripts) -> list[str]:
    return outside("clocktext.js", TIME_FORMAT, scripts)


def imported(home: str, pages) -> None:
    """Each (page, script) of `pages` loads its script as a module, which imports `home` (by relative
    address: the public page's folder carries both; tests/test_page_modules.py)."""
    static = ROOT / "hall" / "console" / "static"
    for page, script in pages:
        html = (static / page).read_text(encoding="utf-8")
        src = script if page == "public.html" else f"/static/{script}"
        assert f'<script type="module" src="{src}"></script>' in html, page
        assert re.search(rf'^import {{[^}}]*}} from "\./{re.escape(home)}";$', (static / script).read_text(encoding="utf-8"), re.M), script


def test_one_script_formats_a_clocks_time_and_the_pages_import_it(tmp_path):
    static = ROOT / "hall" / "console" / "static"
    assert time_formats_outside_clocktext_js(page_scripts()) == []
    assert TIME_FORMAT.search((static / "clocktext.js").read_text(encoding="utf-8"))
    imported("clocktext.js", (("index.html", "app.js"), ("ready.html", "ready.js"), ("public.html", "public.js"),
                                  ("rules.html", "rules.js")))
    bad = tmp_path / "ready.js"
    bad.write_text('function mmss(ms) { return `${Math.floor(ms / 60000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, "0")}`; }\n')
    assert time_formats_outside_clocktext_js([bad]) == ["ready.js:1"]


# A POST from a console page is static/request.js's `post` (the session's CSRF token, a 403 asked
# again once, a 401 to the login page), imported by the scripts of every page that posts: the
# Devices and readiness pages had their own, without the 403's second try.
CSRF_FETCH = re.compile(r"""fetch\(\s*["'`]/api/csrf""")


def csrf_fetches_outside_request_js(scripts) -> list[str]:
    return [f"{where(p)}:{i}" for p in scripts if p.name != "request.js"
            for i, code in js_code_lines(p) if CSRF_FETCH.search(code) or re.search(r"\bfunction post\(", code)]


def test_one_script_posts_with_the_csrf_token_and_the_pages_import_it(tmp_path):
    static = ROOT / "hall" / "console" / "static"
    assert csrf_fetches_outside_request_js(page_scripts()) == []
    imported("request.js", (("index.html", "app.js"), ("devices.html", "devices.js"), ("ready.html", "ready.js"), ("login.html", "login.js"),
                            ("rules.html", "rules.js")))
    bad = tmp_path / "ready.js"
    bad.write_text('async function post(path, payload) {\n  csrf = (await (await fetch("/api/csrf")).json()).csrf;\n}\n')
    assert csrf_fetches_outside_request_js([bad]) == ["ready.js:1", "ready.js:2"]


# The [hall] section's keys (a clock's clock.toml, a station's station.toml): hall/net/config.py says
# them, and the join key and what may stand beside it; the clock's hall output, the station and the
# station's config check import them (each once had its own set, and its own error text).
HALL_KEY_SETS = ({"credentials", "outbox"}, {"join", "outbox"})


def hall_keys_outside_config_py(sources) -> list[str]:
    from rackside.hall.net import config as hall_config

    home = Path(hall_config.__file__).resolve()
    found = []
    for p in sources:
        if p.resolve() == home:
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
                spelled = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                if any(keys <= spelled for keys in HALL_KEY_SETS):
                    found.append(f"{where(p)}:{node.lineno}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "allowed are join, outbox" in node.value:
                found.append(f"{where(p)}:{node.lineno}")
    return sorted(set(found))


def test_only_hall_net_config_says_the_hall_sections_keys(tmp_path):
    assert hall_keys_outside_config_py(list(python_sources())) == []
    bad = tmp_path / "station.py"
    bad.write_text('unknown = sorted(set(table) - {"join", "outbox"})\n'
                   '_KEYS = {"hall": {"url", "hall", "station", "credentials", "outbox", "join"}}\n'
                   'msg = f"[hall] has unknown key {k!r} beside join: allowed are join, outbox"\n')
    assert hall_keys_outside_config_py([bad]) == ["station.py:1", "station.py:2", "station.py:3"]
    # the lines the director reads are as they were
    from rackside.hall.net.config import HallConfigError, check_join_keys, from_table

    with pytest.raises(HallConfigError, match=r"^\[hall\] has unknown key 'url' beside join: allowed are join, outbox$"):
        check_join_keys({"join": "auto", "url": "mqtt://h"})
    with pytest.raises(HallConfigError, match=r"^\[hall\] has unknown key 'station': allowed keys are credentials, hall, join, outbox, table, url$"):
        from_table({"station": "1"}, "table")
    with pytest.raises(HallConfigError, match=r"^\[hall\] has unknown key 'table': allowed keys are credentials, hall, join, outbox, station, url$"):
        from_table({"table": 1}, "station")


def test_from_table_refuses_join_as_an_unknown_key(tmp_path):
    # join is read before from_table is (firmware.cli, hall.device.station): a [hall] reaching it with
    # join (`join = ""`, or join beside credentials) is refused as before the keys were defined once
    from rackside.hall.net.config import HallConfigError, from_table
    from rackside.kiosk.station_config import parse_config

    for device, allowed in (("table", "credentials, hall, join, outbox, table, url"),
                            ("station", "credentials, hall, join, outbox, station, url")):
        for table in ({"join": ""}, {"join": "auto", "credentials": str(tmp_path / "c.toml")}):
            with pytest.raises(HallConfigError, match=rf"^\[hall\] has unknown key 'join': allowed keys are {allowed}$"):
                from_table(table, device)
    # station.toml's check still takes join (`rackside hall station` reads it before from_table)
    parse_config({"hall": {"join": "auto", "outbox": "o.sqlite"}})


# The clock core's forfeit endings are words of the wire (a result's `ending`): the console reads
# them from game.clock.Ending and the page from the snapshot (`lateness_endings`).
FORFEIT_ENDINGS = {e.value for e in clock.Ending if "forfeit" in e.value}


def ending_names_outside_clock_py(sources, scripts) -> list[str]:
    home = Path(clock.__file__).resolve()
    found = []
    for p in sources:
        if p.resolve() != home:
            found += [f"{where(p)}:{n.lineno}" for n in _read(p)[1] if n.value in FORFEIT_ENDINGS]
    quoted = [re.compile(rf"[\"'`]{re.escape(v)}[\"'`]") for v in FORFEIT_ENDINGS]
    for p in scripts:
        found += [f"{where(p)}:{i}" for i, code in js_code_lines(p) if any(q.search(code) for q in quoted)]
    return found


def test_only_the_clock_core_names_its_forfeit_endings(tmp_path):
    assert ending_names_outside_clock_py(list(python_sources()), page_scripts()) == []
    bad, page = tmp_path / "results.py", tmp_path / "app.js"
    bad.write_text('OVERTIME_FORFEIT = "overtime forfeit"\nnote = f"overtime forfeit by side {f}"\n')
    page.write_text('const lateness = ["lateness forfeit", "optional forfeit"].includes(r.ending);\n')
    assert ending_names_outside_clock_py([bad], [page]) == ["results.py:1", "app.js:1"]


# A second copy of each, as it was (or could be) written: every check finds its own, on each line
# marked "# copy" (and on every line of the script).
PLANTED = {
    "the table limit": ("MAX_TABLES = 999  # copy\n", "let maxTable = 999;\n"),
    "WESPA's game time (5.3.5)": (
        "def demo(game_time_s: int = 1500): ...  # copy\nGAME = 25 * 60_000  # copy\n"
        'new_game = {"game_time": "25:00"}  # copy\n', "const ms = round.game_time_ms || 1500000;\n"),
    "WESPA's time penalty (5.3.2)": ("def penalty_points(overtime_s, per_minute=10): ...  # copy\n", ""),
    "WESPA's overtime forfeit (5.3.3)": (
        'KEYS = {"forfeit_overtime": ("duration", 60, 1199, "10:00")}  # copy\nLIMIT_MS = 600_000  # copy\n', ""),
    "WESPA's lateness margin (2.3.6(a))": ("LATENESS_MARGIN = 75  # copy\n", ""),
    "WESPA's optional forfeit (2.3.4)": ('KEYS = {"optional_forfeit_below": ("duration", 0, 5940, "15:00")}  # copy\n', ""),
    "WESPA's courtesy draw (3.10.6(a))": ('KEYS = {"courtesy_draw_after": ("duration", 1, 600, "1:00")}  # copy\n', ""),
    "the overtime forfeit's penalty points (5.3.3)": ("OVERTIME_FORFEIT_POINTS = 100  # copy\n", ""),
    "TSH's score limits": ("TSH_MAX_SCORE = 1499  # copy\nTSH_MIN_SCORE = -149  # copy\n", ""),
    "identify's longest flash": ('def answer(r):\n    if r.name == "identify":\n        return 1 <= r.args["seconds"] <= 60  # copy\n', ""),
    "the displays' blink period": ("BLINK_NS = 500_000_000  # copy\n", ""),
    "the longest game time and overtime (99:59, 19:59)": ("MAX_TIME_S = 99 * 60 + 59  # copy\nHIGH = 1199  # copy\n", ""),
    "a word's letters": ("MIN_LETTERS = 2  # copy\nMAX_LETTERS = 15  # copy\n", ""),
    "a typed score's bound": ('body["slip"] = [_int(x, "score", -10_000, 10_000) for x in slip]  # copy\n', ""),
    "a call's reason": ('NOTES = {"by": 64, "reason": 200}  # copy\nreply = dict(reason=why[:200])  # copy\n', ""),
    "the rounds of an event": ("MAX_ROUNDS = 200  # copy\n", ""),
}
# ... and none finds the same numbers where they mean something else
INNOCENT = ('EXIT_WAITING = 75\nBURN_S = 600\nlimit = settings.pop("limit", 10_000)\nseconds = int(minutes) * 60 + 15\n'
            'if name == "notice":\n    ok = 0 <= seconds <= 600\nINCREASING_PENALTIES = (5, 5, 10, 20, 30)\n'
            'at = "2026-11-30T10:00:00+00:00"\nDELAY_S = 2\nRATING = 1500\n')
INNOCENT_SCRIPT = "input.max = maxTable;\nreturn Math.ceil(over / 60) * rules.penalty_per_minute;\nconst ms = 25 * 60;\n"


def _lines(found: list[str]) -> set[int]:
    return {int(f.split(":")[1].split()[0]) for f in found}


@pytest.mark.parametrize("rule", RULES, ids=[r[0] for r in RULES])
def test_each_check_finds_a_second_copy(rule, tmp_path):
    code, script = PLANTED[rule[0]]
    bad, page = tmp_path / "copy.py", tmp_path / "copy.js"
    bad.write_text(code)
    page.write_text(script)
    assert _lines(second_homes(rule, [bad], [])) == {i for i, line in enumerate(code.splitlines(), 1) if "# copy" in line}
    assert _lines(second_homes(rule, [], [page])) == set(range(1, len(script.splitlines()) + 1))
    fine, fine_page = tmp_path / "fine.py", tmp_path / "fine.js"
    fine.write_text(INNOCENT)
    fine_page.write_text(INNOCENT_SCRIPT)
    assert second_homes(rule, [fine], [fine_page]) == []


def test_every_rule_has_a_planted_copy():
    assert sorted(PLANTED) == sorted(r[0] for r in RULES)


# A table's class, times and words (OFFLINE, "offline since", a forfeit named, neutralised or a
# challenge, ended) are static/tilestate.js's, imported by the director's page's and the public
# page's scripts (issue 35: the public page had its own derivation, and showed an offline
# clock running): no other script defines them or a tile's label.
DERIVATION = re.compile(r"\bfunction\s+(tileClass|stateWords|remainingAt|forfeitText|recordedText)\b|\"OFFLINE\"|\bconst\s+LABEL\b")


def test_one_script_derives_a_tables_state_and_both_pages_load_it(tmp_path):
    static = ROOT / "hall" / "console" / "static"
    assert outside("tilestate.js", DERIVATION, page_scripts()) == []
    assert len(DERIVATION.findall((static / "tilestate.js").read_text(encoding="utf-8"))) == 7
    imported("tilestate.js", (("index.html", "app.js"), ("public.html", "public.js")))
    from rackside.hall.console.publichall import public
    assert {"clocktext.js", "tilestate.js"} <= set(public.PAGE_FILES)  # written beside the page in the folder too
    bad = tmp_path / "public.js"
    bad.write_text('function classOf(t) { if (t.offline) return "OFFLINE"; }\n')
    assert outside("tilestate.js", DERIVATION, [bad]) == ["public.js:1"]


# The director's one scope and the time a director's action is stamped with are common/guard.py's
# (`DIRECTOR`, `now_iso`): five console modules each said `DIRECTOR = "director"`, three had their own
# `_now_iso`, and the rules page stamped its audit rows to the second while the rest did to the ms.
SCOPE = re.compile(r'^\s*DIRECTOR\s*=\s*"director"', re.M)
STAMP = re.compile(r"datetime\.now\(timezone\.utc\)\.isoformat\(")


def scope_and_stamp_outside_guard(sources) -> list[str]:
    from rackside.hall.console.common import guard
    home = Path(guard.__file__).resolve()
    found = []
    for p in sources:
        if p.resolve() == home or "console" not in p.parts:
            continue
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if SCOPE.search(line) or STAMP.search(line):
                found.append(f"{where(p)}:{i}")
    return found


def test_only_the_guard_names_the_directors_scope_and_stamps_an_action(tmp_path):
    assert scope_and_stamp_outside_guard(list(python_sources())) == []
    planted = tmp_path / "console" / "copy.py"
    planted.parent.mkdir()
    planted.write_text('DIRECTOR = "director"\nstamp = datetime.now(timezone.utc).isoformat(timespec="seconds")\nfine = 1\n')
    assert scope_and_stamp_outside_guard([planted]) == [f"{where(planted)}:1", f"{where(planted)}:2"]
