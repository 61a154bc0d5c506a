"""`rackside hall publish DEST`: the console's public view copied out with Debian's rclone, through
the real command: to a local folder (rclone's local backend) and to a real HTTP remote (`rclone serve
webdav`, started here as the destination, read back over HTTP). Nothing is mocked."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from rackside import paths
from rackside.atomic import write_atomic
from support.broker import end_process, free_port, wait_listening
from support.wait import until, wait

RACKSIDE = [sys.executable, "-m", "rackside", "hall", "publish"]
RCLONE = shutil.which("rclone")
pytestmark = pytest.mark.skipif(RCLONE is None, reason="rclone is not installed (./setup.sh --dev installs it)")


def public_view(folder: Path, round_: int = 1) -> None:
    """A folder as the console writes it: the page and JSON files, each replaced atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / "index.html", "<!doctype html><title>Open 2026</title>\n", 0o644)
    write_atomic(folder / "standings-A.json", json.dumps({"division": "A", "round": round_}), 0o644)
    (folder / "tables").mkdir(exist_ok=True)
    write_atomic(folder / "tables" / "12.json", json.dumps({"table": 12, "round": round_}), 0o644)


def run(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*RACKSIDE, *args], capture_output=True, text=True, timeout=timeout, env=env)


def files(folder: Path, *, hidden: bool = True) -> dict[str, str]:
    """Every file under `folder` by relative path (`hidden=False`: not those starting with ".")."""
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file() and (hidden or not p.name.startswith("."))}


class Webdav:
    """`rclone serve webdav` on a loopback port: a real HTTP remote (rclone's webdav backend PUTs to
    it; anyone GETs from it), its log (-v) listing every request."""

    def __init__(self, root: Path, log: Path, port: int | None = None) -> None:
        self.root, self.log_path = root, log
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Webdav":
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([RCLONE, "serve", "webdav", str(self.root), "--addr", f"127.0.0.1:{self.port}", "-v"],
                                         stdout=log, stderr=log)
        wait_listening(self.proc, self.port, "rclone serve webdav", self.log_path, 30, 0.05)
        return self

    def stop(self) -> None:
        end_process(self.proc)
        self.proc = None

    def get(self, path: str) -> str | None:
        """The file's text, or None when it cannot be read now: not there yet, the server down, or
        an upload replacing it while it is read (the body ends short of its Content-Length:
        http.client's IncompleteRead, not an OSError). A caller waiting for a content polls again."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/{path}", timeout=5) as r:
                return r.read().decode()
        except (OSError, http.client.HTTPException):
            return None


@pytest.fixture
def webdav(tmp_path):
    server = Webdav(tmp_path / "webdav-root", tmp_path / "webdav.log").start()
    yield server
    server.stop()


def remote_env(tmp_path: Path, name: str, server: Webdav) -> dict:
    """A named rclone remote, as `rclone config` would make it, given in rclone's environment form."""
    env = dict(os.environ)
    env["RCLONE_CONFIG"] = str(tmp_path / "rclone.conf")  # none: never the machine's own remotes
    env[f"RCLONE_CONFIG_{name.upper()}_TYPE"] = "webdav"
    env[f"RCLONE_CONFIG_{name.upper()}_URL"] = f"http://127.0.0.1:{server.port}"
    return env


class Watcher:
    """`rackside hall publish --watch` running; its stderr collected line by line (on a thread)."""

    def __init__(self, *args: str, env: dict | None = None, verbose: bool = False) -> None:
        command = [sys.executable, "-m", "rackside", *(["-v"] if verbose else []), "hall", "publish", *args, "--watch"]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        self._lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self._lines.append(line.rstrip("\n"))

    def lines(self) -> list[str]:
        return list(self._lines)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(30)
        self._reader.join(30)
        return code


# --- once ------------------------------------------------------------------------------------------


def test_once_copies_the_default_folder_to_a_local_folder_and_leaves_temporary_files_behind(tmp_path):
    # No --from: the folder under the console's data folder (`rackside paths` "public view").
    folder = paths.public_dir()
    public_view(folder)
    (folder / ".standings-A.json.4242.tmp").write_text("half-written")  # an atomic write on its way
    dest = tmp_path / "site"
    r = run(str(dest))
    assert r.returncode == 0, r.stderr
    assert files(dest) == files(folder, hidden=False) and ".standings-A.json.4242.tmp" not in files(dest)
    assert str(folder) in r.stdout and r.stderr == ""
    # A sync: what the console dropped goes from the site too.
    (folder / "tables" / "12.json").unlink()
    public_view_round_2 = folder / "standings-A.json"
    write_atomic(public_view_round_2, json.dumps({"division": "A", "round": 2}), 0o644)
    assert run(str(dest)).returncode == 0
    assert files(dest) == {"index.html": files(folder)["index.html"], "standings-A.json": '{"division": "A", "round": 2}'}


