"""The hall's v1 contract, the one thing both ends speak: topic names, commands, the clock's and the
station's payloads, the join file and the enrolment messages, an update's specification and its
checks (docs/hall.md). It imports nothing else of `rackside.hall` (tests/test_architecture.py)."""
