"""Enforce the dependency direction between torchx packages.

Every ``import`` statement in every member's ``src/`` tree is read with ``ast`` (lazy
imports inside functions count too) and checked against ``ALLOWED``. Run it as
``python tools/check_imports.py``; it exits non-zero and lists each violation.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Which torchx packages each package may import (itself is always allowed).
# This mirrors the table in DESIGN.md: specs <- components <- runner <- cli,
# specs <- schedulers <- runner, specs <- pipelines; runtime libraries are leaves.
ALLOWED: dict[str, frozenset[str]] = {
    "torchx.specs": frozenset(),
    "torchx.components": frozenset({"torchx.specs"}),
    # torchx.workspace ships in the torchx-schedulers distribution, beside torchx.schedulers.
    "torchx.schedulers": frozenset({"torchx.specs", "torchx.workspace"}),
    "torchx.workspace": frozenset({"torchx.specs", "torchx.schedulers"}),
    "torchx.runner": frozenset(
        {"torchx.specs", "torchx.components", "torchx.schedulers", "torchx.workspace"}
    ),
    "torchx.pipelines": frozenset({"torchx.specs"}),
    "torchx.runtime.tracking": frozenset(),
    "torchx.layers": frozenset(),
    "torchx.devices": frozenset({"torchx.nn"}),
    "torchx.nn": frozenset({"torchx.devices"}),
    "torchx.cli": frozenset(
        {
            "torchx.specs",
            "torchx.components",
            "torchx.schedulers",
            "torchx.workspace",
            "torchx.runner",
        }
    ),
}

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    importer: str
    imported: str

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line}: {self.importer} must not import {self.imported} "
            f"(allowed: {', '.join(sorted(ALLOWED[self.importer])) or 'nothing from torchx'})"
        )


def owning_package(module: str) -> str | None:
    """The entry of ALLOWED that ``module`` belongs to (longest match), if any."""
    best = None
    for pkg in ALLOWED:
        if (module == pkg or module.startswith(pkg + ".")) and (
            best is None or len(pkg) > len(best)
        ):
            best = pkg
    return best


def _module_name(src_root: Path, path: Path) -> str:
    parts = list(path.relative_to(src_root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported_modules(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            # `from torchx import runner` names a package through the imported name.
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}"


def check_tree(src_roots: list[Path]) -> list[Violation]:
    violations: list[Violation] = []
    for src_root in src_roots:
        for path in sorted(src_root.rglob("*.py")):
            module = _module_name(src_root, path)
            importer = owning_package(module)
            if importer is None:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            seen: set[tuple[int, str]] = set()
            for line, imported in _imported_modules(tree, module, path.name == "__init__.py"):
                target = owning_package(imported)
                if target is None or target == importer or target in ALLOWED[importer]:
                    continue
                if (line, target) not in seen:
                    seen.add((line, target))
                    violations.append(Violation(path, line, importer, target))
    return violations


def member_src_roots(repo_root: Path = REPO_ROOT) -> list[Path]:
    return sorted(p for p in repo_root.glob("*/*/src") if p.is_dir())


def main() -> int:
    violations = check_tree(member_src_roots())
    for v in violations:
        print(v)
    if violations:
        print(f"{len(violations)} forbidden import(s); see the dependency table in DESIGN.md")
        return 1
    print("dependency direction: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
