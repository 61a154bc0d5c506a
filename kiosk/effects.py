"""The station's effects carried out: what kiosk.flow asks for (judge and log, print, the director's
choices, an import) done with the judge service, the printer's thread and the files, and the
answers handed back to the flow. The pygame shell (kiosk/app.py) feeds the flow and draws; this
module is everything else the flow's effects need, so neither grows into the other (issue 16 item 5).

All of it runs on the UI thread except what is slow: a docket prints on the printer's own thread
(kiosk/printing.py) and an import compiles on its own (kiosk/media_import.py). `poll()`, called at
every step, hands their answers to the flow; `deadline()` says when the screen needs a step for
them even if nobody touches it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from rackside.kiosk import flow
from rackside.kiosk.flow import LexiconChoice, LexiconInfo, LogRow, ReadjudicationView, Station, Verdict
from rackside.kiosk.station_config import StationConfig


class LazyLog:
    """A module's logger, made at its first message: `logging` costs ~5 ms, and nothing is logged
    before the station's first frame unless something is wrong (issue 11). `rackside kiosk` sets up
    logging right after that frame (station_cli). The station's modules share this one."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr):
        import logging

        return getattr(logging.getLogger(self._name), attr)


log = LazyLog(__name__)

IMPORT_REDRAW_NS = 100_000_000  # the import's progress bar moves ten times a second
# While a docket prints, the screen looks for the printer's answer this often (the idle poll's rate),
# so "printed" or why not shows within 50 ms of the printer's answer.
DOCKET_POLL_NS = 50_000_000


