"""``device_scope``: a per-thread, nestable, exception-safe device (and dtype) context."""

from __future__ import annotations

import itertools
import threading

import torch

from torchx.devices._dtype_mode import FLOAT_DTYPES, ScopeDtypeMode
from torchx.devices._placement import DeviceSpec, Placement, resolve
from torchx.devices._policy import MissingGPUPolicy, check_policy


class _ThreadState(threading.local):
    def __init__(self) -> None:
        # (scope, the dtype mode its entry pushed or None), innermost last.
        self.stack: list[tuple[DeviceScope, ScopeDtypeMode | None]] = []
        # The innermost scope, kept apart from the stack so the per-call check in
        # torchx.nn.Module is a single attribute read.
        self.current: DeviceScope | None = None
        # A number no other entry or exit (of any thread) has had: a torchx.nn.Module
        # looks at where its tensors are once per scope entry, not at every call.
        self.entry = 0


#: the numbers scope entries and exits take for STATE.entry
_ENTRIES = itertools.count(1)


STATE = _ThreadState()


class DeviceScope:
    """A device (and optional floating dtype) for the code inside a ``with`` block.

    Made by :func:`device_scope`. The same object may be entered again, nested, or from
    several threads; each entry restores exactly what it changed.
    """

    __slots__ = ("device", "device_ids", "dtype", "requested")

    def __init__(self, requested: object, placement: Placement, dtype: torch.dtype | None) -> None:
        self.requested = requested
        self.device: torch.device = placement.device
        self.device_ids: tuple[int, ...] = placement.device_ids
        self.dtype = dtype

    @property
    def parallel(self) -> bool:
        """True when the scope spreads ``DataParallel`` over a list of GPUs."""
        return bool(self.device_ids)

    def __repr__(self) -> str:
        extra = f", device_ids={list(self.device_ids)}" if self.device_ids else ""
        dtype = f", dtype={self.dtype}" if self.dtype is not None else ""
        return f"DeviceScope(device={self.device}{extra}{dtype})"

    def __enter__(self) -> DeviceScope:
        # torch.device as a context manager is torch's own, thread-local way of sending
        # factories to a device: entering pushes a fresh mode and leaving pops it, so one
        # device object may be entered at several depths at once.
        self.device.__enter__()
        mode = None
        if self.dtype is not None:
            try:
                mode = ScopeDtypeMode(self.dtype)
                mode.__enter__()  # type: ignore[no-untyped-call]
            except BaseException:
                self.device.__exit__(None, None, None)
                raise
        STATE.stack.append((self, mode))
        STATE.current = self
        STATE.entry = next(_ENTRIES)
        return self

    def __exit__(self, *exc_info: object) -> None:
        # The scope is left the same way whether or not the block raised.
        stack = STATE.stack
        if not stack or stack[-1][0] is not self:
            raise RuntimeError(
                f"{self!r} is leaving but it is not the innermost scope of this thread; "
                "scopes must be left in the reverse order they were entered"
            )
        _, mode = stack.pop()
        STATE.current = stack[-1][0] if stack else None
        STATE.entry = next(_ENTRIES)
        try:
            if mode is not None:
                mode.__exit__(None, None, None)  # type: ignore[no-untyped-call]
        finally:
            self.device.__exit__(None, None, None)


def _check_dtype(dtype: object) -> torch.dtype | None:
    if dtype is None:
        return None
    if not isinstance(dtype, torch.dtype) or dtype not in FLOAT_DTYPES:
        names = ", ".join(str(d) for d in FLOAT_DTYPES)
        raise ValueError(f"dtype={dtype!r} is not a floating dtype; accepted: None, {names}")
    return dtype


def device_scope(
    device: DeviceSpec,
    dtype: torch.dtype | None = None,
    *,
    on_missing_gpu: MissingGPUPolicy | None = None,
) -> DeviceScope:
    """Send new tensors, and :class:`torchx.nn.Module` calls, to ``device`` inside a ``with``.

    ``device`` is an int >= 0 (GPU index), -1 (CPU), ``"cpu"``, ``"cuda:<n>"``, ``"gpu:<n>"``,
    ``"mps"``, ``"xpu[:<n>]"``, a :class:`torch.device`, a list of GPU indices, or
    ``"cuda:all"``. A list (or ``cuda:all``) places tensors on its first GPU and tells
    :func:`DataParallel` which GPUs to use.

    ``dtype`` (a floating dtype) is given to factories called without one, inside the block
    only. ``on_missing_gpu`` says what to do when the GPU or other accelerator (cuda, mps,
    xpu) is not there: ``"error"`` raises :class:`DeviceUnavailableError`, ``"cpu"`` runs on
    the CPU with a :class:`GPUFallbackWarning`; by default the process-wide policy applies
    (see :func:`set_missing_gpu_policy`).
    """
    checked_dtype = _check_dtype(dtype)
    policy = None if on_missing_gpu is None else check_policy(on_missing_gpu, "on_missing_gpu")
    return DeviceScope(device, resolve(device, policy, stacklevel=2), checked_dtype)


def current_scope() -> DeviceScope | None:
    """The innermost scope of the calling thread, or None outside every scope."""
    return STATE.current


def current_device() -> torch.device:
    """The device new tensors land on in this thread: the scope's, else torch's default."""
    scope = STATE.current
    return scope.device if scope is not None else torch.get_default_device()
