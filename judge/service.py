"""The judge service: the one way to judge and log a challenge, find one by id, re-adjudicate it,
export the log, and choose the lexicon and the rule. The station (`kiosk.app`), the `rackside
judge` / `rackside lexicon` / `rackside log` commands and the hall call this, so they cannot drift
apart (they had: the station matched ids ignoring case and the CLI exactly; one export was atomic
and the other not).

Nothing here draws, prints or reads a clock but the log's wall-clock stamp. Modules are imported
where they are first needed: `rackside judge WORD` uses only `check`, and pays for nothing else.
"""

from __future__ import annotations

import os
from pathlib import Path

from rackside.judge.adjudication import DEFAULT_MAX_WORDS, Adjudication
from rackside.judge.penalties import ChallengeRule
from rackside.judge.lexicon import Lexicon, LexiconError
from rackside.judge.settings import SettingsError, StationSettings
from rackside.values import Record

__all__ = ["JudgeService", "Judgement", "NoLexicon", "NotInLog", "LexiconError", "SettingsError"]



def _log():
    # logging is imported by the first message, not at start-up (`rackside judge` never logs).
    import logging

    return logging.getLogger(__name__)


class NoLexicon(LookupError):
    """No lexicon could be opened; the message says why (for the director)."""


class NotInLog(LookupError):
    """No challenge in the log has the id asked for."""


class Judgement(Record):
    """A judged challenge: the verdict for the play (`adjudication`), the penalty guidance in the
    players' words, and the log record (None when not logged, as for `rackside judge`)."""

    __slots__ = ("adjudication", "guidance", "record")
    adjudication: Adjudication
    guidance: str
    record: object


