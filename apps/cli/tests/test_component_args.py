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
    assert scan(get_component("utils.echo"), ["-h"])[1]  # echo has no argument h
    assert not scan(schema, ["--c", "print(1)", "--", "--help"])[1]
    assert not scan(schema, ["--c", "print(1)", "script-arg", "--help"])[1]


def test_shell_completion_offers_component_names() -> None:
    torchx = str(Path(sys.executable).with_name("torchx"))
    env = {**os.environ, "_TORCHX_COMPLETE": "complete_bash"}
    env.update(COMP_WORDS="torchx run utils.ec", COMP_CWORD="2")
    proc = subprocess.run([torchx], env=env, capture_output=True, text=True, check=False)
    assert proc.stdout.split() == ["utils.echo"]


def test_dash_h_is_the_named_resource_of_a_component_that_takes_h() -> None:
    # as with pytorch/torchx: `torchx run dist.ddp -h gpu.small ...` launches on gpu.small
    schema = get_component("dist.ddp")
    argv, help_asked = scan(schema, ["-h", "gpu.small", "-j", "2", "--script", "t.py"])
    assert not help_asked
    assert argv == ["--h", "gpu.small", "--j", "2", "--script", "t.py"]
    app = schema.call(argv)
    assert app.roles[0].resource.gpu == 1 and app.roles[0].resource.memMB == 32 * 1024
    assert scan(schema, ["--help"])[1]


def _complete(words: str) -> list[str]:
    torchx = str(Path(sys.executable).with_name("torchx"))
    env = {**os.environ, "_TORCHX_COMPLETE": "complete_bash"}
    env.update(
        COMP_WORDS=words, COMP_CWORD=str(len(words.split()) - (0 if words.endswith(" ") else 1))
    )
    proc = subprocess.run([torchx], env=env, capture_output=True, text=True, check=False)
    return proc.stdout.split()


def test_shell_completion_offers_scheduler_names_and_the_components_flags() -> None:
    assert _complete("torchx run -s local_") == ["local_cwd", "local_dir", "local_docker"]
    assert _complete("torchx list -s sl") == ["slurm"]
    assert _complete("torchx run utils.echo --") == ["--msg", "--image", "--num_replicas", "--help"]
    assert _complete("torchx run utils.echo --m") == ["--msg"]
