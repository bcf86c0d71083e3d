"""Every scheduler against the same contract: the same AppDefs through each one's dryrun,
then (on the engines that run here: local, Slurm, Ray, Docker) the same apps for real."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from torchx.runner import get_runner
from torchx.schedulers import TORCHX_VARIABLES, Scheduler, get_scheduler, scheduler_names
from torchx.specs import AppDef, AppDryRunInfo, AppState, Role, SpecsError

BUILTINS = ("local_cwd", "local_dir", "slurm", "ray", "kubernetes", "local_docker")
# What each scheduler needs to dry-run without a backend.
DRYRUN_CFG: dict[str, dict[str, Any]] = {
    "local_cwd": {},
    "local_dir": {},
    "slurm": {},
    "ray": {"address": "127.0.0.1:8265"},
    "kubernetes": {},
    "local_docker": {},
}
PARAMS: dict[str, dict[str, Any]] = {"local_docker": {"base_url": "unix:///nonexistent.sock"}}
ID_SUFFIX = r"-[a-z][a-z2-7]{11}"


def _scheduler(name: str, tmp_path: Path) -> Scheduler[Any]:
    params = dict(PARAMS.get(name, {}))
    if name.startswith("local_") and name != "local_docker":
        params["state_dir"] = str(tmp_path / "state")
    return get_scheduler(name, "conformance", **params)


def _image(name: str, tmp_path: Path) -> str:
    if name in ("local_cwd", "local_dir"):
        return str(tmp_path)  # a directory: what local_dir requires
    return "busybox:1"


def _app(name: str, tmp_path: Path, app_name: str = "trainer", role_name: str = "r") -> AppDef:
    role = Role(
        role_name,
        image=_image(name, tmp_path),
        entrypoint="sh",
        args=["-c", 'echo "$TORCHX_ROLE_NAME $TORCHX_REPLICA_ID $FOO"'],
        num_replicas=2,
        env={
            # the role tries to override every torchx variable and one launch default
            "TORCHX_APP_ID": "mine",
            "TORCHX_ROLE_NAME": "mine",
            "TORCHX_REPLICA_ID": "mine",
            "TORCHX_RANK0_HOST": "mine",
            "MASTER_PORT": "1234",
            "FOO": "bar",
        },
    )
    return AppDef(app_name, roles=[role])


def _replica_envs(name: str, info: AppDryRunInfo[Any]) -> list[dict[str, str]]:
    """Each replica's environment as the request carries it, in replica order."""
    req = info.request
    if name in ("local_cwd", "local_dir"):
        return [r.env for r in req.replicas]
    if name == "local_docker":
        return [dict(e.split("=", 1) for e in c.config["Env"]) for c in req.containers]
    if name == "ray":
        return [rep["env"] for role in req.driver_config["roles"] for rep in role["replicas"]]
    if name == "kubernetes":
        task = req.manifests[0]["spec"]["tasks"][0]
        env = task["template"]["spec"]["containers"][0]["env"]
        return [{e["name"]: e["value"] for e in env}] * task["replicas"]
    assert name == "slurm"
    return [req.replicas["r"].env] * req.replicas["r"].num_replicas


def _app_id(name: str, info: AppDryRunInfo[Any]) -> str | None:
    req = info.request
    if name == "ray":
        return str(req.submission_id)
    if name == "slurm":
        return None  # Slurm gives the job its id at submission
    return str(req.app_id)


def test_every_builtin_is_registered() -> None:
    assert set(BUILTINS) <= set(scheduler_names())


@pytest.mark.parametrize("name", BUILTINS)
def test_same_torchx_variables_with_the_same_precedence(name: str, tmp_path: Path) -> None:
    s = _scheduler(name, tmp_path)
    info = s.submit_dryrun(_app(name, tmp_path), DRYRUN_CFG[name])
    envs = _replica_envs(name, info)
    assert len(envs) == 2
    for k, env in enumerate(envs):
        # torchx's variables win over the role's env...
        assert env["TORCHX_ROLE_NAME"] == "r"
        assert env["TORCHX_REPLICA_ID"] in (str(k), "${replica_id}", "$(VC_TASK_INDEX)")
        for var in TORCHX_VARIABLES:
            assert env.get(var) != "mine", (var, env)
        # ...and the role's env over the scheduler's launch defaults
        assert env["MASTER_PORT"] == "1234" and env["FOO"] == "bar"
        if name != "ray":  # the Ray driver adds its launch defaults on the cluster
            assert env["PYTHONUNBUFFERED"] == "1"


