"""``SlurmScheduler.requeue``'s exact Slurm commands and its refusals, against a stand-in
``scontrol`` on PATH that plays a job through a requeue (Slurm itself: see
tests/integration/test_slurm_requeue.py)."""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import torchx.schedulers._slurm_preemption as slurm_preemption
import torchx.schedulers._slurm_requeue as slurm_requeue
from torchx.schedulers import SchedulerError
from torchx.schedulers._sbatch_workdir import job_workdir
from torchx.schedulers._slurm_commands import SlurmTimeoutError, run
from torchx.schedulers._slurm_preemption import (
    TIMEOUT_REASON_PREFIX,
    clear_requests,
    read_requeues,
    script_wait_and_requeue,
)
from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, AppState, CfgVal, Role

# Prints the job's current record (then moves on to the next one queued after a requeue,
# as Slurm's job goes COMPLETING -> PENDING), and logs every call.
SCONTROL = """#!/bin/sh
d=$(dirname "$0")
echo "$*" >> "$d/calls"
case "$1" in
show)
    if [ -f "$d/show_fails" ]; then cat "$d/show_fails" >&2; exit 1; fi
    if [ ! -f "$d/state" ]; then
        echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1
    fi
    cat "$d/state"
    if [ -f "$d/next" ]; then mv "$d/next" "$d/state"; fi ;;
requeue)
    if [ -f "$d/before_requeue" ]; then . "$d/before_requeue"; fi
    if [ -f "$d/refuse" ]; then cat "$d/refuse" >&2; exit 1; fi
    cp "$d/completing" "$d/state"; cp "$d/pending" "$d/next" ;;
update)
    if [ -f "$d/refuse_update" ]; then cat "$d/refuse_update" >&2; exit 1; fi
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


def records(job_dir: Path, app_id: str = "77", attempt: int = 0) -> list[Path]:
    """``torchx requeue``'s records of requests for ``attempt``: one file a request."""
    job, _, task = app_id.partition("_")
    folder = job_dir / f"slurm-{job}.requested" / task
    return list(folder.glob(f"{attempt}.*"))


def record(job_dir: Path, app_id: str = "77", attempt: int = 0) -> Path:
    (found,) = records(job_dir, app_id, attempt)
    return found


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
    # torchx's record is a file of its own, named after the attempt it stopped
    assert record(tmp_path).read_text() == "preemption 0 requested\n"
    assert not (tmp_path / "slurm-77.requeues").exists()
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
    assert not list(tmp_path.glob("*.requested/**/*.*"))


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
    assert record(tmp_path, "70_7").read_text() == "preemption 0 requested\n"
    assert not list(tmp_path.glob("slurm-71.*"))
    assert desc is not None and (desc.num_preemptions, desc.num_restarts) == (1, 0), desc
    (bin_dir / "state").unlink()
    assert SlurmScheduler("t").requeue("78") is None


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files that reading a job's requeues opens, in order."""
    names: list[str] = []

    def counting_open(file: str, *args: Any, **kwargs: Any) -> Any:
        names.append(os.path.basename(file))
        return open(file, *args, **kwargs)

    monkeypatch.setattr(slurm_preemption, "open", counting_open, raising=False)
    return names


def both_names(own: str, legacy: str) -> list[str]:
    """What reading a trial's requeues opens where it has none of its own files: each
    name of its own, then the earlier version's."""
    return [f"slurm-{i}.{kind}" for kind in ("requeues", "reason") for i in (own, legacy)]


