"""Updates from the console (issue 20, item 3): the director uploads a bundle to the console, which
checks it; a real table clock on a real broker gets the `update` command on its cmd topic, fetches
the bundle from the console with its token, checks its SHA-256 (a tampered file refused), installs
it into a temporary root with the bundle's own install.sh (as tests/test_bundle_install.py does) and
acks the outcome, which the console shows."""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import tarfile
import time
import urllib.request

import pytest

from rackside.hall import commands, update
from rackside.hall.console.auth import hash_password
from rackside.hall.console.config import ConsoleConfig, load_credentials
from rackside.hall.console.demo import free_port
from rackside.hall.console.serve import ConsoleServer
from support.bundle import RACKSIDE, build_bundle, copy_checkout, needs_root
from support.console import Http
from support.deploy import fake_systemctl
from support.hallclock import LiveClock, clock_config

TABLE = 7
SHA = "ab" * 32
TOKEN = "t" * 43


def test_the_update_command_is_checked_whole():
    good = {"id": "u1", "cmd": "update", "version": "0.1.0+g1a2b3c4", "sha256": SHA,
            "url": "https://console.local:8443" + update.DOWNLOAD_PATH, "token": TOKEN, "wait_s": 60}
    cmd = commands.parse(json.dumps(good).encode())
    assert (cmd.version, cmd.sha256, cmd.token, cmd.wait_s) == ("0.1.0+g1a2b3c4", SHA, TOKEN, 60)
    for key, value, says in [("version", "../etc", "version must be"), ("sha256", "AB" * 32, "sha256 must be"),
                             ("url", "file:///etc/passwd", "url must be"), ("url", "https://x/other", "url must be"),
                             ("token", "short", "token must be"), ("wait_s", -1, "wait_s must be"),
                             ("wait_s", update.MAX_WAIT_S + 1, "wait_s must be")]:
        with pytest.raises(commands.CommandError, match=says):
            commands.parse(json.dumps({**good, key: value}).encode())


