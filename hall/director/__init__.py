"""What runs on the director's machine: provisioning a hall (broker config, dynamic security, TLS
files), running the broker, the fleet of devices and takeovers, `rackside hall tail`. It never
imports `hall.device` (tests/test_architecture.py)."""
