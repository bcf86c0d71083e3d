"""``Functional``: a model defined by calling layers on placeholders."""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import torch
from torch import nn

from . import _summary
from ._errors import SpecError
from ._holders import note_holder
from ._layer import Layer, nesting_of
from ._placeholder import Node, Op, Placeholder, apply_op
from ._sequential import Sequential
from ._shapes import Shape, Shapes, fixed_features
from ._spec import layer_from_body

# A structure template mirrors the user's inputs/outputs: an int (index of a
# placeholder in the flat list), a list of templates, or a dict of them.
Template = Any


def _flatten(obj: Any, field: str) -> tuple[list[Placeholder], Template]:
    flat: list[Placeholder] = []

    def walk(o: Any) -> Template:
        if isinstance(o, Placeholder):
            flat.append(o)
            return len(flat) - 1
        if isinstance(o, (list, tuple)):
            return [walk(v) for v in o]
        if isinstance(o, dict):
            for k in o:
                if not isinstance(k, str):
                    raise TypeError(f"{field}: dict keys must be strings, got {k!r}")
            return {k: walk(v) for k, v in o.items()}
        raise TypeError(
            f"{field}: expected a Placeholder, or a list/tuple/dict of them; got {type(o).__name__}"
        )

    return flat, walk(obj)


def _fill(template: Template, values: list[Any]) -> Any:
    if isinstance(template, int):
        return values[template]
    if isinstance(template, list):
        return tuple(_fill(t, values) for t in template)
    return {k: _fill(t, values) for k, t in template.items()}


def _leaf_paths(obj: Any, prefix: str = "") -> Iterator[tuple[str, Placeholder]]:
    if isinstance(obj, Placeholder):
        yield prefix, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaf_paths(v, f"{prefix}[{k!r}]")
    else:
        for i, v in enumerate(obj):
            yield from _leaf_paths(v, f"{prefix}[{i}]")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _shapes_of(template: Template, shapes: list[Shape]) -> Shapes:
    if isinstance(template, int):
        return shapes[template]
    values = template.values() if isinstance(template, dict) else template
    return [_shapes_of(t, shapes) for t in values]


