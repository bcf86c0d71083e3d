"""Which way a Kubernetes sweep runs, as its dryrun says: one Indexed Job where the API
server retries each index on its own, else one Job per trial. The server's ``/version``
answer is given here (no cluster); the real read is tested against the API server fixture
in torchx-schedulers' tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from torchx.runner import Sweep, get_runner
from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler

CFG = {"namespace": "ns1", "api": "batch"}


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .torchxconfig of the checkout
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def _plan(monkeypatch: pytest.MonkeyPatch, version: tuple[int, int] | None) -> str:
    monkeypatch.setattr(KubernetesScheduler, "server_version", lambda self: version)
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b", "c"]}, ["--image", "busybox"], 2)
    with get_runner() as runner:
        plan = runner.dryrun_sweep(sweep, "kubernetes", CFG)
    assert plan.record.mode in ("indexed", "group")
    return f"{plan.record.mode}\n{plan}"


def test_new_server_gets_one_indexed_job(monkeypatch: pytest.MonkeyPatch) -> None:
    # the dryrun shows the manifest as YAML where PyYAML is installed (else as JSON)
    pytest.importorskip("yaml", reason="the manifest reads as YAML only with PyYAML installed")
    text = _plan(monkeypatch, (1, 30))
    assert text.startswith("indexed\n")
    assert "one Kubernetes Indexed Job of 3 completions, at most 2 pods at once" in text
    assert "completionMode: Indexed" in text and "backoffLimitPerIndex: 0" in text
    assert text.count("kind: Job") == 1
    # each trial's own argument reaches its branch of the pod's script
    for i, msg in enumerate("abc"):
        assert f"{i}) export" in text and f" {msg} ;;" in text


@pytest.mark.parametrize(
    ("version", "why"),
    [
        ((1, 20), "the API server is v1.20; Indexed Jobs that retry each trial on its own"),
        (None, "the API server's version could not be read"),
    ],
)
def test_old_or_unknown_server_gets_one_job_per_trial_and_says_why(
    monkeypatch: pytest.MonkeyPatch, version: tuple[int, int] | None, why: str
) -> None:
    text = _plan(monkeypatch, version)
    assert text.startswith("group\n")
    assert f"one Job per trial, not one Indexed Job, because {why}" in text
    assert "completionMode" not in text


def test_grid_over_the_indexed_job_limit_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from torchx.specs import SpecsError

    monkeypatch.setattr(KubernetesScheduler, "server_version", lambda self: (1, 30))
    # 317 x 316 = 100172 trials, over the 100000 completions of one Indexed Job
    grid = {"msg": [str(i) for i in range(317)], "image": [f"img{i}" for i in range(316)]}
    with get_runner() as runner, pytest.raises(SpecsError) as e:
        runner.dryrun_sweep(Sweep.grid("utils.echo", grid, [], 0), "kubernetes", CFG)
    text = str(e.value)
    assert "\n" not in text
    assert text.startswith("sweep: got '100172 trials'; an Indexed Job has at most 100000")
    assert "sweep fewer values, or split the grid" in text


@pytest.mark.parametrize("labels", [{"team": "ml"}, "team:ml"])
def test_one_job_per_trial_carries_the_sweep_labels(
    monkeypatch: pytest.MonkeyPatch, labels: object
) -> None:
    from torchx.schedulers.kubernetes_indexed import LABEL_SWEEP, LABEL_SWEEP_INDEX

    monkeypatch.setattr(KubernetesScheduler, "server_version", lambda self: (1, 20))
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]}, ["--image", "busybox"], 1)
    with get_runner() as runner:
        plan = runner.dryrun_sweep(sweep, "kubernetes", {**CFG, "labels": labels})
    assert plan.record.mode == "group"
    service, job = plan.request.request.manifests
    want = {"team": "ml", LABEL_SWEEP: plan.record.sweep_id, LABEL_SWEEP_INDEX: "0"}
    for labelled in (service["metadata"], job["metadata"], job["spec"]["template"]["metadata"]):
        assert want.items() <= labelled["labels"].items()
    assert plan.record.cfg["labels"] == labels  # the sweep's own options are left as given
