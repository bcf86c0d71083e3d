"""A bad value in a ``.torchxconfig`` ``[component:NAME]`` section is named by the file,
the section and the key, as every other config mistake is: the user typed no flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli_process import torchx


@pytest.mark.parametrize(
    ("section", "component_args", "expected"),
    [
        # refused when the value is read (an int argument)
        ("[component:utils.echo]\nnum_replicas = two\n", ["utils.echo"], "expected int"),
        # refused by the component itself (dist.ddp reads -j)
        ("[component:dist.ddp]\nj = 1y2\n", ["dist.ddp", "--script", "t.py"], "expected M, NxM"),
    ],
)
def test_a_bad_component_default_names_the_file_and_section(
    isolated: Path, section: str, component_args: list[str], expected: str
) -> None:
    (isolated / ".torchxconfig").write_text(section)
    (isolated / "t.py").write_text("print('ran')\n")
    name = component_args[0]
    key = section.splitlines()[1].split(" = ")[0]
    proc = torchx("run", "--dryrun", *component_args)
    assert proc.returncode == 2, proc.stdout
    (line,) = proc.stderr.splitlines()
    where = f"{isolated / '.torchxconfig'} [component:{name}] {key}:"
    assert line.startswith(f"torchx: error: {where} got "), line
    assert expected in line


def test_the_same_value_typed_on_the_command_line_names_the_flag(isolated: Path) -> None:
    (isolated / ".torchxconfig").write_text("[component:dist.ddp]\nj = 2\n")
    (isolated / "t.py").write_text("print('ran')\n")
    proc = torchx("run", "--dryrun", "dist.ddp", "-j", "1y2", "--script", "t.py")
    assert proc.returncode == 2
    assert proc.stderr.startswith("torchx: error: dist.ddp -j: got '1y2'"), proc.stderr
