"""Mistakes of a first session with the CLI: each gets one line naming what to fix."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from torchx.cli._sweep_cli import resolve_trial
from torchx.runner import get_runner
from torchx.specs import AppState, is_started

from .cli_invoke import invoke, refused
from .cli_process import TORCHX


def test_an_error_raised_by_a_component_names_the_component(isolated: Path) -> None:
    (isolated / "comp.py").write_text(
        "import torchx.specs as specs\n\n"
        "def fn(x: int) -> specs.AppDef:\n"
        "    raise ValueError('x must be even')\n"
    )
    assert refused("run", "--dryrun", "./comp.py:fn", "--x", "1").splitlines() == [
        "torchx: error: ValueError: x must be even (raised by component ./comp.py:fn; fix the "
        "component or the arguments given to it; --debug shows the traceback)"
    ]


def test_status_of_a_role_the_app_does_not_have_warns_naming_its_roles(isolated: Path) -> None:
    code, out, _ = invoke("run", "--json", "utils.echo", "--msg", "hi")
    assert code == 0, out
    handle = json.loads(out)["handle"]
    for extra in ((), ("--json",)):
        # stdout and the exit code stay as 0.7's (no replica shown, 0): scripts read them
        code, out, err = invoke("status", "--roles", "ecko", *extra, handle)
        assert code == 0 and "echo[0]" not in out and "SUCCEEDED" in out
        assert err == "torchx: warning: --roles: got 'ecko'; the app's roles are echo\n"
    code, out, _ = invoke("status", "--roles", "echo", handle)
    assert code == 0 and "echo[0]:SUCCEEDED" in out
    # every unknown role is named, not only the first
    code, _, err = invoke("status", "--roles", "ecko,echo,echp", handle)
    assert (
        code == 0
        and err == "torchx: warning: --roles: got 'ecko', 'echp'; the app's roles are echo\n"
    )


def test_an_unknown_flag_before_the_component_is_named_not_taken_for_no_component() -> None:
    # a typo of torchx run's own flag: not told to move it after the component
    assert refused("run", "--dryrn", "utils.echo") == (
        "torchx: error: torchx run: got '--dryrn'; no such option; did you mean '--dryrun'? "
        "(torchx run --dryrun ... COMPONENT ...)\n"
    )
    err = refused("run", "--msg=hi", "utils.echo")
    assert "got '--msg=hi'; no such option; name the component before" in err


def test_a_misspelt_scheduler_in_a_handle_gets_the_name_meant() -> None:
    err = refused("status", "slrum://torchx/echo-1")
    assert err.startswith("torchx: error: scheduler: got 'slrum'; did you mean 'slurm'? known ")
    err = refused("log", "LOCAL_CWD://torchx/echo-1")
    assert "got 'LOCAL_CWD'; did you mean 'local_cwd'? known " in err


def test_an_unknown_handle_says_where_the_known_ones_are_listed(isolated: Path) -> None:
    unknown = "local_cwd://torchx/echo-nosuchapp123"
    for command in (["status"], ["status", "--watch"], ["describe"], ["log"], ["cancel"]):
        assert refused(*command, unknown) == (
            f"torchx: error: app handle: got {unknown!r}; no such app on its scheduler; "
            "`torchx list -s local_cwd` lists its apps\n"
        ), command


def test_a_script_that_is_not_there_is_refused_before_anything_starts(isolated: Path) -> None:
    components = [["utils.python"]]
    # without torchrun (a plain install has no torch) dist.ddp stops at its entrypoint first
    if shutil.which("torchrun") is not None:
        components.append(["dist.ddp", "-j", "2"])
    for component in components:
        err = refused("run", *component, "--script", "trian.py")
        assert err.startswith(f"torchx: error: {component[0]} --script: got 'trian.py'; ")
        assert f"nothing at that path in {isolated}, where local_cwd runs role" in err
        assert err.count("\n") == 1
    assert invoke("list", "--json")[1].strip() == "[]"  # nothing was submitted
    # a dryrun prints the request without looking at the file, as for any scheduler
    assert invoke("run", "--dryrun", "utils.python", "--script", "trian.py")[0] == 0


def _hello(where: Path, name: str = "hello.py") -> None:
    where.mkdir(parents=True, exist_ok=True)
    (where / name).write_text("print('hello from the script')\n")


def ran_hello(*args: str) -> None:
    code, _, err = invoke("run", *args)
    assert code == 0 and "hello from the script" in err, err


def test_a_script_is_looked_for_where_the_replicas_run(isolated: Path) -> None:
    _hello(isolated / "src")
    # -cfg cwd; a path relative to it or absolute
    ran_hello("-cfg", "cwd=src", "utils.python", "--script", "hello.py")
    ran_hello("utils.python", "--script", str(isolated / "src/hello.py"))
    # cwd from .torchxconfig
    (isolated / ".torchxconfig").write_text("[local_cwd]\ncwd = src\n")
    ran_hello("utils.python", "--script", "hello.py")
    (isolated / ".torchxconfig").unlink()
    # the workspace copy the replicas run in: --workspace or [cli:run] workspace
    ran_hello("--workspace", "src", "utils.python", "--script", "hello.py")
    (isolated / ".torchxconfig").write_text("[cli:run]\nworkspace = src\n")
    ran_hello("utils.python", "--script", "hello.py")
    (isolated / ".torchxconfig").unlink()
    # a directory with __main__.py, as python runs it
    _hello(isolated / "pkgdir", "__main__.py")
    ran_hello("utils.python", "--script", "pkgdir")
    # what is missing in the workspace (copied on submit) is refused, naming it
    _hello(isolated / "other")
    err = refused("run", "--workspace", "other", "utils.python", "--script", "src/hello.py")
    assert "--script: got 'src/hello.py'; nothing at that path in " in err
    assert f"in {isolated / 'other'}, a copy of which is where local_cwd runs" in err, err


def test_on_local_dir_a_script_is_looked_for_in_the_image_directory(isolated: Path) -> None:
    _hello(isolated / "sub")
    (isolated / "top.py").write_text("print('not in the image directory')\n")
    err = refused("run", "-s", "local_dir", "utils.python", "--image", "sub", "--script", "top.py")
    assert err == (
        f"torchx: error: utils.python --script: got 'top.py'; nothing at that path in "
        f"{isolated / 'sub'}, where local_dir runs role 'python'; give the path "
        "of your script, relative to that directory or absolute\n"
    )
    ran_hello("-s", "local_dir", "utils.python", "--image", "sub", "--script", "hello.py")


def test_local_dir_without_a_directory_image_says_how_to_give_one() -> None:
    assert refused("run", "-s", "local_dir", "--dryrun", "utils.echo") == (
        "torchx: error: role image: got 'ghcr.io/pytorch/torchx:0.7.0'; the local_dir "
        "scheduler runs in a directory; give an existing one (a builtin component takes "
        "--image DIR), or run on local_cwd (-s local_cwd)\n"
    )


def test_no_docker_engine_for_a_kubernetes_workspace_names_kubernetes(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("docker", reason="the engine is asked through the docker package")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{isolated}/no-engine.sock")
    (isolated / "train.py").write_text("print('hi')\n")
    err = refused(
        "run", "-s", "kubernetes", "-cfg", "image_repo=registry.example/me/app", "--dryrun",
        "utils.echo",
    )  # fmt: skip
    (error,) = [line for line in err.splitlines() if line.startswith("torchx: error:")]
    assert error.startswith(
        f"torchx: error: kubernetes: the Docker engine at unix://{isolated}/no-engine.sock "
        "(from DOCKER_HOST): connecting failed"
    ), error


def test_a_missing_argument_or_value_says_what_to_add() -> None:
    assert refused("run", "--dryrun", "utils.booth", "--x1", "1") == (
        "torchx: error: utils.booth --x2: not given; required; add --x2 X2 "
        "(torchx run utils.booth --help describes it)\n"
    )
    assert refused("run", "--dryrun", "utils.echo", "--msg") == (
        "torchx: error: utils.echo --msg value: not given; it takes a value of type str: "
        "--msg VALUE\n"
    )
    # a sweep's trial is missing it the same way
    assert refused("run", "--dryrun", "--sweep", "x1=1,2", "utils.booth") == (
        "torchx: error: sweep trial 0 utils.booth --x2: not given; required; add --x2 X2 "
        "(torchx run utils.booth --help describes it)\n"
    )


def _until(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_the_log_of_an_app_that_has_not_started_waits_for_it_to_start(isolated: Path) -> None:
    # One trial at a time, each running until its gate file exists: trial N waits (PENDING)
    # until gate N-1 is opened.
    (isolated / "gated.py").write_text(
        "import torchx.specs as specs\n\n"
        "def gated(gate: str) -> specs.AppDef:\n"
        "    script = f'echo at {gate}; while [ ! -e {gate} ]; do sleep 0.05; done'\n"
        "    return specs.AppDef('g', [specs.Role('g', image='.', entrypoint='sh', "
        "args=['-c', script])])\n"
    )
    code, out, err = invoke(
        "run", "--no-wait", "--sweep", "gate=g0,g1,g2", "--parallel", "1", "./gated.py:gated"
    )
    assert code == 0, err
    sweep = out.strip()
    trials = [resolve_trial(f"{sweep}/{k}") for k in range(3)]
    runner = get_runner()

    def state(k: int) -> AppState:
        status = runner.status(trials[k])
        assert status is not None
        return status.state

    def log(k: int) -> tuple[subprocess.Popen[str], Path]:
        err_file = isolated / f"log{k}.err"
        with err_file.open("w") as err_out:
            proc = subprocess.Popen(
                [TORCHX, "log", f"{sweep}/{k}"], stdout=subprocess.PIPE, stderr=err_out, text=True
            )
        note = f"torchx: {trials[k]} is PENDING: waiting for it to start to print the log of"
        _until(lambda: note in err_file.read_text() or proc.poll() is not None, "no note")
        assert note in err_file.read_text(), err_file.read_text()
        return proc, err_file

    try:
        # `torchx log TRIAL` waits while the trial is PENDING, then prints its log
        proc, err_file = log(1)
        assert proc.poll() is None and state(1) == AppState.PENDING
        (isolated / "g0").touch()
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, err_file.read_text()
        assert is_started(state(1))
        assert all(line.endswith("at g1") for line in out.splitlines()), out
        # Ctrl-C stops the wait: exit 130, no traceback
        proc, err_file = log(2)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
        assert proc.returncode == 130
        assert "Traceback" not in err_file.read_text()
        # an app that ends without starting ends the wait, with an empty log
        proc, err_file = log(2)
        assert invoke("cancel", sweep)[0] == 0
        out, _ = proc.communicate(timeout=120)
        assert (proc.returncode, out) == (0, ""), err_file.read_text()
        assert state(2) == AppState.CANCELLED
    finally:
        invoke("cancel", sweep)
        for k in range(3):
            (isolated / f"g{k}").touch()


def test_the_log_of_one_replica_that_has_not_started_says_why_it_is_empty(
    isolated: Path,
) -> None:
    # One trial at a time: trial 1 waits (PENDING) as long as trial 0 runs.
    code, out, err = invoke(
        "run", "--no-wait", "--sweep", "num_replicas=1,2", "--parallel", "1",
        "utils.sh", "sleep", "600",
    )  # fmt: skip
    assert code == 0, err
    sweep = out.strip()
    try:
        # one replica's log does not wait (as in 0.7): it says why it is empty
        code, out, err = invoke("log", f"{sweep}/1/sh/0")
        assert (code, out) == (0, "")
        assert re.fullmatch(
            r"torchx: local_cwd://torchx/sh-\S+ is (UNSUBMITTED|SUBMITTED|PENDING): it has "
            rf"not started, so its log may be empty; `torchx log -f {re.escape(sweep)}/1/sh/0` "
            r"waits for its lines\n",
            err,
        ), err
    finally:
        assert invoke("cancel", sweep)[0] == 0


def test_a_handle_with_a_trailing_slash_names_it_without(isolated: Path) -> None:
    code, out, err = invoke("run", "--sweep", "msg=a,b", "utils.echo")
    assert code == 0, err
    sweep = out.splitlines()[0]
    app = resolve_trial(f"{sweep}/1")
    cases = [
        (command, f"{typed}/", field)
        for typed, commands, field in (
            (sweep, ("status", "describe", "cancel", "log", "wait"), "sweep handle"),
            (f"{sweep}/1", ("status", "describe", "log"), "sweep handle"),
            (f"{sweep}/1/echo/0", ("log",), "sweep handle"),
            (app, ("log",), "log target"),
            (f"{app}/echo", ("log",), "log target"),
        )
        for command in commands
    ]
    cases.append(("run", f"{sweep}/", "--resume"))
    for command, target, field in cases:
        args = ("run", "--resume", target) if command == "run" else (command, target)
        code, out, err = invoke(*args)
        assert (code, out) == (2, ""), (args, out)
        # what was typed is named, never the handle of the trial it resolves to
        assert err == (
            f"torchx: error: {field}: got {target!r}; did you mean {target[:-1]}? (a handle ends"
            " without '/')\n"
        ), args
