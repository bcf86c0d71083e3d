"""The Runner over the real local_cwd scheduler."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest

import torchx.specs as specs
from torchx.runner import Runner, get_runner
from torchx.schedulers import Scheduler, UnknownSchedulerError
from torchx.schedulers.api import ListAppResponse
from torchx.specs import (
    AppDef,
    AppDefError,
    AppDryRunInfo,
    AppState,
    Role,
    SpecsError,
    UnknownAppException,
)

COMPONENT = textwrap.dedent(
    '''
    import torchx.specs as specs

    def echo(msg: str = "default", times: int = 1, name: str = "echo") -> specs.AppDef:
        """Echo a message.

        Args:
            msg: what to print
            times: how many replicas
            name: the app name
        """
        return specs.AppDef(
            name=name,
            roles=[specs.Role(name="echo", image="", entrypoint="/bin/echo", args=[msg],
                              num_replicas=times)],
        )
    '''
)


@pytest.fixture
def component(tmp_path: Path) -> str:
    path = tmp_path / "comp.py"
    path.write_text(COMPONENT)
    return f"{path}:echo"


def test_seed_runner_run_with_no_scheduler_named() -> None:
    appspec = specs.AppDef(
        name="echo",
        roles=[
            specs.Role(
                name="echo",
                entrypoint="/bin/echo",
                image="/tmp",
                args=["hello world"],
                num_replicas=1,
            )
        ],
    )
    runner = get_runner()
    handle = runner.run(appspec)
    assert handle.startswith("local_cwd://torchx/echo-")
    status = runner.wait(handle)
    assert status is not None and status.state == AppState.SUCCEEDED
    assert list(runner.log_lines(handle, "echo")) == ["hello world\n"]
    described = runner.describe(handle)
    assert described is not None and described.roles[0].args == ["hello world"]
    runner.close()


def test_context_manager_status_list_and_backends(tmp_path: Path) -> None:
    with get_runner("sess") as runner:
        assert "local_cwd" in runner.scheduler_backends()
        assert "log_dir" in runner.scheduler_run_opts("local_cwd")
        handle = runner.run(AppDef("a", [Role("r", image="", entrypoint="true", num_replicas=2)]))
        assert handle.startswith("local_cwd://sess/")
        status = runner.wait(handle)
        assert status is not None and status.state == AppState.SUCCEEDED
        assert len(status.roles[0].replicas) == 2
        listed = runner.list("local_cwd")
        assert [a.app_handle for a in listed] == [handle]
        assert listed[0].state == AppState.SUCCEEDED and listed[0].name == "a"
        # As in pytorch/torchx, a listed app is hashable and found by its id, handle, state.
        entry = ListAppResponse(listed[0].app_id, AppState.SUCCEEDED, handle)
        assert entry in listed and entry in set(listed)


def test_wait_with_timeout_returns_running_then_cancel() -> None:
    with get_runner() as runner:
        handle = runner.run(AppDef("long", [Role("r", image="", entrypoint="sleep", args=["300"])]))
        status = runner.wait(handle, timeout=0.05)
        assert status is not None and status.state in (AppState.PENDING, AppState.RUNNING)
        runner.cancel(handle)
        status = runner.status(handle)
        assert status is not None and status.state == AppState.CANCELLED


def test_run_component_from_a_file(component: str) -> None:
    with get_runner() as runner:
        handle = runner.run_component(component, ["--msg", "hi there", "--times", "2"])
        status = runner.wait(handle)
        assert status is not None and status.state == AppState.SUCCEEDED
        assert list(runner.log_lines(handle, "echo", 1)) == ["hi there\n"]
        info = runner.dryrun_component(component, {"msg": "dry"})
        assert info.request.replicas[0].argv == ["/bin/echo", "dry"]


def test_component_defaults_precedence(component: str, tmp_path: Path) -> None:
    # the component's defaults < config file < component_defaults given in code < arguments
    work = Path.cwd()
    runner = get_runner(component_defaults={component: {"msg": "from-code", "name": "coded"}})
    app = runner.component_app(component)
    assert app.roles[0].args == ["from-code"] and app.name == "coded"
    (work / ".torchxconfig").write_text(f"[component:{component}]\nmsg = from-file\ntimes = 2\n")
    runner = get_runner(component_defaults={component: {"msg": "from-code", "name": "coded"}})
    app = runner.component_app(component)
    # as for an explicit cfg, what the code says beats a file it never named (0.7 read none)
    assert app.roles[0].args == ["from-code"] and app.name == "coded"
    assert app.roles[0].num_replicas == 2  # the file still fills what the code left out
    app = runner.component_app(component, ["--msg", "explicit"])
    assert app.roles[0].args == ["explicit"]
    assert get_runner().component_app(component).roles[0].args == ["from-file"]


def test_component_default_for_unknown_argument(component: str) -> None:
    runner = get_runner(component_defaults={component: {"nope": "1"}})
    with pytest.raises(SpecsError, match="has no such argument"):
        runner.component_app(component)
    Path(".torchxconfig").write_text(f"[component:{component}]\nmsgg = x\n")
    with pytest.raises(SpecsError, match=r"\.torchxconfig \[component:.*\] msgg") as e:
        get_runner().component_app(component)
    assert str(e.value).endswith("has no such argument; did you mean 'msg'?")
    # nothing near: every argument is listed
    Path(".torchxconfig").write_text(f"[component:{component}]\nzzz = x\n")
    with pytest.raises(SpecsError) as e:
        get_runner().component_app(component)
    assert str(e.value).endswith("has no such argument; it takes msg, times, name")


def test_a_misspelt_default_suggests_the_nearest_argument_alone() -> None:
    # 'image' is as near to 'mgs' as difflib's cut-off, and unrelated
    Path(".torchxconfig").write_text("[component:utils.echo]\nmgs = hi\n")
    with pytest.raises(SpecsError) as e:
        get_runner().component_app("utils.echo")
    assert str(e.value).endswith("utils.echo has no such argument; did you mean 'msg'?")


def test_a_misspelt_ddp_default_suggests_the_argument() -> None:
    Path(".torchxconfig").write_text("[component:dist.ddp]\njj = 1x1\n")
    with pytest.raises(SpecsError) as e:
        get_runner().component_app("dist.ddp", ["--script", "train.py"])
    assert str(e.value).endswith(
        "[component:dist.ddp] jj: got '1x1'; dist.ddp has no such argument; did you mean 'j'?"
    )


def test_invalid_app_is_refused_before_anything_is_submitted(isolated: Path) -> None:
    bad = AppDef("bad name!", [Role("r", image="", entrypoint="true", num_replicas=0)])
    with get_runner() as runner:
        with pytest.raises(AppDefError) as e:
            runner.run(bad)
        assert "num_replicas" in str(e.value) and "app name" in str(e.value)
        assert runner.list("local_cwd") == []
    assert not (isolated / "state").exists()


def test_bad_handles_and_unknown_schedulers() -> None:
    with get_runner() as runner:
        with pytest.raises(SpecsError, match="app handle"):
            runner.status("not-a-handle")
        with pytest.raises(UnknownSchedulerError) as e:
            runner.status("nosuch://s/app-1")
        assert "local_cwd" in str(e.value)
        with pytest.raises(
            UnknownSchedulerError,
            match=r"got 'slurmm'; did you mean 'slurm'\? known schedulers: .*slurm",
        ):
            runner.run(AppDef("a", [Role("r", image="", entrypoint="true")]), scheduler="slurmm")
        assert runner.status("local_cwd://torchx/missing-1") is None
        assert runner.describe("local_cwd://torchx/missing-1") is None
        # as with pytorch/torchx: cancelling (or stopping) an unknown app does nothing
        assert runner.cancel("local_cwd://torchx/missing-1") is None  # type: ignore[func-returns-value]
        assert runner.stop("local_cwd://torchx/missing-1") is None  # type: ignore[func-returns-value]
        with pytest.raises(UnknownAppException, match="no such app"):
            runner.log_lines("local_cwd://torchx/missing-1", "r")


def test_bad_run_options_name_the_option() -> None:
    app = AppDef("a", [Role("r", image="", entrypoint="true")])
    with get_runner() as runner:
        with pytest.raises(SpecsError, match="did you mean 'log_dir'"):
            runner.dryrun(app, cfg={"logdir": "/tmp"})
        with pytest.raises(SpecsError, match="expected a bool"):
            runner.dryrun(app, cfg={"auto_set_cuda_visible_devices": "maybe"})


def test_run_options_that_are_not_a_dict_and_an_app_that_is_a_name_are_one_line() -> None:
    app = AppDef("a", [Role("r", image="", entrypoint="true")])
    with get_runner() as runner:
        with pytest.raises(SpecsError) as info:
            runner.dryrun(app, cfg="log_dir=/tmp")  # type: ignore[arg-type]
        assert str(info.value) == (
            "cfg: got 'log_dir=/tmp'; give the run options as a dict, e.g. {'log_dir': '/tmp/logs'}"
        )
        with pytest.raises(SpecsError, match="run a component by name with run_component"):
            runner.run("utils.echo", "local_cwd")  # type: ignore[arg-type]
        assert runner.list("local_cwd") == []


def test_workspace_is_the_working_directory(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "train.py").write_text("")
    (ws / "big.bin").write_text("")
    (ws / ".torchxignore").write_text("big.bin\n")
    app = AppDef("ws", [Role("r", image="", entrypoint="ls")])
    with get_runner() as runner:
        handle = runner.run(app, workspace=str(ws))
        runner.wait(handle)
        # a copy of the workspace, without what .torchxignore lists
        assert list(runner.log_lines(handle, "r")) == ["train.py\n"]
        with pytest.raises(SpecsError, match="workspace"):
            runner.dryrun(app, workspace=str(tmp_path / "missing"))


def test_schedule_needs_a_dryrun_info() -> None:
    runner = Runner("x", {})
    info = specs.AppDryRunInfo("request")
    with pytest.raises(SpecsError, match="dryrun_info"):
        runner.schedule(info)


def test_has_scheduler_answers_without_listing() -> None:
    runner = get_runner()
    assert runner.has_scheduler("local_cwd")
    assert not runner.has_scheduler("slurmm")
    assert "local_cwd" in runner.scheduler_backends()


def test_each_scheduler_gets_only_its_own_parameters(tmp_path: Path) -> None:
    from torchx.schedulers.local_scheduler import LocalScheduler

    seen: dict[str, dict[str, Any]] = {}

    def ours(session_name: str, state_dir: str | None = None, **params: Any) -> LocalScheduler:
        seen["ours"] = {"state_dir": state_dir, **params}
        return LocalScheduler(session_name, state_dir=state_dir)

    def plugin(session_name: str, **kwargs: Any) -> LocalScheduler:
        seen["plugin"] = dict(kwargs)
        return LocalScheduler(session_name, state_dir=str(tmp_path / "p"))

    runner = Runner(
        "s",
        {"ours": ours, "plugin": plugin},
        scheduler_params={"state_dir": str(tmp_path), "ours": {"extra": 1}, "color": "red"},
    )
    runner.scheduler_run_opts("ours")
    runner.scheduler_run_opts("plugin")
    # a named parameter goes where it is declared, NAME={...} to that scheduler alone, and a
    # **kwargs factory (as pytorch/torchx plug-ins are written) gets every shared one
    assert seen["ours"] == {"state_dir": str(tmp_path), "extra": 1}
    assert seen["plugin"] == {"state_dir": str(tmp_path), "color": "red"}


def test_a_scheduler_registered_under_another_name_runs(tmp_path: Path) -> None:
    from torchx.schedulers.local_scheduler import create_scheduler

    runner = Runner("s", {"elsewhere": create_scheduler}, scheduler_params={"state_dir": tmp_path})
    app = AppDef("a", [Role("r", image="", entrypoint="/bin/echo", args=["hi"])])
    handle = runner.run(app, "elsewhere")
    assert handle.startswith("elsewhere://s/a-")
    status = runner.wait(handle)
    assert status is not None and status.state == AppState.SUCCEEDED
    assert list(runner.log_lines(handle, "r")) == ["hi\n"]


def test_validate_gets_the_name_the_scheduler_is_registered_under(tmp_path: Path) -> None:
    # pytorch/torchx 0.7's Runner called _validate(app, NAME) with the registered name.
    from torchx.schedulers.local_scheduler import LocalScheduler

    seen: list[str] = []

    class Named(LocalScheduler):
        def _validate(self, app: AppDef, scheduler: str) -> None:
            seen.append(scheduler)

    class Written07(Named):
        def submit_dryrun(self, app: AppDef, cfg: Any = None) -> Any:  # 0.7's override
            return super().submit_dryrun(app, cfg)

    runner = Runner(
        "s",
        {
            "elsewhere": lambda session_name, **kw: Named(session_name, state_dir=tmp_path),
            "old": lambda session_name, **kw: Written07(session_name, state_dir=tmp_path),
        },
    )
    app = AppDef("a", [Role("r", image="", entrypoint="/bin/echo", args=["hi"])])
    assert runner.dryrun(app, "elsewhere").scheduler == "elsewhere"
    assert runner.dryrun(app, "old").scheduler == "old"
    assert seen == ["elsewhere", "old"]  # an override of submit_dryrun too
    # direct callers: the backend by default, or the name given
    assert Named("s", state_dir=tmp_path).submit_dryrun(app).scheduler == "local_cwd"
    assert seen[-1] == "local_cwd"
    group = Named("s", state_dir=tmp_path).submit_dryrun_group([app], scheduler="here")
    assert [info.scheduler for info in group] == ["here"] and seen[-1] == "here"


class _Recording(Scheduler[dict[str, int]]):
    """A minimal custom scheduler, as 0.7's plug-ins were written, that records every
    ``_validate`` call and the name it was given."""

    calls: ClassVar[list[tuple[str, str]]] = []

    def __init__(self, session_name: str, **kwargs: Any) -> None:
        super().__init__("mybackend", session_name)

    def _submit_dryrun(self, app: AppDef, cfg: Any) -> AppDryRunInfo[dict[str, int]]:
        return AppDryRunInfo({"base": 1}, str)

    def schedule(self, dryrun_info: Any) -> str:
        return "id"

    def describe(self, app_id: str) -> None:
        return None

    def list(self) -> list[ListAppResponse]:
        return []

    def _cancel_existing(self, app_id: str) -> None:
        pass

    def _validate(self, app: AppDef, scheduler: str) -> None:
        self.calls.append((type(self).__name__, scheduler))


def test_a_shared_instance_keeps_the_name_it_was_first_registered_under() -> None:
    # A factory may hand every Runner one object; each Runner's dry runs give _validate
    # its own name, and the instance's registered_name (its direct dry runs) stays the
    # first one rather than whichever Runner looked it up last.
    _Recording.calls.clear()
    shared = _Recording("s")
    first = Runner("s", {"a": lambda session_name, **kw: shared})
    second = Runner("s", {"b": lambda session_name, **kw: shared})
    app = AppDef("a", [Role("r", image="i", entrypoint="echo")])
    assert first.dryrun(app, "a").scheduler == "a"
    assert second.dryrun(app, "b").scheduler == "b"
    assert first.dryrun(app, "a").scheduler == "a"
    assert shared.registered_name == "a" and shared.submit_dryrun(app).scheduler == "a"
    assert _Recording.calls == [("_Recording", n) for n in ("a", "b", "a", "a")]


class _NoSuper(_Recording):  # 0.7's form: builds its own request
    def submit_dryrun(self, app: AppDef, cfg: Any) -> Any:
        return AppDryRunInfo({"own": 1}, str)


class _WithSuper(_Recording):
    def submit_dryrun(self, app: AppDef, cfg: Any) -> Any:
        return super().submit_dryrun(app, cfg)


class _SchedParam(_Recording):  # its own 'scheduler' parameter, with its own default
    def submit_dryrun(self, app: AppDef, cfg: Any, scheduler: str = "mine") -> Any:
        self.calls.append(("param", scheduler))
        return super().submit_dryrun(app, cfg)


class _Kw(_Recording):
    def submit_dryrun(self, app: AppDef, cfg: Any = None, **kwargs: Any) -> Any:
        return super().submit_dryrun(app, cfg, **kwargs)


@pytest.mark.parametrize(
    ("cls", "expected"),
    [
        (_Recording, [("_Recording", "custom")]),
        (_NoSuper, [("_NoSuper", "custom")]),
        (_WithSuper, [("_WithSuper", "custom")]),
        (_SchedParam, [("_SchedParam", "custom"), ("param", "mine")]),
        (_Kw, [("_Kw", "custom")]),
    ],
)
def test_validate_runs_once_with_the_registered_name_however_submit_dryrun_is_written(
    cls: type[_Recording], expected: list[tuple[str, str]]
) -> None:
    # 0.7's Runner called _validate(app, NAME) itself before submit_dryrun, so an override
    # that builds its own request (no super()) was validated too, and only once.
    _Recording.calls.clear()
    runner = Runner("s", {"custom": cls})
    app = AppDef("a", [Role("r", image="i", entrypoint="echo")])
    info = runner.dryrun(app, "custom")
    assert _Recording.calls == expected and info.scheduler == "custom"
    # the instance the Runner made knows its name when called directly too (a direct call
    # of an override without super() never reaches _validate, as in 0.7)
    _Recording.calls.clear()
    sched = runner._scheduler("custom")
    assert sched.registered_name == "custom"
    assert sched.submit_dryrun(app, {}) is not None
    validated = [c for c in _Recording.calls if c[0] != "param"]
    assert validated == ([] if cls is _NoSuper else [(cls.__name__, "custom")])
    # and Scheduler.submit validates once as well
    _Recording.calls.clear()
    assert sched.submit(app) == "id" and _Recording.calls == expected


def test_get_runner_with_state_dir_dry_runs_on_slurm(tmp_path: Path) -> None:
    runner = get_runner(state_dir=str(tmp_path))
    assert "partition" in runner.scheduler_run_opts("slurm")._opts
    app = AppDef("a", [Role("r", image="", entrypoint="echo")])
    assert "sbatch" in str(runner.dryrun(app, "slurm"))


@pytest.mark.parametrize("scheduler", ["local_cwd", "slurm"])
def test_mounts_and_capabilities_set_to_none_dry_run(scheduler: str, tmp_path: Path) -> None:
    role = Role("r", image="", entrypoint="echo", args=["hi"])
    role.mounts = None  # type: ignore[assignment]  # as a component forwarding None may
    role.resource = specs.Resource(cpu=1, gpu=0, memMB=64)
    role.resource.capabilities = None  # type: ignore[assignment]
    with get_runner(state_dir=str(tmp_path)) as runner:
        info = runner.dryrun(AppDef("a", [role]), scheduler)
    assert info.scheduler == scheduler
    assert role.mounts == [] and role.resource.capabilities == {}


def test_a_requeued_app_gives_its_ui_url_as_status_does() -> None:
    # a component serving a UI declares its address; requeue reads the status as status does
    app = AppDef(
        "ui",
        [Role("r", image="", entrypoint="sleep", args=["300"])],
        metadata={"ui_url": "http://{host}:6006/"},
    )
    with get_runner() as runner:
        handle = runner.run(app)
        try:
            requeued = runner.requeue(handle)
            assert requeued is not None and requeued.state == AppState.RUNNING, requeued
            assert requeued.ui_url is not None and requeued.ui_url.endswith(":6006/")
            status = runner.status(handle)
            assert status is not None and requeued.ui_url == status.ui_url
        finally:
            runner.cancel(handle)
