"""A real table clock (firmware.cli.Clock: config, mock pins, journal, runner, hall output) on real
time, for the hall's tests: in this process (`LiveClock`), or as its own process that a test can
SIGKILL (`python tests/support/hallclock.py CONFIG STATE_DIR [DEVICE_ID]`, driven by lines on stdin:
`tap left`, `tap right`, `tap neutralise`, `end`, `show` (prints the displays' texts as a JSON
list), `identifying` (prints `yes` while a director's identify flashes the displays, else `no`),
`quit`; it prints `ready` once started).

With RACKSIDE_TEST_DIE_AFTER_APPLYING=<command id> in its environment, the process SIGKILLs itself
once that hall command is applied and journalled, in the runner's reply: the clock acknowledges a
command to the broker only once its ack is in the outbox (paho's manual acknowledgements), so the
broker redelivers it to the restarted clock (a deterministic crash in that window).

With RACKSIDE_TEST_DIE_BEFORE_APPLYING=<command id>, the command never reaches the runner: the
process SIGKILLs itself half a second after paho's callback returned (when an automatic PUBACK would
have gone out), before the command is journalled."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")


def clock_config(path: Path, broker, table: int, *, game_time: str = "1:00", url: str | None = None, keypad: bool = False) -> Path:
    path.write_text(
        f'[clock]\ngame_time = "{game_time}"\n\n'
        f'[hall]\nurl = "{url or broker.url}"\ncredentials = "{broker.credentials(f"table-{table}")}"\n'
        + ("\n[keypad]\nenabled = true\n" if keypad else "")  # issue 27: the keypad, scanned on the mock pins
    )
    return path


class LiveClock:
    def __init__(self, config: Path, state_dir: Path, *, device_id: str | None = None, faults: tuple[str, ...] = ()) -> None:
        """`device_id`: a clock joining with a join file ([hall] join) says hello as this device;
        `faults`: health faults the simulator reports (`rackside clock --simulate --fault NAME`)."""
        from gpiozero.pins.mock import MockFactory

        from rackside.firmware.cli import Clock

        args = argparse.Namespace(simulate=True, terminal=False, config=config, state_dir=state_dir, hall=None, hall_credentials=None,
                                  hall_join=None, device_id=device_id, fault=list(faults))
        self.clock = Clock(args, pin_factory=MockFactory())
        self.clock.start()
        self.runner = self.clock.runner
        self.hall = self.clock.hall
        self.thread = threading.Thread(target=self.runner.run, name="runner", daemon=True)
        self.thread.start()

    def tap(self, button: str, hold_s: float = 0.06) -> None:
        self.clock.board.drive(button, True)
        time.sleep(hold_s)
        self.clock.board.drive(button, False)
        time.sleep(0.05)  # the release settles (15 ms debounce)

    def key(self, key: str, hold_s: float = 0.06) -> None:
        """A keypad key pressed and released (its contact on the mock pins: the real scanner reads it),
        held at least `hold_s` and until the scanner has taken the press, as a finger holds a key
        until it clicks: on a loaded machine the scanner's thread may not run within a short hold,
        and a key open again before its scan is not a press (hardware.keypad)."""
        self.key_down(key)
        time.sleep(hold_s)
        self.key_up(key)

    def type_keys(self, text: str) -> None:
        """Each key of `text` pressed and released in turn (`key`), as a player types."""
        for k in text:
            self.key(k)

    def key_down(self, key: str, timeout: float = 10.0) -> None:
        """Close a key's contact, once the scanner has taken it as a press."""
        keypad = self.clock.keypad
        keypad.drive(key, True)
        from support.wait import until  # (not at the top: this file also runs as a clock's own process)

        until(lambda: keypad.debouncers[key].down, timeout)

    def key_up(self, key: str, timeout: float = 10.0) -> None:
        """Open a key's contact, once the scanner has the release as final."""
        keypad = self.clock.keypad
        keypad.drive(key, False)
        from support.wait import until

        until(lambda: not keypad.debouncers[key].down, timeout)

    def command(self, name: str, at_ns: int | None = None) -> None:
        """A simulator command ("end", "menu") now, or dated `at_ns` (this boot's monotonic clock):
        sent once that moment has passed, so the clock acts on it as on a key pressed then, however
        late a loaded machine delivers it (the runner applies each input at its own time)."""
        from rackside.game.messages import Command

        if at_ns is not None:
            while (left := at_ns - time.monotonic_ns()) > 0:
                time.sleep(left / 1e9)
        self.runner.submit(Command(time.monotonic_ns() if at_ns is None else at_ns, name))

    def texts(self) -> tuple[str, str]:
        """What the displays show now."""
        return tuple(self.runner.frame(time.monotonic_ns()).texts)

    def journal(self) -> list[dict]:
        import json

        lines = self.clock.store.journal_path.read_text().splitlines()
        return [json.loads(x) for x in lines[1:] if x.strip()]

    def close(self) -> None:
        self.runner.stop()
        self.thread.join(5)
        self.clock.close()


