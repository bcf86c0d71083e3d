"""``SlurmScheduler.requeue``'s exact Slurm commands and its refusals, against a stand-in
``scontrol`` on PATH that plays a job through a requeue (Slurm itself: see
tests/integration/test_slurm_requeue.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import torchx.schedulers._slurm_requeue as slurm_requeue
from torchx.schedulers import SchedulerError
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppState

# Prints the job's current record (then moves on to the next one queued after a requeue,
# as Slurm's job goes COMPLETING -> PENDING), and logs every call.
SCONTROL = """#!/bin/sh
d=$(dirname "$0")
echo "$*" >> "$d/calls"
case "$1" in
show)
    if [ ! -f "$d/state" ]; then
        echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1
    fi
    cat "$d/state"
    if [ -f "$d/next" ]; then mv "$d/next" "$d/state"; fi ;;
requeue)
    if [ -f "$d/refuse" ]; then cat "$d/refuse" >&2; exit 1; fi
    cp "$d/completing" "$d/state"; cp "$d/pending" "$d/next" ;;
update)
    cp "$d/running" "$d/state" ;;
esac
"""


def job(state: str, job_dir: Path, restarts: int = 0, **more: str) -> str:
    fields = {
        "JobId": "77",
        "JobName": "app",
        "JobState": state,
        "Reason": "None",
        "Requeue": "1",
        "Restarts": str(restarts),
        "StartTime": "Unknown",
        "Comment": "torchx:roles=sh",
        "WorkDir": str(job_dir),
        **more,
    }
    return " ".join(f"{k}={v}" for k, v in fields.items()) + "\n"


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    (d / "scontrol").write_text(SCONTROL)
    # no accounting: describe reads scontrol alone
    (d / "sacct").write_text(
        "#!/bin/sh\necho 'sacct: accounting storage is disabled' >&2\nexit 1\n"
    )
    for tool in ("scontrol", "sacct"):
        (d / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{d}{os.pathsep}{os.environ['PATH']}")
    return d


def calls(bin_dir: Path) -> list[str]:
    out: list[str] = []
    for line in (bin_dir / "calls").read_text().splitlines():
        if not out or out[-1] != line:  # a poll repeated is one step
            out.append(line)
    return out


def test_requeue_records_a_preemption_requeues_and_lifts_the_begin_time_hold(
    bin_dir: Path, tmp_path: Path
) -> None:
    (bin_dir / "state").write_text(job("RUNNING", tmp_path))
    (bin_dir / "completing").write_text(job("COMPLETING", tmp_path, restarts=1))
    (bin_dir / "pending").write_text(
        job("PENDING", tmp_path, restarts=1, Reason="BeginTime", StartTime="2099-01-01T00:00:00")
    )
    (bin_dir / "running").write_text(job("RUNNING", tmp_path, restarts=1))
    desc = SlurmScheduler("t").requeue("77")
    assert calls(bin_dir) == [
        "show job -o 77",
        "requeue 77",
        "show job -o 77",
        "update JobId=77 StartTime=now",
        "show job -o 77",
    ]
    assert (tmp_path / "slurm-77.requeues").read_text() == "preemption 0 requested\n"
    assert desc is not None and desc.state == AppState.RUNNING, desc
    assert (desc.num_preemptions, desc.num_restarts) == (1, 0), desc
    assert desc.roles_statuses[0].replicas[0].attempt == 2, desc


def refused(app_id: str = "77") -> str:
    with pytest.raises(SchedulerError) as e:
        SlurmScheduler("t").requeue(app_id)
    message = str(e.value)
    assert "\n" not in message, message
    return message


@pytest.mark.parametrize(
    ("record", "says"),
    [
        ({"JobState": "COMPLETED"}, "77: it has already ended (SUCCEEDED, Slurm's COMPLETED)"),
        ({"JobState": "PENDING", "Reason": "Priority"}, "it is PENDING (Slurm's PENDING, Reason"),
        ({"JobState": "COMPLETING"}, "it is ending (Slurm's COMPLETING)"),
        ({"Requeue": "0"}, "not requeueable (Requeue=0"),
        ({"ArrayJobId": "70", "ArrayTaskId": "7"}, "array (Slurm array task 70_7), not one trial"),
    ],
)
def test_what_cannot_be_requeued_is_refused_before_anything_changes(
    bin_dir: Path, tmp_path: Path, record: dict[str, str], says: str
) -> None:
    (tmp_path / "slurm-77.requeues").write_text("time_limit 0\n")
    fields = {"JobState": "RUNNING", **record}
    state = fields.pop("JobState")
    (bin_dir / "state").write_text(job(state, tmp_path, **fields))
    message = refused()
    assert says in message and "slurm: cannot requeue app 77:" in message, message
    assert calls(bin_dir) == ["show job -o 77"]
    assert (tmp_path / "slurm-77.requeues").read_text() == "time_limit 0\n"


def test_a_sweep_trial_is_requeued_alone_under_its_own_id(bin_dir: Path, tmp_path: Path) -> None:
    # array task 70_7 is Slurm's job 71; its script names its requeues after 70_7
    task = {"JobId": "71", "ArrayJobId": "70", "ArrayTaskId": "7"}
    (bin_dir / "state").write_text(job("RUNNING", tmp_path, **task))
    (bin_dir / "completing").write_text(job("COMPLETING", tmp_path, restarts=1, **task))
    (bin_dir / "pending").write_text(
        job("PENDING", tmp_path, restarts=1, Reason="BeginTime", **task)
    )
    (bin_dir / "running").write_text(job("RUNNING", tmp_path, restarts=1, **task))
    desc = SlurmScheduler("t").requeue("70_7")
    show = "show job -o 70_7"
    assert calls(bin_dir) == [show, "requeue 70_7", show, "update JobId=70_7 StartTime=now", show]
    assert (tmp_path / "slurm-70_7.requeues").read_text() == "preemption 0 requested\n"
    assert not (tmp_path / "slurm-71.requeues").exists()
    assert desc is not None and (desc.num_preemptions, desc.num_restarts) == (1, 0), desc
    (bin_dir / "state").unlink()
    assert SlurmScheduler("t").requeue("78") is None


def test_a_trial_started_by_an_earlier_version_has_its_requeues_read(
    bin_dir: Path, tmp_path: Path
) -> None:
    # its script named the file after the task's own job id (71), not 70_7
    task = {"JobId": "71", "ArrayJobId": "70", "ArrayTaskId": "7"}
    (bin_dir / "state").write_text(job("RUNNING", tmp_path, restarts=2, **task))
    (tmp_path / "slurm-71.requeues").write_text("preemption 0\n")
    desc = SlurmScheduler("t").describe("70_7")
    assert desc is not None and (desc.num_preemptions, desc.num_restarts) == (1, 1), desc
    # the trial's own file, once there, is the one read
    (tmp_path / "slurm-70_7.requeues").write_text("preemption 0\ntime_limit 1\n")
    desc = SlurmScheduler("t").describe("70_7")
    assert desc is not None and (desc.num_preemptions, desc.num_restarts) == (2, 0), desc


def test_slurms_refusal_is_said_and_the_record_taken_back(bin_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "slurm-77.requeues").write_text("preemption 0\n")
    (bin_dir / "state").write_text(job("RUNNING", tmp_path, restarts=1))
    (bin_dir / "refuse").write_text("Requested operation is presently disabled for job 77\n")
    message = refused()
    assert "Slurm refused `scontrol requeue 77`: Requested operation is presently disabled" in (
        message
    )
    assert calls(bin_dir) == ["show job -o 77", "requeue 77"]
    # what the job's own requeues wrote stays, the line written for this one is gone
    assert (tmp_path / "slurm-77.requeues").read_text() == "preemption 0\n"


def test_an_unwritable_job_dir_is_refused_before_the_requeue(bin_dir: Path, tmp_path: Path) -> None:
    (bin_dir / "state").write_text(job("RUNNING", tmp_path / "gone"))
    assert "cannot record the requeue in" in refused()
    assert calls(bin_dir) == ["show job -o 77"]


def test_a_hold_not_lifted_in_time_names_the_limit(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slurm_requeue, "RELEASE_WAIT_S", 1.0)
    (bin_dir / "state").write_text(job("RUNNING", tmp_path))
    (bin_dir / "completing").write_text(job("COMPLETING", tmp_path, restarts=1))
    (bin_dir / "pending").write_text(job("COMPLETING", tmp_path, restarts=1))
    with pytest.raises(SchedulerError, match="hold was not lifted within 1s") as e:
        SlurmScheduler("t").requeue("77")
    assert "StartTime=now" in str(e.value)
    # the requeue itself happened and stays counted
    assert (tmp_path / "slurm-77.requeues").read_text() == "preemption 0 requested\n"
