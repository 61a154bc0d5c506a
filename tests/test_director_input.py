"""Every director command refuses bad input in one line (issue 25, item 5): the option or key, the
allowed values, a non-zero exit and no traceback. Each case runs the real command, a subprocess of
the venv's `rackside`, as the director would type it; a connection that fails says why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.broker import Broker, free_port
from support.console import cheap_hash
from support.wait import until

RACKSIDE = str(Path(sys.executable).with_name("rackside"))


def rackside(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "RACKSIDE_STATE_DIR": str((cwd or Path.cwd()) / "state")}
    return subprocess.run([RACKSIDE, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


def refused(r: subprocess.CompletedProcess, *words: str) -> str:
    """The one line of a refusal; asserts it names `words`."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and len(lines) == 1, r.stderr
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


# --- rackside hall provision -------------------------------------------------------------------


def provision(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    out = [] if "--out" in extra else ["--out", str(tmp_path / "hall")]
    return rackside("hall", "provision", "--hall", "open2026", *out, *extra, cwd=tmp_path)


def test_provision_out_that_is_a_file(tmp_path):
    (tmp_path / "taken").write_text("a file\n")
    refused(provision(tmp_path, "--out", str(tmp_path / "taken")), "--out", "folder")


def test_provision_data_that_is_a_file(tmp_path):
    (tmp_path / "taken").write_text("a file\n")
    refused(provision(tmp_path, "--data", str(tmp_path / "taken")), "--data", "folder")


@pytest.mark.parametrize("option", ["--port", "--tls-port"])
@pytest.mark.parametrize("value", ["99999", "0"])
def test_provision_port_out_of_range(tmp_path, option, value):
    refused(provision(tmp_path, option, value), option, "1 to 65535")
    assert not (tmp_path / "hall" / "mosquitto.conf").exists()


def test_provision_bind_that_is_not_an_address(tmp_path):
    refused(provision(tmp_path, "--bind", "not an address"), "--bind", "allowed")
    assert not (tmp_path / "hall" / "mosquitto.conf").exists()


@pytest.mark.parametrize("host", ["", "bad host", "x..local"])
def test_provision_host_that_is_not_a_name(tmp_path, host):
    line = refused(provision(tmp_path, "--host", host), "--host", "allowed")
    assert "openssl" not in line


# --- rackside hall console's config ----------------------------------------------------------------


def console_config(tmp_path: Path, extra: str = "", listen: str | None = None) -> Path:
    creds = tmp_path / "director.toml"
    creds.write_text('hall = "h"\nuser = "director"\npassword = "pw"\n')
    cfg = tmp_path / "hall.toml"
    cfg.write_text(f'[console]\nhall = "h"\nurl = "mqtt://127.0.0.1:{free_port()}"\ncredentials = "director.toml"\n'
                   f'password = "{cheap_hash("director-pw")}"\nlisten = "{listen or f"127.0.0.1:{free_port()}"}"\n{extra}')
    return cfg


def console(tmp_path: Path, extra: str = "", listen: str | None = None) -> subprocess.CompletedProcess:
    return rackside("hall", "console", "--config", str(console_config(tmp_path, extra, listen)), cwd=tmp_path, timeout=60)


def test_console_round_that_is_not_a_number(tmp_path):
    refused(console(tmp_path, 'round = "x"\n'), "round", "whole number")


def test_console_listen_port_out_of_range(tmp_path):
    refused(console(tmp_path, listen="127.0.0.1:99999"), "listen", "1 to 65535")


def test_console_certfile_that_is_not_a_certificate(tmp_path):
    (tmp_path / "server.crt").write_text("not a certificate\n")
    (tmp_path / "server.key").write_text("not a key\n")
    refused(console(tmp_path, 'certfile = "server.crt"\nkeyfile = "server.key"\n'), "certfile", "PEM")


def test_console_tsh_file_that_is_missing(tmp_path):
    refused(console(tmp_path, 'tsh = ["config.tsh"]\n'), "tsh", "config.tsh", "no such file")


def test_console_unknown_key(tmp_path):
    refused(console(tmp_path, "colour = 1\n"), "unknown key 'colour'", "allowed keys")


# --- rackside bundle -------------------------------------------------------------------------------


def test_bundle_for_python_2_7(tmp_path):
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / "x-1-py3-none-any.whl").write_bytes(b"")
    refused(rackside("bundle", "--out", str(tmp_path / "b.tar.gz"), "--wheelhouse", str(tmp_path / "wheels"),
                     "--python", "2.7", cwd=tmp_path), "--python 2.7", "3.11")
    assert not (tmp_path / "b.tar.gz").exists()


