"""pytorch/torchx 0.7's runner API: torchx.runner.api, torchx.runner.config, stop, wait."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from torchx.runner import ConfigError, Runner, config
from torchx.runner import api as runner_api
from torchx.schedulers import UnknownSchedulerError
from torchx.specs import (
    AppDef,
    AppState,
    Role,
    SpecsError,
    UnknownAppException,
    UnknownSchedulerException,
)


def test_api_module_re_exports_the_runner() -> None:
    assert runner_api.Runner is Runner
    with runner_api.get_runner() as runner:
        assert isinstance(runner, Runner) and runner.name() == "torchx"


def test_default_session_is_the_session_of_a_runner_not_given_a_name() -> None:
    from torchx.runner import DEFAULT_SESSION, get_runner

    assert DEFAULT_SESSION == "torchx"
    with get_runner() as runner, get_runner("other") as named:
        assert runner.name() == DEFAULT_SESSION and named.name() == "other"


def test_wait_interval_stop_and_cancel_of_an_unknown_app() -> None:
    with runner_api.get_runner() as runner:
        handle = runner.run(AppDef("w", [Role("r", image="", entrypoint="sleep", args=["300"])]))
        start = time.monotonic()
        status = runner.wait(handle, wait_interval=0.05, timeout=0.3)
        assert status is not None and status.state in (AppState.PENDING, AppState.RUNNING)
        assert time.monotonic() - start < 120  # the timeout, not the app's end, stopped it
        assert runner.stop(handle) is None  # type: ignore[func-returns-value]
        status = runner.wait(handle, wait_interval=0.05)
        assert status is not None and status.state == AppState.CANCELLED
        assert runner.cancel("local_cwd://torchx/never-ran") is None  # type: ignore[func-returns-value]
        assert runner.wait("local_cwd://torchx/never-ran", wait_interval=0.01) is None
        with pytest.raises(UnknownAppException):
            list(runner.log_lines("local_cwd://torchx/never-ran", "r"))
        with pytest.raises(UnknownSchedulerException):
            runner.status("nosuch://torchx/a")
        assert issubclass(UnknownSchedulerError, UnknownSchedulerException)


def test_an_unknown_scheduler_is_still_a_key_error_with_a_one_line_message() -> None:
    """0.7's Runner raised KeyError for an unknown scheduler; its callers' except still works."""
    app = AppDef("k", [Role("r", image="", entrypoint="echo")])
    with runner_api.get_runner() as runner:
        calls = (
            lambda: runner.status("nosuch://torchx/a"),
            lambda: runner.cancel("nosuch://torchx/a"),
            lambda: runner.describe("nosuch://torchx/a"),
            lambda: runner.dryrun(app, "nosuch"),
        )
        for call in calls:
            with pytest.raises(KeyError) as e:
                call()
            message = str(e.value)
            assert message.startswith("scheduler: got 'nosuch'; ") and "local_cwd" in message
            assert "\n" not in message and not message.startswith('"')
            assert isinstance(e.value, UnknownSchedulerException)


def test_a_bare_entrypoint_in_the_image_directory_runs(tmp_path: Path) -> None:
    image = tmp_path / "image"
    image.mkdir()
    script = image / "greet.sh"
    script.write_text('#!/bin/sh\necho "greet $1" > "$2"\n')
    script.chmod(0o755)
    out = tmp_path / "out.txt"
    app = AppDef("bare", [Role("r", image=str(image), entrypoint="greet.sh", args=["x", str(out)])])
    with runner_api.get_runner() as runner:
        status = runner.wait(runner.run(app, "local_cwd"), wait_interval=0.1)
    assert status is not None and status.state == AppState.SUCCEEDED, status
    assert out.read_text() == "greet x\n"


def test_config_apply_load_and_sections(tmp_path: Path) -> None:
    home, work = Path(os.environ["HOME"]), Path.cwd()
    (home / ".torchxconfig").write_text(
        "[local_cwd]\nlog_dir = /from/home\ncancel_grace_seconds = 2\n\n"
        "[component:dist.ddp]\nj = 1x2\nimage = home-img\n"
    )
    (work / ".torchxconfig").write_text(
        "[local_cwd]\nlog_dir = /from/cwd\n\n[component:dist.ddp]\nimage = cwd-img\n"
    )
    assert config.find_configs() == [str(home / ".torchxconfig"), str(work / ".torchxconfig")]
    assert config.find_configs([str(work)]) == [str(work / ".torchxconfig")]
    cfg: dict[str, object] = {"cancel_grace_seconds": 9.0}
    config.apply("local_cwd", cfg)  # type: ignore[arg-type]
    # what cfg held wins; of the files the later (the working directory's) wins
    assert cfg == {"cancel_grace_seconds": 9.0, "log_dir": "/from/cwd"}
    assert config.load_sections("component") == {"dist.ddp": {"j": "1x2", "image": "cwd-img"}}
    assert config.get_configs("component", "dist.ddp")["image"] == "cwd-img"
    assert config.get_config("component", "dist.ddp", "j") == "1x2"
    assert config.get_config("component", "dist.ddp", "nope") is None
    assert config.get_configs("component", "nope") == {}

    loaded: dict[str, object] = {}
    config.load("local_cwd", io.StringIO("[local_cwd]\ncancel_grace_seconds = 1.5\n"), loaded)  # type: ignore[arg-type]
    assert loaded == {"cancel_grace_seconds": 1.5}
    with pytest.raises(ConfigError, match="did you mean 'log_dir'"):
        config.load("local_cwd", io.StringIO("[local_cwd]\nlogdir = /x\n"), {})
    with pytest.raises(UnknownSchedulerException):
        config.load("nosuch", io.StringIO("[nosuch]\na = 1\n"), {})


def test_config_env_var_names_the_only_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only = tmp_path / "only.ini"
    only.write_text("[local_cwd]\nlog_dir = /only\n")
    monkeypatch.setenv(config.ENV_TORCHXCONFIG, str(only))
    assert config.find_configs(["/anywhere"]) == [str(only)]
    monkeypatch.setenv(config.ENV_TORCHXCONFIG, str(tmp_path / "missing.ini"))
    with pytest.raises(SpecsError, match="TORCHXCONFIG") as missing:
        config.find_configs()
    assert isinstance(missing.value, FileNotFoundError)  # what 0.7 raised


def test_apply_an_unset_value_in_a_later_file_keeps_the_earlier_value(tmp_path: Path) -> None:
    home, project = tmp_path / "user", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    (home / ".torchxconfig").write_text("[local_cwd]\nlog_dir = /from/home\n")
    (project / ".torchxconfig").write_text("[local_cwd]\nlog_dir = None\n")
    cfg: dict[str, object] = {}
    config.apply("local_cwd", cfg, dirs=[str(home), str(project)])  # type: ignore[arg-type]
    assert cfg == {"log_dir": "/from/home"}


def test_config_dump_writes_a_file_load_reads_back() -> None:
    out = io.StringIO()
    config.dump(out, schedulers=["local_cwd"])
    text = out.getvalue()
    assert text.startswith("[local_cwd]\n") and "log_dir = None\n" in text
    cfg: dict[str, object] = {}
    config.load("local_cwd", io.StringIO(text), cfg)  # type: ignore[arg-type]
    # as 0.7: an option dumped as None loads as None (its default applies)
    assert cfg["log_dir"] is None and cfg["cancel_grace_seconds"] is not None
    required = io.StringIO()
    config.dump(required, schedulers=["local_cwd"], required_only=True)
    assert required.getvalue().strip() == "[local_cwd]"
    everything = io.StringIO()
    config.dump(everything)
    assert "[local_cwd]" in everything.getvalue()
