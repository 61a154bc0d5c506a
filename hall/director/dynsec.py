"""Mosquitto's dynamic-security plugin, as the hall uses it: who may connect, as which client id,
and read or write which topics. Pure: JSON values only (hall.director.dynsec_api sends them to the broker).

Every device is a plugin *client* (user name `table-12`, `station-1`) bound to one client id
(`clientid`: the broker refuses a connection whose id differs, so one device's credentials cannot
knock another off by reusing its id), holding one *role* of the same name that lists its own
topics. The client id is the user name with a random tail (`table-12-<16 hex>`, `client_id`), for a
device made up front by provisioning as for one the director enrolled: Mosquitto drops a connected
client when another connects with its client id, and the shared join client may connect with any.
The director is a client with no fixed client id (the console, `rackside hall tail` and
`rackside hall devices` connect at once) and the role `director`: the whole hall, and the plugin's
control topic (it creates and revokes devices). The join client (`join`, password: the join
secret) has the role `enrol`: publish a hello under `enrol/<key-id>`, subscribe to one reply topic
by its exact name (never `enrol/+/reply`: a device reads only the reply whose key id it knows,
hall.wire.join), nothing else. An enrolled device's client id is sent to it sealed to its own
key; a device made up front finds its own in its owner-only credentials file: nobody holding the
join file can name either, so no join client can knock one off by connecting with its client id
(Mosquitto 2.0's plugin binds a client to one exact id; it cannot keep the shared join client to
`enrol-...`: docs/security.md says why that holds). Anything not granted is refused
(`defaultACLAccess` all false but unsubscribe).

The password hash is the one Mosquitto's password file uses (hall.director.provision.hash_password:
PBKDF2-HMAC-SHA512, 101 iterations), stored as the plugin stores it: hash, salt and iterations apart.
"""

from __future__ import annotations

import secrets

from rackside.hall.wire import topics

CONTROL = "$CONTROL/dynamic-security/v1"
CONTROL_RESPONSE = CONTROL + "/response"
PLUGIN_PATHS = (
    "/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so",
    "/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so",
    "/usr/lib/arm-linux-gnueabihf/mosquitto_dynamic_security.so",
    "/usr/lib/mosquitto_dynamic_security.so",
)
JOIN_USER = "join"
ENROL_ROLE = "enrol"
DIRECTOR_ROLE = "director"


def client_id(user: str) -> str:
    """A new client id for the device `user`: its user name (so the broker's log and `hall tail`
    still say which device) and 64 random bits nobody without the device's credentials can guess."""
    return f"{user}-{secrets.token_hex(8)}"


def plugin_path() -> str:
    """Where this machine's Mosquitto keeps the plugin (Debian: the multiarch lib folder)."""
    from pathlib import Path

    for p in PLUGIN_PATHS:
        if Path(p).is_file():
            return p
    return PLUGIN_PATHS[0]


def acl(kind: str, topic: str, allow: bool = True) -> dict:
    return {"acltype": kind, "topic": topic, "allow": allow}


def read(topic: str) -> list[dict]:
    """Subscribe to exactly `topic` and receive what is published on it."""
    return [acl("subscribeLiteral", topic), acl("publishClientReceive", topic)]


def write(topic: str) -> dict:
    return acl("publishClientSend", topic)


def table_acls(hall: str, n: int) -> list[dict]:
    return [write(topics.table(hall, n, leaf)) for leaf in topics.TABLE_WRITES] + read(topics.table(hall, n, "cmd"))


def station_acls(hall: str, sid: str) -> list[dict]:
    """Its own topics, and the event's rules (its challenge rule, 3.10.15: issue 38)."""
    return [write(topics.station(hall, sid, leaf)) for leaf in topics.STATION_TOPICS] + read(topics.rules(hall))


def director_acls(hall: str) -> list[dict]:
    everything = f"{topics.hall_root(hall)}/#"
    return [
        write(everything), acl("publishClientReceive", everything), acl("subscribePattern", everything),
        write(CONTROL + "/#"), acl("publishClientReceive", CONTROL + "/#"), acl("subscribePattern", CONTROL + "/#"),
    ]


def enrol_acls(hall: str) -> list[dict]:
    """The join secret's whole power: a hello, and a reply read by its exact topic. The wildcard
    subscription to every reply is refused first (a higher priority): a device reads only the reply
    whose key id it knows. A reply carries a login sealed to one device's key, so even read it gives
    nobody else anything to log in with."""
    replies = topics.enrol_reply(hall, "+")
    return [write(topics.enrol_hello(hall, "+")), {**acl("subscribeLiteral", replies, False), "priority": 10},
            acl("subscribePattern", replies), acl("publishClientReceive", replies)]


