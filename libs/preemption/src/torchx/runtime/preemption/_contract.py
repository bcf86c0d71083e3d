"""What the scheduler and the app agree on: the exit code, the environment, the signals.

Kept apart from the handlers so that schedulers can read the same numbers without
installing anything (they are repeated, not imported, on the launcher's side: the
launcher does not depend on this library).
"""

from __future__ import annotations

import os
import signal

# sysexits' EX_TEMPFAIL, "try again later": an app that exits with it asks its scheduler
# to run it again. Schedulers restart such an app without counting a retry.
REQUEUE_EXIT_CODE = 75

# Set by the scheduler in each replica: 0 on the first run, +1 on each start after it
# (requeues and retries alike).
ATTEMPT_ENV = "TORCHX_ATTEMPT"
# Slurm counts its own requeues; an app started by hand under sbatch still gets its attempt.
_SLURM_ATTEMPT_ENV = "SLURM_RESTART_COUNT"
# Where a backend starts the same container again, whose environment is fixed when it is
# created (Docker), the scheduler writes the attempt into this file instead; once the file
# exists it wins over the environment.
ATTEMPT_FILE_ENV = "TORCHX_ATTEMPT_FILE"

# A file the scheduler names for ``requeue()`` to create before the exit: the app asked to
# be run again even where a launcher (torchrun) turns its exit code 75 into another.
ASKED_FILE_ENV = "TORCHX_REQUEUE_ASKED_FILE"

# The signals that warn of a stop, comma separated names (``USR1,TERM``). Slurm sends the
# one asked for with ``--signal``; a pod and a local requeue send SIGTERM.
SIGNALS_ENV = "TORCHX_PREEMPT_SIGNALS"
DEFAULT_SIGNALS = ("SIGUSR1", "SIGTERM")


def attempt() -> int:
    """Which run of the app this is: 0 on the first, 1 after one requeue or restart, ..."""
    for name in (ATTEMPT_FILE_ENV, ATTEMPT_ENV, _SLURM_ATTEMPT_ENV):
        value = os.environ.get(name, "").strip()
        where = f"environment variable {name}"
        if value and name == ATTEMPT_FILE_ENV:
            where = f"the file {value} (environment variable {name})"
            try:
                with open(value, encoding="utf-8") as f:
                    value = f.read(32).strip()  # a number; never read more
            except FileNotFoundError:
                continue  # the first run: nothing written yet
        if value:
            try:
                number = int(value)
            except ValueError:
                raise ValueError(
                    f"{where} holds {value!r}, not a whole number; "
                    "unset it or give the attempt as 0, 1, 2, ..."
                ) from None
            if number < 0:
                raise ValueError(f"{where} holds {value!r}, a negative number; give 0 or more")
            return number
    return 0


def warning_signals() -> tuple[signal.Signals, ...]:
    """The signals that mean "you will be stopped soon": ``$TORCHX_PREEMPT_SIGNALS`` or
    SIGUSR1 and SIGTERM."""
    listed = os.environ.get(SIGNALS_ENV, "").strip()
    names = [n.strip().upper() for n in listed.split(",") if n.strip()] or list(DEFAULT_SIGNALS)
    found = []
    for name in names:
        full = name if name.startswith("SIG") else f"SIG{name}"
        try:
            found.append(signal.Signals[full])
        except KeyError:
            raise ValueError(
                f"environment variable {SIGNALS_ENV}={listed!r} names {name!r}, which is no "
                "signal; give signal names such as USR1,TERM"
            ) from None
    return tuple(dict.fromkeys(found))
