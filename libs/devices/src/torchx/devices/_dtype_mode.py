"""A per-thread floating dtype for tensor factories.

``torch.set_default_dtype`` is process-wide, so two threads with different scopes would race
on it. Instead, a torch function mode fills in ``dtype=`` for factories called without one;
the mode stack is thread-local, which keeps each scope's dtype inside its own thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

_COMPLEX_OF = {
    torch.float16: torch.complex32,
    torch.float32: torch.complex64,
    torch.float64: torch.complex128,
}

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


@functools.cache
def _always_floating() -> frozenset[Callable[..., Any]]:
    # Factories whose result takes the default floating dtype whenever no dtype is given.
    return frozenset(
        {
            torch.empty,
            torch.empty_strided,
            torch.empty_permuted,
            torch.zeros,
            torch.ones,
            torch.rand,
            torch.randn,
            torch.eye,
            torch.linspace,
            torch.logspace,
            torch.bartlett_window,
            torch.blackman_window,
            torch.hamming_window,
            torch.hann_window,
            torch.kaiser_window,
        }
    )


@functools.cache
def _value_inferred() -> frozenset[Callable[..., Any]]:
    # Factories that pick the dtype from their values: only a floating (or complex) result
    # takes the scope's dtype, an integer or bool result stays as it is.
    return frozenset(
        {torch.tensor, torch.as_tensor, torch.asarray, torch.full, torch.arange, torch.range}
    )


class ScopeDtypeMode(TorchFunctionMode):
    """Give factories called without ``dtype`` the scope's floating dtype."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.dtype = dtype

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = dict(kwargs) if kwargs else {}
        if kwargs.get("dtype") is not None:
            return func(*args, **kwargs)
        if func in _always_floating():
            kwargs["dtype"] = self.dtype
            return func(*args, **kwargs)
        if func in _value_inferred() and not (args and isinstance(args[0], torch.Tensor)):
            result = func(*args, **kwargs)
            if not isinstance(result, torch.Tensor):
                return result
            if result.dtype == self.dtype:
                return result
            if result.dtype == torch.get_default_dtype():
                kwargs["dtype"] = self.dtype
                return func(*args, **kwargs)
            complex_dtype = _COMPLEX_OF.get(self.dtype)
            if complex_dtype is not None and result.dtype == _COMPLEX_OF.get(
                torch.get_default_dtype()
            ):
                kwargs["dtype"] = complex_dtype
                return func(*args, **kwargs)
            return result
        return func(*args, **kwargs)
