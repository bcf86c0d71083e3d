"""torchx.schedulers: the interface every scheduler implements, the registry, and local_cwd.

A scheduler turns an AppDef plus run options into a request (``submit_dryrun``, no side
effects), submits it (``schedule``) and answers ``describe``, ``log_iter``, ``cancel``,
``list`` and ``exists``. Schedulers are found by name (``get_scheduler("local_cwd")``);
installed packages add more through the ``torchx.schedulers`` entry-point group.
"""

# The names load on first use (PEP 562): ``python -m torchx.schedulers._ray_direct`` runs
# this file first, on every one-replica ray job, and needs none of it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from torchx.schedulers._api import (
        DescribeAppResponse,
        ListAppResponse,
        Scheduler,
        SchedulerCapabilities,
        Stream,
        filter_regex,
    )
    from torchx.schedulers._errors import MissingDependencyError, UnknownSchedulerError, require
    from torchx.schedulers._registry import (
        DEFAULT_SCHEDULER,
        ENTRY_POINT_GROUP,
        RESERVED_NAMES,
        SchedulerFactory,
        capabilities,
        capability_table,
        get_scheduler,
        get_scheduler_factories,
        scheduler_class,
        scheduler_names,
    )

__all__ = [
    "DEFAULT_SCHEDULER",
    "ENTRY_POINT_GROUP",
    "RESERVED_NAMES",
    "DescribeAppResponse",
    "ListAppResponse",
    "MissingDependencyError",
    "Scheduler",
    "SchedulerCapabilities",
    "SchedulerFactory",
    "Stream",
    "UnknownSchedulerError",
    "capabilities",
    "capability_table",
    "filter_regex",
    "get_scheduler",
    "get_scheduler_factories",
    "require",
    "scheduler_class",
    "scheduler_names",
]

_HOMES = {
    "_api": (
        "DescribeAppResponse",
        "ListAppResponse",
        "Scheduler",
        "SchedulerCapabilities",
        "Stream",
        "filter_regex",
    ),
    "_errors": ("MissingDependencyError", "UnknownSchedulerError", "require"),
    "_registry": (
        "DEFAULT_SCHEDULER",
        "ENTRY_POINT_GROUP",
        "RESERVED_NAMES",
        "SchedulerFactory",
        "capabilities",
        "capability_table",
        "get_scheduler",
        "get_scheduler_factories",
        "scheduler_class",
        "scheduler_names",
    ),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
