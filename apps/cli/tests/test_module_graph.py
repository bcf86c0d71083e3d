"""The CLI's own modules import each other in one direction: no module imports one that
(directly or through others) imports it back, lazily or not."""

from __future__ import annotations

import ast
from pathlib import Path

import torchx.cli

CLI_DIR = Path(next(iter(torchx.cli.__path__)))


def _imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in CLI_DIR.glob("*.py"):
        name = f"torchx.cli.{path.stem}"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("torchx.cli."):
                    found.add(node.module)
                elif node.module == "torchx.cli":
                    found.update(f"torchx.cli.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("torchx.cli."))
        graph[name] = found - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        if found:
            return found
    return None


def test_the_cli_modules_import_each_other_without_a_cycle() -> None:
    graph = _imports()
    assert "torchx.cli._handled" in graph["torchx.cli._tracker"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
