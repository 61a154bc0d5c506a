"""`rackside hall demo --tables 40`: a private Mosquitto, simulated tables playing scripted games,
a simulated challenge station, and the console, in one command. Up to 999 tables: the simulated
tables run in processes of their own, 200 to a process (hall/console/demohall/simfleet.py).

The broker is provisioned exactly as a real hall (`rackside hall provision`: no anonymous access,
a user and ACL a device) on a free loopback port in a temporary directory; the tables' journals are
written there too, so `rackside clock replay --json` can audit every demo game. The director's
password is new each run and printed with the URL.
"""

from __future__ import annotations

import getpass
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rackside.game.clock import Rules
from rackside.hall.director import provision as prov

from ..shell.auth import hash_password
from ..shell.config import ConsoleConfig, PublicConfig
from ..shell.serve import ConsoleServer
from .sim import demo_scripts
from .simfleet import PER_PROCESS, SimFleet

HALL = "demo"  # the demo hall's name in the topics
FIRST = ["Ann", "Bola", "Chen", "Dara", "Eli", "Femi", "Gita", "Hugo", "Ines", "Jude", "Kofi", "Lena", "Mo", "Nell",
         "Omar", "Pia", "Quinn", "Rosa", "Sam", "Tove", "Uma", "Vic", "Wen", "Xan", "Yara", "Zeb"]
