"""A sweep's status: each trial's state, attempts and exit code, read in one query per
scheduler where it can (one ``sacct`` for an array, one pod list on Kubernetes, one read
of a local group's state files), and the sweep's state made of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from torchx.runner._sweep_kubernetes import is_kubernetes, trial_pod_states
from torchx.runner._sweep_processes import driver_alive, local_group
from torchx.runner._sweep_record import SweepRecord, TrialRecord
from torchx.specs import AppState, AppStatus, SpecsError, is_terminal, make_app_handle

if TYPE_CHECKING:
    from torchx.runner._runner import Runner
    from torchx.schedulers.local_scheduler import LocalScheduler


@dataclass
class TrialStatus:
    """One trial of a sweep. ``attempts`` counts its runs that started, as the app's own
    status does (restarts by ``max_retries`` included, where the scheduler's one status
    query for the sweep says them): 0 while its first run still waits, one more when
    ``--resume`` ran it again."""

    index: int
    args: dict[str, str]
    state: AppState
    attempts: int
    exit_code: int | None
    handle: str | None
    msg: str = ""
    # what the trial recorded as its objective (filled by readers of the trackers)
    objective: float | None = None

    def score(self, value: object) -> None:
        """Set ``objective`` from the ``value`` the trial recorded: the finite number it
        is or spells (``0.25``, ``"0.25"``). Anything else leaves the trial unscored
        (None): nothing recorded, a string such as ``"nan?"``, a dict, NaN or infinity;
        ``rank`` puts it after the scored ones. The one reading of a recorded objective,
        for every reader of the trackers."""
        try:
            number = float(str(value)) if value is not None else None
        except ValueError:
            number = None
        self.objective = number if number is not None and math.isfinite(number) else None


@dataclass
class SweepStatus:
    """Every trial of a sweep: its index, arguments, state, attempts and exit code."""

    handle: str
    state: AppState
    mode: str
    trials: list[TrialStatus] = field(default_factory=list)
    # why the sweep is in its state, where its trials alone do not say (a resume running)
    msg: str = ""

    def is_terminal(self) -> bool:
        return is_terminal(self.state)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.trials:
            out[t.state.name] = out.get(t.state.name, 0) + 1
        return out

    def summary(self) -> str:
        """How many trials are in each state: ``1 FAILED, 2 SUCCEEDED``."""
        return ", ".join(f"{n} {s}" for s, n in sorted(self.counts().items()))

    def rank(self, maximize: bool = False) -> None:
        """Order the trials best first: the succeeded ones by objective, then those
        without a finite one (none recorded, NaN, infinite), then the trials that did not
        succeed, by objective too. A trial that records its loss and then crashes, or
        whose loss diverged to NaN, is never ranked above one that succeeded; ``trials[0]``
        is the best only if it succeeded with an objective."""
        sign = -1.0 if maximize else 1.0

        def key(t: TrialStatus) -> tuple[bool, bool, float, int]:
            scored = t.objective is not None and math.isfinite(t.objective)
            value = sign * t.objective if scored and t.objective is not None else 0.0
            return (t.state != AppState.SUCCEEDED, not scored, value, t.index)

        self.trials.sort(key=key)

    def format(self, objective: str = "objective") -> str:
        """A table, one trial a line, as ``torchx status SWEEP`` prints it; ``objective``
        heads the column of the value that ranks the trials."""
        names = sorted({k for t in self.trials for k in t.args}, key=_first_seen(self.trials))
        scored = any(t.objective is not None for t in self.trials)
        head = ["#", *names, *([objective] if scored else []), "state", "attempts", "exit"]
        head.append("handle")
        rows = [
            [
                str(t.index),
                *(t.args.get(n, "") for n in names),
                *([f"{t.objective:g}" if t.objective is not None else ""] if scored else []),
                t.state.name,
                str(t.attempts),
                "" if t.exit_code is None else str(t.exit_code),
                t.handle or "",
            ]
            for t in self.trials
        ]
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
        lines = [f"Sweep {self.handle}: {self.state.name} (" + self.summary() + ")"]
        if self.msg:
            lines.append(self.msg)
        for r in [head, *rows]:
            lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        return "\n".join(lines)


def _first_seen(trials: list[TrialStatus]) -> Any:
    order: dict[str, int] = {}
    for t in trials:
        for k in t.args:
            order.setdefault(k, len(order))
    return lambda k: order[k]


def trial_handle(record: SweepRecord, index: int) -> str | None:
    if not 0 <= index < len(record.trials):
        raise SpecsError(
            "trial index", index, f"the sweep has trials 0 to {len(record.trials) - 1}"
        )
    attempts = record.trials[index].attempts
    if not attempts:
        return None
    return make_app_handle(record.scheduler, record.session, attempts[-1])


def exit_code(st: AppStatus) -> int | None:
    """The app's exit code once it ended, else None: a replica that ended while the others
    run says nothing yet of the app (it may still be retried)."""
    if not is_terminal(st.state):
        return None
    codes = [r.exit_code for role in st.roles for r in role.replicas if r.exit_code is not None]
    nonzero = [c for c in codes if c != 0]
    if nonzero:
        return nonzero[0]
    return 0 if st.state == AppState.SUCCEEDED else (codes[0] if codes else None)


def status_of(
    runner: Runner, handle: str, record: SweepRecord, resumed_by: str | None
) -> SweepStatus:
    alive = record.mode == "group" and driver_alive(record)
    group = local_group(runner, record.scheduler) if record.mode == "group" else None
    # A local group's trials are read together, each from its state file alone.
    local_states = _local_statuses(group, record) if group else {}
    trials: list[TrialStatus] = []
    tasks: dict[str, Any] = {}
    if record.mode == "array":
        from torchx.schedulers.slurm_array import describe_tasks

        latest = [t.attempts[-1] for t in record.trials if t.attempts]
        tasks = describe_tasks(latest, record.array_jobs)
    # On Kubernetes every trial's pods carry the sweep's label: one list call for all.
    by_pods = record.mode == "indexed" or is_kubernetes(runner, record.scheduler)
    pod_states = trial_pod_states(runner, record) if by_pods else {}
    for t in record.trials:
        th = trial_handle(record, t.index)
        state, code, msg = AppState.UNKNOWN, None, ""
        reruns = 0  # the latest submission's runs after its first, where its status says
        ran = True  # whether the latest submission's run now started, where its status says
        if not t.attempts:
            if t.error:
                state, msg = AppState.FAILED, t.error
            elif t.cancelled or record.cancelled:
                state = AppState.CANCELLED
            elif alive:
                state = AppState.PENDING
            else:
                state, msg = AppState.FAILED, "never submitted"
        elif record.mode == "array":
            task = tasks.get(t.attempts[-1])
            if task is not None:
                state, code = task.state, task.exit_code
                msg = task.slurm_state
                ran = task.started or state != AppState.CANCELLED
        elif by_pods:
            found = pod_states.get(t.attempts[-1])
            if t.final_state:  # the driver saw its Jobs end (their retries included)
                state, code = AppState[t.final_state], t.final_exit_code
                reruns = max(found[3] - 1, 0) if found is not None else 0
            elif found is not None and not (record.cancelled and not is_terminal(found[0])):
                state, code, msg, runs = found
                # every pod that started is a run; a pod still Pending is not one yet
                reruns = max(runs - (0 if state == AppState.PENDING else 1), 0)
            elif record.cancelled:
                # cancelling deletes its Job and pods (a pod the Job controller made just
                # before its Job went is removed by the garbage collector soon after)
                state = AppState.CANCELLED
            elif record.mode == "indexed" or alive:
                state, msg = AppState.PENDING, "no pod of it yet"
            else:
                state, msg = AppState.FAILED, "no pod of it is left in the cluster"
        else:
            assert th is not None
            st = local_states.get(t.attempts[-1]) if group else runner.status(th)
            if st is not None:
                state, code, msg = st.state, exit_code(st), st.msg
                reruns = st.num_restarts + st.num_preemptions
                ran = not _cancelled_before_start(st)
            elif t.final_state:
                state, code = AppState[t.final_state], t.final_exit_code
            elif record.cancelled:
                state = AppState.CANCELLED  # cancelling removed it (Kubernetes deletes Jobs)
            else:
                state, msg = AppState.FAILED, "its scheduler no longer knows this app"
            if state == AppState.PENDING and not alive and group:
                # the group that was to start it is gone: it never will
                state, msg = AppState.FAILED, "the sweep's group process ended before starting it"
        if resumed_by is not None and is_terminal(state) and state != AppState.SUCCEEDED:
            state, code, msg = AppState.PENDING, None, f"being submitted again ({resumed_by})"
        attempts = _started(t, state, msg, reruns, ran)
        trials.append(TrialStatus(t.index, dict(t.args), state, attempts, code, th, msg))
    overall = _overall(record, trials, alive)
    why = ""
    if resumed_by is not None:
        why = (
            f"a resume of it is running ({resumed_by}): it submits again the trials that did "
            "not succeed, so the sweep has not ended"
        )
    return SweepStatus(handle, overall, record.mode, trials, why)


def _started(
    trial: TrialRecord, state: AppState, msg: str, reruns: int = 0, ran: bool = True
) -> int:
    """How many runs of the trial have started: one for each earlier submission (one that
    ``--resume`` replaced), and of the latest submission its runs that ended before
    (``reruns``: restarts by ``max_retries`` and requeues after a preemption, where its
    scheduler's status says them) plus the one now, unless it waits (PENDING) or never
    started (``ran`` False: cancelled while it waited)."""
    if not trial.attempts:
        return 0
    waiting = state == AppState.PENDING
    if waiting and msg == "REQUEUED" and not reruns:
        # Slurm says it waits again after a preemption, with no count of the runs before
        reruns = 1
    return len(trial.attempts) - 1 + reruns + (0 if waiting or not ran else 1)


def _cancelled_before_start(st: AppStatus) -> bool:
    """Whether an app was cancelled before any of its replicas started: it ended
    CANCELLED, its replicas are listed, and none ran on a host or left an exit code."""
    replicas = [r for role in st.roles for r in role.replicas]
    return (
        st.state == AppState.CANCELLED
        and bool(replicas)
        and not any(r.hostname or r.exit_code is not None for r in replicas)
    )


def _local_statuses(sched: LocalScheduler, record: SweepRecord) -> dict[str, AppStatus | None]:
    """The status of each trial's latest attempt, by app id, on a local scheduler."""
    return sched.statuses([t.attempts[-1] for t in record.trials if t.attempts])


def _overall(record: SweepRecord, trials: list[TrialStatus], alive: bool) -> AppState:
    states = [t.state for t in trials]
    if alive or not all(is_terminal(s) for s in states):
        if any(s == AppState.RUNNING for s in states):
            return AppState.RUNNING
        return AppState.RUNNING if any(is_terminal(s) for s in states) else AppState.PENDING
    if all(s == AppState.SUCCEEDED for s in states):
        return AppState.SUCCEEDED
    # Cancelled, as an app is, when the user cancelled it (a replica killed by the cancel
    # may read as failed), or when every trial that did not succeed was cancelled (a
    # cancel that ends the driver first may be read before it is recorded).
    ended_well = (AppState.SUCCEEDED, AppState.CANCELLED)
    if record.cancelled or all(s in ended_well for s in states):
        return AppState.CANCELLED
    return AppState.FAILED
