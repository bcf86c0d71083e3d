"""Every scheduler against the same contract: the same AppDefs through each one's dryrun,
then (on the engines that run here: local, Slurm, Ray, Docker) the same apps for real.

``ProcessScheduler`` is the schedulers README's example, a scheduler written with the hooks
alone; it goes through the same tests.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from torchx.runner import get_runner
from torchx.schedulers import (
    TORCHX_VARIABLES,
    DescribeAppResponse,
    LogRequest,
    Scheduler,
    Stream,
    get_scheduler,
    make_unique,
    role_replicas,
    scheduler_names,
)
from torchx.specs import AppDef, AppDryRunInfo, AppState, CfgVal, Role, SpecsError

# -- the README's example: a scheduler written with the hooks alone ---------------------


@dataclass
class ProcessRequest:
    app_id: str
    log_dir: str
    replicas: list[tuple[str, int, list[str], dict[str, str]]]  # role, k, argv, env


class ProcessScheduler(Scheduler[ProcessRequest]):
    """Runs each replica as a child process of this object, its output in a file."""

    log_streams = (Stream.COMBINED,)  # stdout and stderr go to one file

    def __init__(self, session_name: str, log_dir: str) -> None:
        super().__init__("processes", session_name)
        self.log_dir = log_dir
        self.apps: dict[str, list[subprocess.Popen[bytes]]] = {}

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[ProcessRequest]:
        app_id = make_unique(app.name)
        replicas = [
            (role.name, r.k, r.argv, r.env)
            for role in app.roles
            for r in role_replicas(role, app_id=app_id, rank0_host="localhost", master_port=29500)
        ]
        return AppDryRunInfo(ProcessRequest(app_id, self.log_dir, replicas), repr)

    def schedule(self, dryrun_info: AppDryRunInfo[ProcessRequest]) -> str:
        req = dryrun_info.request
        procs = []
        for role, k, argv, env in req.replicas:
            with open(os.path.join(req.log_dir, f"{req.app_id}-{role}-{k}.log"), "wb") as out:
                procs.append(
                    subprocess.Popen(argv, env={**os.environ, **env}, stdout=out, stderr=out)
                )
        self.apps[req.app_id] = procs
        return req.app_id

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        if app_id not in self.apps:
            return None
        codes = [p.poll() for p in self.apps[app_id]]
        if None in codes:
            state = AppState.RUNNING
        elif all(c == 0 for c in codes):
            state = AppState.SUCCEEDED
        else:
            state = AppState.FAILED
        return DescribeAppResponse(app_id, state)

    def _cancel_existing(self, app_id: str) -> None:
        for p in self.apps[app_id]:
            p.kill()
            p.wait()

    def _replica_log(self, request: LogRequest) -> Iterable[str]:
        path = os.path.join(self.log_dir, f"{request.app_id}-{request.role_name}-{request.k}.log")
        if not os.path.exists(path):
            raise SpecsError("replica", request.k, "no such replica; `describe` lists them")
        f = open(path)  # noqa: SIM115 -- read as the lines are asked for
        # readlines() returns what was written since the last call: follow with it.
        return self._follow(request.app_id, f.readlines, request.follow)


BUILTINS = ("local_cwd", "local_dir", "slurm", "ray", "kubernetes", "local_docker")
EVERY = (*BUILTINS, "processes")
# What each scheduler needs to dry-run without a backend.
DRYRUN_CFG: dict[str, dict[str, Any]] = {
    "processes": {},
    "local_cwd": {},
    "local_dir": {},
    "slurm": {},
    "ray": {"address": "127.0.0.1:8265"},
    "kubernetes": {},
    "local_docker": {},
}
PARAMS: dict[str, dict[str, Any]] = {"local_docker": {"base_url": "unix:///nonexistent.sock"}}
ID_SUFFIX = r"-[a-z][a-z2-7]{11}"
# The image each engine's apps run (set by the ``real`` fixture where it matters).
IMAGES: dict[str, str] = {}


def _scheduler(name: str, tmp_path: Path) -> Scheduler[Any]:
    if name == "processes":
        return ProcessScheduler("conformance", str(tmp_path))
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
    if name == "processes":
        return [env for _, _, _, env in req.replicas]
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


@pytest.mark.parametrize("name", EVERY)
def test_same_torchx_variables_with_the_same_precedence(name: str, tmp_path: Path) -> None:
    s = _scheduler(name, tmp_path)
    info = s.submit_dryrun(_app(name, tmp_path), DRYRUN_CFG[name])
    envs = _replica_envs(name, info)
    assert len(envs) == 2
    for k, env in enumerate(envs):
        # torchx's variables win over the role's env...
        assert env["TORCHX_ROLE_NAME"] == "r"
        assert env["TORCHX_REPLICA_ID"] in (str(k), "${SLURM_PROCID}", "$(VC_TASK_INDEX)")
        for var in TORCHX_VARIABLES:
            assert env.get(var) != "mine", (var, env)
        # ...and the role's env over the scheduler's launch defaults
        assert env["MASTER_PORT"] == "1234" and env["FOO"] == "bar"
        if name != "ray":  # the Ray driver adds its launch defaults on the cluster
            assert env["PYTHONUNBUFFERED"] == "1"


@pytest.mark.parametrize("name", EVERY)
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


@pytest.mark.parametrize("name", EVERY)
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
    if name == "processes":
        s: Scheduler[Any] = ProcessScheduler("t", str(tmp_path))
        cfg: dict[str, Any] = {}
        unknown = "nope-aaaaaaaaaaaa"
    elif name == "local_cwd":
        s = get_scheduler(name, "t", state_dir=str(tmp_path / "state"))
        cfg = {}
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
        request.node.image = IMAGES[name] = engine.image
    yield s, cfg, unknown
    s.close()


@pytest.mark.parametrize(
    "real", ["processes", "local_cwd", "slurm", "ray", "local_docker"], indirect=True
)
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


def test_the_hooks_alone_answer_every_log_request(tmp_path: Path) -> None:
    s = ProcessScheduler("t", str(tmp_path))
    app = AppDef("x", [Role("r", image="", entrypoint="sh", args=["-c", "echo a; echo b"])])
    app_id = s.submit(app)
    assert next(iter(s.log_iter(app_id, "r", should_tail=True))) == "a\n"
    s.wait(app_id, timeout=120)
    assert list(s.log_iter(app_id, "r", regex="b")) == ["b\n"]
    with pytest.raises(SpecsError, match="streams"):
        s.log_iter(app_id, "r", streams=Stream.STDERR)
    with pytest.raises(SpecsError, match="regex"):
        s.log_iter(app_id, "r", regex="(")
    with pytest.raises(SpecsError, match="replica"):
        s.log_iter(app_id, "r", k=3)


# -- workspaces: what .torchxignore lists never reaches a job ----------------------------

LIST_FILES = "find . -name '*.txt' | sort"


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "keep.txt").write_text("kept")
    (ws / "secret.txt").write_text("not for jobs")
    (ws / "data" / "big.txt").write_text("not for jobs either")
    (ws / ".torchxignore").write_text("# what jobs do not get\nsecret.txt\ndata\n")
    return ws


@pytest.mark.parametrize("real", ["local_cwd", "slurm", "ray", "local_docker"], indirect=True)
def test_a_file_in_torchxignore_never_reaches_the_job(real: Any, tmp_path: Path) -> None:
    s, cfg, _ = real
    image = IMAGES.get(s.backend, str(tmp_path))
    app = AppDef("ws", [Role("r", image=image, entrypoint="sh", args=["-c", LIST_FILES])])
    app_id = s.submit(app, cfg, workspace=str(_workspace(tmp_path)))
    desc = s.wait(app_id, timeout=120)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    stream = {"streams": Stream.STDOUT} if s.backend == "slurm" else {}
    assert list(s.log_iter(app_id, "r", **stream)) == ["./keep.txt\n"]


def test_image_workspaces_leave_ignored_files_out_of_the_build(tmp_path: Path) -> None:
    """local_docker and kubernetes build with the same mechanism (run above on Docker)."""
    import tarfile

    from torchx.workspace.docker_workspace import DockerWorkspaceMixin, build_context

    for name in ("local_docker", "kubernetes"):
        assert isinstance(_scheduler(name, tmp_path), DockerWorkspaceMixin), name
    with tarfile.open(fileobj=build_context(str(_workspace(tmp_path)), "FROM x\n")) as tar:
        assert sorted(tar.getnames()) == ["Dockerfile.torchx", "keep.txt"]


@pytest.mark.parametrize("real", ["ray"], indirect=True)
def test_ray_ships_a_workspace_both_ways_and_keeps_no_copy(
    real: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torchx run's way (the working_dir run option) and 0.7's (build_workspace_and_update_role,
    then submit) ship the same files, and neither leaves its temporary copy behind."""
    import copy
    import tempfile

    s, cfg, _ = real
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    ws = str(_workspace(tmp_path))
    listing = Role("r", image="", entrypoint="sh", args=["-c", LIST_FILES])
    built = copy.deepcopy(listing)
    s.build_workspace_and_update_role(built, ws, cfg)  # type: ignore[attr-defined]
    assert os.path.dirname(built.image) == str(scratch)
    assert sorted(os.listdir(built.image)) == ["keep.txt"]
    app_ids = [
        s.submit(AppDef("ws", [listing]), cfg, workspace=ws),
        s.submit(AppDef("ws07", [built]), cfg),
    ]
    assert os.listdir(scratch) == []
    for app_id in app_ids:
        desc = s.wait(app_id, timeout=120)
        assert desc is not None and desc.state == AppState.SUCCEEDED, desc
        assert list(s.log_iter(app_id, "r")) == ["./keep.txt\n"]


