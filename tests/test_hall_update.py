"""Updates from the console (issue 20, item 3): the director uploads a bundle on the Devices page of
the real `rackside hall console` process, which checks it; a real table clock on a real broker gets
the `update` command on its cmd topic, fetches the bundle from the console with its token, checks
its SHA-256 (a tampered file refused), installs it into a temporary root with the bundle's own
install.sh (as tests/test_bundle_install.py does) and acks the outcome, which the page shows. The
update endpoints' own tests (upload, refusals, send, downgrades) run on the console in-process
(support.inproc, issue 37 item 4); the Devices page's and a real clock's journeys keep the process."""

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

from rackside import signing
from rackside.hall.device import update
from rackside.hall.wire import commands, update as wire_update, bundle as wire_bundle
from support import browser as chromium
from support.bundle import RACKSIDE, build_bundle, bundle_archive, copy_checkout, needs_root
from support.console import ConsoleProcess, Http
from support.inproc import InProcessHttp, inproc_console
from support.deploy import fake_systemctl
from support.hallclock import LiveClock, clock_config
from support.wait import wait

TABLE = 7
SHA = "ab" * 32
TOKEN = "t" * 43
PASSWORD = "director-pw"


def test_the_update_command_is_checked_whole():
    good = {"id": "u1", "cmd": "update", "version": "0.1.0+g1a2b3c4", "sha256": SHA,
            "url": "https://console.local:8443" + wire_update.DOWNLOAD_PATH, "token": TOKEN, "wait_s": 60}
    cmd = commands.parse(json.dumps(good).encode())
    assert (cmd.version, cmd.sha256, cmd.token, cmd.wait_s) == ("0.1.0+g1a2b3c4", SHA, TOKEN, 60)
    for key, value, says in [("version", "../etc", "version must be"), ("sha256", "AB" * 32, "sha256 must be"),
                             ("url", "file:///etc/passwd", "url must be"), ("url", "https://x/other", "url must be"),
                             ("token", "short", "token must be"), ("wait_s", -1, "wait_s must be"),
                             ("wait_s", wire_update.MAX_WAIT_S + 1, "wait_s must be")]:
        with pytest.raises(commands.CommandError, match=says):
            commands.parse(json.dumps({**good, key: value}).encode())


MANIFEST = {"bundle.json": b'{"version": "9.9.9", "built": "2026-12-01T09:00:00Z"}\n'}  # as rackside.bundle writes it


def _bundle(tmp_path, files: dict[str, bytes], sums: dict[str, bytes] | None = None, sign_with=None, folder="rackside-9.9.9"):
    return bundle_archive(tmp_path / "b.tar.gz", {**MANIFEST, **files}, listed=None if sums is None else {**MANIFEST, **sums},
                          sign_with=sign_with, folder=folder)


def test_a_bundle_is_checked_against_its_own_sha256sums(tmp_path):
    assert wire_bundle.check_bundle(_bundle(tmp_path, {"install.sh": b"echo\n", "source/a.py": b"x\n"})) == "9.9.9"
    with pytest.raises(wire_update.UpdateError, match="source/a.py: does not match SHA256SUMS"):
        wire_bundle.check_bundle(_bundle(tmp_path, {"source/a.py": b"tampered\n"}, sums={"source/a.py": b"x\n"}))
    with pytest.raises(wire_update.UpdateError, match="extra.py: not listed"):
        wire_bundle.check_bundle(_bundle(tmp_path, {"a": b"1", "extra.py": b"2"}, sums={"a": b"1"}))
    with pytest.raises(wire_update.UpdateError, match="gone: listed in SHA256SUMS but not in the bundle"):
        wire_bundle.check_bundle(_bundle(tmp_path, {"a": b"1"}, sums={"a": b"1", "gone": b"2"}))
    (tmp_path / "junk").write_bytes(b"not a tar")
    with pytest.raises(wire_update.UpdateError, match="not a bundle"):
        wire_bundle.check_bundle(tmp_path / "junk")


