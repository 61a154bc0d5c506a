"""The director's choices for a challenge station, persisted as JSON in the state folder.

`station.json` holds which compiled lexicon to judge with (none = the default ENABLE), the
tournament's challenge rule (3.10.15) and how many words one challenge may name. It is written
atomically (`rackside.atomic.write_atomic`), so a crash leaves either the old or the new choices.
"""

from __future__ import annotations

from pathlib import Path

from rackside.judge.adjudication import DEFAULT_MAX_WORDS, MAX_WORDS_LIMIT
from rackside.judge.penalties import ChallengeRule
from rackside.judge.lexicon import Lexicon, install_default_lexicon, lexicon_dir

SETTINGS_VERSION = 1
_KEYS = ("version", "lexicon_path", "challenge_rule", "max_words")


class SettingsError(ValueError):
    """The settings file is unreadable or holds a bad value; the message names the key."""


class StationSettings:
    """`lexicon_path` None means the default ENABLE lexicon; a relative path is taken inside
    `lexicon_dir()`. FIVE_PER_WORD is the preferred international norm (3.10.15(d)).
    A plain class, not a dataclass: `rackside judge` reads it, and importing dataclasses costs
    more than the whole lookup (issue 11)."""

    __slots__ = ("lexicon_path", "challenge_rule", "max_words")

    def __init__(self, lexicon_path: Path | None = None, challenge_rule: ChallengeRule = ChallengeRule.FIVE_PER_WORD,
                 max_words: int = DEFAULT_MAX_WORDS) -> None:
        self.lexicon_path = lexicon_path
        self.challenge_rule = challenge_rule
        self.max_words = max_words

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.to_dict() == self.to_dict()

    def __repr__(self) -> str:
        return (f"StationSettings(lexicon_path={self.lexicon_path!r}, challenge_rule={self.challenge_rule!r}, "
                f"max_words={self.max_words!r})")

    def to_dict(self) -> dict:
        return {
            "version": SETTINGS_VERSION,
            "lexicon_path": None if self.lexicon_path is None else str(self.lexicon_path),
            "challenge_rule": self.challenge_rule.value,
            "max_words": self.max_words,
        }

    @classmethod
    def from_dict(cls, data: dict, where: str = "settings") -> "StationSettings":
        if not isinstance(data, dict):
            raise SettingsError(f"{where}: expected a JSON object with keys {', '.join(_KEYS)}")
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise SettingsError(f"{where}: unknown key {unknown[0]!r}; allowed keys: {', '.join(_KEYS)}")
        version = data.get("version", SETTINGS_VERSION)
        if version != SETTINGS_VERSION:
            raise SettingsError(f"{where}: key 'version' is {version!r}; this Rackside reads {SETTINGS_VERSION}")
        raw_path = data.get("lexicon_path")
        if raw_path is not None and (not isinstance(raw_path, str) or not raw_path.strip()):
            raise SettingsError(f"{where}: key 'lexicon_path' must be a file path or null (the default ENABLE)")
        raw_rule = data.get("challenge_rule", ChallengeRule.FIVE_PER_WORD.value)
        try:
            rule = ChallengeRule.parse(raw_rule) if isinstance(raw_rule, str) else ChallengeRule.parse(repr(raw_rule))
        except ValueError as exc:
            raise SettingsError(f"{where}: key 'challenge_rule': {exc}") from None
        max_words = data.get("max_words", DEFAULT_MAX_WORDS)
        if not isinstance(max_words, int) or isinstance(max_words, bool) or not 1 <= max_words <= MAX_WORDS_LIMIT:
            raise SettingsError(f"{where}: key 'max_words' must be a whole number from 1 to {MAX_WORDS_LIMIT}, "
                                f"got {max_words!r}")
        return cls(lexicon_path=None if raw_path is None else Path(raw_path), challenge_rule=rule,
                   max_words=max_words)


def default_settings_path() -> Path:
    from rackside import paths

    return paths.station_settings()


def load_settings(path: Path | None = None) -> StationSettings:
    """The saved settings; a missing file means the defaults. A corrupt file raises SettingsError."""
    path = default_settings_path() if path is None else Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return StationSettings()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read the station settings: {exc}") from None
    import json  # only when there is a file: `rackside judge` on a fresh install never needs it

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); fix or delete the file") from None
    return StationSettings.from_dict(data, where=str(path))


def save_settings(settings: StationSettings, path: Path | None = None) -> Path:
    """Write the settings atomically; returns the path."""
    import json

    from rackside.atomic import write_atomic

    path = default_settings_path() if path is None else Path(path)
    StationSettings.from_dict(settings.to_dict())  # refuse to save what could not be loaded back
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(settings.to_dict(), indent=2) + "\n", mode=0o600)
    return path


def resolve_lexicon_path(settings: StationSettings) -> Path | None:
    """The chosen lexicon file, with a relative path taken inside lexicon_dir(); None = default."""
    if settings.lexicon_path is None:
        return None
    path = Path(settings.lexicon_path).expanduser()
    return path if path.is_absolute() else lexicon_dir() / path


def configured_lexicon_path(settings: StationSettings) -> Path:
    """The director's chosen lexicon file, or the default ENABLE's (installed if needed)."""
    return resolve_lexicon_path(settings) or install_default_lexicon()


def open_configured_lexicon(settings: StationSettings) -> Lexicon:
    """Open the director's chosen lexicon, or the default ENABLE (installing it if needed).
    Raises LexiconError if the chosen file is missing or corrupt: a station never silently
    falls back to another lexicon than the one the director set."""
    return Lexicon.open(configured_lexicon_path(settings))
