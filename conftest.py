"""Session-wide fixtures shared by every package's tests.

Each module in ``tests/fixtures/`` (for example a real Slurm or Ray cluster started once per
test session) is registered as a pytest plugin here, so any test in the repository can ask
for its fixtures by name. Modules are loaded from their files, not imported by package
name, so they work under ``--import-mode=importlib`` without touching ``sys.path``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

_FIXTURES = Path(__file__).parent / "tests" / "fixtures"


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
        name = f"torchx_test_fixtures_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        config.pluginmanager.register(module, name)
