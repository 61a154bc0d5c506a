"""A connection to the hall's broker: its URL and a device's `[hall]` settings and credentials, the
paho-mqtt session, finding the broker by mDNS. Used by the devices, the director and the console;
it imports only `hall.wire` of the hall (tests/test_architecture.py)."""
