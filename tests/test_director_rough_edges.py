"""Rough edges a new director hit, each through the command the director runs (issue 26 item 4)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def rackside(*args: str, env: dict | None = None, timeout: float = 60, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rackside", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, cwd=cwd)


@pytest.mark.skipif(os.geteuid() != 0, reason="Mosquitto drops privileges only when started as root")
def test_a_broker_provisioned_as_root_without_run_as_names_the_fix_not_openssl(tmp_path):
    """Provisioned as root without --run-as (provision's warning is easy to miss): Mosquitto drops to
    the user `mosquitto`, which cannot read the owner-only files, and printed only its own lines
    ("Dynamic security plugin config: File is not readable", "Unable to load CA certificates",
    OpenSSL's "Permission denied")."""
    hall = tmp_path / "hall"
    assert rackside("hall", "provision", "--hall", "h", "--tables", "1", "--port", "0", "--out", str(hall)).returncode == 0
    out = rackside("hall", "broker", "--config", str(hall), "--no-mdns", timeout=30)
    assert out.returncode != 0
    lines = (out.stdout + out.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert "'mosquitto'" in lines[0] and "--run-as" in lines[0] and str(hall) in lines[0]
    assert "OpenSSL" not in out.stderr
