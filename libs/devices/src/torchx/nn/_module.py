"""``torchx.nn.Module``: an ``nn.Module`` that follows the caller's device scope."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, TypeVar

import torch
from torch import nn

from torchx.devices._scope import STATE

_M = TypeVar("_M", bound="Module")

_PLACED = "_torchx_placed_on"
#: one of the module's tensors, kept when the module is placed (see Module.to)
_WITNESS = "_torchx_placed_witness"
#: the scope entry (STATE.entry) in which the placement was last confirmed
_SEEN = "_torchx_placed_seen"
_nn_call = nn.Module.__call__


def _check_positive(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{name}={value!r} is not a positive number; accepted: a number > 0")
    return float(value)


def _tensors(module: nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    yield from module.named_parameters()
    for name, buffer in module.named_buffers():
        yield f"buffer:{name}", buffer


def _witness(module: nn.Module) -> torch.Tensor | None:
    # _tensors yields the parameters first: torch moves a parameter in place (the object
    # stays the module's), while it replaces a buffer with a new tensor
    return next((tensor for _, tensor in _tensors(module)), None)


def _unbuilt(module: nn.Module, prefix: str = "") -> Iterator[tuple[str, nn.Module]]:
    """The outermost submodules whose parameters do not exist yet, with their names.

    torch asks each module's own ``_parameters``, so it leaves out the parameters such a
    module will make (torchx.layers before their build, torch's Lazy modules); both answer
    ``has_uninitialized_params()``, torch's name for the question.
    """
    for name, child in module.named_children():
        path = f"{prefix}{name}"
        unbuilt = getattr(child, "has_uninitialized_params", None)
        if callable(unbuilt) and unbuilt():
            yield path, child
        else:
            yield from _unbuilt(child, f"{path}.")


def _refuse_unbuilt(module: nn.Module, what: str, whose: str = "") -> None:
    for name, child in _unbuilt(module):
        raise RuntimeError(
            f"{what}: {whose}submodule {name!r} ({type(child).__name__}) is not built yet, so its "
            "parameters do not exist; build the model first (call it once on an example input)"
        )


def _pair_up(
    target: nn.Module, source: object, what: str
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Match every parameter and buffer of ``target`` with the same one of ``source``.

    Everything is checked before anything is written, so a mismatch changes nothing.
    """
    if not isinstance(source, nn.Module):
        raise TypeError(f"other={source!r} is not a torch.nn.Module; pass a module of like shape")
    _refuse_unbuilt(target, what)
    _refuse_unbuilt(source, what, "other's ")
    mine = dict(_tensors(target))
    theirs = dict(_tensors(source))
    if mine.keys() != theirs.keys():
        lacking = sorted(mine.keys() - theirs.keys())
        extra = sorted(theirs.keys() - mine.keys())
        raise ValueError(
            f"other does not match this module: other lacks {lacking}, other adds {extra}; "
            "accepted: a module with the same parameters and buffers"
        )
    pairs = []
    for name, tensor in mine.items():
        other = theirs[name]
        if tensor.shape != other.shape:
            raise ValueError(
                f"other.{name} has shape {tuple(other.shape)} but this module's has "
                f"{tuple(tensor.shape)}; accepted: equal shapes"
            )
        pairs.append((tensor, other))
    return pairs


def _forgetting_placements(conversion: str) -> Any:
    """Module's ``conversion`` (``to``, ``cuda``, ...): forget the cached placements, then
    convert as the next class up (nn.Module) does."""

    def convert(self: Module, *args: Any, **kwargs: Any) -> Any:
        self._forget_placements()
        return getattr(super(Module, self), conversion)(*args, **kwargs)

    convert.__name__ = conversion
    convert.__qualname__ = f"Module.{conversion}"
    convert.__doc__ = getattr(nn.Module, conversion).__doc__
    return convert


class Module(nn.Module):
    """A strict superset of :class:`torch.nn.Module` that places itself on the scope's device.

    Called inside :func:`torchx.devices.device_scope`, the module moves its parameters and
    buffers to the scope's device the first time it is not already there; later calls cost a
    single comparison. Outside every scope it stays where it was put. Subclasses may skip
    ``super().__init__()``: the module is initialised before their ``__init__`` runs.
    """

    _torchx_placed_on: torch.device | None

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        self = super().__new__(cls)
        # Doing nn.Module's set-up here is what lets subclasses assign layers in an
        # __init__ that never calls super().__init__().
        nn.Module.__init__(self)
        self.__dict__.update({_PLACED: None, _WITNESS: None, _SEEN: 0})
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Already initialised in __new__; running nn.Module.__init__ again would only wipe
        # what a subclass assigned before calling super().__init__(). Arguments still go up
        # the chain so cooperative bases see them.
        if args or kwargs:
            super().__init__(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        scope = STATE.current
        if scope is not None and (
            self._torchx_placed_on is not scope.device or self.__dict__[_SEEN] != STATE.entry
        ):
            self._place(scope.device)
        return _nn_call(self, *args, **kwargs)

    def _place(self, device: torch.device) -> None:
        placed = self._torchx_placed_on
        witness = self.__dict__[_WITNESS]
        if placed == device and (witness is None or witness.device == device):
            # nothing moved it since it was placed: only this scope entry is new
            self.__dict__.update({_PLACED: device, _SEEN: STATE.entry})
            return
        if not all(t.device == device for _, t in _tensors(self)):
            if device.type == "meta":
                self._refuse_meta()
            self.to(device)
        for sub in self.modules():
            if isinstance(sub, Module):
                sub.__dict__.update({_PLACED: device, _WITNESS: _witness(sub), _SEEN: STATE.entry})

    def _refuse_meta(self) -> None:
        # .to("meta") keeps shapes and drops every value: a scope must never do that
        # to weights it did not make. An empty tensor has no value to lose (an unbuilt
        # torchx layer holds one, to learn where its weights go).
        real = [name for name, t in _tensors(self) if t.device.type != "meta" and t.numel()]
        if not real:
            return
        raise RuntimeError(
            f"{type(self).__name__} was called inside device_scope('meta') but holds real "
            f"tensors ({', '.join(real[:3])}{', ...' if len(real) > 3 else ''}); moving them "
            "to meta would drop their values, so the module is left as it is. Call it "
            "outside the scope, or make a fresh model inside the scope for shape work"
        )

    def _forget_placement(self) -> None:
        self.__dict__.update({_PLACED: None, _WITNESS: None, _SEEN: 0})

    # Whatever may change where the tensors live forgets the cached placement: the
    # conversions below, here and in every torchx module inside. A parent that is a plain
    # nn.Module moves this module without calling them; the witness, a parameter torch
    # moves in place, shows that move at the first call of the next scope entry. (A move
    # that replaces the parameters, such as leaving the meta device, is caught only
    # through these methods; otherwise torch reports the device mismatch at the call, and
    # nothing is lost.) Reading a tensor's device costs about a microsecond inside a
    # scope, where torch's device mode sees every tensor access: hence once per entry.

    def _forget_placements(self) -> None:
        for sub in self.modules():
            if isinstance(sub, Module):
                sub._forget_placement()

    to = _forgetting_placements("to")
    to_empty = _forgetting_placements("to_empty")
    cuda = _forgetting_placements("cuda")
    cpu = _forgetting_placements("cpu")
    xpu = _forgetting_placements("xpu")
    type = _forgetting_placements("type")

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, (torch.Tensor, nn.Module)):
            self._forget_placement()
        super().__setattr__(name, value)

    def register_buffer(
        self, name: str, tensor: torch.Tensor | None, persistent: bool = True
    ) -> None:
        self._forget_placement()
        super().register_buffer(name, tensor, persistent)

    def register_parameter(self, name: str, param: nn.Parameter | None) -> None:
        self._forget_placement()
        super().register_parameter(name, param)

    def add_module(self, name: str, module: nn.Module | None) -> None:
        self._forget_placement()
        super().add_module(name, module)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)  # type: ignore[no-untyped-call]
        self._forget_placement()

    # Training helpers.

    def clip_grad_value(self, clip_value: float) -> None:
        """Clamp every gradient of this module into ``[-clip_value, clip_value]``, in place."""
        value = _check_positive("clip_value", clip_value)
        nn.utils.clip_grad_value_(self.parameters(), value)

    def clip_grad_norm(self, max_norm: float, norm_type: float = 2.0) -> float:
        """Rescale the gradients so their joint norm is at most ``max_norm``; return the norm
        they had before clipping."""
        limit = _check_positive("max_norm", max_norm)
        if not (norm_type == math.inf or _check_positive("norm_type", norm_type)):
            raise ValueError(f"norm_type={norm_type!r} is not valid; accepted: a number > 0, inf")
        total = nn.utils.clip_grad_norm_(self.parameters(), limit, norm_type=norm_type)
        return float(total)

    @torch.no_grad()
    def soft_update(self, other: nn.Module, tau: float) -> None:
        """Move every parameter and buffer a fraction ``tau`` of the way toward ``other``'s.

        ``self = (1 - tau) * self + tau * other``, as for target networks. Integer buffers
        (counters) are copied from ``other``.
        """
        if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not 0.0 <= tau <= 1.0:
            raise ValueError(f"tau={tau!r} is not a fraction; accepted: a number in [0, 1]")
        for mine, theirs in _pair_up(self, other, "soft_update"):
            source = theirs.to(mine.device)
            if mine.is_floating_point() or mine.is_complex():
                mine.lerp_(source.to(mine.dtype), float(tau))
            else:
                mine.copy_(source)

    @torch.no_grad()
    def hard_update(self, other: nn.Module) -> None:
        """Copy every parameter and buffer of ``other`` into this module."""
        for mine, theirs in _pair_up(self, other, "hard_update"):
            mine.copy_(theirs)

    def requires_grad_(self: _M, requires_grad: bool = True) -> _M:
        """As ``nn.Module.requires_grad_``; a submodule whose parameters are made later
        (an unbuilt torchx layer) is told too, and makes them with this setting."""
        super().requires_grad_(requires_grad)
        for _, child in _unbuilt(self):
            child.requires_grad_(requires_grad)
        return self

    def freeze(self: _M) -> _M:
        """Stop gradients for every parameter; returns the module."""
        self.requires_grad_(False)
        return self

    def unfreeze(self: _M) -> _M:
        """Let every parameter take gradients again; returns the module."""
        self.requires_grad_(True)
        return self

    def num_params(self, trainable_only: bool = False) -> int:
        """How many scalar parameters the module holds (only trainable ones if asked)."""
        _refuse_unbuilt(self, "num_params")
        return sum(p.numel() for p in self.parameters() if p.requires_grad or not trainable_only)
