from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from torchx_test_fixtures_imports import ModulesAfter

from torchx.schedulers import (
    MissingDependencyError,
    Scheduler,
    UnknownSchedulerError,
    get_scheduler,
    get_scheduler_factories,
    require,
    scheduler_names,
)
from torchx.schedulers.local_scheduler import LocalScheduler


def test_local_cwd_is_registered() -> None:
    assert "local_cwd" in scheduler_names()
    assert "local_cwd" in get_scheduler_factories()
    s = get_scheduler("local_cwd", "sess")
    assert isinstance(s, LocalScheduler)
    assert s.session_name == "sess"
    assert s.backend == "local_cwd"


def test_unknown_scheduler_lists_the_known_ones() -> None:
    with pytest.raises(UnknownSchedulerError) as e:
        get_scheduler("lcoal_cwd")
    assert "lcoal_cwd" in str(e.value)
    assert "local_cwd" in str(e.value)


def test_unused_registry_names_are_gone() -> None:
    import torchx.schedulers as s

    for name in ("RESERVED_NAMES", "capability_table", "capabilities", "SchedulerCapabilities"):
        assert not hasattr(s, name), name


def test_missing_dependency_names_the_extra() -> None:
    with pytest.raises(MissingDependencyError) as e:
        require("torchx_no_such_client_lib", scheduler="ray", extra="ray")
    assert 'pip install "torchx-schedulers[ray]"' in str(e.value)
    assert "torchx_no_such_client_lib" in str(e.value)
    assert isinstance(e.value, ModuleNotFoundError)  # what 0.7 let through
    assert require("json", scheduler="x", extra="x").__name__ == "json"  # type: ignore[attr-defined]


def test_importing_schedulers_imports_no_scheduler_module(modules_after: ModulesAfter) -> None:
    loaded = modules_after(
        "import torchx.schedulers as s; s.scheduler_names(); s.get_scheduler_factories()"
    )
    assert "torchx.schedulers" in loaded
    assert "torchx.schedulers.local_scheduler" not in loaded


def test_entry_point_adds_a_scheduler(tmp_path: Path) -> None:
    # A real installed distribution (a dist-info on the path) declaring the entry point.
    dist = tmp_path / "fake_sched-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-sched\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[torchx.schedulers]\nfake = fake_sched_mod:create\n")
    (tmp_path / "fake_sched_mod.py").write_text(
        textwrap.dedent(
            """
            from torchx.schedulers.local_scheduler import LocalScheduler

            class FakeScheduler(LocalScheduler):
                pass

            def create(session_name, **kw):
                s = FakeScheduler(session_name, **kw)
                s.backend = "fake"
                return s
            """
        )
    )
    code = (
        "import torchx.schedulers as s;"
        "print(s.scheduler_names());"
        "print(type(s.get_scheduler('fake')).__name__)"
    )
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    names, cls = out.stdout.splitlines()
    assert "'fake'" in names and "'local_cwd'" in names
    assert cls == "FakeScheduler"


def test_scheduler_is_abstract() -> None:
    with pytest.raises(TypeError):
        Scheduler("x", "y")  # type: ignore[abstract]
