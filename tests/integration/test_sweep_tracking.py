"""Trials of a sweep record their runs with the sweep as parent run: ``torchx tracker list
jobs --parent-run-id SWEEP`` lists them. Trials that store their results with
``torchx.runtime.tracking`` under ``sweep_trial_key()`` are ranked on them by ``torchx
status SWEEP --results URL``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent
TORCHX = BIN / "torchx"

COMPONENT = textwrap.dedent(
    '''
    import sys
    import torchx.specs as specs


    def train(lr: float) -> specs.AppDef:
        """Records lr and an objective.

        Args:
            lr: learning rate
        """
        return specs.AppDef("train", roles=[
            specs.Role("t", image=".", entrypoint=sys.executable, args=["app.py", str(lr)])
        ])
    '''
)

APP = textwrap.dedent(
    """
    import os, sys
    from torchx.tracker import app_run_from_env

    run = app_run_from_env()
    lr = float(sys.argv[1])
    run.add_metadata(lr=lr, objective=(lr - 0.01) ** 2, index=os.environ["TORCHX_SWEEP_INDEX"])
    """
)


RESULTS_COMPONENT = textwrap.dedent(
    '''
    import sys
    import torchx.specs as specs


    def train(lr: float, url: str) -> specs.AppDef:
        """Stores its val_loss.

        Args:
            lr: learning rate
            url: where results go
        """
        return specs.AppDef("train", roles=[
            specs.Role("t", image=".", entrypoint=sys.executable, args=["app.py", str(lr), url])
        ])
    '''
)

# Trial 3 (lr=0.5) stores nothing: it is unscored, not an error.
RESULTS_APP = textwrap.dedent(
    """
    import sys
    from torchx.runtime.tracking import FsspecResultTracker, sweep_trial_key

    lr = float(sys.argv[1])
    if lr != 0.5:
        FsspecResultTracker(sys.argv[2])[sweep_trial_key()] = {"val_loss": (lr - 0.01) ** 2}
    """
)


def _torchx(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not TORCHX.exists():
        pytest.skip(f"the torchx command is not installed next to {sys.executable}")
    base = {k: v for k, v in os.environ.items() if not k.startswith("TORCHX_")}
    return subprocess.run(
        [str(TORCHX), *args],
        cwd=cwd,
        env={**base, "PATH": f"{BIN}:{base.get('PATH', '')}"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_trials_are_runs_under_the_sweep(tmp_path: Path) -> None:
    (tmp_path / ".torchxconfig").write_text(
        f"[torchx:tracker]\nfsspec=fsspec\n\n[tracker:fsspec]\nconfig={tmp_path / 'runs'}\n"
    )
    (tmp_path / "comp.py").write_text(COMPONENT)
    (tmp_path / "app.py").write_text(APP)
    run = _torchx(
        tmp_path, "run", "--sweep", "lr=0.1,0.01,0.001", "--parallel", "2", "comp.py:train"
    )
    assert run.returncode == 0, run.stderr
    sweep = run.stdout.strip()
    status = json.loads(_torchx(tmp_path, "status", "--json", sweep).stdout)
    trials = [t["handle"] for t in sorted(status["trials"], key=lambda t: t["index"])]
    listed = _torchx(tmp_path, "tracker", "list", "jobs", "--parent-run-id", sweep, "--json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(j["job_id"] for j in json.loads(listed.stdout)) == sorted(trials)
    meta = _torchx(tmp_path, "tracker", "list", "metadata", trials[1], "--json")
    assert json.loads(meta.stdout)["metadata"] == {"lr": 0.01, "objective": 0.0, "index": "1"}

    # The results table: each trial's recorded objective, best (lowest) first.
    ranked = json.loads(_torchx(tmp_path, "status", "--json", sweep).stdout)["trials"]
    assert [(t["index"], t["objective"]) for t in ranked] == [
        (1, 0.0),
        (2, pytest.approx(0.009**2)),
        (0, pytest.approx(0.09**2)),
    ]
    table = _torchx(tmp_path, "status", sweep).stdout.splitlines()
    assert table[1].split()[:3] == ["#", "lr", "objective"]
    assert [row.split()[0] for row in table[2:]] == ["1", "2", "0"]
    best_last = json.loads(_torchx(tmp_path, "status", "--json", "--maximize", sweep).stdout)
    assert [t["index"] for t in best_last["trials"]] == [0, 2, 1]


def test_trials_are_mlflow_runs_nested_under_the_sweep(tmp_path: Path, mlflow_server: Any) -> None:
    pytest.importorskip("mlflow")
    experiment = f"sweep-{tmp_path.name}"
    (tmp_path / ".torchxconfig").write_text(
        "[torchx:tracker]\nmlflow=torchx.tracker.mlflow:create_tracker\n\n"
        f"[tracker:mlflow]\nconfig={tmp_path}\nexperiment_name={experiment}\n"
        f"tracking_uri={mlflow_server.url}\n"
    )
    (tmp_path / "comp.py").write_text(COMPONENT)
    (tmp_path / "app.py").write_text(APP)
    run = _torchx(tmp_path, "run", "--sweep", "lr=0.1,0.01", "--parallel", "2", "comp.py:train")
    assert run.returncode == 0, run.stderr
    sweep = run.stdout.strip()

    # MLflow's side: one run for the sweep, one child run per trial (the UI nests them by
    # mlflow.parentRunId), each with its sweep argument as a param and its objective as
    # a metric, which is what MLflow's compare view plots.
    from mlflow import MlflowClient

    client = MlflowClient(mlflow_server.url)
    found = client.get_experiment_by_name(experiment)
    assert found is not None
    runs = {r.info.run_name: r for r in client.search_runs([found.experiment_id])}
    parent = runs.pop(sweep)
    assert parent.data.tags["torchx.sweep"] == "true"
    status = json.loads(_torchx(tmp_path, "status", "--json", sweep).stdout)
    trials = {t["handle"]: t for t in status["trials"]}
    assert sorted(runs) == sorted(trials)
    for handle, trial in trials.items():
        data = runs[handle].data
        assert data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert data.params == {"lr": trial["args"]["lr"]}
        lr = float(trial["args"]["lr"])
        assert data.metrics["objective"] == pytest.approx((lr - 0.01) ** 2)
        # the results table reads the same objective back through the tracker
        assert trial["objective"] == pytest.approx((lr - 0.01) ** 2)
    assert [t["args"]["lr"] for t in status["trials"]] == ["0.01", "0.1"]  # best first


def test_status_ranks_the_trials_on_their_stored_results(tmp_path: Path) -> None:
    (tmp_path / "comp.py").write_text(RESULTS_COMPONENT)
    (tmp_path / "app.py").write_text(RESULTS_APP)
    url = (tmp_path / "results").as_uri()  # file:///...
    run = _torchx(
        tmp_path,
        "run", "-s", "local_cwd", "--sweep", "lr=0.1,0.01,0.001,0.5", "--parallel", "2",
        "comp.py:train", "--url", url,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    sweep = run.stdout.strip()
    sweep_id = sweep.rpartition("/")[2]
    # each trial's document is where sweep_trial_key() says: <sweep id>/<index>.json
    stored = sorted(p.name for p in (tmp_path / "results" / sweep_id).iterdir())
    assert stored == ["0.json", "1.json", "2.json"]

    st = _torchx(tmp_path, "status", "--json", sweep, "--results", url, "--objective", "val_loss")
    assert st.returncode == 0, st.stderr
    assert st.stderr == ""
    rows = json.loads(st.stdout)["trials"]
    assert [(t["index"], t["objective"], t["objective_unread"]) for t in rows] == [
        (1, 0.0, False),
        (2, pytest.approx(0.009**2), False),
        (0, pytest.approx(0.09**2), False),
        (3, None, False),  # stored nothing: unscored, last
    ]
    table = _torchx(tmp_path, "status", sweep, "--results", url, "--objective", "val_loss")
    lines = table.stdout.splitlines()
    assert lines[1].split()[:3] == ["#", "lr", "val_loss"]
    assert [row.split()[0] for row in lines[2:]] == ["1", "2", "0", "3"]
    best_last = _torchx(
        tmp_path,
        "status",
        "--json",
        "--maximize",
        sweep,
        "--results",
        url,
        "--objective",
        "val_loss",
    )
    assert [t["index"] for t in json.loads(best_last.stdout)["trials"]] == [0, 2, 1, 3]

    # A misspelt objective: one line naming what was recorded, and no column.
    typo = _torchx(tmp_path, "status", sweep, "--results", url, "--objective", "val_los")
    assert typo.returncode == 0, typo.stderr
    assert typo.stderr == (
        "torchx: warning: --objective: no trial recorded 'val_los'; they recorded: val_loss\n"
    )
    assert "val_los" not in typo.stdout.splitlines()[1]

    # --results ranks a sweep's table only: with a trial's handle, one line.
    trial = _torchx(tmp_path, "status", f"{sweep}/0", "--results", url)
    assert trial.returncode != 0
    assert trial.stderr.strip().splitlines() == [
        f"torchx: error: --results: got it with '{sweep}/0', an app's handle; it ranks a"
        " sweep's trials: give the sweep's handle"
    ]
    # --watch ranks as status does: the sweep has ended, so it draws the table once.
    watched = _torchx(
        tmp_path, "status", "--watch", sweep, "--results", url, "--objective", "val_loss"
    )
    assert watched.returncode == 0, watched.stderr
    assert "val_loss" in watched.stdout
    assert [row.split()[0] for row in watched.stdout.splitlines() if row[:1].isdigit()] == [
        "1", "2", "0", "3"
    ]  # fmt: skip

    # An unreadable document: that trial is left unranked with one line, the rest ranked.
    broken = tmp_path / "results" / sweep_id / "1.json"
    broken.write_text("{not json")
    bad = _torchx(tmp_path, "status", "--json", sweep, "--results", url, "--objective", "val_loss")
    assert bad.returncode == 0, bad.stderr
    [line] = bad.stderr.splitlines()
    assert line == (
        "torchx: warning: trial 1 is left unranked: its result document was not read (corrupt"
        f" result document at {str(broken)!r}: not valid JSON (Expecting property name enclosed"
        f" in double quotes: line 1 column 2 (char 1))); fix or rewrite {url}/{sweep_id}/1.json"
        " to rank it"
    )
    rows = json.loads(bad.stdout)["trials"]
    assert [(t["index"], t["objective_unread"]) for t in rows] == [
        (2, False), (0, False), (1, True), (3, False)
    ]  # fmt: skip
