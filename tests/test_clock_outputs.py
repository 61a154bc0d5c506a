"""Clock outputs (`firmware.outputs`): an output added here, in the test, by a module-level class and
a config entry, with no change to the runner or any dispatcher; outputs that fail never stop the
clock; the typed queue messages; requests submitted from another thread, answered and journalled."""

from __future__ import annotations

import argparse
import json
import logging
import threading

import pytest

from rackside.firmware import outputs
from rackside.game.clock import NS_PER_MS, NS_PER_S, Neutralise, Phase, Press
from rackside.game.messages import BUTTONS, Command, Edge, Request, Stop
from rackside.firmware.outputs import Frame, Output

from support.clock import T0, FakeClock


class SpyOutput(Output):
    """Records everything it is given: the test's own output, found by the name "spy"."""

    made: list["SpyOutput"] = []

    def __init__(self, context, settings) -> None:
        if set(settings) - {"label"}:
            raise outputs.OutputConfigError(f"unknown key {sorted(set(settings) - {'label'})[0]!r} (allowed: label)")
        self.context, self.settings = context, settings
        self.calls: list[tuple] = []
        SpyOutput.made.append(self)

    def applied(self, entry):
        self.calls.append(("applied", entry.input, entry.seq, entry.clock.phase, entry.t_ns, entry.game, entry.source, dict(entry.notes)))

    def view(self, frame: Frame, t_ns: int) -> None:
        self.calls.append(("view", frame.texts, frame.view.phase, frame.menu, frame.game, t_ns))

    def flush(self, t_ns: int) -> None:
        self.calls.append(("flush", t_ns))

    def close(self) -> None:
        self.calls.append(("close",))


@pytest.fixture
def spy_registered():
    SpyOutput.made.clear()
    outputs.register("spy", SpyOutput)
    yield
    outputs.unregister("spy")


def assemble(monkeypatch, tmp_path, toml: str):
    """The real `rackside clock --simulate` assembly (firmware.cli.Clock) on a fake clock."""
    import gpiozero.pins.mock as mock
    from gpiozero.pins.mock import MockFactory

    from rackside.firmware.cli import Clock

    fake = FakeClock()
    monkeypatch.setattr(mock, "monotonic", fake.seconds)
    config = tmp_path / "clock.toml"
    config.write_text(toml)
    args = argparse.Namespace(simulate=True, terminal=True, config=config, state_dir=tmp_path / "state")
    return Clock(args, clock_ns=fake, pin_factory=MockFactory()), fake


def tap(clock, fake, button: str, at_ns: int) -> None:
    fake.ns = at_ns
    clock.board.drive(button, True)
    clock.runner.pump()
    fake.ns += 80 * NS_PER_MS
    clock.board.drive(button, False)
    clock.runner.pump()
    fake.ns += 20 * NS_PER_MS
    clock.runner.pump()


