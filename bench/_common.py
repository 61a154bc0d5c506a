"""What several bench/ scripts share: a process's CPU time and memory read from /proc, a
percentile, and ending every process a run started. A bench imports it as `_common` (a script's
own folder is first on its path: `python bench/console_flood.py`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterable

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, user and system (/proc/PID/stat's utime and stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mib(pid: int) -> float:
    """The process's resident memory now (/proc/PID/statm), in MiB."""
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE / 2**20


def pct(values: list[float], q: float) -> float:
    """The `q`th percentile (0-100) of `values`, nearest rank."""
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def end_all(procs: Iterable[subprocess.Popen]) -> None:
    """Never leave the console, the broker or a worker behind: SIGTERM each one still running (a
    clean stop), SIGKILL if it has not ended after 10 s."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
