"""``Sequential``: a chain of layers (and plain nn.Modules) with inferred shapes."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, overload

import torch
from torch import nn

from . import _summary
from ._errors import ShapeError, format_shape
from ._holders import built_holder, note_holder
from ._layer import Layer, Stateless, nesting_of
from ._shapes import Shape, Shapes, fixed_features, leaves
from ._spec import layer_from_body
from ._torch_layer import TorchLayer, plan_items

# In a Sequential's __dict__: the names of the modules a call runs, in order ...
_NAMES = "_names"
# ... and the input features a call compares in one step, set by the build (None: a call
# checks its input in full: a size is free, or the first item has free axes).
_FEATURES = "_features"
# What a build sets in a Sequential's __dict__: kept to restore a refused rearrangement.
_BUILD_STATE = ("_input_shapes", "_output_shapes", "_pending", "item_shapes", _FEATURES, "_ready")


class Sequential(Layer, Stateless):
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
            nn.Module.add_module(self, str(i), item)

    def __len__(self) -> int:
        return len(self.items)

    # --- changing the chain, as nn.Sequential's own methods do ---------------------------
    #
    # The chain is rearranged in one step (_rearrange): a built container is built again for
    # the input it was built for, so a new layer gets its weights at once and the layers
    # already built keep theirs; a chain that does not fit is refused and left as it was.

    def append(self, module: nn.Module) -> Sequential:
        """Add ``module`` at the end of the chain, named ``str(len(self))``."""
        self._rearrange(_appended(self._pairs(), [module]))
        return self

    def extend(self, modules: Iterable[nn.Module]) -> Sequential:
        """Add each of ``modules`` at the end of the chain, in order, as ``append`` does."""
        self._rearrange(_appended(self._pairs(), modules))
        return self

    def insert(self, index: int, module: nn.Module) -> Sequential:
        """Put ``module`` before position ``index`` (``-len(self) <= index <= len(self)``).

        It takes the number ``str(index)``; the numbered modules after it move up one
        number, as in ``nn.Sequential``; a module registered under a name keeps it.
        """
        size = len(self)
        if not -size <= index <= size:
            raise IndexError(f"Sequential.insert: index {index} is out of range for {size} items")
        if index < 0:
            index += size  # -1 is before the last item, as in list.insert
        pairs = [
            (str(i + 1) if i >= index and name == str(i) else name, item)
            for i, (name, item) in enumerate(self._pairs())
        ]
        pairs.insert(index, (str(index), module))
        self._rearrange(pairs)
        return self

    def pop(self, index: int | slice = -1) -> nn.Module:
        """Take the module at ``index`` out of the chain and return it (see ``__delitem__``);
        a slice's modules come back as a Sequential, as ``self[index]`` gives them."""
        module = self[index]
        del self[index]
        return module

    def __setitem__(self, index: int, module: nn.Module) -> None:
        """Put ``module`` at ``index``, under the name the position has."""
        pairs = self._pairs()
        pairs[index] = (pairs[index][0], module)
        self._rearrange(pairs)

    def __delitem__(self, index: int | slice) -> None:
        """Remove the module(s) at ``index``; the rest are numbered "0", "1", ... again, as
        ``nn.Sequential`` numbers them after a deletion (a named module included)."""
        chain = self._chain_items()
        del chain[index]
        self._rearrange([(str(i), item) for i, item in enumerate(chain)])

    def add_module(self, name: str, module: nn.Module | None) -> None:
        """As ``nn.Module.add_module``; a module under a new name joins the end of the chain,
        as it would run last in an ``nn.Sequential`` (``register_module`` comes here too)."""
        names = self.__dict__.get(_NAMES)
        if names is None or name in names or module is None:
            super().add_module(name, module)
            return
        self._rearrange([*self._pairs(), (name, module)])

    def __setattr__(self, name: str, value: Any) -> None:
        names = self.__dict__.get(_NAMES)
        if isinstance(value, nn.Module) and names is not None and name not in names:
            self.add_module(name, value)  # a new name: the module joins the chain
            return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        names = self.__dict__.get(_NAMES, ())
        if name not in names:
            super().__delattr__(name)
            return
        self._rearrange([(n, m) for n, m in self._pairs() if n != name])

    def _chain_items(self) -> list[nn.Module]:
        """What each position of the chain holds, as ``self[i]`` answers."""
        return [self[i] for i in range(len(self.items))]

    def _pairs(self) -> list[tuple[str, nn.Module]]:
        """``(name, module)`` at each position of the chain, in order."""
        return list(zip(self.__dict__[_NAMES], self._chain_items(), strict=True))

    def _rearrange(self, pairs: Sequence[tuple[str, nn.Module]]) -> None:
        """Make ``pairs``, ``(name, module)``, the container's chain, in order."""
        self._materialize()  # shapes planned by a symbolic call: made first, kept below
        for i, (_, item) in enumerate(pairs):
            if not isinstance(item, nn.Module):
                raise TypeError(
                    f"Sequential item {i} is a {type(item).__name__}; expected a torchx layer "
                    "or an nn.Module"
                )
        names = [n for n, _ in pairs]
        if len(set(names)) != len(names):
            clash = next(n for n in names if names.count(n) > 1)
            raise ValueError(
                f"Sequential: two modules would both be named {clash!r}; register the module "
                "under a name of its own (register_module) instead"
            )
        state = self.__dict__
        before = {k: state[k] for k in (*_BUILD_STATE, "_nesting") if k in state}
        pairs_now = zip(state[_NAMES], self.items, strict=True)
        old = [(n, self.get_submodule(n), item) for n, item in pairs_now]
        nesting = nesting_of([m for _, m in pairs], "L.Sequential")
        self._register([(n, m, m) for n, m in pairs], nesting)
        shapes = before["_input_shapes"]
        if shapes is None:
            return
        where = self._path()
        state.update(_input_shapes=None, _output_shapes=None, _pending=False)
        state.pop("_ready", None)  # a call builds it again (restored below if refused)
        try:
            try:
                out = self._plan(shapes, where)
            except ShapeError as e:
                raise self._misfit(e, where, pairs, {id(item) for _, _, item in old}) from None
            if out != before["_output_shapes"]:
                self._refuse_if_held(where, before["_output_shapes"], out)
            self._materialize()
        except BaseException:
            # refused (a layer that does not fit): the chain it had, built as it was
            self._unplan()
            self._register(old, before["_nesting"])
            for k in _BUILD_STATE:
                state.pop(k, None)
            state.update(before)
            raise

    @staticmethod
    def _misfit(
        error: ShapeError, where: str, pairs: Sequence[tuple[str, nn.Module]], kept: set[int]
    ) -> ShapeError:
        """``error`` worded for the change that caused it: when a layer the chain kept
        (built for the input it had) now gets another one, the change is what misfits."""
        head = error.path[len(where) + 1 :].split(".")[0].split(":")[0]
        if not error.path.startswith(f"{where}.") or not head.isdigit():
            return error
        index = int(head)
        item = pairs[index][1] if index < len(pairs) else None
        if id(item) not in kept or error.got is None or error.expected is None:
            return error
        return ShapeError(
            where,
            f"after this change item {index} ({type(item).__name__}), kept as it was built, "
            f"gets input {format_shape((None, *error.got[1:]))} but was built for {error.expected}",
            hint=f"give the changed layer an output of {error.expected}, or replace the "
            f"items from {index} on too",
        )

    def _refuse_if_held(self, where: str, was: Shapes, now: Shapes) -> None:
        """Refuse a change of output shape while a built layer holds this container: that
        layer was built for the shape it had, and would fail at its next call."""
        holder = built_holder(self)
        if holder is not None:
            label = holder.__dict__.get("layer_name") or type(holder).__name__
            raise ShapeError(
                where,
                f"this change makes its output {_summary.format_shapes(leaves(now))} instead "
                f"of {_summary.format_shapes(leaves(was))}, but it sits inside the built "
                f"{label}, which was built for the output it had",
                hint="make the change through the outer model (its own append, insert, ...), "
                "or build a new outer model from the changed parts",
            )

    def _register(self, entries: list[tuple[str, nn.Module, nn.Module]], nesting: int) -> None:
        """Register ``(name, module, item)`` entries as the chain, in this order."""
        state = self.__dict__
        for n in state[_NAMES]:
            with contextlib.suppress(AttributeError):  # a name deleted already
                nn.Module.__delattr__(self, n)
        state.update(
            items=[item for _, _, item in entries],
            _nesting=nesting,
            **{_NAMES: tuple(n for n, _, _ in entries)},
        )
        for n, module, _ in entries:
            nn.Module.add_module(self, n, module)

    @overload
    def __getitem__(self, index: int) -> nn.Module: ...

    @overload
    def __getitem__(self, index: slice) -> Sequential: ...

    def __getitem__(self, index: int | slice) -> nn.Module:
        """The layer written at ``index`` while the module registered there is its own (or
        the layer itself, before building); the module registered there otherwise, as
        ``nn.Sequential`` answers, once something swapped it (setattr, register_module,
        torch.ao.quantization.convert).

        A slice gives a new Sequential of those modules (shared, not copied) under the
        names they have here, as ``nn.Sequential``'s slice keeps its names; a run of
        consecutive items of a built chain comes built for the input they were built for."""
        if isinstance(index, slice):
            self._materialize()
            pairs = self._pairs()
            part = Sequential()
            part._rearrange(pairs[index])
            start, stop, step = index.indices(len(pairs))
            shapes = self.__dict__.get("_input_shapes")
            if step == 1 and start < stop and shapes is not None:
                given = shapes[0] if start == 0 else self.item_shapes[start - 1]
                assert isinstance(given, tuple)  # a chain passes one tensor between items
                part.build(given)
            return part
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
        for part in self.items:
            if isinstance(part, Sequential):
                note_holder(part, self)
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
        names = self.__dict__[_NAMES]
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
            # the built module in the layer's place (a name of the chain: nothing to adopt)
            nn.Module.add_module(self, names[i], item)

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
        try:
            if state.get("_ready") or not self._first_call((x,)):
                features = state.get(_FEATURES)
                if features is None or x.shape[1:] != features:
                    self._check_tensors([x])
        except AttributeError:  # no .shape: said for what was given, not where it failed
            self.refuse_non_tensors([x])
            raise
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
                module = self.get_submodule(self.__dict__[_NAMES][i])
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


def _appended(
    pairs: list[tuple[str, nn.Module]], modules: Iterable[nn.Module]
) -> list[tuple[str, nn.Module]]:
    """``pairs`` with each of ``modules`` added as ``nn.Sequential.append`` adds it: under
    the name ``str(len)``, which replaces the module of that name where it is, if any."""
    for module in modules:
        name = str(len(pairs))
        taken = [i for i, (n, _) in enumerate(pairs) if n == name]
        if taken:
            pairs[taken[0]] = (name, module)
        else:
            pairs.append((name, module))
    return pairs
