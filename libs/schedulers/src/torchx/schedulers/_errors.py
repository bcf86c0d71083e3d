"""Errors raised by the scheduler registry and by schedulers themselves."""

from __future__ import annotations

from torchx.specs import UnknownSchedulerException


class UnknownSchedulerError(UnknownSchedulerException):
    """No scheduler is registered under the given name; the message lists those that are.

    A subclass of pytorch/torchx's UnknownSchedulerException (a SpecsError), so either
    ``except`` works.
    """

    def __init__(self, name: object, known: list[str], reason: str = "") -> None:
        listed = ", ".join(sorted(known)) or "none"
        super().__init__(name, f"{reason}known schedulers: {listed}")


class MissingDependencyError(ImportError):
    """A scheduler's client library is not installed; the message says which extra has it."""

    def __init__(self, scheduler: str, module: str, extra: str) -> None:
        self.scheduler = scheduler
        self.module = module
        self.extra = extra
        super().__init__(
            f"the {scheduler} scheduler needs the {module!r} package, which is not installed; "
            f'install it with: pip install "torchx-schedulers[{extra}]"',
            name=module,
        )


def require(module: str, *, scheduler: str, extra: str) -> object:
    """Import ``module`` for ``scheduler``; a missing one raises MissingDependencyError.

    Schedulers call this inside the methods that need their client library, so that
    importing the scheduler (to list it, to show its capabilities) stays cheap.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and (module == e.name or module.startswith(e.name + ".")):
            raise MissingDependencyError(scheduler, module, extra) from e
        raise
