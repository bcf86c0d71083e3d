"""Error types raised while building and (de)serializing layers."""

from __future__ import annotations

from collections.abc import Sequence


class ShapeError(ValueError):
    """An input shape does not fit a layer; raised before any tensor is allocated."""

    def __init__(
        self,
        path: str,
        problem: str,
        *,
        expected: str | None = None,
        got: Sequence[int | None] | None = None,
        hint: str | None = None,
    ) -> None:
        parts = [f"layer '{path}': {problem}"]
        if expected is not None:
            parts.append(f"expected input {expected}")
        if got is not None:
            parts.append(f"got shape {format_shape(got)}")
        if hint:
            parts.append(f"hint: {hint}")
        super().__init__("; ".join(parts))
        self.path = path
        #: the shape expected (as worded) and the shape given, where the error names them
        self.expected = expected
        self.got = None if got is None else tuple(got)


class SpecError(ValueError):
    """A layer spec (dict, JSON or YAML) cannot be turned into a layer."""


def format_shape(shape: Sequence[int | None]) -> str:
    # None is the batch in dimension 0 and a size known only at call time elsewhere
    dims = ", ".join(
        ("batch" if i == 0 else "?") if d is None else str(d) for i, d in enumerate(shape)
    )
    return f"({dims},)" if len(shape) == 1 else f"({dims})"
