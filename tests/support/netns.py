"""Two network namespaces of their own, joined by a veth pair: the director's machine and the
hall's network, so that an attack comes from other addresses over a real interface (not loopback,
where every address is this machine's own) and a firewall can be loaded without touching the host's.

    with TwoMachines(["10.25.0.2", "10.25.0.3"]) as net:
        net.on_machine(["nft", "-f", rules])            # a command in the director's machine
        proc = subprocess.Popen(net.machine_cmd([...]))  # a process there (the console, the broker)
        with net.on_hall():                              # this thread's new sockets: the hall's
            socket.create_connection((net.machine_address, port), source_address=("10.25.0.2", 0))

The director's machine is `MACHINE` (10.25.0.1/24); the hall's addresses are given. Needs root
(CAP_SYS_ADMIN and CAP_NET_ADMIN), `unshare`, `nsenter` and `ip`: `available()` says why not.
Each namespace lives as long as a `sleep` holding it; closing ends both, and every interface and
rule in them goes with them. Used by tests/test_console_firewall.py and bench/console_crowd.py.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import subprocess

CLONE_NEWNET = 0x40000000
MACHINE = "10.25.0.1"
PREFIX = 24


def available() -> str | None:
    """None when namespaces can be made here, else why not (for a skip)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("unshare", "nsenter", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    probe = subprocess.run(["unshare", "-n", "ip", "link", "set", "lo", "up"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"cannot make a network namespace: {probe.stderr.strip()}"
    return None


def _holder() -> subprocess.Popen:
    """A process in a new network namespace, holding it until killed."""
    p = subprocess.Popen(["unshare", "-n", "sh", "-c", "echo ready; exec sleep infinity"], stdout=subprocess.PIPE, text=True)
    if p.stdout.readline().strip() != "ready":
        p.kill()
        raise RuntimeError("unshare -n did not start")
    return p


def _setns(fd: int) -> None:
    """setns(2) for the calling thread (Python 3.11 has no os.setns)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


class TwoMachines:
    def __init__(self, hall_addresses: list[str]) -> None:
        self.machine_address = MACHINE
        self.hall_addresses = list(hall_addresses)
        self._machine = self._hall = None

    def __enter__(self) -> "TwoMachines":
        try:
            self._machine, self._hall = _holder(), _holder()
            hall_pid = str(self._hall.pid)
            for cmd in (["ip", "link", "set", "lo", "up"],
                        ["ip", "link", "add", "rs-machine", "type", "veth", "peer", "name", "rs-hall", "netns", hall_pid],
                        ["ip", "addr", "add", f"{MACHINE}/{PREFIX}", "dev", "rs-machine"],
                        ["ip", "link", "set", "rs-machine", "up"]):
                self.on_machine(cmd)
            self.on_hall_run(["ip", "link", "set", "lo", "up"])
            for a in self.hall_addresses:
                self.on_hall_run(["ip", "addr", "add", f"{a}/{PREFIX}", "dev", "rs-hall"])
            self.on_hall_run(["ip", "link", "set", "rs-hall", "up"])
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for p in (self._machine, self._hall):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()

    # --- running things in either -----------------------------------------------------------------

    def machine_cmd(self, cmd: list[str]) -> list[str]:
        """`cmd` as run in the director's machine (a command line for Popen)."""
        return ["nsenter", "-t", str(self._machine.pid), "-n", "--", *cmd]

    def on_machine(self, cmd: list[str], **kw) -> subprocess.CompletedProcess:
        return subprocess.run(self.machine_cmd(cmd), check=True, capture_output=True, text=True, **kw)

    def on_hall_run(self, cmd: list[str], **kw) -> subprocess.CompletedProcess:
        return subprocess.run(["nsenter", "-t", str(self._hall.pid), "-n", "--", *cmd], check=True, capture_output=True, text=True, **kw)

    @contextlib.contextmanager
    def _in(self, pid: int):
        """This thread in `pid`'s network namespace while inside: the sockets it makes there stay
        there (setns moves only the calling thread)."""
        back = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        there = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
        try:
            _setns(there)
            try:
                yield
            finally:
                _setns(back)
        finally:
            os.close(back)
            os.close(there)

    def on_hall(self):
        return self._in(self._hall.pid)

    def on_the_machine(self):
        return self._in(self._machine.pid)

    def netstat(self) -> dict[str, int]:
        """The director's machine's TcpExt counters (/proc/net/netstat there): ListenOverflows,
        ListenDrops (new connections the full listening queue dropped)."""
        lines = self.on_machine(["cat", "/proc/net/netstat"]).stdout.splitlines()
        for names, values in zip(lines[::2], lines[1::2]):
            if names.startswith("TcpExt:"):
                return dict(zip(names.split()[1:], map(int, values.split()[1:])))
        return {}
