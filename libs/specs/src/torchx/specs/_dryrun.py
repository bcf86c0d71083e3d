"""AppDryRunInfo: the exact request a scheduler would submit, before it is submitted."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from torchx.specs._app import AppDef

T = TypeVar("T")


class AppDryRunInfo(Generic[T]):
    """Wraps a scheduler's request object with a function that prints it for people.

    ``request`` is what ``schedule`` submits unchanged; the runner fills ``app``, ``cfg``
    and ``scheduler`` so the info alone is enough to submit.
    """

    def __init__(self, request: T, fmt: Callable[[T], str] = repr) -> None:
        self.request = request
        self._fmt = fmt
        self.app: AppDef | None = None
        self.cfg: dict[str, Any] = {}
        self.scheduler: str = ""

    def __str__(self) -> str:
        return self._fmt(self.request)

    def __repr__(self) -> str:
        return f"AppDryRunInfo(scheduler={self.scheduler!r}, request=\n{self}\n)"
