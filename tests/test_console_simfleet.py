"""Simulated tables spread over processes (issue 17.6): a demo or bench past paho's select() limit.

Quick: seven tables, three to a process, on a real Mosquitto and the console: every table is shown,
a command reaches a table in the last process and its ack comes back, and closing leaves no process.
Slow (RACKSIDE_SLOW=1): `rackside hall demo --tables 999` as a user runs it, every table shown.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from rackside.hall.console.demohall.demo import start_hall

from support.console import Http
from support.wait import until

PASSWORD = "fleet-pw"


def wait_for(predicate, timeout: float, what: str):
    value = until(predicate, timeout, poll=0.2)
    assert value, f"not within {timeout} s: {what}"
    return value


def snapshot(http: Http) -> dict:
    return {t["table"]: t for t in json.loads(http.call("GET", "/api/snapshot")[1])["tables"]}


def test_tables_in_three_processes_are_all_shown_and_commanded(tmp_path):
    from support.broker import Broker

    broker = Broker(tmp_path / "broker", tables="1-7", stations=1).start()
    scripts = {n: [(-60, ("press", 2))] for n in range(1, 8)}
    hall = start_hall(port=broker.port, devices=broker.devices, tables=list(range(1, 8)), workdir=tmp_path, scripts=scripts,
                      round_start_ago_s=None, password=PASSWORD, hall=broker.hall, per_process=3)
    try:
        pids = hall.sim.pids
        assert len(pids) == 3 and len(set(pids)) == 3 and os.getpid() not in pids
        http = Http(hall.server.url)
        token = http.login(PASSWORD)
        wait_for(lambda: all((t["state"] or {}).get("phase") == "running" for t in snapshot(http).values())
                 and len(snapshot(http)) == 7, 20, "seven running tables")
        status, body, _ = http.call("POST", "/api/command", {"cmd": "identify", "tables": [7]}, {"X-CSRF-Token": token})
        assert status == 200, body
        cid = json.loads(body)["sent"][0]["id"]
        wait_for(lambda: any(h.get("kind") == "ack" and h.get("id") == cid and h.get("ok")
                             for h in json.loads(http.call("GET", "/api/table/7")[1])["history"]), 10, "table 7's ack")
        hall.sim.act(6, ("offline",))
        wait_for(lambda: snapshot(http)[6]["status"] == "offline", 10, "table 6 offline")
        wait_for(lambda: hall.sim.inputs >= 7, 10, "the processes' input counts")
    finally:
        hall.stop()
        broker.stop()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.skipif(os.environ.get("RACKSIDE_SLOW") != "1", reason="slow: RACKSIDE_SLOW=1")
def test_the_demo_runs_999_tables():
    demo = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "demo", "--tables", "999", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        while not any("Ctrl-C" in x for x in lines):
            line = demo.stdout.readline()
            assert line, "".join(lines)
            lines.append(line)
        text = "".join(lines)
        http = Http(re.search(r"console: (\S+)", text).group(1))
        http.login(re.search(r"password (\S+)", text).group(1))
        tables = wait_for(lambda: (s := snapshot(http)) and len(s) == 999 and all(t["state"] for t in s.values()) and s,
                          120, "999 tables with a state")
        assert sum(t["status"] == "online" for t in tables.values()) >= 998  # one demo table loses power
    finally:
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(60) == 0
