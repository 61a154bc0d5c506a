"""A power cut at the table (issue 27 item 5), through the real clock process: `rackside clock
--simulate` with a keypad, in a real terminal (a pty), SIGKILLed in the middle of typing a number
and with a call open; the restarted process comes back to the same step (the digits typed, the
call still open), read back from its journal by `rackside clock replay --json`."""

from __future__ import annotations

import json
import os
import pty
import signal
import sys
from pathlib import Path

from support.terminal import read_until
from support.wait import until


def start(tmp_path: Path) -> tuple[int, int]:
    config = tmp_path / "clock.toml"
    config.write_text("[keypad]\nenabled = true\n")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real command in a real terminal
        env = dict(os.environ, RACKSIDE_STATE_DIR=str(tmp_path / "state"), TERM="xterm")
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        os.execve(sys.executable, [sys.executable, "-m", "rackside", "clock", "--simulate", "--config", str(config)], env)
    read_until(fd, b"KEYPAD")
    return pid, fd


def journal(tmp_path: Path) -> list[dict]:
    files = sorted((tmp_path / "state" / "clock" / "journals").glob("game-*.jsonl"))
    if not files:
        return []
    return [json.loads(x) for x in files[-1].read_text().splitlines()[1:] if x.strip() and x.endswith("}")]


def kill(pid: int, fd: int) -> None:
    os.kill(pid, signal.SIGKILL)  # a power cut: no clean shutdown
    os.waitpid(pid, 0)
    os.close(fd)


def quit_(pid: int, fd: int) -> None:
    os.write(fd, b"q")
    read_until(fd, b"\x1b[?25h")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0


def replayed(tmp_path: Path) -> dict:
    import subprocess

    path = sorted((tmp_path / "state" / "clock" / "journals").glob("game-*.jsonl"))[-1]
    out = subprocess.run([sys.executable, "-m", "rackside", "clock", "replay", "--json", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def test_a_power_cut_mid_number_comes_back_with_the_digits_typed(tmp_path):
    pid, fd = start(tmp_path)
    os.write(fd, b"1")
    os.write(fd, b"2")
    assert until(lambda: [i.get("key") for i in journal(tmp_path) if i["input"] == "key"] == ["1", "2"], timeout=20)
    kill(pid, fd)
    pid, fd = start(tmp_path)  # the same state directory: the restore
    try:
        os.write(fd, b"z")  # the left player's button: the check-in with the digits typed before the cut
        assert until(lambda: any(i["input"] == "checkin" for i in journal(tmp_path)), timeout=20)
    finally:
        quit_(pid, fd)
    lines = journal(tmp_path)
    assert [i["input"] for i in lines] == ["key", "key", "resume", "checkin"]
    assert lines[-1]["number"] == 12 and lines[-1]["player"] == 1
    assert replayed(tmp_path)["table"]["seated"] == [12, None]


def test_a_power_cut_with_a_call_open_comes_back_with_the_call_open(tmp_path):
    pid, fd = start(tmp_path)
    os.write(fd, b"m")  # 2.2: the right player starts the left player's time
    assert until(lambda: any(i["input"] == "press" for i in journal(tmp_path)), timeout=20)
    os.write(fd, b"c")  # the director's call (the terminal's key for # held): neutralised (1.4.3)
    assert until(lambda: any(i["input"] == "call" for i in journal(tmp_path)), timeout=20)
    kill(pid, fd)
    pid, fd = start(tmp_path)
    try:
        os.write(fd, b"c")  # one call at a time: call-1 is still open, so this makes none
        os.write(fd, b" ")  # then the centre: the restored, neutralised clock restarts (4.1)
        assert until(lambda: journal(tmp_path)[-1]["input"] == "neutralise", timeout=20)
    finally:
        quit_(pid, fd)
    lines = journal(tmp_path)
    assert [i["input"] for i in lines] == ["press", "call", "resume", "neutralise"]
    assert replayed(tmp_path)["table"]["open_call"] == "call-1"