def _serve(folder):
    """A plain HTTP server on loopback serving `folder` (the console's part, for the updater alone)."""
    import functools
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_where_the_root_service_installs_a_restarted_clock_reports_its_result(tmp_path, monkeypatch):
    """On a Pi the clock only fetches and writes its request; rackside-update.service (started by
    rackside-update.path) runs `rackside update --request` as root, and the switch restarts the
    clock. Here a thread stands in for the path unit, and a second Updater for the restarted clock:
    it finds the command's result instead of fetching again."""
    import subprocess
    import threading

    served = tmp_path / "served"
    served.mkdir()
    folder, root = tmp_path / "state" / "updates", tmp_path / "root"
    (root / "etc/rackside").mkdir(parents=True)
    key = tmp_path / signing.KEY_FILE
    (root / signing.TRUSTED_KEY).write_text(signing.make_key(key))  # as install.sh installs it from the join file
    archive = _bundle(served, {"install.sh": b'echo "install.sh: done: rackside 9.9.9 is current (root $2)"\n'}, sign_with=key)
    (served / "update").mkdir()
    os.replace(archive, served / "update" / "bundle.tar.gz")
    sha = hashlib.sha256((served / "update" / "bundle.tar.gz").read_bytes()).hexdigest()
    server = _serve(served)
    url = f"http://127.0.0.1:{server.server_address[1]}{wire_update.DOWNLOAD_PATH}"
    unit = tmp_path / "rackside-update.path"
    monkeypatch.setattr(update, "UPDATE_PATH_UNIT", str(unit))
    reports = []

    def clock():
        u = update.Updater(folder, None)
        u.by_service = True
        return u

    try:
        assert clock().start("c1", "9.9.9", sha, url, TOKEN, 0, lambda *a: reports.append(a))
        wait(lambda: reports, 10)
        assert reports[-1] == (False, "failed", f"{unit} is not installed: install this version's bundle by hand once")
        unit.touch()

        def path_unit():  # PathExists=.../request.json -> rackside update --request, as root
            wait(lambda: (folder / update.REQUEST).exists(), 20)
            subprocess.run([*RACKSIDE, "update", "--request", str(folder / update.REQUEST), "--root", str(root)],
                           capture_output=True, timeout=60)

        service = threading.Thread(target=path_unit)
        service.start()
        assert clock().start("c2", "9.9.9", sha, url, TOKEN, 0, lambda *a: reports.append(a))
        wait(lambda: len(reports) == 2, 30)
        service.join()
        assert reports[-1] == (True, "switched", f"install.sh: done: rackside 9.9.9 is current (root {root})")
        assert sorted(p.name for p in folder.iterdir()) == [update.RESULT]  # the request and the bundle are gone

        (served / "update" / "bundle.tar.gz").unlink()  # the restarted clock does not fetch again
        assert clock().start("c2", "9.9.9", sha, url, TOKEN, 0, lambda *a: reports.append(a))
        wait(lambda: len(reports) == 3, 10)
        assert reports[-1] == reports[-2]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def broker(make_broker):
    return make_broker(tables=str(TABLE), stations=0)


@pytest.fixture
def console(broker, tmp_path):
    server = ConsoleProcess(broker, tmp_path / "console", PASSWORD).start()
    yield server
    server.stop()


@pytest.fixture
def inproc(tmp_path):
    """The console in-process (support.inproc): the update endpoints' own tests, with no console
    process; what it would publish to a table is in `published`."""
    with inproc_console(tmp_path / "console", password=PASSWORD) as c:
        yield c


def _upload(h, csrf: str, data: bytes, sha256: str) -> tuple[int, dict]:
    headers = {"Content-Type": "application/octet-stream", "X-CSRF-Token": csrf, "X-Bundle-SHA256": sha256}
    if isinstance(h, InProcessHttp):
        r = h.client.post("/api/update/bundle", content=data, headers=headers)
        try:
            return r.status_code, r.json()
        except ValueError:
            return r.status_code, {"error": r.text}
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


