"""Every command in docs/*.md runs as written (issue 35 item 5), and the hints its messages give are
true (the hall's own ports, the user's own files).

The commands are the lines of the docs' ```sh / ```bash fenced blocks (a line ending in a backslash
goes on with the next). Each one runs, in the docs' order (the hall provisioned before the clocks
that use its credentials), through bash in a fresh folder that stands for the director's home
(HOME, the XDG folders and the state folder all in it, the checkout's `.venv`, `kiosk`, `deploy`
linked in, `.venv/bin` on PATH as after setup.sh). A command that runs until stopped (a broker, a
console, a simulator) passes when it is still running a few seconds on, or ended well. A command
that cannot run here is in SKIPPED, with why: one list, so a new command in the docs is run unless
someone says here why it cannot be."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LANGS = {"sh", "bash", "shell"}
# the order the docs are followed in: a hall is provisioned (fleet.md) before anything uses it
DOC_ORDER = ["fleet.md", "hall.md", "console.md", "kiosk.md", "deploy.md", "publish.md"]

# (a pattern of the command, why it cannot run here): the first that matches wins
SKIPPED = [
    (r"^sudo |\bsudo ", "needs root (sudo): the Pi's install, covered by tests/test_deploy.py and tests/test_bundle_install.py"),
    (r"^(systemctl|journalctl) ", "a Pi's systemd unit (tests/test_deploy.py checks the units)"),
    (r"^\./setup\.sh|^cd ~/rackside|deploy/install-pi\.sh", "installs packages and services (apt, network, a Pi): this test runs in the venv setup.sh made"),
    (r"rackside bundle ", "downloads the Pi's aarch64 wheels (the network): tests/test_bundle.py builds one from a local wheelhouse"),
    (r"^sha256sum -c rackside\.tar\.gz|^tar xzf rackside\.tar\.gz", "needs the bundle the command above downloads"),
    (r"bench/", "a bench (minutes of CPU on a shared machine), run by hand"),
    (r"-m pytest ", "the tests themselves"),
    (r"hall publish cdn:", "copies to an rclone remote on the network"),
    (r"hall publish /var/www", "a web server's folder (root's)"),
    (r"\[--", "a synopsis (its [--option]s are optional parts), not a command"),
    (r"--bridge partner\.toml", "needs the partner's partner.toml (the example above, with their broker, user and password)"),
    (r"rackside kiosk(?! --(hash-pin|check-config))", "the station's full screen (a display and a touch screen): tests/test_kiosk_process.py runs it on SDL's dummy driver"),
    (r"rackside kiosk --check-config", "checks /etc/rackside/station.toml, which the sudo cp above installs; without one its message is "
                                       "tested below (test_a_missing_station_config_names_the_checkouts_template)"),
]
# what a command reads from its standard input (a PIN, a password), by a pattern of the command
STDIN = {r"--hash-pin": "2468\n", r"--hash-password": "a director's password\n" * 2}
# as root (a container), Mosquitto drops to the user `mosquitto`, who cannot read a home's owner-only
# files: `hall broker` refuses, naming --run-as (a director's laptop account is not root)
SKIPPED_AS_ROOT = [(r"rackside hall broker", "as root Mosquitto drops to the user mosquitto: tests/test_hall_fresh.py runs the broker")]
# commands that run until stopped: still running this long after the start is a pass
RUNS_UNTIL_STOPPED = r"hall (demo|broker|console(?! --hash-password))|clock --simulate|--watch"
SETTLE_S = 6


def commands() -> list[tuple[str, int, str]]:
    """(doc, line, command) of every command in the docs' shell blocks, in DOC_ORDER then the rest."""
    docs = sorted(DOCS.glob("*.md"), key=lambda p: (DOC_ORDER.index(p.name) if p.name in DOC_ORDER else len(DOC_ORDER), p.name))
    out = []
    for doc in docs:
        fence, cmd = None, ""
        for i, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            s = line.strip()
            if s.startswith("```"):
                fence = (s[3:].strip() or "-") if fence is None else None
                continue
            if fence not in LANGS or (not cmd and (not s or s.startswith("#"))):
                continue
            cmd += s[:-1] + " " if s.endswith("\\") else s
            if not s.endswith("\\"):
                out.append((doc.name, i, cmd))
                cmd = ""
    return out


