"""The ``Layer`` base class: an nn.Module that builds its torch module from its input shape."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

from . import _spec, _summary
from ._errors import ShapeError, format_shape
from ._placeholder import Node, Placeholder
from ._registry import LAYER_TYPES, SPEC_FORMAT_VERSION
from ._shapes import (
    Shape,
    Shapes,
    as_shape,
    leaves,
)

#: held by a first call while it builds, so that first calls from several threads build a
#: model once and each runs it whole. One for the process: a model builds once, briefly,
#: and a lock kept on the layer would be one more thing for pickle and deepcopy to refuse.
#: Reentrant: a build runs plain modules on meta tensors, and they may hold layers.
_BUILD_LOCK = threading.RLock()


def _placeholder_args(args: tuple[Any, ...]) -> list[Placeholder] | None:
    """The placeholders a symbolic call was given, or None for a call on tensors."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if args and all(isinstance(a, Placeholder) for a in args):
        return list(args)
    if any(isinstance(a, Placeholder) for a in args):
        raise TypeError("a layer call cannot mix Placeholders with tensors or other values")
    return None


def keyword_shapes(kwargs: dict[str, Any], symbolic: bool, where: str) -> dict[str, Any]:
    """Call keywords with tensors and placeholders replaced by their shapes."""

    def convert(value: Any, field: str) -> Any:
        if isinstance(value, Placeholder):
            return value.shape
        if isinstance(value, torch.Tensor):
            if symbolic:
                raise TypeError(
                    f"{where}: keyword {field} is a tensor; in a call on Placeholders it must be "
                    "a Placeholder (a model input or a layer output) or a Python constant"
                )
            return tuple(value.shape)
        if isinstance(value, (tuple, list)):
            return [convert(v, f"{field}[{i}]") for i, v in enumerate(value)]
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise TypeError(
            f"{where}: keyword {field}={value!r} ({type(value).__name__}) is not accepted; "
            "pass a tensor, a Placeholder, a tuple of them or a Python constant"
        )

    return {k: convert(v, k) for k, v in kwargs.items()}


def check_output(out: Shapes, shapes: list[Shape], where: str) -> None:
    for leaf in (out,) if type(out) is tuple else leaves(out):
        for d in leaf:
            if d is not None and d <= 0:
                raise ShapeError(
                    where,
                    f"the output shape would be {format_shape(leaf)}: the input is too small "
                    "for this layer's kernel, padding or stride",
                    got=shapes[0],
                    hint="pad the input, or lower kernel_size/stride/dilation",
                )


def check_name(name: Any) -> None:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            f"name={name!r}: a layer name must be a Python identifier such as 'encoder_1'"
        )


#: How deeply containers (Sequential, Functional, TimeDistributed) may nest. Calls,
#: builds and specs recurse once per level; past this, Python's recursion limit
#: would end them with a RecursionError somewhere inside torch.
MAX_NESTING = 64

#: The buffer an unbuilt layer holds: an empty float32 CPU tensor that torch converts
#: along with the layer's (future) tensors, so at the build it tells their dtype and device.
CONVERSIONS = "_torchx_conversions"
_UNCONVERTED = torch.empty(0)


def nesting_of(children: Iterable[object], what: str) -> int:
    """A container's nesting depth (1 + its deepest child's), refused past MAX_NESTING."""
    depth = 1 + max(
        (c.__dict__.get("_nesting", 0) for c in children if isinstance(c, Layer)), default=0
    )
    if depth > MAX_NESTING:
        raise ValueError(
            f"{what}: containers would nest {depth} deep, past the limit of {MAX_NESTING}; "
            "flatten the model (one Sequential can hold any number of layers)"
        )
    return depth


def to_placeholders(shapes: Shapes, node: Node) -> Any:
    if isinstance(shapes, tuple):
        return Placeholder(shapes, _node=node)
    return tuple(to_placeholders(s, node) for s in shapes)


