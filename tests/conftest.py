"""Settings every test shares: no real screen, sound card, GPIO or home directory is ever touched."""

import os

# Set before anything imports pygame or gpiozero: pygame runs for real on SDL's dummy drivers, and
# gpiozero's default pin factory is its own MockFactory.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
os.environ["GPIOZERO_PIN_FACTORY"] = "mock"

import tempfile  # noqa: E402

import pytest  # noqa: E402

# Module- and session-scoped fixtures (a console, a broker) start before `_private_dirs` below can
# set a test's own folders: they get this run's, never $HOME's (a console started by one used to
# keep its results and TSH files in ~/.local/share/rackside, read again by every later run).
_RUN_DIR = tempfile.mkdtemp(prefix="rackside-tests-")
os.environ["RACKSIDE_STATE_DIR"] = os.path.join(_RUN_DIR, "state")
os.environ["RACKSIDE_CONFIG_DIR"] = os.path.join(_RUN_DIR, "config")


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
# offline wheels (offline_wheels). Helpers
# live there, never in a test module (tests/test_architecture.py checks).
pytest_plugins = ["support.broker", "support.firmware_rig", "support.kiosk_rig", "support.hallclock", "support.bundle"]
