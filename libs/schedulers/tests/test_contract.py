"""The base contract every scheduler shares: template methods, app ids, the replica
environment, errors, parameters and workspaces."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

# The same objects as torchx.schedulers.api's, whose names the upstream surface test checks.
from torchx.schedulers import (
    TORCHX_RANK0_HOST,
    TORCHX_VARIABLES,
    DescribeAppResponse,
    ListAppResponse,
    LogRequest,
    Scheduler,
    SchedulerError,
    Stream,
    check_params,
    declared_params,
    filter_regex,
    launch_defaults,
    make_unique,
    replica_env,
    split_lines,
    split_lines_iterator,
)
from torchx.schedulers.ids import random_id
from torchx.specs import (
    AppDef,
    AppDryRunInfo,
    AppState,
    CfgVal,
    Role,
    SpecsError,
    macros,
    runopts,
)
from torchx.workspace import DirWorkspaceMixin, WorkspaceMixin, walk_workspace
from torchx.workspace.docker_workspace import DockerWorkspaceMixin


@dataclass
class Req:
    app: AppDef
    cfg: dict[str, CfgVal]


class Recording(Scheduler[Req]):
    """A scheduler that keeps apps in memory and records what the base class asks of it."""

    def __init__(self) -> None:
        super().__init__("recording", "s")
        self.apps: dict[str, AppState] = {}
        self.cancelled: list[str] = []

    def _run_opts(self) -> runopts:
        opts = runopts()
        opts.add("queue", str, "where to run", default="q")
        return opts

    def _submit_dryrun(self, app: AppDef, cfg: dict[str, CfgVal]) -> AppDryRunInfo[Req]:
        return AppDryRunInfo(Req(app, cfg), repr)

    def schedule(self, dryrun_info: AppDryRunInfo[Req]) -> str:
        app_id = make_unique(dryrun_info.request.app.name)
        self.apps[app_id] = AppState.RUNNING
        return app_id

    def describe(self, app_id: str) -> DescribeAppResponse | None:
        state = self.apps.get(app_id)
        return None if state is None else DescribeAppResponse(app_id, state)

    def _cancel_existing(self, app_id: str) -> None:
        self.cancelled.append(app_id)
        self.apps[app_id] = AppState.CANCELLED


class WithDirWorkspace(DirWorkspaceMixin, Recording):
    pass


def _app(name: str = "app", role: str = "r") -> AppDef:
    return AppDef(name, roles=[Role(role, image="img", entrypoint="echo", args=["hi"])])


def test_submit_dryrun_resolves_options_and_records_the_app() -> None:
    s = Recording()
    info = s.submit_dryrun(_app())
    assert info.request.cfg == {"queue": "q"}
    assert info.scheduler == "recording" and info.app is not None and info.cfg == {"queue": "q"}
    with pytest.raises(SpecsError, match="queu"):
        s.submit_dryrun(_app(), {"queu": "x"})


def test_a_subclass_validate_hook_runs_before_the_request_is_built() -> None:
    # pytorch/torchx 0.7's custom schedulers refuse apps in _validate(app, scheduler).
    class Picky(Recording):
        def _validate(self, app: AppDef, scheduler: str) -> None:
            super()._validate(app, scheduler)
            if app.name == "bad":
                raise ValueError(f"{scheduler} refuses {app.name}")

    s = Picky()
    assert s.submit_dryrun(_app("good")).app is not None
    with pytest.raises(ValueError, match="recording refuses bad"):
        s.submit(_app("bad"))
    assert s.apps == {}


@pytest.mark.parametrize("bad", [("../../x", "r"), ("app", "../x"), ("a/b", "r"), ("app", "")])
def test_names_that_could_escape_a_directory_are_refused(bad: tuple[str, str]) -> None:
    s = Recording()
    with pytest.raises(SpecsError, match="not valid"):
        s.submit_dryrun(_app(*bad))
    with pytest.raises(SpecsError, match="not valid"):
        s.submit(_app(*bad))
    assert s.apps == {}


def test_cancel_is_a_no_op_for_unknown_and_ended_apps() -> None:
    s = Recording()
    s.cancel("never-submitted")
    app_id = s.submit(_app())
    s.cancel(app_id)
    assert s.cancelled == [app_id]
    s.cancel(app_id)  # ended now: nothing more to do
    assert s.cancelled == [app_id]


def test_log_iter_without_a_role_name_reads_the_apps_only_role() -> None:
    # pytorch/torchx 0.7's Ray scheduler took log_iter(app_id) alone.
    class Logged(Recording):
        def __init__(self, roles: dict[str, list[Role]]) -> None:
            super().__init__()
            self.roles = roles
            self.apps = dict.fromkeys(roles, AppState.RUNNING)

        def describe(self, app_id: str) -> DescribeAppResponse | None:
            desc = super().describe(app_id)
            if desc is not None:
                desc.roles = list(self.roles[app_id])
            return desc

        def _replica_log(self, request: LogRequest) -> Iterable[str]:
            return [f"{request.role_name}/{request.k}\n"]

    s = Logged(
        {"one": [Role("trainer", "img")], "two": [Role("a", "i"), Role("b", "i")], "none": []}
    )
    assert list(s.log_iter("one")) == ["trainer/0\n"]
    with pytest.raises(SpecsError, match="name one of the app's roles: a, b"):
        s.log_iter("two")
    with pytest.raises(SpecsError, match=r"reports no roles for none \(yet\); name the role"):
        s.log_iter("none")


def test_list_and_log_iter_default_to_a_scheduler_error() -> None:
    s = Recording()
    with pytest.raises(SchedulerError, match=r"^recording: this scheduler cannot list"):
        s.list()
    with pytest.raises(SchedulerError, match="keeps no logs"):
        s.log_iter("a", "r")


def test_run_opts_include_the_workspace_options(tmp_path: Path) -> None:
    s = WithDirWorkspace()
    assert isinstance(s, WorkspaceMixin)
    assert set(s.run_opts()._opts) == {"queue", "job_dir"}
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "main.py").write_text("print(1)\n")
    (ws / "pkg" / "mod.py").write_text("x = 1\n")
    (ws / "secret.txt").write_text("no\n")
    (ws / ".torchxignore").write_text("secret.txt\n")
    job_dir = tmp_path / "job"
    app = AppDef("a", roles=[Role("r", image="img", entrypoint="python", args=["main.py"])])
    app_id = s.submit(app, {"job_dir": str(job_dir)}, workspace=str(ws))
    assert app_id.startswith("a-")
    assert sorted(p.name for p in job_dir.rglob("*") if p.is_file()) == ["main.py", "mod.py"]
    assert app.roles[0].image == "img"  # the caller's AppDef is left alone


def test_a_scheduler_without_workspaces_refuses_one(tmp_path: Path) -> None:
    with pytest.raises(SpecsError, match="does not support workspaces"):
        Recording().submit(_app(), workspace=str(tmp_path))


def test_a_custom_workspace_mixin_gets_a_workspace_that_is_not_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace is the mixin's to read: a URL or a build target reaches it as written;
    a local directory arrives as an absolute path."""

    class Targets(WorkspaceMixin[None], Recording):
        def build_workspace_and_update_role(
            self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]
        ) -> None:
            role.image = f"built:{workspace}"

    s = Targets()
    for workspace in ("//trainer:pkg", "git+https://example.com/repo@main", "s3://b/proj"):
        app, _ = s.with_workspace(_app(), {}, workspace)
        assert app.roles[0].image == f"built:{workspace}"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "proj").mkdir()
    app, _ = s.with_workspace(_app(), {}, "proj")
    assert app.roles[0].image == f"built:{tmp_path / 'proj'}"
    assert s.submit(_app(), {}, workspace="//trainer:pkg") in s.apps
    # the built-in mixins still need a directory, and say so
    with pytest.raises(SpecsError, match="workspace: got 'missing'; give an existing directory"):
        WithDirWorkspace().submit(_app(), {"job_dir": str(tmp_path / "j")}, workspace="missing")


