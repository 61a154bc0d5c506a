"""Every TOML file Rackside reads goes through rackside.tomlfile: whatever is wrong with it is one
line naming the file, never a traceback (issue 9, item 9, for every config and credentials file)."""

from __future__ import annotations

import pytest

from rackside import tomlfile
from rackside.firmware.config import ConfigError, load_config
from rackside.hall.net.config import HallConfigError, load_credentials
from rackside.hall.console.shell import config as console_config
from rackside.hardware.bcm import PinMapError
from rackside.hardware.pinmap import load_pinmap
from rackside.kiosk import station_config


def bad_files(tmp_path):
    folder = tmp_path / "a-folder.toml"
    folder.mkdir()
    undecodable = tmp_path / "bytes.toml"
    undecodable.write_bytes(b"\xff\xfe[clock]\n")
    not_toml = tmp_path / "broken.toml"
    not_toml.write_text("[clock\n")
    return {"directory": folder, "UTF-8": undecodable, "TOML": not_toml, "no such file": tmp_path / "missing.toml"}


def test_the_reader_says_why(tmp_path):
    for words, path in bad_files(tmp_path).items():
        with pytest.raises(tomlfile.TomlFileError) as err:
            tomlfile.read(path)
        assert words in str(err.value) and "\n" not in str(err.value)
        assert err.value.io == (words in ("directory", "no such file"))
        assert err.value.missing == (words == "no such file")


@pytest.mark.parametrize("load, error", [
    (load_config, ConfigError),
    (station_config.load_config, station_config.ConfigError),
    (load_pinmap, PinMapError),
    (load_credentials, HallConfigError),  # a folder or bad bytes here were a traceback before
    (console_config.load, console_config.ConfigError),
    (console_config.load_credentials, console_config.ConfigError),
])
def test_every_loader_refuses_a_bad_file_in_one_line_naming_it(tmp_path, load, error):
    for path in bad_files(tmp_path).values():
        with pytest.raises(error) as err:
            load(path)
        message = str(err.value)
        assert path.name in message and "\n" not in message, message
