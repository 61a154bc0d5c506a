"""The challenge station's configuration file (TOML) and the director's PIN hash.

A bad file is refused whole with a message that names the key and the allowed values; nothing
starts half-configured.
"""

from __future__ import annotations

from pathlib import Path

from rackside.values import Record

MODES = ("self", "runner")
BAUDRATES = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200)
# Patterns as text, matched with `re` (whose own cache compiles each once, when first used): the
# station's start-up compiled 33 patterns at import, 19 ms before the first frame (issue 11).
_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$"  # as judge.challenge_log accepts
_SIZE_PATTERN = r"^(\d{3,5})x(\d{3,5})$"
PIN_PATTERN = r"^\d{4,8}$"


def _match(pattern: str, text: str):
    import re

    return re.match(pattern, text)


def valid_pin(pin: str) -> bool:
    return bool(_match(PIN_PATTERN, pin))

# scrypt parameters for new PIN hashes: ~16 MiB and well under a second on a Pi 4, which makes
# guessing a 4-8 digit PIN from a stolen config file slow; the lockout guards the screen itself.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1


class ConfigError(ValueError):
    """A bad station config: the message names the file, the key and what is allowed."""


class StationConfig(Record):
    """A validated station config. A Record, not a dataclass: `dataclasses` (and the `inspect` it
    loads) cost ~10 ms before the station's first frame."""

    __slots__ = ("name", "mode", "table", "fullscreen", "size", "width_mm", "height_mm", "pin_hash", "printer_url",
                 "printer_baudrate", "printer_write_timeout", "printer_status_check", "log_path", "export_dir")
    _defaults = {
        "name": "station-1", "mode": "self", "table": None, "fullscreen": True, "size": (800, 480),
        "width_mm": 155.0, "height_mm": 86.0, "pin_hash": "", "printer_url": None, "printer_baudrate": 19200,
        "printer_write_timeout": 0.5, "printer_status_check": True, "log_path": None, "export_dir": None,
    }
    name: str
    mode: str
    table: str | None
    fullscreen: bool
    size: tuple[int, int]
    width_mm: float
    height_mm: float
    pin_hash: str
    printer_url: str | None
    printer_baudrate: int
    printer_write_timeout: float
    printer_status_check: bool
    log_path: Path | None
    export_dir: Path | None


def default_config_path() -> Path:
    from rackside import paths

    return paths.station_config()


def template_path() -> Path:
    """The packaged template, by its real path: in a source checkout kiosk/default-station.toml, not
    the development venv's link .venv/rackside-import/rackside/kiosk/... (issue 35)."""
    return Path(__file__).resolve().with_name("default-station.toml")


def parse_size(text: str, key: str = "display.size") -> tuple[int, int]:
    m = _match(_SIZE_PATTERN, text.strip()) if isinstance(text, str) else None
    if not m:
        raise ConfigError(f"{key} = {text!r}: expected WIDTHxHEIGHT in pixels, e.g. \"800x480\" or \"1920x1080\"")
    w, h = int(m.group(1)), int(m.group(2))
    if not (320 <= w <= 7680 and 240 <= h <= 4320):
        raise ConfigError(f"{key} = {text!r}: width must be 320-7680 and height 240-4320 pixels")
    return w, h


def load_config(path: Path) -> StationConfig:
    """Read and validate a station config; raise ConfigError naming the bad key."""
    return load_config_and_document(path)[0]


def load_config_and_document(path: Path) -> tuple[StationConfig, dict]:
    """The station config and the TOML document it came from (whose [hall] section
    `rackside hall station` reads), from one reading of the file."""
    from rackside import tomlfile

    try:
        data = tomlfile.read(path)
    except tomlfile.TomlFileError as exc:  # one line, never a traceback
        if exc.missing:
            raise ConfigError(
                f"{path}: no station config. Copy {template_path()} there and set director.pin_hash "
                "(make one with: rackside kiosk --hash-pin)"
            ) from None
        raise ConfigError(f"{path}: cannot read the config: {exc}") from None
    try:
        return parse_config(data), data
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


_KEYS = {
    "station": {"name", "mode", "table"},
    "display": {"fullscreen", "size", "width_mm", "height_mm"},
    "director": {"pin_hash"},
    "printer": {"url", "baudrate", "write_timeout", "status_check"},
    "log": {"path", "export_dir"},
    # read by `rackside hall station`: rackside.hall.net.config says its keys (`_allowed`, imported
    # only for a config with [hall]: the kiosk's start-up does without it)
    "hall": None,
}


def _allowed(section: str) -> set | frozenset:
    if section == "hall":
        from rackside.hall.net.config import device_keys

        return device_keys("station")
    return _KEYS[section]


