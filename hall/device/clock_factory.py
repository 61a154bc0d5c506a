"""The clock's hall output, as the outputs registry builds it (`firmware.outputs.BUILTIN["hall"]`):
a table's `HallOutput` (its credentials file names the table), or an `EnrolledOutput` (a join file:
the director numbers the clock, docs/fleet.md). The settings are `OutputContext.hall`: clock.toml's
`[hall]` with the command line's `--hall`, `--hall-credentials`, `--hall-join`, `--device-id` over
it (firmware.cli); each bad key is refused here, naming it."""

from __future__ import annotations

from pathlib import Path

from rackside.firmware.outputs import Output, OutputConfigError, OutputContext


def factory(context: OutputContext, settings: dict) -> Output:
    from rackside.hall.device.clock_output import HallOutput
    from rackside.hall.net.config import HallConfigError, from_table

    if settings:
        raise OutputConfigError(f"unknown key {sorted(settings)[0]!r}: the hall is set in [hall]")
    hall = context.hall
    if hall["join"] is not None:
        return _enrolled(context, hall)
    try:
        cfg = from_table(hall["section"], "table", url_override=hall["url"], base=hall["base"])
    except HallConfigError as e:
        raise OutputConfigError(str(e), option=e.option) from None
    # rackside paths' outbox; beside the journals when --state-dir moves them (tests, a second clock)
    outbox = cfg.outbox or _default_outbox(context, hall)
    return HallOutput(cfg, context.store.journal_dir, context.submit, outbox_path=outbox, clock_ns=context.clock_ns,
                      health=_health(context, hall), keypad=context.keypad)


def _health(context: OutputContext, hall: dict):
    """What the clock's health watch reads (hall.device.health): its state folder's card, its
    journal's write errors, the simulator's faults (`--fault`)."""
    from rackside.hall.device.health import Health
    from rackside.hall.wire.health import FaultError, check_faults

    try:
        faults = check_faults(hall.get("faults") or ())
    except FaultError as e:
        raise OutputConfigError(str(e)) from None
    store = context.store
    return Health(Path(context.state_dir), lambda: getattr(store, "write_errors", None), faults)


def _default_outbox(context: OutputContext, hall: dict) -> Path:
    from rackside import paths

    return paths.outbox() if hall["default_outbox"] else Path(context.state_dir) / "hall-outbox.sqlite"


def _enrolled(context: OutputContext, hall: dict) -> Output:
    """A clock joining with the hall's join file: numbered by the director."""
    from rackside import running_version
    from rackside.hall.device import joinfile as join
    from rackside.hall.net.config import HallConfigError, check_join_keys
    from rackside.hall.device.enrolled_output import EnrolledOutput

    table = hall["section"] if isinstance(hall["section"], dict) else {}
    try:
        check_join_keys(table)
        joinfile = join.load(Path(hall["join"]))
        if hall["url"]:  # --hall URL: over the join file's url, as over [hall] url
            from dataclasses import replace

            from rackside.hall.net.config import parse_url

            parse_url(hall["url"], "--hall", option=True)
            joinfile = replace(joinfile, url=hall["url"])
    except HallConfigError as e:
        raise OutputConfigError(str(e), option=e.option) from None
    outbox = table.get("outbox")
    if outbox is not None and not isinstance(outbox, str):
        raise OutputConfigError(f"hall.outbox = {outbox!r}: allowed is a file path")
    outbox = Path(outbox) if outbox else _default_outbox(context, hall)
    try:
        return EnrolledOutput(joinfile, Path(context.state_dir), context.store.journal_dir, context.submit, outbox_path=outbox,
                              clock_ns=context.clock_ns, device=hall["device"], version=running_version(),
                              health=_health(context, hall), keypad=context.keypad)
    except (HallConfigError, ValueError) as e:
        raise OutputConfigError(str(e), option=getattr(e, "option", None)) from None