def test_a_new_output_is_a_class_and_a_config_entry_and_is_told_everything(monkeypatch, tmp_path, spy_registered):
    clock, fake = assemble(monkeypatch, tmp_path, '[[outputs]]\nname = "spy"\nlabel = "table 7"\n')
    try:
        [spy] = SpyOutput.made
        assert spy.settings == {"label": "table 7"} and spy.context.simulated and spy.context.board is clock.board
        returned = []
        record = clock.store.record
        monkeypatch.setattr(clock.store, "record", lambda *a, **k: returned.append(record(*a, **k)) or returned[-1])
        clock.start()
        assert spy.calls[0][:5] == ("view", ("25:00", "25:00"), Phase.SETUP, False, "game-000001")
        t_start = T0 + 10 * NS_PER_MS
        tap(clock, fake, "right", t_start)  # the right player starts the left player's time (2.2)
        tap(clock, fake, "left", t_start + 3 * NS_PER_S)
        fake.ns += 500 * NS_PER_MS
        clock.submit_time = fake.ns
        clock.runner.submit(Request(fake.ns, "neutralise", {"command": "c9", "by": "td"}, source="hall"))
        clock.runner.pump()
    finally:
        clock.runner.close()
        clock.close()
    applied = [c for c in spy.calls if c[0] == "applied"]
    assert [(type(c[1]), c[3], c[4]) for c in applied] == [
        (Press, Phase.RUNNING, t_start),
        (Press, Phase.RUNNING, t_start + 3 * NS_PER_S),
        (Neutralise, Phase.NEUTRALISED, clock.submit_time),
    ]
    # the seq it was given is the journal's own seq for the input (its number in the game), never the
    # line number (which counts the header); with the game, and the source and notes of the input
    lines = [json.loads(line) for line in (tmp_path / "state" / "journals" / "game-000001.jsonl").read_text().splitlines()[1:]]
    assert [c[2] for c in applied] == [line["seq"] for line in lines] == returned == [1, 2, 3]
    assert [line["t_ns"] for line in lines] == [c[4] for c in applied]
    assert [c[5] for c in applied] == ["game-000001"] * 3
    assert [(c[6], c[7]) for c in applied] == [(None, {}), (None, {}), ("hall", {"command": "c9", "by": "td"})]
    assert lines[-1]["source"] == "hall" and lines[-1]["command"] == "c9"
    views = [c for c in spy.calls if c[0] == "view"]
    assert ("view", ("24:57", "25:00"), Phase.RUNNING, False, "game-000001", t_start + 3 * NS_PER_S + 100 * NS_PER_MS) in views
    # every iteration: every input, then the frame, then the flush; close once at the end
    kinds = [c[0] for c in spy.calls]
    assert kinds[-1] == "close" and kinds.count("close") == 1
    for i, kind in enumerate(kinds):
        if kind == "applied":
            assert kinds[i + 1] in ("applied", "view")
        if kind == "view":
            assert kinds[i + 1] == "flush"


def test_the_built_in_recording_output_by_name(monkeypatch, tmp_path):
    clock, fake = assemble(monkeypatch, tmp_path, '[[outputs]]\nname = "recording"\nlimit = 5\n')
    try:
        clock.start()
        tap(clock, fake, "right", T0 + 10 * NS_PER_MS)
        fake.ns += 10 * NS_PER_S
        clock.runner.pump()
    finally:
        clock.runner.close()
        clock.close()
    rec = clock.outputs[-1]  # after the turn LEDs, which the reference pin map has
    assert [type(i) for i, *_ in rec.inputs] == [Press] and rec.closed and rec.flushes > 0
    assert len(rec.frames) == 5  # the newest `limit` distinct frames
    assert rec.frames[-1][0].texts == ("24:50", "25:00")


