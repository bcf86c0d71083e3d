"""The help of the arguments builtins share: written once, the same wherever it means the
same, and filled into each builtin's docstring without changing what the docstring wrote."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys

import pytest

from torchx.components import get_component, list_components
from torchx.components._common import fill_shared_arg_help
from torchx.specs import AppDef, parse_docstring
from torchx.specs.finder import get_builtin_source

SHARED = ("image", "num_replicas", "cpu", "gpu", "memMB", "h", "env", "max_retries", "mounts")
PER_NODE = {"dist.ddp", "dist.spmd", "function.call"}


def expected_help(per: str, sized_by_default: bool = False) -> dict[str, str]:
    """The wording each shared argument has, written here apart from the code that fills it."""
    unsized = "" if sized_by_default else " (-1: the scheduler's default)"
    return {
        "image": "the image to run in",
        "num_replicas": "how many copies to run",
        "cpu": f"cores per {per}{unsized}",
        "gpu": f"GPUs per {per}{unsized}",
        "memMB": f"memory per {per} in MiB{unsized}",
        "h": f"a named resource per {per} (e.g. cpu.small, gpu.small); overrides cpu, gpu and"
        " memMB",
        "env": "environment variables, k1=v1,k2=v2",
        "max_retries": f"how many times a failed {per} is restarted",
        "mounts": "docker-style mounts, e.g. type=bind,src=/data,dst=/data,readonly",
    }


# where a builtin's argument means something else than the shared wording says
OWN_WORDING = {
    ("function.call", "num_replicas"): "how many nodes run the function",
    ("utils.booth", "image"): "the image to run in (it needs torchx-tracking)",
    ("dist.spmd", "h"): "the named resource of each node; with -j N or MIN:N its GPU count (at"
    " least 1) is the processes per node",
}


def written_docstring(fn: object) -> str:
    """The docstring as the file writes it, before its module filled anything in."""
    source = inspect.getsource(inspect.getmodule(fn))  # type: ignore[arg-type]
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == getattr(fn, "__name__", None):
            return ast.get_docstring(node) or ""
    raise AssertionError(f"no definition of {fn!r} in its module")


def test_every_builtin_describes_each_shared_argument_it_takes_in_the_one_wording() -> None:
    checked = 0
    for name in list_components():
        schema = get_component(name)
        per = "node" if name in PER_NODE else "replica"
        for arg in schema.args:
            if arg.name not in SHARED:
                continue
            wording = expected_help(per, sized_by_default=arg.default != -1)
            assert arg.help == OWN_WORDING.get((name, arg.name), wording[arg.name]), (
                name,
                arg.name,
            )
            checked += 1
    assert checked >= 40  # the sized builtins take most of them: nothing was skipped


@pytest.mark.parametrize(
    ("arg", "components"),
    [
        # these had drifted apart: "(e.g. cpu.small)" in some, ",readonly" in one
        ("h", ["utils.sh", "utils.python", "utils.binary"]),
        ("h", ["dist.ddp", "function.call"]),
        ("mounts", ["utils.sh", "utils.python", "dist.ddp", "dist.spmd", "function.call"]),
        ("env", ["utils.sh", "utils.python", "utils.binary", "dist.ddp", "function.call"]),
        ("max_retries", ["utils.sh", "utils.python"]),
        ("max_retries", ["dist.ddp", "dist.spmd"]),
    ],
)
def test_components_that_share_an_argument_describe_it_alike(
    arg: str, components: list[str]
) -> None:
    helps = {name: get_component(name).option(arg) for name in components}
    assert len({a.help for a in helps.values() if a is not None}) == 1, helps
    assert None not in helps.values()


def test_filling_keeps_every_line_a_docstring_wrote_and_adds_only_shared_ones() -> None:
    for name in list_components():
        fn = get_component(name).fn
        written, filled = parse_docstring(written_docstring(fn)), parse_docstring(fn.__doc__)
        assert (filled.summary, filled.description) == (written.summary, written.description)
        assert {k: filled.args[k] for k in written.args} == written.args, name
        assert set(filled.args) - set(written.args) <= set(SHARED), name
        # each argument is described once, where it stands in the signature
        assert list(filled.args) == [
            p for p in inspect.signature(fn).parameters if p in filled.args
        ], name


def test_help_and_getdoc_show_the_filled_lines_with_the_written_ones() -> None:
    python = get_component("utils.python")
    doc = inspect.getdoc(python.fn) or ""
    assert "\n    h: a named resource per replica (e.g. cpu.small, gpu.small); overrides" in doc
    m_line = "\n    m: the module to run, as with ``python -m`` (also set as HYDRA_MAIN_MODULE)\n"
    assert m_line in doc
    # ddp's own entries that run over two lines keep their second line
    ddp = get_component("dist.ddp").help()
    assert "the experiment is passed to the tracking library" in ddp
    assert "  --cpu (float, default: 2)\n      cores per node\n" in ddp
    assert "  --gpu (int, default: -1)\n      GPUs per replica (-1: the scheduler's default)" in (
        get_component("utils.sh").help()
    )


def test_printed_sources_show_the_filled_docstring_and_the_code_as_written() -> None:
    for name in list_components():
        schema = get_component(name)
        (printed,) = (
            node
            for node in ast.parse(get_builtin_source(name)).body
            if isinstance(node, ast.FunctionDef) and node.name == schema.fn.__name__
        )
        (written,) = ast.parse(inspect.getsource(schema.fn)).body
        assert isinstance(printed, ast.FunctionDef) and isinstance(written, ast.FunctionDef)
        assert ast.get_docstring(printed) == inspect.getdoc(schema.fn), name
        assert [ast.dump(n) for n in printed.body[1:]] == [ast.dump(n) for n in written.body[1:]]
        assert ast.dump(printed.args) == ast.dump(written.args)
    assert "        h: a named resource per replica (e.g. cpu.small, gpu.small);" in (
        get_builtin_source("utils.sh")
    )
    with_imports = get_builtin_source("dist.ddp")
    assert "        cpu: cores per node\n" in with_imports
    assert "from torchx.specs import" in with_imports


def test_a_written_line_wins_and_mistakes_are_refused_when_the_module_runs() -> None:
    def sized(image: str = "x", cpu: float = -1, env: dict[str, str] | None = None) -> AppDef:
        """Runs.

        Args:
            image: an image of my own
                over two lines
        """
        return AppDef(name="x")

    fill_shared_arg_help(sized, per="task")
    fill_shared_arg_help(sized, per="task")  # twice is once: what is there stays
    assert parse_docstring(sized.__doc__).args == {
        "image": "an image of my own over two lines",
        "cpu": "cores per task (-1: the scheduler's default)",
        "env": "environment variables, k1=v1,k2=v2",
    }

    def typo(cpu: float = -1) -> AppDef:
        """Runs.

        Args:
            cpus: cores
        """
        return AppDef(name="x")

    with pytest.raises(ValueError, match=r"typo: its docstring describes no parameter \['cpus'\]"):
        fill_shared_arg_help(typo)

    def no_args(cpu: float = -1) -> AppDef:
        """Runs."""
        return AppDef(name="x")

    with pytest.raises(ValueError, match="no_args: its docstring needs an Args: section"):
        fill_shared_arg_help(no_args)


def test_filling_keeps_a_line_separator_other_than_newline_as_written() -> None:
    def spaced(cpu: float = -1) -> AppDef:
        """Runs\u2028on one line, a form feed\fincluded.

        Args:
            cpu: cores
        """
        return AppDef(name="x")

    fill_shared_arg_help(spaced)
    assert spaced.__doc__ is not None
    assert spaced.__doc__.startswith("Runs\u2028on one line, a form feed\fincluded.\n")


def test_the_builtins_import_and_run_with_docstrings_stripped() -> None:
    # python -OO drops every docstring: there is no help to complete, and no error either
    code = (
        "from torchx.components import list_components, get_component\n"
        "assert get_component('utils.echo').fn.__doc__ is None\n"
        "app = get_component('utils.sh').fn('echo', 'hi')\n"
        "assert app.roles[0].args == ['-c', 'echo hi'], app.roles[0].args\n"
        "print(len(list_components()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-OO", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(list_components())
