"""A user's LocalScheduler subclass that overrides how a request is made (0.7's
``_submit_dryrun`` / ``submit_dryrun``) has every trial of a local sweep made by its
override, as ``run`` has its app made; one that overrides ``schedule`` has every trial
submitted through it (real local processes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from torchx.runner import Runner, Sweep, SweepError, get_runner
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


COUNTING_MODULE = """
import json
import os
from torchx.schedulers.local_scheduler import LocalScheduler

class CountingScheduler(LocalScheduler):
    def __init__(self, session_name, tag):
        super().__init__(session_name)
        self.tag = tag

    def schedule(self, dryrun_info):
        args = [r.args for r in dryrun_info.request.replicas]
        with open(os.environ["COUNTED"], "a") as f:
            f.write(json.dumps([dryrun_info.request.app_id, self.tag, args]) + "\\n")
        return super().schedule(dryrun_info)

    def close(self):
        with open(os.environ["COUNTED"] + ".closed", "a") as f:
            f.write(str(self.tag) + "\\n")
        super().close()

def create_scheduler(session_name, tag="(none)", **params):
    return CountingScheduler(session_name, tag)
"""


@pytest.fixture
def counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plug-in scheduler (a dist-info with an entry point, on the path of this process
    and of the processes it starts) whose ``schedule`` writes each app id it gets."""
    site = tmp_path / "site"
    dist = site / "counting_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (site / "counting_plugin.py").write_text(COUNTING_MODULE)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: counting-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[torchx.schedulers]\ncounting = counting_plugin:create_scheduler\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    counted = tmp_path / "counted"
    monkeypatch.setenv("COUNTED", str(counted))
    return counted


def test_a_schedule_override_submits_every_trial_of_a_local_sweep(counting: Path) -> None:
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b", "c"]}, parallel=2)
    with get_runner() as runner:
        plan = runner.dryrun_sweep(sweep, "counting")
        assert "CountingScheduler overrides schedule" in plan.why and "at most 2" in plan.why
        handle = runner.run_sweep(sweep, "counting")
        status = runner.wait_sweep(handle, wait_interval=0.05, timeout=120)
    assert [t.state for t in status.trials] == [AppState.SUCCEEDED] * 3, status
    scheduled = [line[0] for line in _counted(counting)]
    handles = [t.handle for t in status.trials]
    assert sorted(scheduled) == sorted(h.rsplit("/", 1)[-1] for h in handles if h), status


def _counted(counting: Path) -> list[list[Any]]:
    """Each submission the plug-in got: its app id, its factory's tag, each replica's args."""
    return [json.loads(line) for line in counting.read_text().splitlines()]


def test_the_runners_scheduler_params_and_component_defaults_reach_every_trial(
    counting: Path,
) -> None:
    """The trials are submitted by a separate process: it builds the plug-in with this
    Runner's parameters and the components with its defaults, as the dry run showed."""
    sweep = Sweep.grid("utils.echo", {"num_replicas": [1, 2]})
    defaults = {"utils.echo": {"msg": "FROM_DEFAULTS"}}
    with get_runner(counting={"tag": "GIVEN"}, component_defaults=defaults) as runner:
        plan = runner.dryrun_sweep(sweep, "counting")
        assert "FROM_DEFAULTS" in str(plan), plan
        handle = runner.run_sweep(sweep, "counting")
        status = runner.wait_sweep(handle, wait_interval=0.05, timeout=120)
    assert [t.state for t in status.trials] == [AppState.SUCCEEDED] * 2, status
    submitted = _counted(counting)
    assert [tag for _, tag, _ in submitted] == ["GIVEN", "GIVEN"], submitted
    assert sorted(args for _, _, args in submitted) == [
        [["echo", "FROM_DEFAULTS"]],
        [["echo", "FROM_DEFAULTS"], ["echo", "FROM_DEFAULTS"]],
    ], submitted


def test_a_scheduler_param_json_cannot_hold_is_refused_before_anything_runs(
    counting: Path,
) -> None:
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with (
        get_runner(counting={"tag": object()}) as runner,
        pytest.raises(
            SweepError, match=r"^scheduler parameter 'tag' of 'counting': got <object .*RAY_ADDR"
        ) as e,
    ):
        runner.run_sweep(sweep, "counting")
    assert "\n" not in str(e.value) and "Runner.run" in str(e.value)
    assert not counting.exists()


