"""The director's login: an scrypt password hash, a throttle on wrong passwords, sessions, CSRF tokens.

The hash lives in the console's config (`password = "scrypt:16384:8:1:SALT:HASH"`, base64 parts);
`rackside hall console --hash-password` makes one. stdlib `hashlib.scrypt` does the work, so no new
dependency. The session cookie itself is signed by Starlette's SessionMiddleware (itsdangerous),
with a secret made once and kept owner-only in the state dir (`session_secret`), so restarting the
console does not log the director out.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rackside import scrypthash
from rackside.atomic import write_atomic

from ..common import limits

log = logging.getLogger("rackside.hall.console")
N, R, P = 16384, 8, 1  # scrypt's interactive-login parameters (~16 MiB, tens of ms)
NAME_CHARS = 40  # the name typed at login, as kept (it goes out as a command's `by`)
_SID = re.compile(r"^[A-Za-z0-9_-]{43}$")


class HashError(ValueError):
    """A password hash that is not ours (names the expected form)."""


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    return scrypthash.make(password, salt or secrets.token_bytes(16), n=N, r=R, p=P)  # the kiosk's PIN's form too


def check_hash_form(stored: str) -> None:
    if not stored.startswith("scrypt:"):
        raise HashError("password must be 'scrypt:N:R:P:SALT:HASH' (make one with `rackside hall console --hash-password`)")
    try:
        scrypthash.parse(stored)
    except ValueError:
        raise HashError("password must be 'scrypt:N:R:P:SALT:HASH', SALT and HASH base64 "
                        "(make one with `rackside hall console --hash-password`)") from None


def verify_password(password: str, stored: str) -> bool:
    check_hash_form(stored)
    return scrypthash.verify(password, stored)


@dataclass
class _Record:
    failures: int = 0
    until: float = 0.0  # no try before this (monotonic)
    last: float = 0.0  # the last wrong password (monotonic)


class Throttle:
    """Wrong passwords slow down the address they come from and the name they were typed for, each
    on its own, with a back-off that doubles (limits.LOGIN_*): not one lock for everyone, which an
    outsider could keep shut by guessing every minute. A name's back-off holds only addresses that
    have guessed wrong themselves, so no one can lock the director out by typing their name from
    elsewhere, while guessing one name from many addresses still costs each address its back-off.
    Remembers at most MAX_THROTTLED addresses and names (the longest quiet forgotten first)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.records: OrderedDict[str, _Record] = OrderedDict()

    def _get(self, key: str) -> _Record | None:
        r = self.records.get(key)
        if r is not None and self.clock() - r.last > limits.LOGIN_FORGET_S:
            del self.records[key]
            return None
        return r

    def wait(self, source: str, name: str) -> float:
        """Seconds before this address may try this name again (0: now)."""
        now = self.clock()
        mine = self._get("addr:" + source)
        if mine is None:
            return 0.0
        theirs = self._get("name:" + name.casefold())
        return max(0.0, mine.until - now, (theirs.until - now) if theirs else 0.0)

    def failed(self, source: str, name: str) -> None:
        now = self.clock()
        for key in ("addr:" + source, "name:" + name.casefold()):
            r = self._get(key) or _Record()
            r.failures += 1
            r.last = now
            if r.failures >= limits.LOGIN_FREE_TRIES:
                r.until = now + min(limits.LOGIN_BACKOFF_S * 2 ** (r.failures - limits.LOGIN_FREE_TRIES), limits.LOGIN_BACKOFF_MAX_S)
            self.records[key] = r
            self.records.move_to_end(key)
        while len(self.records) > limits.MAX_THROTTLED:
            self.records.popitem(last=False)

    def succeeded(self, source: str, name: str) -> None:
        self.records.pop("addr:" + source, None)
        self.records.pop("name:" + name.casefold(), None)


@dataclass
class Session:
    user: str
    expires: float  # wall-clock epoch seconds


class Sessions:
    """The logged-in sessions, kept by the console (the cookie holds only a session's random id), so
    a logout ends the session everywhere: a copied cookie is worthless after it. Written owner-only
    to `path` at each login and logout, so a restart keeps everyone logged in; at most MAX_SESSIONS
    (a login past it ends the oldest), each for SESSION_S."""

    def __init__(self, path: Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        self.live: OrderedDict[str, Session] = OrderedDict()
        if path is not None:
            self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError, RecursionError):
            return  # none yet, or damaged: everyone logs in again
        if not isinstance(data, dict):
            return
        now = self.clock()
        for sid, s in list(data.items())[-limits.MAX_SESSIONS:]:
            if (_SID.match(str(sid)) and isinstance(s, dict) and isinstance(s.get("user"), str)
                    and isinstance(s.get("expires"), (int, float)) and s["expires"] > now):
                self.live[sid] = Session(s["user"][:NAME_CHARS], float(s["expires"]))

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(self.path, json.dumps({k: v.__dict__ for k, v in self.live.items()}), 0o600)
        except OSError as e:
            log.error("console: sessions %s: %s (a restart will log everyone out)", self.path, e)

    def new(self, user: str) -> str:
        sid = secrets.token_urlsafe(32)
        self.live[sid] = Session(user, self.clock() + limits.SESSION_S)
        while len(self.live) > limits.MAX_SESSIONS:
            self.live.popitem(last=False)
        self._save()
        return sid

    def get(self, sid: object) -> Session | None:
        s = self.live.get(sid) if isinstance(sid, str) else None
        if s is not None and s.expires <= self.clock():
            self.revoke(sid)
            return None
        return s

    def revoke(self, sid: object) -> None:
        if isinstance(sid, str) and self.live.pop(sid, None) is not None:
            self._save()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def same_token(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(a, b)


_SECRET = re.compile(r"^[0-9a-f]{64}$")


def session_secret(path: Path) -> str:
    """The secret the session cookies are signed with: read from `path`, or made and written there
    (0600) when it is missing or not one of ours (a damaged file is replaced whole, never used)."""
    try:
        text = path.read_text().strip()
        if _SECRET.match(text):
            return text
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    secret = secrets.token_hex(32)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, secret + "\n", 0o600)
    return secret
