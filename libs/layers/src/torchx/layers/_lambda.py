"""``Lambda``: a parameter-free function as a layer, serialized by registered name."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, overload

from torch import nn

from ._errors import ShapeError, SpecError
from ._layer import Layer, Stateless
from ._meta import eval_on_meta
from ._modules import LambdaModule
from ._shapes import Shape, Shapes, as_shape

_REGISTRY: dict[str, Callable[..., Any]] = {}

F = Callable[..., Any]


@overload
def register_lambda(name: str) -> Callable[[F], F]: ...
@overload
def register_lambda(name: str, fn: F) -> F: ...
def register_lambda(name: str, fn: F | None = None) -> Any:
    """Register ``fn`` under ``name`` so a :class:`Lambda` using it can be serialized.

    Works as ``register_lambda("double", fn)`` or as a decorator
    ``@register_lambda("double")``. Registering another function under a taken name
    is an error.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name={name!r}: a lambda name must be a non-empty string")

    def register(f: F) -> F:
        if not callable(f):
            raise TypeError(f"register_lambda({name!r}): {f!r} is not callable")
        if _REGISTRY.get(name, f) is not f:
            raise ValueError(f"register_lambda: the name {name!r} is already taken")
        _REGISTRY[name] = f
        return f

    return register if fn is None else register(fn)


def registered_lambdas() -> dict[str, Callable[..., Any]]:
    return dict(_REGISTRY)


class Lambda(Layer, Stateless):
    """Applies ``fn`` to its input(s).

    ``fn`` is a callable or the name of one registered with :func:`register_lambda`.
    ``output_shape`` skips shape inference: a shape without the batch dimension, or
    a function from the input shapes (one argument per input, batch included, None
    for unknown sizes) to the whole output shape(s). Without it the function is run
    once on meta tensors. Only registered functions can be written to a spec (a
    shape function too, by its registered name): code is never pickled.
    """

    def __init__(
        self,
        fn: Callable[..., Any] | str,
        output_shape: Sequence[int | None] | Callable[..., Any] | str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name)
        if isinstance(fn, str):
            if fn not in _REGISTRY:
                raise SpecError(
                    f"Lambda fn={fn!r} is not a registered name; registered: {sorted(_REGISTRY)}. "
                    "Register it first with L.register_lambda(name, fn)"
                )
            self.fn_name: str | None = fn
            self.fn = _REGISTRY[fn]
        elif callable(fn):
            self.fn = fn
            self.fn_name = next((k for k, v in _REGISTRY.items() if v is fn), None)
        else:
            raise TypeError(f"Lambda fn={fn!r}: expected a callable or a registered name")
        self.shape_fn: Callable[..., Any] | None = None
        self.shape_fn_name: str | None = None
        self.fixed_shape: Shape | None = None
        if isinstance(output_shape, str):
            if output_shape not in _REGISTRY:
                raise SpecError(
                    f"Lambda output_shape={output_shape!r} is not a registered name; "
                    f"registered: {sorted(_REGISTRY)}"
                )
            self.shape_fn, self.shape_fn_name = _REGISTRY[output_shape], output_shape
        elif callable(output_shape):
            self.shape_fn = output_shape
            self.shape_fn_name = next((k for k, v in _REGISTRY.items() if v is output_shape), None)
        elif output_shape is not None:
            self.fixed_shape = as_shape(list(output_shape), "output_shape")
        self.native: nn.Module | None = None

    def _build(self, shapes: list[Shape], path: str) -> Shapes:
        label = str(self.fn_name or getattr(self.fn, "__name__", "fn"))
        self.native = LambdaModule(self.fn, label)
        if self.fixed_shape is not None:
            return (shapes[0][0], *self.fixed_shape)
        if self.shape_fn is not None:
            return _checked_shapes(self.shape_fn(*shapes), path)
        out = eval_on_meta(self.fn, shapes, path)
        if out is None:
            raise ShapeError(path, "the function returned no tensor")
        return out

    def call_module(self) -> nn.Module:
        if self.native is None:
            raise RuntimeError(f"{self._label()} is not built yet")
        return self.native

    def get_config(self) -> dict[str, Any]:
        if self.fn_name is None:
            raise SpecError(
                f"Lambda {self._label()}: its function is not registered, so it cannot be "
                "serialized; call L.register_lambda('some_name', fn) first"
            )
        shape: Any = None if self.fixed_shape is None else list(self.fixed_shape)
        if self.shape_fn is not None:
            if self.shape_fn_name is None:
                raise SpecError(
                    f"Lambda {self._label()}: its output_shape function is not registered, so "
                    "it cannot be serialized; call L.register_lambda('some_name', fn) first"
                )
            shape = self.shape_fn_name
        return {"fn": self.fn_name, "output_shape": shape}


def _checked_shapes(value: Any, path: str) -> Shapes:
    """The result of an output_shape function: a shape, or a list/tuple of shapes."""
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(v, (list, tuple)) for v in value)
    ):
        return [_checked_shapes(v, path) for v in value]
    if isinstance(value, (list, tuple)) and all(
        v is None or (isinstance(v, int) and not isinstance(v, bool) and v > 0) for v in value
    ):
        return tuple(value)
    raise ShapeError(
        path,
        f"output_shape function returned {value!r}; expected a shape such as (None, 4, 8) "
        "(batch included) or a list of shapes",
    )
