"""What runs on a table clock or a challenge station: the clock's hall output, its outbox and
publisher, command intake, journal recovery, enrolment with the join file, updates from the console,
the station's publisher. It never imports `hall.director` or `hall.console` (tests/test_architecture.py)."""
