"""Running Slurm's own commands (sbatch, sacct, scontrol, squeue, scancel) and saying why
one failed.

Every command the slurm scheduler runs goes through ``run``, with one timeout; a failure
becomes a ``SlurmError`` carrying Slurm's own words and, where those words point to one,
the fix (a run option, a field of the app, the cluster's configuration). The job ids the
commands take are checked here too, before any command runs.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping

from torchx.schedulers._errors import SchedulerError
from torchx.specs import CfgVal, SpecsError

BACKEND = "slurm"
# How long one Slurm command may take: slurmctld answers in well under a second, unless it
# is down or overloaded.
_TIMEOUT = 60
# The commands whose output is read here print their times in Slurm's standard form, the one
# slurm_time reads, whatever SLURM_TIME_FORMAT a user's profile sets (relative, %s, ...).
# sbatch keeps the user's: the job it submits inherits its environment.
_READ_TIMES_OF = frozenset({"sacct", "squeue", "scontrol"})
# a job, or task I of array job A as A_I (the id Slurm's commands take)
JOB_ID = re.compile(r"^\d+(?:_\d+)?$")
# What sbatch says, mapped to the run option or field that would fix it.
_FIXES = (
    ("partition", "partition", "choose a partition that exists (see `sinfo`)"),
    ("time limit", "time", "ask for a shorter time, within the partition's limit (`sinfo`)"),
    # With a node count the partition has (checked first): CPUs one replica asks.
    ("processors", "resource.cpu", "ask for no more CPUs per replica than a node has"),
    ("memory", "resource.memMB", "ask for less memory than the largest node has"),
    ("node configuration", "resource", "ask for fewer CPUs, GPUs or memory than a node has"),
    ("gres", "resource.gpu", "ask for fewer GPUs than a node has"),
    ("account", "account", "use an account you belong to (`sacctmgr show assoc`)"),
    ("qos", "qos", "use a QOS your account may use"),
    ("feature", "constraint", "use node features that exist (`sinfo -o %f`)"),
    (
        "--mail-type",
        "mail_type",
        "name Slurm's mail events, comma-separated: NONE, BEGIN, END, FAIL, REQUEUE, ALL",
    ),
    ("unrecognized option", "sbatch_args", "pass only flags that sbatch knows (`sbatch --help`)"),
)


# sbatch's words when a job may be too big for its partition. Only these are worth asking
# the controller for the partition's size: after any other refusal (an unreachable
# slurmctld above all) that question adds nothing, or waits out the same timeout again.
_SIZE_REFUSALS = (
    "node count specification invalid",
    "more processors requested than permitted",
    "requested node configuration is not available",
)


def refused_for_size(proc: subprocess.CompletedProcess[str]) -> bool:
    """Whether sbatch's refusal may mean the job asks more nodes than its partition has."""
    low = slurm_message(proc).lower()
    return any(words in low for words in _SIZE_REFUSALS)


class SlurmError(SchedulerError):
    """A Slurm command failed; the message carries Slurm's own words."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(BACKEND, message, fix or _reach_fix(message))


def check_job_id(app_id: str) -> None:
    """Refuse, in one line, an app id that is not a Slurm job id (a sweep's id says where
    the sweep's handle is read instead)."""
    if JOB_ID.match(app_id):
        return
    from torchx.schedulers.sweep_names import SWEEP_ID_PATTERN

    if re.fullmatch(SWEEP_ID_PATTERN, app_id):
        raise SpecsError(
            "app_id",
            app_id,
            "no sweep of that id was submitted from this machine: check it for a typo "
            "against the SWEEP column of `torchx list -s slurm`; a sweep's handle is read by "
            "the torchx CLI or Runner from the sweep's record, kept on the machine that "
            "submitted it; use it there, or name one trial by its Slurm job id (ARRAY_TASK, "
            "e.g. 1234_0)",
        )
    raise SpecsError("app_id", app_id, "a Slurm job id is a number, e.g. 1234")


def _reach_fix(message: str) -> str:
    """The fix when Slurm's words say this machine reaches no cluster at all."""
    if "Could not establish a configuration source" in message or (
        "Unable to process configuration file" in message
    ):
        return (
            "this machine has no Slurm configuration: run torchx on a node of the cluster "
            "(where `sinfo` works), or point SLURM_CONF at the cluster's slurm.conf"
        )
    if "Unable to contact slurm controller" in message:
        return (
            "slurmctld does not answer (`scontrol ping` says so): start it, or point "
            "SLURM_CONF at the cluster you use"
        )
    return ""


def run(argv: list[str], *, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run one Slurm command with the caller's environment (the times that sacct, squeue
    and scontrol print in Slurm's standard form); its output is captured."""
    env = None
    if os.path.basename(argv[0]) in _READ_TIMES_OF:
        env = {**os.environ, "SLURM_TIME_FORMAT": "standard"}
    try:
        return subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=False,
            env=env,
        )
    except FileNotFoundError:
        raise SlurmError(
            f"{argv[0]} not found: the slurm scheduler needs Slurm's commands on PATH"
        ) from None
    except subprocess.TimeoutExpired:
        raise SlurmTimeoutError(argv) from None


class SlurmTimeoutError(SlurmError):
    """A Slurm command that did not finish within the limit torchx gives each one; Slurm
    may still have carried it out."""

    def __init__(self, argv: list[str]) -> None:
        self.command = " ".join(argv[:3])
        super().__init__(
            f"`{self.command}` did not finish within {_TIMEOUT} s (torchx's limit for one "
            "Slurm command) and was stopped; Slurm may still have carried it out",
            "check that slurmctld answers (`scontrol ping`) and what became of the job "
            "(`squeue --me`), then run it again if it is needed",
        )


def slurm_message(proc: subprocess.CompletedProcess[str]) -> str:
    """What a command said (stderr, then stdout), on one line."""
    lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    return "; ".join(lines) or f"exit code {proc.returncode}"


def submit_error(
    proc: subprocess.CompletedProcess[str], cfg: Mapping[str, CfgVal]
) -> SchedulerError:
    """sbatch's refusal, with the run option or field (and its value) that would fix it."""
    msg = slurm_message(proc)
    low = msg.lower()
    for needle, option, fix in _FIXES:
        if needle in low:
            name = option if option.startswith("resource") else f"run option {option!r}"
            value = "" if option.startswith("resource") else f"={cfg.get(option)!r}"
            return SlurmError(f"sbatch refused the job: {msg}", f"{fix} ({name}{value})")
    return SlurmError(f"sbatch refused the job: {msg}")
