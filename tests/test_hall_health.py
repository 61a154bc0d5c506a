"""A device's health (issue 26 item 1): read from Raspberry Pi OS's interfaces (a folder laid out as
a Pi's /sys and /proc, and this machine's own), parsed purely, checked by the console's contract,
turned into named problems under the director's thresholds, and published in a real clock's
retained status on a real broker, with each simulated fault."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rackside.hall.console.state import contract, health
from rackside.hall.console.fleet import readiness
from rackside.hall.console.state.contract import Refused
from rackside.hall.console.state.hallstate import HallState, Table
from rackside.hall.device import healthparse
from rackside.hall.device.health import HealthReader, HealthWatch, adjtimex
from rackside.hall.wire import health as wire
from rackside.hall.wire import commands, topics

from support.hallclock import LiveClock, clock_config
from support.wait import wait

WIRELESS = """Inter-| sta-|   Quality        |   Discarded packets               | Missed | WE
 face | tus | link level noise |  nwid  crypt   frag  retry   misc | beacon | 22
 wlan0: 0000   54.  -56.  -256        0      0      0      0     12        0
"""


def a_pi(root: Path, *, throttled="50005", temp="61234", wifi=True) -> Path:
    """A folder laid out as a Raspberry Pi's /sys and /proc (the files the reader opens)."""
    fw = root / "sys/devices/platform/soc/soc:firmware"
    fw.mkdir(parents=True)
    (fw / "get_throttled").write_text(throttled + "\n")
    (root / "sys/class/thermal/thermal_zone0").mkdir(parents=True)
    (root / "sys/class/thermal/thermal_zone0/temp").write_text(temp + "\n")
    (root / "proc/net").mkdir(parents=True)
    (root / "proc/uptime").write_text("12345.67 40000.00\n")
    (root / "sys/class/net/eth0").mkdir(parents=True)
    if wifi:
        (root / "sys/class/net/wlan0/wireless").mkdir(parents=True)
        (root / "sys/class/net/wlan0/operstate").write_text("up\n")
        (root / "proc/net/wireless").write_text(WIRELESS)
    return root


# --- the pure parsers -------------------------------------------------------------------------------


def test_get_throttled_bits_as_the_pi_documents_them():
    assert healthparse.throttled("0") == {"undervoltage": False, "undervoltage_since_boot": False,
                                          "throttled": False, "throttled_since_boot": False}
    # 0x50005: under-voltage now (0) and since boot (16), throttled now (2) and since boot (18)
    assert healthparse.throttled("throttled=0x50005") == {"undervoltage": True, "undervoltage_since_boot": True,
                                                          "throttled": True, "throttled_since_boot": True}
    assert healthparse.throttled("50000")["undervoltage"] is False  # earlier only
    assert healthparse.throttled("50000")["undervoltage_since_boot"] is True
    assert healthparse.throttled(None)["undervoltage"] is None
    assert healthparse.throttled("garbage")["throttled"] is None


def test_the_other_parsers():
    assert healthparse.thermal("61234\n") == 61.2
    assert healthparse.thermal("") is None and healthparse.thermal("999999") is None
    assert healthparse.uptime("12345.67 40000.00") == 12345
    assert healthparse.uptime("") is None
    assert healthparse.wireless(WIRELESS, "wlan0") == -56
    assert healthparse.wireless(WIRELESS, "wlan1") is None
    assert healthparse.wireless(WIRELESS.replace("-56.", "200."), "wlan0") == -56  # an old driver's unsigned byte
    assert healthparse.wireless(WIRELESS.replace("54.", " 0."), "wlan0") is None  # no link
    assert healthparse.free_space(250, 1000, 4096) == {"state_free_mb": 0, "state_free_pct": 25.0}


