"""Mistakes of a first session with the CLI: each gets one line naming what to fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from torchx.cli._app import app

cli = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def refused(*args: str) -> str:
    """The stderr of a command that must fail with exit code 2 and print nothing else."""
    code, out, err = invoke(*args)
    assert (code, out) == (2, ""), err
    return err


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


def test_an_unknown_flag_before_the_component_is_named_not_taken_for_no_component() -> None:
    assert refused("run", "--dryrn", "utils.echo") == (
        "torchx: error: component: none given, and torchx run has no option '--dryrn'; did "
        "you mean '--dryrun'? name the component before its own arguments (torchx run "
        "COMPONENT --dryrn ...) or set `component = NAME` in the [cli:run] section of "
        ".torchxconfig\n"
    )
    err = refused("run", "--msg=hi", "utils.echo")
    assert "has no option '--msg'; name the component before" in err


def test_a_misspelt_scheduler_in_a_handle_gets_the_name_meant() -> None:
    err = refused("status", "slrum://torchx/echo-1")
    assert err.startswith("torchx: error: scheduler: got 'slrum'; did you mean 'slurm'? known ")
    err = refused("log", "LOCAL_CWD://torchx/echo-1")
    assert "got 'LOCAL_CWD'; did you mean 'local_cwd'? known " in err


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


def test_the_log_of_an_app_that_has_not_started_says_why_it_is_empty(isolated: Path) -> None:
    # One trial at a time: trial 1 waits (PENDING) as long as trial 0 runs.
    code, out, err = invoke(
        "run", "--no-wait", "--sweep", "num_replicas=1,2", "--parallel", "1",
        "utils.sh", "sleep", "600",
    )  # fmt: skip
    assert code == 0, err
    sweep = out.strip()
    try:
        code, out, err = invoke("log", f"{sweep}/1")
        assert (code, out) == (0, "")
        assert re.fullmatch(
            r"torchx: local_cwd://torchx/sh-\S+ is (UNSUBMITTED|SUBMITTED|PENDING): it has "
            rf"not started, so its log may be empty; `torchx log -f {re.escape(sweep)}/1` "
            r"waits for its lines\n",
            err,
        ), err
    finally:
        assert invoke("cancel", sweep)[0] == 0