class Stateless:
    """Marks a layer class whose own torch module holds no tensor (activations, dropout,
    pooling, reshapes, ...; a container, whose items answer for themselves): unbuilt, its
    state_dict is complete as it is, empty. Listed after the layer base class."""


class Layer(nn.Module):
    """Base of every torchx layer.

    A layer is constructed with only what cannot be inferred. At its first call, on
    tensors or on :class:`Placeholder` objects, it reads its input shape, computes its
    output shape by formula and builds its plain torch module (see
    :meth:`native_module`). Dimension 0 is the batch and may vary between calls; the
    other dimensions are fixed at build time, except the axes in ``free_axes``.
    """

    #: Non-batch axes whose size may change between calls (the time axis of an RNN).
    free_axes: ClassVar[tuple[int, ...]] = ()
    #: Keywords a call may pass on to the module (masks, initial states, flags).
    call_keywords: ClassVar[tuple[str, ...]] = ()

    #: whether ``_shape`` itself checks the output shape (so ``_plan`` need not again)
    _checks_output: ClassVar[bool] = False
    #: whether the build makes this layer's torch modules (a container's items make their
    #: own): such a layer holds the CONVERSIONS buffer and what apply() and hooks need
    #: until its build
    _makes_own_modules: ClassVar[bool] = True
    #: whether nn.Module comes right after Layer in the class's MRO (no mixin between)
    _plain_module: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        mro = cls.__mro__
        cls._plain_module = mro[mro.index(Layer) + 1] is nn.Module
        if not cls.__name__.startswith("_"):
            LAYER_TYPES[cls.__name__] = cls

    def __init__(self, name: str | None = None) -> None:
        self._init_layer(name, {})
        self.layer_name: str | None
        self._input_shapes: list[Shape] | None
        self._output_shapes: Shapes | None

    def _init_layer(self, name: str | None, extra: dict[str, Any]) -> None:
        """Layer.__init__, with ``extra`` plain attributes set in the same step."""
        if name is not None:
            check_name(name)
        self._init_state(
            {
                "layer_name": name,
                "_input_shapes": None,
                "_output_shapes": None,
                "_pending": False,
                **extra,
            }
        )

    def _init_state(self, attrs: dict[str, Any]) -> None:
        """``nn.Module.__init__``, then ``attrs`` as plain attributes.

        Plain attributes go straight to ``__dict__``: nn.Module.__setattr__ is slow, and
        making many layers is on the hot path of model construction.
        """
        if self._plain_module:
            nn.Module.__init__(self)
        else:
            super().__init__()
        self.__dict__.update(attrs)
        if self._makes_own_modules:
            self.register_buffer(CONVERSIONS, _UNCONVERTED, persistent=False)

    # --- state -------------------------------------------------------------------------

    @property
    def built(self) -> bool:
        return self._input_shapes is not None

    def has_uninitialized_params(self) -> bool:
        """Whether the layer's parameters do not exist yet (it is not built), as torch's
        Lazy modules answer it: a parent that is not a layer (``torchx.nn.Module``) asks
        this, since torch's own parameter walk cannot see them."""
        return not self.built

    @property
    def input_shapes(self) -> list[Shape]:
        if self._input_shapes is None:
            raise RuntimeError(f"{self._label()} is not built yet")
        return list(self._input_shapes)

    @property
    def output_shape(self) -> Shapes:
        if self._output_shapes is None:
            raise RuntimeError(f"{self._label()} is not built yet")
        return self._output_shapes

    def _label(self) -> str:
        return self.layer_name or type(self).__name__

    def _path(self) -> str:
        """Where this layer sits in the model being built, for error messages."""
        where = self.__dict__.get("_build_path")
        if type(where) is tuple:
            # (the container's path, the index) from plan_items, which leaves the
            # formatting to the first message that needs it
            where = self.__dict__["_build_path"] = f"{where[0]}.{where[1]}:{type(self).__name__}"
        return where or self._label()

    # --- building ----------------------------------------------------------------------

    def build(self, *input_shapes: Sequence[int | None], path: str | None = None) -> Shapes:
        """Build from input shapes (batch first, ``None`` allowed) and return output shapes.

        Building twice with compatible shapes is a no-op (a shared layer); an
        incompatible shape raises :class:`ShapeError`. A container infers every
        layer's shapes before it constructs any torch module, so a mismatch anywhere
        in a model leaves no parameter behind.
        """
        out = self._plan(input_shapes, path)
        if self._pending:
            self._materialize()
        return out

    def _plan(
        self, input_shapes: Sequence[Sequence[int | None]], path: str | None = None
    ) -> Shapes:
        """The first pass of a build: shapes only, no real tensor (see :meth:`_shape`)."""
        where = path or self._label()
        shapes = (
            [as_shape(input_shapes[0], "input_shape")]
            if len(input_shapes) == 1
            else [as_shape(s, "input_shape") for s in input_shapes]
        )
        state = self.__dict__
        if state["_input_shapes"] is not None:
            self._check_shapes(shapes, where)
            assert self._output_shapes is not None
            return self._output_shapes
        state["_build_path"] = where
        out = self._shape(shapes, where)
        if not self._checks_output:
            check_output(out, shapes, where)
        state["_input_shapes"] = shapes
        state["_output_shapes"] = out
        if not state["_pending"]:  # built in one pass: its modules exist now
            module = self.call_module()
            self._settle(None if module is self else module)
        return out

    def _shape(self, shapes: list[Shape], path: str) -> Shapes:
        """Output shapes for ``shapes``, allocating no real tensor.

        A layer that has torch modules to make sets ``_pending`` and makes them in
        :meth:`_construct`; the default builds in one pass (parameter-free layers).
        """
        return self._build(shapes, path)

    def _build(self, shapes: list[Shape], path: str) -> Shapes:
        raise NotImplementedError

    def _construct(self, path: str) -> None:
        """The second pass of a build: make the torch modules planned by :meth:`_shape`."""

    def _materialize(self) -> None:
        state = self.__dict__
        if state["_pending"]:
            state["_pending"] = False
            try:
                type(self)._construct(self, self._path())
            except BaseException:
                state["_pending"] = True
                raise
            module = self.call_module()
            # a container's items take their own settings
            self._settle(None if module is self else module)

    # --- what was set before the build -------------------------------------------------
    #
    # train()/eval() and requires_grad_() on a layer whose torch modules do not exist yet
    # are remembered in its own state; .to()/.half()/.cuda()/... reach the CONVERSIONS
    # buffer, which torch converts as it converts any buffer, from this layer or from any
    # parent, plain nn.Modules included. All of it is applied to the modules when they are
    # made, as torch's Lazy modules keep conversions in their uninitialized parameters.

    def _settle(self, module: nn.Module | None) -> None:
        """Give ``module``, just made for this layer, what was set on the layer before.

        ``None`` for a container, whose items take their own. The layer then drops its
        CONVERSIONS buffer, so a built model has the same buffers as a hand-written one.
        """
        probe: torch.Tensor | None = getattr(self, CONVERSIONS, None)
        if probe is not None:
            delattr(self, CONVERSIONS)
        if module is None:
            return
        state = self.__dict__
        if not state["training"]:
            module.train(False)
        carry = state.get("_carry")
        if carry:
            if "requires_grad" in carry:
                module.requires_grad_(carry["requires_grad"])
            for fn in carry.get("apply", ()):
                module.apply(fn)
        # the shared tensor itself: nothing converted it (a no-op conversion returns it
        # too); a copy (deepcopy, pickle) that kept its dtype and device was not converted
        if (
            probe is not None
            and probe is not _UNCONVERTED
            and (probe.dtype != _UNCONVERTED.dtype or probe.device != _UNCONVERTED.device)
        ):
            floating = probe.is_floating_point() or probe.is_complex()
            module.to(device=probe.device, dtype=probe.dtype if floating else None)

    def requires_grad_(self, requires_grad: bool = True) -> Layer:
        if self.built:
            super().requires_grad_(requires_grad)
            return self
        for module in self.modules():
            if isinstance(module, Layer):
                if not module.built:
                    module.__dict__.setdefault("_carry", {})["requires_grad"] = requires_grad
                else:
                    module.requires_grad_(requires_grad)
            else:  # a plain module in an unbuilt Sequential has its parameters already
                for p in module.parameters(recurse=False):
                    p.requires_grad_(requires_grad)
        return self

    def apply(self, fn: Callable[[nn.Module], None]) -> Any:
        """As ``nn.Module.apply``; before the build, ``fn`` also runs on the torch modules
        the build makes, so an init function given first is not lost."""
        if self._makes_own_modules and not self.built:
            self.__dict__.setdefault("_carry", {}).setdefault("apply", []).append(fn)
        return super().apply(fn)

    # --- hooks -------------------------------------------------------------------------
    #
    # A container calls the torch modules its layers built, not the layers, so a hook
    # goes on the module the layer built: it fires wherever that module runs. An unbuilt
    # layer has no module yet and says so.

    def _hook_owner(self, what: str) -> nn.Module | None:
        """The module a hook on this layer belongs on, or None for this layer itself."""
        if not self._makes_own_modules:
            return None
        if not self.built:
            raise RuntimeError(
                f"L.{type(self).__name__} {self._label()!r} is not built yet, so it has no "
                f"torch module to take {what}: call model.build(input_shape) first (batch "
                "first, None for a free batch) or call the model on one batch"
            )
        module = self.call_module()
        return None if module is self else module

    def register_forward_pre_hook(self, hook: Any, **kwargs: Any) -> RemovableHandle:
        owner = self._hook_owner("a forward pre-hook")
        if owner is None:
            return super().register_forward_pre_hook(hook, **kwargs)
        return owner.register_forward_pre_hook(hook, **kwargs)

    def register_forward_hook(self, hook: Any, **kwargs: Any) -> RemovableHandle:
        owner = self._hook_owner("a forward hook")
        if owner is None:
            return super().register_forward_hook(hook, **kwargs)
        return owner.register_forward_hook(hook, **kwargs)

    def register_full_backward_pre_hook(self, hook: Any, prepend: bool = False) -> RemovableHandle:
        owner = self._hook_owner("a backward pre-hook")
        if owner is None:
            return super().register_full_backward_pre_hook(hook, prepend)
        return owner.register_full_backward_pre_hook(hook, prepend)

    def register_full_backward_hook(self, hook: Any, prepend: bool = False) -> RemovableHandle:
        owner = self._hook_owner("a backward hook")
        if owner is None:
            return super().register_full_backward_hook(hook, prepend)
        return owner.register_full_backward_hook(hook, prepend)

    # --- parameters --------------------------------------------------------------------

    def _refuse_unbuilt(self, what: str, to: str = "give") -> None:
        if self.__dict__["_input_shapes"] is None:
            raise RuntimeError(
                f"L.{type(self).__name__} {self._label()!r} is not built yet, so it has no "
                f"{what} to {to}: call model.build(input_shape) first (batch first, None for "
                "a free batch, e.g. (None, 3, 32, 32)) or call the model on one batch"
            )

    # checked when called, not when first iterated: parameters() is a generator in torch

    def parameters(self, recurse: bool = True) -> Iterator[nn.Parameter]:
        self._refuse_unbuilt("parameters")
        return super().parameters(recurse)

    def buffers(self, recurse: bool = True) -> Iterator[torch.Tensor]:
        self._refuse_unbuilt("buffers")
        return super().buffers(recurse)

    def named_parameters(self, *args: Any, **kwargs: Any) -> Iterator[tuple[str, nn.Parameter]]:
        self._refuse_unbuilt("parameters")
        return super().named_parameters(*args, **kwargs)

    def named_buffers(self, *args: Any, **kwargs: Any) -> Iterator[tuple[str, torch.Tensor]]:
        self._refuse_unbuilt("buffers")
        return super().named_buffers(*args, **kwargs)

    def _unplan(self) -> None:
        """Forget shapes inferred by a first pass whose model failed to build."""
        if self.__dict__["_pending"]:
            self.__dict__.update(_input_shapes=None, _output_shapes=None, _pending=False)
            self.__dict__.pop("_ready", None)

    # A layer whose shapes are known but whose modules are not made yet (called on
    # Placeholders only) makes them as soon as anything looks at its submodules.

    def __getattr__(self, name: str) -> Any:
        if self.__dict__.get("_pending"):
            self._materialize()
        try:
            return super().__getattr__(name)
        except AttributeError:
            # layer.weight, layer.running_mean, ...: the tensors of the module it built,
            # as on the torch module itself (nn.Sequential users write model[0].weight)
            found = self._native_tensor(name)
            if found is None:
                if self.built or not self._makes_own_modules or name.startswith("_"):
                    raise
                # nn.init.xavier_uniform_(layer.weight) straight after L.Linear(20), or a
                # typo: which one cannot be told before the torch module exists
                raise AttributeError(
                    f"L.{type(self).__name__} {self._label()!r} has no attribute {name!r}: "
                    "check the spelling, or, if it is a tensor of its torch module (weight, "
                    "bias, ...), that exists only after model.build(input_shape) or a first "
                    "call on one batch (this layer is not built yet)"
                ) from None
            return found

    def _native_tensor(self, name: str) -> torch.Tensor | None:
        if name == "native" or name.startswith("_") or not self._makes_own_modules:
            return None  # "native": call_module looks it up, so no lookup from here
        if not self.built:
            return None
        native = self.call_module()
        if native is self:
            return None
        for tensors in (
            native.named_parameters(recurse=False),
            native.named_buffers(recurse=False),
        ):
            for key, tensor in tensors:
                if key == name:
                    return tensor
        return None

    def named_children(self) -> Iterator[tuple[str, nn.Module]]:
        self._materialize()
        return super().named_children()

    def named_modules(self, *args: Any, **kwargs: Any) -> Iterator[tuple[str, nn.Module]]:
        self._materialize()
        return super().named_modules(*args, **kwargs)  # type: ignore[no-any-return]

    # An unbuilt model's state_dict would be empty: saved, it is a checkpoint without
    # weights, and loaded into, torch calls every key of a good one unexpected.

    # A layer that holds no tensor has its whole (empty) state even unbuilt: a plain
    # nn.Module parent asks each child for its state_dict, and an L.ReLU among them must
    # not make the parent's checkpoint fail.

    def state_dict(self, *args: Any, **kwargs: Any) -> Any:
        self._refuse_stateful_unbuilt("state_dict")
        self._materialize()
        return super().state_dict(*args, **kwargs)

    def load_state_dict(self, *args: Any, **kwargs: Any) -> Any:
        self._refuse_stateful_unbuilt("parameters", "load a state_dict into")
        self._materialize()
        return super().load_state_dict(*args, **kwargs)

    def _refuse_stateful_unbuilt(self, what: str, to: str = "give") -> None:
        """Refuse while this layer, or a layer in it, is unbuilt and would hold tensors."""
        if self.__dict__["_input_shapes"] is not None:
            return
        for module in self.modules():
            if (
                isinstance(module, Layer)
                and not isinstance(module, Stateless)
                and module.__dict__["_input_shapes"] is None
            ):
                self._refuse_unbuilt(what, to)

    def _check_shapes(self, shapes: list[Shape], path: str) -> None:
        assert self._input_shapes is not None
        expected = self._input_shapes
        if len(shapes) != len(expected):
            raise ShapeError(
                path, f"was built for {len(expected)} input(s) and now gets {len(shapes)}"
            )
        for want, got in zip(expected, shapes, strict=True):
            if not self._compatible(want, got):
                raise ShapeError(
                    path,
                    "the input shape differs from the one the layer was built for "
                    "(only the batch dimension may change)",
                    expected=format_shape((None, *want[1:])),
                    got=got,
                    hint="a built layer keeps the input shape it was built for (its weights "
                    "and the layers after it depend on it); use a new layer for the other shape",
                )

    def _compatible(self, want: Shape, got: Sequence[int | None]) -> bool:
        if len(want) != len(got):
            return False
        free = self._free_axes()
        return all(
            i == 0 or i in free or w is None or w == g
            for i, (w, g) in enumerate(zip(want, got, strict=True))
        )

    def _free_axes(self) -> tuple[int, ...]:
        return self.free_axes

    def call_module(self) -> nn.Module:
        """The module a container registers and calls in this layer's place."""
        raise NotImplementedError

    def native_module(self) -> nn.Module:
        """The plain torch module this layer built (sharing its parameters)."""
        if not self.built:
            raise RuntimeError(
                f"{self._label()} is not built yet: call it on a tensor or a Placeholder first"
            )
        return self.call_module()

    # --- calling -----------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # a tensor first means an ordinary call: skip the placeholder checks
        if args and not isinstance(args[0], torch.Tensor):
            holders = _placeholder_args(args)
            if holders is not None:
                return self.call_symbolic(holders, **kwargs)
        return super().__call__(*args, **kwargs)

    def call_symbolic(self, inputs: list[Placeholder], **kwargs: Any) -> Any:
        """Apply this layer to placeholders: build it and record the call."""
        self._check_keywords(kwargs)
        shapes = [p.shape for p in inputs]
        # shapes only: the modules are made when a model holding this call is built
        # (or when anything asks for them), so a later mismatch leaves no parameter
        out = self._plan(shapes)
        if kwargs:
            out = self._call_shapes(shapes, keyword_shapes(kwargs, True, self._path()), out)
        node = Node(self, list(inputs), kwargs=dict(kwargs))
        node.outputs = to_placeholders(out, node)
        return node.outputs

    def _check_keywords(self, kwargs: dict[str, Any]) -> None:
        unknown = sorted(set(kwargs) - set(self.call_keywords))
        if unknown:
            accepted = list(self.call_keywords) or "no keywords"
            raise TypeError(
                f"L.{type(self).__name__}: unexpected call keyword(s) {unknown}; "
                f"a call accepts {accepted}"
            )

    def _call_shapes(self, shapes: list[Shape], kwargs: dict[str, Any], out: Shapes) -> Shapes:
        """Check the keywords of a call on placeholders (shapes of masks and states) and
        return its output shapes. A run's keywords are checked by the pre-hook that the
        layer puts on the module it builds."""
        return out

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
            inputs = tuple(inputs[0])
        if kwargs:
            self._check_keywords(kwargs)
        # "_ready": set by _first_call once a call has seen the layer whole, the one test
        # a call makes before it runs the built module
        try:
            if self.__dict__.get("_ready") or not self._first_call(inputs):
                self._check_tensors(inputs)
        except AttributeError:  # no .shape: said for what was given, not where it failed
            self.refuse_non_tensors(inputs)
            raise
        # the keywords' values are checked by the built module's pre-hook, which runs on
        # this call as on a container's call of the module
        return self.call_module()(*inputs, **kwargs)

    def refuse_non_tensors(self, inputs: Sequence[Any]) -> None:
        """Raise a one-line TypeError naming the first input that is not a tensor, if any."""
        expected = self.__dict__["_input_shapes"] or []
        for i, x in enumerate(inputs):
            if not isinstance(x, torch.Tensor):
                which = "" if len(inputs) == 1 else f" {i}"
                # the batch is free, whatever the build saw
                shape = f" {format_shape((None, *expected[i][1:]))}" if i < len(expected) else ""
                raise TypeError(
                    f"L.{type(self).__name__} {self._label()!r}: input{which} is "
                    f"{_describe(x)}; expected a tensor{shape}"
                ) from None

    def _first_call(self, inputs: Sequence[torch.Tensor]) -> bool:
        """Build from ``inputs`` unless built; True when this call built it (and so checked
        the input). ``_ready`` is set last, once every module is made: until then a call
        from another thread waits here instead of running layers still being built."""
        if torch.compiler.is_compiling():
            # traced, not run: a trace is one thread's, and dynamo cannot enter a lock
            return self._build_from(inputs)
        state = self.__dict__
        with _BUILD_LOCK:
            if state.get("_ready"):  # another thread's first call built it meanwhile
                return False
            built = self._build_from(inputs)
            state["_ready"] = True
            return built

    def _build_from(self, inputs: Sequence[torch.Tensor]) -> bool:
        state = self.__dict__
        if state["_input_shapes"] is None or state["_pending"]:
            self.build(*[tuple(x.shape) for x in inputs])
            self._follow_input(inputs[0])
            return True
        return False

    def _check_tensors(self, inputs: Sequence[torch.Tensor]) -> None:
        expected = self._input_shapes
        assert expected is not None
        if len(inputs) != len(expected) or not all(
            self._compatible(w, tuple(x.shape)) for w, x in zip(expected, inputs, strict=False)
        ):
            self._check_shapes([tuple(x.shape) for x in inputs], self._label())

    def _follow_input(self, x: Any) -> None:
        # built from a real tensor: put the new parameters where that tensor lives
        if isinstance(x, torch.Tensor) and x.device.type != "cpu":
            self.call_module().to(x.device)

    # --- summary -----------------------------------------------------------------------

    def summary(
        self,
        input_shape: Sequence[int | None] | None = None,
        print_fn: Callable[[str], object] = print,
    ) -> None:
        """Print each layer's output shape and parameter count, and the totals.

        As Keras's ``model.summary()``: no forward pass runs. An unbuilt model needs
        ``input_shape`` (batch first, ``None`` for a free batch) and is built from it.
        ``print_fn`` receives the table as one string; :func:`torchx.layers.summary`
        returns it instead.
        """
        print_fn(_summary.summary(self, input_shape))

    def _summary_rows(self, path: str, rows: list[_summary.Row], seen: set[int]) -> None:
        shapes = _summary.format_shapes(leaves(self.output_shape))
        rows.append((path, type(self).__name__, shapes, *_summary.count(self, seen)))

    # --- serialization -----------------------------------------------------------------

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments, as JSON-able data."""
        raise NotImplementedError

    def to_spec(self) -> dict[str, Any]:
        """This layer as plain data; ``from_spec`` rebuilds it (and builds it, if built)."""
        spec = self._spec_body()
        return {"format_version": SPEC_FORMAT_VERSION, **spec}

    def _spec_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": type(self).__name__}
        if self.layer_name is not None:
            body["name"] = self.layer_name
        body["config"] = _jsonable(self.get_config(), f"{type(self).__name__}.config")
        if self._input_shapes is not None:
            body["input_shapes"] = [list(s) for s in self._input_shapes]
        return body

    @classmethod
    def from_config(cls, config: dict[str, Any], name: str | None) -> Layer:
        return cls(**config, name=name)

    @classmethod
    def from_spec(cls, spec: dict[str, Any] | str) -> Layer:
        return _spec.from_spec(spec)

    def to_json(self, indent: int | None = 2) -> str:
        return _spec.dumps_json(self.to_spec(), indent)

    def to_yaml(self) -> str:
        return _spec.dumps_yaml(self.to_spec())

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())


def _describe(value: Any) -> str:
    """What a call was given, in a few words."""
    if isinstance(value, (list, tuple)):
        n = len(value)
        return f"a {type(value).__name__} of {n} item{'' if n == 1 else 's'}"
    if isinstance(value, dict):
        return f"a dict with keys {sorted(map(str, value))[:5]}"
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    return f"a {type(value).__name__}"


def _jsonable(value: Any, field: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, field) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v, f"{field}.{k}") for k, v in value.items()}
    if isinstance(value, torch.dtype):
        return str(value)
    raise TypeError(
        f"{field}: {value!r} ({type(value).__name__}) cannot be written to a spec; "
        "only numbers, strings, booleans, None and lists/dicts of them can"
    )
