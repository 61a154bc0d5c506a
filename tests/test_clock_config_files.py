"""Issue 9, item 9: a clock config file that cannot be read (undecodable bytes, a directory, no
permission) exits 2 with one line naming the file, never a traceback (under systemd's
restart-always a traceback loop is the worst outcome). Run as the installed command would be, in
a child process; the permission case as an unprivileged user when the tests run as root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_clock(config: Path, *, user: str | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "rackside", "clock", "--simulate", "--terminal", "--config", str(config)]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", "--regid=65534", "--clear-groups", *cmd]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd="/", env=env, stdin=subprocess.DEVNULL)


def assert_one_line_naming(done: subprocess.CompletedProcess, path: Path, words: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert str(path) in lines[0] and words in lines[0], lines[0]


def test_a_config_of_undecodable_bytes_exits_2_naming_the_file(tmp_path):
    path = tmp_path / "clock.toml"
    path.write_bytes(b'[clock]\ngame_time = "25:00"\n# caf\xe9 \xff\xfe\n')
    assert_one_line_naming(run_clock(path), path, "UTF-8")


def test_a_config_that_is_a_directory_exits_2_naming_it(tmp_path):
    path = tmp_path / "clock.toml"
    path.mkdir()
    assert_one_line_naming(run_clock(path), path, "directory")


def test_a_config_without_read_permission_exits_2_naming_it(request):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run the clock as an unprivileged user")
    # A folder the unprivileged user can reach (pytest's own are 0700 above tmp_path, which would
    # refuse it at the folder, not at the file), holding a file it may not read.
    folder = Path(tempfile.mkdtemp(prefix="rackside-clock-perm-"))
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    folder.chmod(0o755)
    path = folder / "clock.toml"
    path.write_text('[clock]\ngame_time = "25:00"\n')
    os.chmod(path, 0o600)
    if not os.access(ROOT, os.R_OK) or subprocess.run(["setpriv", "--reuid=nobody", "--regid=65534", "--clear-groups",
                                                       sys.executable, "-c", "import rackside"],
                                                      capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd="/").returncode:
        pytest.skip("the unprivileged user cannot run this checkout's Python")
    # The control: the same file readable is read without complaint (the clock stops later, for
    # other reasons, naming other paths), so the refusal below is the file's own permission bits.
    os.chmod(path, 0o644)
    readable = run_clock(path, user="nobody")
    assert str(path) not in readable.stderr, readable.stderr
    os.chmod(path, 0o600)
    assert_one_line_naming(run_clock(path, user="nobody"), path, "permission")
