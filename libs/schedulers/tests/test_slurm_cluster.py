"""Real jobs on the test Slurm cluster (tests/fixtures/slurm.py): submit, describe, logs."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers import SchedulerError, Stream
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, AppState, Resource, Role, macros

WAIT_S = 90


@pytest.fixture
def slurm(slurm_env: Any) -> SlurmScheduler:
    return SlurmScheduler("test")


def _echo(*words: str, name: str = "echo") -> AppDef:
    return AppDef(name, [Role("echo", image="", entrypoint="echo", args=list(words))])


def test_echo_succeeds_and_logs_are_found_from_elsewhere(
    slurm: SlurmScheduler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    job_dir = tmp_path / "job"
    app_id = slurm.submit(_echo("hello", macros.app_id), {"job_dir": str(job_dir)})
    desc = slurm.wait(app_id, timeout=WAIT_S)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert [r.role for r in desc.roles_statuses] == ["echo"]
    assert desc.roles_statuses[0].replicas[0].exit_code == 0
    # after the job ended, from another directory
    monkeypatch.chdir(tmp_path)
    assert list(slurm.log_iter(app_id, "echo")) == [f"hello {app_id}\n"]
    assert list(slurm.log_iter(app_id, "echo", regex="nomatch")) == []
    assert list(slurm.log_iter(app_id, "echo", streams=Stream.STDERR)) == []
    assert (job_dir / f"slurm-{app_id}-echo-0.out").exists()


def test_failing_job_reports_exit_code(slurm: SlurmScheduler, tmp_path: Path) -> None:
    app = AppDef(
        "fail",
        [Role("bad", image="", entrypoint="bash", args=["-c", "echo go; echo oops >&2; exit 3"])],
    )
    app_id = slurm.submit(app, {"job_dir": str(tmp_path)})
    desc = slurm.wait(app_id, timeout=WAIT_S)
    assert desc is not None and desc.state == AppState.FAILED
    assert desc.roles_statuses[0].replicas[0].exit_code == 3
    assert "bad exited with 3" in desc.msg
    assert list(slurm.log_iter(app_id, "bad", streams=Stream.STDERR)) == ["oops\n"]
    assert list(slurm.log_iter(app_id, "bad", streams=Stream.STDOUT)) == ["go\n"]
    # Unasked, both streams: the error (on stderr) shows, as 0.7's stderr default showed it.
    assert list(slurm.log_iter(app_id, "bad")) == ["go\n", "oops\n"]
    assert list(slurm.log_iter(app_id, "bad", should_tail=True)) == ["go\n", "oops\n"]


def test_each_replica_reports_its_own_exit_code(slurm: SlurmScheduler, tmp_path: Path) -> None:
    # Replica 1's failure makes srun end the step; it waits for replica 0's exit record
    # first, so a slow start of replica 0 under load cannot turn its 0 into a kill. At
    # most 60 s (bash's SECONDS), well within WAIT_S: should the record never come, the
    # assertions below say what happened rather than the wait's timeout.
    wait_for_0 = (
        '[ "$TORCHX_REPLICA_ID" = 1 ] && until [ "$SECONDS" -ge 60 ] || '
        f"ls {shlex.quote(str(tmp_path))}/slurm-*-w-0.exit >/dev/null 2>&1; do sleep 0.1; done"
    )
    app = AppDef(
        "split",
        [
            Role(
                "w",
                image="",
                entrypoint="bash",
                args=[
                    "-c",
                    f"echo $TORCHX_REPLICA_ID; {wait_for_0}; exit $((TORCHX_REPLICA_ID * 7))",
                ],
                num_replicas=2,
                resource=Resource(cpu=1, gpu=0, memMB=200),
            )
        ],
    )
    app_id = slurm.submit(app, {"job_dir": str(tmp_path)})
    desc = slurm.wait(app_id, timeout=WAIT_S)
    assert desc is not None and desc.state == AppState.FAILED, desc
    (role,) = desc.roles_statuses
    assert [(r.id, r.state, r.exit_code) for r in role.replicas] == [
        (0, AppState.SUCCEEDED, 0),
        (1, AppState.FAILED, 7),
    ]
    # one node each
    assert sorted(r.hostname for r in role.replicas) == ["node1", "node2"]
    assert desc.msg == "w replica 1 exited with 7"
    assert [(r.name, r.num_replicas) for r in desc.roles] == [("w", 2)]
    assert list(slurm.log_iter(app_id, "w", k=1)) == ["1\n"]
    # without the job directory, Slurm's one exit code per step cannot say which replica
    for k in (0, 1):
        (tmp_path / f"slurm-{app_id}-w-{k}.exit").unlink()
    blind = slurm.describe(app_id)
    assert blind is not None
    assert [(r.state, r.exit_code) for r in blind.roles_statuses[0].replicas] == [
        (AppState.FAILED, None),
        (AppState.FAILED, None),
    ]


def test_two_roles_run_as_a_heterogeneous_job(slurm: SlurmScheduler, tmp_path: Path) -> None:
    show = 'echo "$TORCHX_ROLE_NAME $TORCHX_REPLICA_ID $TORCHX_RANK0_HOST $MASTER_ADDR"'
    app = AppDef(
        "pair",
        [
            Role("a", image="", entrypoint="bash", args=["-c", show], resource=Resource(1, 0, 200)),
            Role("b", image="", entrypoint="bash", args=["-c", show], resource=Resource(1, 0, 200)),
        ],
    )
    app_id = slurm.submit(app, {"job_dir": str(tmp_path)})
    desc = slurm.wait(app_id, timeout=WAIT_S)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc
    assert [r.role for r in desc.roles_statuses] == ["a", "b"]
    assert all(r.replicas[0].state == AppState.SUCCEEDED for r in desc.roles_statuses)
    assert list(slurm.log_iter(app_id, "a")) == ["a 0 127.0.0.1 127.0.0.1\n"]
    assert list(slurm.log_iter(app_id, "b")) == ["b 0 127.0.0.1 127.0.0.1\n"]
    # one app, not one per component (the second component has the next job id)
    listed = {a.app_id: a for a in slurm.list()}
    assert listed[app_id].name == "pair"
    assert str(int(app_id) + 1) not in listed


def test_cancel_running_job(slurm: SlurmScheduler, tmp_path: Path) -> None:
    app = AppDef(
        "sleepy",
        [Role("s", image="", entrypoint="bash", args=["-c", "echo started; sleep 300"])],
    )
    app_id = slurm.submit(app, {"job_dir": str(tmp_path)})
    log = tmp_path / f"slurm-{app_id}-s-0.out"
    # the first line arrives once the replica runs; wait for it through log_iter's tail
    lines = slurm.log_iter(app_id, "s", should_tail=True)
    assert next(iter(lines)) == "started\n"
    listed = {a.app_id: a for a in slurm.list()}
    assert listed[app_id].state == AppState.RUNNING
    assert listed[app_id].name == "sleepy"
    slurm.cancel(app_id)
    desc = slurm.wait(app_id, timeout=WAIT_S)
    assert desc is not None and desc.state == AppState.CANCELLED
    assert desc.roles_statuses[0].replicas[0].state == AppState.CANCELLED
    assert log.exists()
    slurm.cancel(app_id)  # a no-op once it ended


def test_status_from_a_new_process(slurm: SlurmScheduler, tmp_path: Path) -> None:
    app_id = slurm.submit(_echo("x"), {"job_dir": str(tmp_path)})
    slurm.wait(app_id, timeout=WAIT_S)
    code = (
        "from torchx.schedulers import get_scheduler\n"
        f"d = get_scheduler('slurm').describe({app_id!r})\n"
        "print(d.state.name, ''.join(get_scheduler('slurm').log_iter(d.app_id, 'echo')).strip())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True
    )
    assert out.stdout.strip() == "SUCCEEDED x"


def test_describe_without_accounting(slurm: SlurmScheduler, tmp_path: Path) -> None:
    app_id = slurm.submit(_echo("y"), {"job_dir": str(tmp_path)})
    slurm.wait(app_id, timeout=WAIT_S)
    plain = SlurmScheduler("test", use_sacct=False)
    desc = plain.describe(app_id)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert list(plain.log_iter(app_id, "echo")) == ["y\n"]
    # slurmctld still holds the ended job (MinJobAge), so squeue alone lists it
    listed = {a.app_id: a for a in plain.list()}
    assert listed[app_id].state == AppState.SUCCEEDED
    assert listed[app_id].name == "echo"


def test_list_shows_ended_jobs_from_accounting(
    slurm: SlurmScheduler, slurm_cluster: Any, tmp_path: Path
) -> None:
    if not slurm_cluster.accounting:
        pytest.skip("the test cluster runs without slurmdbd (mariadb or slurmdbd missing)")
    app_id = slurm.submit(_echo("z", name="listed"), {"job_dir": str(tmp_path)})
    slurm.wait(app_id, timeout=WAIT_S)
    assert slurm.list()[-1].app_id == app_id  # from squeue, at once
    # slurmctld sends the full record to slurmdbd a few seconds later; until then sacct
    # knows a placeholder named "allocation" that its default query skips
    deadline = time.monotonic() + WAIT_S
    from_sacct = slurm._list_sacct()
    while app_id not in from_sacct and time.monotonic() < deadline:
        time.sleep(0.5)
        from_sacct = slurm._list_sacct()
    assert from_sacct[app_id].name == "listed"
    assert from_sacct[app_id].state == AppState.SUCCEEDED
    # only torchx jobs: a plain sbatch job has no torchx comment
    plain = slurm_cluster.run("sbatch", "--parsable", f"--chdir={tmp_path}", "--wrap=true")
    plain_id = plain.stdout.strip()
    assert plain_id.isdigit()
    slurm.wait(plain_id, timeout=WAIT_S)
    assert plain_id not in {a.app_id for a in slurm.list()}


def test_workspace_is_copied_into_job_dir(slurm: SlurmScheduler, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "main.sh").write_text("echo from workspace\n")
    job_dir = tmp_path / "job"
    app = AppDef("ws", [Role("r", image="", entrypoint="bash", args=["main.sh"])])
    app, cfg = slurm.with_workspace(app, {"job_dir": str(job_dir)}, str(ws))
    app_id = slurm.submit(app, cfg)
    desc = slurm.wait(app_id, timeout=WAIT_S)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert list(slurm.log_iter(app_id, "r")) == ["from workspace\n"]


@pytest.mark.parametrize(
    ("cfg", "resource", "field", "slurm_says"),
    [
        ({"partition": "nope"}, None, "run option 'partition'", "invalid partition"),
        ({"time": "500"}, None, "run option 'time'", "time limit"),
        ({}, Resource(cpu=64, gpu=0, memMB=100), "resource.cpu", "processors"),
        ({}, Resource(cpu=1, gpu=0, memMB=900000), "resource", "node configuration"),
        ({"mail_type": "BOGUS"}, None, "run option 'mail_type'='BOGUS'", "--mail-type"),
        ({"sbatch_args": ["--bogus"]}, None, "run option 'sbatch_args'", "unrecognized option"),
    ],
)
def test_refused_jobs_name_the_option_and_leave_nothing(
    slurm: SlurmScheduler,
    tmp_path: Path,
    cfg: dict[str, Any],
    resource: Resource | None,
    field: str,
    slurm_says: str,
) -> None:
    app = _echo("never")
    if resource is not None:
        app.roles[0].resource = resource
    job_dir = tmp_path / "job"
    before = {a.app_id for a in slurm.list()}
    with pytest.raises(SchedulerError) as err:
        slurm.submit(app, {**cfg, "job_dir": str(job_dir)})
    assert str(err.value).startswith("slurm: sbatch refused the job: "), err.value
    assert field in str(err.value), err.value
    assert slurm_says in str(err.value).lower()
    assert not job_dir.exists()
    assert {a.app_id for a in slurm.list()} == before


def test_a_het_job_bigger_than_the_partition_is_refused_in_slurms_words(
    slurm: SlurmScheduler, tmp_path: Path
) -> None:
    # Each component fits the two-node partition alone; together they never would, and
    # sbatch itself would queue the job to pend forever.
    roles = [Role(n, image="", entrypoint="true", num_replicas=2) for n in ("a", "b")]
    before = {a.app_id for a in slurm.list()}
    with pytest.raises(SchedulerError) as err:
        slurm.submit(AppDef("big", roles), {"job_dir": str(tmp_path / "job")})
    text = str(err.value)
    assert "needs 4 nodes at once (a:2 + b:2)" in text and "TotalNodes=2" in text, text
    assert {a.app_id for a in slurm.list()} == before
    # the same job within the partition's size is taken
    small = [Role(n, image="", entrypoint="true") for n in ("a", "b")]
    app_id = slurm.submit(AppDef("fits", small), {"job_dir": str(tmp_path / "ok")})
    desc = slurm.wait(app_id, timeout=WAIT_S)
    assert desc is not None and desc.state == AppState.SUCCEEDED, desc


@pytest.mark.parametrize("cpu", [1, 2])
def test_a_one_role_job_bigger_than_the_partition_is_told_so(
    slurm: SlurmScheduler, tmp_path: Path, cpu: int
) -> None:
    # sbatch refuses 3 nodes on the two-node partition as "Node count specification
    # invalid" (1 CPU each) or "More processors requested than permitted" (a node's 2 CPUs
    # each): neither names the node count, and the second is no CPU problem.
    role = Role("t", image="", entrypoint="true", num_replicas=3)
    role.resource = Resource(cpu=cpu, gpu=0, memMB=100)
    job_dir = tmp_path / "job"
    with pytest.raises(SchedulerError) as err:
        slurm.submit(AppDef("big", [role]), {"job_dir": str(job_dir)})
    text = str(err.value)
    assert text.startswith("slurm: sbatch refused the job: role t asks 3 nodes"), text
    assert "TotalNodes=2" in text and "at most 2 replicas" in text, text
    assert "resource.cpu" not in text and "\n" not in text, text
    assert not job_dir.exists()


def test_a_pending_job_says_why_it_waits(slurm: SlurmScheduler, tmp_path: Path) -> None:
    blocker = AppDef(
        "block", [Role("b", image="", entrypoint="sleep", args=["60"], num_replicas=2)]
    )
    block_id = slurm.submit(blocker, {"job_dir": str(tmp_path / "b"), "exclusive": True})
    wait_id = slurm.submit(_echo("later"), {"job_dir": str(tmp_path / "w"), "exclusive": True})
    try:
        deadline = time.monotonic() + WAIT_S
        desc = slurm.describe(wait_id)
        while time.monotonic() < deadline:
            desc = slurm.describe(wait_id)
            assert desc is not None
            if "Reason=" in desc.msg:
                break
            time.sleep(0.5)
        assert desc is not None and desc.state == AppState.PENDING, desc
        assert desc.msg.startswith("waiting in the Slurm queue: Reason="), desc.msg
        assert desc.msg != "waiting in the Slurm queue: Reason=None"
    finally:
        slurm.cancel(wait_id)
        slurm.cancel(block_id)
    for app_id in (wait_id, block_id):
        desc = slurm.wait(app_id, timeout=WAIT_S)
        assert desc is not None and desc.state == AppState.CANCELLED
        slurm.cancel(app_id)  # ended: a no-op
    slurm.cancel("999999")  # unknown: a no-op
