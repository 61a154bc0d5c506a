"""The screenshot tools' one argument: the folder to write to (docs/screens when none is given)."""

from __future__ import annotations

import argparse
from pathlib import Path


def screens_folder(doc: str | None) -> Path:
    """The folder given, else docs/screens; `--help` says so and the tool writes nothing."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("folder", nargs="?", type=Path, default=Path(__file__).resolve().parents[1] / "screens",
                        help="where the screenshots go (default: docs/screens)")
    return parser.parse_args().folder