def test_the_upload_has_its_own_limit_and_needs_the_director(inproc, tmp_path):
    console = inproc
    h = console.http()
    assert _upload(h, "x", b"x", SHA)[0] in (401, 403)  # no session
    csrf = h.login(PASSWORD)
    assert _upload(h, "wrong", b"x", SHA)[0] == 403  # CSRF checked as for every POST
    big = os.urandom(3 * 1024 * 1024)  # over the 2 MiB of every other request, under the bundle's limit
    status, body = _upload(h, csrf, big, SHA)
    assert status == 400 and "not the bundle that was built" in body["error"]
    status, _, _ = h.call("POST", "/api/round", None, {"X-CSRF-Token": csrf, "Content-Length": str(len(big))})
    assert status == 413
    status, body = _upload(h, csrf, b"junk", hashlib.sha256(b"junk").hexdigest())
    assert status == 400 and "the bundle is refused: not a bundle" in body["error"]
    assert not list((console.home / "updates").iterdir())  # nothing kept of a refused upload
    r = console.http().client.get(wire_update.DOWNLOAD_PATH, headers={wire_update.TOKEN_HEADER: TOKEN})
    assert r.status_code == 403


def _evil_bundle(tmp_path, kind: str):
    """A bundle whose SHA256SUMS matches its files, with one member a tar must not hold (issue 25,
    defect 5: the console's check let links and `..` through; only GNU tar on the Pi stopped them)."""
    archive = tmp_path / f"{kind}.tar.gz"
    files = {"install.sh": b"echo\n", **MANIFEST}
    odd = tarfile.TarInfo({"dotdot": "rackside-9.9.9/../../etc/cron.d/x", "absolute": "/etc/cron.d/x"}.get(kind, "rackside-9.9.9/x"))
    if kind == "symlink":
        odd.type, odd.linkname = tarfile.SYMTYPE, "/etc/shadow"
    elif kind == "hardlink":
        odd.type, odd.linkname = tarfile.LNKTYPE, "/etc/shadow"
    elif kind == "fifo":
        odd.type = tarfile.FIFOTYPE
    elif kind == "setuid":
        odd.mode = 0o4755
    else:
        files[odd.name.partition("/")[2] if kind == "dotdot" else odd.name] = b"* * * * * root sh\n"
    data = b"* * * * * root sh\n" if odd.isfile() else b""
    odd.size = len(data)
    if kind == "setuid":
        files["x"] = data
    listed = "".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in files.items()).encode()
    with tarfile.open(archive, "w:gz") as tar:
        for name, content in {"install.sh": b"echo\n", **MANIFEST, "SHA256SUMS": listed}.items():
            info = tarfile.TarInfo(f"rackside-9.9.9/{name}")
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
        tar.addfile(odd, io.BytesIO(data) if data else None)
    return archive


EVIL = {"symlink": "a symbolic link", "hardlink": "a hard link", "fifo": "a FIFO", "dotdot": "'..'",
        "absolute": "an absolute path", "setuid": "set-user-ID"}


@pytest.mark.parametrize("kind", sorted(EVIL))
def test_a_bundle_holds_only_regular_files_and_folders_inside_it(tmp_path, kind):
    with pytest.raises(wire_update.UpdateError, match=EVIL[kind]):
        wire_bundle.check_bundle(_evil_bundle(tmp_path, kind))


