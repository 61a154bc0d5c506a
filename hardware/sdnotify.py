"""Telling systemd how we are: READY=1, WATCHDOG=1, STATUS=..., STOPPING=1 (sd_notify(3)).

The protocol is one datagram of newline-separated KEY=VALUE lines to the AF_UNIX socket named in
$NOTIFY_SOCKET (a path, or "@name" for the abstract namespace). Why not a library: `sdnotify` on
PyPI is the same ~30 lines but unreleased since 2017 and swallows every error silently;
`systemd-python` needs the libsystemd headers and a compiler on the Pi for one sendto(). This module
is stdlib only, says once in the log when notifications cannot be delivered, and never raises:
a clock must not stop because systemd is not listening (if the watchdog really stops arriving,
systemd restarts us, which is the point).

Use from a program's main loop::

    sdnotify.ready("clock running")          # after start-up, once the displays show the time
    period = sdnotify.watchdog_period_ns()   # None when the unit has no WatchdogSec=
    ...  every `period` ns (half of WatchdogSec=):  sdnotify.watchdog()
    sdnotify.stopping()                      # on a clean shutdown
"""

from __future__ import annotations

import os
# The C socket module, not `socket`: this module's one datagram needs only socket(), sendto() and
# close(), and `socket` (with `selectors`, `select`, `array`, enum classes) costs ~2.5 ms on import,
# which a station pays between its first frame and READY=1 (issue 11).
import _socket
from typing import Mapping

from rackside.outage import Outage


class _Log:
    """This module's logger, made at its first message: `logging` costs ~2-5 ms on import, and a
    healthy start logs nothing here (READY=1 goes out before the station sets up logging)."""

    def __getattr__(self, name):
        import logging

        return getattr(logging.getLogger(__name__), name)


log = _Log()


class Notifier:
    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self._env = env
        raw = env.get("NOTIFY_SOCKET", "")
        self.address: str | None = None
        if raw.startswith("/"):
            self.address = raw
        elif raw.startswith("@"):
            self.address = "\0" + raw[1:]
        elif raw:
            log.warning("NOTIFY_SOCKET=%r is not a unix socket path; systemd will not be notified", raw)
        self._sock: _socket.socket | None = None
        self.outage = Outage(
            log, "systemd notification",
            failed_msg="cannot notify systemd at " + repr(raw) + ": %(reason)s (logged once until it works again)",
            recovered_msg="notifying systemd again (after %(failures)d failed: %(reason)s)",
        )

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, *fields: str) -> bool:
        """Send KEY=VALUE fields in one datagram. True if delivered; False (never an exception)
        when not running under systemd or when the socket is unreachable (logged once per outage)."""
        if self.address is None:
            return False
        message = "\n".join(fields).encode("utf-8")
        try:
            if self._sock is None:
                self._sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_DGRAM | _socket.SOCK_CLOEXEC)
            self._sock.sendto(message, self.address)
        except OSError as exc:
            self.outage.failed(exc)
            return False
        self.outage.recovered()
        return True

    def ready(self, status: str | None = None) -> bool:
        return self.notify("READY=1", *([f"STATUS={_one_line(status)}"] if status else []))

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def status(self, text: str) -> bool:
        return self.notify(f"STATUS={_one_line(text)}")

    def stopping(self, status: str | None = None) -> bool:
        return self.notify("STOPPING=1", *([f"STATUS={_one_line(status)}"] if status else []))

    def watchdog_period_ns(self) -> int | None:
        """How often to call `watchdog()`: half of the unit's WatchdogSec= (systemd's advice), or
        None when no watchdog is set for this process."""
        pid = self._env.get("WATCHDOG_PID")
        if pid and pid != str(os.getpid()):
            return None
        try:
            usec = int(self._env.get("WATCHDOG_USEC", ""))
        except ValueError:
            return None
        return usec * 1000 // 2 if usec > 0 else None

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


_default: Notifier | None = None


def _notifier() -> Notifier:
    global _default
    if _default is None:
        _default = Notifier()
    return _default


def ready(status: str | None = None) -> bool:
    return _notifier().ready(status)


def watchdog() -> bool:
    return _notifier().watchdog()


def status(text: str) -> bool:
    return _notifier().status(text)


def stopping(status: str | None = None) -> bool:
    return _notifier().stopping(status)


def watchdog_period_ns() -> int | None:
    return _notifier().watchdog_period_ns()
