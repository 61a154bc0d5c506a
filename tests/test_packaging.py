"""What `pip install` puts in site-packages: one top-level package, `rackside`, with every subsystem
and its data inside it (issue 8). Built for real, from this checkout's files, with the venv's own
setuptools (no build isolation, nothing downloaded)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    pytest.importorskip("setuptools")
    src = tmp_path_factory.mktemp("src")
    # The files git would commit (tracked, and new ones not ignored), links kept as links: the
    # subsystems are links in rackside/, and the wheel must hold real files for them.
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        origin = ROOT / name
        if not origin.exists() and not origin.is_symlink():
            continue  # deleted in the working tree, not yet committed
        target = src / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            target.symlink_to(origin.readlink())
        else:
            shutil.copy2(origin, target)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "--disable-pip-version-check", "-q", "-w", str(out), str(src)], check=True, capture_output=True)
    (built,) = out.glob("rackside-*.whl")
    return zipfile.ZipFile(built)


def test_the_only_top_level_package_is_rackside(wheel):
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.startswith("rackside-")} == {"rackside"}, tops


def test_every_subsystem_and_its_data_are_inside_rackside(wheel):
    names = set(wheel.namelist())
    for module in ("rackside/cli.py", "rackside/paths.py", "rackside/game/clock.py", "rackside/kiosk/app.py",
                   "rackside/hardware/drivers/tm1637.py", "rackside/judge/service.py", "rackside/hall/__init__.py",
                   "rackside/hall/console/__init__.py"):
        assert module in names, module
    for data in ("rackside/judge/data/enable.txt.xz", "rackside/firmware/clock.toml", "rackside/hardware/pins.toml",
                 "rackside/kiosk/default-station.toml"):
        assert data in names, data
    # Every package folder of the checkout made it in (a subsystem left out of pyproject's list
    # would install without its modules).
    for init in ROOT.glob("*/**/__init__.py"):
        rel = init.relative_to(ROOT)
        if rel.parts[0] in {"firmware", "game", "kiosk", "hardware", "judge", "hall"}:
            assert f"rackside/{rel.as_posix()}" in names, rel


def test_the_command_is_installed(wheel):
    assert any(n.endswith(".data/scripts/rackside") for n in wheel.namelist())


# --- The development venv (issue 16 item 4): setup.sh's editable install must import as the wheel
# does. Its .pth once named the repository root, so `game.clock` and `rackside.game.clock`
# loaded as two modules (`Phase.RUNNING` of one unequal to the other's).

TOP_LEVEL_FOLDERS = ("firmware", "game", "hall", "judge", "kiosk", "hardware", "bench", "tests", "build", "support", "deploy")


def venv_python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """`code` run by this venv's Python from a neutral folder, with no PYTHONPATH: what a user's
    command or a service sees."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_the_development_venv_imports_rackside_from_this_checkout(tmp_path):
    done = venv_python("import rackside.game.clock as c; print(c.__file__)", tmp_path)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).resolve() == (ROOT / "game" / "clock.py").resolve()


@pytest.mark.parametrize("name", TOP_LEVEL_FOLDERS)
def test_the_development_venv_has_no_bare_top_level_names(tmp_path, name):
    done = venv_python(f"import {name}", tmp_path)
    assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr, (
        f"`import {name}` works in the development venv ({sys.executable}): the editable install puts the "
        f"repository root on sys.path; re-run ./setup.sh")