@pytest.mark.parametrize("name", BUILTINS)
def test_app_ids_follow_one_rule(name: str, tmp_path: Path) -> None:
    s = _scheduler(name, tmp_path)
    ids = set()
    for _ in range(3):
        app_id = _app_id(name, s.submit_dryrun(_app(name, tmp_path), DRYRUN_CFG[name]))
        if app_id is None:
            pytest.skip(f"{name} names its apps when they are submitted")
        assert re.fullmatch("trainer" + ID_SUFFIX, app_id), app_id
        ids.add(app_id)
    assert len(ids) == 3


@pytest.mark.parametrize("name", BUILTINS)
@pytest.mark.parametrize(
    ("app_name", "role_name"), [("../../x", "r"), ("trainer", "../x"), ("a/b", "r")]
)
def test_names_that_could_escape_a_directory_are_refused(
    name: str, app_name: str, role_name: str, tmp_path: Path
) -> None:
    s = _scheduler(name, tmp_path)
    app = _app(name, tmp_path, app_name, role_name)
    with pytest.raises(SpecsError, match="not valid"):
        s.submit_dryrun(app, DRYRUN_CFG[name])
    with pytest.raises(SpecsError, match="not valid"):
        s.submit(app, DRYRUN_CFG[name])
    assert not (tmp_path.parent / "x").exists()


@pytest.mark.parametrize("name", BUILTINS)
def test_unknown_parameters_are_refused(name: str) -> None:
    with pytest.raises(SpecsError) as e:
        get_scheduler(name, "s", no_such_param=1)
    assert f"{name} scheduler parameter" in str(e.value) and "no_such_param" in str(e.value)


@pytest.mark.parametrize("name", BUILTINS)
def test_a_runner_with_state_dir_works_with_every_scheduler(name: str, tmp_path: Path) -> None:
    runner = get_runner("conformance", state_dir=str(tmp_path / "state"), **PARAMS)
    assert runner.scheduler_run_opts(name).resolve(DRYRUN_CFG[name]) is not None
    info = runner.dryrun(_app(name, tmp_path), name, cfg=DRYRUN_CFG[name])
    assert info.scheduler == name


# -- the same apps for real --------------------------------------------------------------


@pytest.fixture
def real(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Scheduler[Any], dict[str, Any], str]]:
    """(scheduler, run options, an app id it does not know) for each engine that runs here."""
    name = request.param
    if name == "local_cwd":
        s: Scheduler[Any] = get_scheduler(name, "t", state_dir=str(tmp_path / "state"))
        cfg: dict[str, Any] = {}
        unknown = "nope-aaaaaaaaaaaa"
    elif name == "slurm":
        request.getfixturevalue("slurm_env")
        s, cfg, unknown = get_scheduler(name, "t"), {"job_dir": str(tmp_path / "job")}, "999999"
    elif name == "ray":
        cluster = request.getfixturevalue("ray_cluster")
        s, cfg = get_scheduler(name, "t", address=cluster.address), {}
        unknown = f"{cluster.address.split('://')[-1]}-nope-aaaaaaaaaaaa"
    else:
        engine = request.getfixturevalue("docker_engine")
        s = get_scheduler(name, "t", base_url=engine.base_url)
        cfg, unknown = {"network": "host", "shm_size": "64m"}, "nope-aaaaaaaaaaaa"
        request.node.image = engine.image
    yield s, cfg, unknown
    s.close()


@pytest.mark.parametrize("real", ["local_cwd", "slurm", "ray", "local_docker"], indirect=True)
def test_the_same_app_runs_and_cancel_is_a_no_op(
    real: tuple[Scheduler[Any], dict[str, Any], str],
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    s, cfg, unknown = real
    app = _app(s.backend, tmp_path)
    if s.backend == "local_docker":
        app.roles[0].image = request.node.image
    s.cancel(unknown)  # an app it never had: nothing happens
    app_id = s.submit(app, cfg)
    desc = s.wait(app_id, timeout=120)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    for k in range(2):
        assert list(s.log_iter(app_id, "r", k)) == [f"r {k} bar\n"]
    s.cancel(app_id)  # ended: nothing happens
    desc = s.describe(app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED
