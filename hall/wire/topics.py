"""The hall's topic tree, v1 (docs/hall.md documents every topic and field). Pure: names only.

    rackside/v1/<hall>/table/<n>/status          retained "online" / "offline" (the Last Will)
    rackside/v1/<hall>/table/<n>/state           retained JSON snapshot
    rackside/v1/<hall>/table/<n>/event           QoS 1: each journal input, and the result
    rackside/v1/<hall>/table/<n>/result          retained: the last finished game's result (as its event)
    rackside/v1/<hall>/table/<n>/cmd             director -> clock, QoS 1
    rackside/v1/<hall>/table/<n>/ack             clock -> director: applied or refused, and why
    rackside/v1/<hall>/station/<id>/status       retained "online" / "offline"
    rackside/v1/<hall>/station/<id>/challenge    each challenge: table, lexicon checksum, verdict
    rackside/v1/<hall>/station/<id>/detail       per-word results: only the director may read it
    rackside/v1/<hall>/rules                     retained: the event's rules (hall.wire.eventrules), from the console;
                                                 every station reads its challenge rule from it
    rackside/v1/<hall>/enrol/<key-id>            a device's hello (its public key), retained; only the director reads it
    rackside/v1/<hall>/enrol/<key-id>/reply      the director's answer: the table or station it is now and its login
                                                 sealed to its key, retained; read by the device that knows <key-id>
"""

from __future__ import annotations

import re

from rackside.game.checkin import MAX_ROUND, MAX_TABLE  # the game's: table-N users and [hall] table are numbered by it

ROOT = "rackside/v1"
TABLE_TOPICS = ("status", "state", "event", "result", "cmd", "ack")
TABLE_WRITES = ("status", "state", "event", "result", "ack")  # what a table's clock publishes (its ACL)
STATION_TOPICS = ("status", "challenge", "detail")
# What may leave the hall for a trusted partner's broker (a bridge, hall.director.bridge; docs/publish.md):
# each table's state, result and status. Never a command or ack, an event (every journal input, the
# director's own among them), a station's challenge or per-word detail, nor enrolment.
PUBLIC_TABLE_TOPICS = ("state", "result", "status")
DIRECTOR = "director"

# A hall or station name is one topic level: no "/", "+", "#", no spaces, nothing a shell or an
# ACL file would need quoted.
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$")


def check_name(kind: str, value: object) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise ValueError(
            f"{kind} {value!r}: allowed are 1 to 48 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return value


def hall_root(hall: str) -> str:
    return f"{ROOT}/{hall}"


def table(hall: str, n: int | str, leaf: str) -> str:
    """A table's topic; `n` may be MQTT's one-level wildcard "+" to subscribe to every table's."""
    assert leaf in TABLE_TOPICS, leaf
    return f"{ROOT}/{hall}/table/{n}/{leaf}"


def station(hall: str, sid: str, leaf: str) -> str:
    assert leaf in STATION_TOPICS, leaf
    return f"{ROOT}/{hall}/station/{sid}/{leaf}"


def rules(hall: str) -> str:
    """The event's rules, retained (the console publishes them at each connection; issue 38)."""
    return f"{ROOT}/{hall}/rules"


def table_user(n: int) -> str:
    return f"table-{n}"


def station_user(sid: str) -> str:
    return f"station-{sid}"


def enrol_hello(hall: str, kid: str) -> str:
    """`kid`: the device's key id (hall.wire.join.key_id), or "+" to subscribe to every hello."""
    return f"{ROOT}/{hall}/enrol/{kid}"


def enrol_reply(hall: str, kid: str) -> str:
    return f"{ROOT}/{hall}/enrol/{kid}/reply"


# an event's id (issue 35): the console's event folder's name, sent with a new_game and carried by the
# clock's state of that game, so a console tells its own event's games from another's
EVENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

def parse_user(user: str) -> tuple[str, str]:
    """("table", "12") for "table-12", ("station", "1") for "station-1"; ValueError otherwise."""
    kind, _, ident = user.partition("-")
    if kind == "table" and ident.isdigit() and ident == str(int(ident)) and 1 <= int(ident) <= MAX_TABLE:
        return kind, ident
    if kind == "station" and ident:
        return kind, check_name("station", ident)
    raise ValueError(f"user {user!r}: allowed are table-N (N 1 to {MAX_TABLE}) and station-ID")


def parse(topic: str) -> tuple[str, str, str, str] | None:
    """(hall, "table"|"station", id, leaf) for a v1 topic, else None."""
    parts = topic.split("/")
    if len(parts) != 6 or "/".join(parts[:2]) != ROOT or parts[3] not in ("table", "station"):
        return None
    return parts[2], parts[3], parts[4], parts[5]
