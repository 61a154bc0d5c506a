"""Settings every test shares: no real screen, sound card, GPIO or home directory is ever touched."""

import os

# Set before anything imports pygame or gpiozero: pygame runs for real on SDL's dummy drivers, and
# gpiozero's default pin factory is its own MockFactory.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
os.environ["GPIOZERO_PIN_FACTORY"] = "mock"

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Hypothesis times every example (200 ms by default) and fails one that overran, which a loaded
# machine does to a pure function now and then: speed is bench/'s to measure, never a unit test's
# (issue 24 item 5), so no property test has a deadline.
settings.register_profile("rackside", deadline=None)
settings.load_profile("rackside")


@pytest.fixture(scope="session", autouse=True)
def _private_dirs_for_the_session(tmp_path_factory):
    """Session- and module-wide fixtures (a console, a demo hall) are made before a test's own
    directories below: they get the session's, never the real ones in $HOME."""
    patch = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("rackside-session")
    patch.setenv("RACKSIDE_STATE_DIR", str(root / "state"))
    patch.setenv("RACKSIDE_CONFIG_DIR", str(root / "config"))
    yield
    patch.undo()


@pytest.fixture(autouse=True)
def _private_dirs(tmp_path_factory, monkeypatch):
    """Each test gets its own state and config directories, so nothing lands in $HOME or /etc."""
    root = tmp_path_factory.mktemp("rackside")
    monkeypatch.setenv("RACKSIDE_STATE_DIR", str(root / "state"))
    monkeypatch.setenv("RACKSIDE_CONFIG_DIR", str(root / "config"))


# Shared rigs whose fixtures any test module may use without importing them (tests/support/): the
# hall's real Mosquitto (hall_broker, make_broker), the firmware `rig`, the kiosk `app`, the bundles'
# offline wheels (offline_wheels), a module's headless Chromium (browser). Helpers
# live there, never in a test module (tests/test_architecture.py checks).
pytest_plugins = ["support.broker", "support.firmware_rig", "support.kiosk_rig", "support.hallclock", "support.bundle", "support.browser"]
