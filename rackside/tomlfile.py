"""Read a TOML file, or say in one line why it cannot be used. Imports nothing of Rackside.

Every configuration and credentials file goes through here (the clock's, the station's, the pin
map, the hall's credentials, the console's), so each refuses the same things the same way: a
missing file, a folder, no permission, any other I/O error, bytes that are not UTF-8, and text that
is not TOML. The caller puts its own words around the reason (which key named the file, how to
make one); a bad file is one line under systemd's restart loop, never a traceback.
"""

from __future__ import annotations


class TomlFileError(ValueError):
    """Why a TOML file cannot be used, as a phrase to follow its path ("is a directory, not a
    file"). `io` is True when the file could not be read at all (its content is not the problem),
    `missing` when there is no such file, which some callers explain further."""

    def __init__(self, reason: str, *, io: bool = False, missing: bool = False) -> None:
        super().__init__(reason)
        self.io = io or missing
        self.missing = missing


def read(path) -> dict:
    """The TOML document in the file at `path`, or TomlFileError saying why not."""
    import tomllib  # ~5 ms: only the commands that read a config pay for it

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise TomlFileError("no such file", missing=True) from None
    except IsADirectoryError:
        raise TomlFileError("is a directory, not a file", io=True) from None
    except PermissionError as e:
        raise TomlFileError(f"no permission to read it ({e.strerror or e})", io=True) from None
    except OSError as e:
        raise TomlFileError(e.strerror or str(e), io=True) from None
    except UnicodeDecodeError as e:
        raise TomlFileError(f"not UTF-8 text (bad byte at offset {e.start}); a TOML file must be UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise TomlFileError(f"not valid TOML: {e}{_hint(path, str(e))}") from None


def _hint(path, message: str) -> str:
    """What a person most likely meant, for the one TOML mistake a clock config invites: a time
    such as `game_time = 25:00` unquoted (TOML's own error says only "Expected newline")."""
    import re

    at = re.search(r"at line (\d+)", message)
    if not at:
        return ""
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
        line = lines[int(at.group(1)) - 1]
    except (OSError, IndexError):
        return ""
    m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*=\s*(-?\d+:\d\d)\s*(#.*)?$", line)
    return f'; a time is text in TOML, so quote it: {m.group(1)} = "{m.group(2)}"' if m else ""
