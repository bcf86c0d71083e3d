"""The whole generated sbatch script, executed by bash with stub srun/scontrol, under
hostile env names, env values, arguments and run options: nothing the user gave is run."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from torchx.schedulers.slurm_scheduler import SlurmScheduler
from torchx.specs import AppDef, Role, SpecsError

# srun stub: run the task's command once per replica, as Slurm would, with SLURM_PROCID set.
SRUN = """#!/bin/bash
n=${STUB_REPLICAS:-1}
while [ "$1" != bash ]; do shift; done
for ((k = 0; k < n; k++)); do SLURM_PROCID=$k "$@" || rc=$?; done
exit ${rc:-0}
"""
SCONTROL = """#!/bin/bash
case "$2" in
  hostnames) echo node1 ;;
  node) echo "NodeName=node1 NodeAddr=127.0.0.1 State=IDLE" ;;
esac
"""
DUMP = (
    "import json, os, sys; json.dump({'argv': sys.argv[1:], 'env': dict(os.environ)}, "
    "open(os.environ['OUT_FILE'] + os.environ['RANK'], 'w'))"
)

HOSTILE = [
    "$(touch pwned)",
    "`touch pwned`",
    "'; touch pwned; '",
    '"; touch pwned; "',
    "a;touch pwned;b",
    "${IFS}touch${IFS}pwned",
    "\\'\\\"",
    "&& touch pwned ||",
    "$HOME * ?",
    "ünïcödé",
    "",
]


def _stubs(tmp: Path) -> Path:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, text in (("srun", SRUN), ("scontrol", SCONTROL)):
        path = bin_dir / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return bin_dir


def _execute(script: str, tmp: Path, replicas: int = 1) -> subprocess.CompletedProcess[str]:
    job = tmp / "job"
    job.mkdir()
    env = {
        "PATH": f"{_stubs(tmp)}:{os.environ['PATH']}",
        "HOME": "/nonexistent",
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NODELIST": "node1",
        "STUB_REPLICAS": str(replicas),
        "OUT_FILE": str(tmp / "seen"),
    }
    return subprocess.run(
        ["bash", "-c", script], cwd=job, env=env, capture_output=True, text=True, timeout=60
    )


def _app(args: list[str], env: dict[str, str], replicas: int = 1) -> AppDef:
    role = Role(
        "worker",
        image="",
        entrypoint=sys.executable,
        args=["-c", DUMP, *args],
        env=env,
        num_replicas=replicas,
    )
    return AppDef("hostile", [role])


def _no_pwned(tmp: Path) -> None:
    found = [str(p) for p in tmp.rglob("pwned")]
    assert not found, f"user text was run as shell: {found}"


def test_hostile_values_arguments_and_options_reach_the_app_verbatim(tmp_path: Path) -> None:
    env = {f"V{i}": v for i, v in enumerate(HOSTILE)}
    cfg: dict[str, Any] = {
        "comment": "c'; touch pwned #",
        "partition": "$(touch pwned)",
        "mail_user": "a@b`touch pwned`",
        "constraint": '"; touch pwned; "',
        "account": "x y",
    }
    info = SlurmScheduler().submit_dryrun(_app(HOSTILE, env, replicas=2), cfg)
    out = _execute(info.request.script, tmp_path, replicas=2)
    assert out.returncode == 0, out.stderr
    _no_pwned(tmp_path)
    for rank in (0, 1):
        seen = json.loads((tmp_path / f"seen{rank}").read_text())
        assert seen["argv"] == HOSTILE
        for name, value in env.items():
            assert seen["env"][name] == value
        assert seen["env"]["RANK"] == str(rank)
        assert seen["env"]["TORCHX_APP_ID"] == "4242"
        exit_file = tmp_path / "job" / f"slurm-4242-worker-{rank}.exit"
        assert exit_file.read_text().startswith("0 ")


@pytest.mark.parametrize(
    "name", ["A;touch pwned;B", "A B", "1A", "", "A=B", "$(touch pwned)", "A\nB"]
)
def test_hostile_env_names_are_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(SpecsError) as e:
        SlurmScheduler().submit_dryrun(_app([], {name: "1"}), {})
    assert repr(name) in str(e.value)


@pytest.mark.parametrize(
    "option", ["comment", "partition", "mail_user", "mail_type", "time", "account", "qos"]
)
@pytest.mark.parametrize("bad", ["c\ntouch pwned #", "a\rb", "a\0b", "a\tb"])
def test_options_with_control_characters_are_refused(option: str, bad: str) -> None:
    with pytest.raises(SpecsError) as e:
        SlurmScheduler().submit_dryrun(_app([], {}), {option: bad})
    assert f"run option {option!r}" in str(e.value)
    assert "control characters" in str(e.value)


def test_the_issue_example_neither_writes_nor_runs_a_file(tmp_path: Path) -> None:
    # utils.sh with the env name from the report, checked where the runner checks it
    from torchx.components import utils
    from torchx.specs import validate_app

    app = utils.sh("true", env={"A;touch pwned;B": "1"})
    with pytest.raises(SpecsError, match="A;touch pwned;B"):
        validate_app(app)
    _no_pwned(tmp_path)
