"""The runner hands every role the tracking environment: job id, trackers, parent run."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchx.runner import ConfigError, _tracking, get_configured_trackers, get_runner, load_config
from torchx.specs import AppDef, Role, SpecsError


def two_role_app() -> AppDef:
    return AppDef(
        name="trainer",
        roles=[
            Role(name="worker", image="", entrypoint="/bin/true", num_replicas=2, env={"A": "1"}),
            Role(name="ps", image="", entrypoint="/bin/true"),
        ],
    )


def write_config(text: str) -> None:
    Path(".torchxconfig").write_text(text)


CONFIG = """
[torchx:tracker]
fsspec=fsspec
mlflow=torchx.tracker.mlflow:create_tracker

[tracker:fsspec]
config=/data/runs
"""


def test_dryrun_sets_the_tracking_env_on_every_role_of_a_copy() -> None:
    write_config(CONFIG)
    app = two_role_app()
    with get_runner() as runner:
        info = runner.dryrun(app, "local_cwd", parent_run_id="local_cwd://torchx/parent-1")
    assert info.app is not None
    for role in info.app.roles:
        assert role.env["TORCHX_JOB_ID"] == "local_cwd://torchx/${app_id}"
        assert role.env["TORCHX_TRACKERS"] == "fsspec,mlflow"
        assert role.env["TORCHX_TRACKER_FSSPEC_CONFIG"] == "/data/runs"
        assert "TORCHX_TRACKER_MLFLOW_CONFIG" not in role.env
        assert role.env["TORCHX_TRACKER_MLFLOW_FACTORY"] == "torchx.tracker.mlflow:create_tracker"
        assert "TORCHX_TRACKER_FSSPEC_FACTORY" not in role.env
        assert role.env["TORCHX_PARENT_RUN_ID"] == "local_cwd://torchx/parent-1"
    assert info.app.roles[0].env["A"] == "1"
    assert app.roles[0].env == {"A": "1"}  # the caller's AppDef is untouched


def test_without_trackers_only_the_job_id_is_set() -> None:
    with get_runner() as runner:
        info = runner.dryrun(two_role_app(), "local_cwd")
    assert info.app is not None
    assert {k for k in info.app.roles[1].env if k.startswith("TORCHX_")} == {"TORCHX_JOB_ID"}


def test_launcher_environment_overrides_the_files(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(CONFIG)
    monkeypatch.setenv("TORCHX_TRACKERS", "fsspec")
    monkeypatch.setenv("TORCHX_TRACKER_FSSPEC_CONFIG", "s3://bucket/runs")
    monkeypatch.setenv("TORCHX_PARENT_RUN_ID", "from-env")
    assert get_configured_trackers() == {"fsspec": "s3://bucket/runs"}
    with get_runner() as runner:
        env = runner.dryrun(two_role_app(), "local_cwd").app.roles[0].env  # type: ignore[union-attr]
        assert env["TORCHX_TRACKERS"] == "fsspec"
        assert env["TORCHX_TRACKER_FSSPEC_CONFIG"] == "s3://bucket/runs"
        assert env["TORCHX_PARENT_RUN_ID"] == "from-env"
        # an explicit parent wins over the environment's
        info = runner.dryrun(two_role_app(), "local_cwd", parent_run_id="explicit")
        assert info.app.roles[0].env["TORCHX_PARENT_RUN_ID"] == "explicit"  # type: ignore[union-attr]


def test_bad_tracker_names_are_config_errors() -> None:
    write_config("[torchx:tracker]\nmy-tracker=fsspec\n")
    with pytest.raises(ConfigError, match=r"\[torchx:tracker\] my-tracker.*letters, digits"):
        load_config()
    write_config("[tracker:a b]\nconfig=x\n")
    with pytest.raises(ConfigError, match=r"tracker:a b"):
        load_config()


def test_bad_trackers_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHX_TRACKERS", "ok,not ok")
    with pytest.raises(SpecsError, match="TORCHX_TRACKERS"), get_runner() as runner:
        runner.dryrun(two_role_app(), "local_cwd")


def test_replicas_see_their_own_handle_and_parent(tmp_path: Path) -> None:
    write_config(f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={tmp_path}\n")
    out = tmp_path / "env"
    script = f'echo "$TORCHX_JOB_ID $TORCHX_PARENT_RUN_ID $TORCHX_TRACKERS" > {out}.$RANK'
    with get_runner() as runner:
        info = runner.dryrun_component("utils.sh", [script], "local_cwd", parent_run_id="p")
        assert info.app is not None
        assert info.app.roles[0].env["TORCHX_PARENT_RUN_ID"] == "p"
        handle = runner.run_component(
            "utils.sh", ["--num_replicas", "2", script], "local_cwd", parent_run_id="p"
        )
        status = runner.wait(handle, timeout=60)
    assert status is not None and status.state.name == "SUCCEEDED", status
    for rank in (0, 1):
        assert Path(f"{out}.{rank}").read_text() == f"{handle} p fsspec\n"


def test_variable_names_match_the_tracking_library() -> None:
    import torchx.tracker as tracker

    assert _tracking.ENV_TORCHX_JOB_ID == tracker.ENV_TORCHX_JOB_ID
    assert _tracking.ENV_TORCHX_TRACKERS == tracker.ENV_TORCHX_TRACKERS
    assert _tracking.ENV_TORCHX_PARENT_RUN_ID == tracker.ENV_TORCHX_PARENT_RUN_ID
    for name in ("fsspec", "my_t"):
        assert _tracking.tracker_config_env_var_name(name) == tracker.tracker_config_env_var_name(
            name
        )
        assert _tracking.tracker_factory_env_var_name(name) == tracker.tracker_factory_env_var_name(
            name
        )


@pytest.mark.parametrize(
    ("scheduler", "cfg"),
    [
        ("local_cwd", {}),
        ("local_docker", {}),
        ("slurm", {}),
        ("kubernetes", {}),
        ("ray", {"address": "127.0.0.1:8265"}),
    ],
)
def test_every_scheduler_request_carries_the_tracking_env(
    scheduler: str, cfg: dict[str, str]
) -> None:
    """Each scheduler turns role env into replica env; the request shows the variables."""
    write_config(CONFIG)
    app = AppDef(
        name="t",
        roles=[Role(name="w", image="python:3.11", entrypoint="python", num_replicas=2)],
    )
    with get_runner() as runner:
        if not runner.has_scheduler(scheduler):
            pytest.skip(f"{scheduler} is not installed")
        info = runner.dryrun(app, scheduler, cfg=cfg, parent_run_id="local_cwd://torchx/p-1")
    request = f"{info.request!r}\n{info}"
    for text in (
        "TORCHX_JOB_ID",
        "TORCHX_TRACKERS",
        "TORCHX_TRACKER_FSSPEC_CONFIG",
        "/data/runs",
        "TORCHX_PARENT_RUN_ID",
        "local_cwd://torchx/p-1",
    ):
        assert text in request, f"{scheduler}: {text} missing from the request"
