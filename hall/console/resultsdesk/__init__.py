"""The results desk: a table's result recorded, TSH's files imported, the exports and the audit.

docs/architecture.md, "The console by feature"."""
