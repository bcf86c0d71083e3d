"""registered_dryrun: a dry run through a registered scheduler, as the Runner makes it, for a
scheduler written against pytorch/torchx 0.7 (its own ``submit_dryrun``) or this one."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from torchx.schedulers import Scheduler, registered_dryrun
from torchx.schedulers.api import DescribeAppResponse
from torchx.specs import (
    AppDef,
    AppDefError,
    AppDryRunInfo,
    AppState,
    CfgVal,
    Role,
    SpecsError,
    runopts,
)


class Custom(Scheduler[dict[str, Any]]):
    """A plug-in with one run option that has a default; it records every ``_validate``."""

    max_replicas = 3

    def __init__(self) -> None:
        super().__init__("mybackend", "s")
        self.validated: list[str] = []

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("namespace", type_=str, default="team", help="where jobs go")
        return opts

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[Any]:
        return AppDryRunInfo({"base": dict(cfg)}, repr)

    def schedule(self, dryrun_info: AppDryRunInfo[Any]) -> str:
        return "id"

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        return None

    def _cancel_existing(self, app_id: str) -> None:
        pass

    def _validate(self, app: AppDef, scheduler: str) -> None:
        self.validated.append(scheduler)


class Written07(Custom):
    """0.7's form: the override builds its own request from a run option it reads directly
    (0.7's Runner handed it the run options with their defaults filled in)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[dict[str, CfgVal]] = []

    def submit_dryrun(self, app: AppDef, cfg: Any) -> Any:
        self.seen.append(dict(cfg))
        return AppDryRunInfo({"namespace": cfg["namespace"]}, repr)


def _app(replicas: int = 1) -> AppDef:
    return AppDef("a", [Role("r", image="i", entrypoint="echo", num_replicas=replicas)])


def test_an_override_gets_the_run_options_resolved_and_validate_once() -> None:
    s = Written07()
    info = registered_dryrun(s, _app(), {}, "custom")
    assert info.request == {"namespace": "team"} and info.scheduler == "custom"
    assert s.validated == ["custom"]
    registered_dryrun(s, _app(), {"namespace": "other"}, "custom")
    assert [seen["namespace"] for seen in s.seen] == ["team", "other"]


def test_a_scheduler_without_an_override_gets_the_same() -> None:
    s = Custom()
    info = registered_dryrun(s, _app(), None, "custom")
    assert info.request == {"base": {"namespace": "team"}} and info.scheduler == "custom"
    assert s.validated == ["custom"]


def test_submit_reaches_the_override_with_the_run_options_resolved() -> None:
    s = Written07()
    assert s.submit(_app()) == "id"
    assert s.seen == [{"namespace": "team"}] and s.validated == ["mybackend"]


@pytest.mark.parametrize("cls", [Custom, Written07])
def test_an_invalid_app_never_reaches_validate_or_the_override(cls: type[Custom]) -> None:
    s = cls()
    with pytest.raises(AppDefError, match="num_replicas"):
        registered_dryrun(s, _app(replicas=0), {}, "custom")
    with pytest.raises(SpecsError, match="replicas"):
        registered_dryrun(s, _app(replicas=4), {}, "custom")  # over max_replicas
    assert s.validated == []
    assert getattr(s, "seen", []) == []


class Tagging(Role):
    """0.7's documented hook: a Role subclass edits the request made for it."""

    def pre_proc(self, scheduler: str, dryrun_info: AppDryRunInfo[Any]) -> AppDryRunInfo[Any]:
        request = dict(dryrun_info.request)
        request["tags"] = [*request.get("tags", []), f"{self.name}@{scheduler}"]
        return AppDryRunInfo(request, repr)  # a new info: the one returned is the one used


def test_each_role_pre_proc_edits_the_request_in_order_with_the_backend() -> None:
    app = AppDef("a", [Tagging("r1", image="i", entrypoint="e"), Role("r", "i", "e")])
    app.roles.append(Tagging("r2", image="i", entrypoint="e"))
    s = Custom()
    info = s.submit_dryrun(app, {})
    assert info.request["tags"] == ["r1@mybackend", "r2@mybackend"]
    assert info.app is app and info.cfg == {"namespace": "team"} and info.scheduler
    # 0.7 gave pre_proc the scheduler's backend, whatever name it was registered under
    info = registered_dryrun(s, app, {}, "custom")
    assert info.request["tags"] == ["r1@mybackend", "r2@mybackend"]
    assert info.scheduler == "custom"


class Recording(Role):
    """Records the scheduler name each ``pre_proc`` call is given."""

    seen: ClassVar[list[str]] = []

    def pre_proc(self, scheduler: str, dryrun_info: AppDryRunInfo[Any]) -> AppDryRunInfo[Any]:
        Recording.seen.append(scheduler)
        return dryrun_info


def test_the_local_schedulers_give_pre_proc_the_backend_0_7_gave(tmp_path: Path) -> None:
    # pytorch/torchx 0.7's LocalScheduler was backend "local", its DockerScheduler "docker":
    # a Role subclass testing ``scheduler == "local"`` still matches
    from torchx.schedulers.docker_scheduler import create_scheduler as docker
    from torchx.schedulers.local_scheduler import create_scheduler as local

    for registered, sched in (
        ("local_cwd", local("t", state_dir=tmp_path / "state")),
        ("local_docker", docker("t")),
    ):
        image = "ubuntu" if registered == "local_docker" else str(tmp_path)
        app = AppDef("p", [Recording("r", image=image, entrypoint="true")])
        Recording.seen.clear()
        registered_dryrun(sched, app, {}, registered)
        sched.submit_dryrun(app, {})
        expected = "docker" if registered == "local_docker" else "local"
        assert Recording.seen == [expected, expected], registered


def test_pre_proc_edits_reach_the_local_scheduler(tmp_path: Path) -> None:
    from torchx.schedulers.local_scheduler import create_scheduler

    class WithEnv(Role):
        def pre_proc(self, scheduler: str, dryrun_info: AppDryRunInfo[Any]) -> AppDryRunInfo[Any]:
            for replica in dryrun_info.request.replicas:
                replica.env["SET_BY"] = f"pre_proc {scheduler}"
            return dryrun_info

    s = create_scheduler("t", state_dir=tmp_path / "state")
    out = tmp_path / "out.txt"
    role = WithEnv(
        "r", image=str(tmp_path), entrypoint="sh", args=["-c", f'echo "$SET_BY" > {out}']
    )
    app_id = s.schedule(registered_dryrun(s, AppDef("p", [role]), {}, "local_cwd"))
    desc = s.wait(app_id, timeout=60)
    assert desc is not None and desc.state == AppState.SUCCEEDED
    assert out.read_text() == "pre_proc local\n"
