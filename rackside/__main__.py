"""`python -m rackside`: the same as the `rackside` command."""

from rackside.cli import run

run()
