"""The station on the hall, `rackside hall tail`, provisioning from the command line, and mDNS
discovery on loopback, against the real broker (issue 12)."""

from __future__ import annotations

import io
import json
import os
import threading

import pytest

from rackside.hall.net import config as hall_config
from rackside.hall.director import tail
from rackside.hall.device.station import StationPublisher
from rackside.hall.wire.health import is_online  # the bare word, or the status with the health

from support.broker import Recorder
from support.wait import wait

RECORD = {
    "v": 1, "id": "station-1-20261130-101500-abcdef", "time": "2026-11-30T10:15:00+00:00", "station": "station-1",
    "table": "3", "kind": "self", "lexicon_name": "ENABLE", "lexicon_sha256": "ab" * 32,
    "words": ["QI", "ZZXQ"], "verdict": "UNACCEPTABLE", "acceptable": False, "per_word": [True, False],
}


def station_cfg(broker, sid="1"):
    return hall_config.from_table({"url": broker.url, "credentials": str(broker.credentials(f"station-{sid}"))}, "station")


def test_each_challenge_is_published_verdict_to_all_per_word_results_to_the_director(hall_broker, tmp_path):
    log_path = tmp_path / "challenges.jsonl"
    log_path.write_text(json.dumps(RECORD) + "\n" + "{damaged\n")
    rec = Recorder(hall_broker)
    pub = StationPublisher(station_cfg(hall_broker), log_path, tmp_path / "outbox.sqlite")
    read = following(pub)
    pub.start()
    try:
        summary = rec.wait_for(lambda r: r.json("challenge"))[0]
        assert summary["verdict"] == "UNACCEPTABLE" and summary["table"] == "3"
        assert summary["lexicon_checksum"] == "ab" * 32 and summary["words"] == 2
        assert "QI" not in json.dumps(summary)  # the summary never says which word failed (3.10.7(b))
        detail = rec.wait_for(lambda r: r.json("detail"))[0]
        assert detail["words"] == [{"word": "QI", "valid": True}, {"word": "ZZXQ", "valid": False}]
        # a later challenge, and a torn line that waits until it is whole
        second = {**RECORD, "id": "station-1-20261130-101600-000001", "acceptable": True, "verdict": "ACCEPTABLE", "per_word": [True, True]}
        with open(log_path, "a") as f:
            f.write(json.dumps(second)[:20])
            f.flush()
            torn = log_path.stat().st_size
            wait(lambda: torn in read)  # the publisher has read the log with the torn line at its end
            f.write(json.dumps(second)[20:] + "\n")
        rec.wait_for(lambda r: len(r.json("challenge")) == 2)
        assert rec.wait_for(lambda r: any(t.endswith("station/1/status") and is_online(p) for t, p, _ in r.messages))
    finally:
        pub.close()
    # restarted: nothing is published twice. A third challenge is the barrier: what the restarted
    # publisher sends comes in the log's order, so anything it sent again arrives before the third.
    pub = StationPublisher(station_cfg(hall_broker), log_path, tmp_path / "outbox.sqlite").start()
    third = {**second, "id": "station-1-20261130-101700-000002"}
    with open(log_path, "a") as f:
        f.write(json.dumps(third) + "\n")
    rec.wait_for(lambda r: any(c["id"] == third["id"] for c in r.json("challenge")))
    pub.close()
    assert [c["id"] for c in rec.json("challenge")] == [RECORD["id"], second["id"], third["id"]]
    rec.close()


def following(pub: StationPublisher) -> list[int]:
    """The log sizes `pub` has read the log at, each appended once that read is done (its thread
    calls `_follow` on every turn)."""
    seen: list[int] = []
    real = pub._follow

    def follow(outbox):
        size = pub.log_path.stat().st_size
        real(outbox)
        seen.append(size)

    pub._follow = follow
    return seen


def test_a_line_the_challenge_log_would_refuse_is_not_published_half_filled(hall_broker, tmp_path):
    """The publisher reads the log as the log itself does (ChallengeRecord.from_json): a line that
    is JSON with an id but no verdict, words or lexicon is skipped, not sent with empty fields."""
    log_path = tmp_path / "challenges.jsonl"
    log_path.write_text(json.dumps({"id": "station-1-20261130-101400-000000"}) + "\n" + json.dumps(RECORD) + "\n")
    rec = Recorder(hall_broker)
    pub = StationPublisher(station_cfg(hall_broker), log_path, tmp_path / "outbox.sqlite").start()
    try:
        # the refused line comes first in the log: published, it would have arrived before this one
        rec.wait_for(lambda r: any(c["id"] == RECORD["id"] for c in r.json("challenge")))
    finally:
        pub.close()
    assert [c["id"] for c in rec.json("challenge")] == [RECORD["id"]]
    rec.close()