def test_paths_names_the_public_view():
    r = subprocess.run([sys.executable, "-m", "rackside", "paths"], capture_output=True, text=True, timeout=60)
    assert str(paths.public_dir()) in r.stdout


def test_once_to_a_real_http_remote_named_as_rclone_config_names_it(tmp_path, webdav):
    folder = tmp_path / "public"
    public_view(folder)
    r = run("partner:open2026", "--from", str(folder), env=remote_env(tmp_path, "partner", webdav))
    assert r.returncode == 0, r.stderr
    assert webdav.get("open2026/index.html") == (folder / "index.html").read_text()
    assert json.loads(webdav.get("open2026/tables/12.json")) == {"table": 12, "round": 1}


def test_a_change_that_keeps_the_size_reaches_a_remote_that_keeps_no_modification_times(tmp_path, webdav):
    # A JSON file's times tick from 742113 to 741113: the same size. A WebDAV host keeps no
    # modification times, so rclone's own comparison there is by size alone and sees no change.
    folder = tmp_path / "public"
    public_view(folder)
    env = remote_env(tmp_path, "partner", webdav)
    assert run("partner:site", "--from", str(folder), env=env).returncode == 0
    public_view(folder, 2)
    r = run("partner:site", "--from", str(folder), env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(webdav.get("site/tables/12.json")) == {"table": 12, "round": 2}


@pytest.mark.parametrize("args, line", [
    (["nosuch:bucket/path"], "DEST 'nosuch:bucket/path': rclone has no remote 'nosuch' (configured: none); set it up with `rclone config`, or give a local folder"),
    (["{folder}/inside"], "DEST '{folder}/inside': inside --from {folder} or holding it (allowed is a folder apart from it)"),
    (["{tmp}/site", "--watch", "--every", "0.2"], "--every 0.2: allowed are 1 to 3600 seconds"),
    (["--", "--delete-excluded"], "DEST '--delete-excluded': allowed are an rclone remote (\"remote:bucket/path\") or a local folder"),
    (["{tmp}/file.txt"], "DEST '{tmp}/file.txt': not a folder (allowed is a folder, made if missing, or an rclone remote)"),
])
def test_a_dest_or_setting_that_cannot_work_is_one_line_and_exit_2(tmp_path, args, line):
    folder = tmp_path / "public"
    public_view(folder)
    (tmp_path / "file.txt").write_text("x")
    env = dict(os.environ, RCLONE_CONFIG=str(tmp_path / "rclone.conf"))
    fill = {"folder": folder, "tmp": tmp_path}
    r = run("--from", str(folder), *[a.format(**fill) for a in args], env=env)
    assert (r.returncode, r.stderr, r.stdout) == (2, f"rackside hall publish: {line.format(**fill)}\n", "")


def test_a_folder_without_its_page_is_not_synced_so_the_site_is_never_wiped(tmp_path):
    dest = tmp_path / "site"
    public_view(dest)  # what was published before
    empty = tmp_path / "public"
    empty.mkdir()
    r = run(str(dest), "--from", str(empty))
    assert r.returncode == 1
    assert r.stderr == f"rackside hall publish: --from {empty}: no index.html there, so nothing to publish (the console writes the public view there)\n"
    assert "index.html" in files(dest)


def test_rclone_missing_is_one_line(tmp_path):
    bare = tmp_path / "bin"  # a PATH with no rclone on it
    bare.mkdir()
    env = dict(os.environ, PATH=str(bare))
    r = run(str(tmp_path / "site"), env=env)
    assert (r.returncode, r.stderr) == (1, "rackside hall publish: rclone is not installed: sudo apt install rclone (./setup.sh --dev does)\n")


def test_a_failing_sync_once_says_why_in_one_line(tmp_path):
    folder = tmp_path / "public"
    public_view(folder)
    port = free_port()  # nothing listens there
    r = run(f":webdav,url='http://127.0.0.1:{port}':site", "--from", str(folder), env=dict(os.environ, RCLONE_CONFIG=str(tmp_path / "none.conf")))
    assert r.returncode == 1
    assert len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith(f"rackside hall publish: sync to :webdav,url='http://127.0.0.1:{port}':site failed: rclone exited 1: ")
    assert "connection refused" in r.stderr


# --- watch ---------------------------------------------------------------------------------------


def test_watch_waits_for_the_view_then_follows_every_change_to_a_local_folder(tmp_path):
    folder, dest = tmp_path / "public", tmp_path / "site"
    w = Watcher(str(dest), "--from", str(folder), "--every", "1")
    try:
        wait(lambda: any("waiting for" in line for line in w.lines()), 60)
        public_view(folder)
        wait(lambda: dest.is_dir() and files(dest) == files(folder), 60)
        for round_ in (2, 3):
            public_view(folder, round_)
            wait(lambda: files(dest) == files(folder), 60)
    finally:
        code = w.stop()
    assert code == 0
    assert w.lines() == [
        f"rackside hall publish: publishing {folder} to {dest} on every change, at most once every 1 s (Ctrl-C stops)",
        f"rackside hall publish: waiting for {folder / 'index.html'} (the console writes the public view there)",
    ]


def syncs(lines: list[str], dest: str) -> list[str]:
    """The sync attempts `rackside -v hall publish --watch` said, one line each: a good one ("synced
    ..."), the first failure, each further failure ("failed again"), the recovery ("works again")."""
    said = "rackside hall publish: "
    return [line for line in lines if line.startswith((f"{said}synced ", f"{said}sync to {dest} failed: ",
                                                        f"{said}{dest} failed again: ", f"{said}sync to {dest} works again "))]


def test_watch_syncs_at_a_bounded_rate_however_often_the_console_writes(tmp_path, webdav):
    """At most one sync every --every seconds, counted from the command's own record (-v says each
    attempt, good or failed) in a window the test's clock brackets: from before the command starts
    to after it has stopped. N syncs each `every` after the one before span (N - 1) x every, so
    N <= 1 + window / every however slow the machine (a slow sync or a slow test only widens the
    window). Not the server's PUTs: rclone re-PUTs a file on a low-level retry, and the first sync's
    `sync` step uploads again a file the console changed after its `copy`; nor a window opened when
    the first upload is seen, long after the first sync began."""
    folder = tmp_path / "public"
    public_view(folder)
    every = 2.0
    opened = time.monotonic()
    w = Watcher("partner:site", "--from", str(folder), "--every", f"{every:g}", env=remote_env(tmp_path, "partner", webdav), verbose=True)
    made = lambda: syncs(w.lines(), "partner:site")  # noqa: E731
    try:
        n = 0
        # The console writing all the while, some 100 times a second (each write then a wait of at
        # most 10 ms for the record), until the command has synced 4 times: 3 times after the first.
        while not until(lambda: len(made()) >= 4, 0.01):
            write_atomic(folder / "standings-A.json", json.dumps({"division": "A", "write": n}), 0o644)
            n += 1
            if time.monotonic() - opened > 180:
                raise TimeoutError(f"4 syncs not said in 180 s: {w.lines()}")
        last = json.dumps({"division": "A", "write": n - 1})
        wait(lambda: webdav.get("site/standings-A.json") == last, 60)  # the last write always arrives
    finally:
        code = w.stop()
        window = time.monotonic() - opened
    said = made()
    assert code == 0 and len(said) >= 4, "\n".join(w.lines())
    assert len(said) <= 1 + window / every, (len(said), window, w.lines())


def test_watch_reports_a_dead_remote_once_and_catches_up_when_it_is_back(tmp_path, webdav):
    folder = tmp_path / "public"
    public_view(folder)
    # -v says each further failed attempt too (as "failed again"): the test's barrier that retries were made.
    w = Watcher("partner:site", "--from", str(folder), "--every", "1", env=remote_env(tmp_path, "partner", webdav), verbose=True)
    said = lambda text: [line for line in w.lines() if text in line]  # noqa: E731
    try:
        wait(lambda: webdav.get("site/index.html") is not None, 60)
        webdav.stop()
        public_view(folder, 2)
        wait(lambda: said(" failed: "), 60)
        public_view(folder, 3)  # more changes while it is down: retried, not said again
        wait(lambda: len(said("failed again")) >= 2, 60)
        webdav.start()
        wait(lambda: said("works again (after"), 60)
        wait(lambda: webdav.get("site/tables/12.json") == json.dumps({"table": 12, "round": 3}), 60)
    except TimeoutError:
        raise AssertionError(f"publish said: {w.lines()}") from None
    finally:
        w.stop()
    outage = [line for line in w.lines() if "failed again" not in line and "synced" not in line]
    assert len(outage) == 3, "\n".join(w.lines())  # the start, the failure once, the recovery once
    assert outage[1].startswith("rackside hall publish: sync to partner:site failed: rclone exited ")
    assert "connection refused" in outage[1] and outage[1].endswith("; retrying (said once until it works again)")
    assert outage[2].startswith("rackside hall publish: sync to partner:site works again (after ")