class Functional(Layer):
    """A model from placeholders to outputs; built (all parameters) on construction.

    ``inputs`` and ``outputs`` are each a Placeholder, a list/tuple or a dict
    (nested too) of them; ``inputs`` sets how the model is called: ``model(x)``,
    ``model(x1, x2)`` or ``model([x1, x2])``, ``model({"a": xa})`` or
    ``model(a=xa)``. Sequence outputs come back as tuples. The forward pass is
    generated Python code: one line per recorded call, no graph walk.
    """

    _makes_own_modules: ClassVar[bool] = False  # its items make their own

    # Built at construction, so never pending: the generated forward looks its layers up
    # as attributes, once per call each, without Layer.__getattr__'s pending check.
    __getattr__ = nn.Module.__getattr__

    def __init__(self, inputs: Any, outputs: Any, name: str | None = None) -> None:
        super().__init__(name)
        flat_in, in_template = _flatten(inputs, "inputs")
        flat_out, out_template = _flatten(outputs, "outputs")
        for i, p in enumerate(flat_in):
            if p.node is not None:
                raise ValueError(
                    f"inputs[{i}] is the result of a layer call; inputs must be placeholders "
                    "made with L.Placeholder(shape)"
                )
        if len({id(p) for p in flat_in}) != len(flat_in):
            raise ValueError("inputs: the same Placeholder is listed twice")
        nodes = self._collect(flat_in, flat_out)
        self.__dict__["_nesting"] = nesting_of(
            [n.target for n in nodes if isinstance(n.target, Layer)], "L.Functional"
        )
        self._name_layers(nodes)
        self._graph = self._describe(flat_in, in_template, flat_out, out_template, nodes)
        self._compile(flat_in, flat_out, out_template, nodes)
        self._in_template = in_template
        # how many positional tensors a call passes straight to the generated forward:
        # model(x) for one input, model(x1, x2, ...) for a flat list; others are bound
        self._positional = -1
        if isinstance(in_template, int):
            self._positional = 1
        elif isinstance(in_template, list) and in_template == list(range(len(in_template))):
            self._positional = len(in_template) if len(in_template) > 1 else -1
        self._out_template = out_template
        self._flat_out_shapes = [p.shape for p in flat_out]
        self._input_shapes = [p.shape for p in flat_in]
        self._output_shapes = _shapes_of(out_template, [p.shape for p in flat_out])

    # --- construction ------------------------------------------------------------------

    @staticmethod
    def _collect(flat_in: list[Placeholder], flat_out: list[Placeholder]) -> list[Node]:
        known = {id(p) for p in flat_in}
        seen: dict[int, Node] = {}
        stack = list(flat_out)
        while stack:
            p = stack.pop()
            if id(p) in known:
                continue
            if p.node is None:
                raise ValueError(
                    f"outputs depend on {p!r}, which is not listed in inputs; add it to inputs"
                )
            if id(p.node) not in seen:
                seen[id(p.node)] = p.node
                stack.extend(a for a in p.node.args if isinstance(a, Placeholder))
                stack.extend(_keyword_holders(p.node.kwargs))
        return sorted(seen.values(), key=lambda n: n.order)

    def _name_layers(self, nodes: list[Node]) -> None:
        self.layers: dict[str, Layer] = {}
        self._names: dict[int, str] = {}
        counts: dict[str, int] = {}
        reserved = set(dir(Functional))
        for node in nodes:
            layer = node.target
            if not isinstance(layer, Layer) or id(layer) in self._names:
                continue
            name = layer.layer_name
            if name is None:
                base = _snake(type(layer).__name__)
                if keyword.iskeyword(base) or base in reserved:
                    base += "_"  # a Lambda would otherwise be called `lambda`
                k = counts.get(base, 0)
                name = base if k == 0 else f"{base}_{k}"
                while name in self.layers:
                    k += 1
                    name = f"{base}_{k}"
                counts[base] = k + 1
            elif name in self.layers:
                raise ValueError(
                    f"two different layers are both named {name!r}; layer names in a model "
                    "must be unique"
                )
            if name in reserved or keyword.iskeyword(name) or name.startswith("_"):
                raise ValueError(
                    f"name={name!r} clashes with an attribute of Functional; pick another name"
                )
            self.layers[name] = layer
            self._names[id(layer)] = name
            # every layer was only shape-checked when it was called on placeholders;
            # the whole graph has checked out, so the modules are made now, in call order
            layer._materialize()
            self.add_module(name, layer.call_module())
            if isinstance(layer, Sequential):
                note_holder(layer, self)

    def _describe(
        self,
        flat_in: list[Placeholder],
        in_template: Template,
        flat_out: list[Placeholder],
        out_template: Template,
        nodes: list[Node],
    ) -> dict[str, Any]:
        ids: dict[int, int] = {id(p): i for i, p in enumerate(flat_in)}

        def number(outputs: Any) -> Any:
            if isinstance(outputs, Placeholder):
                ids[id(outputs)] = len(ids)
                return ids[id(outputs)]
            if isinstance(outputs, dict):
                return {k: number(v) for k, v in outputs.items()}
            return [number(v) for v in outputs]

        described = []
        self._rows: list[tuple[str, str, list[Shape], Layer | None]] = [
            (f"input_{i}", "Placeholder", [p.shape], None) for i, p in enumerate(flat_in)
        ]
        for node in nodes:
            shapes = [p.shape for _, p in _leaf_paths(node.outputs)]
            if isinstance(node.target, Op):
                self._rows.append((node.target.name, "op", shapes, None))
            else:
                label = self._names[id(node.target)]
                self._rows.append((label, type(node.target).__name__, shapes, node.target))
            args = [
                {"ref": ids[id(a)]} if isinstance(a, Placeholder) else {"const": a}
                for a in node.args
            ]
            entry: dict[str, Any]
            if isinstance(node.target, Op):
                entry = {"op": node.target.name, "params": node.target.params}
            else:
                entry = {"layer": self._names[id(node.target)]}
            entry["args"] = args
            if node.kwargs:
                entry["kwargs"] = {k: _encode_arg(v, ids) for k, v in node.kwargs.items()}
            entry["outputs"] = number(node.outputs)
            described.append(entry)
        return {
            "inputs": in_template,
            "input_shapes": [list(p.shape) for p in flat_in],
            "nodes": described,
            "outputs": _fill_ids(out_template, [ids[id(p)] for p in flat_out]),
        }

    def _compile(
        self,
        flat_in: list[Placeholder],
        flat_out: list[Placeholder],
        out_template: Template,
        nodes: list[Node],
    ) -> None:
        names: dict[int, str] = {id(p): f"a{i}" for i, p in enumerate(flat_in)}
        scope: dict[str, Any] = {}
        ops: dict[str, Op] = {}
        inputs = ", ".join(names.values())
        head = [f"def forward(self, {inputs}):"]
        checks = [_input_check(f"a{i}", p.shape) for i, p in enumerate(flat_in)]
        if checks:
            head.append(f"    if {' or '.join(checks)}:")
            head.append(f"        self._check_tensors(({inputs},))")
        lines: list[str] = []
        # (the names a line defines, the names it reads), for the dels after last uses
        steps: list[tuple[list[str], list[str]]] = []
        for k, node in enumerate(nodes):
            args = []
            reads = []
            for j, a in enumerate(node.args):
                if isinstance(a, Placeholder):
                    args.append(names[id(a)])
                    reads.append(names[id(a)])
                else:
                    scope[f"c{k}_{j}"] = a
                    args.append(f"c{k}_{j}")
            for key, value in node.kwargs.items():
                reads += [names[id(p)] for p in _keyword_holders({key: value})]
                args.append(f"{key}={_render_arg(value, names, scope, f'k{k}_{key}')}")
            if isinstance(node.target, Op):
                ops[f"f{k}"] = node.target
                call = f"f{k}({', '.join(args)})"
            else:
                call = f"self.{self._names[id(node.target)]}({', '.join(args)})"
            if isinstance(node.outputs, Placeholder):
                names[id(node.outputs)] = f"v{k}"
                steps.append(([f"v{k}"], reads))
                lines.append(f"    v{k} = {call}")
            else:
                steps.append(([f"t{k}"], reads))
                lines.append(f"    t{k} = {call}")
                for i, (path, p) in enumerate(_leaf_paths(node.outputs)):
                    names[id(p)] = f"v{k}_{i}"
                    steps.append(([f"v{k}_{i}"], [f"t{k}"]))
                    lines.append(f"    v{k}_{i} = t{k}{path}")
        returned = [names[id(p)] for p in flat_out]
        kept = {names[id(p)] for p in flat_in} | set(returned)  # the caller holds inputs
        lines = [*head, *_with_dels(lines, steps, kept)]
        lines.append(f"    return {_render(out_template, returned)}")
        self.code = "\n".join(lines) + "\n"
        # what the code reads, as data (constants, ops as name and parameters): generated
        # code cannot be pickled, so a pickled model (torch.save(model), a model sent to a
        # spawned process) makes it again
        self._code_globals = (scope, ops)
        self._run = _generate(self.code, self._label(), scope, ops)

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()  # type: ignore[no-untyped-call]
        del state["_run"]
        return state  # type: ignore[no-any-return]

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)  # type: ignore[no-untyped-call]
        self._run = _generate(self.code, self._label(), *self._code_globals)

    # --- calling -----------------------------------------------------------------------

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        template = self._in_template
        n = len(self._input_shapes or [])
        if kwargs:
            if args or not isinstance(template, dict):
                raise TypeError("keyword inputs need a model whose inputs are a dict")
            args = (kwargs,)
        if isinstance(template, int):
            if len(args) != 1:
                raise TypeError(f"this model takes 1 input, got {len(args)}")
            return [args[0]]
        if isinstance(template, dict):
            value: Any = args[0] if len(args) == 1 else args
        elif len(args) == 1 and isinstance(args[0], (list, tuple)):
            value = args[0]
        else:
            value = args
        flat: list[Any] = [None] * n

        def walk(t: Template, v: Any, where: str) -> None:
            if isinstance(t, int):
                flat[t] = v
            elif isinstance(t, dict):
                if not isinstance(v, dict) or set(v) != set(t):
                    got = sorted(v) if isinstance(v, dict) else type(v).__name__
                    raise TypeError(
                        f"input{where}: expected a dict with keys {sorted(t)}, got {got}"
                    )
                for k, sub in t.items():
                    walk(sub, v[k], f"{where}[{k!r}]")
            else:
                if not isinstance(v, (list, tuple)) or len(v) != len(t):
                    raise TypeError(f"input{where}: expected a sequence of {len(t)} inputs")
                for i, sub in enumerate(t):
                    walk(sub, v[i], f"{where}[{i}]")

        walk(template, value, "")
        return flat

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # a tensor first means an ordinary call: skip the search for placeholders
        if len(args) == 1 and isinstance(args[0], torch.Tensor):
            return nn.Module.__call__(self, *args, **kwargs)
        if not kwargs and _has_placeholder(args):
            return self.call_symbolic(self._bind(args, {}))
        return super().__call__(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        inputs = args if len(args) == self._positional and not kwargs else self._bind(args, kwargs)
        try:
            return self._run(self, *inputs)
        except AttributeError:  # e.g. a list for a tensor: said for the input, not the line
            self.refuse_non_tensors(inputs)
            raise

    def call_symbolic(self, inputs: list[Placeholder], **kwargs: Any) -> Any:
        self._check_keywords(kwargs)
        for p in inputs:
            if not isinstance(p, Placeholder):
                raise TypeError("a symbolic call needs Placeholders for every input")
        self.build(*[p.shape for p in inputs])
        node = Node(self, list(inputs))
        holders = [Placeholder(s, _node=node) for s in self._flat_out_shapes]
        node.outputs = _fill(_renumber(self._out_template), holders)
        return node.outputs

    def call_module(self) -> nn.Module:
        return self

    # --- serialization -----------------------------------------------------------------

    def get_config(self) -> dict[str, Any]:
        return {
            **self._graph,
            "layers": {name: layer._spec_body() for name, layer in self.layers.items()},
        }

    @classmethod
    def from_config(cls, config: dict[str, Any], name: str | None) -> Layer:
        for key in ("inputs", "input_shapes", "nodes", "outputs", "layers"):
            if key not in config:
                raise SpecError(f"Functional.config: missing field {key!r}")
        values: dict[int, Placeholder] = {}
        shapes = config["input_shapes"]
        for i, shape in enumerate(shapes):
            values[i] = Placeholder(shape)
        layers = {
            n: layer_from_body(b, f"Functional.config.layers.{n}")
            for n, b in config["layers"].items()
        }
        for i, entry in enumerate(config["nodes"]):
            where = f"Functional.config.nodes[{i}]"
            try:
                args = [values[a["ref"]] if "ref" in a else a["const"] for a in entry["args"]]
            except (KeyError, TypeError) as e:
                raise SpecError(f"{where}.args: bad reference {e}") from None
            if "op" in entry:
                out: Any = apply_op(entry["op"], args, **entry.get("params", {}))
            elif entry.get("layer") in layers:
                kwargs = entry.get("kwargs", {})
                if not isinstance(kwargs, dict):
                    raise SpecError(f"{where}.kwargs={kwargs!r}: expected a mapping")
                out = layers[entry["layer"]].call_symbolic(
                    args,
                    **{k: _decode_arg(v, values, f"{where}.kwargs.{k}") for k, v in kwargs.items()},
                )
            else:
                raise SpecError(
                    f"{where}: layer {entry.get('layer')!r} is not in config.layers "
                    f"(known: {sorted(layers)})"
                )
            _bind_ids(entry["outputs"], out, values, where)
        ins = _fill(config["inputs"], [values[i] for i in range(len(shapes))])
        outs = _fill_values(config["outputs"], values)
        return cls(inputs=ins, outputs=outs, name=name)

    def node_rows(self) -> list[tuple[str, str, list[Shape], Layer | None]]:
        """(name, type, output shapes, layer) per input and recorded call, for summaries."""
        return list(self._rows)

    def _summary_rows(self, path: str, rows: list[_summary.Row], seen: set[int]) -> None:
        for name, kind, shapes, sub in self._rows:
            where = f"{path}.{name}"
            if sub is None:
                rows.append((where, kind, _summary.format_shapes(shapes), 0, 0))
                continue
            module = sub.call_module()
            if module is sub:  # a container lists its own items
                sub._summary_rows(where, rows, seen)
            else:
                counts = _summary.count(module, seen)
                rows.append((where, kind, _summary.format_shapes(shapes), *counts))

    def extra_repr(self) -> str:
        return ""


def _input_check(name: str, shape: Shape) -> str:
    """A condition, true when input ``name`` differs from ``shape`` beyond the batch size
    (a free size, None, matches any); _check_tensors then words the error."""
    features = fixed_features(shape)
    if features is not None:
        return f"{name}.shape[1:] != {features!r}"
    fixed = [f"{name}.shape[{i}] != {d}" for i, d in enumerate(shape) if i and d is not None]
    return " or ".join([f"{name}.dim() != {len(shape)}", *fixed])


def _with_dels(
    lines: list[str], steps: list[tuple[list[str], list[str]]], kept: set[str]
) -> list[str]:
    """``lines`` (one per step) with each local deleted after its last use.

    A hand-written forward frees an intermediate tensor as soon as nothing refers to it;
    generated code keeping every one to the end would hold all of a model's activations
    at once (in no_grad inference, where autograd keeps none of them).
    """
    last: dict[str, int] = {}
    for i, (defined, reads) in enumerate(steps):
        for name in (*defined, *reads):
            last[name] = i
    dead: dict[int, list[str]] = {}
    for name, i in last.items():
        if name not in kept:
            dead.setdefault(i, []).append(name)
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in dead:
            out.append(f"    del {', '.join(sorted(dead[i]))}")
    return out


def _keyword_holders(kwargs: dict[str, Any]) -> list[Placeholder]:
    found: list[Placeholder] = []

    def walk(v: Any) -> None:
        if isinstance(v, Placeholder):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            for item in v:
                walk(item)

    for value in kwargs.values():
        walk(value)
    return found


def _encode_arg(value: Any, ids: dict[int, int]) -> Any:
    """A call keyword as spec data: a reference, a tuple of them, or a constant."""
    if isinstance(value, Placeholder):
        return {"ref": ids[id(value)]}
    if isinstance(value, (list, tuple)):
        return {"tuple": [_encode_arg(v, ids) for v in value]}
    return {"const": value}


def _decode_arg(data: Any, values: dict[int, Placeholder], where: str) -> Any:
    try:
        if "ref" in data:
            return values[data["ref"]]
        if "tuple" in data:
            return tuple(_decode_arg(v, values, where) for v in data["tuple"])
        return data["const"]
    except (KeyError, TypeError) as e:
        raise SpecError(f"{where}: bad keyword argument {data!r} ({e})") from None


def _generate(
    code: str, label: str, constants: dict[str, Any], ops: dict[str, Op]
) -> Callable[..., Any]:
    """The forward function of ``code``, with its constants and op functions in scope."""
    scope = {**constants, **{slot: op.function() for slot, op in ops.items()}}
    exec(compile(code, f"<Functional {label}>", "exec"), scope)
    return scope["forward"]  # type: ignore[no-any-return]


def _render_arg(value: Any, names: dict[int, str], scope: dict[str, Any], slot: str) -> str:
    if isinstance(value, Placeholder):
        return names[id(value)]
    if isinstance(value, (list, tuple)):
        parts = [_render_arg(v, names, scope, f"{slot}_{i}") for i, v in enumerate(value)]
        return f"({', '.join(parts)},)"
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    scope[slot] = value
    return slot


def _has_placeholder(obj: Any) -> bool:
    if isinstance(obj, Placeholder):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_has_placeholder(o) for o in obj)
    if isinstance(obj, dict):
        return any(_has_placeholder(o) for o in obj.values())
    return False


