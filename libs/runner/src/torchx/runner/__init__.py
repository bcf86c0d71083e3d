"""torchx.runner: submit an AppDef (or a component) to a scheduler and follow it by handle.

import torchx.runner
handle = torchx.runner.get_runner().run(app)   # local_cwd unless told otherwise
status = torchx.runner.get_runner().wait(handle)

# or run a Python function as an app and get its value back
assert torchx.runner.Executor(scheduler="local_cwd").submit(pow, 2, 10).result() == 1024
"""

from typing import TYPE_CHECKING, Any

from torchx.runner._config import (
    CONFIG_ENV,
    CONFIG_FILE,
    ConfigError,
    TorchxConfig,
    config_files,
    get_configured_trackers,
    load_config,
)
from torchx.runner._runner import (
    DEFAULT_SESSION,
    ComponentArgs,
    Runner,
    get_runner,
    scheduler_factories,
)
from torchx.runner._tracking import trackers_env

if TYPE_CHECKING:
    from torchx.runner._executor import CallNotPicklableError, Executor, default_transport
    from torchx.runner._function_future import (
        ALL_COMPLETED,
        FIRST_COMPLETED,
        FIRST_EXCEPTION,
        DoneAndNotDone,
        FunctionAppError,
        FunctionFuture,
        as_completed,
        wait,
    )
    from torchx.runner._sweep import Sweep, SweepError
    from torchx.runner._sweep_record import recorded_sweep_id
    from torchx.runner._sweeps import (
        SweepPlan,
        SweepStatus,
        TrialStatus,
        sweep_handle_of,
        sweep_id_of,
    )


_FUTURE_NAMES = (
    "ALL_COMPLETED",
    "FIRST_COMPLETED",
    "FIRST_EXCEPTION",
    "DoneAndNotDone",
    "FunctionAppError",
    "FunctionFuture",
    "as_completed",
    "wait",
)


# Loaded on first use (PEP 562): function apps pull in concurrent.futures and pickling,
# and sweeps their planning and records, which a plain run or dryrun never needs.
def __getattr__(name: str) -> Any:
    if name in ("Sweep", "SweepError"):
        from torchx.runner import _sweep

        return getattr(_sweep, name)
    if name == "recorded_sweep_id":
        from torchx.runner._sweep_record import recorded_sweep_id

        return recorded_sweep_id
    if name in ("SweepPlan", "SweepStatus", "TrialStatus", "sweep_handle_of", "sweep_id_of"):
        from torchx.runner import _sweeps

        return getattr(_sweeps, name)
    if name in ("CallNotPicklableError", "Executor", "default_transport"):
        from torchx.runner import _executor

        return getattr(_executor, name)
    if name in _FUTURE_NAMES:
        from torchx.runner import _function_future

        return getattr(_function_future, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALL_COMPLETED",
    "CONFIG_ENV",
    "CONFIG_FILE",
    "DEFAULT_SESSION",
    "FIRST_COMPLETED",
    "FIRST_EXCEPTION",
    "CallNotPicklableError",
    "ComponentArgs",
    "ConfigError",
    "DoneAndNotDone",
    "Executor",
    "FunctionAppError",
    "FunctionFuture",
    "Runner",
    "Sweep",
    "SweepError",
    "SweepPlan",
    "SweepStatus",
    "TorchxConfig",
    "TrialStatus",
    "as_completed",
    "config_files",
    "default_transport",
    "get_configured_trackers",
    "get_runner",
    "load_config",
    "recorded_sweep_id",
    "scheduler_factories",
    "sweep_handle_of",
    "sweep_id_of",
    "trackers_env",
    "wait",
]
