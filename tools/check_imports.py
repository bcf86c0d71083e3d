"""Enforce how torchx distributions may import each other.

Two rules, both read from every ``import`` statement (lazy imports inside functions count
too) with ``ast``:

1. **Direction.** A package may import another distribution's packages only if its own
   distribution depends on that one in its ``pyproject.toml`` (``dependencies`` or an
   extra). The table is derived from those files, so the declared dependencies and the
   imports cannot drift apart; ``specs <- components <- runner <- cli``, ``specs <-
   schedulers <- runner`` and ``specs <- pipelines`` follow from them, and the runtime
   libraries (tracking, layers, devices) depend on no sibling. A single module that uses a
   sibling only when it is installed (and says what to install when it is not) is named in
   its distribution's pyproject, beside the dependencies::

       [tool.check-imports.optional-imports]
       "torchx.components.some_module" = ["torchx-runner"]
2. **Public names only.** Across distributions, an import names no module or attribute
   that starts with ``_``: another distribution's private code can change in any release
   (see VERSIONING.md), so depending on it would break installs that mix versions. Tests
   of a member follow this rule too; inside one distribution anything goes.

Run it as ``python tools/check_imports.py``; it exits non-zero and lists each violation.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import tomllib

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Distribution:
    """One workspace member: what it ships and which siblings it depends on."""

    name: str
    folder: Path
    packages: tuple[str, ...]  # import paths of its wheel, e.g. ("torchx.devices", "torchx.nn")
    requires: frozenset[str]  # sibling distributions named in dependencies or extras
    # module -> siblings it may import without a declared dependency (when installed)
    optional_imports: tuple[tuple[str, frozenset[str]], ...] = ()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if match is None:
        raise ValueError(f"unreadable requirement {requirement!r}")
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def load_distributions(repo_root: Path = REPO_ROOT) -> dict[str, Distribution]:
    """Every member of the workspace, keyed by distribution name."""
    read: list[tuple[str, Path, tuple[str, ...], set[str], dict[str, list[str]]]] = []
    for pyproject in sorted(repo_root.glob("*/*/pyproject.toml")):
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        project = data["project"]
        wheel = data["tool"]["hatch"]["build"]["targets"]["wheel"]
        source = wheel.get("sources", ["src"])[0]
        packages = tuple(
            ".".join(Path(path).relative_to(source).with_suffix("").parts)
            for path in wheel["only-include"]
        )
        optional = data["tool"].get("check-imports", {}).get("optional-imports", {})
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements.extend(extra)
        names = {_requirement_name(r) for r in requirements}
        read.append((project["name"], pyproject.parent, packages, names, optional))
    members = {name for name, *_ in read}
    return {
        name: Distribution(
            name,
            folder,
            packages,
            frozenset((names & members) - {name}),
            tuple(
                (module, frozenset(_requirement_name(d) for d in dists))
                for module, dists in sorted(optional.items())
            ),
        )
        for name, folder, packages, names, optional in read
    }


def allowed_imports(dists: dict[str, Distribution]) -> dict[str, frozenset[str]]:
    """For each package, the torchx packages it may import besides itself."""
    table: dict[str, frozenset[str]] = {}
    for dist in dists.values():
        reachable = set(dist.packages)
        for sibling in dist.requires:
            reachable.update(dists[sibling].packages)
        for package in dist.packages:
            table[package] = frozenset(reachable - {package})
        for module, siblings in dist.optional_imports:
            extra = {p for s in siblings for p in dists[s].packages}
            table[module] = frozenset((reachable | extra) - {module})
    return table


def dependency_cycles(dists: dict[str, Distribution]) -> list[list[str]]:
    """Cycles among the siblings' declared dependencies (there must be none)."""
    cycles: list[list[str]] = []
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            cycles.append([*path[path.index(name) :], name])
            return
        if name in done:
            return
        for sibling in sorted(dists[name].requires):
            visit(sibling, [*path, name])
        done.add(name)

    for name in sorted(dists):
        visit(name, [])
    return cycles