def test_tail_prints_the_hall_as_the_director_reads_it(make_broker):
    """On a broker of its own, so the tail prints exactly the four lines below (with `count`, it
    ends after the fourth, however slow the machine: not after a guessed number of seconds)."""
    hall_broker = make_broker(tables="7", stations=0)
    out = io.StringIO()
    creds = hall_config.load_credentials(hall_broker.credentials("director"))
    ready = threading.Event()
    t = threading.Thread(target=tail.run, args=(creds, hall_broker.url), kwargs={"count": 4, "seconds": 60, "out": out, "ready": ready.set})
    t.start()
    assert ready.wait(5)
    c = hall_broker.client("table-7")
    h = hall_broker.hall
    event = {"kind": "input", "game": "game-000001", "seq": 2, "t_ns": 1, "input": "press", "player": 2, "at": None}
    for _ in range(2):  # sent twice (a reconnect): printed once
        c.publish(f"rackside/v1/{h}/table/7/event", json.dumps(event), qos=1).wait_for_publish(5)
    result = {"kind": "result", "game": "game-000001", "seq": 0, "ending": "end", "forfeits": [], "lateness_margin": None,
              "players": [{"player": 1, "remaining_ms": -61000, "overtime_s": 61, "penalty": 20, "forfeit": False},
                          {"player": 2, "remaining_ms": 1000, "overtime_s": 0, "penalty": 0, "forfeit": False}]}
    c.publish(f"rackside/v1/{h}/table/7/event", json.dumps(result), qos=1).wait_for_publish(5)
    c.publish(f"rackside/v1/{h}/table/7/ack", json.dumps({"id": "c1", "ok": False, "reason": "the game is running"}), qos=1).wait_for_publish(5)
    c.publish(f"rackside/v1/{h}/table/7/status", b"online", qos=1).wait_for_publish(5)
    c.disconnect()  # table 7's client id is table 7's alone: leave it free for other tests
    c.loop_stop()
    t.join(60)
    assert not t.is_alive()
    lines = out.getvalue().splitlines()
    assert len(lines) == 4, lines
    assert "table 7" in lines[0] and "event" in lines[0] and "#2 press player=2" in lines[0]
    assert "RESULT" in lines[1] and "p1 -1:01 overtime 61s penalty 20" in lines[1]
    assert "REFUSED: the game is running" in lines[2]
    assert lines[3].endswith("table 7      online")