def test_adjtimex_synchronised_or_not():
    ok = healthparse.clock_sync(0, 0x0001, 1500, 20_000)  # TIME_OK, STA_PLL, 1.5 ms (microseconds)
    assert ok == {"clock_synced": True, "clock_offset_ms": 1.5, "clock_maxerror_ms": 20.0}
    nano = healthparse.clock_sync(0, healthparse.STA_NANO, 2_500_000, 20_000)
    assert nano["clock_offset_ms"] == 2.5
    unsynced = healthparse.clock_sync(5, healthparse.STA_UNSYNC, 0, 16_000_000)  # what a container without NTP gives
    assert unsynced == {"clock_synced": False, "clock_offset_ms": None, "clock_maxerror_ms": None}


# --- the reader ------------------------------------------------------------------------------------


def test_a_pi_read_from_its_files(tmp_path):
    root = a_pi(tmp_path / "pi")
    h = HealthReader(tmp_path, lambda: 2, root=root, sync=lambda: (0, 0, 800, 30_000)).read()
    assert h["undervoltage"] is True and h["throttled_since_boot"] is True
    assert h["cpu_temp_c"] == 61.2 and h["uptime_s"] == 12345 and h["write_errors"] == 2
    assert (h["wifi_interface"], h["wifi_link"], h["wifi_signal_dbm"]) == ("wlan0", True, -56)
    assert h["clock_synced"] is True and h["clock_offset_ms"] == 0.8
    st = os.statvfs(tmp_path)
    assert h["state_free_mb"] == st.f_bavail * st.f_frsize // 2**20
    assert set(h) == set(wire.FIELDS)


def test_a_wired_device_reports_no_wifi_not_a_dead_link(tmp_path):
    h = HealthReader(tmp_path, root=a_pi(tmp_path / "pi", wifi=False), sync=lambda: None).read()
    assert h["wifi_interface"] is None and h["wifi_link"] is None and h["wifi_signal_dbm"] is None
    assert h["clock_synced"] is None  # no adjtimex: unknown, never invented


def test_this_machine_reports_what_it_has_and_unknown_for_the_rest(tmp_path):
    h = HealthReader(tmp_path).read()
    with open("/proc/uptime") as f:
        assert abs(h["uptime_s"] - float(f.read().split()[0])) < 60
    assert h["state_free_mb"] is not None
    throttled = Path("/sys/devices/platform/soc/soc:firmware/get_throttled")
    assert (h["undervoltage"] is None) == (not throttled.exists())
    thermal = Path("/sys/class/thermal/thermal_zone0/temp")
    assert (h["cpu_temp_c"] is None) == (not thermal.exists() or healthparse.thermal(thermal.read_text()) is None)
    timex = adjtimex()
    assert (h["clock_synced"] is None) == (timex is None)
    if timex is not None:
        assert h["clock_synced"] == healthparse.clock_sync(*timex)["clock_synced"]


