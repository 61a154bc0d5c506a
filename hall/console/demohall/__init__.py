"""`rackside hall demo`: simulated tables speaking the wire, and a console to watch them.

docs/architecture.md, "The console by feature"."""
