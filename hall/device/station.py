"""The challenge station on the hall: `rackside hall station [--config station.toml]`.

A process of its own beside the station (`rackside kiosk`), so the station itself never touches the
network: it follows the station's challenge log (JSON lines, fsync'd before a verdict is shown) and
publishes, through the same on-disk outbox as a clock (hall.device.outbox, QoS 1, deleted when acked):

- `.../station/<id>/status`: retained "offline" (the Last Will), or while online its health
  (hall.device.health, on a thread of its own: "hall-health");
- `.../station/<id>/challenge`: each challenge: id, time, table, kind, lexicon name and checksum,
  how many words, the verdict for the play as a whole (3.10.7(b));
- `.../station/<id>/detail`: the same challenge with the words and per-word results, on a topic
  only the director may read (the ACL), for the director's log view.

It reads one message: the event's rules, retained on `rackside/v1/<hall>/rules` by the console
(hall.wire.eventrules, issue 38). Their challenge rule (3.10.15) is written into the station's settings
(judge.settings' station.json, the file `rackside lexicon use` writes too), which the station picks up
at its idle screen (kiosk.effects.refresh_lexicon): the event's rule, set once at the console, is every
station's, at each connection and each change; a rule the station's director chooses since stands
until the hall's rules come again. A message that is not the rules is refused, logged, and changes nothing.

Where it has got to in the log (a byte offset) is kept in the outbox with the messages, in one
transaction, so a restart neither skips nor repeats a challenge; a damaged line is skipped and
logged with its line number.
"""

from __future__ import annotations

import json
import logging
import queue
import sqlite3
import threading
from pathlib import Path

from rackside import running_version
from rackside.hall.device.health import HealthReader, HealthWatch
from rackside.game.rules_table import ConfigError as RulesError
from rackside.hall.wire import eventrules, topics
from rackside.hall.net.config import HallConfig
from rackside.hall.net.link import Link
from rackside.hall.device.outbox import Outbox
from rackside.hall.device.publisher import OutboxPublisher
from rackside.hall.wire.payloads import challenge_payloads
from rackside.judge.challenge_log import ChallengeRecord
from rackside.outage import Outage

log = logging.getLogger(__name__)

POLL_S = 0.25
LOG_KEY = "challenge-log"  # the outbox's progress row: its `seq` holds the byte offset read up to


