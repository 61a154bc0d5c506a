"""`rackside clock`: bad config refused with one line and exit 2, the replay sub-command, and the
simulator in a real terminal (a pty)."""

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from rackside import cli as rackside_cli

from support.terminal import read_until, reap

ROOT = Path(__file__).resolve().parent.parent


def run_cli(args, capsys):
    code = rackside_cli.main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def write(tmp_path, text):
    p = tmp_path / "clock.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "toml, words",
    [
        ('[clock]\ngame_time = "25:99"\n', ["clock.game_time", "1:00 to 99:59"]),
        ("[input]\nsettle_ms = 500\n", ["input.settle_ms", "1 to 100"]),
        ("[sound]\nbuzzer = 1\n", ["sound.buzzer", "true and false"]),
        ("[clocks]\n", ["unknown section [clocks]", "allowed sections"]),
        ("[input]\nsettle = 5\n", ["unknown key 'settle'", "settle_ms"]),
        ("[clock\n", ["not valid TOML"]),
        (
            '[buttons]\nleft = 17\nright = 17\nneutralise = 22\n[displays.left]\ndriver = "none"\n[displays.right]\ndriver = "none"\n',
            ["BCM 17 is used twice", "buttons.left", "buttons.right"],
        ),
        (
            '[buttons]\nleft = 17\nright = 40\nneutralise = 22\n[displays.left]\ndriver = "none"\n[displays.right]\ndriver = "none"\n',
            ["buttons.right", "2-27"],
        ),
        (
            '[buttons]\nleft = 5\nright = 27\nneutralise = 22\n[displays.left]\ndriver = "tm1637"\nclk = 5\ndio = 6\n[displays.right]\ndriver = "none"\n',
            ["BCM 5 is used twice"],
        ),
    ],
)
def test_bad_config_names_the_key_and_exits_2_with_one_line(tmp_path, capsys, toml, words):
    path = write(tmp_path, toml)
    code, out, err = run_cli(["clock", "--simulate", "--terminal", "--config", str(path)], capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("rackside clock: ")
    for w in words:
        assert w in err
    assert not (tmp_path / "state").exists()


def test_missing_config_file(tmp_path, capsys):
    code, _, err = run_cli(["clock", "--config", str(tmp_path / "nope.toml")], capsys)
    assert code == 2 and "no such config file" in err


def test_bad_config_exit_code_from_the_installed_command(tmp_path):
    path = write(tmp_path, "[clock]\npenalty_per_minute = -3\n")
    p = subprocess.run([sys.executable, "-m", "rackside", "clock", "--config", str(path)], capture_output=True, text=True)
    assert p.returncode == 2
    assert "clock.penalty_per_minute" in p.stderr and "0 to 100" in p.stderr


def test_a_config_with_its_own_pin_map(tmp_path):
    from rackside.firmware.config import load_config

    path = write(tmp_path, '[buttons]\nleft = 4\nright = 25\nneutralise = 26\n[displays.left]\ndriver = "none"\n[displays.right]\ndriver = "none"\n[sound]\nbuzzer = true\n')
    c = load_config(path)
    assert c.pins.buttons == {"left": 4, "right": 25, "neutralise": 26}
    assert c.pins.buzzer is None and c.firmware.buzzer is True


def test_replay_subcommand(tmp_path, capsys):
    from rackside.game.clock import Press, Rules
    from rackside.firmware.persist import GameStore

    store = GameStore(tmp_path / "state", Rules(), boot_id="t")
    store.start(0)
    store.record(Press(0, 2))
    store.record(Press(5_000_000_000, 1))
    path = store.journal_path
    store.close()
    code, out, _ = run_cli(["clock", "replay", str(path), "--json"], capsys)
    assert code == 0
    final = json.loads(out)
    assert final["players"][0]["remaining_ms"] == 25 * 60_000 - 5_000


def test_simulator_in_a_terminal_starts_the_clock_and_quits_cleanly(tmp_path):
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real command in a real terminal
        env = dict(os.environ, RACKSIDE_STATE_DIR=str(tmp_path / "state"), TERM="xterm")
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        os.execve(sys.executable, [sys.executable, "-m", "rackside", "clock", "--simulate"], env)
    try:
        screen = read_until(fd, b"RIGHT PLAYER")
        assert b"space: neutralise" in screen
        os.write(fd, b"m")  # the right player starts the left player's time
        read_until(fd, b"[#] m")  # the m key's contact is drawn closed,
        read_until(fd, b"[ ] m")  # then open again
        os.write(fd, b"q")
        read_until(fd, b"\x1b[?25h")  # the cursor is given back
    finally:
        status = reap(pid)  # (killed if a step above failed: never a hung suite)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    journal = next((tmp_path / "state" / "clock" / "journals").glob("game-*.jsonl"))
    inputs = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert inputs and inputs[0]["input"] == "press" and inputs[0]["player"] == 2


def test_clock_without_a_gpio_back_end_says_so_in_one_line_instead_of_a_traceback(tmp_path, monkeypatch, capsys):
    """`rackside clock` on a laptop (no pin back-end) must fail with a clear message pointing at
    --simulate, not a gpiozero traceback."""
    import gpiozero

    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no-such-back-end")
    monkeypatch.setattr(gpiozero.Device, "pin_factory", None)
    code = rackside_cli.main(["clock", "--state-dir", str(tmp_path / "state")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("rackside clock: ") and "--simulate" in err


def test_a_terminal_child_left_waiting_is_killed_not_waited_on_for_ever():
    """The harness can fail: a simulator still waiting for its next key when a step fails is
    killed by reap (CI once hung in waitpid here)."""
    import signal

    from support.terminal import reap

    pid = os.fork()
    if pid == 0:  # a child that waits for ever, as a simulator waits for a key nobody types
        signal.pause()
        os._exit(0)
    status = reap(pid)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def test_a_hall_error_names_the_config_file_or_the_option_its_value_came_from(tmp_path, capsys):
    """A bad [hall] value is the config file's and names it; a bad --hall the command's, and names
    no file. Told apart by the error's own `option`, not by splitting its text: a config folder
    named `a --b` made the credentials file's error look like an option's, and the file went unnamed."""
    folder = tmp_path / "a --b"
    folder.mkdir()
    (folder / "creds.toml").write_text('hall = "h"\n')  # no user: the file's problem
    path = folder / "clock.toml"
    path.write_text('[hall]\nurl = "mqtt://127.0.0.1:9"\ncredentials = "creds.toml"\n')
    code, _, err = run_cli(["clock", "--simulate", "--headless", "--config", str(path), "--state-dir", str(tmp_path / "s")], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"rackside clock: {path}: ") and "user is missing" in err, err

    (folder / "creds.toml").write_text('hall = "h"\nuser = "u"\npassword = "p"\ntable = 1\n')
    code, _, err = run_cli(["clock", "--simulate", "--headless", "--config", str(path), "--state-dir", str(tmp_path / "s"),
                            "--hall", "http://nowhere"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "--hall = 'http://nowhere'" in err and str(path) not in err, err