def test_the_console_refuses_a_bundle_with_links_or_paths_outside_it(inproc, tmp_path):
    console = inproc
    h = console.http()
    csrf = h.login(PASSWORD)
    for kind, says in EVIL.items():
        data = _evil_bundle(tmp_path, kind).read_bytes()
        status, body = _upload(h, csrf, data, hashlib.sha256(data).hexdigest())
        assert status == 400 and "the bundle is refused" in body["error"] and says in body["error"], (kind, status, body)
    assert not (console.home / "updates/bundle.tar.gz").exists()
    # issue 36: a bundle whose folder was renamed after it was built is not listed as that version
    renamed = _bundle(tmp_path, {"install.sh": b"echo\n"}, folder="rackside-9.9.10").read_bytes()
    status, body = _upload(h, csrf, renamed, hashlib.sha256(renamed).hexdigest())
    assert status == 400 and "folder says version '9.9.10' but its bundle.json says '9.9.9'" in body["error"], body
    assert json.loads(h.call("GET", "/api/update")[1])["bundle"] is None


def test_between_rounds_a_running_game_gets_the_update_to_switch_after_it(inproc, tmp_path):
    """In-process (support.inproc): the table's retained state comes as the console's bridge hands it
    over, and the command the console publishes is recorded (a real clock's journey: the last test)."""
    from rackside.hall.wire import topics

    console = inproc
    bundle = _bundle(tmp_path, {"install.sh": b"echo\n"})
    h = console.http()
    csrf = h.login(PASSWORD)
    assert _upload(h, csrf, bundle.read_bytes(), hashlib.sha256(bundle.read_bytes()).hexdigest())[0] == 200
    # the table's own retained state says a game runs
    console.deliver(topics.table(console.published.hall, TABLE, "state"), json.dumps(
        {"seq": 3, "game": "game-000001", "phase": "running", "running": 1, "ending": None,
         "players": [{"player": n, "remaining_ms": 60_000, "overtime_s": 0, "penalty": 0, "forfeit": False,
                      "absent": False} for n in (1, 2)],
         "sent_at": "2026-12-01T10:00:00.000+00:00", "version": "0.1.0+old"}).encode())
    overview = lambda: json.loads(h.call("GET", "/api/update")[1])["tables"]  # noqa: E731
    assert wait(overview, 10) == [{"table": TABLE, "version": "0.1.0+old", "phase": "running", "online": False, "update": None}]

    def send(**extra):
        status, body, _ = h.call("POST", "/api/update/send", {"tables": "all", **extra}, {"X-CSRF-Token": csrf})
        return status, json.loads(body)

    wait(lambda: send()[1].get("refused"), 10)  # once the console has the state: refused while the game runs
    status, body = send(between_rounds=True)
    assert status == 200 and [s["table"] for s in body["sent"]] == [TABLE] and not body["refused"], body
    table, sent = console.published.commands[-1]
    assert table == TABLE
    cmd = commands.parse(json.dumps(sent).encode())  # what the clock receives passes the clock's own check
    assert (cmd.version, cmd.wait_s) == ("9.9.9", wire_update.MAX_WAIT_S)
    assert cmd.url == console.url + wire_update.DOWNLOAD_PATH
    r = console.http().client.get(wire_update.DOWNLOAD_PATH, headers={wire_update.TOKEN_HEADER: cmd.token})
    assert r.content == bundle.read_bytes()  # the token fetches the bundle, with no session
    assert overview()[0]["update"] == {"version": "9.9.9", "outcome": "sent", "ok": None, "why": ""}


def _devices_page(playwright, console):
    """The Devices page, the director logged in, its Update section loaded."""
    page = chromium.login(chromium.launch(playwright), console.url, PASSWORD)
    page.goto(console.url + "/devices")
    page.wait_for_selector("#update[data-ready='1']")
    return page


@pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")
def test_a_downgrade_is_sent_only_when_the_director_confirms_it_and_is_audited(broker, console, tmp_path):
    """Issue 36: a clock running a newer version than the bundle on offer is refused it, until the
    Devices page's confirmation sends the command with allow_downgrade (the Pi's root updater
    refuses a downgrade without it: tests/test_bundle_signing.py); each update sent is audited."""
    from playwright.sync_api import sync_playwright

    from support.broker import Recorder

    from rackside.hall.wire import topics

    bundle = _bundle(tmp_path, {"install.sh": b"echo\n"})
    h = Http(console.url)
    csrf = h.login(PASSWORD)
    assert _upload(h, csrf, bundle.read_bytes(), hashlib.sha256(bundle.read_bytes()).hexdigest())[0] == 200
    clock = broker.client(f"table-{TABLE}")
    clock.publish(topics.table(broker.hall, TABLE, "state"), json.dumps(
        {"seq": 0, "game": "game-000001", "phase": "setup", "running": None, "ending": None,
         "players": [{"player": n, "remaining_ms": 60_000, "overtime_s": 0, "penalty": 0, "forfeit": False,
                      "absent": False} for n in (1, 2)],
         "sent_at": "2026-12-01T10:00:00.000+00:00", "version": "9.10.0+g1"}).encode(), qos=1, retain=True).wait_for_publish(5)
    cmds = Recorder(broker, topics.table(broker.hall, TABLE, "cmd"))
    wait(lambda: json.loads(h.call("GET", "/api/update")[1])["tables"], 10)
    status, body, _ = h.call("POST", "/api/update/send", {"tables": [TABLE]}, {"X-CSRF-Token": csrf})
    body = json.loads(body)
    assert status == 200 and not body["sent"] and body["refused"][0]["downgrade"] is True, body
    assert "runs 9.10.0+g1, newer than 9.9.9" in body["refused"][0]["why"]
    status, body, _ = h.call("POST", "/api/update/send", {"tables": [TABLE], "allow_downgrade": "yes"}, {"X-CSRF-Token": csrf})
    assert status == 400 and "allow_downgrade must be true or false" in json.loads(body)["error"]
    try:
        with sync_playwright() as p:
            page = _devices_page(p, console)
            row = page.locator(f"#clocks tr[data-table='{TABLE}']")
            wait(lambda: row.count() == 1 and "9.10.0+g1" in row.inner_text(), 15)
            result = page.locator("#update-result")
            asked = []
            page.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
            row.locator("input.choose").check()
            page.click("#update-chosen")
            wait(lambda: "refused: table 7: its clock runs 9.10.0+g1" in result.inner_text(), 15)
            assert "run a newer version than this bundle" in asked[0] and not cmds.json("cmd")  # dismissed: nothing sent
            page.once("dialog", lambda d: d.accept())
            page.click("#update-chosen")
            wait(lambda: "sent to tables 7" in result.inner_text(), 15)
            assert page.errors == []
        sent = cmds.wait_for(lambda r: r.json("cmd"))[-1]
        cmd = commands.parse(json.dumps(sent).encode())
        assert (cmd.version, cmd.allow_downgrade) == ("9.9.9", True)
        audit = json.loads(h.call("GET", f"/api/audit?table={TABLE}&kind=update")[1])["audit"]
        assert [(a["action"], a["who"], a["reason"], a["after"]["allow_downgrade"]) for a in audit] == [
            ("update (downgrade allowed)", "director", "from 9.10.0+g1 to 9.9.9, a downgrade", True)], audit
    finally:
        clock.disconnect()


