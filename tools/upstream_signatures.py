"""Record the call signatures of pytorch/torchx 0.7.0's public callables as JSON.

The surface list (``tests/integration/upstream_surface_0_7_0.json``) says which public names
each 0.7 module has; this script reads the 0.7 *source* of those modules with ``ast`` (nothing
is imported or executed) and writes, for every public function, class and public method, the
parameters a caller can pass: name, kind, and whether it has a default (with its source
text and, where that text says what the value is, the value: see ``comparable``). The test
``tests/integration/test_upstream_signatures.py`` compares them with this project's
callables through ``inspect.signature``.

What is recorded, per callable ``module:qualname``:

- module-level functions;
- a class's constructor: its own ``__init__`` (or ``__new__``), the nearest one of a torchx
  base class, or, for a ``@dataclass`` or ``NamedTuple``, the ``__init__`` their fields
  generate (a base dataclass's fields first);
- public methods of public classes (``Scheduler.submit``, ``Runner.run``,
  ``TrackerBase.add_artifact``, ...) and the protected hooks that custom schedulers and
  workspaces override (``OVERRIDE_HOOKS``). Properties are attributes, not calls, and are
  left out; ``self``/``cls`` are dropped.

A name that a module re-exports from another 0.7 module is recorded as an alias of the
defining entry, so ``torchx.specs:AppDef`` is checked with ``torchx.specs.api:AppDef``'s
parameters against whatever ``torchx.specs.AppDef`` is here.

Re-run it against an unpacked 0.7 source tree (a checkout of the v0.7.0 tag, or the sdist)::

    python tools/upstream_signatures.py /path/to/torchx-0.7.0 \\
        > tests/integration/upstream_signatures_0_7_0.json

It exits non-zero, naming the module, when the surface list names a module the source
tree lacks.
"""

from __future__ import annotations

import argparse
import ast
import json
import operator
import sys
from pathlib import Path
from typing import Any

SURFACE = Path(__file__).parent.parent / "tests/integration/upstream_surface_0_7_0.json"

# Protected methods that 0.7's base classes call on a user's subclass: their parameters are
# part of the contract a custom scheduler or workspace was written against.
OVERRIDE_HOOKS = {
    "_submit_dryrun",
    "_cancel_existing",
    "_validate",
    "_pre_build_validate",
    "_exists",
}

Entry = dict[str, Any]
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _module_file(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _default_text(node: ast.expr) -> str:
    return ast.unparse(node)


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef, drop_first: bool) -> list[Entry]:
    a = fn.args
    out: list[Entry] = []
    positional = [(p, "POSITIONAL_ONLY") for p in a.posonlyargs] + [
        (p, "POSITIONAL_OR_KEYWORD") for p in a.args
    ]
    # Defaults belong to the last len(defaults) positional parameters.
    first_default = len(positional) - len(a.defaults)
    for i, (p, kind) in enumerate(positional):
        entry: Entry = {"name": p.arg, "kind": kind, "default": i >= first_default}
        if i >= first_default:
            entry["value"] = _default_text(a.defaults[i - first_default])
        out.append(entry)
    if drop_first and out:
        out = out[1:]
    if a.vararg is not None:
        out.append({"name": a.vararg.arg, "kind": "VAR_POSITIONAL", "default": False})
    for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        entry = {"name": p.arg, "kind": "KEYWORD_ONLY", "default": d is not None}
        if d is not None:
            entry["value"] = _default_text(d)
        out.append(entry)
    if a.kwarg is not None:
        out.append({"name": a.kwarg.arg, "kind": "VAR_KEYWORD", "default": False})
    return out


