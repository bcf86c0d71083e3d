"""0.7's patch points of torchx.tracker.api: load_group, load_module, run_from_env's cache."""

from __future__ import annotations

import os
from unittest import mock

import pytest

from torchx.tracker import (
    AppRun,
    TrackerBase,
    TrackerConfigError,
    build_trackers,
    trackers_from_environ,
)
from torchx.tracker import api as tracker_api
from torchx.tracker.backend.fsspec import FsspecTracker, create


def make_tracker(config: str | None) -> TrackerBase:
    return create(f"memory://patch-points/{config or 'none'}")


def test_a_patched_load_group_supplies_the_factories() -> None:
    factory = mock.MagicMock(side_effect=make_tracker)
    with mock.patch("torchx.tracker.api.load_group", return_value={"mine": factory}):
        (tracker,) = build_trackers({"mine": "cfg"})
        env = {"TORCHX_TRACKERS": "mine", "TORCHX_TRACKER_MINE_CONFIG": "other"}
        (from_env,) = trackers_from_environ(env)
    assert isinstance(tracker, FsspecTracker) and isinstance(from_env, FsspecTracker)
    assert factory.call_args_list == [mock.call("cfg"), mock.call("other")]


def test_a_patched_load_module_supplies_a_module_path_factory() -> None:
    factory = mock.MagicMock(return_value=make_tracker("m"))
    with (
        mock.patch("torchx.tracker.api.load_group", return_value=None),
        mock.patch("torchx.tracker.api.load_module", return_value=factory),
    ):
        (tracker,) = build_trackers({"some.module:create": "the-config"})
    factory.assert_called_once_with("the-config")
    assert isinstance(tracker, FsspecTracker)


def test_unpatched_lookups_import_module_paths_and_explain_what_is_missing() -> None:
    assert tracker_api.load_module("os.path:join") is os.path.join
    assert tracker_api.load_module("no_such_module_here:f") is None
    assert tracker_api.load_group("no.such.group") is None
    assert tracker_api.load_group("no.such.group", default={}) == {}
    with pytest.raises(TrackerConfigError, match="no_such_module_here"):
        build_trackers({"no_such_module_here:create": None})
    with pytest.raises(TrackerConfigError, match="has no function 'nope'"):
        build_trackers({"os.path:nope": None})


def test_run_from_env_cache_clear_builds_a_fresh_run() -> None:
    with mock.patch.dict(os.environ, {"TORCHX_JOB_ID": "local_cwd://s/one"}, clear=True):
        AppRun.run_from_env.cache_clear()  # type: ignore[attr-defined]
        first = AppRun.run_from_env()
        assert AppRun.run_from_env() is first and first.job_id() == "local_cwd://s/one"
    with mock.patch.dict(os.environ, {"TORCHX_JOB_ID": "local_cwd://s/two"}, clear=True):
        AppRun.run_from_env.cache_clear()  # type: ignore[attr-defined]
        second = AppRun.run_from_env()
        AppRun.run_from_env.cache_clear()  # type: ignore[attr-defined]
    assert second is not first and second.job_id() == "local_cwd://s/two"