class _Disk:
    """os.statvfs of the state folder, as the test says (the suite's own folder fills and empties as
    other tests and programs write: a real one made this test fail when 1 MB moved between readings)."""

    def __init__(self, free_mb: int) -> None:
        self.free_mb = free_mb

    def __call__(self, path):
        import types

        return types.SimpleNamespace(f_bavail=self.free_mb * 256, f_blocks=64 * 2**30 // 4096, f_frsize=4096)


def test_the_watch_publishes_on_change_not_on_every_reading(tmp_path, monkeypatch):
    disk = _Disk(20_008)  # within a 16 MB step: 3 MB less stays in it
    monkeypatch.setattr("rackside.hall.device.health.os.statvfs", disk)
    root = a_pi(tmp_path / "pi", throttled="0")
    sent: list[bytes] = []
    watch = HealthWatch(HealthReader(tmp_path, root=root, sync=lambda: None), sent.append, "1.2.3")
    assert watch.once(0) is True
    (root / "proc/uptime").write_text("12400.00 1.00\n")  # only the uptime moved
    assert watch.once(30) is False
    disk.free_mb -= 3  # a journal grew: no change worth a status
    assert watch.once(31) is False
    disk.free_mb -= 400  # the card filling: a change
    assert watch.once(32) is True
    (root / "sys/devices/platform/soc/soc:firmware/get_throttled").write_text("1\n")  # undervoltage now
    assert watch.once(60) is True
    assert watch.once(wire_quiet := watch.quiet_s) is True  # quiet for long enough: the uptime goes again
    assert wire_quiet == 600
    body = json.loads(sent[2])
    assert body["status"] == "online" and body["version"] == "1.2.3" and body["health"]["undervoltage"] is True
    assert len(sent[2]) <= wire.MAX_STATUS_BYTES


def test_a_simulated_fault_is_laid_over_the_reading(tmp_path):
    with pytest.raises(wire.FaultError, match="allowed are undervoltage"):
        wire.check_faults(["brownout"])
    sent: list[bytes] = []
    HealthWatch(HealthReader(tmp_path, sync=lambda: None), sent.append, None, faults=("hot", "wifi-down")).once(0)
    h = json.loads(sent[0])["health"]
    assert h["cpu_temp_c"] == 84.5 and h["wifi_link"] is False


# --- the console's side: the contract, the problems ------------------------------------------------


def test_the_contract_reads_every_status_form():
    assert contract.read("status", b"offline") == {"status": "offline", "version": None, "health": None, "takes": []}
    assert contract.read("status", b"online")["health"] is None  # an older device
    h = wire.with_faults(wire.unknown(), tuple(wire.FAULTS)[:3])
    got = contract.read("status", wire.status_payload(h, "0.1.0+g1a2b3c4"))
    assert got["health"]["undervoltage"] is False and got["health"]["throttled"] is True  # the earlier fault is overlaid
    assert got["version"] == "0.1.0+g1a2b3c4"
    for bad, why in [(b'{"status":"online","health":{"cpu_temp_c":"hot"}}', "cpu_temp_c"),
                     (b'{"status":"online","health":{"undervoltage":1}}', "undervoltage"),
                     (b'{"status":"online","health":{"wifi_interface":"wlan0;rm -rf /"}}', "wifi_interface"),
                     (b'{"status":"maybe"}', "status"), (b"onlin", "allowed are online or offline"),
                     (b'{"status":"online","health":[1]}', "health"),
                     (b'{"status":"online","health":{"uptime_s":1e400}}', "out of range"),
                     (b'{"status":"online","takes":"pairing.names"}', "takes"),
                     (b'{"status":"online","takes":["names; drop"]}', r"takes\[0\]"),
                     (b'{"status":"online","takes":' + json.dumps(["a.b"] * (wire.MAX_TAKES + 1)).encode() + b"}", "takes")]:
        with pytest.raises(Refused, match=why):
            contract.read("status", bad)
    with pytest.raises(Refused, match="bytes"):
        contract.read("status", b"{" + b" " * wire.MAX_STATUS_BYTES + b"}")
    # the later command fields a clock takes (issue 40's names): none from a device of before them; one
    # this console does not know (a newer clock's) is kept, never refused; the most a status may carry fits
    assert contract.read("status", wire.status_payload(h, "1.0"))["takes"] == []
    newer = ["pairing.names", "pairing.colour"]
    assert contract.read("status", wire.status_payload(h, "1.0", tuple(newer)))["takes"] == newer
    most = tuple(f"{'c' * 23}.{chr(97 + i) * 24}" for i in range(wire.MAX_TAKES))
    widest = {k: (False if kind is bool else "w" * int(hi) if kind is str else int(hi) if kind is int else float(lo) + 0.123456789)
              for k, (kind, lo, hi) in wire.FIELDS.items()}
    assert contract.read("status", wire.status_payload(widest, "1." + "9" * 62, most))["takes"] == list(most)


def test_each_fault_is_a_named_problem_and_thresholds_move_them():
    th = health.defaults()
    expected = {
        "undervoltage": "undervoltage now", "undervoltage-earlier": "undervoltage since boot",
        "throttled": "throttled now", "hot": "hot: CPU 84 °C", "disk-full": "disk: 12 MB free",
        "write-errors": "3 write errors", "wifi-weak": "Wi-Fi weak: -84 dBm", "wifi-down": "Wi-Fi down",
        "unsynced": "clock not synced", "clock-offset": "clock off by 2.5 s",
    }
    assert set(expected) == set(wire.FAULTS)
    for fault, problem in expected.items():
        assert health.problems(wire.with_faults(wire.unknown(), (fault,)), th) == [problem], fault
    assert health.problems(wire.unknown(), th) == []  # unknown is no problem
    lenient = health.check({"cpu_temp_c": 90, "since_boot": 0})
    assert health.problems(wire.with_faults(wire.unknown(), ("hot", "undervoltage-earlier")), lenient) == []
    for body, why in [({"cpu_temp_c": 500}, "from 40 to 110"), ({"nonsense": 1}, "allowed are cpu_temp_c"),
                      ({"cpu_temp_c": True}, "cpu_temp_c"), ([], "JSON object"), ({}, "JSON object")]:
        with pytest.raises(health.ThresholdError, match=why):
            health.check(body)
    assert health.restored({"cpu_temp_c": "damaged"}) == health.defaults()


def test_readiness_names_what_is_wrong_with_each_table():
    s = HallState("h")
    s.set_seats({n: {"division": "A", "round": 1, "label": "", "names": ["Ann", "Bo" if n != 3 else ""],
                     "numbers": [1, 2], "tsh_table": str(n)} for n in (1, 2, 3, 4)}, {})
    good = wire.unknown() | {"clock_synced": True, "clock_offset_ms": 1.0}
    s.on_message(topics.table("h", 1, "status"), wire.status_payload(good, "1.0"))
    s.on_message(topics.table("h", 2, "status"), wire.status_payload(good | wire.FAULTS["hot"], "0.9"))
    s.on_message(topics.table("h", 3, "status"), wire.status_payload(good, "1.0"))
    v = readiness.view(s.tables, 1_500_000, 1)
    rows = {r["table"]: r for r in v["tables"]}
    assert rows[1]["ready"] and rows[1]["why"] == []
    # issue 35: another version and heat are notes (they do not block a start), named as such
    assert rows[2]["ready"] and rows[2]["why"] == [] and rows[2]["notes"] == ["version 0.9 (the hall runs 1.0)", "hot: CPU 84 °C"]
    assert rows[3]["why"] == ["a player is not known"]
    assert rows[4]["why"] == ["no clock heard"]
    assert v["not_ready"] == [3, 4] and v["with_notes"] == [2] and v["versions"] == {"1.0": 2, "0.9": 1}
    s.on_message(topics.table("h", 1, "status"), b"offline")  # the Last Will keeps the last health
    assert s.tables[1].health == good
    assert readiness.view(s.tables, 1_500_000, 1)["tables"][0]["why"] == ["offline"]
    assert "table   2 READY" in readiness.text(v) and "notes (do not block a start): version 0.9" in readiness.text(v)
    assert "table   3 NOT READY" in readiness.text(v) and "not ready (blocks a start): a player is not known" in readiness.text(v)


def test_which_health_problems_block_a_start_and_which_are_notes():
    """Issue 35: "clock not synced" on a laptop made every table not ready; power failing now and a
    state filesystem too full or failing block a start, the rest are notes."""
    th = health.defaults()
    blocking = {"undervoltage", "disk-full", "write-errors"}
    for fault in wire.FAULTS:
        for problem in health.problems(wire.with_faults(wire.unknown(), (fault,)), th):
            assert problem.blocks == (fault in blocking), (fault, problem)


def test_readiness_takes_whether_a_problem_blocks_from_the_problem_not_its_words():
    """Whether a health problem blocks a start was decided by matching its words ("disk:" ..., "...
    write errors"): reworded, a blocking problem became a note, or a note a block. It is the problem's
    own field (health.Problem.blocks), set where the problem is named; the JSON still carries its words."""
    t = Table(1, status="online")
    t.health_problems = [health.Problem("disk: a note worded like a full disk"), health.Problem("power fails", blocks=True)]
    row = readiness.view({1: t}, 1_500_000, 1)["tables"][0]
    assert row["why"] == ["power fails"] and row["notes"] == ["disk: a note worded like a full disk"]
    assert json.loads(json.dumps(row))["health_problems"] == ["disk: a note worded like a full disk", "power fails"]


def test_readiness_lists_which_tables_run_the_events_rules_and_which_do_not():
    """Issue 38: a table whose game runs other rules than the event's ([event]) is marked, and the
    view groups the tables by the rules their games run; before, any rules but WESPA's were flagged."""
    import json

    from rackside.hall.wire.eventrules import from_table

    s = HallState("h")
    for n, per_minute in ((1, 5), (2, 5), (3, 10)):
        s.on_message(topics.table("h", n, "state"), json.dumps({
            "seq": 0, "game": "game-000001", "phase": "setup", "running": None, "ending": None, "sent_at": "2026-12-05T10:00:00+00:00",
            "players": [{"player": p, "remaining_ms": 1_200_000, "overtime_s": 0, "penalty": 0, "forfeit": False} for p in (1, 2)],
            "rules": {"game_time_ms": 1_200_000, "penalty_per_minute": per_minute, "forfeit_overtime_ms": 600_000,
                      "lateness_forfeit_margin": 75}}).encode())
    v = readiness.view(s.tables, 1_200_000, 1, None, from_table({"game_time": "20:00", "penalty_per_minute": 5}))
    assert [r["rules_differ"] for r in v["tables"]] == [False, False, True]
    assert [(g["event"], g["tables"], g["rules"]["penalty_per_minute"]) for g in v["rules_groups"]] == [(True, [1, 2], 5), (False, [3], 10)]
    text = readiness.text(v)
    assert "the event's rules: wespa preset, game time 20:00, penalty 5/min" in text
    assert "  others: table(s) 3: penalty 10/min" in text and "(not the event's: its next game from the console runs the event's)" in text


# --- a real clock on a real broker -------------------------------------------------------------------


def test_a_simulated_clock_reports_its_faults_in_its_retained_status(make_broker, tmp_path):
    broker = make_broker(tables="5", stations=0)
    live = LiveClock(clock_config(tmp_path / "clock.toml", broker, 5), tmp_path / "state",
                     faults=("undervoltage", "disk-full"))
    try:
        client = broker.client("director")
        got = []
        client.on_message = lambda c, u, m: got.append(m.payload)
        client.subscribe(topics.table(broker.hall, 5, "status"), qos=1)
        body = wait(lambda: next((json.loads(p) for p in got if p.startswith(b"{")), None))
        assert body["status"] == "online" and body["version"]
        assert body["takes"] == ["pairing.names"]  # the later command fields it takes: the console sends names (issue 40)
        assert body["health"]["undervoltage"] is True and body["health"]["state_free_mb"] == 12
        assert body["health"]["uptime_s"] is not None  # the rest is this machine's own
        client.disconnect()
        client.loop_stop()
    finally:
        live.close()


def test_rackside_hall_station_reports_its_health_with_a_simulated_fault(make_broker, tmp_path):
    """`rackside hall station --fault hot`, as its own process: its retained status carries its health."""
    import subprocess
    import sys

    broker = make_broker(tables="1", stations=1)
    cfg = tmp_path / "station.toml"
    cfg.write_text(f'[log]\npath = "{tmp_path / "challenges.jsonl"}"\n\n'
                   f'[hall]\nurl = "{broker.url}"\ncredentials = "{broker.credentials("station-1")}"\n'
                   f'outbox = "{tmp_path / "outbox.sqlite"}"\n')
    bad = subprocess.run([sys.executable, "-m", "rackside", "hall", "station", "--config", str(cfg), "--fault", "brownout"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--fault: fault 'brownout': allowed are undervoltage" in bad.stderr
    proc = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "station", "--config", str(cfg), "--fault", "hot"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "RACKSIDE_STATE_DIR": str(tmp_path)})
    client = broker.client("director")
    try:
        got = []
        client.on_message = lambda c, u, m: got.append(m.payload)
        client.subscribe(topics.station(broker.hall, "1", "status"), qos=1)
        body = wait(lambda: next((json.loads(p) for p in got if p.startswith(b"{")), None), timeout=30)
        assert body["health"]["cpu_temp_c"] == 84.5 and body["health"]["state_free_mb"] is not None
        state = HallState(broker.hall)
        state.on_message(topics.station(broker.hall, "1", "status"), got[-1])
        assert "hot: CPU 84 °C" in state.station_view("1")["health_problems"]
        v = readiness.view({}, 1_500_000, 1, state.stations)  # the readiness view lists the station, with its problem
        assert v["stations"][0]["health_problems"] == state.station_view("1")["health_problems"]
        assert "station 1: online, version" in readiness.text(v)
    finally:
        client.disconnect()
        client.loop_stop()
        proc.terminate()
        proc.wait(10)


def test_hall_tail_prints_a_status_with_its_health():
    from rackside.hall.director.tail import describe

    topic = topics.table("h", 3, "status")
    assert describe(topic, b"offline").split() == ["table", "3", "offline"]
    line = describe(topic, wire.status_payload(wire.with_faults(wire.unknown(), ("hot",)), "1.0"))
    assert line.startswith("table 3") and "online (rackside 1.0) cpu_temp_c=84.5" in line
    assert "undervoltage" not in line  # unknown is left out, not printed as a value


def test_a_clock_that_joined_with_the_join_file_reports_its_health_once_numbered(make_broker, tmp_path):
    """The production path: a clock with only the join file, numbered by the director, publishes
    its health as that table (the join file's clock is built by the enrolled output)."""
    from rackside.hall.director.fleet import Fleet

    broker = make_broker(tables="", stations=0)
    (tmp_path / "pi").mkdir()
    (tmp_path / "pi" / "join.toml").write_bytes((broker.dir / "join.toml").read_bytes())
    cfg = tmp_path / "pi" / "clock.toml"
    cfg.write_text('[hall]\njoin = "auto"\n')
    director = broker.client("director")
    fleet = Fleet(broker.hall, director)
    live = LiveClock(cfg, tmp_path / "pi" / "state", device_id="pi-h1", faults=("wifi-down",))
    try:
        assert fleet.wait(lambda f: any(r["device"] == "pi-h1" for r in fleet.rows()), 10)
        fleet.assign(next(r["code"] for r in fleet.rows() if r["device"] == "pi-h1"), 4)  # the code it shows
        got = []
        watcher = broker.client("director")
        watcher.on_message = lambda c, u, m: got.append(m.payload)
        watcher.subscribe(topics.table(broker.hall, 4, "status"), qos=1)
        body = wait(lambda: next((json.loads(p) for p in got if p.startswith(b"{")), None), timeout=20)
        assert body["health"]["wifi_link"] is False and body["health"]["uptime_s"] is not None
        assert body["takes"] == list(commands.TAKES)
        watcher.disconnect()
        watcher.loop_stop()
    finally:
        live.close()
        director.disconnect()
        director.loop_stop()


def test_a_journal_line_the_card_refuses_is_a_write_error_in_the_health(tmp_path):
    """GameStore counts each line the card refused; the clock's health reports the count."""
    import errno

    from rackside.game.clock import Press, Rules
    from rackside.firmware.persist import GameStore

    from support.disk import Disk

    disk = Disk()
    store = GameStore(tmp_path, Rules(), boot_id="b", disk=disk)
    store.start(0)
    store.record(Press(5, 2))
    assert store.write_errors == 0
    disk.fail("write", lambda fd, data: disk.path_of(fd) == store.journal_path, errno.EIO)
    for t in (6, 7):
        with pytest.raises(OSError):
            store.record(Press(t, 1))
    assert store.write_errors == 2
    assert HealthReader(tmp_path, lambda: store.write_errors, sync=lambda: None).read()["write_errors"] == 2
    store.close()
