"""The station through the judge service: the demonstration-list notice on the idle screen, a
lexicon chosen with `rackside lexicon use` picked up at the next idle screen, and challenges found
by their short id (issue 10 items 3, 4 and 9)."""

from __future__ import annotations

import pytest

from rackside import cli as rackside_cli
from rackside.judge.lexicon import DEMONSTRATION_SHORT, compile_lexicon
from rackside.kiosk.app import KioskApp, Paths
from rackside.kiosk.flow import Judge, Readjudicate, Screen, Tap
from rackside.kiosk.station_config import StationConfig, hash_pin

from support.clock import FakeClock


def lexicon(tmp_path, name, words):
    src = tmp_path / f"{name}.txt"
    src.write_text("\n".join(words) + "\n")
    out = tmp_path / f"{name.lower()}.rlex"
    compile_lexicon(src, out, name)
    return out


@pytest.fixture
def station(tmp_path):
    """A station with the default settings (no station.json: the bundled ENABLE list)."""
    cfg = StationConfig(name="hall-b", fullscreen=False, pin_hash=hash_pin("2468", n=2**8))
    app = KioskApp(cfg, clock_ns=FakeClock(), paths=Paths(log=tmp_path / "log.jsonl"))
    app.start()
    yield app
    app.shutdown()


def test_the_idle_screen_says_when_the_demonstration_list_is_judging(station, tmp_path):
    assert station.station.screen == Screen.IDLE and station.lexicon.name == "ENABLE"
    assert station.station.lexicon_notice == DEMONSTRATION_SHORT
    assert "QI" in DEMONSTRATION_SHORT and "CSW" in DEMONSTRATION_SHORT and "NWL" in DEMONSTRATION_SHORT
    station.render(force=True)  # drawn without error


def test_a_lexicon_chosen_with_the_command_is_used_at_the_next_idle_screen(station, tmp_path, capsys):
    small = lexicon(tmp_path, "SMALL", ["QI", "ZA", "OK"])
    assert rackside_cli.main(["lexicon", "use", str(small)]) == 0
    assert station.lexicon.name == "ENABLE"  # nothing happens in the middle of anything
    station.feed(Tap("start", station.clock_ns()))
    assert station.station.screen == Screen.COUNT and station.lexicon.name == "ENABLE"
    station.feed(Tap("cancel", station.clock_ns()))  # back to idle
    assert station.station.screen == Screen.IDLE
    assert station.lexicon.name == "SMALL" and station.station.lexicon.name == "SMALL"
    assert station.station.lexicon_notice == ""  # a tournament's lexicon needs no warning


def test_the_station_finds_a_challenge_by_its_short_id(station):
    station.effects.carry_out(Judge(("CAT",), None, "runner"))
    v = station.station.verdict
    assert len(v.short_id) == 6 and v.challenge_id.upper().endswith(v.short_id)
    station.effects.carry_out(Readjudicate(v.short_id))
    assert station.station.readjudication.view is not None and station.station.readjudication.view.row.challenge_id == v.challenge_id
    assert "agrees with the original" in station.station.readjudication.view.message
