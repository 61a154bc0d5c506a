"""The table clock: the pure WESPA clock core and the firmware around it."""
