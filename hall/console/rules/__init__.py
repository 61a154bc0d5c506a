"""The event's rules page (issue 38).

docs/architecture.md, "The console by feature"."""
