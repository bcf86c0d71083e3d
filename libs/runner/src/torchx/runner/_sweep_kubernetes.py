"""The Kubernetes side of a sweep: which way its trials run (one Indexed Job, or one Job
per trial), the labels that find every trial's objects, the trials' states from ONE pod list
call by the sweep's label, and deleting them all by that label."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from torchx.runner._sweep_record import SweepRecord
from torchx.specs import AppDef, CfgVal

if TYPE_CHECKING:
    from torchx.runner._runner import Runner


def is_kubernetes(runner: Runner, scheduler: str) -> bool:
    sched = runner._scheduler(scheduler)
    if sched.backend != "kubernetes":
        return False  # without importing the Kubernetes scheduler's module
    from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler

    return isinstance(sched, KubernetesScheduler)


def trial_cfg(runner: Runner, record: SweepRecord, index: int) -> dict[str, CfgVal]:
    """The run options of trial ``index`` submitted as an app of its own: the sweep's, plus
    on Kubernetes the labels by which one pod list call finds every trial."""
    cfg = dict(record.cfg)
    if is_kubernetes(runner, record.scheduler):
        from torchx.schedulers.kubernetes_indexed import sweep_labels

        labels = cfg.get("labels") or {}
        if isinstance(labels, str):  # as a config file or -cfg writes it: K1:V1;K2:V2
            labels = runner._scheduler(record.scheduler).run_opts().value_from_str("labels", labels)
        if isinstance(labels, dict):  # else the dryrun's own check names what is wrong
            cfg["labels"] = {**labels, **sweep_labels(record.sweep_id, index)}
    return cfg


def kubernetes_mode(
    runner: Runner, record: SweepRecord, trial_app: Callable[[int], AppDef]
) -> tuple[str, str]:
    """``("indexed", "")`` where the trials can be one Indexed Job, else ``("group", why
    not)``; asks the API server for its version once. ``trial_app(i)`` is trial i's app."""
    from torchx.schedulers.kubernetes_indexed import check_completions, why_not_indexed
    from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler

    sched = runner._scheduler(record.scheduler)
    if not isinstance(sched, KubernetesScheduler):
        return "group", ""
    # The first trial's shape and the server first: a grid too large for one Indexed Job
    # is refused before every trial's app is made.
    first = [trial_app(0)]
    why = why_not_indexed(first, (1, 10**6))  # no server needed for the shape
    version = None
    if why is None:
        try:
            version = sched.server_version()
        except Exception as e:  # no cluster reachable: say so in the dryrun
            why = f"the API server's version could not be read ({e})"
        else:
            why = why_not_indexed(first, version)
    if why is None:
        check_completions(len(record.trials))
        why = why_not_indexed((trial_app(i) for i in range(1, len(record.trials))), version)
    return ("group", why) if why else ("indexed", "")


def trial_pod_states(runner: Runner, record: SweepRecord) -> dict[str, Any]:
    """Every trial's ``(state, exit code, message)`` by its latest attempt's app id, from
    one pod list call by the sweep's label."""
    found = _scheduler_and_namespace(runner, record)
    return found[0].sweep_trial_states(found[1], record.sweep_id) if found else {}


def delete_trials(runner: Runner, record: SweepRecord) -> None:
    """Delete every object of every trial, by the sweep's label."""
    found = _scheduler_and_namespace(runner, record)
    if found:
        found[0].delete_sweep(found[1], record.sweep_id)


def _scheduler_and_namespace(runner: Runner, record: SweepRecord) -> tuple[Any, str] | None:
    """The Kubernetes scheduler of a sweep and the namespace of its trials (None before any
    was submitted)."""
    from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler

    latest = [t.attempts[-1] for t in record.trials if t.attempts]
    sched = runner._scheduler(record.scheduler)
    if not latest or not isinstance(sched, KubernetesScheduler):
        return None
    return sched, latest[0].partition(":")[0]  # every trial ran in the sweep's namespace


__all__ = ["delete_trials", "is_kubernetes", "kubernetes_mode", "trial_cfg", "trial_pod_states"]
