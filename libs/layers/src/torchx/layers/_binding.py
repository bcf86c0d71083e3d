"""Binding a torch layer's constructor arguments to its signature, fast.

``inspect.Signature.bind`` is general and slow, and a model constructs many layers:
the common case (arguments that fit) is bound by :class:`_Binder`; anything unusual
goes through ``inspect`` (:func:`_slow_bind`), which words the error.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._torch_layer import TorchLayer

#: sizes that must be positive ints, checked at construction
COUNT_ARGUMENTS = ("out_features", "out_channels", "hidden_size", "num_heads", "nhead")


class _Binder:
    """Binds constructor arguments to a layer's signature without ``inspect``.

    ``Signature.bind`` is general and slow; a model builds many layers, so the common
    case (arguments that fit) is bound here, giving what ``bind`` would: the given
    arguments, then all of them with defaults, both in signature order.
    """

    __slots__ = (
        "bare",
        "counts",
        "index",
        "names",
        "order",
        "own_validate",
        "positional",
        "required",
        "simple",
        "template",
    )

    def __init__(self, sig: inspect.Signature, own_validate: bool = False) -> None:
        params = list(sig.parameters.values())
        # only plain parameters are bound here; anything else always goes to inspect
        self.simple = all(
            p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            for p in params
        )
        self.positional = tuple(
            p.name for p in params if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        self.order = tuple(p.name for p in params)
        self.names = frozenset(self.order)
        self.required = tuple(p.name for p in params if p.default is p.empty)
        # every argument in signature order, with its default (required ones are
        # always overwritten): updating a copy keeps that order
        self.template = {p.name: p.default for p in params}
        self.index = {name: i for i, name in enumerate(self.order)}
        self.counts = tuple(k for k in COUNT_ARGUMENTS if k in self.names)
        # a layer class with its own _validate has it called on every construction
        self.own_validate = own_validate
        #: whether a call without arguments binds (to the defaults)
        self.bare = self.simple and not self.required

    def bind(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        if not self.simple or len(args) > len(self.positional):
            return None
        if not args:
            given = {}
        elif len(args) == 1:
            given = {self.positional[0]: args[0]}
        else:  # the lengths were compared just above
            given = dict(zip(self.positional, args))  # noqa: B905
        # the given arguments come in signature order as long as each keyword comes
        # after everything before it; only otherwise are they sorted
        ordered = True
        if kwargs:
            index = self.index
            last = len(args) - 1
            for key, value in kwargs.items():
                i = index.get(key)
                if i is None or key in given:
                    return None
                if i < last:
                    ordered = False
                last = i
                given[key] = value
        for key in self.required:
            if key not in given:
                return None
        full = self.template.copy()
        if not given:
            return given, full
        full.update(given)
        if ordered:
            return given, full
        return {n: v for n, v in full.items() if n in given}, full


def _slow_bind(
    cls: type[TorchLayer], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    sig = cls.signature()
    unknown = sorted(set(kwargs) - set(sig.parameters))
    if unknown:
        raise TypeError(
            f"L.{cls.__name__}: unexpected argument(s) {unknown}; accepted arguments: {sig}"
        )
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"L.{cls.__name__}: {e}; accepted arguments: {sig}") from None
    config = dict(bound.arguments)
    bound.apply_defaults()
    return config, dict(bound.arguments)
