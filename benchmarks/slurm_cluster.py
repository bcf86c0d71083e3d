"""The Slurm test cluster of tests/fixtures/slurm.py, started for a benchmark.

Shared by the benchmarks that need a real Slurm controller (slurm_submit.py,
slurm_requeue.py, sweep.py); needs .ci/install_slurm.sh.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from fixture_modules import fixture_module


def _fixture_module() -> ModuleType:
    """tests/fixtures/slurm.py, imported as the tests import it."""
    return fixture_module("slurm")


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
def slurm_cluster(
    prefix: str, *, accounting: bool, min_jobs: int = 0
) -> Iterator[tuple[Path, Any]]:
    """A running test cluster: its scratch directory and the fixture's cluster object
    (``env``, ``partition``). Its environment is put into ``os.environ`` so torchx's Slurm
    scheduler talks to it; the daemons are stopped and the directory removed on exit.
    ``min_jobs``: the fewest jobs its MaxJobCount must allow; the fixture's (Slurm's
    default) when that is more."""
    fx = _fixture_module()
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    daemons = fx._Daemons(dict(os.environ))
    try:
        max_jobs = max(min_jobs, fx.MAX_JOBS)
        cluster = fx._start_cluster(root, daemons, accounting=accounting, max_jobs=max_jobs)
        os.environ.update(cluster.env)
        yield root, cluster
    finally:
        daemons.stop()
        shutil.rmtree(root, ignore_errors=True)
