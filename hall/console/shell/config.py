"""The console's settings: `[console]` in the hall config (a TOML file), checked whole at start.

    [console]
    hall = "open2026"                  # the hall name used in the topics
    event = "open2026-day1"            # optional: the event this console serves, its own folder of results, audit,
                                       #   sessions (default: the current one, `rackside hall event new NAME`)
    url = "mqtt://127.0.0.1:1883"      # the broker (mqtts:// for TLS)
    credentials = "director.toml"      # the director's broker credentials (from `rackside hall provision`)
    password = "scrypt:16384:8:1:..."  # the director's login (`rackside hall console --hash-password`)
    listen = "127.0.0.1:8080"          # where the page is served
    certfile = "tls/server.crt"        # optional, with keyfile: HTTPS with the hall's certificate (docs/fleet.md);
    keyfile = "tls/server.key"         #   without them, plain HTTP is served to this machine only
    ca_file = "tls/ca.crt"             # with an mqtts:// url: the hall's CA
    tsh = ["config.tsh", "a.t", "b.t"] # optional: TSH files to import at start (config.tsh and its .t files, or tourney.js)
    round = 1
    division = "A"                     # optional: the division on screen at start (default: all)
    tourney_js = "www"                 # optional: the folder the live tourney.js is kept in (default: the state directory)
    slips = "record"                   # optional: a slip signed at the clock that agrees is recorded ("record"),
                                       #   or held for the scorekeeper's one click ("hold"); issue 27

    [public]                           # optional: the public hall, read-only, no login (docs/public.md)
    listen = "0.0.0.0:8081"            # optional: its own listener, apart from the director's
    folder = "public"                  # optional: a folder the public view is written to as static files
    delay_s = 0                        # the public sees the hall as it was this long ago (0 to 3600)
    every_s = 2                        # at most one new view in this long (1 to 60)

    [event]                            # optional: the event's rules, sent to every clock and station (hall.wire.eventrules)
    preset = "wespa"                   # the rule set the keys start from (WESPA's: the only published one here)
    game_time = "25:00"                # 5.3.5; also the round's game time at start
    penalty_per_minute = 10            # 5.3.2
    forfeit_overtime = "10:00"         # 5.3.3
    lateness_forfeit_margin = 75       # 2.3.6(a)
    optional_forfeit_below = "15:00"   # 2.3.4
    courtesy_draw_after = "1:00"       # 3.10.6(a)
    challenge_rule = "5-per-word"      # 3.10.15

A bad value names its key and what is allowed (one clear line), and the console does not start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from rackside import tomlfile
from rackside.game.rules_table import ConfigError as RulesError
from rackside.hall.net.config import HallConfigError, parse_url
from rackside.hall.wire.eventrules import EventRules, from_table as event_rules

from .auth import HashError, check_hash_form
from ..tableside.signedslips import RECORD, SLIPS
from ..scoring.tsh import MAX_ROUNDS

MAX_ROUND = MAX_ROUNDS  # a round number: TSH keeps no more rounds than this


KEYS = ("hall", "url", "credentials", "username", "mqtt_password", "password", "listen", "certfile", "keyfile",
        "ca_file", "tsh", "round", "division", "tourney_js", "slips", "event")  # [console]'s keys, as the docstring shows them


PUBLIC_KEYS = ("listen", "folder", "delay_s", "every_s")  # [public]'s keys
PUBLIC_DELAY_MAX_S = 3600  # an hour: Lichess's longest broadcast delay
PUBLIC_EVERY_S = (1, 60)  # the public view's rate bound, in seconds (its default: PublicConfig.every_s)


class ConfigError(ValueError):
    """A console setting or credentials file that cannot be used (the message names the file)."""


@dataclass
class ConsoleConfig:
    hall: str
    url: str
    username: str
    mqtt_password: str
    password_hash: str
    listen_host: str = "127.0.0.1"
    listen_port: int = 8080
    tsh: list[Path] = field(default_factory=list)
    round: int = 1
    division: str = ""  # the division on screen at start; "" shows every division
    ca_file: str | None = None
    base: Path = Path(".")
    state_dir: Path | None = None  # where the console keeps its files (results, sessions); None: `rackside paths`
    certfile: Path | None = None  # with keyfile: the page over HTTPS (uvicorn's TLS)
    keyfile: Path | None = None
    tourney_js_dir: Path | None = None  # the live tourney.js's folder (tshlive.py); None: the state directory
    public: "PublicConfig | None" = None  # [public]: the public hall (publicserve.py); None: not served
    slips: str = RECORD  # what a signed slip that agrees becomes (signedslips.SLIPS)
    event: EventRules = EventRules()  # [event]: the event's rules, WESPA's unless it says otherwise (issue 38)
    event_name: str | None = None  # [console] event (not [event], the rules: issue 38): the event served (eventdir.py); None: the current one

    @property
    def https(self) -> bool:
        return self.certfile is not None


@dataclass
class PublicConfig:
    """[public]: where the public hall is served (its own listener) and written (a folder), how late."""

    listen_host: str | None = None
    listen_port: int | None = None
    folder: Path | None = None
    delay_s: int = 0
    every_s: int = 2


def load_credentials(path: Path) -> tuple[str, str]:
    """A credentials file from `rackside hall provision`: TOML with `user` and `password`."""
    try:
        data = tomlfile.read(path)
    except tomlfile.TomlFileError as e:
        raise ConfigError(f"credentials {path}: cannot read: {e}") from None
    user = data.get("user", data.get("username"))
    if not isinstance(user, str) or not isinstance(data.get("password"), str):
        raise ConfigError(f"credentials {path}: needs 'user' and 'password' strings (the file `rackside hall provision` wrote)")
    return user, data["password"]


def load(path: Path) -> ConsoleConfig:
    try:
        data = tomlfile.read(path)
    except tomlfile.TomlFileError as e:
        raise ConfigError(f"{path}: cannot read: {e}" if e.io else f"{path}: {e}") from None
    c = data.get("console")
    if not isinstance(c, dict):
        raise ConfigError(f"{path}: no [console] section")
    base = Path(path).parent
    unknown = sorted(set(c) - set(KEYS))
    if unknown:  # a misspelt key would otherwise be ignored in silence (as clock.toml refuses them)
        raise ConfigError(f"{path}: [console] has unknown key {unknown[0]!r}: allowed keys are {', '.join(KEYS)}")

    def need(key: str, kind=str):
        v = c.get(key)
        if not isinstance(v, kind) or isinstance(v, bool):
            raise ConfigError(f"{path}: [console] {key} must be a {kind.__name__}, got {v!r}")
        return v

    hall = need("hall")
    url = need("url")
    try:
        if parse_url(url, "[console] url") is None:
            raise HallConfigError('[console] url = "auto": the console needs the broker\'s address, mqtt://HOST[:PORT] or mqtts://HOST[:PORT]')
    except HallConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    pw = need("password")
    try:
        check_hash_form(pw)
    except HashError as e:
        raise ConfigError(f"{path}: [console] {e}") from None
    if "credentials" in c:
        user, mpw = load_credentials(base / need("credentials"))
    else:
        user, mpw = need("username"), need("mqtt_password")
    listen = c.get("listen", "127.0.0.1:8080")
    host, _, port = str(listen).rpartition(":")
    if not isinstance(listen, str) or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ConfigError(f"{path}: [console] listen = {listen!r}: allowed is HOST:PORT with a port from 1 to 65535")
    rnd = c.get("round", 1)
    if isinstance(rnd, bool) or not isinstance(rnd, int) or not 1 <= rnd <= MAX_ROUND:
        raise ConfigError(f"{path}: [console] round = {rnd!r}: allowed are whole numbers from 1 to {MAX_ROUND}")
    if not isinstance(c.get("division", ""), str):
        raise ConfigError(f"{path}: [console] division = {c['division']!r}: allowed is a division's name (a string; \"\" for all)")
    ca_file = c.get("ca_file")
    if ca_file is not None and (not isinstance(ca_file, str) or not (base / ca_file).is_file()):
        raise ConfigError(f"{path}: [console] ca_file = {ca_file!r}: no such file (the hall's tls/ca.crt from `rackside hall provision`)")
    tls_files = [c.get(k) for k in ("certfile", "keyfile")]
    if any(x is not None for x in tls_files):
        if not all(isinstance(x, str) and x for x in tls_files):
            raise ConfigError(f"{path}: [console] certfile and keyfile go together: both file paths, or neither (plain HTTP, this machine only)")
        for key, x in zip(("certfile", "keyfile"), tls_files):
            if not (base / x).is_file():
                raise ConfigError(f"{path}: [console] {key} = {x!r}: no such file (`rackside hall provision` writes tls/server.crt and tls/server.key)")
        _check_tls_pair(path, base / tls_files[0], base / tls_files[1])
    tsh = c.get("tsh", [])
    if not isinstance(tsh, list) or not all(isinstance(x, str) for x in tsh):
        raise ConfigError(f"{path}: [console] tsh must be a list of file names")
    for x in tsh:  # read at start (serve.make_console): a missing one is this line, not a traceback
        if not (base / x).is_file():
            raise ConfigError(f"{path}: [console] tsh: {x!r}: no such file (allowed are TSH files: config.tsh, .t files, tourney.js)")
    tourney_js = c.get("tourney_js")
    if tourney_js is not None:
        folder = base / tourney_js if isinstance(tourney_js, str) and tourney_js.strip() else None
        if folder is None or not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            raise ConfigError(f"{path}: [console] tourney_js must be the path of a folder the console can write "
                              f"(the live tourney.js is kept there), got {tourney_js!r}")
    public = _public(path, data.get("public"), base, (host.strip("[]"), int(port)))
    try:
        event = event_rules(data.get("event"))
    except RulesError as e:
        raise ConfigError(f"{path}: {e}") from None
    slips = c.get("slips", RECORD)
    if slips not in SLIPS:
        raise ConfigError(f"{path}: [console] slips = {slips!r}: allowed are {' or '.join(repr(x) for x in SLIPS)} "
                          "(a slip signed at the clock that agrees is recorded, or held for the scorekeeper's click)")
    event_name = c.get("event")  # [console] event: the event served; `event` is [event], its rules
    if event_name is not None:
        from .eventdir import EventError, check_name

        try:
            check_name(event_name)
        except EventError as e:
            raise ConfigError(f"{path}: [console] {e}") from None
    return ConsoleConfig(
        public=public, event_name=event_name,
        hall=hall, url=url, username=user, mqtt_password=mpw, password_hash=pw,
        listen_host=host.strip("[]"), listen_port=int(port), tsh=[base / x for x in tsh],
        round=rnd, division=c.get("division", ""),
        ca_file=str(base / ca_file) if ca_file else None, base=base,
        certfile=base / tls_files[0] if tls_files[0] else None, keyfile=base / tls_files[1] if tls_files[1] else None,
        tourney_js_dir=base / tourney_js if tourney_js is not None else None, slips=slips, event=event,
    )


def _listen(path: Path, section: str, listen) -> tuple[str, int]:
    host, _, port = str(listen).rpartition(":")
    if not isinstance(listen, str) or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ConfigError(f"{path}: [{section}] listen = {listen!r}: allowed is HOST:PORT with a port from 1 to 65535")
    return host.strip("[]"), int(port)


def _public(path: Path, p, base: Path, console_listen: tuple[str, int]) -> PublicConfig | None:
    """[public], checked whole: each bad key is one line naming it and what is allowed."""
    if p is None:
        return None
    if not isinstance(p, dict):
        raise ConfigError(f"{path}: [public] must be a table (a [public] section)")
    unknown = sorted(set(p) - set(PUBLIC_KEYS))
    if unknown:
        raise ConfigError(f"{path}: [public] has unknown key {unknown[0]!r}: allowed keys are {', '.join(PUBLIC_KEYS)}")
    out = PublicConfig()
    if "listen" in p:
        out.listen_host, out.listen_port = _listen(path, "public", p["listen"])
        if out.listen_port == console_listen[1]:
            raise ConfigError(f"{path}: [public] listen = {p['listen']!r}: allowed is a port other than the director's "
                              f"([console] listen's {console_listen[1]}): the public hall has its own listener")
    if "folder" in p:
        folder = p["folder"]
        where = base / folder if isinstance(folder, str) and folder.strip() else None
        if where is None or not where.is_dir() or not os.access(where, os.W_OK | os.X_OK):
            raise ConfigError(f"{path}: [public] folder must be the path of a folder the console can write "
                              f"(the public view is written there as static files), got {folder!r}")
        out.folder = where
    delay = p.get("delay_s", 0)
    if isinstance(delay, bool) or not isinstance(delay, int) or not 0 <= delay <= PUBLIC_DELAY_MAX_S:
        raise ConfigError(f"{path}: [public] delay_s = {delay!r}: allowed are whole seconds from 0 to {PUBLIC_DELAY_MAX_S}")
    out.delay_s = delay
    every = p.get("every_s", out.every_s)
    low, high = PUBLIC_EVERY_S
    if isinstance(every, bool) or not isinstance(every, int) or not low <= every <= high:
        raise ConfigError(f"{path}: [public] every_s = {every!r}: allowed are whole seconds from {low} to {high}")
    out.every_s = every
    if out.listen_port is None and out.folder is None:
        raise ConfigError(f"{path}: [public] needs listen (its own listener), folder (static files) or both")
    return out


def _check_tls_pair(path: Path, certfile: Path, keyfile: Path) -> None:
    """The certificate and key load as the page's TLS will load them (serve.tls_context)."""
    import ssl

    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(str(certfile), str(keyfile))
    except (ssl.SSLError, OSError) as e:
        raise ConfigError(f"{path}: [console] certfile {certfile.name!r} and keyfile {keyfile.name!r}: allowed are a PEM certificate "
                          f"and its own PEM key (`rackside hall provision` writes tls/server.crt and tls/server.key): "
                          f"{getattr(e, 'reason', None) or e}") from None