def _decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    names = set()
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def _dataclass_kw_only(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and "dataclass" in _decorator_names(node):
            for kw in d.keywords:
                if kw.arg == "kw_only" and isinstance(kw.value, ast.Constant):
                    return bool(kw.value.value)
    return False


def _field_call(value: ast.expr | None) -> ast.Call | None:
    if isinstance(value, ast.Call):
        f = value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name == "field":
            return value
    return None


def _fields(node: ast.ClassDef, kw_only: bool) -> list[Entry]:
    """The parameters the fields of a dataclass or NamedTuple body generate."""
    out: list[Entry] = []
    for stmt in node.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        if "ClassVar" in ast.unparse(stmt.annotation):
            continue
        call = _field_call(stmt.value)
        has_default = stmt.value is not None
        value = ast.unparse(stmt.value) if stmt.value is not None else None
        if call is not None:
            kws = {kw.arg: kw.value for kw in call.keywords}
            init = kws.get("init")
            if isinstance(init, ast.Constant) and init.value is False:
                continue
            has_default = "default" in kws or "default_factory" in kws
            value = (
                ast.unparse(kws.get("default") or kws["default_factory"])
                + ("()" if "default_factory" in kws else "")
                if has_default
                else None
            )
        entry: Entry = {
            "name": stmt.target.id,
            "kind": "KEYWORD_ONLY" if kw_only else "POSITIONAL_OR_KEYWORD",
            "default": has_default,
        }
        if has_default:
            entry["value"] = value
        out.append(entry)
    return out


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """A module's statements, with those under ``if``/``try`` (``if _has_ray:``) flattened."""
    out: list[ast.stmt] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, ast.If):
            out += _top_level(stmt.body) + _top_level(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            out += _top_level(stmt.body) + _top_level(stmt.orelse) + _top_level(stmt.finalbody)
            for handler in stmt.handlers:
                out += _top_level(handler.body)
    return out


class SourceIndex:
    """The 0.7 modules' top-level definitions and imports, read on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._trees: dict[str, ast.Module | None] = {}

    def tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            path = _module_file(self.root, module)
            self._trees[module] = ast.parse(path.read_text()) if path else None
        return self._trees[module]

    def defined(self, module: str, name: str) -> Definition | None:
        tree = self.tree(module)
        found = None
        for stmt in _top_level(tree.body if tree else []):
            if isinstance(stmt, Definition) and stmt.name == name:
                found = stmt  # the last definition wins, as at run time
        return found

    def imported_from(self, module: str, name: str) -> tuple[str, str] | None:
        """Where ``module`` imports ``name`` from, for a torchx module."""
        tree = self.tree(module)
        for stmt in ast.walk(tree) if tree else []:
            if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
                for alias in stmt.names:
                    if (alias.asname or alias.name) == name and stmt.module.startswith("torchx"):
                        return stmt.module, alias.name
        return None

    def assigned(self, module: str, name: str, depth: int = 0) -> ast.expr | None:
        """The value a module-level ``name = ...`` of ``module`` (or its source) binds."""
        tree = self.tree(module)
        found = None
        for stmt in _top_level(tree.body if tree else []):
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if stmt.target.id == name and stmt.value is not None:
                    found = stmt.value
            elif isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in stmt.targets
            ):
                found = stmt.value
        if found is not None:
            return found
        src = self.imported_from(module, name)
        if src is None or depth > 8:
            return None
        return self.assigned(src[0], src[1], depth + 1)

    def resolve(self, module: str, name: str, depth: int = 0) -> tuple[str, Definition] | None:
        node = self.defined(module, name)
        if node is not None:
            return module, node
        src = self.imported_from(module, name)
        if src is None or depth > 8:
            return None
        return self.resolve(src[0], src[1], depth + 1)


# What a default's source text can be compared as (see ``comparable``).
ARITHMETIC = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
EMPTY_CONTAINERS: dict[str, object] = {"list": [], "dict": {}, "set": set(), "tuple": ()}


def _literal(node: ast.expr) -> tuple[bool, Any]:
    """(True, value) for a literal, or arithmetic on number literals (``60 * 60``)."""
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
        (ok_l, left), (ok_r, right) = _literal(node.left), _literal(node.right)
        numbers = (int, float)
        if ok_l and ok_r and isinstance(left, numbers) and isinstance(right, numbers):
            return True, ARITHMETIC[type(node.op)](left, right)
    return False, None


def comparable(index: SourceIndex, module: str, text: str) -> Entry:
    """How 0.7's default ``text`` (in ``module``) can be compared, as recorded fields.

    ``{"literal": repr}``: a literal, number arithmetic, an empty container call (what
    ``default_factory=list`` makes), or a name 0.7 binds at module level to one of those
    (``NONE``, ``TORCHX_IGNORE``); ``{"member": "Class.NAME"}``: a member of an ``Enum`` class
    0.7 defines; ``{}``: anything else (a call, ``sys.argv[1:]``, a class), not compared.
    """
    node = ast.parse(text, mode="eval").body
    ok, value = _literal(node)
    if ok:
        return {"literal": repr(value)}
    empty_call = isinstance(node, ast.Call) and not node.args and not node.keywords
    if empty_call and isinstance(node.func, ast.Name) and node.func.id in EMPTY_CONTAINERS:
        return {"literal": repr(EMPTY_CONTAINERS[node.func.id])}
    if isinstance(node, ast.Name):
        assigned = index.assigned(module, node.id)
        if assigned is not None:
            ok, value = _literal(assigned)
            if ok:
                return {"literal": repr(value)}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        found = index.resolve(module, node.value.id)
        if found and isinstance(found[1], ast.ClassDef):
            bases = {ast.unparse(b) for b in found[1].bases}
            members = {
                t.id
                for s in found[1].body
                if isinstance(s, ast.Assign)
                for t in s.targets
                if isinstance(t, ast.Name)
            }
            if bases & {"Enum", "enum.Enum"} and node.attr in members:
                return {"member": f"{found[1].name}.{node.attr}"}
    return {}


def _compared(index: SourceIndex, module: str, params: list[Entry]) -> list[Entry]:
    """``params`` with how each default can be compared added (``comparable``)."""
    for entry in params:
        if entry["default"]:
            entry.update(comparable(index, module, entry["value"]))
    return params


def _constructor(
    index: SourceIndex, module: str, cls: ast.ClassDef, depth: int = 0
) -> Entry | None:
    """The parameters ``cls(...)`` takes, or None when they come from outside torchx."""
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in ("__init__", "__new__"):
            return {
                "params": _compared(index, module, _params(stmt, drop_first=True)),
                "source": f"{module}:{cls.name}.{stmt.name}",
            }
    decorators = _decorator_names(cls)
    bases = [ast.unparse(b) for b in cls.bases]
    if "dataclass" in decorators or "NamedTuple" in bases:
        inherited: list[Entry] = []
        for base in cls.bases:
            found = _base_class(index, module, base)
            if found and "dataclass" in _decorator_names(found[1]):
                ctor = _constructor(index, found[0], found[1], depth + 1)
                inherited = ctor["params"] if ctor else []
        own = _compared(index, module, _fields(cls, _dataclass_kw_only(cls)))
        names = {p["name"] for p in own}
        params = [p for p in inherited if p["name"] not in names] + own
        return {"params": params, "source": f"{module}:{cls.name} (fields)"}
    for base in cls.bases:
        found = _base_class(index, module, base)
        if found and depth < 8:
            return _constructor(index, found[0], found[1], depth + 1)
    return None


def _base_class(index: SourceIndex, module: str, base: ast.expr) -> tuple[str, ast.ClassDef] | None:
    if isinstance(base, ast.Subscript):  # Scheduler[T]
        base = base.value
    if not isinstance(base, ast.Name):
        return None
    found = index.resolve(module, base.id)
    if found and isinstance(found[1], ast.ClassDef):
        return found[0], found[1]
    return None


def _methods(
    index: SourceIndex, module: str, cls: ast.ClassDef, seen: set[str]
) -> dict[str, Entry]:
    """Public methods (and override hooks) of ``cls`` and its torchx bases, nearest first."""
    out: dict[str, Entry] = {}
    for stmt in cls.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        name = stmt.name
        if name in seen or (name.startswith("_") and name not in OVERRIDE_HOOKS):
            continue
        decorators = _decorator_names(stmt)
        if decorators & {"property", "setter", "cached_property", "overload"}:
            continue
        seen.add(name)
        kind = (
            "staticmethod"
            if "staticmethod" in decorators
            else "classmethod"
            if "classmethod" in decorators
            else "method"
        )
        out[name] = {
            "kind": kind,
            "params": _compared(index, module, _params(stmt, drop_first=kind != "staticmethod")),
            "source": f"{module}:{cls.name}.{name}",
        }
    for base in cls.bases:
        found = _base_class(index, module, base)
        if found:
            out.update(_methods(index, found[0], found[1], seen))
    return out


def collect(root: Path, surface: dict[str, Any]) -> dict[str, Any]:
    index = SourceIndex(root)
    callables: dict[str, Entry] = {}
    aliases: dict[str, str] = {}
    for module in sorted(surface):
        names = surface[module].get("names")
        if names is None:
            continue
        if index.tree(module) is None:
            raise SystemExit(f"{module}: not found under {root}; pass the unpacked 0.7 source root")
        for name in names:
            found = index.resolve(module, name)
            if found is None:
                continue  # a constant, or a callable from outside torchx
            home, node = found
            key = f"{home}:{node.name}"
            if home != module or node.name != name:
                aliases[f"{module}:{name}"] = key
            if key in callables:
                continue
            if isinstance(node, ast.ClassDef):
                ctor = _constructor(index, home, node)
                methods = _methods(index, home, node, set())
                callables[key] = {"kind": "class", "init": ctor, "methods": methods}
            else:
                params = _compared(index, home, _params(node, drop_first=False))
                callables[key] = {"kind": "function", "params": params}
    return {
        "version": 1,
        "upstream": "pytorch/torchx 0.7.0",
        "callables": callables,
        "aliases": aliases,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="root of the unpacked 0.7.0 source tree")
    parser.add_argument("--surface", type=Path, default=SURFACE, help="the surface list (JSON)")
    args = parser.parse_args(argv)
    data = collect(args.source, json.loads(args.surface.read_text()))
    sys.stdout.write(dump(data))
    return 0


def dump(data: dict[str, Any]) -> str:
    """JSON with one line per callable and alias: small, and a change reads as one line."""
    out = ["{"]
    for i, (key, value) in enumerate(sorted(data.items())):
        comma = "," if i < len(data) - 1 else ""
        if not isinstance(value, dict):
            out.append(f" {json.dumps(key)}: {json.dumps(value)}{comma}")
            continue
        out.append(f" {json.dumps(key)}: {{")
        items = sorted(value.items())
        for j, (name, entry) in enumerate(items):
            sep = "," if j < len(items) - 1 else ""
            out.append(f"  {json.dumps(name)}: {json.dumps(entry, sort_keys=True)}{sep}")
        out.append(f" }}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