def parse_config(data: dict) -> StationConfig:
    for section, value in data.items():
        if section not in _KEYS:
            raise ConfigError(f"unknown section [{section}] (allowed: {', '.join(sorted(_KEYS))})")
        if not isinstance(value, dict):
            raise ConfigError(f"{section} must be a [{section}] table")
        for key in value:
            if key not in _allowed(section):
                raise ConfigError(f"unknown key {section}.{key} (allowed: {', '.join(sorted(_allowed(section)))})")

    def get(section: str, key: str, kind, default):
        value = data.get(section, {}).get(key, default)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigError(f"{section}.{key} = {value!r}: must be {kind.__name__}")
        return value

    name = get("station", "name", str, "station-1")
    if not _match(_NAME_PATTERN, name):
        raise ConfigError(f"station.name = {name!r}: allowed are 1-32 letters, digits, '.', '-' or '_', starting with a letter or digit")
    mode = get("station", "mode", str, "self")
    if mode not in MODES:
        raise ConfigError(f"station.mode = {mode!r}: allowed values are {', '.join(map(repr, MODES))}")
    table = get("station", "table", str, "").strip() or None
    if table is not None and len(table) > 16:
        raise ConfigError(f"station.table = {table!r}: at most 16 characters")

    fullscreen = get("display", "fullscreen", bool, True)
    size = parse_size(get("display", "size", str, "800x480"))
    width_mm = get("display", "width_mm", float, 155.0)
    height_mm = get("display", "height_mm", float, 86.0)
    for key, mm in (("width_mm", width_mm), ("height_mm", height_mm)):
        if not 40.0 <= mm <= 2000.0:
            raise ConfigError(f"display.{key} = {mm!r}: must be the visible picture's size in mm, 40-2000")

    pin_hash = get("director", "pin_hash", str, "").strip()
    if pin_hash:
        try:
            _split_hash(pin_hash)
        except ValueError as exc:
            raise ConfigError(f"director.pin_hash: {exc} (make one with: rackside kiosk --hash-pin)") from None

    url = get("printer", "url", str, "").strip() or None
    if url and "://" in url:
        scheme = url.split("://", 1)[0].lower()
        known = printer_url_schemes()
        if scheme not in known:
            raise ConfigError(f"printer.url = {url!r}: pyserial does not know the scheme {scheme!r}; allowed: a device "
                              f"path such as /dev/ttyUSB0, or {', '.join(s + '://' for s in known)}")
    baud = get("printer", "baudrate", int, 19200)
    if baud not in BAUDRATES:
        raise ConfigError(f"printer.baudrate = {baud}: allowed values are {', '.join(map(str, BAUDRATES))}")
    write_timeout = get("printer", "write_timeout", float, 0.5)
    if not 0.05 <= write_timeout <= 2.0:
        raise ConfigError(f"printer.write_timeout = {write_timeout}: allowed 0.05-2.0 seconds")

    status_check = get("printer", "status_check", bool, True)

    log_path = get("log", "path", str, "").strip()
    export_dir = get("log", "export_dir", str, "").strip()
    return StationConfig(
        name=name,
        mode=mode,
        table=table,
        fullscreen=fullscreen,
        size=size,
        width_mm=width_mm,
        height_mm=height_mm,
        pin_hash=pin_hash,
        printer_url=url,
        printer_baudrate=baud,
        printer_write_timeout=write_timeout,
        printer_status_check=status_check,
        log_path=Path(log_path).expanduser() if log_path else None,
        export_dir=Path(export_dir).expanduser() if export_dir else None,
    )


def printer_url_schemes() -> list[str]:
    """The URL schemes pyserial opens (`serial_for_url` looks for serial.urlhandler.protocol_<scheme>),
    asked of pyserial itself so that a new pyserial's schemes are accepted too."""
    import pkgutil

    import serial.urlhandler

    return sorted(m.name[len("protocol_"):] for m in pkgutil.iter_modules(serial.urlhandler.__path__)
                  if m.name.startswith("protocol_"))


def pin_hash_problem(stored: str) -> str | None:
    """Why a configured PIN hash is weaker than new hashes (scrypt N=2^14, r=8), or None.
    `--check-config` refuses such a hash: a stolen config would let a PIN be guessed quickly."""
    if not stored:
        return None
    n, r, _p, _salt, _digest = _split_hash(stored)
    if n < SCRYPT_N or r < SCRYPT_R:
        return (f"director.pin_hash: scrypt N={n}, r={r} is weaker than N={SCRYPT_N}, r={SCRYPT_R}; "
                "make a new one with: rackside kiosk --hash-pin")
    return None


# --- PIN hashing -------------------------------------------------------------------------------
# The console's form, scrypt:N:R:P:SALT:HASH (rackside.scrypthash, one form for every secret);
# the older scrypt$N$r$p$salthex$hashhex is still read. hashlib is imported when a PIN is hashed or
# checked, not at start-up (OpenSSL's loading is a measurable part of the station's cold start).

def hash_pin(pin: str, *, n: int = SCRYPT_N, r: int = SCRYPT_R, p: int = SCRYPT_P) -> str:
    import secrets

    from rackside import scrypthash

    if not valid_pin(pin):
        raise ValueError("the PIN must be 4 to 8 digits")
    return scrypthash.make(pin, secrets.token_bytes(16), n=n, r=r, p=p)


def _split_hash(stored: str) -> tuple[int, int, int, bytes, bytes]:
    from rackside import scrypthash

    n, r, p, salt, digest = scrypthash.parse(stored)
    if n < 2 or n & (n - 1) or n > 2**20 or not 1 <= r <= 32 or not 1 <= p <= 16 or len(salt) < 8 or len(digest) != 32:
        raise ValueError("scrypt parameters out of range")
    return n, r, p, salt, digest


def verify_pin(pin: str, stored: str) -> bool:
    """True when `pin` matches the stored hash (constant-time comparison)."""
    from rackside import scrypthash

    if not stored or not valid_pin(pin):
        return False
    _split_hash(stored)  # the bounds (a config is checked with them at load; this is the same check)
    return scrypthash.verify(pin, stored)
