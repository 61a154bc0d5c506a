"""The hall's join file on a device: finding it (the config folder's, else the boot partition's),
reading it whole, and the device's own id. Its format, and the messages a device sends with it, are
hall.wire.join's; its url is checked with the connection's parser (hall.net.config)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from rackside import tomlfile
from rackside.hall.net.config import HallConfigError, parse_url
from rackside.hall.wire import topics
from rackside.hall.wire.join import DEVICE_ID, FILE_NAME, MAX_CA_CHARS, SECRET

BOOT_PATHS = (Path("/boot/firmware/rackside-join.toml"), Path("/boot/rackside-join.toml"))


@dataclass(frozen=True)
class JoinFile:
    path: Path
    hall: str
    url: str
    secret: str
    ca: str | None
    update_key: str | None = None  # the public key bundles are signed with (rackside.signing)

    @property
    def tls(self) -> bool:
        return self.ca is not None


def load(path: Path | str) -> JoinFile:
    path = Path(path)
    try:
        data = tomlfile.read(path)
    except tomlfile.TomlFileError as e:
        raise HallConfigError(f"join file {path}: {e}") from None
    unknown = sorted(set(data) - {"hall", "url", "secret", "ca", "update_key"})
    if unknown:
        raise HallConfigError(f"join file {path}: unknown key {unknown[0]!r}: allowed are hall, url, secret, ca, update_key")
    try:
        hall = topics.check_name("hall", data.get("hall"))
    except ValueError as e:
        raise HallConfigError(f"join file {path}: {e}") from None
    url = data.get("url", "auto")
    if not isinstance(url, str):
        raise HallConfigError(f"join file {path}: url = {url!r}: allowed are \"auto\" and mqtts://HOST[:PORT]")
    parse_url(url, f"join file {path}: url")
    secret = data.get("secret")
    if not isinstance(secret, str) or not SECRET.match(secret):
        raise HallConfigError(f"join file {path}: secret is missing or malformed: allowed is the file `rackside hall provision` wrote")
    ca = data.get("ca")
    if ca is not None and (not isinstance(ca, str) or len(ca) > MAX_CA_CHARS or "BEGIN CERTIFICATE" not in ca):
        raise HallConfigError(f"join file {path}: ca: allowed is one PEM certificate (at most {MAX_CA_CHARS} characters)")
    update_key = data.get("update_key")
    if update_key is not None:
        from rackside.signing import check_public_key

        try:
            update_key = check_public_key(update_key)
        except ValueError as e:
            raise HallConfigError(f"join file {path}: update_key: {e}") from None
    return JoinFile(path, hall, url, secret, ca, update_key)


def find(config_dir: Path, boot_paths: tuple[Path, ...] = BOOT_PATHS) -> Path | None:
    """The join file a device uses: the config folder's, else the boot partition's."""
    for p in (Path(config_dir) / FILE_NAME, *boot_paths):
        if p.is_file():
            return p
    return None


def resolve(value: object, config_dir: Path, boot_paths: tuple[Path, ...] = BOOT_PATHS) -> Path:
    """`[hall] join`'s value as a path: "auto" is the config folder's join.toml, else the boot
    partition's (`find`); a relative path is the config folder's."""
    if value == "auto":
        found = find(config_dir, boot_paths)
        if found is None:
            raise HallConfigError(f'hall.join = "auto": no join file in {Path(config_dir) / FILE_NAME} or '
                                  f"{' or '.join(str(p) for p in boot_paths)}")
        return found
    if not isinstance(value, str) or not value:
        raise HallConfigError(f'hall.join = {value!r}: allowed are "auto" and the path of the hall\'s join file')
    return Path(config_dir) / value


def device_id(root: Path = Path("/")) -> str:
    """The Pi's serial number (device tree, else /proc/cpuinfo), else the machine id: stable across
    re-installs of the same board (the serial) or of the same system (the machine id)."""
    candidates = []
    try:
        candidates.append((root / "proc/device-tree/serial-number").read_bytes().rstrip(b"\0").decode().strip())
    except (OSError, UnicodeDecodeError):
        pass
    try:
        m = re.search(r"^Serial\s*:\s*([0-9a-fA-F]+)\s*$", (root / "proc/cpuinfo").read_text(), re.M)
        if m:
            candidates.append(m.group(1))
    except OSError:
        pass
    try:
        candidates.append((root / "etc/machine-id").read_text().strip())
    except OSError:
        pass
    for c in candidates:
        c = c.lower().lstrip("0") or c
        if DEVICE_ID.match(c) and c.strip("0"):
            return c
    raise HallConfigError("no device id: neither a Raspberry Pi serial number nor /etc/machine-id")
