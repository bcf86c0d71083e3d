"""``Lambda``: a parameter-free function as a layer, serialized by registered name."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, overload

from torch import nn

from ._errors import ShapeError, SpecError
from ._layer import Layer
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


class Lambda(Layer):
    """Applies ``fn`` to its input(s).

    ``fn`` is a callable or the name of one registered with :func:`register_lambda`.
    ``output_shape`` (without the batch dimension) skips shape inference; without
    it the function is run once on meta tensors. Only a registered function can be
    written to a spec: code is never pickled.
    """

    def __init__(
        self,
        fn: Callable[..., Any] | str,
        output_shape: Sequence[int] | None = None,
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
        self.fixed_shape: Shape | None = (
            None if output_shape is None else as_shape(list(output_shape), "output_shape")
        )
        self.native: nn.Module | None = None

    def _build(self, shapes: list[Shape], path: str) -> Shapes:
        label = str(self.fn_name or getattr(self.fn, "__name__", "fn"))
        self.native = LambdaModule(self.fn, label)
        if self.fixed_shape is not None:
            return (shapes[0][0], *self.fixed_shape)
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
        shape = None if self.fixed_shape is None else list(self.fixed_shape)
        return {"fn": self.fn_name, "output_shape": shape}