def test_provision_from_the_command_line_and_a_bad_value_is_one_line(tmp_path, capsys):
    from rackside.cli import main

    assert main(["hall", "provision", "--hall", "open2026", "--tables", "1-60", "--stations", "3", "--out", str(tmp_path / "h")]) == 0
    creds = sorted(p.name for p in (tmp_path / "h" / "credentials").iterdir())
    assert len(creds) == 64 and "table-60.toml" in creds and "station-3.toml" in creds and "director.toml" in creds
    conf = (tmp_path / "h" / "mosquitto.conf").read_text()
    # TLS by default: devices on 8883 with the hall's own certificates, plain MQTT on 127.0.0.1 only
    for line in ("allow_anonymous false", "persistence true", "\nlistener 8883\n", "\nlistener 1883 127.0.0.1\n", "\ncertfile ",
                 "plugin_opt_config_file "):
        assert line in conf
    assert all((tmp_path / "h" / "tls" / f).is_file() for f in ("ca.crt", "ca.key", "server.crt", "server.key"))
    assert (tmp_path / "h" / "tls" / "server.key").stat().st_mode & 0o077 == 0
    capsys.readouterr()  # as root, a hint about --run-as (below)
    assert main(["hall", "provision", "--hall", "open/2026", "--tables", "1-6", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "allowed are" in err[0]
    assert main(["hall", "provision", "--hall", "h", "--no-tls", "--out", str(tmp_path / "t")]) == 0
    plain = (tmp_path / "t" / "mosquitto.conf").read_text()
    assert "\nlistener 1883\n" in plain and "certfile" not in plain and not (tmp_path / "t" / "tls").exists()


@pytest.mark.parametrize(
    "table, words",
    [
        ({"url": "http://x", "credentials": "C"}, ["hall.url", "mqtt://HOST"]),
        ({"url": "mqtt://h", "credentials": "C", "table": 4}, ["hall.table = 4", "allowed is 3"]),
        ({"url": "mqtt://h", "credentials": "C", "hall": "other"}, ["hall.hall", "allowed is"]),
        ({"url": "mqtt://h", "credentials": "C", "colour": 1}, ["unknown key 'colour'", "allowed keys"]),
        ({"url": "mqtt://h"}, ["hall.credentials is missing"]),
        ({"url": "mqtt://h", "credentials": "/nonexistent.toml"}, ["no such file"]),
    ],
)
def test_a_bad_hall_section_names_the_key_and_what_is_allowed(hall_broker, table, words):
    table = {k: (str(hall_broker.credentials("table-3")) if v == "C" else v) for k, v in table.items()}
    with pytest.raises(hall_config.HallConfigError) as e:
        hall_config.from_table(table, "table")
    assert all(w in str(e.value) for w in words), str(e.value)
    assert "\n" not in str(e.value)


def test_a_bad_hall_section_stops_the_clock_with_one_line(hall_broker, tmp_path, capsys):
    from rackside.cli import main

    cfg = tmp_path / "clock.toml"
    cfg.write_text(f'[hall]\nurl = "mqtt://127.0.0.1:1"\ncredentials = "{hall_broker.credentials("table-3")}"\ntable = 9\n')
    assert main(["clock", "--simulate", "--config", str(cfg), "--state-dir", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "hall.table = 9: allowed is 3" in err[0]


def test_auto_finds_the_broker_by_mdns_on_loopback(hall_broker, monkeypatch):
    monkeypatch.setenv("RACKSIDE_MDNS_INTERFACES", "127.0.0.1")
    from rackside.hall.net import mdns

    try:
        ad = mdns.Advertisement(hall_broker.hall, hall_broker.port)
    except OSError as e:
        pytest.skip(f"no multicast on loopback here: {e}")
    try:
        found = mdns.find_broker(hall=hall_broker.hall, timeout=5)
        other = mdns.find_broker(hall="another-hall", timeout=1)
    finally:
        ad.close()
    if found is None:
        pytest.skip("this machine's loopback does not carry multicast")
    assert (found.host, found.port) == ("127.0.0.1", hall_broker.port)
    assert other is None


@pytest.mark.skipif(not __import__("shutil").which("openssl"), reason="openssl is not installed here")
def test_tls_is_one_setting_away(make_broker, tmp_path):
    """Provisioned with --tls: a table publishes over TLS (its credentials name the CA), the
    director reads it, and the plain listener is on 127.0.0.1 only."""
    broker = make_broker(tables="1-2", stations=0, tls=True)
    conf = (broker.dir / "mosquitto.conf").read_text()
    assert f"listener {broker.tls_port} 127.0.0.1" in conf and f"listener {broker.port} 127.0.0.1" in conf
    creds = hall_config.load_credentials(broker.credentials("table-1"))
    assert creds.tls_ca and creds.url.startswith("mqtts://")
    rec = Recorder(broker)
    from support.hallclock import LiveClock

    cfg = tmp_path / "clock.toml"
    cfg.write_text(f'[hall]\ncredentials = "{broker.credentials("table-1")}"\n')  # the URL from the credentials
    live = LiveClock(cfg, tmp_path / "state")
    try:
        live.tap("right")
        event = rec.wait_for(lambda r: r.json("event"))[0]
        assert event["input"] == "press"
    finally:
        live.close()
        rec.close()


def test_the_simulator_joins_a_hall_with_dash_dash_hall(hall_broker, tmp_path):
    """`rackside clock --simulate --hall URL --hall-credentials FILE` in a real terminal: the
    director sees table 5 come online and its first press."""
    import pty
    import sys

    from support.terminal import read_until, reap

    rec = Recorder(hall_broker)
    pid, fd = pty.fork()
    if pid == 0:
        env = dict(os.environ, RACKSIDE_STATE_DIR=str(tmp_path / "state"), TERM="xterm")
        env.pop("DISPLAY", None)
        env.pop("WAYLAND_DISPLAY", None)
        os.execve(sys.executable, [sys.executable, "-m", "rackside", "clock", "--simulate", "--hall", hall_broker.url,
                                   "--hall-credentials", str(hall_broker.credentials("table-5"))], env)
    try:
        read_until(fd, b"RIGHT PLAYER")
        rec.wait_for(lambda r: any(t.endswith("table/5/status") and is_online(p) for t, p, _ in r.messages))
        os.write(fd, b"m")
        event = rec.wait_for(lambda r: [e for e in r.json("event") if e["input"] == "press"])[0]
        assert event["player"] == 2 and event["seq"] == 1
        os.write(fd, b"q")
        read_until(fd, b"\x1b[?25h")
    finally:
        status = reap(pid)  # (killed if a step above failed: never a hung suite)
        os.close(fd)
        rec.close()
    assert os.waitstatus_to_exitcode(status) == 0
    assert rec.wait_for(lambda r: [p for t, p, _ in r.messages if t.endswith("table/5/status")][-1] == b"offline")


def test_rackside_hall_broker_runs_mosquitto_advertises_it_and_a_clock_finds_it_with_auto(tmp_path, monkeypatch):
    """`rackside hall broker --config DIR` (mDNS on loopback only), a clock with url = "auto"."""
    import signal
    import subprocess
    import sys

    from rackside.hall.net import mdns
    from support.broker import Broker
    from support.hallclock import LiveClock

    monkeypatch.setenv("RACKSIDE_MDNS_INTERFACES", "127.0.0.1")
    broker = Broker(tmp_path / "hall", hall="autohall", tables="1-2", stations=0)  # provisioned, not started
    proc = subprocess.Popen([sys.executable, "-m", "rackside", "hall", "broker", "--config", str(broker.dir)],
                            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        found = mdns.find_broker(hall="autohall", timeout=8)
        if found is None:
            pytest.skip("this machine's loopback does not carry multicast")
        assert found.port == broker.port
        rec = Recorder(broker)
        cfg = tmp_path / "clock.toml"
        cfg.write_text(f'[hall]\nurl = "auto"\ncredentials = "{broker.credentials("table-2")}"\n')
        live = LiveClock(cfg, tmp_path / "state")
        try:
            live.tap("right")
            assert rec.wait_for(lambda r: r.json("event"))[0]["input"] == "press"
        finally:
            live.close()
            rec.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=15)[0].decode()
    assert proc.returncode == 0, out


def test_tail_shows_which_version_a_table_runs():
    state = {"seq": 3, "game": "game-000002", "phase": "setup", "running": None, "sent_at": "2026-12-01T10:00:00.000+00:00",
             "players": [{"player": 1, "remaining_ms": 1500000}, {"player": 2, "remaining_ms": 1500000}], "version": "0.1.0+g1a2b3c4d5e"}
    line = tail.describe("rackside/v1/open2026/table/12/state", json.dumps(state).encode())
    assert line.endswith("(game-000002 #3, 2026-12-01T10:00:00.000+00:00, rackside 0.1.0+g1a2b3c4d5e)"), line
    del state["version"]  # a clock from before issue 20
    assert tail.describe("rackside/v1/open2026/table/12/state", json.dumps(state).encode()).endswith("+00:00)")


@pytest.mark.skipif(os.geteuid() != 0, reason="the hint is for provisioning as root")
def test_provisioning_as_root_without_run_as_says_what_to_do(tmp_path, capsys):
    """As root, Mosquitto drops to the user `mosquitto`, which cannot read the owner-only files
    provisioned here: it failed later with its own "Unable to open pwfile" and no hint (issue 17)."""
    from rackside.cli import main

    assert main(["hall", "provision", "--hall", "h", "--no-tls", "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "--run-as" in err and "root" in err
    assert main(["hall", "provision", "--hall", "h", "--no-tls", "--run-as", "root", "--out", str(tmp_path / "s")]) == 0
    assert "--run-as" not in capsys.readouterr().err


def test_the_events_challenge_rule_goes_to_the_stations_settings_and_a_bad_one_changes_nothing(hall_broker, tmp_path):
    """Issue 38: the console's retained rules give the station its challenge rule (3.10.15), written
    to the settings the station takes at its idle screen; a message that is not the rules is refused
    in one logged line and the station judges on as it did."""
    from rackside.judge.settings import load_settings

    settings = tmp_path / "station.json"
    pub = StationPublisher(station_cfg(hall_broker), tmp_path / "log.jsonl", tmp_path / "outbox.sqlite", settings_path=settings)
    for bad in (b"{", b"[]", b'{"challenge_rule": "triple"}', b'{"penalty_per_minute": -1}', b'{"x": 1}', b"9" * 2000, b""):
        pub.rules_in.put(bad)
        pub._take_rules()
    assert load_settings(settings).challenge_rule.value == "5-per-word" and not settings.exists()
    pub.rules_in.put(b'{"challenge_rule": "double", "penalty_per_minute": 5}')
    pub._take_rules()
    assert load_settings(settings).challenge_rule.value == "double" and pub.challenge_rule == "double"
    pub.rules_in.put(b'{"challenge_rule": "nonsense"}')  # refused: the hall's last good rule stays
    pub._take_rules()
    assert load_settings(settings).challenge_rule.value == "double"