def test_a_downgrade_within_one_release_is_told_by_the_build_times_the_console_was_given(inproc, tmp_path):
    """Every bundle of one release differs only by its label (0.1.0+g<commit>: pyproject's version), so
    release numbers cannot tell a downgrade, and the Pi's root updater tells it by build time. The
    console knows the build time of each bundle it was given (kept in its state folder, bounded), so
    it asks for the director's confirmation of that downgrade too. Before, it sent it without
    allow_downgrade, the root updater refused it ("confirm the downgrade on the Devices page"), and
    the page never offered that confirmation: no way from the console to go back within a release."""
    from rackside.hall.console.fleet.updates import Updates
    from rackside.hall.wire import topics

    def bundle(label: str, built: str):
        (tmp_path / label).mkdir()
        manifest = json.dumps({"version": f"0.1.0+{label}", "built": built}).encode()
        return _bundle(tmp_path / label, {"bundle.json": manifest, "install.sh": b"echo\n"}, folder=f"rackside-0.1.0+{label}")

    console = inproc  # in-process (support.inproc), the table's state handed over as the bridge does
    h = console.http()
    csrf = h.login(PASSWORD)
    for label, built in (("g2", "2026-12-02T09:00:00Z"), ("g1", "2026-12-01T09:00:00Z")):  # the newer one first
        data = bundle(label, built).read_bytes()
        assert _upload(h, csrf, data, hashlib.sha256(data).hexdigest())[0] == 200
    console.deliver(topics.table(console.published.hall, TABLE, "state"), json.dumps(
        {"seq": 0, "game": "game-000001", "phase": "setup", "running": None, "ending": None,
         "players": [{"player": n, "remaining_ms": 60_000, "overtime_s": 0, "penalty": 0, "forfeit": False,
                      "absent": False} for n in (1, 2)],
         "sent_at": "2026-12-01T10:00:00.000+00:00", "version": "0.1.0+g2"}).encode())
    wait(lambda: json.loads(h.call("GET", "/api/update")[1])["tables"], 10)
    status, body, _ = h.call("POST", "/api/update/send", {"tables": [TABLE]}, {"X-CSRF-Token": csrf})
    body = json.loads(body)
    assert status == 200 and not body["sent"] and body["refused"][0]["downgrade"] is True, body
    assert "runs 0.1.0+g2, newer than 0.1.0+g1" in body["refused"][0]["why"]
    assert console.published.commands == []  # refused: nothing went to the table
    # a console started again knows them still
    assert Updates(console.home / "updates").built("0.1.0+g2") == "2026-12-02T09:00:00Z"


def _tampered_inside(archive, out):
    """`archive` with one file changed inside (its SHA256SUMS left as built)."""
    with tarfile.open(archive) as src, tarfile.open(out, "w:gz") as dst:
        for m in src:
            f = src.extractfile(m) if m.isfile() else None
            if m.name.endswith("/source/game/clock.py"):
                f = io.BytesIO(b"# tampered\n")
                m.size = len(f.getvalue())
            dst.addfile(m, f)
    return out


