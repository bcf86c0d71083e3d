from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from torchx.components import ComponentNotFoundError, get_component, list_components
from torchx.specs import AppDef, Resource

# The ddp component exactly as the basics seed writes it.
SEED_APP_SPEC = """
import torchx.specs as specs

def ddp(jobname: str, nnodes: int, image: str, entrypoint: str, *script_args: str):
   single_gpu = specs.Resources(cpu=4, gpu=1, memMB=1024)
   return specs.AppDef(
           name=jobname,
           roles=[
               specs.Role(
                   name="trainer",
                   entrypoint=entrypoint,
                   image=image,
                   resource=single_gpu,
                   args=script_args,
                   num_replicas=nnodes
               )
           ]
   )
"""


def test_every_builtin_is_listed_with_a_one_line_summary() -> None:
    found = list_components()
    expected = {
        "utils.echo", "utils.touch", "utils.sh", "utils.python", "utils.binary", "utils.copy",
        "dist.ddp", "dist.spmd", "serve.torchserve", "metrics.tensorboard",
    }  # fmt: skip
    assert expected <= set(found)
    for name, schema in found.items():
        assert schema.summary and "\n" not in schema.summary, name
        # every argument is documented, so `torchx run NAME --help` explains it
        assert all(a.help for a in schema.args), name


def test_seed_component_file_runs_as_written(tmp_path: Path) -> None:
    spec = tmp_path / "app_spec.py"
    spec.write_text(SEED_APP_SPEC)
    for name in (str(spec), f"{spec}:ddp"):
        app = get_component(name).call(
            [
                "--jobname",
                "job",
                "--nnodes",
                "2",
                "--image",
                "/tmp",
                "--entrypoint",
                "echo",
                "a",
                "b",
            ]
        )
        assert isinstance(app, AppDef)
        (role,) = app.roles
        assert (app.name, role.num_replicas, role.args) == ("job", 2, ["a", "b"])
        # the seed's function has no return annotation, and passes a tuple of args
        assert role.resource == Resource(cpu=4, gpu=1, memMB=1024)


def test_unknown_names_suggest_the_closest(tmp_path: Path) -> None:
    with pytest.raises(ComponentNotFoundError, match=r"did you mean 'utils\.echo'"):
        get_component("utils.ecko")
    spec = tmp_path / "two.py"
    spec.write_text(
        textwrap.dedent(
            """
            import torchx.specs as specs
            def a() -> specs.AppDef: ...
            def b() -> specs.AppDef: ...
            """
        )
    )
    with pytest.raises(ComponentNotFoundError, match="name one as"):
        get_component(str(spec))
    with pytest.raises(ComponentNotFoundError, match="no such file"):
        get_component(str(tmp_path / "missing.py"))
    # a path without .py is no builtin: the file is named, not the builtins listed
    with pytest.raises(ComponentNotFoundError) as e:
        get_component(f"{tmp_path}/two:a")
    assert str(e.value) == f"component: got '{tmp_path}/two:a'; did you mean '{spec}:a'?"
    # without a function either: the file alone would be refused (two components), so the
    # suggestion names the function too
    with pytest.raises(ComponentNotFoundError) as e:
        get_component(f"{tmp_path}/two")
    assert str(e.value) == (
        f"component: got '{tmp_path}/two'; did you mean '{spec}:FN'? "
        "(its component functions: a, b)"
    )
    one = tmp_path / "one.py"
    one.write_text("import torchx.specs as specs\ndef a() -> specs.AppDef: ...\n")
    with pytest.raises(ComponentNotFoundError) as e:
        get_component(f"{tmp_path}/one")
    assert str(e.value) == f"component: got '{tmp_path}/one'; did you mean '{one}'?"
    with pytest.raises(ComponentNotFoundError) as e:
        get_component(f"{tmp_path}:a")  # a directory
    assert str(e.value).endswith("; a component in a file is named path/to/file.py:FN")
    with pytest.raises(ComponentNotFoundError, match=r"group\.name: did you mean 'utils\.echo'"):
        get_component("utils/echo")


SIDE_EFFECT_SCRIPT = """
import argparse
from pathlib import Path

Path("SIDE_EFFECT").write_text("the script ran")
parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, required=True)
args = parser.parse_args()


def main() -> None:
    print(args.steps)


main()
"""


def test_a_script_given_as_the_component_is_read_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "train.py"
    script.write_text(SIDE_EFFECT_SCRIPT)
    with pytest.raises(ComponentNotFoundError, match=r"no component function.*train\.py:FN"):
        get_component(str(script))
    with pytest.raises(ComponentNotFoundError, match=r"no function 'mian'.*did you mean 'main'"):
        get_component(f"{script}:mian")
    assert not (tmp_path / "SIDE_EFFECT").exists()


def test_a_component_file_that_fails_to_load_names_its_file_and_line(tmp_path: Path) -> None:
    from torchx.specs import SpecsError

    boom = tmp_path / "boom.py"
    boom.write_text(
        "import torchx.specs as specs\n"
        "def app() -> specs.AppDef:\n"
        "    return specs.AppDef('a', [])\n"
        "raise ValueError('boom at import')\n"
    )
    with pytest.raises(SpecsError, match=rf"{boom}:4: got 'ValueError: boom at import'"):
        get_component(str(boom))
    leaves = tmp_path / "leaves.py"
    leaves.write_text("import sys\nimport torchx.specs as specs\n"
                      "def app() -> specs.AppDef: ...\nsys.exit(7)\n")  # fmt: skip
    with pytest.raises(SpecsError, match=r"called sys\.exit\(7\) while being loaded"):
        get_component(f"{leaves}:app")
    broken = tmp_path / "broken.py"
    broken.write_text("def app(:\n")
    with pytest.raises(SpecsError, match=rf"{broken}:1"):
        get_component(str(broken))
