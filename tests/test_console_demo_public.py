"""`rackside hall demo --public PORT` (issue 28): the demo serves the public hall too, so a director
sees what players' phones and the hall's screens see, through the command a director runs."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request

from support.broker import free_port
from support.wait import wait


def get(url: str):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.read(), r.headers


def test_the_demo_serves_the_public_hall_on_its_own_port(tmp_path):
    demo = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "demo", "--tables", "3", "--port", "0", "--public", "0",
                             "--dir", str(tmp_path / "demo")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        while not any(line.startswith("Ctrl-C") for line in lines):
            line = demo.stdout.readline()
            assert line, "".join(lines)  # the demo ended before saying where it is
            lines.append(line)
        said = "".join(lines)
        found = re.search(r"public:\s+(http://127\.0\.0\.1:(\d+)/)", said)
        assert found, said
        url, port = found.group(1), int(found.group(2))
        assert port != 0 and "no login" in said, said
        console = re.search(r"console:\s+(http://\S+)", said).group(1)
        assert not console.startswith(url)  # its own listener, not the director's

        wait(lambda: json.loads(get(url + "live.json")[1])["tables"] and True, 30)
        status, body, headers = get(url + "hall.json")
        assert status == 200 and headers["ETag"]
        assert json.loads(body)["hall"] == "demo"
        players = json.loads(get(url + "players.json")[1])["players"]
        assert len(players) == 6 and all(p["now"]["table"] in (1, 2, 3) for p in players)  # the demo's names, seated
        assert b"public.js" in get(url)[1]  # the page
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(60) == 0
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()


def test_a_busy_public_port_is_one_line_before_anything_starts(tmp_path):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    try:
        out = subprocess.run([sys.executable, "-m", "rackside", "hall", "demo", "--tables", "1", "--port", str(free_port()),
                              "--public", str(port), "--dir", str(tmp_path / "demo")], capture_output=True, text=True, timeout=60)
    finally:
        s.close()
    assert out.returncode == 1
    lines = (out.stdout + out.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    assert f"port {port}" in lines[0] and "--public 0" in lines[0]
