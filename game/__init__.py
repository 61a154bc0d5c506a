"""The game: the pure rules of a WESPA game at the table (the clock, check-in, the director's call, the
result slip, the table composing them, the [clock] rules table) and the game's record (the journal's
format, its replay). Imports nothing of Rackside but the leaves (docs/architecture.md, "The game").
The clock program that runs on the Pi is firmware/; the hall speaks the game through hall/wire/."""
