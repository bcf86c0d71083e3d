"""AppRun and the environment the runner sets, in real child processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import torchx.tracker as tracker_pkg
from torchx.tracker import (
    AppRun,
    AppRunTrackableSource,
    Lineage,
    TrackerConfigError,
    build_trackers,
    tracker_config_env_var_name,
    trackers_from_environ,
)
from torchx.tracker.backend.fsspec import FsspecTracker, create

APP = textwrap.dedent(
    """
    import json, sys
    from torchx.tracker import AppRun, app_run_from_env
    run = app_run_from_env()
    assert run is AppRun.run_from_env()  # one per process
    run.add_metadata(rank=int(sys.argv[1]), lr=0.1)
    run.add_artifact(f"ckpt-{sys.argv[1]}", "/tmp/ckpt.pt", {"step": 10})
    print(json.dumps({"id": run.job_id(), "backends": [repr(b) for b in run.backends]}))
    """
)


def run_app(tmp_path: Path, env: dict[str, str], rank: int = 0) -> dict[str, object]:
    script = tmp_path / "app.py"
    script.write_text(APP)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TORCHX_")}
    done = subprocess.run(
        [sys.executable, str(script), str(rank)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_app_records_to_the_trackers_named_in_its_environment(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    env = {
        "TORCHX_JOB_ID": "local_cwd://torchx/app-1",
        "TORCHX_TRACKERS": "fsspec",
        "TORCHX_TRACKER_FSSPEC_CONFIG": str(root),
        "TORCHX_PARENT_RUN_ID": "local_cwd://torchx/app-0",
    }
    out = run_app(tmp_path, env)
    assert out["id"] == "local_cwd://torchx/app-1"
    reader = create(str(root))
    assert reader.metadata("local_cwd://torchx/app-1") == {"rank": 0, "lr": 0.1}
    assert list(reader.artifacts("local_cwd://torchx/app-1")) == ["ckpt-0"]
    assert reader.run_ids(parent_run_id="local_cwd://torchx/app-0") == ["local_cwd://torchx/app-1"]


def test_a_factory_named_by_module_path(tmp_path: Path) -> None:
    env = {
        "TORCHX_JOB_ID": "x://s/1",
        "TORCHX_TRACKERS": "mine",
        "TORCHX_TRACKER_MINE_FACTORY": "torchx.tracker.backend.fsspec:create",
        "TORCHX_TRACKER_MINE_CONFIG": str(tmp_path / "r"),
    }
    run_app(tmp_path, env)
    assert create(str(tmp_path / "r")).metadata("x://s/1")["lr"] == 0.1


def test_outside_torchx_the_run_is_undefined_and_writes_nothing(tmp_path: Path) -> None:
    out = run_app(tmp_path, {})
    assert out == {"id": "<UNDEFINED>", "backends": []}


def test_unknown_factories_are_errors_that_say_what_to_install() -> None:
    with pytest.raises(TrackerConfigError, match=r"no_such_tracker.*install"):
        trackers_from_environ({"TORCHX_TRACKERS": "no_such_tracker"})
    with pytest.raises(TrackerConfigError, match="has no function 'nope'"):
        build_trackers({"torchx.tracker.backend.fsspec:nope": None})
    with pytest.raises(TrackerConfigError, match=r"not a torchx\.tracker\.TrackerBase"):
        build_trackers({"os.path:join": "a"})
    with pytest.raises(TrackerConfigError) as wrong_signature:
        build_trackers({"os.path:samefile": "a"})  # takes two arguments, not the config
    assert str(wrong_signature.value) == (
        "tracker 'os.path:samefile' factory: got 'os.path:samefile'; it takes (f1, f2); name"
        " a function that takes one argument, the tracker's config string (None when unset),"
        " and returns a TrackerBase"
    )
    with pytest.raises(TrackerConfigError) as info:
        build_trackers("fsspec")  # type: ignore[arg-type]
    assert str(info.value) == (
        "build_trackers factory_and_config: got 'fsspec'; give a dict of factory -> config,"
        " e.g. {'fsspec': '/tmp/torchx_runs'}"
    )


def test_entry_point_factory_with_config(tmp_path: Path) -> None:
    [built] = build_trackers({"fsspec": str(tmp_path)})
    assert isinstance(built, FsspecTracker)
    assert tracker_config_env_var_name("my_t") == "TORCHX_TRACKER_MY_T_CONFIG"


def test_app_run_sources_and_children(tmp_path: Path) -> None:
    backend = create(str(tmp_path))
    parent = AppRun("p://s/1", [backend])
    child = AppRun("p://s/2", [backend])
    parent.add_metadata(lr=1)
    child.add_source(parent.job_id(), "model")
    [source] = child.sources()
    assert source == AppRunTrackableSource(AppRun("p://s/1", [backend]), "model")
    assert [c.job_id() for c in parent.children()] == ["p://s/2"]
    child.add_source(parent.job_id())  # as TORCHX_PARENT_RUN_ID records it
    child.add_source(parent.job_id(), "tokenizer")
    assert [c.job_id() for c in parent.children()] == ["p://s/2"]
    assert len(child.sources()) == 3
    assert AppRun("x", []).sources() == [] and AppRun("x", []).children() == []


def test_children_from_a_backend_written_for_07_without_lineage(tmp_path: Path) -> None:
    class Lineageless07(FsspecTracker):  # 0.7's backends raised here, as plugins may
        def lineage(self, run_id: str) -> Lineage:
            raise NotImplementedError

    backend = Lineageless07(create(str(tmp_path)).fs, str(tmp_path))
    AppRun("p://s/2", [backend]).add_source("p://s/1", "model")
    assert [c.job_id() for c in AppRun("p://s/1", [backend]).children()] == ["p://s/2"]


def test_public_api_is_listed() -> None:
    import torchx.tracker.api as api

    public = {n for n in vars(tracker_pkg) if not n.startswith("_") and n != "annotations"}
    assert sorted(tracker_pkg.__all__) == sorted(public - {"api", "backend", "mlflow"})
    lookups = {"load_group", "load_module"}  # 0.7's patch points, only in torchx.tracker.api
    for name in set(api.__all__) - lookups:
        assert getattr(api, name) is getattr(tracker_pkg, name)