@pytest.mark.parametrize(
    "toml, words",
    [
        ('[[outputs]]\nname = "nosuch"\n', ["outputs: name 'nosuch' is not a known output", "allowed:", "recording"]),
        ("[[outputs]]\nlimit = 3\n", ["outputs[0].name: missing", "recording"]),
        ('outputs = "recording"\n', ["outputs: must be an array of tables"]),
        ('[[outputs]]\nname = "recording"\nlimit = 0\n', ["outputs[0] (recording): limit: 0", "at least 1"]),
        ('[[outputs]]\nname = "recording"\nlimt = 3\n', ["outputs[0] (recording): unknown key 'limt'", "allowed: limit"]),
    ],
)
def test_a_bad_outputs_entry_names_the_key_and_exits_2(tmp_path, capsys, toml, words):
    from rackside import cli as rackside_cli

    path = tmp_path / "clock.toml"
    path.write_text(toml)
    code = rackside_cli.main(["clock", "--simulate", "--terminal", "--config", str(path), "--state-dir", str(tmp_path / "s")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("rackside clock: ")
    for w in words:
        assert w in err


class Broken(Output):
    def __init__(self):
        self.calls = 0
        self.broken = True

    def view(self, frame, t_ns):
        self.calls += 1
        if self.broken:
            raise RuntimeError("publisher bug")


def test_an_output_that_raises_is_logged_once_and_the_clock_keeps_counting(monkeypatch, tmp_path, caplog):
    from support.firmware_rig import Rig

    caplog.set_level(logging.INFO)
    broken = Broken()
    r = Rig(monkeypatch, tmp_path / "state", outputs=[broken])
    try:
        r.after_ms(10).tap("right")
        r.advance_ms(5_000)
        assert r.texts() == ("24:55", "25:00") and broken.calls > 5
        errors = [x.getMessage() for x in caplog.records if x.levelno >= logging.ERROR]
        assert len(errors) == 1 and "Broken" in errors[0] and "publisher bug" in errors[0]
        broken.broken = False
        r.advance_ms(1_000)
        assert sum("works again (after" in x.getMessage() for x in caplog.records) == 1
    finally:
        r.close()


def test_messages_are_typed_and_read_as_the_records_they_replace():
    assert BUTTONS == ("left", "right", "neutralise")
    e = Edge(5, "left", True)
    assert e == ("edge", 5, "left", True) and (e.t_ns, e.button, e.down) == (5, "left", True)
    assert Command(7, "menu") == ("cmd", 7, "menu") and Stop(9).t_ns == 9
    r = Request(3, "adjust", {"player": 1, "remaining_ms": 60_000})
    assert r.source == "hall" and r.args == {"player": 1, "remaining_ms": 60_000} and r.reply is None
    assert sorted([Stop(9), e, r], key=lambda m: m.t_ns) == [r, e, Stop(9)]
    from rackside.firmware import gestures, runner
    from rackside.hardware import board, pinmap

    assert gestures.BUTTONS is board.BUTTONS is pinmap.BUTTONS is runner.BUTTONS is BUTTONS  # defined once


def test_requests_from_another_thread_are_applied_in_order_answered_and_journalled(rig):
    t_start = rig.after_ms(10).tap("right")
    answers: list = []

    def submit():  # the hall's subscriber thread
        reply = lambda ok, why: answers.append((ok, why))  # noqa: E731
        rig.runner.submit(Request(rig.now, "adjust", {"player": 1, "remaining_ms": 20 * 60_000}, reply=reply))
        rig.runner.submit(Request(rig.now, "adjust", {"player": 3, "remaining_ms": 1}, reply=reply))
        rig.runner.submit(Request(rig.now, "explode", reply=reply))
        rig.runner.submit(Request(rig.now, "arrive", {"players": 1}, reply=reply))

    rig.at(t_start + 2 * NS_PER_S)
    thread = threading.Thread(target=submit)
    thread.start()
    thread.join()
    rig.pump()
    assert answers[0] == (True, "")
    assert answers[1][0] is False and "player" in answers[1][1]
    assert answers[2][0] is False and "unknown command" in answers[2][1] and "adjust" in answers[2][1]
    assert answers[3] == (False, "arrive takes player (missing player)")
    assert rig.view().players[0].remaining_ns == 20 * 60 * NS_PER_S
    last = {k: v for k, v in rig.journal_inputs()[-1].items() if k != "seq"}  # (the journal's own numbering)
    assert last == {"t_ns": t_start + 2 * NS_PER_S, "input": "adjust", "player": 1, "remaining_ms": 1_200_000, "source": "hall"}


def test_an_output_from_another_package_is_found_by_its_entry_point(monkeypatch, tmp_path):
    """A separately installed package adds an output by declaring it in the `rackside.outputs`
    entry-point group (as the hall's publisher may): one module and one packaging line."""
    (tmp_path / "tally.py").write_text(
        "from rackside.firmware.outputs import Output\n"
        "class Tally(Output):\n"
        "    def __init__(self, context, settings):\n"
        "        self.inputs = 0\n"
        "    def applied(self, entry):\n"
        "        self.inputs += 1\n"
    )
    info = tmp_path / "tally-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tally\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[rackside.outputs]\ntally = tally:Tally\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "tally" in outputs.names()
    clock, fake = assemble(monkeypatch, tmp_path, '[[outputs]]\nname = "tally"\n')
    try:
        clock.start()
        tap(clock, fake, "right", T0 + 10 * NS_PER_MS)
    finally:
        clock.runner.close()
        clock.close()
    assert type(clock.outputs[-1]).__name__ == "Tally" and clock.outputs[-1].inputs == 1
