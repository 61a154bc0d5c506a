"""`rackside hall tail`: the hall's traffic as the director reads it, one line a message.

Logs in as the director (the credentials file `rackside hall provision` wrote), subscribes to the
whole hall and prints each message as a line; events and results seen twice (a device re-sending
after a reconnect) are printed once: subscribers drop duplicates by (device, game, seq).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Callable, TextIO

from rackside.hall.wire import topics


def mmss(ms: int) -> str:
    s = -(-ms // 1000) if ms > 0 else (-ms) // 1000
    return f"{'-' if ms < 0 and s else ''}{s // 60}:{s % 60:02d}"


def describe(topic: str, payload: bytes) -> str | None:
    """One line for the director, or None for a message that is not Rackside's v1."""
    parsed = topics.parse(topic)
    if parsed is None:
        return None
    _, kind, ident, leaf = parsed
    who = f"{kind} {ident}"
    text = payload.decode("utf-8", "replace")
    if leaf == "status":
        return f"{who:<12} {status_line(payload)}"
    try:
        d = json.loads(text)
    except ValueError:
        return f"{who:<12} {leaf:<9} (not JSON: {text[:60]!r})"
    if not isinstance(d, dict):
        return f"{who:<12} {leaf:<9} {text[:80]}"
    if leaf == "state":
        ps = " | ".join(
            f"p{p.get('player')} {mmss(p.get('remaining_ms', 0))}{' P' + str(p['penalty']) if p.get('penalty') else ''}"
            f"{' FORFEIT' if p.get('forfeit') else ''}{' *' if d.get('running') == p.get('player') else ''}"
            for p in d.get("players", [])
        )
        version = f", rackside {d['version']}" if isinstance(d.get("version"), str) else ""  # which version the table runs
        return f"{who:<12} {'state':<9} {d.get('phase')}: {ps}  ({d.get('game')} #{d.get('seq')}, {d.get('sent_at')}{version})"
    if leaf == "event" and d.get("kind") == "result":
        ps = " | ".join(
            f"p{p.get('player')} {mmss(p.get('remaining_ms', 0))} overtime {p.get('overtime_s')}s penalty {p.get('penalty')}"
            f"{' FORFEIT' if p.get('forfeit') else ''}"
            for p in d.get("players", [])
        )
        margin = f", lateness margin {d['lateness_margin']}" if d.get("lateness_margin") is not None else ""
        return f"{who:<12} {'RESULT':<9} {d.get('game')} {d.get('ending')}: {ps}{margin}"
    if leaf == "event":
        fields = " ".join(f"{k}={v}" for k, v in d.items() if k not in ("kind", "game", "seq", "input", "t_ns", "at"))
        return f"{who:<12} {'event':<9} {d.get('game')} #{d.get('seq')} {d.get('input')} {fields}".rstrip()
    if leaf == "cmd":
        fields = " ".join(f"{k}={v}" for k, v in d.items() if k not in ("id", "cmd"))
        return f"{who:<12} {'command':<9} {d.get('id')} {d.get('cmd')} {fields}".rstrip()
    if leaf == "ack":
        verdict = "applied" if d.get("ok") else "REFUSED"
        reason = f": {d['reason']}" if d.get("reason") else ""
        return f"{who:<12} {'ack':<9} {d.get('id')} {verdict}{reason}"
    if leaf == "challenge":
        return (f"{who:<12} {'challenge':<9} table {d.get('table')} {d.get('verdict')} "
                f"({d.get('words')} word(s), lexicon {d.get('lexicon')} {str(d.get('lexicon_checksum'))[:12]})")
    if leaf == "detail":
        words = ", ".join(f"{w.get('word')} {'ok' if w.get('valid') else 'NOT'}" for w in d.get("words", []))
        return f"{who:<12} {'detail':<9} table {d.get('table')}: {words}"
    return f"{who:<12} {leaf:<9} {text[:100]}"


class Dedup:
    """Drops an event or result already seen: the key is (device, game, seq)."""

    def __init__(self, keep: int = 100_000) -> None:
        self.seen: dict[tuple, None] = {}
        self.keep = keep

    def fresh(self, topic: str, payload: bytes) -> bool:
        parsed = topics.parse(topic)
        if parsed is None or parsed[3] != "event":
            return True
        try:
            d = json.loads(payload)
            key = (parsed[1], parsed[2], d["game"], d["seq"])
        except (ValueError, KeyError, TypeError):
            return True
        if key in self.seen:
            return False
        self.seen[key] = None
        if len(self.seen) > self.keep:
            self.seen.pop(next(iter(self.seen)))
        return True


def run(credentials, url, *, raw: bool = False, count: int | None = None, seconds: float | None = None,
        out: TextIO = sys.stdout, ready: Callable[[], None] | None = None) -> int:
    import paho.mqtt.client as mqtt

    from rackside.hall.net.config import parse_url

    endpoint = parse_url(url)
    if endpoint is None:
        from rackside.hall.net.mdns import find_broker

        endpoint = find_broker(hall=credentials.hall)
        if endpoint is None:
            print("rackside hall tail: no broker for this hall found by mDNS; give --url mqtt://HOST:PORT", file=sys.stderr)
            return 1
    done = threading.Event()
    state = {"n": 0, "refused": None}
    dedup = Dedup()
    lock = threading.Lock()

    def on_connect(client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            state["refused"] = str(reason_code)
            done.set()
            return
        client.subscribe(f"{topics.hall_root(credentials.hall)}/#", qos=1)

    def on_subscribe(client, userdata, mid, rcs, properties):
        if ready:
            ready()

    def on_message(client, userdata, msg):
        if not dedup.fresh(msg.topic, msg.payload):
            return
        if "/enrol/" in msg.topic:  # hellos carry each device's secret: never printed (rackside hall devices lists them)
            return
        line = f"{msg.topic} {msg.payload.decode('utf-8', 'replace')}" if raw else describe(msg.topic, msg.payload)
        if line is None:
            return
        with lock:
            stamp = time.strftime("%H:%M:%S")
            print(f"{stamp} {line}", file=out, flush=True)
            state["n"] += 1
            if count is not None and state["n"] >= count:
                done.set()

    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="", protocol=mqtt.MQTTv5)
    c.username_pw_set(credentials.user, credentials.password)
    if endpoint.tls or credentials.tls_ca:
        c.tls_set(ca_certs=credentials.tls_ca)
    c.on_connect, c.on_subscribe, c.on_message = on_connect, on_subscribe, on_message
    try:
        c.connect(endpoint.host, endpoint.port)
    except OSError as e:
        print(f"rackside hall tail: cannot reach {endpoint.url}: {e}", file=sys.stderr)
        return 1
    c.loop_start()
    try:
        done.wait(seconds)
    except KeyboardInterrupt:
        pass
    finally:
        c.disconnect()
        c.loop_stop()
    if state["refused"]:
        print(f"rackside hall tail: login refused: {state['refused']}", file=sys.stderr)
        return 1
    return 0


def status_line(payload: bytes) -> str:
    """A status: the word, and with the health (hall.wire.health) its version and what is known."""
    text = payload.decode("utf-8", "replace").strip()
    try:
        d = json.loads(text) if text.startswith("{") else None
    except ValueError:
        d = None
    if not isinstance(d, dict):
        return text[:80]
    h = d.get("health") if isinstance(d.get("health"), dict) else {}
    known = " ".join(f"{k}={v}" for k, v in h.items() if v is not None)
    return f"{d.get('status')} (rackside {d.get('version')}) {known}"[:400]
