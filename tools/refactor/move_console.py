#!/usr/bin/env python3
"""Put the director's console (hall/console/) into feature packages, issue 37 item 3.

Run from anywhere inside the checkout: `python3 tools/refactor/move_console.py` (then review
`git diff` and commit). It is idempotent: on a tree already moved it changes nothing and says so;
on a tree where other files changed since, it moves what is still at its old place and rewrites
every mention it finds. It:

1. `git mv`s each module of PACKAGES from hall/console/X.py to hall/console/<package>/X.py and
   writes each package's __init__.py (static/ and cli.py stay where they are), and adds the
   packages to pyproject.toml's list (a package is never named as a module: `scoring/results.py`);
2. rewrites the moved modules' relative imports (`from . import a, b`, `from .x import Y`, at
   any indent), split by package (`from ..common import limits`, `from .results import ...` inside scoring/);
3. rewrites every mention of a moved module in the tracked text files (product code, tests, bench/,
   docs/ and docs/tools/, deploy/): `rackside.hall.console.X` and `hall.console.X` (dotted, in
   code, strings and prose), `from rackside.hall.console import a, b` (split by package), the
   paths `hall/console/X.py` and `console/X.py`, and `"console" / "X.py"`;
4. points the moved modules' `Path(__file__).parent / "static"` at the static/ folder that stays.

Why these packages, and who may import whom: docs/architecture.md ("The console by feature"),
held by tests/test_architecture.py (CONSOLE_PACKAGES, which must name the same packages as here).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from _tree import git, text_files, top

# package -> (its modules, its __init__'s docstring). Keep in step with tests/test_architecture.py.
PACKAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "common": (("limits", "guard"),
               "What every part of the console shares and nothing else: every bound (limits) and the HTTP\n"
               "edge's checks (guard: a request's body, a refusal, the listener's caps)."),
    "scoring": (("results", "resultstore", "tsh", "jsliteral", "tshout", "tshlive", "standings", "hallplan"),
                "Results and TSH: a result worked out and recorded, the results store and its audit, TSH's files\n"
                "read and written (tourney.js live), the seating plan and the standings."),
    "state": (("hallstate", "event", "contract", "checkin", "health", "requests"),
              "The hall's state every feature reads: the tables (each device message checked), the event (its\n"
              "divisions, seating and results over the store), who sits where, health, a request's checks."),
    "tableside": (("paperless", "signedslips", "incidents"),
                  "The paperless table (issue 27): check-ins, the director's calls, the signed slips."),
    "fleet": (("devices", "updates", "readiness"),
                "The devices: the Devices page (the fleet), updates from the console, the readiness page."),
    "publichall": (("public", "publicserve"),
               "The public hall: its documents, its own listener and its folder."),
    "resultsdesk": (("resultspage",),
                    "The results desk: a result recorded, TSH's files imported, the exports and the audit."),
    "rules": (("rulespage",),
              "The event's rules page (issue 38)."),
    "shell": (("app", "auth", "serve", "transport", "bridge", "hub", "config", "eventdir", "ready_cli"),
              "The shell: the web app that composes the features' routes and gives each its services, the\n"
              "login and sessions, the broker bridge, the pages' streams, the config and the event's folder,\n"
              "and running it all under uvicorn."),
    "demohall": (("demo", "sim", "simfleet"),
             "`rackside hall demo`: simulated tables speaking the wire, and a console to watch them."),
}
PACKAGE_OF = {m: p for p, (mods, _) in PACKAGES.items() for m in mods}
assert not set(PACKAGES) & set(PACKAGE_OF), "a package named as a module would make a moved mention read as an unmoved one"
CONSOLE = "hall/console"
DOTTED = "rackside.hall.console"
SELF = "tools/refactor/move_console.py"
ALT = "|".join(sorted(PACKAGE_OF, key=len, reverse=True))
# No package is named as a module is (`scoring`, not `results`): a moved mention,
# `hall.console.scoring.results`, never reads as an unmoved one, so a second run finds nothing to do.
IMPORT = r"(?m)^(?P<indent>[ \t]*)from (?P<pkg>{pkg}) import (?:\((?P<pnames>[^)]*)\)|(?P<names>[^\n(#]*?))(?P<tail>[ \t]*(?:#[^\n]*)?)$"


def by_package(names: str) -> dict[str | None, list[str]]:
    """`a, b as c` -> {package: alias texts}; None: names that are not moved modules."""
    out: dict[str | None, list[str]] = {}
    for part in (p.strip() for p in names.replace("\n", " ").split(",")):
        if part:
            out.setdefault(PACKAGE_OF.get(part.split()[0]), []).append(part)
    return out


def split_import(m: re.Match, where: str | None) -> str:
    """`from <console> import a, b` naming moved modules: one line per package. `where`: the package
    of the module being rewritten (None: a module outside the console's packages), for relative imports."""
    indent, names, tail = m.group("indent"), m.group("names") or m.group("pnames"), m.group("tail") or ""
    groups = by_package(names)
    if set(groups) == {None}:
        return m.group(0)
    relative = m.group("pkg") == "."
    lines = []
    for package, parts in groups.items():
        if package is None:
            source = m.group("pkg")
        elif not relative:
            source = f"{DOTTED}.{package}"
        elif where is None:  # hall/console/cli.py, beside the packages
            source = f".{package}"
        else:
            source = "." if package == where else f"..{package}"
        lines.append(f"{indent}from {source} import {', '.join(parts)}")
    return "\n".join(lines) + tail


def relative_module(m: re.Match, where: str | None) -> str:
    """`from .x import Y` in the console, x moved: from its package, relative."""
    package = PACKAGE_OF[m.group(2)]
    source = f".{package}." if where is None else ("." if package == where else f"..{package}.")
    return f"{m.group(1)}{source}{m.group(2)}"


def rewrite_console_module(text: str, where: str | None) -> str:
    """A module of the console (moved, or cli.py): its relative imports."""
    text = re.sub(rf"(?m)^([ \t]*from )\.({ALT})\b(?=[ .])", lambda m: relative_module(m, where), text)
    text = re.sub(IMPORT.format(pkg=r"\."), lambda m: split_import(m, where), text)
    if where is not None:  # the page's files stay in hall/console/static
        text = re.sub(r"""Path\(__file__\)\.parent / (["'])static\1""", r"Path(__file__).parent.parent / \1static\1", text)
    return text


def rewrite(text: str) -> str:
    """Every mention of a moved module, anywhere."""
    text = re.sub(IMPORT.format(pkg=re.escape(DOTTED)), lambda m: split_import(m, None), text)
    # dotted: rackside.hall.console.X and hall.console.X (in code, strings, prose)
    text = re.sub(rf"(?<![\w])(hall\.console)\.({ALT})\b", lambda m: f"{m.group(1)}.{PACKAGE_OF[m.group(2)]}.{m.group(2)}", text)
    # paths: hall/console/X.py, console/X.py, "console" / "X.py"
    text = re.sub(rf"(?<![\w.-])((?:hall/)?console)/({ALT})\.py\b", lambda m: f"{m.group(1)}/{PACKAGE_OF[m.group(2)]}/{m.group(2)}.py", text)
    text = re.sub(rf"""(["'])console\1(\s*/\s*)(["'])({ALT})\.py\3""",
                  lambda m: f"{m.group(1)}console{m.group(1)}{m.group(2)}{m.group(3)}{PACKAGE_OF[m.group(4)]}{m.group(3)} / "
                            f"{m.group(3)}{m.group(4)}.py{m.group(3)}", text)
    return text


def main() -> int:
    root = top()
    console = root / CONSOLE
    changed: list[str] = []
    loose = sorted(p.name for p in console.glob("*.py") if p.stem not in ("__init__", "cli") and p.stem not in PACKAGE_OF)
    if loose:  # a module added since the list was written: it goes where it fits, by hand, before anything moves
        sys.exit(f"{', '.join(loose)} in {CONSOLE}/ is in no package: add it to PACKAGES here (and to the packages in "
                 "tests/test_architecture.py if it is a new one) and run again; nothing was changed")
    for package, (modules, doc) in PACKAGES.items():
        folder = console / package
        folder.mkdir(exist_ok=True)
        init = folder / "__init__.py"
        if not init.exists():
            init.write_text(f'"""{doc}\n\ndocs/architecture.md, "The console by feature"."""\n', encoding="utf-8")
            git(root, "add", str(init.relative_to(root)))
            changed.append(f"wrote {CONSOLE}/{package}/__init__.py")
        for name in modules:
            src, dst = console / f"{name}.py", folder / f"{name}.py"
            if src.exists() and not dst.exists():
                git(root, "mv", f"{CONSOLE}/{name}.py", f"{CONSOLE}/{package}/{name}.py")
                changed.append(f"moved {CONSOLE}/{name}.py -> {CONSOLE}/{package}/{name}.py")
            elif src.exists():
                sys.exit(f"both {CONSOLE}/{name}.py and {CONSOLE}/{package}/{name}.py exist: merge them by hand first")
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    missing = [f'"{DOTTED}.{p}"' for p in PACKAGES if f'"{DOTTED}.{p}"' not in text]
    if missing:
        anchor = f'"{DOTTED}"'
        if anchor not in text:
            sys.exit(f"pyproject.toml: no {anchor} in the packages list to add the console's packages after")
        text = text.replace(anchor, anchor + "".join(f",\n            {m}" for m in missing), 1)
        pyproject.write_text(text, encoding="utf-8")
        changed.append(f"pyproject.toml: packages += {', '.join(missing)}")
    for rel, path, old in text_files(root, SELF):
        new = old
        if rel.startswith(f"{CONSOLE}/") and rel.endswith(".py"):
            parts = Path(rel).relative_to(CONSOLE).parts
            if len(parts) == 2 and parts[0] in PACKAGES:
                new = rewrite_console_module(new, parts[0])
            elif len(parts) == 1 and parts[0] != "__init__.py":
                new = rewrite_console_module(new, None)
        new = rewrite(new)
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(f"rewrote {rel}")
    print("\n".join(changed) if changed else "nothing to do: the console is already in its feature packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
