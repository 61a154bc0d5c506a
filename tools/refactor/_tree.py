"""What the refactoring scripts here share: git in the checkout, and its tracked text files.

A script run as `python3 tools/refactor/<script>.py` has this folder first on its path."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Iterator

TEXT_SUFFIXES = {".py", ".md", ".toml", ".sh", ".txt", ".svg", ".js", ".html", ".css", ".cfg", ".service", ".ini", ".yml",
                 ".yaml", ".nft"}
TEXT_NAMES = {"bin/rackside", ".ci/run"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def top() -> Path:
    """The checkout the current folder is in."""
    return Path(git(Path.cwd(), "rev-parse", "--show-toplevel").strip())


def text_files(root: Path, skip: str) -> Iterator[tuple[str, Path, str]]:
    """(path in the repository, path, text) of each tracked UTF-8 text file but `skip` (the script itself)."""
    for rel in git(root, "ls-files").splitlines():
        path = root / rel
        if rel == skip or path.is_symlink() or not path.is_file():
            continue
        if path.suffix not in TEXT_SUFFIXES and rel not in TEXT_NAMES:
            continue
        try:
            yield rel, path, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