def _signature(path: Path | None) -> tuple | None:
    """What tells a changed file from the same one, without reading it (one stat)."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class JudgeService:
    """The judge core for one station (or one command). Paths default to the state folder
    (`rackside.paths`): `settings_path` station.json, `log_path` challenges.jsonl,
    `lexicon_folder` lexicons/. `station` names the records it logs; `log_problems=False` when
    the caller reports the log's damaged lines itself (the CLI)."""

    def __init__(self, *, log_path: Path | None = None, station: str = "reader", settings_path: Path | None = None,
                 lexicon_folder: Path | None = None, log_problems: bool = True, clock=None) -> None:
        self.settings_path = settings_path
        self._log_path = log_path
        self.lexicon_folder = lexicon_folder
        self.station = station
        self._log_problems = log_problems
        self._clock = clock
        self._log = None
        self._settings: StationSettings | None = None
        self._settings_sig: tuple | None = None
        self.lexicon: Lexicon | None = None
        self._lexicon_sig: tuple | None = None
        self.lexicon_error: str | None = None
        self._refresh_outage = None

    # -- settings ---------------------------------------------------------------------------

    @property
    def settings_file(self) -> Path:
        from rackside.judge.settings import default_settings_path

        return self.settings_path or default_settings_path()

    @property
    def settings(self) -> StationSettings:
        if self._settings is None:
            self.reload_settings()
        return self._settings

    def reload_settings(self) -> StationSettings:
        """Read the settings file as it is now (raises SettingsError for a corrupt one)."""
        from rackside.judge.settings import load_settings

        path = self.settings_file
        sig = _signature(path)
        self._settings = load_settings(path)
        self._settings_sig = sig
        return self._settings

    def _save_settings(self, **changes) -> StationSettings:
        """Change only these settings in the file, as it is now: `rackside lexicon use` may have
        written it since this service read it, and a rule change must not undo that."""
        from rackside.judge.settings import load_settings, save_settings

        path = self.settings_file
        settings = load_settings(path)
        for name, value in changes.items():
            setattr(settings, name, value)
        save_settings(settings, path)
        current = self.settings
        for name, value in changes.items():
            setattr(current, name, value)
        self._settings_sig = _signature(path)
        return settings

    @property
    def rule(self) -> ChallengeRule:
        return self.settings.challenge_rule

    @property
    def max_words(self) -> int:
        return self.settings.max_words if self._settings is not None else DEFAULT_MAX_WORDS

    def choose_rule(self, rule: ChallengeRule | str) -> ChallengeRule:
        """Save the tournament's rule (raises SettingsError or OSError; nothing changes then)."""
        rule = rule if isinstance(rule, ChallengeRule) else ChallengeRule.parse(rule)
        self._save_settings(challenge_rule=rule)
        return rule

    # -- the lexicon ------------------------------------------------------------------------

    def configured_lexicon_path(self) -> Path:
        """The file the settings choose (installing the default ENABLE when they choose none)."""
        from rackside.judge.settings import configured_lexicon_path

        return configured_lexicon_path(self.settings)

    def open_lexicon(self, path: Path | str | None = None) -> Lexicon:
        """Open `path`, else the configured lexicon, and judge with it from now on. Raises
        LexiconError (or SettingsError): a station never falls back silently to another lexicon
        than the one the director set; the one already open, if any, stays."""
        from rackside.judge.settings import open_configured_lexicon

        lexicon = Lexicon.open(path) if path is not None else open_configured_lexicon(self.settings)
        self._use(lexicon)
        return lexicon

    def _use(self, lexicon: Lexicon) -> None:
        old, self.lexicon = self.lexicon, lexicon
        self._lexicon_sig = _signature(lexicon.path)
        self.lexicon_error = None
        if old is not None and old is not lexicon:
            old.close()

    def refresh_lexicon(self) -> bool:
        """Pick up a lexicon or rule chosen elsewhere (`rackside lexicon use`) since the settings
        were read: the station calls this at its idle screen. One stat when nothing changed.
        True when the lexicon changed. A lexicon that fails to open is reported once per outage
        and the one in use stays."""
        from rackside.outage import Outage

        path = self.settings_file
        if _signature(path) == self._settings_sig and (
                self.lexicon is None or _signature(self.lexicon.path) == self._lexicon_sig):
            return False
        if self._refresh_outage is None:
            self._refresh_outage = Outage(_log(), "the director's new lexicon")
        try:
            self.reload_settings()
            wanted = self.configured_lexicon_path()
            if (self.lexicon is not None and Path(wanted) == Path(self.lexicon.path)
                    and _signature(wanted) == self._lexicon_sig):
                self._refresh_outage.recovered()
                return False
            self.open_lexicon(wanted)
        except (LexiconError, SettingsError, OSError) as exc:
            self._refresh_outage.failed(exc)
            return False
        self._refresh_outage.recovered()
        _log().info("now judging with %s (%s), chosen since the station started", self.lexicon.name, self.lexicon.path)
        return True

    def choose_lexicon(self, path: Path | str) -> Lexicon:
        """The director's choice on the station: open it, save it, judge with it. Raises
        LexiconError, SettingsError or OSError, and then nothing has changed."""
        lexicon = Lexicon.open(path)
        try:
            self._save_settings(lexicon_path=Path(path))
        except BaseException:
            lexicon.close()
            raise
        self._use(lexicon)
        return lexicon

    def use_lexicon_file(self, path: Path | str | None) -> tuple[Lexicon | None, Path | None]:
        """`rackside lexicon use FILE`: copy the verified FILE into the lexicon folder (so the
        station lists it and keeps it when the USB stick is gone) and choose the copy; None
        chooses the default ENABLE. Returns the lexicon (closed: for its name and checksum)
        and the copy's path."""
        from rackside.judge.lexicon import copy_into_lexicon_dir

        if path is None:
            self._save_settings(lexicon_path=None)
            return None, None
        copy = copy_into_lexicon_dir(Path(path), self.lexicon_folder)
        with Lexicon.open(copy) as lexicon:
            self._save_settings(lexicon_path=copy)
        return lexicon, copy

    @property
    def lexicon_folder_path(self) -> Path:
        from rackside.judge.lexicon import lexicon_dir

        return self.lexicon_folder or lexicon_dir()

    def list_lexicons(self) -> list[tuple[Path, tuple[str, int, str] | None, str | None]]:
        """Every compiled lexicon in the lexicon folder, each fully checked as at the table:
        (path, (name, word count, short checksum) or None, error or None)."""
        folder = self.lexicon_folder_path
        out = []
        for path in sorted(folder.glob("*.rlex")) if folder.is_dir() else []:
            try:
                with Lexicon.open(path) as lexicon:
                    out.append((path, (lexicon.name, lexicon.word_count, lexicon.short_checksum), None))
            except (LexiconError, OSError) as exc:
                out.append((path, None, str(exc)))
        return out

    # -- judging ----------------------------------------------------------------------------

    def check(self, words, *, prior: int | None = None, rule: ChallengeRule | None = None) -> Judgement:
        """Judge without logging (`rackside judge`): raises ChallengeInputError for bad words,
        NoLexicon when there is none."""
        from rackside.judge.adjudication import adjudicate, normalise_words
        from rackside.judge.penalties import penalty_guidance

        if self.lexicon is None:
            raise NoLexicon("No lexicon is loaded: call the director")
        words = normalise_words(words, max_words=self.settings.max_words)
        adjudication = adjudicate(words, self.lexicon)
        guidance = penalty_guidance(rule or self.settings.challenge_rule, adjudication, prior)
        return Judgement(adjudication, guidance, None)

    def judge(self, words, *, table: str | None = None, kind: str = "self", prior: int | None = None) -> Judgement:
        """Judge and log: the record is durable (fsync'd) before this returns, so before anyone
        sees the verdict. Raises ChallengeInputError, NoLexicon, or OSError (not logged: no
        verdict may be shown)."""
        judgement = self.check(words, prior=prior)
        record = self.challenge_log.record(judgement.adjudication, self.lexicon, table=table, kind=kind)
        return Judgement(judgement.adjudication, judgement.guidance, record)

    # -- the log ----------------------------------------------------------------------------

    @property
    def log_path(self) -> Path | None:
        return self._log_path

    @log_path.setter
    def log_path(self, path: Path | None) -> None:
        self._log_path, self._log = path, None  # the next record goes to the new file

    @property
    def challenge_log(self):
        if self._log is None:
            from rackside.judge.challenge_log import ChallengeLog, default_log_path

            kwargs = {"clock": self._clock} if self._clock is not None else {}
            self._log = ChallengeLog(self.log_path or default_log_path(), self.station,
                                     log_problems=self._log_problems, **kwargs)
        return self._log

    def records(self) -> list:
        """Every record that reads back (raises OSError when the log cannot be read at all);
        damaged lines are in `problems`."""
        return self.challenge_log.records()

    @property
    def problems(self) -> list:
        return self.challenge_log.problems

    def find(self, challenge_id: str):
        """The record with this id (any case) or 6-character short id, or None. Raises
        AmbiguousId, or OSError when the log cannot be read."""
        return self.challenge_log.find(challenge_id)

    def readjudicate(self, challenge_id: str, lexicon: Lexicon | None = None):
        """Re-judge a logged challenge with `lexicon` (default: the one in use) (3.10.11).
        Raises NotInLog, NoLexicon, AmbiguousId or OSError."""
        from rackside.judge.challenge_log import readjudicate

        record = self.find(challenge_id)
        if record is None:
            raise NotInLog(f"No challenge with id {challenge_id.strip()} in {self.challenge_log.path}")
        lexicon = lexicon or self.lexicon
        if lexicon is None:
            raise NoLexicon("No lexicon is loaded: choose one first")
        return readjudicate(record, lexicon)

    def export_csv(self, out: Path | str) -> int:
        """Write the whole log as CSV to `out`, atomically and readable by its owner only (it holds
        per-word results, 3.10.7(b)). A failure leaves any earlier file at `out` whole. Returns
        the number of challenges."""
        import io

        from rackside.atomic import write_atomic
        from rackside.judge import challenge_log

        records = self.records()
        buffer = io.StringIO(newline="")
        count = challenge_log.export_csv(records, buffer)
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, buffer.getvalue(), mode=0o600)
        return count

    def close(self) -> None:
        if self.lexicon is not None:
            self.lexicon.close()
            self.lexicon = None