class StationPublisher:
    def __init__(self, cfg: HallConfig, log_path: Path, outbox_path: Path, *, poll_s: float = POLL_S,
                 faults: tuple[str, ...] = (), settings_path: Path | None = None) -> None:
        self.cfg = cfg
        self.log_path = Path(log_path)
        self.outbox_path = Path(outbox_path)
        self.poll_s = poll_s
        sid = cfg.ident
        self.topic = {leaf: topics.station(cfg.hall, sid, leaf) for leaf in topics.STATION_TOPICS}
        self.publisher = OutboxPublisher()  # the same delivery as a clock's (owned by this publisher's thread)
        # the event's rules (issue 38): paho's thread posts them, this publisher's thread applies them
        self.settings_path = settings_path  # the station's settings (None: judge.settings' default, as the kiosk's)
        self.rules_in: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self.challenge_rule: str | None = None  # the hall's last one applied
        self.pending_rule: str | None = None  # the hall's last one, not yet written
        self.rules_fault = Outage(log, "the hall's challenge rule")
        self.link = Link(cfg, self.topic["status"], subscribe=(topics.rules(cfg.hall),),
                         on_message=lambda topic, payload: self.rules_in.put(payload),
                         on_ack=self.publisher.on_ack, on_connected=self.publisher.on_connected)
        self.fault = Outage(log, f"challenge log {self.log_path}")
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="hall-station", daemon=True)
        self.write_errors = 0  # outbox writes that failed (an int the health thread reads)
        reader = HealthReader(self.outbox_path.parent, lambda: self.write_errors)
        self.health = HealthWatch(reader, self.link.set_status, running_version(), faults=faults)

    @property
    def published(self) -> int:
        return self.publisher.published

    def start(self) -> "StationPublisher":
        self.thread.start()
        self.health.start()
        return self

    def close(self, timeout: float = 3.0) -> None:
        self.stop_event.set()
        self.thread.join(timeout)
        self.health.close()
        self.link.close()

    def _run(self) -> None:
        outbox = Outbox(self.outbox_path)
        endpoint = self.cfg.endpoint
        if endpoint is None:
            from rackside.hall.net.mdns import find_broker

            while endpoint is None and not self.stop_event.is_set():
                endpoint = find_broker(self.cfg)
        if endpoint is None:
            return
        self.publisher.open(outbox, self.link)
        self.link.start(endpoint)
        while not self.stop_event.is_set():
            try:
                self._follow(outbox)
                self.fault.recovered()
            except (OSError, sqlite3.Error) as e:
                if isinstance(e, sqlite3.Error):
                    self.write_errors += 1
                self.fault.failed(e)
            self._take_rules()
            self.publisher.deliver()
            self.stop_event.wait(0.02 if self.publisher.busy else self.poll_s)
        self.publisher.drain()  # a clean stop waits briefly for the last acks: no resend
        outbox.close()

    def _take_rules(self) -> None:
        """The event's rules that came: the last good one's challenge rule into the station's settings
        (one that cannot be written yet is tried again at the next turn)."""
        from rackside.judge.penalties import ChallengeRule
        from rackside.judge.settings import SettingsError, load_settings, save_settings

        while True:
            try:
                payload = self.rules_in.get_nowait()
            except queue.Empty:
                break
            if not payload:  # the retained message cleared: nothing to apply
                continue
            try:
                self.pending_rule = eventrules.parse(payload).challenge_rule
            except RulesError as e:
                log.warning("the hall's rules refused: %s", e)
        rule = self.pending_rule
        if rule is None:
            return
        try:
            settings = load_settings(self.settings_path)
            if settings.challenge_rule.value != rule:
                settings.challenge_rule = ChallengeRule(rule)
                save_settings(settings, self.settings_path)
                log.info("the event's challenge rule is now this station's: %s (3.10.15)", rule)
            self.challenge_rule, self.pending_rule = rule, None
            self.rules_fault.recovered()
        except (OSError, SettingsError) as e:
            self.rules_fault.failed(e)

    def _follow(self, outbox: Outbox) -> None:
        """Put every complete new line of the log into the outbox, with the offset, in one go."""
        offset, _ = outbox.progress(LOG_KEY)
        try:
            size = self.log_path.stat().st_size
        except FileNotFoundError:
            return
        if size < offset:  # the log was replaced (a new tournament): start from its beginning
            log.warning("challenge log %s is shorter than before: reading it from the start", self.log_path)
            offset = 0
        if size == offset:
            return
        with open(self.log_path, "rb") as f:
            f.seek(offset)
            data = f.read(size - offset)
        end = data.rfind(b"\n") + 1  # a torn last line waits until it is whole
        if end == 0:
            return
        rows = []
        for number, line in enumerate(data[:end].splitlines(), start=1):
            if not line.strip():
                continue
            try:
                # The log's own reader decides what a challenge record is; the payloads are built
                # from the line's fields as written.
                ChallengeRecord.from_json(line.decode("utf-8"))
                record = json.loads(line)
            except ValueError as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors too
                log.warning("%s: a damaged line after byte %d skipped: %s", self.log_path, offset, e)
                continue
            summary, detail = challenge_payloads(record, self.cfg.ident)
            rows.append((self.topic["challenge"], summary, 1, 0))
            rows.append((self.topic["detail"], detail, 1, 0))
        outbox.put(rows, {LOG_KEY: (offset + end, False)})
        # progress only grows (max), so a replaced log's new offset is written directly
        if offset + end < outbox.progress(LOG_KEY)[0]:
            with outbox.db:
                outbox.db.execute("UPDATE progress SET seq = ? WHERE game = ?", (offset + end, LOG_KEY))


