"""Station config, PIN hashing, the 9 mm touch-target check, and the `rackside kiosk` CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rackside.kiosk import flow, pin
from rackside.kiosk.flow import Key, Screen, Station, Tap, Tick
from rackside.kiosk.layout import Geometry, LayoutError, buttons, check_touch_targets
from rackside.kiosk.station_config import (ConfigError, StationConfig, hash_pin, load_config, parse_config, template_path,
                                  verify_pin)

REPO = Path(__file__).resolve().parent.parent
NS = flow.NS


def test_template_is_valid_and_has_the_defaults():
    cfg = load_config(template_path())
    assert cfg == StationConfig()
    assert cfg.printer_url is None and cfg.pin_hash == ""


@pytest.mark.parametrize("data, words", [
    ({"station": {"mode": "judge"}}, ["station.mode", "'self', 'runner'"]),
    ({"printer": {"baudrate": 12345}}, ["printer.baudrate", "9600", "115200"]),
    ({"display": {"size": "big"}}, ["display.size", "WIDTHxHEIGHT"]),
    ({"display": {"width_mm": 3}}, ["display.width_mm", "40-2000"]),
    ({"display": {"fullscreen": "yes"}}, ["display.fullscreen", "bool"]),
    ({"station": {"name": "hall a!"}}, ["station.name", "letters, digits"]),
    ({"station": {"colour": "red"}}, ["station.colour", "allowed: mode, name, table"]),
    ({"sound": {}}, ["[sound]", "allowed"]),
    ({"director": {"pin_hash": "1234"}}, ["director.pin_hash", "--hash-pin"]),
    ({"printer": {"write_timeout": 30}}, ["printer.write_timeout", "0.05-2.0"]),
])
def test_bad_config_names_the_key_and_allowed_values(data, words):
    with pytest.raises(ConfigError) as err:
        parse_config(data)
    for w in words:
        assert w in str(err.value)


def test_config_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "station.toml"
    bad.write_text("[station\n")
    with pytest.raises(ConfigError, match="station.toml: cannot read"):
        load_config(bad)
    with pytest.raises(ConfigError, match="no station config"):
        load_config(tmp_path / "missing.toml")


def test_pin_hash_roundtrip_and_salt():
    h = hash_pin("2468", n=2**8)
    assert h.startswith("scrypt$256$8$1$") and verify_pin("2468", h)
    assert not verify_pin("2469", h) and not verify_pin("", h) and not verify_pin("24a8", h)
    assert hash_pin("2468", n=2**8) != h  # salted
    with pytest.raises(ValueError):
        hash_pin("12")
    assert parse_config({"director": {"pin_hash": h}}).pin_hash == h


# --- 9 mm touch targets ------------------------------------------------------------------------


@pytest.mark.parametrize("size, mm", [((800, 480), (155, 86)), ((1024, 600), (154, 86)),
                                      ((1280, 800), (217, 136)), ((1920, 1080), (531, 299))])
def test_targets_are_at_least_9mm_on_real_displays(size, mm):
    geo = Geometry.for_display(*size, *mm)
    check_touch_targets(geo)
    st = Station(rules=tuple((f"r{i}", "x") for i in range(9)))
    for screen in (Screen.ENTRY, Screen.PIN, Screen.COUNT, Screen.DIRECTOR, Screen.RULES):
        st.screen = screen
        for b in buttons(st, geo):
            assert min(b.rect.w, b.rect.h) / geo.px_per_mm >= 9.0, (screen, b)
            assert 0 <= b.rect.x and b.rect.x + b.rect.w <= size[0] and b.rect.y + b.rect.h <= size[1]


def test_too_small_a_screen_is_refused():
    with pytest.raises(LayoutError, match="at least 9 mm"):
        check_touch_targets(Geometry.for_display(800, 480, 90, 54))


def test_keys_do_not_overlap():
    geo = Geometry.for_display(800, 480, 155, 86)
    st = Station(screen=Screen.ENTRY, count=3)
    bs = buttons(st, geo)
    for i, a in enumerate(bs):
        for b in bs[i + 1:]:
            ra, rb = a.rect, b.rect
            assert ra.x + ra.w <= rb.x or rb.x + rb.w <= ra.x or ra.y + ra.h <= rb.y or rb.y + rb.h <= ra.y, (a, b)


# --- the pure flow, without pygame -------------------------------------------------------------


def test_flow_is_pure_and_driven_by_timestamps():
    st = Station(verify_pin=lambda pin: pin == "9999")
    assert st.handle(Key("2", 0)) == [] and st.screen == Screen.ENTRY
    for k in "QI":
        st.handle(Key(k, NS))
    st.handle(Key("SPACE", NS))
    for k in "ZA":
        st.handle(Key(k, NS))
    [effect] = st.handle(Key("TAB", 2 * NS))
    assert effect == flow.Judge(("QI", "ZA"), None, "self")
    st.show_verdict(flow.Verdict(True, ("QI", "ZA"), "L", "g", "id-1", "self"), 3 * NS)
    st.handle(Tap("dismiss", 3 * NS + NS // 2 - 1))
    assert st.screen == Screen.RESULT
    st.handle(Tick(13 * NS))
    assert st.screen == Screen.IDLE


def test_a_late_event_sees_the_timeout_first():
    st = Station()
    st.handle(Key("1", 0))
    st.handle(Key("Q", 61 * NS))  # arrives after 60 s of silence (issue 10 item 8): the old challenge is gone
    assert st.screen == Screen.COUNT and st.words == [""]


def test_lockout_in_the_pure_flow():
    st = Station(verify_pin=lambda pin: pin == "9999")
    st.handle(Tap("director", 0))
    for i in range(5):
        for d in "1234":
            st.handle(Key(d, i * NS))
        st.handle(Key("ENTER", i * NS))
    assert st.screen == Screen.LOCKED and st.pin_pad.lock_until_ns == 4 * NS + 60 * NS
    st.handle(Tick(64 * NS))
    assert st.screen == Screen.IDLE
    st.handle(Key("ESCAPE", 64 * NS))
    for d in "9999":
        st.handle(Key(d, 64 * NS))
    st.handle(Key("ENTER", 64 * NS))
    assert st.screen == Screen.DIRECTOR


# --- the CLI -----------------------------------------------------------------------------------


def run_cli(*args, stdin: str = "", env_extra=None, tmp_path=None):
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy", PYTHONPATH=str(REPO))
    if tmp_path is not None:
        env["RACKSIDE_STATE_DIR"] = str(tmp_path / "state")
        env["RACKSIDE_CONFIG_DIR"] = str(tmp_path / "config")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "rackside", "kiosk", *args], input=stdin, capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=60)


def test_cli_hash_pin_makes_a_working_hash(tmp_path):
    r = run_cli("--hash-pin", stdin="4321\n", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    line = r.stdout.strip()
    assert line.startswith('pin_hash = "scrypt$')
    cfg = tmp_path / "station.toml"
    cfg.write_text(f"[director]\n{line}\n")
    assert verify_pin("4321", load_config(cfg).pin_hash)
    assert run_cli("--hash-pin", stdin="12\n", tmp_path=tmp_path).returncode == 1


def test_cli_bad_config_exits_nonzero_naming_the_key(tmp_path):
    cfg = tmp_path / "station.toml"
    cfg.write_text('[station]\nmode = "auto"\n')
    r = run_cli("--config", str(cfg), "--windowed", tmp_path=tmp_path)
    assert r.returncode == 2 and "station.mode" in r.stderr and "'self', 'runner'" in r.stderr


def test_cli_refuses_to_start_without_a_pin(tmp_path):
    cfg = tmp_path / "station.toml"
    cfg.write_text("[station]\n")
    r = run_cli("--config", str(cfg), "--windowed", tmp_path=tmp_path)
    assert r.returncode == 2 and "pin_hash is not set" in r.stderr


def test_cli_check_config_and_bad_size(tmp_path):
    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{hash_pin("2468")}"\n')  # --check-config wants full strength
    r = run_cli("--config", str(cfg), "--check-config", tmp_path=tmp_path)
    assert r.returncode == 0 and "OK" in r.stdout
    r = run_cli("--config", str(cfg), "--windowed", "--size", "huge", tmp_path=tmp_path)
    assert r.returncode == 2 and "--size" in r.stderr
    small = tmp_path / "small.toml"
    small.write_text(cfg.read_text() + "[display]\nwidth_mm = 60.0\nheight_mm = 40.0\n")
    r = run_cli("--config", str(small), "--check-config", tmp_path=tmp_path)
    assert r.returncode == 2 and "9 mm" in r.stderr


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_cli_station_stops_cleanly_when_the_os_stops_it(tmp_path, sig):
    """systemd's SIGTERM must stop the station (SDL would turn it into a window close, which
    only leads to the PIN screen)."""
    import signal

    cfg = tmp_path / "station.toml"
    words = tmp_path / "w.txt"
    words.write_text("QI\nZA\n")
    from rackside.judge.lexicon import compile_lexicon

    compile_lexicon(words, tmp_path / "state" / "lexicons" / "tiny.rlex", "TINY")
    (tmp_path / "state" / "station.json").write_text(
        f'{{"lexicon_path": "{tmp_path / "state" / "lexicons" / "tiny.rlex"}"}}')
    cfg.write_text(f'[director]\npin_hash = "{hash_pin("2468", n=2**8)}"\n')
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy", PYTHONPATH=str(REPO),
               RACKSIDE_STATE_DIR=str(tmp_path / "state"), RACKSIDE_CONFIG_DIR=str(tmp_path / "config"))
    p = subprocess.Popen([sys.executable, "-m", "rackside", "-v", "kiosk", "--config", str(cfg), "--windowed"],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env, cwd=REPO)
    try:
        for line in p.stderr:
            if "challenge station ready" in line:
                break
        else:
            pytest.fail(f"station did not start (exit {p.wait()})")
        p.send_signal(getattr(signal, sig))
        assert p.wait(timeout=10) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


# --- any sequence of inputs ----------------------------------------------------------------------

from hypothesis import given, settings, strategies as hs

_KEYS = list("ABQXZ0123456789-.") + ["SPACE", "ENTER", "BACKSPACE", "TAB", "ESCAPE", "UP", "DOWN", "F13"]
_TAPS = ["start", "director", "count:1", "count:3", "count:8", "letter:Q", "letter:I", "space", "backspace",
         "judge", "cancel", "count", "digit:1", "digit:2", "ok", "next", "resume", "rules", "rule:single", "log",
         "readj", "find", "back", "prev", "quit", "lexicons", "pick:0", "export", "row:x", "dismiss"]
_events = hs.lists(hs.tuples(
    hs.sampled_from(["key", "tap", "tick", "close"]),
    hs.sampled_from(_KEYS), hs.sampled_from(_TAPS), hs.integers(0, 3 * NS), hs.integers(0, 9)), max_size=80)


@settings(max_examples=150, deadline=None)
@given(_events, hs.sampled_from(["self", "runner"]))
def test_any_input_sequence_keeps_the_flow_consistent(events, mode):
    st = Station(mode=mode, verify_pin=lambda pin: pin == "1212", rules=(("single", "Single"),))
    st.show_log((flow.LogRow("x", "t", "self", None, "L", ("QI",), True, (True,)),))
    st.show_lexicons((flow.LexiconChoice("/l/a.rlex", "A"),))
    t = 0
    for kind, key, target, dt, walk_away in events:
        t += dt
        ev = {"key": Key(key, t), "tap": Tap(target, t), "tick": Tick(t), "close": flow.Close(t)}[kind]
        before = st.screen
        effects = st.handle(ev)
        for eff in effects:
            if isinstance(eff, flow.Judge):
                assert before == Screen.ENTRY and len(eff.words) == st.count
                assert all(w.isalpha() and w.isupper() and len(w) <= flow.MAX_LETTERS for w in eff.words)
                assert eff.kind == mode
                st.show_verdict(flow.Verdict(True, eff.words, "L", "g", "id", eff.kind), t)
        if kind == "close":
            assert st.screen in (Screen.PIN, Screen.LOCKED)
        assert len(st.pin_pad.digits) <= pin.PIN_MAX and len(st.table) <= flow.MAX_TABLE_DIGITS
        assert all(len(w) <= flow.MAX_LETTERS for w in st.words)
        if st.screen == Screen.LOCKED:
            assert st.pin_pad.lock_until_ns > t
        deadline = st.next_deadline_ns(t)
        if st.screen == Screen.IDLE:
            assert deadline is None and st.typed_words == () and st.pin_pad.digits == ""
        else:
            assert deadline is not None and deadline > t - 1
        if st.screen != Screen.IDLE and walk_away == 0:
            st.handle(Tick(max(deadline, t) + 61 * NS))  # everything times out eventually...
            assert st.screen == Screen.IDLE  # ...back to idle, words forgotten
            t = max(deadline, t) + 61 * NS


def test_cli_corrupt_settings_exit_nonzero_naming_the_file(tmp_path):
    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[director]\npin_hash = "{hash_pin("2468", n=2**8)}"\n')
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "station.json").write_text("{not json")
    r = run_cli("--config", str(cfg), "--windowed", tmp_path=tmp_path)
    assert r.returncode == 2 and "station.json" in r.stderr
