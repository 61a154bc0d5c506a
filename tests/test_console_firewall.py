"""deploy/rackside-console.nft, the director's machine's firewall for the console's port (issue 25,
item 4): one address flooding new connections cannot fill the kernel's listening queue, so the
director's new connection is not dropped; the director's machine's own connections are never
limited. Loaded for real with `nft` in a network namespace of its own (tests/support/netns.py):
the hall's addresses reach the director's machine over a veth pair, as over the hall's Wi-Fi.

The listening socket here never accepts until told: the worst case of a console slower than the
flood (bench/console_crowd.py --network netns measures the real console under a crowd). Without
the rules, 300 connection attempts from one address fill its queue (128) and the director's
connection is dropped (it would be resent after 1 s): the first test shows that, the second that
the rules prevent it."""

from __future__ import annotations

import errno
import json
import shutil
import socket
from pathlib import Path

import pytest
from support import netns
from support.wait import until

RULES = Path(__file__).resolve().parent.parent / "deploy" / "rackside-console.nft"
PORT = 9443  # not the file's default (8443): the port is the one line a director changes
CROWD, DIRECTOR = "10.25.0.2", "10.25.0.100"
MANY = [f"10.25.0.{i}" for i in range(3, 23)]  # 20 more addresses
WHY_NOT = netns.available() or (None if shutil.which("nft") else "nft is not installed (./setup.sh --dev installs nftables)")


@pytest.fixture
def net():
    if WHY_NOT:
        pytest.skip(WHY_NOT)
    with netns.TwoMachines([DIRECTOR, CROWD, *MANY]) as n:
        yield n


def load_rules(net, folder: Path) -> None:
    text = RULES.read_text()
    assert "define console_port = 8443\n" in text
    path = folder / "rackside-console.nft"
    path.write_text(text.replace("define console_port = 8443\n", f"define console_port = {PORT}\n"))
    net.on_machine(["nft", "-f", str(path)])
    net.on_machine(["nft", "-f", str(path)])  # loading it again replaces its table (the install may run twice)


def dropped(net) -> int:
    """SYNs the rule set dropped (its counters)."""
    rules = json.loads(net.on_machine(["nft", "-j", "list", "table", "inet", "rackside_console"]).stdout)["nftables"]
    return sum(e["counter"]["packets"] for r in rules if "rule" in r for e in r["rule"]["expr"] if "counter" in e)


def listener(net) -> socket.socket:
    """The console's port on the director's machine, with uvicorn's backlog (limits.BACKLOG), not accepting."""
    from rackside.hall.console.common import limits

    with net.on_the_machine():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", PORT))
        s.listen(limits.BACKLOG)
    return s


def flood(net, source: str, count: int) -> list[socket.socket]:
    """`count` connection attempts from `source` at once (non-blocking: each SYN goes out in connect())."""
    out = []
    with net.on_hall():
        for _ in range(count):
            s = socket.socket()
            s.setblocking(False)
            s.bind((source, 0))
            assert s.connect_ex((net.machine_address, PORT)) in (errno.EINPROGRESS, 0)
            out.append(s)
    return out


def connects(net, source: str | None, timeout: float = 0.9) -> bool:
    """Whether one connection from `source` (None: the director's machine itself) is made before the
    kernel would resend a dropped SYN (1 s)."""
    ctx = net.on_hall() if source else net.on_the_machine()
    with ctx:
        s = socket.socket()
        s.settimeout(timeout)
        try:
            if source:
                s.bind((source, 0))
            s.connect((net.machine_address, PORT))
            return True
        except OSError:
            return False
        finally:
            s.close()


def drain(server: socket.socket) -> int:
    server.setblocking(False)
    n = 0
    while True:
        try:
            server.accept()[0].close()
            n += 1
        except BlockingIOError:
            server.setblocking(True)
            return n


def close(sockets) -> None:
    for s in sockets:
        s.close()


def test_the_hall_wide_burst_fits_in_the_consoles_listening_queue():
    """What lets the machine's own connections in under any crowd: the hall's burst leaves room in
    the queue (hall.console.common.limits.BACKLOG) even while the console accepts nothing."""
    import re

    from rackside.hall.console.common import limits

    bursts = [int(b) for b in re.findall(r"^\s*tcp dport \$console_port .* limit rate over \d+/second burst (\d+) packets counter drop$",
                                          RULES.read_text(), re.M)]
    assert len(bursts) == 1 and bursts[0] < limits.BACKLOG


def test_without_the_rules_one_address_fills_the_listening_queue_and_the_director_waits(net):
    server = listener(net)
    crowd = flood(net, CROWD, 300)
    try:
        assert until(lambda: net.netstat().get("ListenOverflows", 0) > 0, 10)
        assert not connects(net, DIRECTOR), "the director's SYN was not dropped: this test shows nothing"
    finally:
        close(crowd)
        server.close()


def test_with_the_rules_one_address_cannot_fill_it_and_the_machine_itself_is_never_limited(net, tmp_path):
    load_rules(net, tmp_path)
    server = listener(net)
    try:
        # the director's machine itself: more new connections at once than any other address may make
        assert all(connects(net, None) for _ in range(60))
        assert dropped(net) == 0
        assert drain(server) == 60
        crowd = flood(net, CROWD, 300)
        try:
            assert until(lambda: dropped(net) >= 200, 10), f"the rules dropped {dropped(net)} of 300 attempts"
            assert net.netstat().get("ListenOverflows", 0) == 0, "the listening queue filled"
            assert connects(net, DIRECTOR), "the director's connection from another address waited"
        finally:
            close(crowd)
    finally:
        server.close()


def test_with_the_rules_a_crowd_of_many_addresses_cannot_fill_it_and_the_machine_itself_gets_in(net, tmp_path):
    load_rules(net, tmp_path)
    server = listener(net)
    crowd = []
    try:
        for source in MANY:  # 20 each: under the per-address burst, 400 in all over the hall's 100
            crowd += flood(net, source, 20)
        assert until(lambda: dropped(net) >= 200, 10), f"the rules dropped {dropped(net)} of 400 attempts"
        assert net.netstat().get("ListenOverflows", 0) == 0, "the listening queue filled"
        assert all(connects(net, None) for _ in range(10)), "the director's machine's own connection waited"
    finally:
        close(crowd)
        server.close()
