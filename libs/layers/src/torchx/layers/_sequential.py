"""``Sequential``: a chain of layers (and plain nn.Modules) with inferred shapes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import torch
from torch import nn

from . import _summary
from ._errors import ShapeError
from ._layer import Layer, nesting_of
from ._shapes import Shape, Shapes, fixed_features, leaves
from ._spec import layer_from_body
from ._torch_layer import TorchLayer, plan_items

# In a Sequential's __dict__: the names of the modules a call runs, in order ...
_NAMES = "_names"
# ... and the input features a call compares in one step, set by the build (None: a call
# checks its input in full: a size is free, or the first item has free axes).
_FEATURES = "_features"


class Sequential(Layer):
    """Like ``nn.Sequential``, but every layer's input size is inferred.

    Items may be torchx layers or plain ``nn.Module`` objects; the output shape of a
    plain module is found by running it on the meta device. Once built, the
    container holds the plain torch modules themselves (keys ``"0"``, ``"1"``, ... as
    in ``nn.Sequential``), so a call costs what ``nn.Sequential`` costs.
    """

    _makes_own_modules: ClassVar[bool] = False  # its items make their own

    def __init__(self, *layers: nn.Module, name: str | None = None) -> None:
        # items is a plain list attribute; nn.Module.__setattr__ would only pass it on
        self._init_layer(
            name,
            {
                "items": list(layers),
                "_nesting": nesting_of(layers, "L.Sequential"),
                _NAMES: tuple(str(i) for i in range(len(layers))),
            },
        )
        self.items: list[nn.Module]
        for i, item in enumerate(layers):
            if not isinstance(item, nn.Module):
                raise TypeError(
                    f"Sequential item {i} is a {type(item).__name__}; expected a torchx layer "
                    "or an nn.Module"
                )
        for i, item in enumerate(layers):
            self.add_module(str(i), item)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> nn.Module:
        """The layer written at ``index`` while the module registered there is its own (or
        the layer itself, before building); the module registered there otherwise, as
        ``nn.Sequential`` answers, once something swapped it (setattr, register_module,
        torch.ao.quantization.convert)."""
        item = self.items[index]
        registered = self.get_submodule(self.__dict__[_NAMES][index])
        if registered is item or (
            isinstance(item, Layer) and item.built and registered is item.call_module()
        ):
            return item
        return registered

    def _shape(self, shapes: list[Shape], path: str) -> Shapes:
        if len(shapes) != 1:
            raise ShapeError(path, f"Sequential takes one input, got {len(shapes)}")
        item_shapes: list[Shapes] = []
        planned: list[Layer] = []
        try:
            shape = plan_items(self.items, path, shapes[0], planned, item_shapes)
        except BaseException:
            # the model did not build: its layers go back to unbuilt, as they were
            for item in planned:
                item._unplan()
            raise
        features = None if self._free_axes() else fixed_features(shapes[0])
        self.__dict__.update(
            item_shapes=item_shapes, _pending=True, _fresh=planned, **{_FEATURES: features}
        )
        self.item_shapes: list[Shapes]
        return shape

    def _unplan(self) -> None:
        if self._pending:
            for item in self.__dict__.pop("_fresh", ()):
                item._unplan()
        super()._unplan()

    def _construct(self, path: str) -> None:
        self.__dict__.pop("_fresh", None)
        for i, item in enumerate(self.items):
            if isinstance(item, TorchLayer):
                cls = type(item)
                state = item.__dict__
                if state["_pending"] and cls._plain_construct:
                    # TorchLayer._materialize, inline: each call made here costs more than
                    # anywhere else in a build, as the weight init of the layer before has
                    # pushed the code it runs out of the CPU caches
                    state["_pending"] = False
                    try:
                        kwargs = state.pop("_torch_kwargs")
                        try:
                            native = cls.torch_cls(**kwargs)
                        except (ValueError, TypeError, RuntimeError, AssertionError) as e:
                            where = item._path()
                            raise item._make_error(kwargs, state["_input_shapes"], where, e) from e
                        item.add_module("native", native)
                    except BaseException:
                        state["_pending"] = True
                        raise
                    item._settle(native)
                    item = native
                else:
                    item = item.call_module()  # which makes the module of a planned layer
            elif isinstance(item, Layer):
                item._materialize()
                if not isinstance(item, Sequential):  # a nested Sequential stays itself
                    item = item.call_module()
            self.add_module(str(i), item)  # the built module in the layer's place

    def call_module(self) -> nn.Module:
        return self

    def _chain(self) -> tuple[nn.Module, ...]:
        """The modules registered as "0", "1", ... now, in order."""
        return tuple(getattr(self, name) for name in self.__dict__[_NAMES])

    def _free_axes(self) -> tuple[int, ...]:
        first = self.items[0] if self.items else None
        return first._free_axes() if isinstance(first, Layer) else ()

    def native_module(self) -> nn.Module:
        if not self.built:
            super().native_module()
        self._materialize()
        return nn.Sequential(
            *[m.native_module() if isinstance(m, Sequential) else m for m in self._chain()]
        )

    def forward(self, x: Any) -> Any:
        state = self.__dict__
        if state["_input_shapes"] is None or state["_pending"]:
            self.build(tuple(x.shape))
            self._follow_input(x)
        else:
            features = state.get(_FEATURES)
            if features is None or x.shape[1:] != features:
                self._check_tensors([x])
        # Each module is looked up at each call, as nn.Sequential does: whatever put it
        # there (setattr, register_module, torch.ao.quantization.convert writing torch's
        # registry of submodules directly), the module registered now is the one that
        # runs; nothing is kept between calls that could go stale. nn.Module.__getattr__
        # is where getattr(self, name) ends for a submodule's name, without the failed
        # ordinary lookup first (an AttributeError made and dropped per module) or
        # Layer.__getattr__'s pending check (the build above has settled that). Under
        # torch.compile and torch.export: plain getattr, which every supported dynamo traces.
        lookup: Callable[[nn.Module, str], Any] = getattr
        if not torch.compiler.is_compiling():
            lookup = nn.Module.__getattr__
        for name in state[_NAMES]:
            x = lookup(self, name)(x)
        return x

    def get_config(self) -> dict[str, Any]:
        specs = []
        for i, item in enumerate(self.items):
            if not isinstance(item, Layer):
                raise TypeError(
                    f"Sequential item {i} is a plain {type(item).__name__}, which has no spec; "
                    "wrap it in a torchx layer or a registered L.Lambda"
                )
            specs.append(item._spec_body())
        return {"layers": specs}

    @classmethod
    def from_config(cls, config: dict[str, Any], name: str | None) -> Layer:
        layers = config.get("layers")
        if not isinstance(layers, list):
            raise TypeError(f"Sequential.config.layers={layers!r}: expected a list of layer specs")
        items = [layer_from_body(b, f"Sequential.config.layers[{i}]") for i, b in enumerate(layers)]
        return cls(*items, name=name)

    def _summary_rows(self, path: str, rows: list[_summary.Row], seen: set[int]) -> None:
        for i, item in enumerate(self.items):
            where = f"{path}.{i}"
            if isinstance(item, Layer):
                module = self.get_submodule(str(i))
                if module is item:  # a container lists its own items
                    item._summary_rows(where, rows, seen)
                    continue
                shapes = _summary.format_shapes(leaves(item.output_shape))
                kind = type(item).__name__
            else:
                module = item
                shapes = _summary.format_shapes(leaves(self.item_shapes[i]))
                kind = type(item).__name__
            rows.append((where, kind, shapes, *_summary.count(module, seen)))

    def extra_repr(self) -> str:
        return ""