def run(args) -> int:
    """`rackside hall station`: publish this station's challenges until stopped."""
    import sys
    from rackside.hall.net.config import JOIN, HallConfigError, from_table
    from rackside.kiosk.station_config import ConfigError, default_config_path, load_config_and_document

    path = args.config or default_config_path()
    try:
        station, data = load_config_and_document(path)
        if isinstance(data.get("hall"), dict) and JOIN in data["hall"]:
            return run_joined(args, station, data["hall"], Path(path))
        cfg = from_table(data.get("hall"), "station", url_override=args.url, base=Path(path).parent)
    except (ConfigError, HallConfigError) as e:
        print(f"rackside hall station: {path}: {e}", file=sys.stderr)
        return 2
    if cfg is None:
        print(f"rackside hall station: {path} has no [hall] section: this station is not on a hall", file=sys.stderr)
        return 2
    from rackside import paths

    log_path = station.log_path or paths.challenge_log()
    outbox = cfg.outbox or paths.state_dir() / "hall-station-outbox.sqlite"
    pub = StationPublisher(cfg, log_path, outbox, faults=tuple(getattr(args, "fault", None) or ())).start()
    _serve(pub.close)
    return 0


def run_joined(args, station, table: dict, path: Path) -> int:
    """A station joining with the hall's join file (`[hall] join = ...`): it says hello, prints its
    code, and publishes as the station id the director gives it (hall.device.enrol, docs/fleet.md). The
    code, then the id, also go to the station's screen: the kiosk's idle screen reads them from a
    small file in the state folder (kiosk.hall_status), never from the network."""
    import sys

    from rackside import paths, running_version
    from rackside.hall.device import joinfile as join
    from rackside.hall.net.config import JOIN, HallConfigError, check_join_keys
    from rackside.hall.wire.devicekey import DeviceKeyError
    from rackside.hall.wire.join import code_text
    from rackside.hall.device.enrol import Enrolment
    from rackside.kiosk import hall_status

    where = table.get(JOIN)
    try:
        check_join_keys(table)
        if not isinstance(table.get("outbox", ""), str):
            raise HallConfigError(f"hall.outbox = {table['outbox']!r}: allowed is a file path")
        joinfile = join.load(join.resolve(where, path.parent))
    except HallConfigError as e:
        print(f"rackside hall station: {path}: {e}", file=sys.stderr)
        return 2
    log_path = station.log_path or paths.challenge_log()
    outbox = Path(table["outbox"]) if table.get("outbox") else paths.state_dir() / "hall-station-outbox.sqlite"
    current: list[StationPublisher] = []  # the publisher of the station id it now has (the enrolment's thread swaps it)
    status = hall_status.default_path()

    def show(station_id: str | None) -> None:
        try:
            hall_status.write(status, enrolment.code, station_id)
        except OSError as e:  # the screen then shows nothing about the hall; the log still has the code
            log.warning("%s: cannot write the hall status for the station's screen: %s", status, e)

    def changed(user, cfg) -> None:
        while current:
            current.pop().close()
        if cfg is None:
            show(None)
            print(f"rackside hall station: code {code_text(enrolment.code)}: waiting for a station id", flush=True)
            return
        show(cfg.ident)
        print(f"rackside hall station: this is station {cfg.ident}", flush=True)
        current.append(StationPublisher(cfg, log_path, outbox, faults=tuple(getattr(args, "fault", None) or ())).start())

    try:
        enrolment = Enrolment(joinfile, paths.state_dir(), "station", on_change=changed, device=args.device_id, version=running_version())
    except (HallConfigError, ValueError, DeviceKeyError) as e:
        print(f"rackside hall station: {e}", file=sys.stderr)
        return 2
    show(None)
    print(f"rackside hall station: device {enrolment.device}, code {code_text(enrolment.code)}: waiting for a station id "
          "(the director assigns it on the console's Devices page)", flush=True)
    enrolment.start()

    def close() -> None:
        enrolment.close()
        while current:
            current.pop().close()
        hall_status.remove(status)  # stopped: the screen no longer claims a place on the hall

    _serve(close)
    return 0


def _serve(close) -> None:
    """Until SIGTERM (systemd) or Ctrl-C, then `close()`."""
    import signal

    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(1):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        close()