def _bundle(tmp_path, files: dict[str, bytes], sums: dict[str, bytes] | None = None):
    archive = tmp_path / "b.tar.gz"
    listed = "".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in (sums or files).items()).encode()
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in {**files, "SHA256SUMS": listed}.items():
            info = tarfile.TarInfo(f"rackside-9.9.9/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return archive


def test_a_bundle_is_checked_against_its_own_sha256sums(tmp_path):
    assert update.check_bundle(_bundle(tmp_path, {"install.sh": b"echo\n", "source/a.py": b"x\n"})) == "9.9.9"
    with pytest.raises(update.UpdateError, match="source/a.py: does not match SHA256SUMS"):
        update.check_bundle(_bundle(tmp_path, {"source/a.py": b"tampered\n"}, sums={"source/a.py": b"x\n"}))
    with pytest.raises(update.UpdateError, match="extra.py: not listed"):
        update.check_bundle(_bundle(tmp_path, {"a": b"1", "extra.py": b"2"}, sums={"a": b"1"}))
    with pytest.raises(update.UpdateError, match="gone: listed in SHA256SUMS but not in the bundle"):
        update.check_bundle(_bundle(tmp_path, {"a": b"1"}, sums={"a": b"1", "gone": b"2"}))
    (tmp_path / "junk").write_bytes(b"not a tar")
    with pytest.raises(update.UpdateError, match="not a bundle"):
        update.check_bundle(tmp_path / "junk")


@pytest.fixture
def broker(make_broker):
    return make_broker(tables=str(TABLE), stations=0)


@pytest.fixture
def console(broker, tmp_path):
    user, pw = load_credentials(broker.credentials("director"))
    cfg = ConsoleConfig(hall=broker.hall, url=broker.url, username=user, mqtt_password=pw,
                        password_hash=hash_password("pw-for-the-test"), listen_port=free_port(),
                        state_dir=tmp_path / "console-state")
    server = ConsoleServer(cfg).start()
    yield server
    server.stop()


def _upload(h: Http, csrf: str, data: bytes, sha256: str) -> tuple[int, dict]:
    req = urllib.request.Request(h.base + "/api/update/bundle", data=data, method="POST",
                                 headers={"Content-Type": "application/octet-stream", "X-CSRF-Token": csrf,
                                          "X-Bundle-SHA256": sha256})
    try:
        with h.opener.open(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        text = e.read()
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, {"error": text.decode()}


def test_the_upload_has_its_own_limit_and_needs_the_director(console, tmp_path):
    h = Http(console.url)
    assert _upload(h, "x", b"x", SHA)[0] in (401, 403)  # no session
    csrf = h.login("pw-for-the-test")
    assert _upload(h, "wrong", b"x", SHA)[0] == 403  # CSRF checked as for every POST
    big = os.urandom(3 * 1024 * 1024)  # over the 2 MiB of every other request, under the bundle's limit
    status, body = _upload(h, csrf, big, SHA)
    assert status == 400 and "not the bundle that was built" in body["error"]
    status, _, _ = h.call("POST", "/api/round", None, {"X-CSRF-Token": csrf, "Content-Length": str(len(big))})
    assert status == 413
    status, body = _upload(h, csrf, b"junk", hashlib.sha256(b"junk").hexdigest())
    assert status == 400 and "the bundle is refused: not a bundle" in body["error"]
    assert not [p for p in (tmp_path / "console-state/updates").iterdir()]  # nothing kept of a refused upload
    req = urllib.request.Request(h.base + update.DOWNLOAD_PATH, headers={update.TOKEN_HEADER: TOKEN})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 403


def _wait(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError("timed out")


@needs_root
def test_a_clock_updates_from_the_console(offline_wheels, broker, console, tmp_path, monkeypatch):
    archive = tmp_path / "rackside.tar.gz"
    built = build_bundle(copy_checkout(tmp_path / "src"), offline_wheels, archive, "u2")
    assert built.returncode == 0, built.stderr
    digest = archive.with_name(archive.name + ".sha256").read_text().split()[0]
    data = archive.read_bytes()
    h = Http(console.url)
    csrf = h.login("pw-for-the-test")

    # A bundle with one file changed inside (its own SHA-256 given right) is refused.
    tampered = tmp_path / "tampered.tar.gz"
    with tarfile.open(archive) as src, tarfile.open(tampered, "w:gz") as dst:
        for m in src:
            f = src.extractfile(m) if m.isfile() else None
            if m.name.endswith("/source/firmware/clock.py"):
                f = io.BytesIO(b"# tampered\n")
                m.size = len(f.getvalue())
            dst.addfile(m, f)
    status, body = _upload(h, csrf, tampered.read_bytes(), hashlib.sha256(tampered.read_bytes()).hexdigest())
    assert status == 400 and "source/firmware/clock.py: does not match SHA256SUMS" in body["error"]
    status, body = _upload(h, csrf, data, digest)
    assert status == 200 and body["version"] == "0.1.0+u2", body

    # The clock installs into a test root, with no systemd (install.sh's readiness check: the new
    # version's clock on simulated pins).
    root = tmp_path / "root"
    root.mkdir()
    systemctl, _ = fake_systemctl(tmp_path)
    monkeypatch.setenv("RACKSIDE_SYSTEMCTL", systemctl)
    monkeypatch.setenv("RACKSIDE_PYTHON", sys._base_executable)
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, TABLE), tmp_path / "clock-state")
    live.hall.updater.command = [*RACKSIDE, "update", "--root", str(root), "--user", "root"]
    tables = console.console.state.tables
    try:
        _wait(lambda: TABLE in tables and tables[TABLE].state, 10)
        live.tap("right")  # a game in progress: refused unless between rounds
        _wait(lambda: tables[TABLE].state["phase"] == "running", 10)
        send = lambda tables: (lambda r: (r[0], json.loads(r[1])))(  # noqa: E731
            h.call("POST", "/api/update/send", {"tables": tables}, {"X-CSRF-Token": csrf}))
        status, body = send([TABLE])
        assert status == 200 and body["sent"] == [] and "its game is running" in body["refused"][0]["why"]
        live.command("end")
        _wait(lambda: tables[TABLE].state["phase"] == "ended", 10)

        def outcome():
            status, body, _ = h.call("GET", "/api/update")
            row = next(t for t in json.loads(body)["tables"] if t["table"] == TABLE)
            return row["update"] if row["update"] and row["update"]["outcome"] != "sent" else None

        # The file the console serves is changed on its disk: the clock refuses what it fetched.
        served = tmp_path / "console-state/updates/bundle.tar.gz"
        served.write_bytes(data[:-10] + b"0123456789")
        status, body = send("all")
        assert status == 200 and [s["table"] for s in body["sent"]] == [TABLE], body
        got = _wait(outcome, 30)
        assert got["outcome"] == "failed" and "refused" in got["why"] and digest in got["why"], got
        assert not (root / "opt").exists()

        served.write_bytes(data)
        status, body = send([TABLE])
        assert status == 200 and body["sent"], body
        got = _wait(outcome, 300)
        assert (got["version"], got["outcome"], got["ok"]) == ("0.1.0+u2", "switched", True), got
        assert "0.1.0+u2" in got["why"], got
        assert os.readlink(root / "opt/rackside/current") == "0.1.0+u2"
        assert not list((tmp_path / "clock-state/updates").iterdir())  # the fetched file is gone once installed
    finally:
        live.close()
