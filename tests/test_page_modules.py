"""The page's scripts are ES modules with no shared globals (issue 37 item 3): every console page
(hall/console/static/*.html) and the public page load one script as a module, which imports what it
uses from the others by relative address (the public page's folder carries tilestate.js and
clocktext.js beside public.js); no script uses a name another declares at its top level without
importing it, none sets a property of the window, and every import names an export. Five scripts
shared globals before (a script's top-level names were every script's): divisions.js read app.js's
`round` and `tables`, app.js called divisions.js's and paperless.js's functions, in load order.

A small scanner, no parser dependency: comments, strings, template text and regular expressions
blanked, then the names declared, used, imported and exported (over-inclusive where it cannot tell:
a name a script declares anywhere, a parameter too, counts as its own). A browser test that loads
each page (tests/test_console_*.py, `page.errors`) catches what it cannot see.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parent.parent / "hall" / "console" / "static"

REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {""}
KEYWORDS_BEFORE_REGEX = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "instanceof"}


def blank(src: str) -> str:
    """The code with every comment, string, template's text and regex replaced by spaces (a
    template's ${...} kept as code); lines and columns stay where they were."""
    out = []
    i, n = 0, len(src)
    stack = []  # open template literals: brace depth at each ${
    depth = 0
    last = ""  # the last significant token (for a / that starts a regex)
    while i < n:
        c = src[i]
        if stack and c == "}" and depth == stack[-1]:
            stack.pop()
            out.append(" ")
            i += 1
            i = _template(src, i, out, stack, depth)
            last = "x"
            continue
        if c == "/" and src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j; continue
        if c == "/" and src.startswith("/*", i):
            j = src.find("*/", i + 2) + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j])); i = j; continue
        if c in "'\"":
            j = i + 1
            while src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(" " * (j + 1 - i)); i = j + 1; last = "x"; continue
        if c == "`":
            out.append(" ")
            i = _template(src, i + 1, out, stack, depth)
            last = "x"
            continue
        if c == "/" and (last in REGEX_AFTER or last in KEYWORDS_BEFORE_REGEX):
            j, cls = i + 1, False
            while True:
                ch = src[j]
                if ch == "\\": j += 2; continue
                if ch == "[": cls = True
                elif ch == "]": cls = False
                elif ch == "/" and not cls: break
                j += 1
            j += 1
            while j < n and src[j].isalpha(): j += 1
            out.append(" " * (j - i)); i = j; last = "x"; continue
        m = re.match(r"[A-Za-z_$][\w$]*", src[i:i + 80])
        if m:
            out.append(m.group()); i += len(m.group()); last = m.group(); continue
        if c == "{": depth += 1
        elif c == "}": depth -= 1
        if not c.isspace():
            last = c if not c.isdigit() else "x"
        out.append(c); i += 1
    return "".join(out)


def _template(src, i, out, stack, depth):
    """Blank a template literal's text from i up to its end or a ${ (pushed); returns the new i."""
    while True:
        ch = src[i]
        if ch == "\\": out.append("  "); i += 2; continue
        if ch == "`": out.append(" "); return i + 1
        if src.startswith("${", i):
            out.append("  "); stack.append(depth); return i + 2
        out.append("\n" if ch == "\n" else " "); i += 1


IDENT = r"[A-Za-z_$][\w$]*"


def top_level(code: str) -> set[str]:
    """Names the script declares at its top level (function, class, let, const, var)."""
    names, depth, line_start = set(), 0, 0
    flat = []
    for ch in code:
        if ch == "{": depth += 1
        flat.append(ch if depth == 0 else (" " if ch != "\n" else "\n"))
        if ch == "}": depth -= 1
    top = "".join(flat)
    for m in re.finditer(rf"\b(?:async\s+)?(?:function\*?|class)\s+({IDENT})", top):
        names.add(m.group(1))
    for m in re.finditer(rf"\b(?:let|const|var)\s+({IDENT}(?:\s*=[^;,\n]*)?(?:\s*,\s*{IDENT}(?:\s*=[^;,\n]*)?)*)", top):
        names.update(re.findall(rf"(?:^|,)\s*({IDENT})", m.group(1)))
    return names


def declared(code: str) -> set[str]:
    """Every name the script declares anywhere: functions, classes, variables (destructuring too),
    parameters and catch bindings (over-inclusive: a name it may shadow)."""
    names = set(re.findall(rf"\b(?:function\*?|class)\s+({IDENT})", code))
    for m in re.finditer(rf"\b(?:let|const|var)\s+({IDENT}|\[[^\]]*\]|\{{[^}}]*\}})", code):
        names.update(re.findall(IDENT, m.group(1)))
    for m in re.finditer(rf"\bfunction\s*\*?\s*{IDENT}?\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)", code):
        names.update(re.findall(IDENT, m.group(1)))
    for m in re.finditer(r"\(([^()]*)\)\s*=>", code):
        names.update(re.findall(IDENT, m.group(1)))
    names.update(re.findall(rf"({IDENT})\s*=>", code))
    names.update(re.findall(rf"\bcatch\s*\(\s*({IDENT})", code))
    return names


