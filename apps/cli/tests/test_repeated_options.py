"""An option of ``run`` or ``list`` that takes one value, given twice, is refused in one
line: click would keep the last silently, and the first (``-cfg time=5``) would be lost."""

from __future__ import annotations

import pytest

from .cli_process import torchx


@pytest.mark.parametrize(
    ("args", "named", "fix"),
    [
        (["-cfg", "time=5", "-cfg", "partition=x"], "-cfg", "-cfg k1=v1,k2=v2"),
        (["--scheduler_args", "time=5", "-cfg", "partition=x"], "-cfg", "-cfg k1=v1,k2=v2"),
        (["-s", "local_cwd", "--scheduler", "slurm"], "-s/--scheduler", "give one scheduler"),
        (["--workspace", ".", "--workspace", "."], "--workspace", "give it once"),
    ],
)
def test_run_refuses_an_option_given_twice(args: list[str], named: str, fix: str) -> None:
    proc = torchx("run", "-s", "slurm", "--dryrun", *args, "utils.echo")
    assert proc.returncode == 2, proc.stdout
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"torchx: error: {named}") and "given twice" in line and fix in line
    assert proc.stdout == ""


def test_run_options_joined_by_commas_all_reach_the_request() -> None:
    proc = torchx("run", "-s", "slurm", "--dryrun", "-cfg", "time=5,partition=x", "utils.echo")
    assert proc.returncode == 0, proc.stderr
    assert "#SBATCH --time=5" in proc.stdout and "#SBATCH --partition=x" in proc.stdout


def test_list_refuses_cfg_given_twice() -> None:
    proc = torchx("list", "-cfg", "log_dir=/a", "-cfg", "log_dir=/b")
    assert proc.returncode == 2 and "-cfg" in proc.stderr and "given twice" in proc.stderr


def test_flags_and_the_components_own_arguments_may_repeat() -> None:
    # --dryrun twice changes nothing; a -cfg after the component is the component's
    proc = torchx("run", "--dryrun", "--dryrun", "-s", "slurm", "utils.echo", "--msg", "a")
    assert proc.returncode == 0, proc.stderr


def test_shell_completion_still_completes_after_a_repeated_option() -> None:
    # completion reads what is typed so far, mistakes and all: it refuses nothing
    env = {
        "_TORCHX_COMPLETE": "complete_bash",
        "COMP_WORDS": "torchx run -cfg a=1 -cfg b=2 -s loc",
        "COMP_CWORD": "7",
    }
    proc = torchx(env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["local_cwd", "local_dir", "local_docker"]