def die_after_applying(live: LiveClock, cid: str) -> None:
    import signal

    hall, on_reply = live.hall, live.hall._replied

    def _replied(cmd, ok, why):
        if cmd.id == cid:  # applied and journalled (the runner replies after both); not yet acked
            os.kill(os.getpid(), signal.SIGKILL)
        on_reply(cmd, ok, why)

    hall._replied = _replied


def die_before_applying(live: LiveClock, cid: str) -> None:
    import signal

    worker, submit = live.hall.worker, live.hall.worker.submit

    def _submit(request):
        if request.args.get("command") == cid:  # never journalled: killed a moment later
            threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGKILL)).start()
            return
        submit(request)

    worker.submit = _submit


def main() -> int:
    config, state = Path(sys.argv[1]), Path(sys.argv[2])
    live = LiveClock(config, state, device_id=sys.argv[3] if len(sys.argv) > 3 else None)  # DEVICE_ID: a clock joining with a join file
    die_after = os.environ.get("RACKSIDE_TEST_DIE_AFTER_APPLYING")
    if die_after:
        die_after_applying(live, die_after)
    die_before = os.environ.get("RACKSIDE_TEST_DIE_BEFORE_APPLYING")
    if die_before:
        die_before_applying(live, die_before)
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "tap":
            live.tap(words[1])
        elif words[0] == "end":
            live.command("end")
        elif words[0] == "show":
            import json

            print(json.dumps([d.text for d in live.clock.displays]), flush=True)
        elif words[0] == "identifying":
            until = live.runner.requests.identify_until_ns
            print("yes" if until is not None and time.monotonic_ns() < until else "no", flush=True)
        elif words[0] == "quit":
            break
        print("ok", flush=True)
    live.close()
    return 0



# --- Shared by the hall's and the console's tests (a plugin: tests/conftest.py) -----------------

def clock_process(config: Path, state: Path, device_id: str | None = None, **env: str):
    """This file run as its own process (a clock a test can SIGKILL), once it says `ready`; `env`:
    e.g. RACKSIDE_TEST_DIE_AFTER_APPLYING (above)."""
    import subprocess

    here = Path(__file__).resolve().parent
    proc = subprocess.Popen(
        [sys.executable, str(here / "hallclock.py"), str(config), str(state)] + ([device_id] if device_id else []),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(here.parent), **env},
    )
    assert proc.stdout.readline().strip() == "ready"
    return proc


def do(proc, line: str) -> None:
    """One line to a clock_process (`tap right`, ...), once it has answered `ok`."""
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "ok"


def stop(proc) -> None:
    """A clock_process's clean end (`quit`), or a kill if it does not come."""
    import subprocess

    try:
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait(10)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait(5)


def send(broker, table, payload):
    """Publish a command to `table`'s cmd topic as the director's MQTT user."""
    import json

    from rackside.hall.wire import topics

    c = broker.client("director")
    c.publish(topics.table(broker.hall, table, "cmd"), payload if isinstance(payload, bytes) else json.dumps(payload), qos=1).wait_for_publish(5)
    c.disconnect()
    c.loop_stop()


def ack(rec, cid):
    """The clock's ack of command `cid`, as `rec` (a support.broker.Recorder) received it."""
    return rec.wait_for(lambda r: next((a for a in r.json("ack") if a["id"] == cid), None))


try:
    import pytest
except ImportError:  # run as its own process (the SIGKILL tests) pytest is not needed
    pytest = None

if pytest is not None:

    @pytest.fixture
    def table3(hall_broker, tmp_path):
        """Table 3's clock (game time 1:00) on the hall, and a recorder of what it publishes."""
        from rackside.hall.wire.health import is_online  # the bare word, or the status with the health
        from support.broker import Recorder

        rec = Recorder(hall_broker)
        live = LiveClock(clock_config(tmp_path / "clock.toml", hall_broker, 3), tmp_path / "state")
        rec.wait_for(lambda r: any(t.endswith("table/3/status") and is_online(p) for t, p, _ in r.messages))
        yield live, rec
        live.close()
        rec.close()

if __name__ == "__main__":
    sys.exit(main())