def _fill_ids(template: Template, ids: list[int]) -> Template:
    if isinstance(template, int):
        return ids[template]
    if isinstance(template, list):
        return [_fill_ids(t, ids) for t in template]
    return {k: _fill_ids(t, ids) for k, t in template.items()}


def _fill_values(template: Template, values: dict[int, Placeholder]) -> Any:
    if isinstance(template, int):
        return values[template]
    if isinstance(template, list):
        return [_fill_values(t, values) for t in template]
    return {k: _fill_values(t, values) for k, t in template.items()}


def _renumber(template: Template) -> Template:
    """The same structure with leaves numbered 0.. in order (flat output order)."""
    counter = iter(range(1 << 30))

    def walk(t: Template) -> Template:
        if isinstance(t, int):
            return next(counter)
        if isinstance(t, list):
            return [walk(s) for s in t]
        return {k: walk(s) for k, s in t.items()}

    return walk(template)


def _bind_ids(template: Template, out: Any, values: dict[int, Placeholder], where: str) -> None:
    if isinstance(template, int):
        if not isinstance(out, Placeholder):
            raise SpecError(
                f"{where}.outputs: the call returned a structure, the spec names one id"
            )
        values[template] = out
        return
    items = template.items() if isinstance(template, dict) else enumerate(template)
    try:
        for k, t in items:
            _bind_ids(t, out[k], values, where)
    except (KeyError, IndexError, TypeError):
        raise SpecError(
            f"{where}.outputs: {template!r} does not match the call's outputs"
        ) from None


def _render(template: Template, names: list[str]) -> str:
    if isinstance(template, int):
        return names[template]
    if isinstance(template, list):
        inner = ", ".join(_render(t, names) for t in template)
        return f"({inner},)" if len(template) == 1 else f"({inner})"
    return "{" + ", ".join(f"{k!r}: {_render(t, names)}" for k, t in template.items()) + "}"
