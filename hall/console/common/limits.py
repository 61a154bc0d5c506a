"""Every bound the console keeps, in one place (docs/console.md, "Limits", states them).

What crosses the console's two boundaries (the broker's messages, the browsers' requests) is
checked against these before it is kept, and everything the console remembers is bounded by them,
so neither a faulty or hostile device nor an outsider on the hall's network can make it grow.
"""

from __future__ import annotations

from dataclasses import dataclass

from rackside.hall.wire import messages, topics
from rackside.hall.wire import health as _health
from rackside.hall.wire import update as _update

# --- HTTP: before anything is read or anyone is known -----------------------------------------
MAX_BODY_BYTES = 2 * 1024 * 1024  # a request body (the login's too); TSH files are the largest we take:
# an event's config.tsh and .t files, or its tourney.js (a 3-division one is 130 KB, base64 a third more)
BODY_TIMEOUT_S = 30.0  # the whole body must arrive within this once the headers have
# ... but for an update's bundle (updates.py), the one body allowed to be larger: source and wheels
MAX_BUNDLE_BYTES = _update.MAX_BUNDLE_BYTES  # (hall.device.update: the clocks take no larger download)
BUNDLE_TIMEOUT_S = 600.0  # a 512 MB upload at 1 MB/s would not make it: a hall's network is faster
UPLOAD_PATH = "/api/update/bundle"
MAX_HEADER_BYTES = 16 * 1024  # a request's line and headers (uvicorn's h11_max_incomplete_event_size)
HEADER_TIMEOUT_S = 5.0  # the TLS handshake and a request's line and headers must arrive within this of the
# connection (or of the last response): a browser sends them at once; a crowd's connections are gone in 5 s
KEEP_ALIVE_S = 5  # an idle kept-alive connection is closed after this (uvicorn's timeout_keep_alive)
WRITE_STALL_S = 30.0  # a client that reads nothing of a response for this long is cut off
# Connections (guard.Crowd). Each TLS connection holds about 0.3 MiB (asyncio's 256 KiB read buffer
# and OpenSSL's state), so these bound the memory connections take: MAX_CONNECTIONS x 0.3 MiB in
# all, and (MAX_WAITING + MAX_ANONYMOUS_REQUESTS) x 0.3 MiB (about 58 MiB) for a crowd from a few addresses.
MAX_CONNECTIONS = 512  # open connections in all: past it a waiting one is closed, else the new one
MAX_CONNECTIONS_PER_SOURCE = 16  # from one address: more are closed at once (Chromium opens at most 6
# to one host, the event stream among them: two browsers on one laptop fit)
MAX_WAITING = 128  # connections waiting for a request (handshake, headers, kept alive): past it the oldest
# of the address with the most is closed, so a crowd churns its own and a new connection always gets in
# (addresses with one waiting each, a fleet fetching an update, only past MAX_CONNECTIONS)
MAX_ANONYMOUS_REQUESTS = 64  # requests in flight without the director's session (login page, a slow
# login body, an update download): a 503 above it; a request with a live session is never refused
BACKLOG = 128


@dataclass(frozen=True)
class Crowding:
    """A listener's connection caps (guard.Crowd): in all, from one address, waiting for a request."""

    connections: int
    per_source: int
    waiting: int


DIRECTOR = Crowding(MAX_CONNECTIONS, MAX_CONNECTIONS_PER_SOURCE, MAX_WAITING)
# The public listener ([public] listen, publicserve.py): phones and hall screens, read-only. Plain
# HTTP, so a connection holds no TLS state (the director's 0.3 MiB each is mostly TLS's buffer):
# more of them fit than the director's. A phone keeps one or two connections; 32 from one address
# lets a hall screen or a venue's NAT'ed guest network in. The caps are this listener's own: a crowd
# of phones never takes a connection the director's listener counts.
PUBLIC = Crowding(connections=2048, per_source=32, waiting=1024)
PUBLIC_MAX_AGE_S = 2  # how long a browser or a proxy may keep a public JSON document without asking again
PUBLIC_PAGE_MAX_AGE_S = 300  # ... and the page itself (its script and stylesheet)
# a public document read back from the [public] folder after a restart (publicserve.read_view), at
# most: the largest, players.json, is about 200 bytes a player (a few hundred KiB for a big event)
PUBLIC_DOC_BYTES = 16 * 1024 * 1024

