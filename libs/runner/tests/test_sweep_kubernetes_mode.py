"""Which way a Kubernetes sweep runs, as its dryrun says: one Indexed Job where the API
server retries each index on its own, else one Job per trial. The server's ``/version``
answer is given here (no cluster); the real read is tested against the API server fixture
in torchx-schedulers' tests."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

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


def _count_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The workspace images the Kubernetes scheduler is asked to build (none is built)."""
    built: list[str] = []

    def build(self: KubernetesScheduler, base: str, workspace: str, quiet: bool = True) -> str:
        built.append(base)
        return f"torchx-workspace:built{len(built)}"

    monkeypatch.setattr(KubernetesScheduler, "build_workspace_image", build)
    return built


WORKSPACE_CFG = {**CFG, "image_repo": "registry.example/team/trainer"}


def test_a_parameter_the_driver_cannot_get_is_refused_before_the_workspace_is_built(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One Job per trial is submitted by a driver process, which cannot get a client object;
    that refusal comes before an image is built (or pushed) for nothing."""
    from torchx.runner import SweepError

    built = _count_builds(monkeypatch)
    monkeypatch.setattr(KubernetesScheduler, "server_version", lambda self: (1, 20))
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]}, ["--image", "busybox"], 1)
    with (
        get_runner(kubernetes={"docker_client": SimpleNamespace(close=lambda: None)}) as runner,
        pytest.raises(SweepError, match=r"^scheduler parameter 'docker_client' of 'kubernetes'"),
    ):
        runner.dryrun_sweep(sweep, "kubernetes", WORKSPACE_CFG, workspace=str(tmp_path))
    assert built == []


def test_a_grid_over_the_indexed_job_limit_is_refused_before_the_workspace_is_built(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from torchx.specs import SpecsError

    built = _count_builds(monkeypatch)
    monkeypatch.setattr(KubernetesScheduler, "server_version", lambda self: (1, 30))
    grid = {"msg": [str(i) for i in range(317)], "image": [f"img{i}" for i in range(316)]}
    with get_runner() as runner, pytest.raises(SpecsError, match="at most 100000"):
        runner.dryrun_sweep(
            Sweep.grid("utils.echo", grid, [], 0), "kubernetes", WORKSPACE_CFG, str(tmp_path)
        )
    assert built == []


@pytest.mark.parametrize(("version", "mode"), [((1, 30), "indexed"), ((1, 20), "group")])
def test_a_good_sweep_builds_its_workspace_once_and_every_trial_runs_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, version: tuple[int, int], mode: str
) -> None:
    built = _count_builds(monkeypatch)
    monkeypatch.setattr(KubernetesScheduler, "server_version", lambda self: version)
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]}, ["--image", "busybox"], 1)
    with get_runner() as runner:
        plan = runner.dryrun_sweep(sweep, "kubernetes", WORKSPACE_CFG, workspace=str(tmp_path))
    assert built == ["busybox"] and plan.record.mode == mode
    assert plan.record.images == {"busybox": "torchx-workspace:built1"}
    pushed = f"{WORKSPACE_CFG['image_repo']}:built1"
    assert plan.request.request.push == {"torchx-workspace:built1": pushed}
    job = next(m for m in plan.request.request.manifests if m["kind"] == "Job")
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == pushed