@needs_root
@pytest.mark.skipif(not chromium.have_chromium(), reason="Debian's chromium is not installed (setup.sh --dev)")
def test_a_clock_updates_from_the_devices_page(offline_wheels, broker, console, tmp_path, monkeypatch):
    from playwright.sync_api import sync_playwright

    archive = tmp_path / "rackside.tar.gz"
    key = tmp_path / signing.KEY_FILE  # the hall's update key: the clock's root updater installs only what it signed
    public = signing.make_key(key)
    built = build_bundle(copy_checkout(tmp_path / "src"), offline_wheels, archive, "u2", "--sign-key", str(key))
    assert built.returncode == 0, built.stderr
    digest = archive.with_name(archive.name + ".sha256").read_text().split()[0]
    data = archive.read_bytes()
    tampered = _tampered_inside(archive, tmp_path / "tampered.tar.gz")

    # The clock installs into a test root, with no systemd (install.sh's readiness check: the new
    # version's clock on simulated pins).
    root = tmp_path / "root"
    (root / "etc/rackside").mkdir(parents=True)
    (root / signing.TRUSTED_KEY).write_text(public)
    systemctl, _ = fake_systemctl(tmp_path)
    monkeypatch.setenv("RACKSIDE_SYSTEMCTL", systemctl)
    monkeypatch.setenv("RACKSIDE_PYTHON", sys._base_executable)
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, TABLE), tmp_path / "clock-state")
    live.hall.updater.command = [*RACKSIDE, "update", "--root", str(root), "--user", "root"]
    try:
        with sync_playwright() as p:
            page = _devices_page(p, console)
            result = page.locator("#update-result")

            def upload(path, sha256):
                page.set_input_files("#bundle-file", str(path))
                page.fill("#bundle-sha256", sha256)
                page.click("#upload-go")

            # a bundle with a file changed inside (its own SHA-256 given right) is refused
            upload(tampered, hashlib.sha256(tampered.read_bytes()).hexdigest())
            wait(lambda: "source/game/clock.py: does not match SHA256SUMS" in result.inner_text(), 30)
            upload(archive, digest)
            wait(lambda: "rackside 0.1.0+u2" in page.locator("#bundle").inner_text(), 60)

            row = page.locator(f"#clocks tr[data-table='{TABLE}']")
            wait(lambda: row.count() == 1 and "online" in row.inner_text(), 15)
            from rackside import running_version
            wait(lambda: running_version() in row.inner_text(), 15)  # the version the clock's state says it runs
            live.tap("right")  # a game in progress: refused unless between rounds
            wait(lambda: "running (in progress)" in row.inner_text(), 15)
            row.locator("input.choose").check()
            page.click("#update-chosen")
            wait(lambda: f"refused: table {TABLE}: its game is running" in result.inner_text(), 15)
            live.command("end")
            wait(lambda: "ended" in row.inner_text(), 15)

            # the file the console serves is changed on its disk: the clock refuses what it fetched
            served = console.home / "updates/bundle.tar.gz"
            served.write_bytes(data[:-10] + b"0123456789")
            page.once("dialog", lambda d: d.accept())
            page.click("#update-all")
            wait(lambda: row.get_attribute("data-outcome") == "failed", 60)
            assert "refused" in row.inner_text() and digest in row.inner_text()
            assert not (root / "opt").exists()

            # a bundle the hall's key did not sign: the console takes it (its own SHA256SUMS is
            # right), the clock's root updater refuses it (issue 25, defect 5)
            unsigned = tmp_path / "unsigned.tar.gz"
            assert build_bundle(copy_checkout(tmp_path / "src-unsigned"), offline_wheels, unsigned, "u3").returncode == 0
            upload(unsigned, hashlib.sha256(unsigned.read_bytes()).hexdigest())
            wait(lambda: "rackside 0.1.0+u3" in page.locator("#bundle").inner_text(), 60)
            row.locator("input.choose").check()
            page.click("#update-chosen")
            wait(lambda: row.get_attribute("data-outcome") == "failed" and "not signed" in row.inner_text(), 120)
            assert not (root / "opt/rackside/0.1.0+u3").exists()
            upload(archive, digest)
            wait(lambda: "rackside 0.1.0+u2" in page.locator("#bundle").inner_text(), 60)

            served.write_bytes(data)
            row.locator("input.choose").check()
            page.click("#update-chosen")
            wait(lambda: row.get_attribute("data-outcome") == "switched", 300)
            assert "switched 0.1.0+u2" in row.inner_text()
            if os.environ.get("RACKSIDE_SCREENSHOTS"):
                page.screenshot(path=os.environ["RACKSIDE_SCREENSHOTS"] + "/console-update.png", full_page=True)
            assert page.errors == []
        assert os.readlink(root / "opt/rackside/current") == "0.1.0+u2"
        # the fetched bundle is gone once installed; the result stays for a clock restarted by its switch
        assert [p.name for p in (tmp_path / "clock-state/updates").iterdir()] == [update.RESULT]
    finally:
        live.close()


def test_the_console_keeps_each_outcome_as_the_clock_acked_it(tmp_path):
    """"not switched" (installed, a game still in progress) is neither switched nor failed: the
    ack's `update` reaches the page as the clock sent it (hall.console.state.contract)."""
    from rackside.hall.wire import topics
    from rackside.hall.console.shell.app import Console
    from rackside.hall.console.fleet.updates import Updates
    from rackside.hall.wire.payloads import ack_payload

    console = Console("testhall", "x")
    console.updates = Updates(tmp_path)
    console.state.command_sent(TABLE, {"id": "u1", "cmd": "update", "version": "9.9.9"})
    ack = ack_payload("u1", False, "install.sh: installed, not switched (a game is in progress)", None, time.time_ns(),
                      update={"version": "9.9.9", "outcome": "not switched"})
    console.on_message(topics.table("testhall", TABLE, "ack"), ack)
    assert console.updates.outcomes[TABLE] == {"version": "9.9.9", "outcome": "not switched", "ok": False,
                                              "why": "install.sh: installed, not switched (a game is in progress)"}


