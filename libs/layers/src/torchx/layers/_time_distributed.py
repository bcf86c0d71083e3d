"""``TimeDistributed``: apply layers to every step of a sequence."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from ._errors import ShapeError
from ._holders import note_holder
from ._layer import Layer, Stateless, nesting_of
from ._modules import TimeDistributedModule
from ._sequential import Sequential
from ._shapes import Shape, Shapes
from ._spec import layer_from_body


class TimeDistributed(Layer, Stateless):
    """Applies one layer, or a chain of layers, to each slice ``x[:, t]``.

    The input is ``(batch, time, ...features...)``; the layers see
    ``(batch * time, ...features...)`` and the output is ``(batch, time, ...)``.
    """

    _makes_own_modules: ClassVar[bool] = False  # its items make their own

    free_axes: ClassVar[tuple[int, ...]] = (1,)

    def __init__(self, *layers: Layer, name: str | None = None) -> None:
        super().__init__(name)
        if not layers or not all(isinstance(x, Layer) for x in layers):
            raise TypeError("TimeDistributed takes one or more torchx layers")
        self.inner: Layer = layers[0] if len(layers) == 1 else Sequential(*layers)
        self.__dict__["_nesting"] = nesting_of([self.inner], "L.TimeDistributed")
        self.native: nn.Module | None = None

    def _shape(self, shapes: list[Shape], path: str) -> Shapes:
        if len(shapes) != 1 or len(shapes[0]) < 3:
            raise ShapeError(
                path,
                "TimeDistributed needs one input of at least 3 dimensions",
                expected="(batch, time, ...features...)",
                got=shapes[0] if shapes else None,
            )
        batch, steps, *rest = shapes[0]
        merged = None if batch is None or steps is None else batch * steps
        fresh = self.inner._input_shapes is None
        out = self.inner._plan([(merged, *rest)], path=f"{path}.inner")
        if not isinstance(out, tuple):
            if fresh:
                self.inner._unplan()
            raise ShapeError(path, "the wrapped layers must return a single tensor")
        if isinstance(self.inner, Sequential):
            note_holder(self.inner, self)
        self.__dict__["_pending"] = True
        return (batch, steps, *out[1:])

    def _construct(self, path: str) -> None:
        self.inner._materialize()
        self.native = TimeDistributedModule(self.inner.call_module())

    def _unplan(self) -> None:
        if self._pending:
            self.inner._unplan()
        super()._unplan()

    def call_module(self) -> nn.Module:
        self._materialize()
        if self.native is None:
            raise RuntimeError(f"{self._label()} is not built yet")
        return self.native

    def get_config(self) -> dict[str, Any]:
        return {"layer": self.inner._spec_body()}

    @classmethod
    def from_config(cls, config: dict[str, Any], name: str | None) -> Layer:
        inner = layer_from_body(config.get("layer"), "TimeDistributed.config.layer")
        return cls(inner, name=name)
