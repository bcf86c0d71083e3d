"""A 0.7 program's Runner meets the ``.torchxconfig`` files it never named: what the code
passes wins, a bad file is one line naming it, and a Runner can be made to read none."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from torchx.components.utils import echo
from torchx.runner import (
    DEFAULT_SESSION,
    ConfigError,
    Runner,
    TorchxConfig,
    get_runner,
    scheduler_factories,
)


def test_component_defaults_given_in_code_beat_the_file() -> None:
    Path(".torchxconfig").write_text("[component:utils.echo]\nmsg = from a file\n")
    runner = get_runner(component_defaults={"utils.echo": {"msg": "from my code"}})
    info = runner.dryrun_component("utils.echo", [], "local_cwd")
    assert info.app is not None and info.app.roles[0].args == ["from my code"]
    info = get_runner().dryrun_component("utils.echo", [], "local_cwd")
    assert info.app is not None and info.app.roles[0].args == ["from a file"]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[local_cwd]\nlod_dir = /x\n", "[local_cwd] lod_dir: got '/x'; "),
        ("[local_cwd]\nlog_dir\n", "line 2: got 'log_dir'; "),
        ("log_dir = /x\n", "line 1: got 'log_dir = /x'; "),
    ],
)
def test_a_bad_file_is_one_line_naming_it_from_the_python_api(text: str, where: str) -> None:
    path = Path(".torchxconfig").resolve()
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        get_runner().run(echo(msg="x"), "local_cwd")
    (shown,) = traceback.format_exception_only(e.value)
    assert shown.startswith(f"torchx.runner.ConfigError: {path} {where}")
    assert shown.count("\n") == 1 and e.value.file == str(path)
    # no second traceback ("During handling of the above exception ...") before it
    assert e.value.__cause__ is None
    assert e.value.__context__ is None or e.value.__suppress_context__


def test_a_runner_given_an_empty_config_reads_no_file() -> None:
    Path(".torchxconfig").write_text("[local_cwd]\nlod_dir = /x\n")
    runner = Runner(DEFAULT_SESSION, scheduler_factories(), config=TorchxConfig())
    info = runner.dryrun(echo(msg="x"), "local_cwd")
    assert info.app is not None and info.app.roles[0].args == ["x"]


def test_migrating_says_the_runner_reads_the_files_and_how_to_read_none() -> None:
    text = (Path(__file__).resolve().parents[3] / "MIGRATING.md").read_text()
    bullet = " ".join(next(b for b in text.split("\n- ") if "Runner` reads" in b).split())
    assert "config=TorchxConfig()" in bullet and "component_defaults=" in bullet
