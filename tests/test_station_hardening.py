"""Station hardening (issue 9 items 9 and 10, issue 10 item 11): `--check-config` refuses a weak PIN
hash and a printer URL pyserial cannot open; a config file that cannot be read exits 2 with one
line naming it; `--hash-pin` refuses a non-numeric PIN before asking again; the installer writes
station.toml 0640 owned by root and the service's group."""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rackside.kiosk.station_config import hash_pin

REPO = Path(__file__).resolve().parent.parent
STRONG = hash_pin("2468")  # the defaults: scrypt N=2^14, r=8


def run_kiosk(tmp_path, *args, stdin="", as_nobody=False):
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy",
               RACKSIDE_STATE_DIR=str(tmp_path / "state"), RACKSIDE_CONFIG_DIR=str(tmp_path / "config"))
    cmd = [sys.executable, "-m", "rackside", "kiosk", *args]
    if as_nobody:  # root reads any file: the permission case runs as an unprivileged user
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *cmd]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, cwd=REPO, timeout=60)


def config(tmp_path, body: str = "", pin_hash: str = STRONG) -> Path:
    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{pin_hash}"\n{body}')
    return cfg


def test_check_config_accepts_the_default_strength(tmp_path):
    r = run_kiosk(tmp_path, "--config", str(config(tmp_path)), "--check-config")
    assert r.returncode == 0 and "OK" in r.stdout, r.stderr


@pytest.mark.parametrize("n, r", [(2**8, 8), (2**13, 8), (2**14, 4)])
def test_check_config_refuses_a_weak_pin_hash(tmp_path, n, r):
    weak = hash_pin("2468", n=n, r=r)
    res = run_kiosk(tmp_path, "--config", str(config(tmp_path, pin_hash=weak)), "--check-config")
    assert res.returncode == 2
    assert "director.pin_hash" in res.stderr and "N=16384" in res.stderr and "--hash-pin" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("url", ["/dev/ttyUSB0", "loop://", "rfc2217://127.0.0.1:4000", "socket://127.0.0.1:9100",
                                 "spy://loop://"])
def test_check_config_accepts_printer_urls_pyserial_knows(tmp_path, url):
    r = run_kiosk(tmp_path, "--config", str(config(tmp_path, f'[printer]\nurl = "{url}"\n')), "--check-config")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("url", ["usb://printer", "http://127.0.0.1/print", "lop://"])
def test_check_config_refuses_a_printer_scheme_pyserial_does_not_know(tmp_path, url):
    r = run_kiosk(tmp_path, "--config", str(config(tmp_path, f'[printer]\nurl = "{url}"\n')), "--check-config")
    assert r.returncode == 2 and "printer.url" in r.stderr and "loop" in r.stderr and "rfc2217" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("how", ["undecodable", "directory", "no-permission"])
def test_a_station_config_that_cannot_be_read_exits_2_with_one_line(tmp_path, how, request):
    cfg = tmp_path / "station.toml"
    as_nobody = False
    if how == "undecodable":
        cfg.write_bytes(b"[station]\nname = \"\xff\xfe\"\n")
    elif how == "directory":
        cfg.mkdir()
    else:
        if os.geteuid() == 0:  # root reads any file: refuse it to `nobody` instead
            if shutil.which("setpriv") is None:
                pytest.skip("root reads any file, and setpriv (to run as nobody) is missing")
            as_nobody = True
            # pytest's temporary folders are root's alone (0700): put the file where nobody can
            # reach it, so what is refused is reading the file itself
            folder = Path(tempfile.mkdtemp(prefix="rackside-perm-"))
            request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
            folder.chmod(0o755)
            cfg = folder / "station.toml"
        cfg.write_text(f'[director]\npin_hash = "{STRONG}"\n')  # a good config: only the permission is wrong
        cfg.chmod(0)
    r = run_kiosk(tmp_path, "--config", str(cfg), "--check-config", as_nobody=as_nobody)
    assert r.returncode == 2 and str(cfg) in r.stderr
    if how == "no-permission":
        assert "permission denied" in r.stderr.lower(), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_an_unreadable_config_is_one_line_also_when_permission_is_refused(tmp_path, monkeypatch):
    """The no-permission case in-process (root reads every file, so refuse the read itself)."""
    from rackside.kiosk import station_config

    import builtins

    cfg = config(tmp_path)
    real = builtins.open

    def refuse(file, *args, **kwargs):
        if Path(file) == cfg:
            raise PermissionError(13, "Permission denied", str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refuse)
    with pytest.raises(station_config.ConfigError) as err:
        station_config.load_config(cfg)
    assert str(cfg) in str(err.value) and "Permission denied" in str(err.value) and "\n" not in str(err.value)


def test_hash_pin_refuses_a_non_numeric_pin_before_asking_again(monkeypatch, capsys):
    from rackside.kiosk import station_cli

    asked = []

    def fake_getpass(prompt):
        asked.append(prompt)
        return "12ab"

    import getpass

    monkeypatch.setattr(getpass, "getpass", fake_getpass)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    assert station_cli._hash_pin() == 1
    assert len(asked) == 1  # not asked a second time
    assert "4 to 8 digits" in capsys.readouterr().err


def test_installer_writes_station_toml_0640_root_and_the_services_group(tmp_path):
    if not (REPO / ".venv" / "bin" / "rackside").exists():
        pytest.skip("needs ./setup.sh's .venv")
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to root and another group")
    env = {**os.environ, "RACKSIDE_DESTDIR": str(tmp_path / "root"), "RACKSIDE_SYSTEMCTL": "true"}
    r = subprocess.run(["bash", str(REPO / "deploy" / "install-pi.sh"), "none"], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    st = (tmp_path / "root" / "etc" / "rackside" / "station.toml").stat()
    owner = pwd.getpwuid(REPO.stat().st_uid).pw_name
    assert st.st_mode & 0o777 == 0o640
    assert st.st_uid == 0 and grp.getgrgid(st.st_gid).gr_name == grp.getgrgid(pwd.getpwnam(owner).pw_gid).gr_name
