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
        LogOptions,
        LogRequest,
        Scheduler,
        Stream,
        compile_regex,
        filter_regex,
        in_window,
        registered_dryrun,
        split_lines,
        split_lines_iterator,
    )
    from torchx.schedulers._errors import (
        MissingDependencyError,
        SchedulerError,
        UnknownSchedulerError,
        check_params,
        require,
    )
    from torchx.schedulers._registry import (
        DEFAULT_SCHEDULER,
        DEFAULT_SCHEDULER_MODULES,
        ENTRY_POINT_GROUP,
        SchedulerFactory,
        declared_params,
        get_default_scheduler_name,
        get_scheduler,
        get_scheduler_factories,
        scheduler_names,
    )
    from torchx.schedulers._replica_env import (
        TORCHX_APP_ID,
        TORCHX_RANK0_HOST,
        TORCHX_REPLICA_ID,
        TORCHX_ROLE_NAME,
        TORCHX_VARIABLES,
        launch_defaults,
        replica_env,
    )
    from torchx.schedulers._replicas import Replica, role_replicas
    from torchx.schedulers.ids import make_unique
    from torchx.util.entrypoints import load_group

__all__ = [
    "DEFAULT_SCHEDULER",
    "DEFAULT_SCHEDULER_MODULES",
    "ENTRY_POINT_GROUP",
    "TORCHX_APP_ID",
    "TORCHX_RANK0_HOST",
    "TORCHX_REPLICA_ID",
    "TORCHX_ROLE_NAME",
    "TORCHX_VARIABLES",
    "DescribeAppResponse",
    "ListAppResponse",
    "LogOptions",
    "LogRequest",
    "MissingDependencyError",
    "Replica",
    "Scheduler",
    "SchedulerError",
    "SchedulerFactory",
    "Stream",
    "UnknownSchedulerError",
    "check_params",
    "compile_regex",
    "declared_params",
    "filter_regex",
    "get_default_scheduler_name",
    "get_scheduler",
    "get_scheduler_factories",
    "in_window",
    "launch_defaults",
    "load_group",
    "make_unique",
    "registered_dryrun",
    "replica_env",
    "require",
    "role_replicas",
    "scheduler_names",
    "split_lines",
    "split_lines_iterator",
]

_HOMES = {
    "_api": (
        "DescribeAppResponse",
        "ListAppResponse",
        "LogOptions",
        "LogRequest",
        "Scheduler",
        "Stream",
        "compile_regex",
        "filter_regex",
        "in_window",
        "registered_dryrun",
        "split_lines",
        "split_lines_iterator",
    ),
    "_errors": (
        "MissingDependencyError",
        "SchedulerError",
        "UnknownSchedulerError",
        "check_params",
        "require",
    ),
    "_registry": (
        "DEFAULT_SCHEDULER",
        "DEFAULT_SCHEDULER_MODULES",
        "get_default_scheduler_name",
        "ENTRY_POINT_GROUP",
        "SchedulerFactory",
        "declared_params",
        "get_scheduler",
        "get_scheduler_factories",
        "scheduler_names",
    ),
    "_replica_env": (
        "TORCHX_APP_ID",
        "TORCHX_RANK0_HOST",
        "TORCHX_REPLICA_ID",
        "TORCHX_ROLE_NAME",
        "TORCHX_VARIABLES",
        "launch_defaults",
        "replica_env",
    ),
    "_replicas": ("Replica", "role_replicas"),
    "ids": ("make_unique",),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}
_MODULE_OF["load_group"] = "torchx.util.entrypoints"


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    path = module if module.startswith("torchx.") else f"{__name__}.{module}"
    value = getattr(importlib.import_module(path), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
