from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from torchx.cli._component_args import scan
from torchx.components import get_component


def test_one_dash_works_for_one_letter_arguments_only_before_the_script_args() -> None:
    schema = get_component("dist.ddp")
    argv, help_asked = scan(
        schema, ["-j", "2", "-m", "pkg.train", "--debug", "--", "-m", "x", "-h"]
    )
    assert not help_asked
    assert argv == ["--j", "2", "--m", "pkg.train", "--debug", "--", "-m", "x", "-h"]
    assert schema.parse(argv)[0] == ["-m", "x", "-h"]
    argv, _ = scan(schema, ["--script", "t.py", "epochs", "-j", "3"])
    assert argv == ["--script", "t.py", "epochs", "-j", "3"]


def test_help_is_the_components_only_among_its_own_options() -> None:
    schema = get_component("utils.python")
    assert scan(schema, ["--c", "print(1)", "--help"])[1]
    assert scan(schema, ["-h"])[1]
    assert not scan(schema, ["--c", "print(1)", "--", "--help"])[1]
    assert not scan(schema, ["--c", "print(1)", "script-arg", "--help"])[1]


def test_shell_completion_offers_component_names() -> None:
    torchx = str(Path(sys.executable).with_name("torchx"))
    env = {**os.environ, "_TORCHX_COMPLETE": "complete_bash"}
    env.update(COMP_WORDS="torchx run utils.ec", COMP_CWORD="2")
    proc = subprocess.run([torchx], env=env, capture_output=True, text=True, check=False)
    assert proc.stdout.split() == ["utils.echo"]
