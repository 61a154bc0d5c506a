"""The hall's state every feature reads: the tables (each device message checked), the event (its
divisions, seating and results over the store), who sits where, health, a request's checks.

docs/architecture.md, "The console by feature"."""
