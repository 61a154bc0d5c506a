"""Rackside: table clocks, a challenge station and the hall network for word-game tournaments
played under the WESPA Game Rules.

Subsystems: `rackside.firmware` (the table clock), `rackside.kiosk` (the challenge station),
`rackside.hardware` (pins, displays, the simulated board), `rackside.judge` (the lexicon, the
verdict, penalties and the challenge log) and `rackside.hall` (the hall network and the director's
console; docs/architecture.md). `rackside.cli` is the `rackside` command; `rackside.paths` says
where configuration and state live. Importing this package imports nothing else, so every command
starts fast.
"""

__version__ = "0.1.0"


def running_version() -> str:
    """The version of the Rackside this process runs: the installed package's (a bundle stamps its
    own, e.g. 0.1.0+g1a2b3c4, so each Pi's /opt/rackside/<version>/ says which), else __version__.
    importlib.metadata is imported here, not with the package: it costs milliseconds (issue 11)."""
    from importlib import metadata

    try:
        return metadata.version("rackside")
    except metadata.PackageNotFoundError:
        return __version__