# Each built-in scheduler's workspace mixins, as pytorch/torchx 0.7's classes had them (its
# LocalScheduler had none; local_dir is a LocalScheduler too).
UPSTREAM_MIXINS = {
    "local_cwd": set(),
    "local_dir": set(),
    "local_docker": {"WorkspaceMixin", "DockerWorkspaceMixin"},
    "kubernetes": {"WorkspaceMixin", "DockerWorkspaceMixin"},
    "slurm": {"WorkspaceMixin", "DirWorkspaceMixin"},
    "ray": {"WorkspaceMixin", "TmpDirWorkspaceMixin"},
}


def test_every_builtin_is_checked_against_upstream_mixins() -> None:
    from torchx.schedulers import DEFAULT_SCHEDULER_MODULES

    assert sorted(UPSTREAM_MIXINS) == sorted(DEFAULT_SCHEDULER_MODULES)


@pytest.mark.parametrize("name", sorted(UPSTREAM_MIXINS))
def test_workspace_kinds_answer_isinstance_as_upstream(name: str, tmp_path: Path) -> None:
    import torchx.workspace as ws

    s = _scheduler(name, tmp_path)
    kinds = ("WorkspaceMixin", "DirWorkspaceMixin", "TmpDirWorkspaceMixin", "DockerWorkspaceMixin")
    assert {k for k in kinds if isinstance(s, getattr(ws, k))} == UPSTREAM_MIXINS[name]
