"""The hall: every clock and station on an MQTT broker (Mosquitto), and the director's console.
Its rooms, by where the code runs: `wire` (the v1 contract), `net` (a connection to the broker),
`device` (a clock or a station), `director` and `console` (the director's machine);
docs/architecture.md, "The hall: rooms by where the code runs"."""
