"""A real table clock (firmware.cli.Clock: config, mock pins, journal, runner, hall output) on real
time, for the hall's tests: in this process (`LiveClock`), or as its own process that a test can
SIGKILL (`python tests/support/hallclock.py CONFIG STATE_DIR`, driven by lines on stdin:
`tap left`, `tap right`, `tap neutralise`, `end`, `quit`; it prints `ready` once started)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")


def clock_config(path: Path, broker, table: int, *, game_time: str = "1:00", url: str | None = None) -> Path:
    path.write_text(
        f'[clock]\ngame_time = "{game_time}"\n\n'
        f'[hall]\nurl = "{url or broker.url}"\ncredentials = "{broker.credentials(f"table-{table}")}"\n'
    )
    return path


class LiveClock:
    def __init__(self, config: Path, state_dir: Path) -> None:
        from gpiozero.pins.mock import MockFactory

        from rackside.firmware.cli import Clock

        args = argparse.Namespace(simulate=True, terminal=False, config=config, state_dir=state_dir, hall=None, hall_credentials=None)
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

    def command(self, name: str) -> None:
        from rackside.firmware.messages import Command

        self.runner.submit(Command(time.monotonic_ns(), name))

    def journal(self) -> list[dict]:
        import json

        lines = self.clock.store.journal_path.read_text().splitlines()
        return [json.loads(x) for x in lines[1:] if x.strip()]

    def close(self) -> None:
        self.runner.stop()
        self.thread.join(5)
        self.clock.close()


def main() -> int:
    config, state = Path(sys.argv[1]), Path(sys.argv[2])
    live = LiveClock(config, state)
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "tap":
            live.tap(words[1])
        elif words[0] == "end":
            live.command("end")
        elif words[0] == "quit":
            break
        print("ok", flush=True)
    live.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
