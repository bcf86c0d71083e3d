"""The modules of tests/fixtures, imported for a benchmark as the tests import them.

The root conftest.py makes each fixture module importable as ``torchx_test_fixtures_<stem>``
(fixture modules import their shared helpers by those names), so it is loaded first.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_CONFTEST = Path(__file__).resolve().parent.parent / "conftest.py"


def fixture_module(stem: str) -> ModuleType:
    """tests/fixtures/<stem>.py as ``torchx_test_fixtures_<stem>``."""
    if "torchx_root_conftest" not in sys.modules:
        spec = importlib.util.spec_from_file_location("torchx_root_conftest", _CONFTEST)
        assert spec is not None and spec.loader is not None
        conftest = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = conftest
        spec.loader.exec_module(conftest)
    return importlib.import_module(f"torchx_test_fixtures_{stem}")
