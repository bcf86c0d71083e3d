"""Turn the device forms the scope accepts into a concrete placement."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from torchx.devices._errors import DeviceUnavailableError, GPUFallbackWarning
from torchx.devices._policy import MissingGPUPolicy, get_missing_gpu_policy

DeviceSpec = int | str | torch.device | Sequence[int]

ACCEPTED = (
    "an int >= 0 (GPU index), -1 (CPU), 'cpu', 'cuda:<n>', 'gpu:<n>', 'cuda:all', "
    "a torch.device, or a non-empty list of GPU indices"
)

_ALL = "all"


@dataclass(frozen=True)
class Placement:
    """Where a scope puts things.

    ``device`` receives new tensors and self-placing modules; ``device_ids`` lists the GPUs a
    ``DataParallel`` spreads over, and is empty unless the scope was given a list or ``cuda:all``.
    """

    device: torch.device
    device_ids: tuple[int, ...] = ()

    @property
    def parallel(self) -> bool:
        return bool(self.device_ids)


def _bad(value: object, why: str = "") -> ValueError:
    reason = f" ({why})" if why else ""
    return ValueError(f"device={value!r} is not a device{reason}; accepted: {ACCEPTED}")


def _gpu_index(value: object, text: str) -> int | str:
    if text == _ALL:
        return _ALL
    if not text.isdigit():
        raise _bad(value, f"GPU index {text!r} is not a non-negative integer")
    return int(text)


def _parse(value: object) -> tuple[str, int | str | None, tuple[int, ...]]:
    """Split ``value`` into (device type, index or 'all' or None, parallel ids) without I/O."""
    if isinstance(value, bool):
        raise _bad(value, "a bool is not a device index")
    if isinstance(value, int):
        if value == -1:
            return "cpu", None, ()
        if value < 0:
            raise _bad(value, "negative indices other than -1 mean nothing")
        return "cuda", value, ()
    if isinstance(value, torch.device):
        return value.type, value.index, ()
    if isinstance(value, str):
        text = value.strip().lower()
        kind, sep, rest = text.partition(":")
        if kind in ("cuda", "gpu"):
            return "cuda", (_gpu_index(value, rest) if sep else None), ()
        if text == "cpu":
            return "cpu", None, ()
        try:
            other = torch.device(text)
        except RuntimeError:
            raise _bad(value) from None
        return other.type, other.index, ()
    if isinstance(value, (list, tuple)):
        if not value:
            raise _bad(value, "the list of GPU indices is empty")
        for item in value:
            if isinstance(item, bool) or not isinstance(item, int) or item < 0:
                raise _bad(value, f"list item {item!r} is not a GPU index >= 0")
        if len(set(value)) != len(value):
            raise _bad(value, "the list repeats a GPU index")
        ids = tuple(int(i) for i in value)
        return "cuda", ids[0], ids
    raise _bad(value, f"type {type(value).__name__} is not understood")


def _gpu_count() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _missing(
    value: object, wanted: str, policy: MissingGPUPolicy | None, stacklevel: int
) -> Placement:
    """Refuse a device that is not there, or run on the CPU with a warning, as ``policy`` says."""
    if (policy or get_missing_gpu_policy()) == "error":
        raise DeviceUnavailableError(
            f"device={value!r} asks for {wanted}; use 'cpu' or -1, "
            "or pass on_missing_gpu='cpu' (or set TORCHX_MISSING_GPU=cpu) "
            "to fall back to the CPU with a warning"
        )
    warnings.warn(
        f"device={value!r} asks for {wanted}; running on the CPU because on_missing_gpu='cpu'",
        GPUFallbackWarning,
        stacklevel=stacklevel + 1,
    )
    return Placement(torch.device("cpu"))


#: device types that are always there, so a scope on them skips the availability check
_ALWAYS_THERE = frozenset(("cpu", "meta"))


def _other(
    value: object, device: torch.device, policy: MissingGPUPolicy | None, stacklevel: int
) -> Placement:
    """A device type other than cuda: cpu and meta always there, another unless its torch
    module (torch.mps, torch.xpu, ...) says it is not. A type without such a module is taken
    as given."""
    kind = device.type
    if kind in _ALWAYS_THERE:
        return Placement(device)
    backend = getattr(torch, kind, None)
    is_available = getattr(backend, "is_available", None)
    if callable(is_available) and not is_available():
        # an MPS or XPU scope on a machine without one would otherwise fail only at the
        # first tensor, with torch's list of every backend an operator has
        wanted = f"the {kind!r} device type but torch.{kind}.is_available() is False"
        return _missing(value, wanted, policy, stacklevel + 1)
    device_count = getattr(backend, "device_count", None)
    if device.index is not None and callable(device_count):
        # 'xpu:3' on a machine with one XPU (or 'mps:1': MPS has only 0), as 'cuda:99' is
        count = device_count()
        if device.index >= count:
            wanted = f"{kind!r} device {device.index} but this machine has {count} of them"
            return _missing(value, wanted, policy, stacklevel + 1)
    return Placement(device)


def resolve(value: object, policy: MissingGPUPolicy | None, stacklevel: int = 2) -> Placement:
    """Check ``value`` and the machine, and return where the scope will place things.

    ``policy`` None means the process-wide one, looked up only when a GPU is missing.
    """
    if isinstance(value, torch.device) and value.type != "cuda":
        return _other(value, value, policy, stacklevel + 1)
    kind, index, ids = _parse(value)
    if kind != "cuda":
        device = torch.device(kind, index) if isinstance(index, int) else torch.device(kind)
        return _other(value, device, policy, stacklevel + 1)
    count = _gpu_count()
    if index == _ALL:
        ids = tuple(range(count))
        index = 0
    elif index is None and count:
        index = torch.cuda.current_device()
    wanted = ids or ((index,) if isinstance(index, int) else ())
    missing = [i for i in wanted if i >= count] if wanted else [0]
    if count == 0 or missing:
        wanted_text = f"GPU {missing} but this machine has {count} CUDA device(s)"
        return _missing(value, wanted_text, policy, stacklevel + 1)
    assert isinstance(index, int)
    return Placement(torch.device("cuda", index), ids)