def test_a_bundles_build_time_is_written_off_the_event_loop(tmp_path, monkeypatch):
    """updates.given wrote built.json on the console's event loop: a slow or failing card stalled every
    page and every broker message meanwhile. It is written on a worker thread, the loop free; the
    file is the same and read back at the next start."""
    import asyncio
    import inspect
    import threading

    from rackside.hall.console.fleet import updates as updates_module
    from rackside.hall.console.fleet.updates import BUILT_FILE, Updates

    writers = []
    real = updates_module.write_atomic

    def seen(path, text):  # the real write, noting which thread did it
        writers.append(threading.current_thread())
        return real(path, text)
    monkeypatch.setattr(updates_module, "write_atomic", seen)
    u = Updates(tmp_path)

    async def upload_twice():
        for version, built in (("0.1.0", "2026-12-01T09:00:00Z"), ("0.2.0", "2026-12-02T09:00:00Z")):
            done = u.given(version, built)
            if inspect.isawaitable(done):
                await done
        return threading.current_thread()

    loop_thread = asyncio.run(upload_twice())
    assert len(writers) == 2 and loop_thread not in writers
    assert json.loads((tmp_path / BUILT_FILE).read_text()) == [["0.1.0", "2026-12-01T09:00:00Z"], ["0.2.0", "2026-12-02T09:00:00Z"]]
    assert Updates(tmp_path).built("0.2.0") == "2026-12-02T09:00:00Z"


def test_an_upload_touches_the_disk_only_off_the_event_loop(inproc, tmp_path, monkeypatch):
    """The upload's folder made, its partial file opened, written, closed and removed: each on a
    worker thread, never the console's event loop (a slow card would stall every page and the
    broker's messages), for a bundle kept and for one refused."""
    import pathlib
    import threading

    console = inproc
    folder = console.home / "updates"
    touched: list[tuple[str, threading.Thread]] = []
    for name in ("mkdir", "open", "unlink"):
        real = getattr(pathlib.Path, name)

        def watched(self, *args, _real=real, _name=name, **kwargs):
            if self == folder or self.parent == folder:
                touched.append((_name, threading.current_thread()))
            return _real(self, *args, **kwargs)
        monkeypatch.setattr(pathlib.Path, name, watched)
    loop = console.on_loop(threading.current_thread)
    h = console.http()
    csrf = h.login(PASSWORD)
    manifest = b'{"version": "9.9.9", "built": "2026-12-01T09:00:00Z"}\n'
    data = bundle_archive(tmp_path / "b.tar.gz", {"bundle.json": manifest, "install.sh": b"echo\n"},
                          folder="rackside-9.9.9").read_bytes()
    assert _upload(h, csrf, data, hashlib.sha256(data).hexdigest())[0] == 200
    assert _upload(h, csrf, b"junk", hashlib.sha256(b"junk").hexdigest())[0] == 400
    assert sorted({name for name, _ in touched}) == ["mkdir", "open", "unlink"]
    assert [name for name, thread in touched if thread is loop] == []


def test_an_upload_cut_off_leaves_no_partial_file_past_the_next_start(tmp_path):
    """An upload's partial file outlives its request when the console is killed mid-upload, or the
    request is cancelled while its file is still being opened on a worker thread (the removal can run
    first). The next start removes every one: a card is not filled by bundle-sized leftovers."""
    from rackside.hall.console.fleet.updates import Updates

    (tmp_path / ".upload-0123abcd").write_bytes(b"x" * 1024)
    (tmp_path / "bundle.tar.gz").write_bytes(b"kept")
    Updates(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle.tar.gz"]