def uses(code: str) -> set[str]:
    """Every name the script reads or writes: not a property (after one dot), not an object's key."""
    found = set()
    for m in re.finditer(IDENT, code):
        before = code[:m.start()].rstrip()
        if before.endswith(".") and not before.endswith("..."):
            continue
        after = code[m.end():].lstrip()
        if after.startswith(":") and not after.startswith("::") and before[-1:] in ("{", ","):
            continue
        found.add(m.group())
    return found


def imports(code_raw: str) -> dict[str, set[str]]:
    """{module file name: names imported from it} (import {a, b as c} from "./x.js")."""
    out = {}
    for m in re.finditer(r"""\bimport\s*\{([^}]*)\}\s*from\s*["']\./([\w.-]+)["']""", code_raw):
        out.setdefault(m.group(2), set()).update(re.findall(rf"(?:^|,)\s*({IDENT})", m.group(1)))
    return out


def exports(code: str) -> set[str]:
    return set(re.findall(rf"\bexport\s+(?:async\s+)?(?:function\*?|class|let|const|var)\s+({IDENT})", code))


def shared_globals(scripts: dict[str, str]) -> list[str]:
    """'B uses NAME (declared by A)' for each name that scripts other than B declare at their top
    level and B uses without importing it from one of them, nor declaring its own."""
    code = {name: blank(src) for name, src in scripts.items()}
    tops = {name: top_level(c) for name, c in code.items()}
    found = []
    for b, cb in code.items():
        used = uses(cb) - declared(cb)
        got = imports(scripts[b])
        homes: dict[str, list[str]] = {}
        for a, names in tops.items():
            if a != b:
                for name in names & used:
                    homes.setdefault(name, []).append(a)
        for name, where in sorted(homes.items()):
            if not any(name in got.get(a, set()) for a in where):
                found.append(f"{b} uses {name} (declared by {', '.join(sorted(where))})")
    return found


def window_properties(scripts: dict[str, str]) -> list[str]:
    """'B sets window.X': a property of the global object set by a script (a global by another name)."""
    found = []
    for name, src in scripts.items():
        for m in re.finditer(rf"\b(?:window|globalThis|self)\s*\.\s*({IDENT})\s*=(?!=)", blank(src)):
            found.append(f"{name} sets window.{m.group(1)}")
    return found


def missing_exports(scripts: dict[str, str]) -> list[str]:
    """'B imports X from A, which does not export it' (or A is not a page script)."""
    found = []
    for b, src in scripts.items():
        for a, names in imports(src).items():
            have = exports(blank(scripts[a])) if a in scripts else set()
            found += [f"{b} imports {n} from {a}, which does not export it" for n in sorted(names - have)]
    return found


SCRIPT_TAG = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S)


def classic_scripts(pages: dict[str, str]) -> list[str]:
    """'page: <script ...>' for every script of a page that is not a module loaded from a file."""
    return [f"{page}: <script{attrs}>" for page, html in pages.items() for attrs, inline in SCRIPT_TAG.findall(html)
            if 'type="module"' not in attrs or "src=" not in attrs or inline.strip()]


def read(folder: Path, pattern: str) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob(pattern))}


def test_every_page_loads_its_scripts_as_modules():
    pages = read(STATIC, "*.html")
    assert len(pages) >= 7 and classic_scripts(pages) == []
    assert all('<script type="module"' in html for html in pages.values())


def test_no_script_shares_a_global_with_another():
    scripts = read(STATIC, "*.js")
    assert shared_globals(scripts) == []
    assert window_properties(scripts) == []
    assert missing_exports(scripts) == []


@pytest.mark.skipif(not shutil.which("node"), reason="no node to parse the scripts with")
def test_every_script_parses_as_a_module(tmp_path):
    for name, src in read(STATIC, "*.js").items():
        copy = tmp_path / (name[:-3] + ".mjs")
        copy.write_text(src, encoding="utf-8")
        done = subprocess.run(["node", "--check", str(copy)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (name, done.stderr[-500:])


def test_the_checks_see_a_shared_global(tmp_path):
    """As the page was: classic scripts, divisions.js reading app.js's `round` and calling its `toast`."""
    old = {"app.js": 'let round = {};\nfunction toast(text) { return `${text} /x/`; }\nconst re = /[/]/g;\n',
           "divisions.js": '// round and toast: app.js\nfunction roundText() { toast("round " + round.number); }\n'
                           'function other(n) { return { round: n }; }\n',
           "paperless.js": 'window.checkins = new Map();\nimport { toast } from "./app.js";\nfunction f() { toast({ round: 1 }); }\n'}
    assert shared_globals(old) == ["divisions.js uses round (declared by app.js)", "divisions.js uses toast (declared by app.js)"]
    assert window_properties(old) == ["paperless.js sets window.checkins"]
    assert missing_exports(old) == ["paperless.js imports toast from app.js, which does not export it"]
    assert classic_scripts({"index.html": '<script src="/static/app.js"></script>\n<script type="module">go()</script>'}) == \
        ['index.html: <script src="/static/app.js">', 'index.html: <script type="module">']
    fixed = {"app.js": old["app.js"].replace("let round", "export let round").replace("function toast", "export function toast"),
             "divisions.js": 'import { round, toast } from "./app.js";\n' + old["divisions.js"]}
    assert shared_globals(fixed) == [] and missing_exports(fixed) == []
