"""The paperless table (issue 27): check-ins, the director's calls, the signed slips.

docs/architecture.md, "The console by feature"."""