class Tagged(WorkspaceMixin[None], Recording):
    """A 0.7-style mixin that reads its own option's default, and the scheduler's."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[dict[str, CfgVal]] = []

    def workspace_opts(self) -> runopts:
        opts = runopts()
        opts.add("ws_tag", str, "the tag of built images", default="v1")
        return opts

    def build_workspace_and_update_role(
        self, role: Role, workspace: str, cfg: Mapping[str, CfgVal]
    ) -> None:
        self.seen.append(dict(cfg))
        role.image = f"built:{cfg['ws_tag']}:{cfg['queue']}"


def test_a_custom_workspace_mixin_gets_the_run_options_with_their_defaults() -> None:
    s = Tagged()
    app, cfg = s.with_workspace(_app(), {}, "//target")
    assert app.roles[0].image == "built:v1:q" and cfg == {"queue": "q", "ws_tag": "v1"}
    app, _ = s.with_workspace(_app(), {"ws_tag": "v2"}, "//target")
    assert app.roles[0].image == "built:v2:q"
    assert s.seen == [{"queue": "q", "ws_tag": "v1"}, {"queue": "q", "ws_tag": "v2"}]


def test_walk_workspace_follows_torchxignore(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.o").write_text("")
    (tmp_path / "keep.py").write_text("")
    (tmp_path / "a.log").write_text("")
    (tmp_path / "b.log").write_text("")
    (tmp_path / ".torchxignore").write_text("# comment\nbuild\n*.log\n!b.log\n")
    assert list(walk_workspace(str(tmp_path))) == ["b.log", "keep.py"]
    (tmp_path / ".keep").write_text("*.py\n")
    # one ignore file by name, as 0.7's ignore_name (not each of its letters)
    assert list(walk_workspace(str(tmp_path), ".keep")) == [
        ".keep",
        "a.log",
        "b.log",
        "build/out.o",
    ]


def test_walk_workspace_in_0_7s_form_says_how_it_is_written_here(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("file")
    ws = str(tmp_path)
    # 0.7's calls: (fs, path), (fs, path, ignore_name) and by keyword; each a one-line
    # SpecsError when called, before anything is iterated
    for call in (
        lambda: walk_workspace(fs, ws),
        lambda: walk_workspace(fs, ws, ".dockerignore"),
        lambda: walk_workspace(fs=fs, path=ws, ignore_name=".torchxignore"),
        lambda: walk_workspace(fs=fs, path=ws),
    ):
        with pytest.raises(SpecsError) as e:
            call()
        msg = str(e.value)
        assert "got 'LocalFileSystem'" in msg and "walk_workspace(workspace, ignore_files)" in msg
        assert "\n" not in msg and e.value.field in (
            "walk_workspace's fs",
            "walk_workspace's workspace",
        )


def test_walk_workspace_names_the_field_that_refused_it_and_a_call_that_works(
    tmp_path: Path,
) -> None:
    (tmp_path / "keep.py").write_text("")
    ws = str(tmp_path)
    cases = {
        "path": lambda: walk_workspace(path=ws),
        "ignore_name": lambda: walk_workspace(workspace=ws, ignore_name=".dockerignore"),
        "workspace": lambda: walk_workspace(),
    }
    for field, call in cases.items():
        with pytest.raises(SpecsError) as e:
            call()
        msg = str(e.value)
        assert e.value.field == f"walk_workspace's {field}" and "\n" not in msg, msg
        assert "walk_workspace(workspace, ignore_files)" in msg, msg
    # the call each refusal suggests is one that runs
    with pytest.raises(SpecsError) as e:
        walk_workspace(path=ws)
    assert e.value.value == ws and f"walk_workspace({ws!r}, ['.torchxignore'])" in str(e.value)
    assert list(walk_workspace(ws, [".torchxignore"])) == ["keep.py"]
    with pytest.raises(SpecsError) as e:
        walk_workspace(workspace=ws, ignore_name=".dockerignore")
    assert f"walk_workspace({ws!r}, ['.dockerignore'])" in str(e.value)
    assert list(walk_workspace(ws, [".dockerignore"])) == ["keep.py"]


def test_walk_workspace_takes_a_path_object(tmp_path: Path) -> None:
    (tmp_path / "keep.py").write_text("")
    (tmp_path / "skip.log").write_text("")
    (tmp_path / ".torchxignore").write_text("*.log\n")
    assert list(walk_workspace(tmp_path)) == ["keep.py"]
    assert list(walk_workspace(tmp_path, [])) == ["keep.py", "skip.log"]
    with pytest.raises(SpecsError, match="give an existing directory"):
        walk_workspace(tmp_path / "missing")


def test_docker_workspace_names_pushed_images_without_touching_docker() -> None:
    class Pusher(DockerWorkspaceMixin, Recording):
        pass

    s = Pusher()
    assert {"image_repo", "quiet"} <= set(s.run_opts()._opts)
    app = AppDef(
        "a",
        roles=[
            Role("built", image="torchx-workspace:abc123", entrypoint="x"),
            Role("plain", image="busybox", entrypoint="x"),
        ],
    )
    pushes = s.dryrun_push_images(app, {"image_repo": "reg:5000/me/ws"})
    assert pushes == {"torchx-workspace:abc123": ("reg:5000/me/ws", "abc123")}
    assert [r.image for r in app.roles] == ["reg:5000/me/ws:abc123", "busybox"]
    app.roles[0].image = "torchx-workspace:abc123"
    with pytest.raises(SpecsError, match="image_repo"):
        s.dryrun_push_images(app, {})
    s.push_images({})  # nothing to push: no client is made


def test_make_unique_ids() -> None:
    ids = {make_unique("train") for _ in range(200)}
    assert len(ids) == 200
    for app_id in ids:
        assert re.fullmatch(r"train-[a-z][a-z2-7]{11}", app_id), app_id
    assert re.fullmatch(r"x-[a-z][a-z2-7]{4}", make_unique("x", 5))
    assert len(random_id(1)) == 1
    with pytest.raises(ValueError):
        random_id(0)


def test_replica_env_precedence() -> None:
    role_env = {
        "TORCHX_ROLE_NAME": "mine",
        TORCHX_RANK0_HOST: "elsewhere",
        "MASTER_PORT": "1",
        "OWN": "x",
    }
    defaults = launch_defaults(master_addr="h0", master_port=29500, rank=2, world_size=4)
    env = replica_env(
        role_env, app_id="a-1", role_name="r", replica_id="2", rank0_host="h0", defaults=defaults
    )
    # torchx's variables win over the role's, the role's over the scheduler's defaults
    assert [env[k] for k in TORCHX_VARIABLES] == ["a-1", "r", "2", "h0"]
    assert env["MASTER_PORT"] == "1" and env["OWN"] == "x" and env["RANK"] == "2"
    local = launch_defaults(master_addr="h", master_port=1, rank=1, world_size=3, same_host=True)
    assert (local["LOCAL_RANK"], local["LOCAL_WORLD_SIZE"], local["GROUP_RANK"]) == ("1", "3", "0")


def test_macros_fill_metadata_too() -> None:
    role = Role(
        "r",
        image="i",
        entrypoint="e",
        args=[macros.app_id],
        metadata={"a": macros.replica_id, "n": {"l": [macros.app_id, 3]}, "k": 1},
    )
    filled = macros.Values(img_root="/i", app_id="A", replica_id="0").apply(role)
    assert filled.metadata == {"a": "0", "n": {"l": ["A", 3]}, "k": 1}
    assert filled.args == ["A"] and role.metadata["a"] == macros.replica_id


def test_scheduler_error_is_one_sentence() -> None:
    e = SchedulerError("slurm", "sbatch refused the job: no such partition", "pick another")
    assert str(e) == "slurm: sbatch refused the job: no such partition; pick another"
    assert isinstance(e, RuntimeError) and not isinstance(e, SpecsError)
    assert str(SchedulerError("ray", "the cluster is down")) == "ray: the cluster is down"


def test_check_params_names_what_is_accepted() -> None:
    check_params("local_cwd", {"state_dir": "/x"}, {"state_dir"})
    with pytest.raises(SpecsError) as e:
        check_params("slurm", {"state_dir": "/x"}, {"use_sacct"})
    text = str(e.value)
    assert "slurm scheduler parameter" in text and "'state_dir'" in text and "use_sacct" in text


def test_declared_params() -> None:
    def upstream_style(session_name: str, **kwargs: object) -> None: ...

    def ours(session_name: str, state_dir: str | None = None, **params: object) -> None: ...

    assert declared_params(upstream_style) is None
    assert declared_params(ours) == {"state_dir"}


def test_log_helpers() -> None:
    assert split_lines("a\nb\n\nc") == ["a\n", "b\n", "\n", "c"]
    assert list(split_lines_iterator(["a\nb", "c\n"])) == ["a\n", "b", "c\n"]
    lines: Iterable[str] = ["x1\n", "y\n", "x2\n"]
    assert list(filter_regex("^x", lines)) == ["x1\n", "x2\n"]
    with pytest.raises(SpecsError, match="regex"):
        filter_regex("(", lines)
    assert Stream("stderr") is Stream.STDERR
    listed = ListAppResponse("a", AppState.RUNNING, submitted_at=datetime.now())
    assert listed.app_handle == "<NOT_SET>"  # pytorch/torchx's default; the runner sets it
