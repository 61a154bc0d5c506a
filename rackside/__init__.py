"""Rackside: table clocks, a challenge station and the hall network for word-game tournaments
played under the WESPA Game Rules.

Subsystems: `rackside.firmware` (the table clock), `rackside.kiosk` (the challenge station),
`rackside.hardware` (pins, displays, the simulated board). `rackside.cli` is the `rackside`
command; `rackside.paths` says where configuration and state live. Importing this package
imports nothing else, so every command starts fast.
"""

__version__ = "0.1.0"
