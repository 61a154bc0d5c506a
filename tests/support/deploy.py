"""The deploy tests' helpers: the systemd units and deploy/install-pi.sh, read and run for real into
a scratch root with a fake systemctl (tests/test_deploy.py, and the hall's units)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNITS = {"clock": REPO / "deploy" / "rackside-clock.service", "kiosk": REPO / "deploy" / "rackside-kiosk.service",
         "update.path": REPO / "deploy" / "rackside-update.path", "update": REPO / "deploy" / "rackside-update.service",
         "recover": REPO / "deploy" / "rackside-recover.service"}
INSTALL = REPO / "deploy" / "install-pi.sh"


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """systemd's unit syntax: [Section], Key=Value, '#'/';' comments; keys may repeat."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        assert current is not None and "=" in line, f"line {n}: {line!r} is not Key=Value inside a section"
        key, value = line.split("=", 1)
        current.append((key.strip(), value.strip()))
    return sections


def values(unit, section, key) -> list[str]:
    return [v for k, v in unit.get(section, []) if k == key]


def one(unit, section, key) -> str:
    found = values(unit, section, key)
    assert len(found) == 1, f"[{section}] {key}= appears {len(found)} times"
    return found[0]


def fake_systemctl(tmp_path: Path, active: bool = False) -> tuple[str, Path]:
    log = tmp_path / "systemctl.log"
    script = tmp_path / "systemctl"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{log}"\n'
        f'case "$1" in is-active) exit {0 if active else 3};; esac\n'
    )
    script.chmod(0o755)
    return str(script), log


def run_install(tmp_path: Path, *args: str, active: bool = False) -> tuple[subprocess.CompletedProcess, list[str]]:
    systemctl, log = fake_systemctl(tmp_path, active)
    log.unlink(missing_ok=True)
    env = {**os.environ, "RACKSIDE_DESTDIR": str(tmp_path / "root"), "RACKSIDE_SYSTEMCTL": systemctl}
    result = subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True, env=env, timeout=60)
    calls = log.read_text().splitlines() if log.exists() else []
    return result, calls


needs_venv = pytest.mark.skipif(not (REPO / ".venv" / "bin" / "rackside").exists(), reason="needs ./setup.sh's .venv")
