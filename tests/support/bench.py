"""Load a bench/ script as a module, so a test runs the same scenario as the full benchmark on a
smaller scale (bench/ is scripts, not a package)."""

import importlib.util
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent.parent / "bench"


def load_bench(name: str = "bounce"):
    """bench/<name>.py as a fresh module."""
    spec = importlib.util.spec_from_file_location(f"rackside_bench_{name}", BENCH_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name while being built
    spec.loader.exec_module(module)
    return module