DISTRIBUTIONS = load_distributions()
ALLOWED: dict[str, frozenset[str]] = allowed_imports(DISTRIBUTIONS)
DISTRIBUTION_OF: dict[str, str] = {
    module: dist.name
    for dist in DISTRIBUTIONS.values()
    for module in (*dist.packages, *(m for m, _ in dist.optional_imports))
}


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    importer: str
    imported: str
    private_name: str | None = None  # set when the rule broken is "public names only"

    def __str__(self) -> str:
        if self.private_name is not None:
            return (
                f"{self.path}:{self.line}: {self.importer} imports {self.private_name}, a "
                f"private name of {DISTRIBUTION_OF.get(self.imported, self.imported)}; import "
                f"a public name (listed in {self.imported}.__all__) or make this one public"
            )
        allowed = ", ".join(sorted(ALLOWED.get(self.importer, ()))) or "nothing from torchx"
        return (
            f"{self.path}:{self.line}: {self.importer} must not import {self.imported} "
            f"(allowed: {allowed}); declare the dependency in "
            f"{DISTRIBUTION_OF.get(self.importer, self.importer)}'s pyproject.toml if it "
            "belongs there"
        )


PACKAGES = frozenset(DISTRIBUTION_OF) - {
    m for dist in DISTRIBUTIONS.values() for m, _ in dist.optional_imports
}


def owning_package(module: str, among: Iterable[str] | None = None) -> str | None:
    """The entry of ALLOWED (or of ``among``) that ``module`` belongs to: longest match."""
    best = None
    for pkg in ALLOWED if among is None else among:
        if (module == pkg or module.startswith(pkg + ".")) and (
            best is None or len(pkg) > len(best)
        ):
            best = pkg
    return best


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


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


def _private_part(imported: str) -> str | None:
    """``imported`` itself if any part of it is private (``_name``, not ``__dunder__``)."""
    return imported if any(_is_private(p) for p in imported.split(".")) else None


def _violations(
    path: Path, tree: ast.AST, module: str, is_package: bool, importer_dist: str | None
) -> Iterator[tuple[int, str, str | None]]:
    """(line, imported package, private dotted name or None) for each broken rule."""
    importer = owning_package(module)
    seen: set[tuple[int, str, str | None]] = set()
    own_package = owning_package(module, PACKAGES)
    for line, imported in _imported_modules(tree, module, is_package):
        target = owning_package(imported, PACKAGES)
        if target is None:
            continue
        same_dist = importer_dist is not None and DISTRIBUTION_OF.get(target) == importer_dist
        if importer is not None and target != own_package and target not in ALLOWED[importer]:
            found: tuple[int, str, str | None] = (line, target, None)
        elif not same_dist and (private := _private_part(imported)):
            found = (line, target, private)
        else:
            continue
        if found not in seen:
            seen.add(found)
            yield found


def check_tree(src_roots: Iterable[Path]) -> list[Violation]:
    """Both rules over ``src/`` trees, whose file paths are the module names."""
    violations: list[Violation] = []
    for src_root in src_roots:
        for path in sorted(src_root.rglob("*.py")):
            module = _module_name(src_root, path)
            importer = owning_package(module)
            if importer is None:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            dist = DISTRIBUTION_OF[importer]
            for line, target, private in _violations(
                path, tree, module, path.name == "__init__.py", dist
            ):
                violations.append(Violation(path, line, importer, target, private))
    return violations


def check_member_tests(dists: dict[str, Distribution] | None = None) -> list[Violation]:
    """Public names only, over each member's ``tests/`` (which may use its own privates)."""
    violations: list[Violation] = []
    for dist in (dists or DISTRIBUTIONS).values():
        for path in sorted((dist.folder / "tests").rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for line, target, private in _violations(path, tree, "", False, dist.name):
                if private is not None:
                    violations.append(Violation(path, line, f"{dist.name} tests", target, private))
    return violations


def member_src_roots(repo_root: Path = REPO_ROOT) -> list[Path]:
    return sorted(p for p in repo_root.glob("*/*/src") if p.is_dir())


def main() -> int:
    violations = check_tree(member_src_roots()) + check_member_tests()
    for v in violations:
        print(v)
    cycles = dependency_cycles(DISTRIBUTIONS)
    for cycle in cycles:
        print("dependency cycle between distributions: " + " -> ".join(cycle))
    if violations or cycles:
        print(f"{len(violations)} forbidden import(s), {len(cycles)} cycle(s)")
        return 1
    print("dependency direction and public imports: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