# --- TSH files -------------------------------------------------------------------------------------
MAX_TSH_FILES = 64  # files in one import (config.tsh and a .t file per division)
MAX_PROBLEMS_SHOWN = 500  # import and seating problems sent to the page at once (each names its file and line)
# A score typed from a slip or decided by the director, a lateness margin, a device's margin: the
# wire's bound (hall.wire.messages), before anything else looks at it (TSH's own limits,
# results.Limits, are checked after, with the event's `config max_score`).
SCORE_BOUND = messages.SCORE_BOUND

# --- event streams -----------------------------------------------------------------------------
MAX_STREAMS = 100  # open event streams (/api/events, one a page; an open table's history comes on it): a 503 above it
STREAM_QUEUE_BYTES = 4 * 1024 * 1024  # a stream's unsent messages: past this it is dropped and the page resyncs
KEEPALIVE_S = 15.0  # a comment line on an idle stream

# --- login ---------------------------------------------------------------------------------------
LOGIN_FREE_TRIES = 5  # wrong passwords from one address, or for one name, before the back-off
LOGIN_BACKOFF_S = 2.0  # the first back-off; each further wrong password doubles it ...
LOGIN_BACKOFF_MAX_S = 300.0  # ... up to this
LOGIN_FORGET_S = 3600.0  # an address or name with no wrong password for this long starts afresh
MAX_THROTTLED = 4096  # addresses and names remembered by the throttle (the oldest forgotten first)
SESSION_S = 12 * 3600  # a session's life
MAX_SESSIONS = 64  # live sessions: a new login past this ends the oldest

# --- the broker's messages ---------------------------------------------------------------------
MAX_TABLE = topics.MAX_TABLE  # table numbers are 1..MAX_TABLE (hall.wire.topics: the hall's limit)
MAX_STATIONS = 64  # stations remembered
MAX_DEPTH = 4  # nesting of any device payload (a state's players are 3 deep)
MAX_PAYLOAD = {"status": _health.MAX_STATUS_BYTES, "state": 4096, "event": 4096, "ack": 2048, "result": 4096,
               "challenge": 4096, "detail": 16384}  # bytes, by topic leaf
DEVICE_RATE = 50.0  # messages a second from one device, sustained ...
DEVICE_BURST = 2000  # ... after a burst of this many (a clock's outbox after an outage)
PROBLEMS_PER_DEVICE = 10  # a device's latest refused messages, shown on its tile
PROBLEMS = 50  # the hall's latest problems
TWICE_WHY_CHARS = 600  # a kept "used twice" mark's why (hallstate's own sentences are shorter), read back after a restart
HISTORY = 400  # a table's history entries (its current game: a game has a few hundred inputs)
GAMES_REMEMBERED = 4  # per table, the games whose highest seq is remembered (de-duplication)
GAMES_BOUND = 64  # per table, the clock games bound to their round (hallstate, the results store): a day's rounds and more
MAX_GAP = 5000  # a table's missing seqs remembered per game; a wider gap is asked for from its start
FEED = 300  # challenges in the feed
CHALLENGES = 2000  # challenges kept with their per-word results (the oldest forgotten first)
PENDING = 2000  # commands awaiting their ack
RESEND_EVERY_S = 10.0  # at most one resend request a table in this long ...
RESEND_BACKOFF_MAX_S = 600.0  # ... doubling with each refusal in a row, up to this
GAP_GRACE_S = 2.0  # a gap (or events a state says exist) this old is asked for: younger ones may be on their way
GAP_CHECK_S = 1.0  # how often the gaps are looked at
RESENDS_AT_ONCE = 20  # tables asked in one look (a restarted console asks every table, a few at a time)

# --- updates (updates.py) -------------------------------------------------------------------------
UPDATE_TOKEN_S = 6 * 3600.0  # a table's download token lasts this long (tokens kept: MAX_TABLE at most)
BETWEEN_ROUNDS_WAIT_S = _update.MAX_WAIT_S  # "between rounds": a clock waits this long for its game to end
