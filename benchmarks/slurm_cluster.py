"""The Slurm test cluster of tests/fixtures/slurm.py, started for a benchmark.

Shared by the benchmarks that need a real Slurm controller (slurm_submit.py,
slurm_requeue.py, sweep.py); needs .ci/install_slurm.sh.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any


def _fixture_module() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "slurm.py"
    spec = importlib.util.spec_from_file_location("slurm_fixture", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["slurm_fixture"] = module
    spec.loader.exec_module(module)
    return module


def slurm_missing() -> str | None:
    """Why the test cluster cannot start here, or None."""
    reason: str | None = _fixture_module().slurm_missing()
    return reason


def require_slurm() -> None:
    """Exit with the reason where the test cluster cannot start here."""
    reason = slurm_missing()
    if reason:
        sys.exit(reason)


@contextmanager
def slurm_cluster(prefix: str, *, accounting: bool) -> Iterator[tuple[Path, Any]]:
    """A running test cluster: its scratch directory and the fixture's cluster object
    (``env``, ``partition``). Its environment is put into ``os.environ`` so torchx's Slurm
    scheduler talks to it; the daemons are stopped and the directory removed on exit."""
    fx = _fixture_module()
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    daemons = fx._Daemons(dict(os.environ))
    try:
        cluster = fx._start_cluster(root, daemons, accounting=accounting)
        os.environ.update(cluster.env)
        yield root, cluster
    finally:
        daemons.stop()
        shutil.rmtree(root, ignore_errors=True)