def test_a_trial_started_by_an_earlier_version_has_its_requeues_read(
    bin_dir: Path, tmp_path: Path, opened: list[str]
) -> None:
    # its script named the file after the task's own job id (71), not 70_7
    task = {"JobId": "71", "ArrayJobId": "70", "ArrayTaskId": "7"}
    (bin_dir / "state").write_text(job("RUNNING", tmp_path, restarts=2, **task))
    (tmp_path / "slurm-71.requeues").write_text("preemption 0\n")
    desc = SlurmScheduler("t").describe("70_7")
    assert desc is not None and (desc.num_preemptions, desc.num_restarts) == (1, 1), desc
    # the trial's own name first, the earlier version's only where that is absent
    assert opened == both_names("70_7", "71")
    opened.clear()
    # the trial's own file, once there, is the one read
    (tmp_path / "slurm-70_7.requeues").write_text("preemption 0\ntime_limit 1\n")
    desc = SlurmScheduler("t").describe("70_7")
    assert desc is not None and (desc.num_preemptions, desc.num_restarts) == (2, 0), desc
    assert opened == ["slurm-70_7.requeues", "slurm-70_7.reason", "slurm-71.reason"]


def test_a_trial_reads_an_earlier_versions_file_only_without_its_own(
    tmp_path: Path, opened: list[str]
) -> None:
    d = str(tmp_path)
    # never requeued (most trials): each name tried once, found nowhere
    assert read_requeues(d, "70_7", "71", before=1) == (0, "")
    assert opened == both_names("70_7", "71")
    opened.clear()
    # its own file found: the earlier version's name is not read
    (tmp_path / "slurm-70_7.requeues").write_text("preemption 0\n")
    (tmp_path / "slurm-71.requeues").write_text("preemption 0\npreemption 1\n")
    assert read_requeues(d, "70_7", "71", before=2) == (1, "")
    assert opened[0] == "slurm-70_7.requeues" and "slurm-71.requeues" not in opened
    # an earlier version's trial stopped at its time limit wrote its reason alone
    opened.clear()
    why = f"{TIMEOUT_REASON_PREFIX} the job reached its time limit"
    (tmp_path / "slurm-72.reason").write_text(why + "\n")
    assert read_requeues(d, "70_8", "72", before=0) == (0, why)
    assert opened == both_names("70_8", "72")


def test_a_read_error_partway_keeps_the_attempts_read_and_no_earlier_name(
    tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "slurm-70_7.requeues").write_text("preemption 0\ntime_limit 1\npreemption 2\n")
    (tmp_path / "slurm-71.requeues").write_text("preemption 5\npreemption 6\n")
    counting_open = slurm_preemption.open  # type: ignore[attr-defined]

    def failing_after_a_line(file: str, *args: Any, **kwargs: Any) -> Any:
        f = counting_open(file, *args, **kwargs)
        if not file.endswith("slurm-70_7.requeues"):
            return f

        def lines() -> Any:
            with f:
                yield f.readline()
                raise OSError(5, "Input/output error")  # a disk failing under the file

        return contextlib.nullcontext(lines())

    monkeypatch.setattr(slurm_preemption, "open", failing_after_a_line, raising=False)
    # attempt 0 was read before the error; the file is the trial's own, so 71's is not read
    assert read_requeues(str(tmp_path), "70_7", "71") == (1, "")
    assert "slurm-71.requeues" not in opened


def test_damaged_requeue_files_are_read_around_what_is_damaged(tmp_path: Path) -> None:
    d = str(tmp_path)
    # a count must be ASCII digits: '²' is a digit to str.isdigit, not to int
    (tmp_path / "slurm-77.requested").mkdir()
    (tmp_path / "slurm-77.requested/\u00b2.a1").write_text("preemption 0 requested\n")
    (tmp_path / "slurm-77.requested/1.b2").write_text("preemption 1 requested\n")
    (tmp_path / "slurm-77.requeues").write_bytes(
        b"preemption \xc2\xb2\npreemption 0 \xff\xfe\n\xffpreemption 2\n"
    )
    (tmp_path / "slurm-77.reason").write_bytes(b"past the cap \xff\n")
    # attempt 0 (its line's damaged end aside), 1 (asked), and 2: a damaged first word
    # ('\ufffdpreemption') still has its attempt after it; '²' is no attempt
    assert read_requeues(d, "77") == (3, "past the cap \ufffd")
    assert read_requeues(d, "77", before=2) == (2, "past the cap \ufffd")