def role(name: str, acls: list[dict]) -> dict:
    return {"rolename": name, "acls": acls}


def device_role(hall: str, user: str) -> dict:
    kind, ident = topics.parse_user(user)
    return role(user, table_acls(hall, int(ident)) if kind == "table" else station_acls(hall, ident))


def _current(hall: str, kept: dict) -> dict:
    """A kept role, with the ACLs its device's role has today (a role that is no device's, as kept)."""
    try:
        return device_role(hall, str(kept.get("rolename")))
    except ValueError:
        return kept


def client(user: str, hashed: str, roles: list[str], *, clientid: str | None = None, text: str = "") -> dict:
    """A plugin client from a password-file hash ($7$iterations$salt$hash)."""
    _, _, iterations, salt, digest = hashed.split("$")
    c = {"username": user, "textName": text, "password": digest, "salt": salt, "iterations": int(iterations),
         "roles": [{"rolename": r} for r in roles]}
    if clientid:
        c["clientid"] = clientid
    return c


ENROLLED_TEXT = "enrolled device"  # a client the director made for an enrolled device (its textname starts so)


def enrolled(config: dict) -> tuple[list[dict], list[dict]]:
    """The clients (and their roles) a plugin config holds for enrolled devices: what
    re-provisioning keeps (hall.director.provision)."""
    clients = [c for c in config.get("clients", []) if isinstance(c, dict)
               and str(c.get("textname", c.get("textName", ""))).startswith(ENROLLED_TEXT)]
    names = {r.get("rolename") for c in clients for r in c.get("roles", []) if isinstance(r, dict)}
    roles = [r for r in config.get("roles", []) if isinstance(r, dict) and r.get("rolename") in names]
    return clients, roles


def initial_config(hall: str, director_hash: str, join_hash: str, devices: dict[str, tuple[str, str]], *,
                   keep: tuple[list[dict], list[dict]] = ([], [])) -> dict:
    """The plugin's config file as provisioning writes it; `devices` maps a device's user name to its
    password hash and client id (tables and stations made up front; enrolled ones are added live). `keep`: the
    enrolled devices' clients and roles from the config this one replaces (`enrolled`), except any
    made up front now."""
    clients = [
        client(topics.DIRECTOR, director_hash, [DIRECTOR_ROLE], text="the director (console, tail, devices)"),
        client(JOIN_USER, join_hash, [ENROL_ROLE], text="any device with the hall's join file"),
    ]
    roles = [role(DIRECTOR_ROLE, director_acls(hall)), role(ENROL_ROLE, enrol_acls(hall))]
    for user, (hashed, cid) in devices.items():
        clients.append(client(user, hashed, [user], clientid=cid))
        roles.append(device_role(hall, user))
    kept_clients = [c for c in keep[0] if c.get("username") not in devices]
    kept_roles = {r for c in kept_clients for r in (x.get("rolename") for x in c.get("roles", []))}
    clients += kept_clients
    # a kept device's role as a device's role is now (a station enrolled before the event's rules
    # topic reads it too: issue 38), never the ACLs of the code that made it
    roles += [_current(hall, r) for r in keep[1] if r.get("rolename") in kept_roles]
    return {
        "clients": clients,
        "groups": [],
        "roles": roles,
        "defaultACLAccess": {"publishClientSend": False, "publishClientReceive": False, "subscribe": False, "unsubscribe": True},
    }


# --- the plugin's commands (its $CONTROL/dynamic-security/v1 API) ---------------------------------


def create_device(hall: str, user: str, password: str, clientid: str, *, text: str = "") -> list[dict]:
    """The commands that make a device's role and its client bound to `clientid` (`client_id(user)`).
    `text`: the client's textname (an enrolled device's starts with ENROLLED_TEXT)."""
    r = device_role(hall, user)
    c = {"command": "createClient", "username": user, "password": password, "clientid": clientid,
         "roles": [{"rolename": user}]}
    if text:
        c["textname"] = text[:200]
    return [{"command": "createRole", "rolename": user, "acls": r["acls"]}, c]


def delete_device(user: str) -> list[dict]:
    """Disconnects the device (the plugin kicks a deleted client) and forgets it and its role."""
    return [{"command": "deleteClient", "username": user}, {"command": "deleteRole", "rolename": user}]
