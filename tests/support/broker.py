"""A real Mosquitto for the tests: provisioned with `rackside hall provision`, on a free loopback port.

Fixtures (registered for every test by tests/conftest.py):

- `hall_broker`: one broker for the whole session (hall "testhall", tables 1-8, stations 1-2, a
  director). Tests must not stop it; use `make_broker` for that.
- `make_broker`: a factory, `make_broker(tables="1-4", stations=1)`, for a test's own broker
  that it may stop, kill and restart (`broker.stop()`, `broker.start()`); each is torn down after
  the test.

A `Broker` knows its `url`, `hall`, `dir`, each device's `Device` (`broker.devices["table-3"]`,
with the password) and credentials file (`broker.credentials("table-3")`), and makes connected
paho clients: `broker.client("director")`. Nothing is mocked: /usr/sbin/mosquitto runs for real.
Listening on 127.0.0.1 only.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from rackside.hall import provision as prov

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    def __init__(self, directory: Path, *, hall: str = "testhall", tables: str = "1-8", stations: int = 2, port: int | None = None):
        self.dir = Path(directory)
        self.hall = hall
        self.port = port or free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        run_as = getpass.getuser() if os.geteuid() == 0 else None  # root would drop to "mosquitto"
        self.devices = prov.provision(
            self.dir, hall, prov.parse_tables(tables), stations, port=self.port, bind="127.0.0.1", run_as=run_as, url=self.url
        )
        self.proc: subprocess.Popen | None = None
        self.log_path = self.dir / "mosquitto.log"

    def credentials(self, user: str) -> Path:
        return self.dir / "credentials" / f"{user}.toml"

    def password(self, user: str) -> str:
        return self.devices[user].password

    # --- life cycle -----------------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> "Broker":
        if self.proc is not None and self.proc.poll() is None:
            return self
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.dir / "mosquitto.conf")], stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited {self.proc.returncode}: {self.log_path.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not listen on {self.port}: {self.log_path.read_text()[-2000:]}")

    def stop(self) -> None:
        """A clean stop (SIGTERM): the broker saves its persistence file."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # --- clients --------------------------------------------------------------------------------

    def client(self, user: str | None, *, password: str | None = None, client_id: str = "", timeout: float = 5.0, connect: bool = True):
        """A paho client logged in as `user` (None: anonymous), its network loop running.
        Raises ConnectionRefusedError with the broker's reason when the login is refused."""
        import paho.mqtt.client as mqtt

        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
        if user is not None:
            c.username_pw_set(user, password if password is not None else self.password(user))
        if not connect:
            return c
        done = threading.Event()
        result: dict = {}

        def on_connect(client, userdata, flags, reason_code, properties):
            result["rc"] = reason_code
            done.set()

        c.on_connect = on_connect
        c.connect("127.0.0.1", self.port)
        c.loop_start()
        if not done.wait(timeout):
            c.loop_stop()
            raise TimeoutError("no CONNACK")
        if result["rc"].is_failure:
            c.loop_stop()
            c.disconnect()
            raise ConnectionRefusedError(str(result["rc"]))
        c.on_connect = None
        return c


@pytest.fixture(scope="session")
def hall_broker(tmp_path_factory):
    broker = Broker(tmp_path_factory.mktemp("hall-broker"))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def make_broker(tmp_path_factory):
    made: list[Broker] = []

    def make(**kwargs) -> Broker:
        broker = Broker(tmp_path_factory.mktemp("hall-broker"), **kwargs)
        made.append(broker)
        return broker.start()

    yield make
    for broker in made:
        broker.stop()
