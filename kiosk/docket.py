"""Challenge dockets on an ESC/POS receipt printer over a serial port (3.10.7(c)).

Why not python-escpos (3.1): it pulls in Pillow, qrcode, python-barcode, pyusb, PyYAML and more for
a docket that is a dozen lines of text, and its Serial printer opens a device path, not a pyserial
URL, so `loop://`, ptys and `rfc2217://` (how we test and how sim-vs-real stays a setting) would
need a subclass anyway. The handful of ESC/POS commands below is the whole protocol we use.

A printer that is unplugged, off or jammed must never hold up a verdict: the verdict is already on
screen when the docket is sent, every write is bounded by `write_timeout`, and a failure comes back
as a short reason for the screen ("the docket did not print: ...").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

ESC, GS, DLE, EOT, LF = b"\x1b", b"\x1d", b"\x10", b"\x04", b"\n"
INIT = ESC + b"@"
CODEPAGE_PC437 = ESC + b"t\x00"
ALIGN_LEFT, ALIGN_CENTRE = ESC + b"a\x00", ESC + b"a\x01"
BOLD_ON, BOLD_OFF = ESC + b"E\x01", ESC + b"E\x00"
SIZE_NORMAL, SIZE_DOUBLE = GS + b"!\x00", GS + b"!\x11"
FEED_AND_CUT = ESC + b"d\x04" + GS + b"V\x42\x00"  # feed 4 lines, then a partial cut
STATUS_REQUEST = DLE + EOT + b"\x01"  # real-time printer status (answers one byte)
TICK = b"\xfb"  # the PC437 check mark (square-root sign), printable on every ESC/POS printer
LINE_WIDTH = 32  # characters on 58 mm paper in font A; 80 mm printers simply leave a margin


@dataclass(frozen=True)
class Docket:
    challenge_id: str
    time: str
    table: str | None
    lexicon: str
    words: tuple[str, ...]
    acceptable: bool
    short_id: str = ""  # printed first: the 6 characters a director types to find the challenge


def _text(s: str) -> bytes:
    return s.encode("cp437", errors="replace")


def encode_docket(d: Docket) -> bytes:
    """The exact bytes of one docket: a big tick or cross, then id, time, table, lexicon, words."""
    mark = TICK + b" ACCEPTABLE" if d.acceptable else b"X UNACCEPTABLE"
    rows = [("Challenge", d.challenge_id), ("Time", d.time), ("Table", d.table or "-"), ("Lexicon", d.lexicon)]
    if d.short_id:
        rows.insert(0, ("Short id", d.short_id))
    body = b"".join(_text(f"{k:<10}{v}"[:LINE_WIDTH * 2]) + LF for k, v in rows)
    words = b"".join(_text(f"{'Words' if i == 0 else '':<10}{w}") + LF for i, w in enumerate(d.words))
    return (
        INIT + CODEPAGE_PC437
        + ALIGN_CENTRE + BOLD_ON + SIZE_DOUBLE + mark + LF + SIZE_NORMAL + BOLD_OFF + LF
        + ALIGN_LEFT + body + words
        + FEED_AND_CUT
    )


def valid_status(byte: int) -> bool:
    """DLE EOT 1's answer has fixed bits (bit 1 and 4 set, 0 and 7 clear); bit 3 set = offline."""
    return byte & 0b10010011 == 0b00010010


class DocketPrinter:
    """An ESC/POS printer at a pyserial URL. Opened lazily, reopened after any failure.

    `status_check` asks the printer for its real-time status first, so a printer that is switched
    off on a plain RS-232 cable (where bytes vanish without error) is reported too.

    `loop://` is a dry run (a station set up before its printer arrives, a demonstration): no
    printer can answer the status request there, so it is skipped, and only the latest docket is
    kept in the loop (readable for tests) instead of a day's worth.
    """

    def __init__(self, url: str, baudrate: int = 19200, write_timeout: float = 0.5, status_check: bool = True):
        self.url, self.baudrate, self.write_timeout, self.status_check = url, baudrate, write_timeout, status_check
        self._port = None

    @property
    def dry_run(self) -> bool:
        return self.url.startswith("loop://")

    def _open(self):
        if self._port is None:
            import serial  # hardware module: imported only when a printer is configured

            self._port = serial.serial_for_url(
                self.url, baudrate=self.baudrate, timeout=self.write_timeout, write_timeout=self.write_timeout
            )
        return self._port

    def print_docket(self, docket: Docket) -> tuple[bool, str]:
        """Send one docket. Returns (True, "") or (False, reason); never raises, never blocks for
        longer than about two write timeouts."""
        import serial

        try:
            port = self._open()
            if self.dry_run:
                port.reset_input_buffer()
            elif self.status_check:
                port.reset_input_buffer()
                port.write(STATUS_REQUEST)
                answer = port.read(1)
                if not answer or not valid_status(answer[0]):
                    raise _PrinterProblem("the printer did not answer (off or unplugged?)")
                if answer[0] & 0b00001000:
                    raise _PrinterProblem("the printer is offline (cover open or out of paper?)")
            port.write(encode_docket(docket))
            return True, ""
        except _PrinterProblem as exc:
            why = str(exc)
        except serial.SerialTimeoutException:
            why = "the printer did not take the docket in time"
        except (serial.SerialException, OSError, ValueError) as exc:
            why = "no printer is connected"
            log.warning("docket printer %s: %s", self.url, exc)
        log.warning("docket %s not printed: %s", docket.challenge_id, why)
        self.close()
        return False, why

    def close(self) -> None:
        if self._port is not None:
            try:
                self._port.close()
            except Exception:  # closing a vanished device may fail in many ways; it is gone either way
                log.debug("closing %s failed", self.url, exc_info=True)
            self._port = None


class _PrinterProblem(Exception):
    """The printer cannot print: it did not answer its status request, or said it is offline."""