def test_bundle_with_an_empty_wheelhouse(tmp_path):
    (tmp_path / "wheels").mkdir()
    refused(rackside("bundle", "--out", str(tmp_path / "b.tar.gz"), "--wheelhouse", str(tmp_path / "wheels"), cwd=tmp_path),
            "--wheelhouse", "no wheels")
    assert not (tmp_path / "b.tar.gz").exists()


# --- a device's link to the broker -------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory):
    broker = Broker(tmp_path_factory.mktemp("tlsbroker"), tables="", stations=1, tls=True).start()
    yield broker
    broker.stop()


def station_toml(tmp_path: Path, broker, url: str, password: str | None = None) -> Path:
    creds = (broker.credentials("station-1")).read_text()
    creds = "\n".join(line for line in creds.splitlines() if not line.startswith("url"))
    if password is not None:
        creds = "\n".join(f'password = "{password}"' if line.startswith("password") else line for line in creds.splitlines())
    (tmp_path / "station-1.toml").write_text(creds + "\n")
    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[hall]\nurl = "{url}"\ncredentials = "station-1.toml"\noutbox = "{tmp_path / "outbox.sqlite"}"\n'
                   f'[log]\npath = "{tmp_path / "challenges.jsonl"}"\n')
    return cfg


def test_tls_credentials_with_a_plain_url_are_refused_with_the_fix(tmp_path, tls_broker):
    """The credentials name the hall's CA (tls_ca) and the URL says mqtt://: it used to speak TLS to
    the plain port and log only "cannot connect"."""
    r = rackside("hall", "station", "--config", str(station_toml(tmp_path, tls_broker, f"mqtt://127.0.0.1:{tls_broker.port}")),
                 cwd=tmp_path, timeout=30)
    refused(r, "hall.url", "tls_ca", "mqtts://")


def failure_line(tmp_path: Path, cfg: Path) -> str:
    """The station's first log line about the broker, once it has one (the process is then ended)."""
    log = tmp_path / "station.log"
    with open(log, "wb") as f:
        proc = subprocess.Popen([RACKSIDE, "hall", "station", "--config", str(cfg)], stdout=f, stderr=f, cwd=tmp_path,
                                env={**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "state")})
    try:
        line = until(lambda: next((x for x in log.read_text().splitlines() if "hall broker" in x and "failed" in x), None), 20)
    finally:
        proc.terminate()
        proc.wait(10)
    assert line, log.read_text()
    return line


def test_a_refused_connection_says_so(tmp_path, tls_broker):
    line = failure_line(tmp_path, station_toml(tmp_path, tls_broker, f"mqtts://127.0.0.1:{free_port()}"))
    assert "connection refused" in line, line


def test_a_tls_handshake_that_fails_says_so(tmp_path, tls_broker):
    line = failure_line(tmp_path, station_toml(tmp_path, tls_broker, f"mqtts://127.0.0.1:{tls_broker.port}"))  # the plain port
    assert "TLS handshake" in line, line


def test_a_wrong_password_says_not_authorised(tmp_path, tls_broker):
    line = failure_line(tmp_path, station_toml(tmp_path, tls_broker, tls_broker.url, password="wrong"))
    assert "not authorised" in line, line


def test_the_console_says_why_it_cannot_reach_the_broker(tmp_path):
    """The console's own MQTT session: a broker that is not there is "connection refused", not silence."""
    cfg = console_config(tmp_path)
    log = tmp_path / "console.log"
    with open(log, "wb") as f:
        proc = subprocess.Popen([RACKSIDE, "hall", "console", "--config", str(cfg)], stdout=f, stderr=f, cwd=tmp_path,
                                env={**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path / "state")})
    try:
        line = until(lambda: next((x for x in log.read_text().splitlines() if "broker" in x and "failed" in x), None), 20)
    finally:
        proc.terminate()
        proc.wait(10)
    assert line and "connection refused" in line, log.read_text()
