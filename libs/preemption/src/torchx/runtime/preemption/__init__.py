"""torchx.runtime.preemption: checkpoint when the scheduler warns, then ask to run again.

Inside a torchx app::

    import torchx.runtime.preemption as preemption

    start = load_checkpoint() if preemption.attempt() > 0 else 0
    preemption.on_preempt(lambda: save_checkpoint(step))
    for step in range(start, steps):
        train_step(step)
        if preemption.preempted():
            preemption.requeue()   # checkpoints, then exits with REQUEUE_EXIT_CODE

The warning is a signal: Slurm's ``--signal`` (SIGUSR1 from torchx's script), a pod's
SIGTERM, or the SIGTERM of ``torchx requeue``. Exiting with
``REQUEUE_EXIT_CODE`` (75) asks the scheduler to start the app again under the same handle;
``attempt()`` then tells it which run it is. It imports nothing else of torchx and needs
only the standard library (``pip install torchx-runtime-preemption``).
"""

from torchx.runtime.preemption._contract import (
    ASKED_FILE_ENV,
    ATTEMPT_ENV,
    ATTEMPT_FILE_ENV,
    DEFAULT_SIGNALS,
    REQUEUE_EXIT_CODE,
    SIGNALS_ENV,
    attempt,
    warning_signals,
)
from torchx.runtime.preemption._handler import (
    install,
    on_preempt,
    preempted,
    requeue,
    warned_by,
)

__all__ = [
    "ASKED_FILE_ENV",
    "ATTEMPT_ENV",
    "ATTEMPT_FILE_ENV",
    "DEFAULT_SIGNALS",
    "REQUEUE_EXIT_CODE",
    "SIGNALS_ENV",
    "attempt",
    "install",
    "on_preempt",
    "preempted",
    "requeue",
    "warned_by",
    "warning_signals",
]
