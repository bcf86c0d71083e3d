"""A user's LocalScheduler subclass that overrides how a request is made (0.7's
``_submit_dryrun`` / ``submit_dryrun``) has every trial of a local sweep made by its
override, as ``run`` has its app made (real local processes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torchx.runner import Runner, Sweep
from torchx.schedulers.local_scheduler import LocalRequest, LocalScheduler
from torchx.specs import AppDef, AppDryRunInfo, AppState, CfgVal


class TaggingScheduler(LocalScheduler):
    """Adds TAGGED=yes to every replica's environment, after the base builds the request."""

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[LocalRequest]:
        info = super()._submit_dryrun(app, cfg)
        for replica in info.request.replicas:
            replica.env["TAGGED"] = "yes"
        return info


class RenamingScheduler(LocalScheduler):
    """0.7-style override of the public ``submit_dryrun``."""

    def submit_dryrun(self, app: AppDef, cfg: Any = None, **kwargs: Any) -> Any:
        for role in app.roles:
            role.env["RENAMED"] = "yes"
        return super().submit_dryrun(app, cfg, **kwargs)


def _tagging(session_name: str, **params: Any) -> LocalScheduler:
    return TaggingScheduler(session_name)


def _renaming(session_name: str, **params: Any) -> LocalScheduler:
    return RenamingScheduler(session_name)


def _runner() -> Runner:
    return Runner("torchx", {"tagging": _tagging, "renaming": _renaming})


def test_each_trials_request_is_made_by_the_subclass_override() -> None:
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with _runner() as runner:
        plan = runner.dryrun_sweep(sweep, "tagging")
        assert plan.requests is not None and len(plan.requests) == 2
        for info in plan.requests.values():
            assert [r.env.get("TAGGED") for r in info.request.replicas] == ["yes"]
        plan = runner.dryrun_sweep(sweep, "renaming")
        assert plan.requests is not None
        for info in plan.requests.values():
            assert [r.env.get("RENAMED") for r in info.request.replicas] == ["yes"]


def test_a_local_sweep_runs_the_requests_the_override_made(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    sweep = Sweep.grid(
        "utils.sh",
        {"env": ["K=1", "K=2"]},
        base_args=["--", f'echo "$TAGGED" > {out}/$K'],
    )
    with _runner() as runner:
        handle = runner.run_sweep(sweep, "tagging")
        status = runner.wait_sweep(handle, wait_interval=0.05, timeout=120)
    assert [t.state for t in status.trials] == [AppState.SUCCEEDED] * 2, status
    assert {p.name: p.read_text() for p in out.iterdir()} == {"1": "yes\n", "2": "yes\n"}
