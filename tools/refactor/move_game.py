#!/usr/bin/env python3
"""Move the pure rules of the game from firmware/ to game/ (import name `rackside.game`), issue 37 item 1.

Run from anywhere inside the checkout: `python3 tools/refactor/move_game.py` (then review `git diff`
and commit). It is idempotent: on a tree already moved it changes nothing and says so. It:

1. `git mv`s each module of MOVED from firmware/ to game/, writes game/__init__.py and the
   `rackside/game -> ../game` link (as rackside/firmware -> ../firmware), and adds
   `rackside.game` to pyproject.toml's packages;
2. rewrites every mention of a moved module in the tracked text files (product code, tests,
   bench/, docs/ and docs/tools/, deploy/): `rackside.firmware.X` and bare `firmware.X` in code,
   strings and prose, `from rackside.firmware import X, Y` (split when it names modules that stay),
   relative `.X` / `..firmware.X` imports, and the paths `firmware/X.py`,
   `"firmware" / "X.py"`;
3. adds "game" to the literal lists of subsystem folders in tests/ (a list naming "firmware" and
   "kiosk" as strings).

Only the modules of MOVED are touched; `firmware/clock.toml` and the modules that stay
(runner, journal_writer, persist, ...) keep their names. Why these modules: docs/architecture.md.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from _tree import git, text_files, top

# The pure rules of the game, and the pure cores they need that are not the clock device's.
# Keep in step with docs/architecture.md ("The game") and tests/test_architecture.py (GAME).
MOVED = ("clock", "call", "checkin", "slip", "table", "rules_table", "render", "messages", "journal", "replay")
SELF = "tools/refactor/move_game.py"
INIT = '"""The game: the pure rules of a WESPA game at the table (the clock, check-in, the director\'s call, the\nresult slip, the table composing them, the [clock] rules table) and the game\'s record (the journal\'s\nformat, its replay). Imports nothing of Rackside but the leaves (docs/architecture.md, "The game").\nThe clock program that runs on the Pi is firmware/; the hall speaks the game through hall/wire/."""\n'

ALT = "|".join(MOVED)


def split_names(names: str) -> tuple[list[str], list[str]]:
    """`a, b as c` -> (moved, kept) alias texts."""
    moved, kept = [], []
    for part in (p.strip() for p in names.replace("\n", " ").split(",")):
        if not part:
            continue
        (moved if part.split()[0] in MOVED else kept).append(part)
    return moved, kept


def rewrite_from_import(m: re.Match, stay: str) -> str:
    """`from <pkg> import a, b` with some of a, b moved: one line per package."""
    indent, names, tail = m.group("indent"), m.group("names") or m.group("pnames"), m.group("tail") or ""
    moved, kept = split_names(names)
    if not moved:
        return m.group(0)
    lines = []
    if kept:
        lines.append(f"{indent}from {stay} import {', '.join(kept)}")
    lines.append(f"{indent}from rackside.game import {', '.join(moved)}")
    return "\n".join(lines) + tail


def rewrite(text: str, rel: str) -> str:
    # from rackside.firmware import a, b   (one line, or one parenthesised group)
    pattern = r"(?m)^(?P<indent>[ \t]*)from {pkg} import (?:\((?P<pnames>[^)]*)\)|(?P<names>[^\n(#]*?))(?P<tail>[ \t]*(?:#[^\n]*)?)$"
    text = re.sub(pattern.format(pkg=r"rackside\.firmware"), lambda m: rewrite_from_import(m, "rackside.firmware"), text)
    # relative: from ..firmware import a / from ..firmware.X import (from outside firmware/)
    text = re.sub(pattern.format(pkg=r"\.\.+firmware"), lambda m: rewrite_from_import(m, m.group(0).split()[1]), text)
    text = re.sub(rf"(?m)^([ \t]*from )\.\.+firmware\.({ALT})\b", r"\1rackside.game.\2", text)
    if rel.startswith("firmware/") and rel.endswith(".py"):  # a module that stays, importing a moved one relatively
        text = re.sub(rf"(?m)^([ \t]*from )\.({ALT})\b", r"\1rackside.game.\2", text)
        text = re.sub(pattern.format(pkg=r"\."), lambda m: rewrite_from_import(m, "."), text)
    if rel.startswith("game/") and rel.endswith(".py"):  # a moved module importing one that stays, relatively
        text = re.sub(rf"(?m)^([ \t]*from )\.(?!(?:{ALT})\b)(\w+)", r"\1rackside.firmware.\2", text)
        text = re.sub(r"(?m)^([ \t]*from )\. import", r"\1rackside.game import", text)  # a moved one's siblings
    # dotted names: rackside.firmware.X, and bare firmware.X (not config.firmware.X)
    text = re.sub(rf"\brackside\.firmware\.({ALT})\b(?!\.toml)", r"rackside.game.\1", text)
    text = re.sub(rf"(?<![\w.]){'firmware'}\.({ALT})\b(?![.-]toml)", r"game.\1", text)
    # paths: firmware/X.py, rackside/firmware/X.py, "firmware" / "X.py"
    text = re.sub(rf"(?<![\w.-])firmware/({ALT})\.py\b", r"game/\1.py", text)
    text = re.sub(rf"""(["'])firmware\1(\s*/\s*)(["'])({ALT})\.py\3""", r"\1game\1\2\3\4.py\3", text)
    # the tests' lists of subsystem folders
    if rel.startswith("tests/") and rel.endswith(".py"):
        text = re.sub(r"""(?P<q>["'])firmware(?P=q)(?P<sep>,[ \t]*)(?![ \t]*["']game["'])(?=[^\n]*(?P=q)kiosk(?P=q))""",
                      lambda m: f"{m.group(0)}{m.group('q')}game{m.group('q')}{m.group('sep')}", text)
    return text


def main() -> int:
    root = top()
    changed: list[str] = []
    (root / "game").mkdir(exist_ok=True)
    for name in MOVED:
        src, dst = root / "firmware" / f"{name}.py", root / "game" / f"{name}.py"
        if src.exists() and not dst.exists():
            git(root, "mv", f"firmware/{name}.py", f"game/{name}.py")
            changed.append(f"moved firmware/{name}.py -> game/{name}.py")
        elif src.exists():
            sys.exit(f"both firmware/{name}.py and game/{name}.py exist: merge them by hand first")
    init = root / "game" / "__init__.py"
    if not init.exists():
        init.write_text(INIT, encoding="utf-8")
        git(root, "add", "game/__init__.py")
        changed.append("wrote game/__init__.py")
    link = root / "rackside" / "game"
    if not link.is_symlink():
        link.symlink_to("../game")
        git(root, "add", "rackside/game")
        changed.append("linked rackside/game -> ../game")
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    if '"rackside.game"' not in text:
        text = text.replace('"rackside.firmware", ', '"rackside.firmware", "rackside.game", ', 1)
        if '"rackside.game"' not in text:
            sys.exit("pyproject.toml: no \"rackside.firmware\", in the packages list to add rackside.game after")
        pyproject.write_text(text, encoding="utf-8")
        changed.append("pyproject.toml: packages += rackside.game")
    for rel, path, old in text_files(root, SELF):
        new = rewrite(old, rel)
        if new != old:
            path.write_text(new, encoding="utf-8")
            changed.append(f"rewrote {rel}")
    print("\n".join(changed) if changed else "nothing to do: the game is already in game/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
