"""The ray scheduler: dryrun requests field by field, and real apps on a real local cluster.

The cluster comes from the session fixture ``ray_cluster`` (tests/fixtures/ray.py): a head
node on 127.0.0.1 started once per session.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from torchx_test_fixtures_waiting import wait_until

from torchx.schedulers import DescribeAppResponse, SchedulerError, Stream, get_scheduler
from torchx.schedulers.ray_scheduler import (
    ACTORS,
    CONFIG_ENV,
    DIRECT,
    RayScheduler,
    create_scheduler,
)
from torchx.specs import AppDef, AppState, Resource, RetryPolicy, Role, SpecsError, macros

DEADLINE_S = 120.0


def sh(name: str, script: str, replicas: int = 1, **kw: Any) -> Role:
    return Role(name, image="", entrypoint="bash", args=["-c", script], num_replicas=replicas, **kw)


# -- dryrun and bad input (no cluster) -----------------------------------------------------


def test_dryrun_request_and_driver_config_field_by_field(tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("numpy==2.0  # pinned\n\nrequests\n")
    app = AppDef(
        "train",
        [
            Role(
                "trainer",
                image="",
                entrypoint="python",
                args=["-c", "print(1)", macros.app_id, macros.replica_id],
                env={"X": "1"},
                num_replicas=2,
                max_retries=3,
                retry_policy=RetryPolicy.REPLICA,
                resource=Resource(cpu=2, gpu=1, memMB=512),
            )
        ],
    )
    s = RayScheduler("test")
    info = s.submit_dryrun(
        app,
        {
            "address": "127.0.0.1:8265",
            "working_dir": str(tmp_path),
            "requirements": str(reqs),
            "pip": ["torch"],
            "placement_strategy": "spread",
        },
    )
    job = info.request
    # kept as given: at submission HOST:PORT is read as Ray's CLI reads it (see _ray_address)
    assert job.address == "127.0.0.1:8265"
    assert job.submission_id.startswith("train-")
    app_id = job.app_id
    assert app_id == f"127.0.0.1:8265-{job.submission_id}"
    driver, config_arg = shlex.split(job.entrypoint)[2:]
    assert driver == "torchx.schedulers._ray_driver"
    assert json.loads(config_arg) == job.driver_config
    assert job.metadata == {"torchx_app": "train", "torchx_roles": '{"trainer":2}'}
    env = job.runtime_env
    assert env == {"working_dir": str(tmp_path), "pip": ["torch", "numpy==2.0", "requests"]}
    cfg = job.driver_config
    assert cfg["app_id"] == app_id
    assert cfg["placement_strategy"] == "SPREAD"
    (role,) = cfg["roles"]
    assert {k: v for k, v in role.items() if k != "replicas"} == {
        "name": "trainer",
        "num_cpus": 2,
        "num_gpus": 1,
        "memory": 512 * 1024 * 1024,
        "max_retries": 3,
        "retry_policy": "REPLICA",
    }
    for k, rep in enumerate(role["replicas"]):
        assert rep["argv"] == ["python", "-c", "print(1)", app_id, str(k)]
        assert rep["env"] == {
            "X": "1",
            "TORCHX_APP_ID": app_id,
            "TORCHX_ROLE_NAME": "trainer",
            "TORCHX_REPLICA_ID": str(k),
        }
    assert job.path == ACTORS  # two replicas
    assert job.submit_kwargs() == {
        "submission_id": job.submission_id,
        "entrypoint": job.entrypoint,
        "runtime_env": env,
        "metadata": job.metadata,
    }
    shown = str(info)
    assert "path: actors (a placement group of 2 bundles" in shown
    assert "entrypoint_num" not in shown
    assert "submit_job" in shown and '"placement_strategy": "SPREAD"' in shown
    assert '"working_dir": "' + str(tmp_path) in shown


def test_one_replica_takes_the_direct_path_with_entrypoint_resources() -> None:
    app = AppDef(
        "single",
        [
            Role(
                "trainer",
                image="",
                entrypoint="python",
                args=["train.py", macros.replica_id],
                env={"X": "1"},
                max_retries=2,
                resource=Resource(cpu=2, gpu=1, memMB=512),
            )
        ],
    )
    info = RayScheduler().submit_dryrun(app, {"address": "127.0.0.1:8265"})
    job = info.request
    assert job.path == DIRECT
    python, dash_m, module, config_arg = shlex.split(job.entrypoint)
    assert (python, dash_m, module) == ("python", "-m", "torchx.schedulers._ray_direct")
    assert json.loads(config_arg) == job.driver_config
    (role,) = job.driver_config["roles"]
    assert role["max_retries"] == 2
    assert role["replicas"] == [
        {
            "argv": ["python", "train.py", "0"],
            "env": {
                "X": "1",
                "TORCHX_APP_ID": job.app_id,
                "TORCHX_ROLE_NAME": "trainer",
                "TORCHX_REPLICA_ID": "0",
            },
        }
    ]
    assert job.submit_kwargs() == {
        "submission_id": job.submission_id,
        "entrypoint": job.entrypoint,
        "runtime_env": {},
        # the reservation is kept in the metadata too: Ray does not return it, and a
        # requeue submits the job again with it
        "metadata": {
            "torchx_app": "single",
            "torchx_roles": '{"trainer":1}',
            "torchx_entrypoint_resources": '{"entrypoint_num_cpus":2,"entrypoint_num_gpus":1,'
            '"entrypoint_memory":536870912}',
        },
        "entrypoint_num_cpus": 2,
        "entrypoint_num_gpus": 1,
        "entrypoint_memory": 512 * 1024 * 1024,
    }
    shown = str(info)
    assert shown.startswith("path: direct (one replica")
    assert '"entrypoint_num_cpus": 2' in shown and '"entrypoint_memory": 536870912' in shown
    assert "python -m torchx.schedulers._ray_direct '<the driver config below" in shown


def test_direct_path_defaults_to_one_cpu_and_asks_for_nothing_else() -> None:
    job = RayScheduler().submit_dryrun(AppDef("a", [sh("r", "true")]), {"address": "h:1"}).request
    assert job.path == DIRECT
    assert job.entrypoint_resources == {"entrypoint_num_cpus": 1}
    assert job.submit_kwargs()["entrypoint_num_cpus"] == 1
    assert "entrypoint_num_gpus" not in job.submit_kwargs()


def test_a_sweeps_trial_names_its_sweep_in_the_jobs_metadata() -> None:
    """``list`` reads it back: the metadata is what Ray's job list gives of a job."""
    role = sh("r", "true")
    role.env = {"TORCHX_SWEEP_ID": "ray://torchx/sweep-abcd2345", "TORCHX_SWEEP_INDEX": "2"}
    job = RayScheduler().submit_dryrun(AppDef("a", [role]), {"address": "h:1"}).request
    assert job.metadata["torchx_sweep"] == "sweep-abcd2345/2"
    plain = RayScheduler().submit_dryrun(AppDef("a", [sh("r", "true")]), {"address": "h:1"})
    assert "torchx_sweep" not in plain.request.metadata


