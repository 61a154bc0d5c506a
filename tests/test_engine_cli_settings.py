"""The director's station settings (kiosk/settings.py): defaults, atomic saves, clear errors."""

from __future__ import annotations

import json
import stat

import pytest

from rackside.judge.penalties import ChallengeRule
from rackside.judge.lexicon import LexiconError, compile_lexicon, default_lexicon_path, lexicon_dir
from rackside.judge.settings import (
    SettingsError,
    StationSettings,
    default_settings_path,
    load_settings,
    open_configured_lexicon,
    save_settings,
)


def test_missing_file_means_defaults():
    settings = load_settings()
    assert settings == StationSettings(lexicon_path=None, challenge_rule=ChallengeRule.FIVE_PER_WORD, max_words=8)


def test_save_and_load_round_trip(tmp_path):
    wanted = StationSettings(lexicon_path=tmp_path / "csw.rlex", challenge_rule=ChallengeRule.DINGLE, max_words=5)
    path = save_settings(wanted)
    assert path == default_settings_path()
    assert load_settings() == wanted
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["station.json"]  # no temporary files left
    assert json.loads(path.read_text())["challenge_rule"] == "dingle"
    other = tmp_path / "elsewhere.json"
    save_settings(StationSettings(), other)
    assert load_settings(other) == StationSettings()


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON (line 1"),
        ("[]", "expected a JSON object"),
        ('{"rule": "single"}', "unknown key 'rule'; allowed keys: version, lexicon_path, challenge_rule, max_words"),
        ('{"challenge_rule": "triple"}', "key 'challenge_rule': unknown challenge rule 'triple'; allowed: single,"),
        ('{"challenge_rule": 5}', "key 'challenge_rule'"),
        ('{"max_words": 0}', "key 'max_words' must be a whole number from 1 to 20, got 0"),
        ('{"max_words": true}', "key 'max_words'"),
        ('{"lexicon_path": ""}', "key 'lexicon_path' must be a file path or null"),
        ('{"lexicon_path": 3}', "key 'lexicon_path'"),
        ('{"version": 9}', "key 'version' is 9"),
    ],
)
def test_a_corrupt_file_names_the_key_and_the_allowed_values(content, message):
    path = default_settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    with pytest.raises(SettingsError) as exc_info:
        load_settings()
    assert message in str(exc_info.value)
    assert str(path) in str(exc_info.value)


def test_an_invalid_setting_is_never_saved():
    with pytest.raises(SettingsError):
        save_settings(StationSettings(max_words=99))
    assert not default_settings_path().exists()


def test_open_configured_lexicon(tmp_path):
    with open_configured_lexicon(StationSettings()) as lex:
        assert lex.name == "ENABLE" and lex.path == default_lexicon_path()
    src = tmp_path / "w.txt"
    src.write_text("QI\nZA\n")
    compile_lexicon(src, lexicon_dir() / "tiny.rlex", "TINY")
    # A relative path is taken inside the lexicon folder.
    with open_configured_lexicon(StationSettings(lexicon_path="tiny.rlex")) as lex:
        assert lex.name == "TINY" and "QI" in lex
    with pytest.raises(LexiconError, match="missing.rlex: cannot open"):
        open_configured_lexicon(StationSettings(lexicon_path=tmp_path / "missing.rlex"))
