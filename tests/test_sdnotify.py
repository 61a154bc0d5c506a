"""sd_notify over a real AF_UNIX datagram socket standing in for systemd."""

from __future__ import annotations

import logging
import os
import socket

import pytest

from rackside.hardware import sdnotify
from rackside.hardware.sdnotify import Notifier


@pytest.fixture
def systemd(tmp_path):
    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2)
    yield str(path), sock
    sock.close()


def test_ready_watchdog_status_stopping_reach_the_socket(systemd):
    path, sock = systemd
    n = Notifier({"NOTIFY_SOCKET": path})
    assert n.ready("clock running, table 12")
    assert sock.recv(4096) == b"READY=1\nSTATUS=clock running, table 12"
    assert n.watchdog()
    assert sock.recv(4096) == b"WATCHDOG=1"
    assert n.status("left display\nnot answering")  # one line: a newline would start a new field
    assert sock.recv(4096) == b"STATUS=left display not answering"
    assert n.stopping()
    assert sock.recv(4096) == b"STOPPING=1"
    n.close()


def test_abstract_namespace_socket():
    name = f"rackside-test-{os.getpid()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(2)
    try:
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).ready()
        assert sock.recv(4096) == b"READY=1"
    finally:
        sock.close()


def test_not_under_systemd_is_silent():
    n = Notifier({})
    assert not n.enabled
    assert n.ready() is False and n.watchdog() is False


def test_unreachable_socket_never_raises_and_logs_once(tmp_path, caplog, systemd):
    missing = tmp_path / "gone"
    n = Notifier({"NOTIFY_SOCKET": str(missing)})
    for _ in range(5):
        assert n.watchdog() is False
    assert sum("cannot notify systemd" in r.getMessage() for r in caplog.records) == 1
    # systemd comes back (here: a socket appears at that path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(missing))
    sock.settimeout(2)
    try:
        assert n.watchdog() is True
        assert sock.recv(4096) == b"WATCHDOG=1"
    finally:
        sock.close()


def test_unsupported_address_is_refused_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        n = Notifier({"NOTIFY_SOCKET": "vsock:2:1234"})
    assert not n.enabled and "not a unix socket path" in caplog.text


@pytest.mark.parametrize(
    "env, period",
    [
        ({"WATCHDOG_USEC": "10000000"}, 5_000_000_000),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(os.getpid())}, 5_000_000_000),
        ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"}, None),  # meant for another process
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({}, None),
    ],
)
def test_watchdog_period_is_half_of_watchdogsec(env, period):
    assert Notifier(env).watchdog_period_ns() == period


def test_module_functions_use_the_environment(systemd, monkeypatch):
    path, sock = systemd
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "20000000")
    monkeypatch.setattr(sdnotify, "_default", None)
    assert sdnotify.ready()
    assert sock.recv(4096) == b"READY=1"
    assert sdnotify.watchdog() and sock.recv(4096) == b"WATCHDOG=1"
    assert sdnotify.watchdog_period_ns() == 10_000_000_000
    sdnotify._default.close()