@pytest.mark.parametrize(
    "roles",
    [
        [sh("a", "true", replicas=2)],
        [sh("a", "true"), sh("b", "true")],  # two roles of one replica each still meet
    ],
)
def test_several_replicas_keep_the_actor_path(roles: list[Role]) -> None:
    job = RayScheduler().submit_dryrun(AppDef("many", roles), {"address": "h:1"}).request
    assert job.path == ACTORS
    assert shlex.split(job.entrypoint)[:3] == ["python", "-m", "torchx.schedulers._ray_driver"]
    assert job.entrypoint_resources == {}
    assert not any(k.startswith("entrypoint_num") for k in job.submit_kwargs())


def test_a_direct_config_too_long_for_a_command_line_goes_in_the_runtime_env() -> None:
    big = Role("r", "", "echo", ["x" * 120_000])
    job = RayScheduler().submit_dryrun(AppDef("big", [big]), {"address": "1.2.3.4:8265"}).request
    assert job.entrypoint == "python -m torchx.schedulers._ray_direct"
    assert json.loads(job.runtime_env["env_vars"][CONFIG_ENV]) == job.driver_config


def test_the_direct_entrypoint_imports_neither_ray_nor_torchx_specs() -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "torchx.schedulers._ray_direct"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "usage:" in out.stdout  # no config given
    loaded = {line.rsplit("|", 1)[1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert "torchx.schedulers" in loaded  # the package runs first, then the module as __main__
    heavy = {"ray", "torchx.specs", "torchx.schedulers._api", "typing", "logging", "inspect"}
    assert not loaded & heavy, loaded & heavy


def test_address_defaults_to_ray_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "http://10.1.2.3:8265")
    job = RayScheduler().submit_dryrun(AppDef("a", [sh("r", "true")])).request
    assert job.address == "http://10.1.2.3:8265"
    assert job.app_id.startswith("10.1.2.3:8265-a-")
    # defaults: one CPU per replica, no GPU or memory asked for, PACK, nothing shipped
    assert job.runtime_env == {}
    role = job.driver_config["roles"][0]
    assert (role["num_cpus"], role["num_gpus"], role["memory"]) == (1, 0, 0)
    assert job.driver_config["placement_strategy"] == "PACK"


@pytest.mark.parametrize(
    ("cfg", "field", "hint"),
    [
        ({"address": "nohost"}, "run option 'address'", "HOST:PORT"),
        ({"address": "ftp://1.2.3.4:21"}, "run option 'address'", "ray://HOST:PORT"),
        (
            {"address": "1.2.3.4:8265", "placement_strategy": "tight"},
            "placement_strategy",
            "SPREAD",
        ),
        ({"address": "1.2.3.4:8265", "working_dir": "/no/such/dir"}, "working_dir", "existing"),
        # abspath("") is the current directory: an empty option must not ship it
        ({"working_dir": ""}, "run option 'working_dir'", "or leave the option out"),
        ({"address": "1.2.3.4:8265", "requirements": "/no/such.txt"}, "requirements", "readable"),
        ({"address": "1.2.3.4:8265", "num_cpus": 3}, "run option 'num_cpus'", "known"),
        (
            {"cluster_config_file": "/no/such/cluster.yaml"},
            "run option 'cluster_config_file'",
            "existing Ray cluster config",
        ),
    ],
)
def test_bad_run_options_name_the_field(
    cfg: dict[str, Any], field: str, hint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(SpecsError) as e:
        RayScheduler().submit_dryrun(AppDef("a", [sh("r", "true")]), cfg)
    assert field in e.value.field and hint in str(e.value)


def test_bad_app_id_and_workspace() -> None:
    s = RayScheduler()
    with pytest.raises(SpecsError, match="HOST:PORT-SUBMISSION_ID"):
        s.describe("no-address-here")
    with pytest.raises(SpecsError, match="must be a directory"):
        s.with_workspace(AppDef("a"), {}, "/no/such/dir")


def test_a_role_image_directory_is_the_working_dir_as_in_0_7(tmp_path: Path) -> None:
    s = RayScheduler()
    app = AppDef("a", [Role("r", image=str(tmp_path), entrypoint="ls")])
    assert s.submit_dryrun(app).request.working_dir == str(tmp_path)
    # the run option wins; an image that is no local directory ships nothing
    (tmp_path / "code").mkdir()
    given = s.submit_dryrun(app, {"working_dir": str(tmp_path / "code")})
    assert given.request.working_dir == str(tmp_path / "code")
    app.roles[0].image = "busybox:1"
    assert s.submit_dryrun(app).request.working_dir is None


def test_a_relative_image_is_an_image_name_even_where_such_a_directory_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "python").mkdir()
    monkeypatch.chdir(tmp_path)
    s = RayScheduler()
    app = AppDef("a", [Role("r", image="python", entrypoint="python", args=["-V"])])
    assert s.submit_dryrun(app).request.working_dir is None
    # an empty working_dir is no reason to ship the current directory either
    assert s.default_workspace({"working_dir": ""}) is None
    assert s.default_workspace({}) == str(tmp_path)


def test_registered() -> None:
    from torchx.schedulers import scheduler_names

    assert "ray" in scheduler_names()
    assert isinstance(get_scheduler("ray", address="127.0.0.1:1"), RayScheduler)


def test_ray_client_and_address_are_one_or_the_other() -> None:
    # pytorch/torchx 0.7's second positional is ray_client: an address there is refused,
    # naming the parameter, rather than read as a client.
    with pytest.raises(SpecsError) as e:
        create_scheduler("s", "127.0.0.1:8265")
    assert "ray_client" in e.value.field and "address=" in str(e.value)
    with pytest.raises(SpecsError, match="not both"):
        RayScheduler("s", object(), address="127.0.0.1:8265")
    with pytest.raises(SpecsError, match="takes address, ray_client"):
        create_scheduler("s", adress="127.0.0.1:8265")


def test_a_config_too_long_for_a_command_line_goes_in_the_runtime_env() -> None:
    big = Role("r", "", "echo", ["x" * 60_000], num_replicas=2)
    job = RayScheduler().submit_dryrun(AppDef("big", [big]), {"address": "1.2.3.4:8265"}).request
    assert job.entrypoint == "python -m torchx.schedulers._ray_driver"
    assert json.loads(job.runtime_env["env_vars"][CONFIG_ENV]) == job.driver_config


def test_events_skip_other_lines_and_a_kind_only_the_start_names() -> None:
    from torchx.schedulers._ray_status import events, latest_state

    lines = [
        "INFO job_manager.py -- Runtime env is setting up.",
        'TORCHX_EVENT {"ev":"log","r":"a","k":0,"s":"o","t":1.0,"l":"hi\\n"}',
        'TORCHX_EVENT {"ev":"state","state":"RUNNING"',  # cut short by a kill
        'TORCHX_EVENT {"ev":"state","state":"SUCCEEDED","replicas":[]}',
        # the start says one kind, the key repeated later another: it is of neither
        'TORCHX_EVENT {"ev":"log","ev":"state","state":"FAILED"}',
        'TORCHX_EVENT {"ev":"state","ev":"log","r":"a","k":0,"s":"o","t":2.0,"l":"x"}',
    ]
    assert [e["l"] for e in events(lines, "log")] == ["hi\n"]
    assert latest_state(lines).state["state"] == "SUCCEEDED"


def test_rays_message_keeps_the_users_lines_not_the_drivers_bookkeeping() -> None:
    from torchx.schedulers._ray_status import ray_message

    message = "\n".join(
        [
            "Job entrypoint command failed with exit code 4, last available logs:",
            "Running entrypoint for job sh-1: python -m torchx.schedulers._ray_direct '{}'",
            'TORCHX_EVENT {"ev":"log","r":"a","k":0,"s":"o","t":1.0,"l":"hi\\n"}',
            "Traceback: boom",
        ]
    )
    assert ray_message(message) == (
        "Job entrypoint command failed with exit code 4, last available logs:\nTraceback: boom"
    )
    # a job torchx did not start: its entrypoint is the user's own command, which stays
    other = "Running entrypoint for job e-1: echo hi; exit 2"
    assert ray_message(other) == other


# -- a real cluster ------------------------------------------------------------------------
# Each job takes seconds to start on a small machine, so the apps that only need checking
# afterwards are all submitted at once (``submitted``) and each test waits for its own.


@pytest.fixture(scope="module")
def ray(ray_cluster: Any) -> Iterator[RayScheduler]:
    s = RayScheduler("test", address=ray_cluster.address)
    yield s
    s.close()


def submit(s: RayScheduler, app: AppDef, **cfg: Any) -> str:
    return s.schedule(s.submit_dryrun(app, cfg))


def logs(s: RayScheduler, app_id: str, role: str, k: int = 0, **kw: Any) -> str:
    return "".join(s.log_iter(app_id, role, k, **kw))


RANKS_SCRIPT = (
    'echo "rank=$RANK world=$WORLD_SIZE master=$MASTER_ADDR:$MASTER_PORT '
    'id=$TORCHX_REPLICA_ID py=$(command -v python)"; echo "err$RANK" >&2'
)
FAIL_SCRIPT = 'if [ "$RANK" = 1 ]; then echo "bad input" >&2; exit 3; fi; sleep 60'
# What a single-node dist.ddp app needs from its environment: torch's env:// rendezvous.
DIST_SCRIPT = """
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(1) * 5
dist.all_reduce(t)
keys = ["RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "TORCHX_RANK0_HOST", "GROUP_RANK"]
print(*[os.environ[k] for k in keys], dist.get_rank(), dist.get_world_size(), int(t.item()))
dist.destroy_process_group()
"""


def ended(
    s: RayScheduler,
    app_id: str,
    state: AppState,
    roles: list[tuple[str, int]] | None = None,
) -> DescribeAppResponse:
    """The status of ``app_id`` once it has ended, which must be ``state``; with ``roles``,
    its roles must be those (name, replicas), the ones ``torchx log HANDLE`` walks."""
    desc = s.wait(app_id, timeout=DEADLINE_S)
    assert desc is not None and desc.state == state, desc
    if roles is not None:
        assert [(r.name, r.num_replicas) for r in desc.roles] == roles
    return desc


def entrypoint_of(s: RayScheduler, app_id: str) -> Any:
    address, sid = s._split(app_id)
    return s._client(address).get_job_info(sid)


@pytest.fixture(scope="module")
def submitted(
    ray: RayScheduler, ray_cluster: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("ray_apps")
    marker = tmp / "tried"
    retry_script = (
        f'if [ ! -e {marker} ]; then touch {marker}; exit 7; fi; echo "ok $TORCHX_RAY_RESTARTS"'
    )
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "main.py").write_text("import sys\nprint('from workspace', sys.argv[1])\n")
    ws_app, ws_cfg = ray.with_workspace(
        AppDef("ws", [Role("main", "", "python", ["main.py", macros.replica_id])]), {}, str(ws)
    )
    return {
        "echo": submit(ray, AppDef("echo", [Role("echo", "", "echo", ["hello", "ray"])])),
        "ranks": submit(ray, AppDef("ranks", [sh("trainer", RANKS_SCRIPT, replicas=2)])),
        "fail": submit(ray, AppDef("fail", [sh("worker", FAIL_SCRIPT, replicas=2)])),
        "fail1": submit(ray, AppDef("fail1", [sh("solo", "echo ok; echo broken >&2; exit 4")])),
        "dist": submit(ray, AppDef("dist", [Role("ddp", "", "python", ["-c", DIST_SCRIPT])])),
        "retry": submit(
            ray,
            AppDef(
                "retry", [sh("r", retry_script, max_retries=1, retry_policy=RetryPolicy.REPLICA)]
            ),
        ),
        "ws": submit(ray, ws_app, **ws_cfg),
        # A job pytorch/torchx 0.7 submitted (no torchx metadata), as its users' handles name
        # it: HOST:PORT-SUBMISSION_ID.
        "unrecorded": ray_cluster.address.removeprefix("http://")
        + "-"
        + ray._client(ray_cluster.address).submit_job(
            entrypoint="echo from 0.7; exit 2", submission_id=f"echo-{time.time_ns()}"
        ),
    }


def test_echo(ray: RayScheduler, submitted: dict[str, str]) -> None:
    app_id = submitted["echo"]
    desc = ended(ray, app_id, AppState.SUCCEEDED, roles=[("echo", 1)])
    (role,) = desc.roles_statuses
    assert [(r.id, r.state, r.exit_code, r.hostname) for r in role.replicas] == [
        (0, AppState.SUCCEEDED, 0, "127.0.0.1")
    ]
    assert logs(ray, app_id, "echo") == "hello ray\n"
    # one replica: the direct path (its reservation: test_direct_path_waits_for_...)
    assert entrypoint_of(ray, app_id).entrypoint.startswith(
        "python -m torchx.schedulers._ray_direct "
    )
    listed = {a.app_id: a for a in ray.list()}
    assert listed[app_id].state == AppState.SUCCEEDED and listed[app_id].name == "echo"
    # an ended job: `torchx list` shows when it ended
    ended_at, submitted_at = listed[app_id].ended_at, listed[app_id].submitted_at
    assert ended_at is not None and submitted_at is not None and submitted_at <= ended_at


def test_a_ready_job_client_serves_its_cluster(ray_cluster: Any, submitted: dict[str, str]) -> None:
    from ray.job_submission import JobSubmissionClient

    client = JobSubmissionClient(ray_cluster.address)
    s = create_scheduler("test", client)  # pytorch/torchx 0.7's form
    assert s.address == ray_cluster.address
    app_id = submitted["echo"]
    s.wait_until_finish(app_id, timeout=int(DEADLINE_S))  # 0.7's form
    ended(s, app_id, AppState.SUCCEEDED)
    assert app_id in {a.app_id for a in s.list()}
    assert logs(s, app_id, "echo") == "hello ray\n"
    # every call went through the caller's client: no second one was made
    assert s._clients and all(c is client for c in s._clients.values())


def test_two_replicas_see_their_ranks_and_per_replica_logs(
    ray: RayScheduler, submitted: dict[str, str]
) -> None:
    app_id = submitted["ranks"]
    ended(ray, app_id, AppState.SUCCEEDED, roles=[("trainer", 2)])
    outs = [logs(ray, app_id, "trainer", k, streams=Stream.STDOUT) for k in range(2)]
    ports = set()
    for k, out in enumerate(outs):
        fields = dict(f.split("=", 1) for f in out.split())
        assert (fields["rank"], fields["world"], fields["id"]) == (str(k), "2", str(k))
        host, port = fields["master"].split(":")
        assert host == "127.0.0.1"
        ports.add(port)
        # the replicas run the project's own interpreter, found on PATH
        assert Path(fields["py"]).parent == Path(sys.executable).parent
    assert len(ports) == 1
    assert entrypoint_of(ray, app_id).entrypoint.startswith(
        "python -m torchx.schedulers._ray_driver "
    )
    assert [logs(ray, app_id, "trainer", k, streams=Stream.STDERR) for k in range(2)] == [
        "err0\n",
        "err1\n",
    ]
    assert logs(ray, app_id, "trainer", 1, regex="^err") == "err1\n"
    with pytest.raises(SpecsError, match=r"replicas 0\.\.1"):
        logs(ray, app_id, "trainer", 2)
    with pytest.raises(SpecsError, match="role"):
        logs(ray, app_id, "nope")


def test_failing_replica_fails_the_app_with_its_code_and_stderr(
    ray: RayScheduler, submitted: dict[str, str]
) -> None:
    app_id = submitted["fail"]
    desc = ended(ray, app_id, AppState.FAILED)
    replicas = desc.roles_statuses[0].replicas
    assert replicas[1].state == AppState.FAILED and replicas[1].exit_code == 3
    assert replicas[0].state == AppState.CANCELLED  # stopped because its peer failed
    assert "worker/1 exited with code 3" in desc.structured_error_msg
    assert "bad input" in desc.structured_error_msg
    info = entrypoint_of(ray, app_id)
    assert info.driver_exit_code == 3
    assert info.entrypoint.startswith("python -m torchx.schedulers._ray_driver ")


def test_failing_single_replica_direct_path(ray: RayScheduler, submitted: dict[str, str]) -> None:
    app_id = submitted["fail1"]
    desc = ended(ray, app_id, AppState.FAILED)
    (rep,) = desc.roles_statuses[0].replicas
    assert (rep.state, rep.exit_code, rep.hostname) == (AppState.FAILED, 4, "127.0.0.1")
    assert desc.structured_error_msg == (
        "replica solo/0 exited with code 4; last lines of its stderr:\nbroken"
    )
    # what `torchx status` and `torchx run`'s last line show: the same, not Ray's dump of
    # the driver's log (its config and structured lines)
    assert desc.msg == desc.structured_error_msg
    assert logs(ray, app_id, "solo", streams=Stream.STDOUT) == "ok\n"
    assert logs(ray, app_id, "solo", streams=Stream.STDERR) == "broken\n"
    info = entrypoint_of(ray, app_id)
    assert info.driver_exit_code == 4
    assert info.entrypoint.startswith("python -m torchx.schedulers._ray_direct ")


def test_a_job_torchx_did_not_submit_reads_as_one_replica_whose_log_is_the_jobs(
    ray: RayScheduler, submitted: dict[str, str]
) -> None:
    app_id = submitted["unrecorded"]
    desc = ended(ray, app_id, AppState.FAILED, roles=[("ray", 1)])
    (rep,) = desc.roles_statuses[0].replicas
    assert (rep.role, rep.state) == ("ray", AppState.FAILED)
    assert "echo from 0.7; exit 2" in desc.msg
    lines = list(ray.log_iter(app_id, "ray", 0))
    assert "from 0.7\n" in lines and all(line.endswith("\n") for line in lines)
    assert "from 0.7\n" in list(ray.log_iter(app_id, "ray", 0, should_tail=True))


def test_single_replica_env_is_enough_for_torch_distributed(
    ray: RayScheduler, submitted: dict[str, str]
) -> None:
    pytest.importorskip("torch")
    app_id = submitted["dist"]
    desc = ray.wait(app_id, timeout=DEADLINE_S)
    assert desc is not None and desc.state == AppState.SUCCEEDED, (
        desc,
        logs(ray, app_id, "ddp"),
    )
    out = logs(ray, app_id, "ddp", streams=Stream.STDOUT)
    assert out == "0 1 0 127.0.0.1 127.0.0.1 0 0 1 5\n"


def test_max_retries_restarts_a_failed_replica(
    ray: RayScheduler, submitted: dict[str, str]
) -> None:
    app_id = submitted["retry"]
    desc = ended(ray, app_id, AppState.SUCCEEDED)
    assert desc.num_restarts == 1
    assert logs(ray, app_id, "r") == "ok 1\n"
    assert entrypoint_of(ray, app_id).entrypoint.startswith(
        "python -m torchx.schedulers._ray_direct"
    )


def test_working_dir_workspace_and_status_from_a_new_process(
    ray: RayScheduler, submitted: dict[str, str]
) -> None:
    app_id = submitted["ws"]
    code = (
        "import sys\n"
        "from torchx.schedulers import get_scheduler\n"
        "s = get_scheduler('ray')\n"
        "d = s.wait(sys.argv[1], timeout=120)\n"
        "print(d.state.name, d.roles_statuses[0].replicas[0].exit_code)\n"
        "print(''.join(s.log_iter(sys.argv[1], 'main', 0)), end='')\n"
    )
    # no address given: the app id alone says where the app is
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    out = subprocess.run(
        [sys.executable, "-c", code, app_id],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE_S + 30,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "SUCCEEDED 0\nfrom workspace 0\n"


def test_cancel_stops_the_replicas(
    ray: RayScheduler, submitted: dict[str, str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    app_id = submit(ray, AppDef("sleepy", [sh("s", f"echo $BASHPID > {pidfile}; exec sleep 300")]))
    wait_until(
        "the replica to start", lambda: pidfile.exists() and pidfile.read_text().strip(), DEADLINE_S
    )
    pid = int(pidfile.read_text())
    desc = ray.describe(app_id)
    assert desc is not None and desc.state == AppState.RUNNING
    assert desc.roles_statuses[0].replicas[0].state == AppState.RUNNING
    ray.cancel(app_id)
    desc = ray.describe(app_id)
    assert desc is not None and desc.state == AppState.CANCELLED
    assert desc.roles_statuses[0].replicas[0].state == AppState.CANCELLED

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2] == "Z"

    wait_until(f"replica process {pid} to end", gone, DEADLINE_S)
    ray.cancel(app_id)  # a no-op once ended
    assert entrypoint_of(ray, app_id).entrypoint.startswith(
        "python -m torchx.schedulers._ray_direct"
    )


def test_direct_path_waits_for_the_resources_it_asked_for(ray: RayScheduler) -> None:
    # The cluster has 8 CPUs: Ray must hold the entrypoint back, as a placement group would.
    big = Role("big", "", "echo", ["never"], resource=Resource(cpu=64, gpu=0, memMB=0))
    app_id = submit(ray, AppDef("toobig", [big]))
    time.sleep(1.0)  # a chance to start, were the reservation ignored
    desc = ray.describe(app_id)
    assert desc is not None and desc.state == AppState.PENDING, desc
    assert logs(ray, app_id, "big") == ""
    # Ray keeps the stop until it can place the entrypoint; cancel does not wait for that.
    ray.cancel(app_id)
    desc = ray.describe(app_id)
    assert desc is not None and desc.state == AppState.PENDING


# Counts to 60 a step every 50 ms, its progress in a file; on the warning it saves the step
# it reached and exits asking to run again; the next attempt starts from there.
COUNTER = """
import sys, time
import torchx.runtime.preemption as preemption
state = sys.argv[1]
start = int(open(state + "/saved").read()) if preemption.attempt() > 0 else 0
print("attempt", preemption.attempt(), "starts at", start, flush=True)
step = start
preemption.on_preempt(lambda: open(state + "/saved", "w").write(str(step)))
while step < 60:
    if preemption.preempted():
        preemption.requeue()
    step += 1
    open(state + "/progress", "w").write(str(step))
    time.sleep(0.05)
print("done at", step, flush=True)
"""


def test_an_app_told_to_stop_and_restart_resumes_under_the_same_handle(
    ray: RayScheduler, tmp_path: Path
) -> None:
    app = AppDef("counter", [Role("counter", "", "python", ["-c", COUNTER, str(tmp_path)])])
    app_id = submit(ray, app)
    progress = tmp_path / "progress"
    wait_until(
        "step 5", lambda: progress.exists() and int(progress.read_text() or 0) >= 5, DEADLINE_S
    )
    requeued = ray.requeue(app_id)
    assert requeued is not None and requeued.num_preemptions == 1, requeued
    desc = ended(ray, app_id, AppState.SUCCEEDED)
    assert desc.num_preemptions == 1, desc
    stopped = int((tmp_path / "saved").read_text())
    assert 0 < stopped < 60
    # it resumed where the first attempt stopped, its output after the first attempt's
    assert logs(ray, app_id, "counter").endswith(f"attempt 1 starts at {stopped}\ndone at 60\n")
    # the direct path's reservation came back with the resubmission
    assert entrypoint_of(ray, app_id).metadata["torchx_entrypoint_resources"] == (
        '{"entrypoint_num_cpus":1}'
    )
    with pytest.raises(SchedulerError, match="already ended"):
        ray.requeue(app_id)


def test_schedule_removes_only_the_copy_the_job_shipped_and_names_the_job_when_reused(
    ray: RayScheduler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.7's flow: a workspace copy a job ships serves that one submission and goes once Ray
    has the job. A copy the job did not ship (another role's image, or the first role's
    when a working_dir option won) stays for the app whose pending dry run ships it; a
    removed copy is refused by name, with the job it went with."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "train.py").write_text("")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "x.py").write_text("")
    first, second, own = sh("a", "true"), sh("b", "true"), sh("c", "true")
    own.image = str(mine)
    for role in (first, second):
        ray.build_workspace_and_update_role(role, str(ws), {})
    # three dry runs before any schedule: only the third ships `second`
    info = ray.submit_dryrun(AppDef("copies", [first, second, own]), {})
    assert info.request.working_dir == first.image
    over = ray.submit_dryrun(AppDef("over", [second]), {"working_dir": str(mine)})
    assert over.request.working_dir == str(mine)
    ships_second = ray.submit_dryrun(AppDef("second", [second]), {})
    assert ships_second.request.working_dir == second.image
    app_id = ray.schedule(info)
    ray.schedule(over)
    assert [os.path.exists(p) for p in (first.image, second.image)] == [False, True]
    assert os.listdir(mine) == ["x.py"]  # not a copy: left alone
    second_id = ray.schedule(ships_second)  # its copy was still there
    assert not os.path.exists(second.image)
    with pytest.raises(SpecsError) as again:
        ray.schedule(info)
    with pytest.raises(SpecsError) as redo:
        ray.submit_dryrun(AppDef("again", [second]), {})
    for e, field, path, job in (
        (again, "working_dir", first.image, app_id),
        (redo, "role image", second.image, second_id),
    ):
        msg = str(e.value)
        assert e.value.field == field and path in msg and job in msg and "\n" not in msg
        assert "removed after job" in msg and "build_workspace_and_update_role again" in msg
    # a fresh copy that happens to get a removed copy's path is a new copy, not refused
    import tempfile

    reused = second.image
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **kw: (os.mkdir(reused), reused)[1])
    ray.build_workspace_and_update_role(second, str(ws), {})
    assert ray.submit_dryrun(AppDef("fresh", [second]), {}).request.working_dir == reused
    # (the jobs, `true`s, end on their own; nothing here depends on their outcome)


def test_a_dry_run_needs_no_address_and_schedule_then_asks_for_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    s = RayScheduler()
    info = s.submit_dryrun(AppDef("a", [sh("r", "true")]), {})
    assert info.request.address == "" and info.request.app_id.startswith("a-")
    with pytest.raises(SpecsError) as e:
        s.schedule(info)
    assert "address" in e.value.field and "RAY_ADDRESS" in str(e.value)


def test_every_form_ray_reads_is_an_address() -> None:
    from torchx.schedulers._ray_address import check_address, request_address

    for form in ("127.0.0.1:8265", "http://127.0.0.1:8265/", "https://h:443", "ray://h:10001"):
        assert check_address(form) == form.rstrip("/")
    assert check_address("auto") == "auto"
    # a dry run asks no one about HOST:PORT or a URL
    assert request_address("10.0.0.1:8265") == "10.0.0.1:8265"
    assert request_address("http://10.0.0.1:8265") == "http://10.0.0.1:8265"
