"""A hall of the paperless table for the console's tests (issue 27): a real Mosquitto for tables 1 to 6,
`rackside hall console` as its own process with division A's TSH files (round 1: a game at each table,
TSH's `p12` naming most starters), the director logged in, and clocks with keypads
(support.keypadclock) brought online on demand; `InProcessHall`: the same hall with the console in-process
(support.inproc) and no broker, for the tests of its paperless endpoints."""

from __future__ import annotations

import json

from support.console import ConsoleProcess, Http, post, tsh_files
from support.keypadclock import KeypadClock

PASSWORD = "paperless-day"
CONFIG_TSH = "division A a.t\nconfig max_rounds = 1\n"
# Round 1, board = table: 1 Adams v 2 Baker (Adams starts), 2 Cole v Dunn (Dunn starts), 3 Eng v Fox
# (TSH does not say: they draw, 2.1(a)), 4 Gill v Hart, 5 Ives v Jay, 6 Kim v Lee (no keypad)
A_T = ("Adams, Ann  1500 2; ; board 1; p12 1\n"
       "Baker, Bob  1490 1; ; board 1; p12 2\n"
       "Cole, Cy    1480 4; ; board 2; p12 2\n"
       "Dunn, Di    1470 3; ; board 2; p12 1\n"
       "Eng, Ed     1460 6; ; board 3\n"
       "Fox, Flo    1450 5; ; board 3\n"
       "Gill, Gus   1440 8; ; board 4; p12 1\n"
       "Hart, Hal   1430 7; ; board 4; p12 2\n"
       "Ives, Ida   1420 10; ; board 5; p12 1\n"
       "Jay, Jo     1410 9; ; board 5; p12 2\n"
       "Kim, Kit    1400 12; ; board 6; p12 1\n"
       "Lee, Lu     1390 11; ; board 6; p12 2\n")


class Hall:
    """`slips`: the console's [console] slips setting (None: its default)."""

    def __init__(self, folder, slips: str | None = None):
        from support.broker import Broker

        self.dir = folder
        self.broker = Broker(folder / "broker", tables="1-6", stations=0).start()
        self.extra = tsh_files(folder / "console", {"config.tsh": CONFIG_TSH, "a.t": A_T.encode("latin-1")})
        if slips is not None:
            self.extra += f'slips = "{slips}"\n'
        self.console = ConsoleProcess(self.broker, folder / "console", PASSWORD, extra=self.extra).start()
        self.h = Http(self.console.url)
        self.h.token = self.h.login(PASSWORD, "Chief TD")
        self.clocks: dict[int, KeypadClock] = {}

    def clock(self, n: int, status: bytes = b"online") -> KeypadClock:
        c = self.clocks[n] = KeypadClock(self.broker, n, status=status)
        return c.online()

    def close(self) -> None:
        for c in self.clocks.values():
            c.close()
        self.console.stop()
        self.broker.stop()

    def running(self, n: int, numbers: tuple[int, int]) -> KeypadClock:
        """Table `n`'s clock online, `numbers` checked in at sides 1 and 2, side 1's press: the game
        runs, as the console's tile shows."""
        from support.wait import wait

        c = self.clock(n)
        c.checkin(1, numbers[0])
        c.checkin(2, numbers[1])
        c.press(1)
        c.state()
        wait(lambda: (self.tile(n)["state"] or {}).get("phase") == "running")
        return c

    def ended(self, n: int, numbers: tuple[int, int], seconds: float = 300) -> KeypadClock:
        """`running`, then the game ended `seconds` later, its result on the console's tile: the
        players may sign."""
        from support.wait import wait

        c = self.running(n, numbers)
        c.end(seconds)
        wait(lambda: self.tile(n)["result"])
        return c

    def snapshot(self) -> dict:
        return json.loads(self.h.call("GET", "/api/snapshot")[1])

    def paperless(self) -> dict:
        return self.snapshot()["paperless"]

    def checkin(self, n: int) -> dict:
        return next((c for c in self.paperless()["checkins"] if c["table"] == n), {})

    def tile(self, n: int) -> dict:
        return next(t for t in self.snapshot()["tables"] if t["table"] == n)

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        return post(self.h, path, body)

    def csv(self) -> dict[str, dict]:
        import csv
        import io

        status, raw, _ = self.h.call("GET", "/api/export/round.csv?division=A&round=1")
        assert status == 200, raw
        return {r["table"]: r for r in csv.DictReader(io.StringIO(raw.decode()))}

    def audit(self) -> list[dict]:
        return json.loads(self.h.call("GET", "/api/audit")[1])["audit"]


class InProcessHall(Hall):
    """The same hall with the console in-process (support.inproc) and no broker: each clock's
    messages handed to the console as its bridge would, the console's commands to the clock and its
    acks back (tests of the console's paperless endpoints; the journeys keep `Hall`)."""

    def __init__(self, folder, slips: str | None = None):
        import contextlib

        from support.inproc import inproc_console

        self.dir = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.tsh").write_text(CONFIG_TSH)
        (folder / "a.t").write_bytes(A_T.encode("latin-1"))
        settings = {} if slips is None else {"slips": slips}
        self._stack = contextlib.ExitStack()
        self.console = self._stack.enter_context(inproc_console(
            folder / "console", password=PASSWORD, tsh=[folder / "config.tsh", folder / "a.t"], round=1, **settings))
        self.h = self.console.http()
        self.h.token = self.h.login(PASSWORD, "Chief TD")
        self.clocks = {}

    def clock(self, n: int) -> KeypadClock:
        c = self.clocks[n] = self.console.clock(n)
        return c

    def close(self) -> None:
        for c in self.clocks.values():
            c.close()
        self._stack.close()
