"""The sbatch script and command built for an app, and the parsing of Slurm's answers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torchx.schedulers import get_scheduler
from torchx.schedulers._slurm_parse import (
    ExitRecord,
    SlurmOutputError,
    app_state,
    exit_code,
    job_app_state,
    lead_component,
    parse_sacct,
    parse_scontrol,
    read_exit_record,
    roles_from_comment,
)
from torchx.schedulers.slurm_scheduler import SlurmBatchRequest, SlurmScheduler
from torchx.specs import AppDef, AppState, Resource, Role, SpecsError, macros


def _dryrun(app: AppDef, **cfg: object) -> SlurmBatchRequest:
    info = SlurmScheduler().submit_dryrun(app, cfg)  # type: ignore[arg-type]
    return info.request


def test_registered() -> None:
    assert isinstance(get_scheduler("slurm"), SlurmScheduler)


def test_one_role_is_a_plain_job_with_its_resources(tmp_path: Path) -> None:
    app = AppDef(
        "train",
        [
            Role(
                "trainer",
                image="",
                entrypoint=sys.executable,
                args=[
                    "-c",
                    "import os, sys; print(sys.argv[1:], os.environ['A'], os.environ['RANK'])",
                    f"r{macros.replica_id}",
                    "it's $HOME",
                ],
                env={"A": "b c"},
                num_replicas=2,
                resource=Resource(cpu=1.5, gpu=1, memMB=512),
            )
        ],
    )
    req = _dryrun(app, partition="p1", time="10", exclusive=True, job_dir="/x/y")
    assert req.cmd == ["sbatch", "--parsable", "--chdir=/x/y"]
    assert req.job_dir == "/x/y"
    sbatch = [ln for ln in req.script.splitlines() if ln.startswith("#SBATCH")]
    assert sbatch == [
        "#SBATCH --job-name=train",
        "#SBATCH --comment=torchx:roles=trainer:2",
        "#SBATCH --output=slurm-%j.out",
        "#SBATCH --requeue",
        "#SBATCH --partition=p1",
        "#SBATCH --time=10",
        "#SBATCH --exclusive",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=1",
        "#SBATCH --cpus-per-task=2",
        "#SBATCH --mem=512",
        "#SBATCH --gpus-per-node=1",
    ]
    assert "hetjob" not in req.script
    srun = [ln for ln in req.script.splitlines() if ln.startswith("srun")]
    assert len(srun) == 1
    assert srun[0] == (
        "srun --job-name=trainer --kill-on-bad-exit=1 --open-mode=append "
        '--output="slurm-${TORCHX_APP_ID}-trainer-%t.out" '
        '--error="slurm-${TORCHX_APP_ID}-trainer-%t.err" bash -c torchx_role_0 &'
    )
    # What each task runs, a function of the script: the replica id is expanded by the
    # task's shell, nothing else is.
    lines = req.script.splitlines()
    start = lines.index("torchx_role_0() {")
    function = "\n".join(lines[start : lines.index("}", start) + 1])
    inner = f"{function}\ntorchx_role_0"
    env = {
        "SLURM_PROCID": "1",
        "PATH": os.environ["PATH"],
        "HOME": "/h",
        "TORCHX_JOB_DIR": str(tmp_path),
        "TORCHX_APP_ID": "42",
        "SLURMD_NODENAME": "n7",
        "TORCHX_ATTEMPT": "2",
    }
    out = subprocess.run(["bash", "-c", inner], env=env, capture_output=True, text=True)
    # a restarted job's attempt starts with the marker line `torchx log` knows
    marker = "[torchx] attempt 3 of trainer/1 starts: restart 2 of the job\n"
    assert out.stdout == marker + "['r1', \"it's $HOME\"] b c 1\n"
    assert out.stderr == marker
    # the wrapper records the replica's exit code and node, and exits with that code
    assert out.returncode == 0
    assert sorted(os.listdir(tmp_path)) == ["slurm-42-trainer-1.exit"]
    assert (tmp_path / "slurm-42-trainer-1.exit").read_text() == "0 n7 2\n"
    env["SLURM_PROCID"] = "0"
    failing = inner.replace("import os, sys;", "import os, sys; sys.exit(5);")
    assert subprocess.run(["bash", "-c", failing], env=env, capture_output=True).returncode == 5
    assert (tmp_path / "slurm-42-trainer-0.exit").read_text() == "5 n7 2\n"


def test_two_roles_make_a_heterogeneous_job() -> None:
    app = AppDef(
        "pair",
        [
            Role("a", image="", entrypoint="echo", args=["x"]),
            Role("b", image="", entrypoint="echo", args=["y"], resource=Resource(1, 0, 100)),
        ],
    )
    req = _dryrun(
        app,
        partition="debug",
        comment="hello",
        mail_user="me@example.com",
        mail_type="END",
        account="acc",
        qos="high",
        constraint="fast",
        sbatch_args=["--nice=5"],
    )
    assert req.cmd == ["sbatch", "--parsable", "--nice=5"]
    lines = req.script.splitlines()
    head = lines[: lines.index("#SBATCH hetjob")]
    tail = lines[lines.index("#SBATCH hetjob") + 1 : lines.index("")]
    # every component has its own partition, constraint, account, QOS and size
    per_component = [
        "#SBATCH --partition=debug",
        "#SBATCH --constraint=fast",
        "#SBATCH --account=acc",
        "#SBATCH --qos=high",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks-per-node=1",
    ]
    assert [ln for ln in head if ln.startswith("#SBATCH")] == [
        "#SBATCH --job-name=pair",
        "#SBATCH '--comment=torchx:roles=a,b; hello'",
        "#SBATCH --output=slurm-%j.out",
        "#SBATCH --requeue",
        "#SBATCH --mail-user=me@example.com",
        "#SBATCH --mail-type=END",
        *per_component,
    ]
    assert tail == [*per_component, "#SBATCH --cpus-per-task=1", "#SBATCH --mem=100"]
    srun = [ln for ln in lines if ln.startswith("srun")]
    assert [s.split()[1] for s in srun] == ["--het-group=0", "--het-group=1"]


def test_workspace_needs_job_dir(tmp_path: object) -> None:
    s = SlurmScheduler()
    app = AppDef("w", [Role("r", image="", entrypoint="true")])
    _, cfg = s.with_workspace(app, {}, str(tmp_path))
    with pytest.raises(SpecsError, match="job_dir"):
        s.submit_dryrun(app, cfg)
    with pytest.raises(SpecsError, match=r"workspace.*must be a directory"):
        s.with_workspace(app, {}, "/no/such/dir")


def test_bad_role_names_and_entrypoints() -> None:
    with pytest.raises(SpecsError, match=re.escape("role[0] 'a b' name 'a b' has characters")):
        _dryrun(AppDef("x", [Role("a b", image="", entrypoint="true")]))
    with pytest.raises(SpecsError, match="entrypoint"):
        _dryrun(AppDef("x", [Role("a", image="")]))
    with pytest.raises(SpecsError, match="app_id: got 'abc'"):
        SlurmScheduler().describe("abc")


def test_parse_sacct_het_job() -> None:
    # Submit|Start|End
    t = "2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:09"
    out = (
        f"7+0|pair|FAILED|3:0|node1|{t}|/w|torchx:roles=a,b\n"
        f"7+0.batch|batch|FAILED|3:0|node1|{t}||\n"
        f"7+0.0|a|COMPLETED|0:0|node1|{t}||\n"
        f"7+1|pair|COMPLETED|0:0|node2|{t}|/w|torchx:roles=a,b\n"
        f"7+1.0|b|FAILED|3:0|node2|{t}||\n"
    )
    comps = parse_sacct(out)["7"]
    assert sorted(comps) == [0, 1]
    assert comps[0].workdir == "/w"
    assert (comps[0].start, comps[0].end) == ("2026-01-01T00:00:01", "2026-01-01T00:00:09")
    assert [s.name for s in comps[0].steps] == ["a"]
    assert comps[1].steps[0].exit_code == 3


def test_roles_and_exit_records() -> None:
    assert roles_from_comment("torchx:roles=a,b:3; my note") == [("a", 1), ("b", 3)]
    assert roles_from_comment("someone else's job") == []
    assert read_exit_record("7 node2\n") == ExitRecord(7, "node2", None)
    assert read_exit_record("7 node2 3\n") == ExitRecord(7, "node2", 3)
    assert read_exit_record("") is None  # being written


def test_unparsable_lines_are_quoted() -> None:
    with pytest.raises(SlurmOutputError, match="'garbage line'"):
        parse_sacct("garbage line\n")
    with pytest.raises(SlurmOutputError, match=re.escape("'x.y|a|b|c|d|e|f|g'")):
        parse_sacct("x.y|a|b|c|d|e|f|g\n")
    with pytest.raises(SlurmOutputError, match="'Nothing=here'"):
        parse_scontrol("Nothing=here\n")


def test_parse_scontrol_values_with_spaces() -> None:
    line = (
        "JobId=5 HetJobId=4 HetJobOffset=1 JobName=my job JobState=RUNNING Reason=None "
        "ExitCode=0:9 Comment=torchx:roles=a,b; hi there WorkDir=/a b/c StdOut=/a b/c/x.out"
    )
    comp = parse_scontrol(line)[1]
    assert comp.job_id == "4"
    assert comp.name == "my job"
    assert comp.workdir == "/a b/c"
    assert comp.comment == "torchx:roles=a,b; hi there"
    assert comp.exit_code == 137


def test_states_and_exit_codes() -> None:
    assert app_state("CANCELLED by 0") == AppState.CANCELLED
    assert app_state("RUNNING") == AppState.RUNNING
    assert app_state("TIMEOUT") == AppState.FAILED
    assert app_state("WHATEVER") == AppState.UNKNOWN
    assert exit_code("2:0") == 2
    assert exit_code("") is None


def test_a_jobs_state_is_its_first_components_unless_one_was_cancelled() -> None:
    # offsets, not the order Slurm listed them in, say which component is first
    assert lead_component({1: "FAILED", 0: "COMPLETED"}) == 0
    assert job_app_state({1: "FAILED", 0: "COMPLETED"}) == AppState.SUCCEEDED
    assert job_app_state({0: "RUNNING", 1: "PENDING"}) == AppState.RUNNING
    assert lead_component({0: "COMPLETED", 2: "CANCELLED by 0", 1: "REVOKED"}) == 1
    assert job_app_state({0: "COMPLETED", 1: "CANCELLED by 0"}) == AppState.CANCELLED


def test_a_machine_without_a_slurm_configuration_is_told_where_to_run() -> None:
    from torchx.schedulers.slurm_scheduler import SlurmError

    words = "squeue failed: squeue: fatal: Could not establish a configuration source"
    assert str(SlurmError(words)).startswith(f"slurm: {words}; this machine has no Slurm ")
    down = "sbatch refused the job: Unable to contact slurm controller (connect failure)"
    assert "`scontrol ping`" in str(SlurmError(down))
    assert str(SlurmError("squeue failed: exit code 1")) == "slurm: squeue failed: exit code 1"
    assert str(SlurmError(words, "given fix")).endswith("; given fix")


@pytest.mark.parametrize(
    ("app_id", "fix"),
    [
        # the same machine's typo is named first: a sweep submitted here is found by its record
        (
            "sweep-abcdefgh",
            "check it for a typo against the SWEEP column of `torchx list -s slurm`",
        ),
        ("sweep-abcdefgh", "from the sweep's record, kept on the machine that submitted it"),
        ("train-1", "a Slurm job id is a number, e.g. 1234"),
    ],
)
def test_an_id_that_is_no_job_id_is_refused_before_any_command(app_id: str, fix: str) -> None:
    # a sweep's id reaches the scheduler only when the runner found no record of it here
    for ask in (SlurmScheduler().describe, lambda i: SlurmScheduler().describe_many([i])):
        with pytest.raises(SpecsError) as e:
            ask(app_id)
        assert fix in str(e.value) and repr(app_id) in str(e.value)


@pytest.mark.parametrize("workspace", [False, True])
def test_a_job_dir_that_cannot_be_a_directory_is_named_before_sbatch_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workspace: bool
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-slurm-here"))  # sbatch must not run
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "train.py").write_text("print(1)\n")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("kept\n")
    app = AppDef("x", [Role("r", image="", entrypoint="true")])
    slurm = SlurmScheduler()
    for job_dir, why in ((a_file, "it is a file"), (a_file / "sub", "cannot create it")):
        with pytest.raises(SpecsError) as e:
            slurm.submit(app, {"job_dir": str(job_dir)}, workspace=str(ws) if workspace else None)
        assert str(e.value).startswith(f"run option 'job_dir': got '{job_dir}'; {why}")
    assert a_file.read_text() == "kept\n"


@pytest.mark.parametrize("no_node", ["None assigned", "(null)"])
def test_a_pending_replica_has_no_host_rather_than_slurms_placeholder(no_node: str) -> None:
    from torchx.schedulers._slurm_parse import Component
    from torchx.schedulers._slurm_status import replica_statuses

    comp = Component(job_id="5", offset=0, state="PENDING", nodes=no_node)
    (replica,) = replica_statuses("5", "echo", 1, comp, AppState.PENDING, "", None)
    assert (replica.state, replica.hostname) == (AppState.PENDING, "")
    running = Component(job_id="5", offset=0, state="RUNNING", nodes="node1")
    (replica,) = replica_statuses("5", "echo", 1, running, AppState.RUNNING, "", None)
    assert replica.hostname == "node1"