LAST = ["Adeyemi", "Brown", "Castro", "Dubois", "Evans", "Fofana", "Gupta", "Hughes", "Ito", "Jansen", "Kaur", "Lopez",
        "Mensah", "Nakamura", "Okafor", "Patel", "Quist", "Rossi", "Silva", "Tan", "Ueda", "Vargas", "Wong", "Young"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def demo_t_file(tables: list[int], seed: int = 3) -> str:
    """A TSH `.t` division for round 1: two players a table, player 2k-1 v 2k at table k's board."""
    rng = random.Random(seed)
    lines = []
    for i, n in enumerate(tables):
        a, b = 2 * i + 1, 2 * i + 2
        for me, opp, first in ((a, b, 1), (b, a, 2)):
            name = f"{rng.choice(LAST)}, {rng.choice(FIRST)}"
            lines.append(f"{name} {rng.randint(900, 2100)} {opp}; ; board {n}; p12 {first};")
    return "\n".join(lines) + "\n"


class Mosquitto:
    """A provisioned Mosquitto on a loopback port, as a child process."""

    def __init__(self, directory: Path, tables: list[int], stations: int = 1) -> None:
        self.dir = directory
        self.port = free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        run_as = getpass.getuser() if os.geteuid() == 0 else None
        self.devices = prov.provision(directory, HALL, tables, stations, port=self.port, bind="127.0.0.1", run_as=run_as, url=self.url,
                                      tls=False)  # one machine, loopback only: nothing crosses a network
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 10.0) -> None:
        exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        if not Path(exe).exists():
            raise RuntimeError("mosquitto is not installed: run ./setup.sh --dev (or apt-get install mosquitto)")
        logf = open(self.dir / "mosquitto.log", "ab")
        self.proc = subprocess.Popen([exe, "-c", str(self.dir / "mosquitto.conf")], stdout=logf, stderr=logf)
        logf.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {(self.dir / 'mosquitto.log').read_text()[-800:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start listening")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@dataclass
class Hall:
    server: ConsoleServer
    sim: SimFleet
    password: str
    story: dict[int, str]

    def stop(self) -> None:
        self.sim.close()
        self.server.stop()


def start_hall(
    *, port: int, devices: dict, tables: list[int], workdir: Path, listen_port: int = 0, scripts: dict | None = None,
    round_start_ago_s: float | None = 360, names: bool = True, password: str | None = None,
    game_time_s: int = Rules.game_time_ms // 1000,
    hall: str = HALL, per_process: int = PER_PROCESS, faults: dict[int, tuple[str, ...]] | None = None,
    public_port: int | None = None,
) -> Hall:
    """The simulated tables and the console on a running broker (`devices` from provision); with
    `public_port`, the public hall on that port of 127.0.0.1 too (docs/public.md)."""
    password = password or "-".join(secrets.token_hex(2) for _ in range(3))
    director = devices["director"]
    cfg = ConsoleConfig(hall=hall, url=f"mqtt://127.0.0.1:{port}", username=director.user, mqtt_password=director.password,
                        password_hash=hash_password(password), listen_port=listen_port or free_port())
    if names:
        t_file = workdir / "demo.t"
        t_file.write_text(demo_t_file(tables))
        cfg.tsh = [t_file]
        cfg.division = "demo"
    cfg.state_dir = workdir / "state"  # the demo's results and sessions are its own, never the machine's
    if public_port is not None:
        cfg.public = PublicConfig(listen_host="127.0.0.1", listen_port=public_port)
    server = ConsoleServer(cfg)
    if round_start_ago_s is not None:
        server.console.state.round.start = time.time() - round_start_ago_s
    server.console.state.round.game_time_ms = game_time_s * 1000
    server.start()
    sim = SimFleet(hall, "127.0.0.1", port, {n: devices[f"table-{n}"].login for n in tables},
                   workdir / "journals", rules=Rules(game_time_ms=game_time_s * 1000),
                   station=("1", *devices["station-1"].login) if "station-1" in devices else None,
                   per_process=per_process, faults=faults)
    story: dict[int, str] = {}
    if scripts is None:
        scripts, story = demo_scripts(tables, game_time_s=game_time_s)
    try:
        sim.connect()
    except TimeoutError:
        server.stop()
        raise
    for n, steps in scripts.items():
        sim.script(n, steps)
    sim.start()
    return Hall(server, sim, password, story)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args) -> int:
    from ..shell.serve import port_taken

    import sys

    if args.port and port_taken("127.0.0.1", args.port):
        print(f"rackside hall demo: port {args.port} on 127.0.0.1 is in use (another demo or console?): "
              f"stop it, or give --port 0 for a free one", file=sys.stderr)
        return 1
    public = getattr(args, "public", None)
    if public and port_taken("127.0.0.1", public):
        print(f"rackside hall demo: port {public} on 127.0.0.1 (--public) is in use: stop what holds it, "
              f"or give --public 0 for a free one", file=sys.stderr)
        return 1
    if public is not None and public == 0:
        public = free_port()
    signal.signal(signal.SIGTERM, _interrupt)  # a stop from a service manager cleans up as Ctrl-C does
    tables = list(range(1, args.tables + 1))
    keep = args.dir is not None
    workdir = Path(args.dir) if keep else Path(tempfile.mkdtemp(prefix="rackside-demo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    # the demo's console keeps its sessions, imported TSH files and results with the demo, not in
    # the director's own state directory (a real hall's results must never mix with a demo's)
    os.environ["RACKSIDE_STATE_DIR"] = str(workdir / "state")
    broker = Mosquitto(workdir / "broker", tables)
    broker.start()
    hall = None
    try:
        hall = start_hall(port=broker.port, devices=broker.devices, tables=tables, workdir=workdir,
                          listen_port=args.port or free_port(), faults=getattr(args, "faults", None), public_port=public)
        print(f"Rackside hall demo: {len(tables)} simulated tables on a private Mosquitto ({broker.url})")
        print(f"  console: {hall.server.url}")
        print(f"  login:   name director, password {hall.password}")
        if public is not None:
            print(f"  public:  http://127.0.0.1:{public}/ (the public hall: read-only, no login; ?screen for a hall screen)")
        print(f"  journals: {workdir / 'journals'} (audit with: rackside clock replay --json FILE)")
        for n, what in sorted(hall.story.items()):
            print(f"  table {n}: {what}")
        print("Ctrl-C stops the demo.", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        if hall is not None:
            hall.stop()
        broker.stop()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
