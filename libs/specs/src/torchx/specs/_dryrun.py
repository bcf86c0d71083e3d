"""AppDryRunInfo: the exact request a scheduler would submit, before it is submitted."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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

    # pytorch/torchx prints the request itself, and its schedulers and runner keep the
    # back references as ``_app``, ``_cfg`` and ``_scheduler``: schedulers written against
    # it set those names, so they are the same attributes as ``app``, ``cfg`` and
    # ``scheduler`` here.
    __repr__ = __str__

    @property
    def _app(self) -> AppDef | None:
        return self.app

    @_app.setter
    def _app(self, app: AppDef | None) -> None:
        self.app = app

    @property
    def _cfg(self) -> dict[str, Any]:
        return self.cfg

    @_cfg.setter
    def _cfg(self, cfg: Mapping[str, Any]) -> None:
        self.cfg = dict(cfg)

    @property
    def _scheduler(self) -> str:
        return self.scheduler

    @_scheduler.setter
    def _scheduler(self, scheduler: str | None) -> None:
        self.scheduler = scheduler or ""
