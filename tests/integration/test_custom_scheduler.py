"""A scheduler and a component written for pytorch/torchx's plug-in API, installed through
entry points, found and run by the ``torchx`` CLI and by the runner, unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TORCHX = str(Path(sys.executable).with_name("torchx"))

# Written the way pytorch/torchx's docs show a custom scheduler: subclass Scheduler and
# implement the template hooks; nothing here is specific to this project.
PLUGIN = textwrap.dedent(
    '''
    import json
    import os
    import subprocess
    from typing import Iterable, List, Optional

    from torchx.schedulers.api import (
        DescribeAppResponse,
        ListAppResponse,
        Scheduler,
        Stream,
        filter_regex,
        split_lines,
    )
    from torchx.schedulers.ids import make_unique
    from torchx.specs import (
        AppDef,
        AppDryRunInfo,
        AppState,
        CfgVal,
        ReplicaStatus,
        Role,
        RoleStatus,
        macros,
        runopts,
    )


    class InlineScheduler(Scheduler):
        """Runs each replica to completion, in turn, when the app is scheduled."""

        def __init__(self, session_name: str) -> None:
            super().__init__("inline", session_name)
            self.root = os.environ["INLINE_SCHED_DIR"]

        def _run_opts(self) -> runopts:
            opts = runopts()
            opts.add("suffix", type_=str, help="appended to each output line", default="")
            return opts

        def _submit_dryrun(self, app: AppDef, cfg) -> AppDryRunInfo:
            app_id = make_unique(app.name)
            replicas = []
            for role in app.roles:
                for k in range(role.num_replicas):
                    values = macros.Values(
                        img_root=role.image,
                        app_id=app_id,
                        replica_id=str(k),
                        rank0_env="TORCHX_RANK0_HOST",
                    )
                    r = values.apply(role)
                    replicas.append(
                        {"role": role.name, "k": k, "argv": [r.entrypoint, *r.args], "env": r.env}
                    )
            request = {"app_id": app_id, "replicas": replicas, "suffix": cfg.get("suffix") or ""}
            return AppDryRunInfo(request, lambda req: json.dumps(req, indent=2))

        def schedule(self, dryrun_info: AppDryRunInfo) -> str:
            req = dryrun_info.request
            app_dir = os.path.join(self.root, req["app_id"])
            os.makedirs(app_dir)
            ok = True
            counts = {}
            for rep in req["replicas"]:
                env = {**os.environ, **rep["env"]}
                proc = subprocess.run(rep["argv"], env=env, capture_output=True, text=True)
                out = "".join(line.rstrip("\\n") + req["suffix"] + "\\n"
                              for line in proc.stdout.splitlines())
                with open(os.path.join(app_dir, f"{rep['role']}-{rep['k']}.log"), "w") as f:
                    f.write(out)
                ok = ok and proc.returncode == 0
                counts[rep["role"]] = counts.get(rep["role"], 0) + 1
            state = {"state": "SUCCEEDED" if ok else "FAILED", "roles": counts}
            with open(os.path.join(app_dir, "state.json"), "w") as f:
                json.dump(state, f)
            return req["app_id"]

        def _state(self, app_id: str) -> Optional[dict]:
            try:
                with open(os.path.join(self.root, app_id, "state.json")) as f:
                    return json.load(f)
            except FileNotFoundError:
                return None

        def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
            state = self._state(app_id)
            if state is None:
                return None
            app_state = AppState[state["state"]]
            roles = [Role(name, image="", num_replicas=n) for name, n in state["roles"].items()]
            return DescribeAppResponse(
                app_id=app_id,
                state=app_state,
                roles=roles,
                roles_statuses=[
                    RoleStatus(r.name, [ReplicaStatus(k, app_state, r.name, "localhost")
                                        for k in range(r.num_replicas)])
                    for r in roles
                ],
            )

        def list(self) -> List[ListAppResponse]:
            return [
                ListAppResponse(app_id=a, state=AppState[self._state(a)["state"]])
                for a in sorted(os.listdir(self.root))
            ]

        def _cancel_existing(self, app_id: str) -> None:
            with open(os.path.join(self.root, "cancel-calls"), "a") as f:
                f.write(app_id + "\\n")

        def log_iter(
            self,
            app_id: str,
            role_name: str,
            k: int = 0,
            regex: Optional[str] = None,
            since=None,
            until=None,
            should_tail: bool = False,
            streams: Optional[Stream] = None,
        ) -> Iterable[str]:
            with open(os.path.join(self.root, app_id, f"{role_name}-{k}.log")) as f:
                lines = split_lines(f.read())
            return filter_regex(regex, lines) if regex else iter(lines)


    def create_scheduler(session_name: str, **kwargs: object) -> InlineScheduler:
        return InlineScheduler(session_name)
    '''
)

COMPONENTS = textwrap.dedent(
    '''
    import torchx.specs as specs


    def greet(name: str = "world", replicas: int = 1) -> specs.AppDef:
        """Greets someone from every replica.

        Args:
            name: who to greet
            replicas: how many replicas greet
        """
        return specs.AppDef(
            name="greet",
            roles=[
                specs.Role(
                    name="greeter",
                    image="/tmp",
                    entrypoint="sh",
                    args=["-c", f"echo hello {name} from $REPLICA"],
                    env={"REPLICA": specs.macros.replica_id},
                    num_replicas=replicas,
                )
            ],
        )
    '''
)


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    """An installed distribution (a dist-info on the path) with both entry points."""
    site = tmp_path / "site"
    dist = site / "inline_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: inline-plugin\nVersion: 1.0\n")
    # Registered under a name that differs from the scheduler's own backend name.
    (dist / "entry_points.txt").write_text(
        "[torchx.schedulers]\ninline_sched = inline_sched:create_scheduler\n\n"
        "[torchx.components]\ninline = inline_components\n"
    )
    (site / "inline_sched.py").write_text(PLUGIN)
    (site / "inline_components.py").write_text(COMPONENTS)
    runs = tmp_path / "runs"
    runs.mkdir()
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(site),
        INLINE_SCHED_DIR=str(runs),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    env.pop("TORCHXCONFIG", None)
    return env


def _torchx(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TORCHX, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_cli_finds_and_runs_both(plugin_env: dict[str, str], tmp_path: Path) -> None:
    assert "inline.greet" in _torchx(plugin_env, tmp_path, "builtins").stdout
    assert "suffix" in _torchx(plugin_env, tmp_path, "runopts", "inline_sched").stdout
    proc = _torchx(
        plugin_env,
        tmp_path,
        "run",
        "--json",
        "-s",
        "inline_sched",
        "-cfg",
        "suffix=!",
        "inline.greet",
        "--name",
        "plugins",
        "--replicas",
        "2",
    )
    assert proc.returncode == 0, proc.stderr
    handle = json.loads(proc.stdout)["handle"]
    assert handle.startswith("inline_sched://torchx/greet-"), handle
    assert "State: SUCCEEDED" in _torchx(plugin_env, tmp_path, "status", handle).stdout
    logs = _torchx(plugin_env, tmp_path, "log", handle)
    assert logs.returncode == 0, logs.stderr
    assert sorted(logs.stdout.splitlines()) == [
        "greeter/0 hello plugins from 0!",
        "greeter/1 hello plugins from 1!",
    ]
    assert handle in _torchx(plugin_env, tmp_path, "list", "-s", "inline_sched").stdout
    # cancel of an ended app is a no-op: the plugin's _cancel_existing is never called
    assert _torchx(plugin_env, tmp_path, "cancel", handle).returncode == 0
    assert not (Path(plugin_env["INLINE_SCHED_DIR"]) / "cancel-calls").exists()


def test_the_runner_finds_and_runs_both(plugin_env: dict[str, str], tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from torchx.runner import get_runner

        # state_dir is local_cwd's parameter; the plugin's factory takes **kwargs
        with get_runner(state_dir={str(tmp_path / "state")!r}) as runner:
            handle = runner.run_component(
                "inline.greet", ["--name", "runner"], "inline_sched", cfg={{"suffix": "."}}
            )
            status = runner.wait(handle)
            print(handle, status.state.name)
            print("".join(runner.log_lines(handle, "greeter", 0)), end="")
            runner.cancel(handle)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=plugin_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("inline_sched://torchx/greet-") and lines[0].endswith(" SUCCEEDED")
    assert lines[1] == "hello runner from 0."
    assert not (Path(plugin_env["INLINE_SCHED_DIR"]) / "cancel-calls").exists()