def skipped(cmd: str) -> str | None:
    rules = SKIPPED + (SKIPPED_AS_ROOT if os.geteuid() == 0 else [])
    return next((why for pattern, why in rules if re.search(pattern, cmd)), None)


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """The director's fresh home: nothing provisioned, no state, the checkout's venv and files linked in."""
    home = tmp_path_factory.mktemp("home")
    for name in (".venv", "kiosk", "deploy", "firmware", "hardware"):
        (home / name).symlink_to(ROOT / name)
    return home


def env_of(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RACKSIDE_", "XDG_"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_STATE_HOME=str(home / ".local/state"), PATH=f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}",
               SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    return env


def run(cmd: str, home: Path) -> tuple[int | None, str]:
    """Run `cmd` as written; (its exit code, or None: still running after SETTLE_S and stopped; its output)."""
    stdin = next((text for pattern, text in STDIN.items() if re.search(pattern, cmd)), "")
    proc = subprocess.Popen(["bash", "-c", cmd], cwd=home, env=env_of(home), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    waits = SETTLE_S if re.search(RUNS_UNTIL_STOPPED, cmd) else 120
    try:
        out, _ = proc.communicate(stdin.encode(), timeout=waits)
        return proc.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        return None, out.decode(errors="replace")


def test_the_docs_have_commands_and_every_skip_says_why():
    found = commands()
    assert len(found) > 40
    ran = [c for c in found if skipped(c[2]) is None]
    assert len(ran) >= 8, ran
    for pattern, why in SKIPPED:  # no reason left over from a command the docs no longer have
        assert any(re.search(pattern, c) for _, _, c in found), (pattern, why)


def test_every_command_in_the_docs_runs_as_written(home):
    failed = []
    for doc, line, cmd in commands():
        if skipped(cmd):
            continue
        code, out = run(cmd, home)
        if code not in (0, None):
            failed.append(f"docs/{doc}:{line}: `{cmd}` exited {code}: {out.strip()[-600:]}")
        elif code is None and not re.search(RUNS_UNTIL_STOPPED, cmd):
            failed.append(f"docs/{doc}:{line}: `{cmd}` did not end: {out.strip()[-600:]}")
    assert failed == [], "\n".join(failed)


def test_a_plain_url_on_a_tls_hall_names_the_halls_own_tls_port_and_the_option(tmp_path):
    """Issue 35: `--hall mqtt://...` on a TLS hall was told 'allowed is mqtts://127.0.0.1:8883' (the
    hall's TLS port was 18834) and blamed `.venv/rackside-import/rackside/firmware/clock.toml`, a
    file the director never wrote: the hint names the provisioned hall's port and the option."""
    env = env_of(tmp_path)
    subprocess.run(["rackside", "hall", "provision", "--hall", "h1", "--tables", "1-3", "--tls-port", "18834", "--out", str(tmp_path / "hall")],
                   env=env, check=True, capture_output=True)
    r = subprocess.run(["rackside", "clock", "--simulate", "--headless", "--hall", "mqtt://127.0.0.1:18831",
                        "--hall-credentials", str(tmp_path / "hall" / "credentials" / "table-3.toml")],
                       env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "--hall = 'mqtt://127.0.0.1:18831' is plain MQTT" in r.stderr and "allowed is mqtts://127.0.0.1:18834" in r.stderr, r.stderr
    assert "clock.toml" not in r.stderr and "rackside-import" not in r.stderr, r.stderr


def test_a_missing_station_config_names_the_checkouts_template(tmp_path):
    """Issue 35: `kiosk --check-config` told the director to copy `.venv/rackside-import/...`: the
    template it names is the checkout's own file (or the installed package's), and it exists."""
    r = subprocess.run(["rackside", "kiosk", "--check-config"], env=env_of(tmp_path), capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no station config" in r.stderr, r.stderr
    assert "rackside-import" not in r.stderr, r.stderr
    template = re.search(r"Copy (\S+) there", r.stderr).group(1)
    assert Path(template).is_file() and Path(template) == ROOT / "kiosk" / "default-station.toml"
