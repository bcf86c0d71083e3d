"""``TorchLayer``: a layer that wraps one torch.nn class, and the planning of layer chains."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, ClassVar

import torch
from torch import nn

from ._binding import _Binder, _slow_bind
from ._errors import ShapeError
from ._layer import Layer, check_name, check_output
from ._meta import module_on_meta
from ._shapes import (
    PROBES,
    Shape,
    Shapes,
    as_shape,
    fill_unknown,
    has_unknown,
    probe,
)


class TorchLayer(Layer):
    """A layer that wraps one torch.nn class, filling in the arguments it can infer.

    Subclasses name the torch class, the constructor arguments taken from the input
    shape (``inferred``) and an output-shape formula (``_formula``); a subclass
    without a formula falls back to running the module on the meta device.
    """

    torch_cls: ClassVar[type[nn.Module]]
    #: torch constructor arguments computed from the input shapes
    inferred: ClassVar[tuple[str, ...]] = ()
    #: torch constructor arguments this library fixes (batch_first=True)
    fixed: ClassVar[dict[str, Any]] = {}
    #: extra keyword-only arguments of the wrapper itself, with their defaults
    extras: ClassVar[dict[str, Any]] = {}
    #: an explicit argument list, for torch classes that take ``*args``
    params: ClassVar[tuple[inspect.Parameter, ...] | None] = None
    #: accepted input ranks and how the input is laid out, for error messages
    ndims: ClassVar[tuple[int, ...] | None] = None
    layout: ClassVar[str] = ""
    num_inputs: ClassVar[tuple[int, ...]] = (1,)
    _checks_output: ClassVar[bool] = True
    _signatures: ClassVar[dict[type, inspect.Signature]] = {}
    # Which hooks a class leaves as they are here, worked out once per class: the build
    # then skips or inlines them. _plain_X: X is TorchLayer's own.
    _plain_wrap: ClassVar[bool] = True
    _plain_kwargs: ClassVar[bool] = True  # _final_kwargs
    _plain_torch_kwargs: ClassVar[bool] = True  # and no extras
    _plain_input_check: ClassVar[bool] = True
    #: whether _infer is overridden (the default infers nothing)
    _infers: ClassVar[bool] = False
    #: whether the class has a shape formula (otherwise its module is run on meta)
    _has_formula: ClassVar[bool] = False
    #: whether a chain plans the layer in one step (see plan_items)
    _fast_plan: ClassVar[bool] = False
    #: whether the second pass is just ``torch_cls(**kwargs)`` (Sequential inlines it)
    _plain_construct: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._plain_wrap = cls._wrap is TorchLayer._wrap
        cls._plain_kwargs = cls._final_kwargs is TorchLayer._final_kwargs
        cls._plain_construct = (
            cls._plain_wrap
            and cls._plain_kwargs
            and cls._materialize is Layer._materialize
            and cls._construct is TorchLayer._construct
            and cls.call_module is TorchLayer.call_module
        )
        cls._plain_torch_kwargs = cls.torch_kwargs is TorchLayer.torch_kwargs and not cls.extras
        cls._plain_input_check = cls._check_input is TorchLayer._check_input
        cls._infers = cls._infer is not TorchLayer._infer
        cls._has_formula = cls._formula is not TorchLayer._formula
        cls._fast_plan = (
            cls._has_formula
            and cls._plain_input_check
            and 1 in cls.num_inputs
            and cls._shape is TorchLayer._shape
            and cls._check_constructible is TorchLayer._check_constructible
        )

    def __init__(self, *args: Any, name: str | None = None, **kwargs: Any) -> None:
        # what Layer.__init__ does, in the same order (a bad name is reported before a
        # bad argument), with this layer's own attributes set in the same step
        if name is not None:
            check_name(name)
        cls = type(self)
        binder = _BINDERS.get(cls) or _binder(cls)
        # without arguments (the common case) a layer takes the defaults, as bind would
        bound = (
            binder.bind(args, kwargs)
            if args or kwargs or not binder.bare
            else ({}, binder.template.copy())
        )
        if bound is None:
            # anything unusual (an unknown, missing or doubled argument) goes through
            # inspect, which words the error
            config, full = _slow_bind(cls, args, kwargs)
        else:
            config, full = bound
        attrs = {
            "layer_name": name,
            "_input_shapes": None,
            "_output_shapes": None,
            "_pending": False,
            "_config": config,
            "args": full,
        }
        self._init_state(attrs)
        self._config: dict[str, Any]
        self.args: dict[str, Any]
        if binder.own_validate:
            self._validate()
        else:
            # _validate's check, inline; it is called to word the error
            for key in binder.counts:
                value = full[key]
                if type(value) is not int or value <= 0:
                    self._validate()

    @classmethod
    def signature(cls) -> inspect.Signature:
        sig = TorchLayer._signatures.get(cls)
        if sig is None:
            if cls.params is not None:
                base = list(cls.params)
            else:
                skip = {*cls.inferred, *cls.fixed, "self", "device", "dtype"}
                base = [
                    p
                    for p in inspect.signature(cls.torch_cls.__init__).parameters.values()
                    if p.name not in skip
                    and not p.name.startswith("_")
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                ]
            extra = [
                inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
                for k, v in cls.extras.items()
            ]
            positional = [p for p in base if p.kind != inspect.Parameter.KEYWORD_ONLY]
            keyword = [p for p in base if p.kind == inspect.Parameter.KEYWORD_ONLY]
            sig = inspect.Signature([*positional, *keyword, *extra])
            TorchLayer._signatures[cls] = sig
        return sig

    def _validate(self) -> None:
        """Reject clearly bad arguments at construction (not at the first call)."""
        cls = type(self)
        for key in (_BINDERS.get(cls) or _binder(cls)).counts:
            if key in self.args:
                value = self.args[key]
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    raise ValueError(
                        f"L.{type(self).__name__}: {key}={value!r}; expected a positive int"
                    )

    def get_config(self) -> dict[str, Any]:
        return dict(self._config)

    @classmethod
    def from_config(cls, config: dict[str, Any], name: str | None) -> Layer:
        # JSON has no tuples; torch wants tuples for sizes such as kernel_size
        return cls(**{k: _tuples(v) for k, v in config.items()}, name=name)

    def torch_kwargs(self, shapes: list[Shape]) -> dict[str, Any]:
        extras = self.extras
        kwargs = (
            {k: v for k, v in self._config.items() if k not in extras}
            if extras
            else self._config.copy()
        )
        if self.fixed:
            kwargs.update(self.fixed)
        inferred = self._infer(shapes)
        if inferred:
            kwargs.update(inferred)
        return kwargs

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        return {}

    def _formula(self, shapes: list[Shape]) -> Shapes | None:
        return None

    def _wrap(self, native: nn.Module) -> nn.Module:
        """The module that is called: the native one, or an adapter around it."""
        return native

    def _check_input(self, shapes: list[Shape], path: str) -> None:
        if len(shapes) not in self.num_inputs:
            counts = self.num_inputs
            lo, hi = min(counts), max(counts)
            if len(counts) == 1:
                want = f"{lo} input{'' if lo == 1 else 's'}"
            elif counts == tuple(range(lo, hi + 1)):
                want = f"{lo} to {hi} inputs"
            else:
                want = " or ".join(str(n) for n in counts) + " inputs"
            hint = "call it on a list of tensors, e.g. [a, b]" if len(shapes) < lo > 1 else None
            raise ShapeError(path, f"takes {want}, got {len(shapes)}", hint=hint)
        if self.ndims is not None:
            for s in shapes:
                if len(s) not in self.ndims:
                    ranks = " or ".join(f"{n}-D" for n in self.ndims)
                    raise ShapeError(
                        path,
                        f"{type(self).__name__} needs a {ranks} input",
                        expected=self.layout or None,
                        got=s,
                        hint="insert L.Reshape/L.Unflatten/L.Flatten before it to change the rank",
                    )

    def _sizes(self, shapes: list[Shape]) -> dict[str, Any]:
        """The constructor arguments that depend on the input shape, for comparison."""
        return self.torch_kwargs(shapes)

    def _require_known(self, shapes: list[Shape], path: str) -> None:
        """Refuse a None size that the torch module would be sized from (weights)."""
        base = self._sizes(fill_unknown(shapes, PROBES[0]))
        for j, shape in enumerate(shapes):
            for i, d in enumerate(shape):
                if i == 0 or d is not None:
                    continue
                trial = fill_unknown(shapes, PROBES[0])
                trial[j] = (*trial[j][:i], PROBES[1], *trial[j][i + 1 :])
                other = self._sizes(trial)
                changed = [k for k in base if base[k] != other.get(k)]
                if changed:
                    which = f" of input {j}" if len(shapes) > 1 else ""
                    raise ShapeError(
                        path,
                        f"{type(self).__name__} needs a known size for dimension {i}{which} "
                        f"(it sets {', '.join(changed)}), but that size is None",
                        expected=self.layout or None,
                        got=shape,
                        hint="give that dimension a size in the Placeholder or build shape, "
                        "or make it fixed before this layer (an adaptive pooling layer does)",
                    )

    def _known_formula(self, shapes: list[Shape]) -> Shapes:
        out = self._formula(shapes)
        assert out is not None
        return out

    def _shape(self, shapes: list[Shape], path: str) -> Shapes:
        cls = type(self)
        x = shapes[0] if len(shapes) == 1 else None
        # what _check_input checks, inline; it is called to word the error
        if (
            x is None
            or 1 not in cls.num_inputs
            or (cls.ndims is not None and len(x) not in cls.ndims)
            or not cls._plain_input_check
        ):
            self._check_input(shapes, path)
        concrete = shapes
        unknown = None in x[1:] if x is not None else has_unknown(shapes)
        if unknown:
            self._require_known(shapes, path)
            concrete = fill_unknown(shapes, PROBES[0])
        kwargs = self.torch_kwargs(concrete)
        out: Shapes | None
        if cls._has_formula:
            if unknown:
                out = probe(self._known_formula, shapes)
            else:
                out = self._formula(shapes)
                assert out is not None
            check_output(out, shapes, path)
            try:
                known = (cls, tuple(kwargs.items())) in _CONSTRUCTIBLE
            except TypeError:  # an argument that cannot be hashed
                known = False
            if not known:
                self._check_constructible(kwargs, shapes, path)
        else:
            # no formula: a module on the meta device has the real one's shapes and
            # no storage, so the real one waits until the whole model checks out
            with torch.device("meta"):
                module = self._wrap(self._make(kwargs, shapes, path, probe=True))
            out = module_on_meta(module, shapes, path)
            check_output(out, shapes, path)
        state = self.__dict__
        state["_pending"] = True
        state["_torch_kwargs"] = kwargs
        return out

    def _plan(
        self, input_shapes: Sequence[Sequence[int | None]], path: str | None = None
    ) -> Shapes:
        cls = type(self)
        if len(input_shapes) == 1 and self.__dict__["_input_shapes"] is None and cls._fast_plan:
            shape = as_shape(input_shapes[0], "input_shape")
            if (cls.ndims is None or len(shape) in cls.ndims) and None not in shape[1:]:
                # as a chain of one, which plans such a layer in one step
                return plan_items((self,), path or self._label(), shape, [], [], chain=False)
        return super()._plan(input_shapes, path)

    def _check_constructible(self, kwargs: dict[str, Any], shapes: list[Shape], path: str) -> None:
        """Raise now what torch's constructor would raise in the second pass.

        The module is made once on the meta device (no storage); arguments that
        worked before are remembered, so rebuilding a model pays nothing here.
        """
        key: Any
        try:
            key = (type(self), tuple(kwargs.items()))
            known = key in _CONSTRUCTIBLE
        except TypeError:  # an argument that cannot be hashed: check every time
            key, known = None, False
        if known:
            return
        with torch.device("meta"):
            self._make(kwargs, shapes, path, probe=True)
        if key is not None and len(_CONSTRUCTIBLE) < _CONSTRUCTIBLE_MAX:
            _CONSTRUCTIBLE.add(key)

    def _make(
        self,
        kwargs: dict[str, Any],
        shapes: list[Shape] | None,
        path: str,
        probe: bool = False,
    ) -> nn.Module:
        try:
            return self.torch_cls(**self._final_kwargs(kwargs, probe))
        except (ValueError, TypeError, RuntimeError, AssertionError) as e:
            raise self._make_error(kwargs, shapes, path, e) from e

    def _make_error(
        self, kwargs: dict[str, Any], shapes: list[Shape] | None, path: str, error: Exception
    ) -> ShapeError:
        got = shapes[0] if shapes else None
        return ShapeError(
            path, f"torch.nn.{self.torch_cls.__name__}({_kw(kwargs)}) failed: {error}", got=got
        )

    def _final_kwargs(self, kwargs: dict[str, Any], probe: bool) -> dict[str, Any]:
        """The constructor arguments, completed with anything that is a module itself.

        ``probe``: for a trial on the meta device, which must not make real modules.
        """
        return kwargs

    def _construct(self, path: str) -> None:
        state = self.__dict__
        kwargs = state.pop("_torch_kwargs")
        cls = type(self)
        if cls._plain_kwargs:
            # _make, inline
            try:
                native = cls.torch_cls(**kwargs)
            except (ValueError, TypeError, RuntimeError, AssertionError) as e:
                raise self._make_error(kwargs, state["_input_shapes"], path, e) from e
        else:
            native = self._make(kwargs, state["_input_shapes"], path)
        self.add_module("native", native if cls._plain_wrap else self._wrap(native))

    def call_module(self) -> nn.Module:
        # a planned layer makes its module on this lookup (Layer.__getattr__)
        native: nn.Module | None = getattr(self, "native", None)
        if native is None:
            raise RuntimeError(f"{self._label()} is not built yet")
        return native


_BINDERS: dict[type, _Binder] = {}
#: (layer class, torch constructor arguments) already made once without an error
_CONSTRUCTIBLE: set[Any] = set()
_CONSTRUCTIBLE_MAX = 4096


def _binder(cls: type[TorchLayer]) -> _Binder:
    binder = _BINDERS[cls] = _Binder(
        cls.signature(), own_validate=cls._validate is not TorchLayer._validate
    )
    return binder


def plan_items(
    items: Sequence[nn.Module],
    path: str,
    shape: Shapes,
    planned: list[Layer],
    item_shapes: list[Shapes],
    chain: bool = True,
) -> Shapes:
    """The first pass over a chain of items, each called on the output of the one before.

    This is the body of Sequential's first pass: item ``i`` is ``"{path}.{i}:{class}"``
    in error messages. A torch layer built on its own goes through it too, as a chain
    of one (``chain=False``: it is just ``path``). Every layer planned here for the
    first time is appended to ``planned`` before it is planned (a caller whose chain
    fails takes them back with ``_unplan``), and every item's output to
    ``item_shapes``. Returns the last output.

    A torch layer with the default hooks, on an input of known sizes, is planned right
    here rather than in a call of its own (what TorchLayer._shape does, in short), and
    its path is formatted only if a message needs it: models have many layers, and on
    the hot path of a build a call per layer costs about as much as the rest of the
    work.
    """
    for i, item in enumerate(items):
        if type(shape) is not tuple:
            raise ShapeError(
                f"{path}.{i}:{type(item).__name__}" if chain else path,
                "the previous item returns several tensors, but Sequential passes one on",
                hint="set return_indices/return_state/need_weights to False, or use the "
                "functional API",
            )
        if isinstance(item, TorchLayer):
            cls = type(item)
            state = item.__dict__
            x = shape
            if (
                state["_input_shapes"] is not None
                or not cls._fast_plan
                or (cls.ndims is not None and len(x) not in cls.ndims)
                or None in x[1:]
            ):
                # built before (only checked), hooks of its own, a wrong rank (the
                # error) or a size left open: the layer's own _plan
                if state["_input_shapes"] is None:
                    planned.append(item)
                out = item._plan((x,), f"{path}.{i}:{cls.__name__}" if chain else path)
            else:
                planned.append(item)
                # Layer._plan: as_shape's check, inline (it is called to word the error)
                for d in x:
                    if d is not None and (type(d) is not int or d <= 0):
                        x = as_shape(x, "input_shape")
                        break
                state["_build_path"] = (path, i) if chain else path
                shapes = [x]
                # TorchLayer._shape: the arguments of the torch class
                if cls._plain_torch_kwargs:
                    kwargs = state["_config"].copy()
                    if cls.fixed:
                        kwargs.update(cls.fixed)
                    if cls._infers:
                        kwargs.update(cls._infer(item, shapes))
                else:
                    kwargs = cls.torch_kwargs(item, shapes)
                # the output shape, checked as check_output does
                formula_out = cls._formula(item, shapes)
                assert formula_out is not None
                out = formula_out
                if type(out) is tuple:
                    for d in out:
                        if d is not None and d <= 0:
                            check_output(out, shapes, item._path())
                else:
                    check_output(out, shapes, item._path())
                # what the torch constructor would raise, unless these arguments worked before
                try:
                    known = (cls, tuple(kwargs.items())) in _CONSTRUCTIBLE
                except TypeError:  # an argument that cannot be hashed
                    known = False
                if not known:
                    item._check_constructible(kwargs, shapes, item._path())
                state["_pending"] = True
                state["_torch_kwargs"] = kwargs
                state["_input_shapes"] = shapes
                state["_output_shapes"] = out
        else:
            where = f"{path}.{i}:{type(item).__name__}" if chain else path
            if not isinstance(item, Layer):
                out = module_on_meta(item, [shape], where)
            else:
                if item.__dict__["_input_shapes"] is None:
                    planned.append(item)
                out = item._plan((shape,), where)
        item_shapes.append(out)
        shape = out
    return shape


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _kw(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