def test_describe_never_lists_the_job_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a sweep's job directory: every trial's logs and exit records, and its requeue files
    for i in range(500):
        (tmp_path / f"slurm-70_{i}.out").touch()
    (tmp_path / "slurm-70_7.requeues").write_text("preemption 0\n")
    (tmp_path / "slurm-70.requested/7").mkdir(parents=True)
    (tmp_path / "slurm-70.requested/7/1.a1").write_text("preemption 1 requested\n")
    listed: list[str] = []
    for module, name in ((os, "scandir"), (os, "listdir"), (glob, "glob"), (glob, "iglob")):
        real = getattr(module, name)

        def counting(path: Any = ".", *args: Any, _real: Any = real, **kw: Any) -> Any:
            listed.append(os.path.normpath(str(path)))
            return _real(path, *args, **kw)

        monkeypatch.setattr(module, name, counting)
    assert read_requeues(str(tmp_path), "70_7", "71", before=2) == (2, "")
    assert read_requeues(str(tmp_path), "70_8", "72") == (0, "")
    # the one trial's request folder alone, once each (absent for the second)
    assert listed == [
        str(tmp_path / "slurm-70.requested/7"),
        str(tmp_path / "slurm-70.requested/8"),
    ]


def test_slurms_refusal_is_said_and_the_record_taken_back(bin_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "slurm-77.requeues").write_text("preemption 0\n")
    (bin_dir / "state").write_text(job("RUNNING", tmp_path, restarts=1))
    (bin_dir / "refuse").write_text("Requested operation is presently disabled for job 77\n")
    message = refused()
    assert "Slurm refused `scontrol requeue 77`: Requested operation is presently disabled" in (
        message
    )
    assert calls(bin_dir) == ["show job -o 77", "requeue 77"]
    # what the job's own requeues wrote stays, the record written for this one is gone
    assert (tmp_path / "slurm-77.requeues").read_text() == "preemption 0\n"
    assert not list(tmp_path.glob("*.requested/**/*.*"))


def test_an_unwritable_job_dir_is_refused_before_the_requeue(bin_dir: Path, tmp_path: Path) -> None:
    (bin_dir / "state").write_text(job("RUNNING", tmp_path / "gone"))
    assert "cannot record the requeue in" in refused()
    assert calls(bin_dir) == ["show job -o 77"]