class Effects:
    """Carries out kiosk.flow's effects for one station. `paths` is kiosk.app.Paths; `printer` a
    kiosk.docket.DocketPrinter (handed to its own thread), or None; `on_quit` is called when the
    director quits the station."""

    def __init__(self, station: Station, service, config: StationConfig, paths, *, clock_ns: Callable[[], int],
                 on_quit: Callable[[], None], printer=None) -> None:
        self.station, self.service, self.config, self.paths = station, service, config, paths
        self.clock_ns = clock_ns
        self.on_quit = on_quit
        self.dockets = None  # the printer's thread (kiosk.printing.DocketWorker), when there is a printer
        if printer is not None:
            from rackside.kiosk.printing import DocketWorker

            self.dockets = DocketWorker(printer)
        self.importing = None  # the word list being compiled off the UI thread (media_import.ImportJob)

    # -- what the shell calls -----------------------------------------------------------------

    def carry_out(self, effect) -> None:
        getattr(self, f"_do_{type(effect).__name__.lower()}")(effect)

    def poll(self) -> None:
        """Hand the answers of the work off the UI thread (import, dockets) to the flow."""
        self._poll_import()
        if self.dockets is not None:
            for answer in self.dockets.answers():
                self._docket_answered(answer)

    def deadline(self, now: int) -> int | None:
        """When work running off the UI thread next needs a step: the import's progress bar, ten
        times a second while it compiles; a docket's answer while one prints."""
        if self.importing is not None:
            return now + IMPORT_REDRAW_NS
        if self.dockets is not None and self.dockets.pending:
            return now + DOCKET_POLL_NS
        return None

    def close(self) -> None:
        if self.dockets is not None:
            self.dockets.close()

    def _docket_answered(self, answer) -> None:
        """The printer's answer, shown on the result it was printed for (not on a later one)."""
        verdict = self.station.verdict
        if verdict is not None and verdict.challenge_id == answer.challenge_id:
            self.station.docket_done(answer.ok, answer.why)

    # -- the lexicon on the idle screen ------------------------------------------------------

    def open_lexicon(self) -> None:
        from rackside.judge.service import LexiconError

        try:
            self.service.open_lexicon()
        except (LexiconError, OSError) as exc:
            log.error("no lexicon: %s", exc)
            self.station.show_lexicon(None, str(exc))
            return
        self.show_lexicon()

    def show_lexicon(self) -> None:
        from rackside.judge.lexicon import DEMONSTRATION_SHORT, is_demonstration

        lexicon = self.service.lexicon
        self.station.show_lexicon(LexiconInfo(lexicon.name, lexicon.word_count, lexicon.short_checksum),
                                  notice=DEMONSTRATION_SHORT if is_demonstration(lexicon) else "")

    def refresh_lexicon(self) -> None:
        """At the idle screen: judge with a lexicon or rule `rackside lexicon use` chose since."""
        changed = self.service.refresh_lexicon()
        lexicon = self.service.lexicon
        if lexicon is not None and not Path(lexicon.path).exists():
            # gone while the station ran (a USB stick pulled, a folder cleaned): the copy in memory
            # would go on judging unseen, so the station stops taking challenges and says why
            if self.station.lexicon is not None:
                log.error("lexicon %s is gone: no challenges until the director chooses one", lexicon.path)
                self.station.show_lexicon(None, error=f"the lexicon file {lexicon.path} is gone")
        elif changed or (lexicon is not None and self.station.no_lexicon):
            self.show_lexicon()  # chosen since, or its file is back
        rule = self.service.rule
        if rule.value != self.station.rule_value:
            self.station.show_rule(rule.value, rule.label)

    # -- the effects ---------------------------------------------------------------------------

    def _do_judge(self, eff: flow.Judge) -> None:
        from rackside.judge.adjudication import ChallengeInputError
        from rackside.judge.service import NoLexicon

        try:
            # Durable (fsync'd) before anyone sees the verdict.
            judgement = self.service.judge(eff.words, table=eff.table or self.config.table, kind=eff.kind)
        except (NoLexicon, ChallengeInputError) as exc:
            self.station.reject_words(str(exc))
            return
        except OSError as exc:
            log.error("challenge not logged: %s", exc)
            self.station.reject_words(f"The challenge could not be logged ({exc.strerror or exc}): call the director")
            return
        record, adjudication = judgement.record, judgement.adjudication
        verdict = Verdict(
            acceptable=adjudication.acceptable,
            words=adjudication.words,
            lexicon=f"{self.service.lexicon.name} ({self.service.lexicon.short_checksum})",
            guidance=judgement.guidance,
            challenge_id=record.id,
            kind=eff.kind,
            short_id=record.short_id,
        )
        printing = self.dockets is not None and eff.kind == "runner"
        self.station.show_verdict(verdict, self.clock_ns(), printing=printing)
        if printing:
            from rackside.kiosk.docket import Docket

            # Posted to the printer's thread: the verdict is drawn at this step whatever the
            # printer does, and touches made while it prints are handled as they come.
            refused = self.dockets.post(Docket(
                record.id, _docket_time(record.time), record.table, verdict.lexicon, record.words, record.acceptable,
                record.short_id))
            if refused is not None:
                self._docket_answered(refused)

    def _do_listlexicons(self, eff) -> None:
        choices = []
        for path, info, error in self.service.list_lexicons():
            if error is None:
                choices.append(LexiconChoice(str(path), LexiconInfo(*info).label))
            else:
                choices.append(LexiconChoice(str(path), f"{path.name}: unreadable", error))
        self.station.show_lexicons(choices)
        if not choices:
            self.station.note(f"No compiled lexicons in {self.service.lexicon_folder_path}")

    def _do_chooselexicon(self, eff: flow.ChooseLexicon) -> None:
        from rackside.judge.service import LexiconError, SettingsError

        try:
            lexicon = self.service.choose_lexicon(eff.path)
        except (LexiconError, OSError) as exc:
            self.station.note(f"Lexicon not changed: {exc}")
            return
        except SettingsError as exc:
            self.station.note(f"Lexicon not changed: cannot save the settings ({exc})")
            return
        self.show_lexicon()
        self.station.note(f"Now judging with {lexicon.name}")
        log.info("director chose lexicon %s (%s)", lexicon.name, eff.path)

    def _do_chooserule(self, eff: flow.ChooseRule) -> None:
        from rackside.judge.service import SettingsError

        try:
            rule = self.service.choose_rule(eff.value)
        except (OSError, SettingsError) as exc:
            self.station.note(f"Rule not changed: cannot save the settings ({exc})")
            return
        self.station.show_rule(rule.value, rule.label)
        self.station.note(f"Challenge rule: {rule.label}")

    def _rows(self) -> list[LogRow]:
        return [LogRow(r.id, r.time, r.kind, r.table, f"{r.lexicon_name} ({r.lexicon_sha256[:8]})", r.words,
                       r.acceptable, r.per_word) for r in reversed(self.service.challenge_log.records())]

    def _do_loadlog(self, eff) -> None:
        try:
            self.station.show_log(self._rows())
        except OSError as exc:
            self.station.note(f"Cannot read the log: {exc}")

    def _do_exportlog(self, eff) -> None:
        from datetime import datetime

        from rackside import paths

        folder = self.paths.exports or self.config.export_dir or paths.exports_dir()
        # Wall-clock time only names the file for humans.
        out = folder / f"challenges-{self.config.name}-{datetime.now():%Y%m%d-%H%M%S}.csv"
        try:
            count = self.service.export_csv(out)  # atomic and owner-only, as `rackside log export`
        except OSError as exc:
            self.station.note(f"Export failed: {exc}")
            return
        self.station.note(f"Exported {count} challenges to {out}")

    def _do_readjudicate(self, eff: flow.Readjudicate) -> None:
        from rackside.judge.challenge_log import AmbiguousId
        from rackside.judge.service import NoLexicon, NotInLog

        wanted = eff.challenge_id.strip()
        try:
            # The one lookup (full id in any case, or the short id), as `rackside log readjudicate`.
            r = self.service.readjudicate(wanted)
        except NoLexicon as exc:
            self.station.show_readjudication(None, str(exc))
            return
        except NotInLog:
            self.station.show_readjudication(None, f"No challenge with id {wanted} in this station's log")
            return
        except AmbiguousId as exc:
            self.station.show_readjudication(None, str(exc))
            return
        except OSError as exc:  # as in the log view: reported, never the end of the station
            self.station.show_readjudication(None, f"Cannot read the log: {exc}")
            return
        record = r.record
        row = LogRow(record.id, record.time, record.kind, record.table,
                     f"{record.lexicon_name} ({record.lexicon_sha256[:8]})", record.words, record.acceptable,
                     record.per_word)
        self.station.show_readjudication(ReadjudicationView(
            row, r.now.acceptable, r.now.per_word, not r.final, r.message,
            f"{self.service.lexicon.name} ({self.service.lexicon.short_checksum})"))
        log.info("re-adjudicated %s: %s", record.id, r.message)

    def _do_scanmedia(self, eff) -> None:
        from rackside.kiosk.media_import import MEDIA_ROOTS, find_word_lists

        roots = self.paths.media or MEDIA_ROOTS
        found = find_word_lists(roots)
        self.station.show_import_choices([LexiconChoice(str(f.path), f.label) for f in found])
        if not found:
            log.info("no word lists on removable media under %s", ", ".join(map(str, roots)))

    def _do_importwordlist(self, eff: flow.ImportWordList) -> None:
        from rackside.kiosk.media_import import ImportJob, lexicon_name_for

        name = lexicon_name_for(Path(eff.path))
        out = Path(self.service.lexicon_folder_path) / f"{name.lower()}.rlex"
        log.info("importing %s as %s into %s", eff.path, name, out)
        self.importing = ImportJob(Path(eff.path), out, name).start()

    def _poll_import(self) -> None:
        """Hand the compile's progress to the screen; when it is done, switch to the lexicon."""
        job = self.importing
        if job is None:
            return
        result = job.result  # read before the progress: a finished job's progress is final
        self.station.show_import_progress(*job.progress())
        if result is None:
            return
        self.importing = None
        if result.error:
            log.warning("import failed: %s", result.error)
            self.station.show_import_done(flow.ImportView(job.src.name, error=result.error,
                                                          fraction=job.progress()[0]), self.clock_ns())
            return
        log.info("imported %s: %s, %d words, %s", job.src, result.name, result.words, result.checksum)
        self.carry_out(flow.ChooseLexicon(str(result.out)))  # the same switch as choosing it from the list
        self.station.show_import_done(flow.ImportView(job.src.name, name=result.name, word_count=result.words,
                                                      checksum=result.checksum, skipped=result.skipped),
                                      self.clock_ns())

    def _do_quit(self, eff) -> None:
        self.on_quit()


def _docket_time(iso: str) -> str:
    """'2026-11-29T12:00:03+00:00' -> '2026-11-29 12:00:03 UTC' for the slip."""
    from datetime import datetime

    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return dt.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if dt.utcoffset() is not None and not dt.utcoffset() else "")
