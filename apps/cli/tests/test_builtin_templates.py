"""``torchx builtins --print NAME`` prints a template to copy: saved as a file, it runs as a
component of its own, with the help and the app of the builtin it was printed from."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from torchx.cli._app import app
from torchx.components import get_component, list_components
from torchx.specs.finder import get_component as find

from .cli_process import torchx

# arguments each builtin is called with, its own and its template's copy alike; those that
# reach the private helpers of their module (sh's line, torchrun's role with several
# processes) take the paths that call them
CALLS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "utils.echo": ((), {}),
    "utils.touch": ((), {"file": "x"}),
    "utils.sh": (("echo", "a  b"), {}),
    "utils.python": (("1",), {"c": "pass", "h": "cpu.small"}),
    "utils.binary": (("x",), {"entrypoint": "echo"}),
    "utils.copy": ((), {"src": "a", "dst": "b"}),
    "utils.booth": ((), {"x1": 1.0, "x2": 2.0}),
    "dist.ddp": (("--lr", "1"), {"script": "train.py", "j": "2x2", "debug": True}),
    "dist.spmd": ((), {"m": "pkg.train", "j": "2"}),
    "function.call": ((), {"url": "/calls/1", "nproc_per_node": 2}),
    "metrics.tensorboard": ((), {"logdir": "/logs"}),
    "serve.torchserve": ((), {"model_path": "m.mar", "management_api": "http://ts:8081"}),
}

cli = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_every_printed_builtin_is_a_component_file_with_the_builtins_help(
    isolated: Path,
) -> None:
    names = list(list_components())
    assert sorted(names) == sorted(CALLS)  # a new builtin gets its call here
    for name in names:
        code, template, err = invoke("builtins", "--print", name)
        assert code == 0, err
        assert "fill_shared_arg_help" not in template, name  # nothing a copy does not use
        # a private module's names may change without notice: none is imported by a copy
        imported = [ln.split()[1] for ln in template.splitlines() if ln.startswith("from ")]
        assert not [m for m in imported if "._" in m], (name, imported)
        # nor a name its module does not promise: each one is in that module's __all__
        for node in ast.parse(template).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torchx"):
                listed = importlib.import_module(node.module or "").__all__
                assert not [a.name for a in node.names if a.name not in listed], (name, node.module)
        path = isolated / f"{name.replace('.', '_')}.py"
        path.write_text(template)
        fn = name.rpartition(".")[2]
        code, copied, err = invoke("run", f"./{path.name}:{fn}", "--help")
        assert code == 0, (name, err)
        code, builtin, _ = invoke("run", name, "--help")
        assert code == 0
        assert copied.replace(f"./{path.name}:{fn}", name) == builtin, name
        # the copy makes the app the builtin makes
        args, kwargs = CALLS[name]
        made = find(f"{path}:{fn}").fn(*args, **kwargs)
        assert made == get_component(name).fn(*args, **kwargs), name


def test_a_printed_builtins_imports_are_in_isort_order(tmp_path: Path) -> None:
    # as the project's own files keep them; ruff is a development tool, which a plain
    # install (as the oldest Python's test run has) lacks
    pytest.importorskip("ruff")
    for name in list_components():
        code, template, err = invoke("builtins", "--print", name)
        assert code == 0, err
        (tmp_path / f"{name.replace('.', '_')}.py").write_text(template)
    ruff = [sys.executable, "-m", "ruff", "check", "--no-cache", "--isolated", "--select", "I"]
    first_party = 'lint.isort.known-first-party=["torchx"]'
    lint = subprocess.run(
        [*ruff, "--config", first_party, str(tmp_path)], capture_output=True, text=True
    )
    assert lint.returncode == 0, lint.stdout


def test_a_printed_template_runs_on_the_local_scheduler(isolated: Path) -> None:
    # utils.sh's template copies the module's private helpers that join its command line
    for name, args, line in (
        ("utils.echo", ["--msg", "from a template"], "echo/0 from a template"),
        ("utils.sh", ["echo", "a  b", "$HOME"], f"sh/0 a  b {Path.home()}"),
    ):
        code, template, _ = invoke("builtins", "--print", name)
        assert code == 0
        fn = name.rpartition(".")[2]
        (isolated / f"{fn}.py").write_text(template)
        code, out, err = invoke("run", "-s", "local_cwd", f"./{fn}.py:{fn}", *args)
        assert code == 0, err
        handle = out.strip()
        assert line in err and f"{handle} SUCCEEDED" in err, err


def test_builtins_run_and_print_with_docstrings_stripped(isolated: Path) -> None:
    # PYTHONOPTIMIZE=2 (python -OO) drops the docstrings the shared help is filled into
    stripped = {"PYTHONOPTIMIZE": "2", "XDG_STATE_HOME": str(isolated / "state")}
    proc = torchx("run", "-s", "local_cwd", "utils.echo", "--msg", "no docs", env=stripped)
    assert proc.returncode == 0, proc.stderr
    assert "echo/0 no docs" in proc.stderr and "SUCCEEDED" in proc.stderr
    proc = torchx("builtins", "--print", "utils.sh", env=stripped)
    assert proc.returncode == 0, proc.stderr
    assert "\ndef sh(" in proc.stdout and "\ndef _shell_line(" in proc.stdout
