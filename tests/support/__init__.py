"""Helpers the tests share (fixtures registered as pytest plugins by tests/conftest.py)."""
