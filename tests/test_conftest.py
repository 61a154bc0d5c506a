"""The tests' own isolation (tests/conftest.py): nothing a test or a fixture does lands in $HOME.

A module-wide fixture (a console, a demo hall) is made before a test's own function-scoped
directories are set, so it used to run with the real state directory: the console's results store
and TSH files piled up in ~/.local/share/rackside across every run on the machine, and one day's
pile (65 stored files) stopped every demo console from starting."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def module_wide_dirs():
    from rackside import paths

    return str(paths.state_dir()), str(paths.config_dir())


def test_module_wide_fixtures_get_private_directories_too(module_wide_dirs):
    home = os.path.expanduser("~")
    for d in module_wide_dirs:
        assert not d.startswith(home + os.sep), d
