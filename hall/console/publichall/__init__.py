"""The public hall: its documents, its own listener and its folder.

docs/architecture.md, "The console by feature"."""
