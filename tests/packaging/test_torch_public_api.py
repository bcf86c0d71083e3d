"""The project uses torch's public API only: no private module of torch, and no private
attribute or method of ``nn.Module`` read, written or overridden, in sources, tests,
benchmarks or examples. A torch release may rename any of them without notice."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: nn.Module's private state and hooks (torch keeps them out of its documented API)
MODULE_PRIVATES = frozenset(
    {
        "_apply",
        "_backward_hooks",
        "_backward_pre_hooks",
        "_buffers",
        "_call_impl",
        "_forward_hooks",
        "_forward_pre_hooks",
        "_get_name",
        "_load_from_state_dict",
        "_modules",
        "_named_members",
        "_non_persistent_buffers_set",
        "_parameters",
        "_replicate_for_data_parallel",
        "_save_to_state_dict",
        "_slow_forward",
        "_state_dict_hooks",
        "_version",
    }
)


def _python_files() -> Iterator[Path]:
    for top in ("libs", "benchmarks", "examples", "tests", "tools"):
        for path in sorted((REPO / top).rglob("*.py")):
            if ".venv" not in path.parts and "node_modules" not in path.parts:
                yield path


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _violations(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in MODULE_PRIVATES:
                yield node.lineno, f"attribute .{node.attr}"
            dotted = _dotted(node)
            if dotted and dotted.startswith("torch._") and not dotted.startswith("torch.__"):
                yield node.lineno, f"private torch module {dotted}"
        elif isinstance(node, ast.Constant) and node.value in MODULE_PRIVATES:
            yield node.lineno, f"string {node.value!r} (a key of nn.Module's private state)"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in MODULE_PRIVATES:
                yield node.lineno, f"override of nn.Module.{node.name}"
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("torch._") or ".modules._" in node.module:
                yield node.lineno, f"import from {node.module}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("torch._"):
                    yield node.lineno, f"import {alias.name}"


def test_the_scan_finds_each_kind_of_private_use() -> None:
    source = """
import torch._dynamo
from torch._C import _nn
class M(torch.nn.Module):
    def _apply(self, fn): ...
    def forward(self, x):
        torch._dynamo.reset()
        return self._modules["a"](x) + self.__dict__["_parameters"]["w"]
"""
    found = sorted(what for _, what in _violations(ast.parse(source)))
    assert found == [
        "attribute ._modules",
        "import from torch._C",
        "import torch._dynamo",
        "override of nn.Module._apply",
        "private torch module torch._dynamo",
        "private torch module torch._dynamo.reset",
        "string '_parameters' (a key of nn.Module's private state)",
    ]


def test_no_file_uses_torch_privates() -> None:
    checked = 0
    problems = []
    for path in _python_files():
        if path == Path(__file__).resolve():
            continue  # this file names them to look for them
        checked += 1
        tree = ast.parse(path.read_text(), filename=str(path))
        problems += [f"{path.relative_to(REPO)}:{n}: {w}" for n, w in _violations(tree)]
    assert checked > 100
    if problems:
        pytest.fail("torch's private API is used:\n" + "\n".join(problems))
