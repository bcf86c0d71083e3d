"""Session-wide fixtures shared by every package's tests.

Each module in ``tests/fixtures/`` (for example a real Slurm or Ray cluster started once per
test session) is registered as a pytest plugin here, so any test in the repository can ask
for its fixtures by name. Modules are loaded from their files, not imported by package
name, so they work under ``--import-mode=importlib`` without touching ``sys.path``.

A fixture module is importable as ``torchx_test_fixtures_<stem>`` (the name it is registered
under), so a test or another fixture module can share its plain helpers, for example
``from torchx_test_fixtures_ports import free_loopback_port``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

_FIXTURES = Path(__file__).parent / "tests" / "fixtures"
_PREFIX = "torchx_test_fixtures_"


class _FixtureModules(importlib.abc.MetaPathFinder):
    """Finds ``torchx_test_fixtures_<stem>`` at tests/fixtures/<stem>.py, whichever module
    imports it first (fixture modules load in name order, and one may need a later one)."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX):
            return None
        file = _FIXTURES / f"{fullname.removeprefix(_PREFIX)}.py"
        return importlib.util.spec_from_file_location(fullname, file) if file.is_file() else None


# At import, not in pytest_configure: pytest imports the conftest.py files of the paths it is
# given (libs/tracking/tests/conftest.py, say) before it configures the plugins.
sys.meta_path.append(_FixtureModules())


def pytest_configure(config: pytest.Config) -> None:
    # Apps launched by tests (and by the torchx commands they run) keep their state and logs
    # in a throwaway directory, never in the user's ~/.local/state/torchx.
    if "TORCHX_TEST_KEEP_STATE" not in os.environ:
        state = tempfile.mkdtemp(prefix="torchx-test-state-")
        os.environ["XDG_STATE_HOME"] = state
        config.add_cleanup(lambda: shutil.rmtree(state, ignore_errors=True))
    for path in sorted(_FIXTURES.glob("*.py")):
        if path.name.startswith("_"):
            continue
        name = f"{_PREFIX}{path.stem}"
        config.pluginmanager.register(importlib.import_module(name), name)
