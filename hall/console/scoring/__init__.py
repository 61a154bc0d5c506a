"""Results and TSH: a result worked out and recorded, the results store and its audit, TSH's files
read and written (tourney.js live), the seating plan and the standings.

docs/architecture.md, "The console by feature"."""