def test_a_hold_not_lifted_in_time_names_the_limit(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # past at once: Slurm is still asked once, however late the first poll comes
    monkeypatch.setattr(slurm_requeue, "RELEASE_WAIT_S", 0.0)
    (bin_dir / "state").write_text(job("RUNNING", tmp_path))
    (bin_dir / "completing").write_text(job("COMPLETING", tmp_path, restarts=1))
    (bin_dir / "pending").write_text(job("COMPLETING", tmp_path, restarts=1))
    with pytest.raises(SchedulerError) as e:
        SlurmScheduler("t").requeue("77")
    text = str(e.value)
    assert text.startswith("slurm: app 77 was requeued, but its begin-time hold"), text
    assert "not lifted within 0 s (RELEASE_WAIT_S; it is COMPLETING, Reason=None)" in text
    assert "StartTime=now" in text and "\n" not in text
    # the requeue itself happened and stays counted
    assert record(tmp_path).read_text() == "preemption 0 requested\n"


def _requeue_played(bin_dir: Path, tmp_path: Path) -> None:
    """A running job that a requeue takes through COMPLETING to PENDING, held."""
    (bin_dir / "state").write_text(job("RUNNING", tmp_path))
    (bin_dir / "completing").write_text(job("COMPLETING", tmp_path, restarts=1))
    (bin_dir / "pending").write_text(
        job("PENDING", tmp_path, restarts=1, Reason="BeginTime", StartTime="2099-01-01T00:00:00")
    )
    (bin_dir / "running").write_text(job("RUNNING", tmp_path, restarts=1))


def test_the_script_asking_at_the_same_moment_keeps_its_own_line(
    bin_dir: Path, tmp_path: Path
) -> None:
    # the job asks for its own requeue just as torchx does: its line goes in, its
    # `scontrol requeue` gets there first, and Slurm refuses torchx's
    _requeue_played(bin_dir, tmp_path)
    (bin_dir / "before_requeue").write_text(
        f'echo "time_limit 0" >> "{tmp_path}/slurm-77.requeues"\n'
    )
    (bin_dir / "refuse").write_text("Job is pending execution\n")
    assert "Slurm refused `scontrol requeue 77`: Job is pending execution" in refused()
    assert (tmp_path / "slurm-77.requeues").read_text() == "time_limit 0\n"
    assert not list(tmp_path.glob("*.requested/**/*.*"))


def test_a_refused_request_leaves_the_record_of_one_slurm_accepted(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two `torchx requeue 77` at once, both past their check of the running attempt 0:
    # Slurm takes the other one's, then refuses this one's
    (bin_dir / "state").write_text(job("RUNNING", tmp_path))
    (bin_dir / "completing").write_text(job("COMPLETING", tmp_path, restarts=1))
    (bin_dir / "pending").write_text(job("RUNNING", tmp_path, restarts=1))
    taken: list[str] = []

    def other_first(argv: list[str], **kw: Any) -> Any:
        if argv[1] != "requeue" or taken:
            return run(argv, **kw)
        taken.append("other")
        other = SlurmScheduler("t").requeue("77")
        assert other is not None and other.num_preemptions == 1, other
        return subprocess.CompletedProcess(argv, 1, "", "Job is pending execution\n")

    monkeypatch.setattr(slurm_requeue, "run", other_first)
    assert "Slurm refused `scontrol requeue 77`: Job is pending execution" in refused()
    assert taken == ["other"]
    # the restart is still the other request's preemption, not a failure
    desc = SlurmScheduler("t").describe("77")
    assert desc is not None and (desc.num_preemptions, desc.num_restarts) == (1, 0), desc
    assert record(tmp_path).read_text() == "preemption 0 requested\n"


def test_a_record_name_already_taken_is_refused_and_left_alone(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(secrets, "token_hex", lambda n: "5eed")
    (tmp_path / "slurm-77.requested").mkdir()
    theirs = tmp_path / "slurm-77.requested/0.5eed"
    theirs.write_text("not this request's\n")
    (bin_dir / "state").write_text(job("RUNNING", tmp_path))
    assert f"cannot record the requeue in {theirs} (File exists)" in refused()
    assert calls(bin_dir) == ["show job -o 77"]
    assert theirs.read_text() == "not this request's\n"


def test_ctrl_c_after_the_record_before_scontrol_starts_leaves_no_record(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _requeue_played(bin_dir, tmp_path)
    write = slurm_requeue._record

    def written_then_stopped(path: str, line: str, app_id: str) -> None:
        write(path, line, app_id)
        raise KeyboardInterrupt

    monkeypatch.setattr(slurm_requeue, "_record", written_then_stopped)
    with pytest.raises(KeyboardInterrupt):
        SlurmScheduler("t").requeue("77")
    assert calls(bin_dir) == ["show job -o 77"]  # scontrol requeue never ran
    assert not list(tmp_path.glob("*.requested/**/*.*"))


def _stop_requeue(
    monkeypatch: pytest.MonkeyPatch, stop: Callable[[list[str]], BaseException], ran: bool
) -> None:
    """``scontrol requeue`` ends in ``stop(argv)`` raised, once the stand-in ran (``ran``)
    or before it could."""

    def stopped(argv: list[str], **kw: Any) -> Any:
        if argv[1] != "requeue":
            return run(argv, **kw)
        if ran:
            run(argv, **kw)
        raise stop(argv)

    monkeypatch.setattr(slurm_requeue, "run", stopped)


@pytest.mark.parametrize("requeued", [False, True], ids=["before", "after"])
def test_ctrl_c_during_the_requeue_leaves_a_record_only_of_a_requeue_slurm_shows(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, requeued: bool
) -> None:
    _requeue_played(bin_dir, tmp_path)
    # after: Slurm took it, then the user pressed Ctrl-C
    _stop_requeue(monkeypatch, lambda argv: KeyboardInterrupt(), ran=requeued)
    with pytest.raises(KeyboardInterrupt):
        SlurmScheduler("t").requeue("77")
    assert calls(bin_dir)[-1] == "show job -o 77"  # asked Slurm what became of it
    assert len(records(tmp_path)) == requeued


@pytest.mark.parametrize("requeued", [False, True], ids=["not-requeued", "requeued"])
def test_a_requeue_past_the_time_limit_is_settled_by_what_slurm_shows(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, requeued: bool
) -> None:
    _requeue_played(bin_dir, tmp_path)
    # requeued: Slurm carried it out, but its answer came too late
    _stop_requeue(monkeypatch, SlurmTimeoutError, ran=requeued)
    if requeued:
        desc = SlurmScheduler("t").requeue("77")  # the hold is lifted as usual
        assert desc is not None and desc.state == AppState.RUNNING, desc
        assert desc.num_preemptions == 1, desc
        assert record(tmp_path).exists()
        return
    text = refused()
    assert "`scontrol requeue 77` did not finish within 60 s" in text, text
    assert "the job was not requeued (0 restarts, as before)" in text, text
    assert not list(tmp_path.glob("*.requested/**/*.*"))


def test_a_requeue_slurm_cannot_be_asked_about_keeps_its_record_and_says_where(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _requeue_played(bin_dir, tmp_path)
    # slurmctld stops answering: the requeue, then the question what became of it
    (bin_dir / "before_requeue").write_text(
        f'echo "Unable to contact slurm controller" > "{bin_dir}/show_fails"; exit 0\n'
    )
    _stop_requeue(monkeypatch, SlurmTimeoutError, ran=True)
    text = refused()
    kept = record(tmp_path)
    assert "whether the job was requeued is not known, so torchx keeps its record" in text
    assert f"{kept}; remove that file if" in text and "Restarts=0" in text, text


def test_slurm_refusing_to_lift_the_hold_is_said_in_its_own_words(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slurm_requeue, "_LIFT_REFUSALS", 1)
    _requeue_played(bin_dir, tmp_path)
    (bin_dir / "refuse_update").write_text("Access/permission denied\n")
    text = refused()
    assert text.startswith("slurm: app 77 was requeued, but Slurm refused to lift its"), text
    assert "StartTime=now`, 1 times): Access/permission denied" in text, text
    assert "(it is PENDING, Reason=BeginTime)" in text, text
    assert record(tmp_path).exists()


def test_slurm_failing_after_the_requeue_says_the_requeue_happened(
    bin_dir: Path, tmp_path: Path
) -> None:
    _requeue_played(bin_dir, tmp_path)
    (bin_dir / "before_requeue").write_text(
        f'echo "Unable to contact slurm controller" > "{bin_dir}/show_fails"\n'
    )
    text = refused()
    assert text.startswith("slurm: app 77 was requeued, but then scontrol show job failed"), text
    assert "it starts by itself once its begin time passes" in text, text
    assert record(tmp_path).exists()


def counted(job_dir: Path, attempt: int) -> tuple[int, int]:
    """How many attempts before ``attempt`` of job 77 were requeued: (the job script's
    count, describe's)."""
    (line,) = [ln for ln in script_wait_and_requeue() if ln.startswith("torchx_requeued=$(")]
    script = (
        "set -u\n"  # as the job script runs it
        f'torchx_requeues="{job_dir}/slurm-77.requeues"\n'
        f'torchx_requested="{job_dir}/slurm-77.requested"\n'
        f'{line}\necho "$torchx_requeued"\n'
    )
    env = {"PATH": os.environ["PATH"], "TORCHX_ATTEMPT": str(attempt)}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, ""), done
    return int(done.stdout), read_requeues(str(job_dir), "77", before=attempt)[0]


def test_each_requeued_attempt_counts_once_and_a_request_for_this_one_not_yet(
    tmp_path: Path,
) -> None:
    # the name of the job's directory holds the files' marker, a space and glob characters
    job_dir = tmp_path / "a.requested 9 b[*]"
    job_dir.mkdir()
    assert counted(job_dir, 3) == (0, 0)  # no files at all: none requeued
    # the script's own lines and torchx's request files, as the script and describe read them
    (job_dir / "slurm-77.requeues").write_text("time_limit 0\npreemption 2\n")
    # 0 and 2 are also in the script's lines, 2 asked twice at once; 3 is the running one;
    # a name that is no request's is skipped
    for name in ("slurm-77.requested/", "slurm-770.requested/"):
        (job_dir / name).mkdir()
    for name in ("0.a1", "1.g7", "2.b2", "2.c3", "3.d4", "x.f6"):
        (job_dir / f"slurm-77.requested/{name}").write_text("preemption requested\n")
    (job_dir / "slurm-770.requested/1.e5").write_text("another job's\n")
    assert counted(job_dir, 3) == (3, 3)
    assert counted(job_dir, 4) == (4, 4)


def test_a_request_name_with_a_newline_counts_as_describe_reads_it(tmp_path: Path) -> None:
    # a name is any bytes but '/': a newline in its attempt part makes it no request, one
    # after its first dot leaves the attempt before it
    (tmp_path / "slurm-77.requested").mkdir()
    for name in ("1\n2.a1", "x\n3.b2", "\n.c3", "0.d4\n4"):
        (tmp_path / f"slurm-77.requested/{name}").write_text("preemption requested\n")
    assert counted(tmp_path, 5) == (1, 1)


@pytest.mark.parametrize(
    ("lines", "names"),
    [
        ("", ("01.a", "1.b")),
        ("preemption 1\n", ("01.a",)),
        ("preemption 01\n", ("1.a",)),
        ("preemption 1\npreemption 01\n", ()),
        ("preemption 00\n", ("0.a", "000.b")),
    ],
)
def test_an_attempt_written_with_leading_zeros_is_the_same_attempt(
    tmp_path: Path, lines: str, names: tuple[str, ...]
) -> None:
    # torchx writes none, but a hand-made name or line may: both readers compare numbers
    (tmp_path / "slurm-77.requeues").write_text(lines)
    (tmp_path / "slurm-77.requested").mkdir()
    for name in names:
        (tmp_path / f"slurm-77.requested/{name}").write_text("preemption requested\n")
    assert counted(tmp_path, 5) == (1, 1)


def test_an_arrays_own_id_counts_none_of_its_trials_folders(tmp_path: Path) -> None:
    # slurm-77.requested/ holds trial 1's and trial 3's folders (one with a request in it)
    # and a file named like a trial: none of them is a request of job 77 itself
    for name in ("slurm-77.requested/1/0.a1", "slurm-77.requested/3/x"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("preemption requested\n")
    (tmp_path / "slurm-77.requested/2").write_text("no dot: no request\n")
    assert counted(tmp_path, 5) == (0, 0)
    # the trial's own count still sees its request
    assert read_requeues(str(tmp_path), "77_1", before=5)[0] == 1


def test_a_requeues_line_without_its_attempt_counts_for_neither(tmp_path: Path) -> None:
    # no torchx writes one; a hand-edited or cut file may hold it
    (tmp_path / "slurm-77.requeues").write_text("preemption\n")
    assert counted(tmp_path, 2) == (0, 0)


def test_a_new_job_under_a_reused_id_starts_without_an_old_jobs_requests(tmp_path: Path) -> None:
    # the job's own requests, an array task's (inside its array's folder), another job's
    for name in (
        "slurm-77.requested/1.a1",
        "slurm-77.requested/3/1.b2",
        "slurm-770.requested/0.c3",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("preemption 0 requested\n")
    (tmp_path / "slurm-77.requeues").write_text("time_limit 0\n")
    clear_requests(str(tmp_path), "77")
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert left == ["slurm-77.requeues", "slurm-770.requested", "slurm-770.requested/0.c3"]
    clear_requests(str(tmp_path / "gone"), "77")  # nothing to clear: no error


@pytest.mark.parametrize("where", ["cwd", "job_dir", "--chdir", "--chdir=", "-D"])
def test_a_submit_clears_an_old_jobs_requests_where_the_job_runs(
    bin_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    # sbatch gives the new job the id 77, as an ended job had before it
    (bin_dir / "sbatch").write_text('#!/bin/sh\necho "$*" >> "$(dirname "$0")/calls"\necho 77\n')
    (bin_dir / "sbatch").chmod(0o755)
    here, there = tmp_path / "here", tmp_path / "there"
    old = ("slurm-77.requested/1.a1", "slurm-77.requested/3/0.b2")
    for d in (here, there):
        for name in (*old, "slurm-770.requested/0.c3"):
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text("preemption 0 requested\n")
    monkeypatch.chdir(here)  # where sbatch runs
    options: dict[str, dict[str, CfgVal]] = {
        "cwd": {},
        "job_dir": {"job_dir": str(there)},
        "--chdir": {"sbatch_args": ["--chdir", "../there"]},  # relative to where sbatch runs
        "--chdir=": {"sbatch_args": [f"--chdir={there}"]},
        "-D": {"job_dir": str(here), "sbatch_args": ["-D", str(there)]},  # the later one wins
    }
    runs_in, other = (here, there) if where == "cwd" else (there, here)
    app = AppDef("app", [Role("sh", image="", entrypoint="echo", args=["hi"])])
    slurm = SlurmScheduler("t")
    assert slurm.schedule(slurm.submit_dryrun(app, options[where])) == "77"
    assert calls(bin_dir)[0].startswith("--parsable"), calls(bin_dir)
    assert sorted(p.name for p in runs_in.iterdir()) == ["slurm-770.requested"]
    assert len(list(other.rglob("*.*"))) == 5  # the other directory is not this job's


@pytest.mark.parametrize(
    ("args", "runs_in"),
    [
        (["--chdir=/a", "--comment", "-Dnot_a_dir"], "/a"),  # -D... is the comment
        (["-D/a", "--job-name", "--chdir=/b"], "/a"),  # so is --chdir=/b the job's name
        (["--chdir", "-D/b"], "-D/b"),  # --chdir's value, read once
        (["-D", "-Dx"], "-Dx"),
        (["-J", "-D", "--chdir=/b"], "/b"),
        (["-Jname", "-D/b"], "/b"),
        (["-vD/c"], "/c"),  # a flag, then -D with its value in the same word
        (["-D/a", "--exclusive", "-D/b", "--nice", "-D/c"], "/c"),  # flags take no word
        (["-D/a", "--", "-D/b"], "/a"),  # options end at '--'...
        (["-D/a", "job.sh", "-D/b"], "/a"),  # ...and at the script, whose arguments follow
        ([], ""),
    ],
)
def test_where_the_job_runs_is_read_from_sbatch_options_as_sbatch_reads_them(
    args: list[str], runs_in: str
) -> None:
    assert job_workdir(["sbatch", "--parsable", *args]) == os.path.abspath(runs_in or ".")