def test_the_dry_run_refuses_the_parameter_before_a_workspace_is_built(
    counting: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What submit would refuse, the dry run refuses too, and no image is built first."""
    import torchx.runner._sweep_workspace as workspaces

    built: list[str] = []
    monkeypatch.setattr(workspaces, "build_workspace_once", lambda *a: built.append("built"))
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with (
        get_runner(counting={"tag": object()}) as runner,
        pytest.raises(SweepError, match="scheduler parameter 'tag' of 'counting'"),
    ):
        runner.dryrun_sweep(sweep, "counting", workspace=str(counting.parent))
    assert built == [] and not counting.exists()


@pytest.mark.parametrize(
    ("tag", "shown", "fix"),
    [
        ((1, 2), "(1, 2)", "give a list instead of the tuple"),
        ({1: "a"}, "{1: 'a'}", "give the dict str keys"),
        ([["x", {2: "b"}]], "{2: 'b'}", "give the dict str keys"),
        (AppState.FAILED, repr(AppState.FAILED), "give its value (5) instead of the enum"),
        (float("nan"), "nan", "give a finite number"),
    ],
)
def test_a_parameter_json_would_change_is_refused_with_the_element_and_fix(
    counting: Path, tag: Any, shown: str, fix: str
) -> None:
    """A tuple read back as a list (or int keys as str) would reach the driver's factory
    changed, unlike the dry run's: refused, showing the element that would change."""
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with get_runner(counting={"tag": tag}) as runner, pytest.raises(SweepError) as e:
        runner.dryrun_sweep(sweep, "counting")
    text = str(e.value)
    assert text.startswith(f"scheduler parameter 'tag' of 'counting': got {shown};"), text
    assert fix in text and "\n" not in text


def test_paths_in_a_parameter_are_recorded_as_str(counting: Path) -> None:
    sweep = Sweep.grid("utils.echo", {"msg": ["a"]})
    tag = {"dirs": [Path("/a"), {"b": Path("/b")}]}
    with get_runner(counting={"tag": tag}) as runner:
        plan = runner.dryrun_sweep(sweep, "counting")
    assert plan.record.scheduler_params == {"tag": {"dirs": ["/a", {"b": "/b"}]}}


def test_only_the_swept_components_defaults_are_recorded_and_checked(counting: Path) -> None:
    sweep = Sweep.grid("utils.echo", {"num_replicas": [1]})
    defaults: Any = {"utils.echo": {"msg": "HI"}, "dist.ddp": {"script": Path("t.py")}}
    with get_runner(component_defaults=defaults) as runner:
        plan = runner.dryrun_sweep(sweep, "counting")
    assert plan.record.component_defaults == {"utils.echo": {"msg": "HI"}}
    defaults["utils.echo"] = {"msg": ("a", "b")}
    with get_runner(component_defaults=defaults) as runner, pytest.raises(SweepError) as e:
        runner.run_sweep(sweep, "counting")
    assert str(e.value).startswith("component_defaults['utils.echo']['msg']: got ('a', 'b');")
    assert not counting.exists()


def test_a_file_components_defaults_are_found_under_the_name_given(counting: Path) -> None:
    Path("comp.py").write_text(
        "from torchx import specs\n"
        "def train(msg: str = 'code') -> specs.AppDef:\n"
        "    role = specs.Role('t', image='/tmp', entrypoint='echo', args=[msg])\n"
        "    return specs.AppDef('t', roles=[role])\n"
    )
    sweep = Sweep.grid("comp.py:train", {"msg": ["a"]})
    with get_runner(component_defaults={"comp.py:train": {"msg": "HI"}}) as runner:
        plan = runner.dryrun_sweep(sweep, "counting")
    # Recorded under the path the driver finds the file by, from any directory.
    where = f"{Path('comp.py').resolve()}:train"
    assert plan.record.component == where
    assert plan.record.component_defaults == {where: {"msg": "HI"}}


def test_a_resume_checks_the_recorded_parameters_not_the_resuming_runners(
    counting: Path,
) -> None:
    """The resumed trials are submitted with what the sweep was submitted with."""
    sweep = Sweep.grid("utils.sh", {"env": ["K=0", "K=1"]}, base_args=["--", "test $K = 0"])
    with get_runner(counting={"tag": "ORIG"}) as runner:
        handle = runner.run_sweep(sweep, "counting")
        status = runner.wait_sweep(handle, wait_interval=0.05, timeout=120)
    assert [t.state for t in status.trials] == [AppState.SUCCEEDED, AppState.FAILED], status
    with get_runner(counting={"tag": object()}) as runner:
        assert runner.dryrun_resume_sweep(handle).indices == [1]
        runner.resume_sweep(handle)
        status = runner.wait_sweep(handle, wait_interval=0.05, timeout=120)
    assert status.trials[1].state == AppState.FAILED, status
    assert [tag for _, tag, _ in _counted(counting)] == ["ORIG"] * 3


def test_a_resume_whose_recorded_parameters_cannot_build_is_refused() -> None:
    from torchx.runner._sweep_plan import check_driver
    from torchx.runner._sweep_record import SweepRecord, TrialRecord

    trials = [TrialRecord(0, {"msg": "a"})]
    record = SweepRecord(
        "sweep-abcd2345", "local_cwd", "torchx", "utils.echo", [], 0, "group", trials
    )
    record.scheduler_params = {"nonsense": 1}
    with (
        Runner("torchx", {"local_cwd": _as_local_cwd}) as runner,
        pytest.raises(SweepError, match=r"the sweep's recorded parameters \['nonsense'\]"),
    ):
        check_driver(runner, record, resumed=True)


def test_a_schedule_override_known_to_this_runner_alone_is_refused_at_once() -> None:
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with (
        Runner("torchx", {"counting": _counting_here}) as runner,
        pytest.raises(SweepError, match="'counting' as one"),
    ):
        runner.run_sweep(sweep, "counting")


class _CountingHere(LocalScheduler):
    def schedule(self, dryrun_info: AppDryRunInfo[LocalRequest]) -> str:
        return super().schedule(dryrun_info)


def _counting_here(session_name: str, **params: Any) -> LocalScheduler:
    return _CountingHere(session_name)


def _as_local_cwd(session_name: str, **params: Any) -> LocalScheduler:
    return _CountingHere(session_name)


class _OwnBackend(LocalScheduler):
    def __init__(self, session_name: str) -> None:
        super().__init__(session_name, backend="mine")

    def schedule(self, dryrun_info: AppDryRunInfo[LocalRequest]) -> str:
        return super().schedule(dryrun_info)


def _own_backend(session_name: str, **params: Any) -> LocalScheduler:
    return _OwnBackend(session_name)


def test_a_schedule_override_under_a_built_in_name_is_refused_not_skipped() -> None:
    """The driver would build the built-in local_cwd, so every trial would skip the override."""
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with (
        Runner("torchx", {"local_cwd": _as_local_cwd}) as runner,
        pytest.raises(SweepError, match="is not the scheduler registered as 'local_cwd'") as e,
    ):
        runner.run_sweep(sweep, "local_cwd")
    assert "\n" not in str(e.value)
    assert "register _CountingHere as one under a name of its own" in str(e.value)


def test_a_schedule_override_with_its_own_backend_is_refused_at_once() -> None:
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with (
        Runner("torchx", {"mine": _own_backend}) as runner,
        pytest.raises(SweepError, match=r"given to this Runner alone.*register 'mine' as one"),
    ):
        runner.run_sweep(sweep, "mine")


def test_the_registered_local_cwd_given_to_a_runner_still_runs_as_one_group() -> None:
    from torchx.schedulers.local_scheduler import create_scheduler

    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with Runner("torchx", {"local_cwd": create_scheduler}) as runner:
        status = runner.wait_sweep(runner.run_sweep(sweep, "local_cwd"), 0.05, timeout=120)
    assert [t.state for t in status.trials] == [AppState.SUCCEEDED] * 2, status


def test_the_check_closes_the_registered_scheduler_it_built(counting: Path) -> None:
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with (
        Runner("torchx", {"counting": _counting_here}) as runner,
        pytest.raises(SweepError, match="is not the scheduler registered as 'counting'"),
    ):
        runner.run_sweep(sweep, "counting")
    assert Path(f"{counting}.closed").read_text() == "(none)\n"


def test_a_registered_scheduler_the_driver_cannot_build_is_refused_for_that_reason() -> None:
    """Built with the parameters the driver would get; its failure is the reason given."""
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b"]})
    with (
        Runner("torchx", {"local_cwd": _as_local_cwd}, scheduler_params={"nonsense": 1}) as runner,
        pytest.raises(SweepError, match=r"could not build it .* \['nonsense'\]: .*nonsense") as e,
    ):
        runner.run_sweep(sweep, "local_cwd")
    assert "\n" not in str(e.value)
