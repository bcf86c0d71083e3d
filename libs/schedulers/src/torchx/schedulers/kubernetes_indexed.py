"""Kubernetes sweeps as ONE Indexed Job: many single-replica trials, one batch/v1 Job.

The Job has ``completionMode: Indexed``, one completion per trial and ``parallelism`` K;
the Job controller gives each pod its index in ``JOB_COMPLETION_INDEX``, and the pod's
command is a shell ``case`` over that index which sets the trial's own environment and
runs the trial's own command line. Everything else (image, resources, mounts, run
options) is the first trial's, written once, so trials must ask the cluster for the same.

Trial at index ``p`` of Job ``J`` in namespace ``N`` is the app ``N:J-p``; its pods carry
the labels ``torchx.pytorch.org/app-id=J`` and ``batch.kubernetes.io/job-completion-index=p``.
Every pod of a sweep also carries ``torchx.pytorch.org/sweep-id``, so describing all
trials is one pod list call by that label.

Which servers: Indexed Jobs are GA since 1.24, but until ``backoffLimitPerIndex``
(beta, on by default, since 1.29) the Job's retry budget is shared, and one failing trial
ends the whole Job and with it every other trial. Older servers, and trials of several
roles or replicas, get one Job per trial instead (the runner's group of apps).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from torchx.schedulers._container_rules import to_dns_label
from torchx.schedulers._kubernetes_manifests import (
    DNS_LABEL_MAX,
    LABEL_APP_ID,
    LABEL_PREFIX,
    MASTER_PORT,
    KubernetesRequest,
    format_request,
)
from torchx.schedulers._kubernetes_status import newest_pods, pod_outcome, replica_key
from torchx.schedulers._replicas import role_replicas
from torchx.schedulers.sweep_names import SWEEP_ID_PATTERN
from torchx.specs import AppDef, AppDryRunInfo, AppState, SpecsError, validate_app

LABEL_SWEEP = f"{LABEL_PREFIX}/sweep-id"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
# The first release whose Indexed Jobs retry each index on its own (backoffLimitPerIndex).
MIN_VERSION = (1, 29)
# The pod's shell script holds every trial's command line; the API server stores objects of
# at most about 1.5 MiB, so the script is capped well below that.
SCRIPT_LIMIT = 512 * 1024
# The API server refuses an Indexed Job of more completions than this.
MAX_COMPLETIONS = 100_000
# On the trials of a sweep that are apps of their own (one Job per trial, older servers).
LABEL_SWEEP_INDEX = f"{LABEL_PREFIX}/sweep-index"
_TRIAL = re.compile(rf"^(?P<job>{SWEEP_ID_PATTERN}(?:-r\d+)?)-(?P<pos>\d+)$")


def parse_version(major: str, minor: str) -> tuple[int, int] | None:
    """``/version``'s major and minor (``"1"``, ``"29+"`` on some managed clusters)."""
    digits = [re.match(r"\d+", str(v)) for v in (major, minor)]
    if digits[0] is None or digits[1] is None:
        return None
    return int(digits[0].group()), int(digits[1].group())


def why_not_indexed(apps: Iterable[AppDef], version: tuple[int, int] | None) -> str | None:
    """None when the trials can run as one Indexed Job on a server of ``version``, else
    why not, in a few words for the dryrun."""
    for app in apps:
        if len(app.roles) != 1 or app.roles[0].num_replicas != 1:
            return (
                f"its trials have {len(app.roles)} role(s) of "
                f"{'+'.join(str(r.num_replicas) for r in app.roles)} replica(s); an Indexed "
                "Job runs single-replica trials only"
            )
    if version is None:
        return "the API server's version could not be read"
    if version < MIN_VERSION:
        return (
            f"the API server is v{version[0]}.{version[1]}; Indexed Jobs that retry each "
            f"trial on its own (backoffLimitPerIndex) need v{MIN_VERSION[0]}.{MIN_VERSION[1]}+"
        )
    return None


def sweep_labels(sweep_id: str, index: int) -> dict[str, str]:
    """The labels of trial ``index`` of a sweep whose trials are apps of their own: one pod
    list call by ``LABEL_SWEEP`` finds every trial, ``LABEL_SWEEP_INDEX`` tells them apart."""
    return {LABEL_SWEEP: sweep_id, LABEL_SWEEP_INDEX: str(index)}


def check_completions(trials: int) -> None:
    """Refuse more trials than one Indexed Job may have, naming the limit."""
    if trials > MAX_COMPLETIONS:
        raise SpecsError(
            "sweep",
            f"{trials} trials",
            f"an Indexed Job has at most {MAX_COMPLETIONS} completions (the API server's "
            f"limit); sweep fewer values, or split the grid into sweeps of at most "
            f"{MAX_COMPLETIONS} trials",
        )


def trial_app_id(job_app_id: str, pos: int) -> str:
    """The app id of the trial at completion index ``pos`` of the Job ``NAMESPACE:JOB``."""
    return f"{job_app_id}-{pos}"


def parse_trial(name: str) -> tuple[str, int] | None:
    """``(job, index)`` when ``name`` (an app id without its namespace) names a trial of a
    sweep's Indexed Job, else None."""
    m = _TRIAL.match(name)
    return (m.group("job"), int(m.group("pos"))) if m else None


def _first_container(req: KubernetesRequest) -> dict[str, Any]:
    for m in req.manifests:
        spec = m.get("spec") or {}
        if m.get("kind") != "Job":
            continue
        template = spec["tasks"][0]["template"] if "tasks" in spec else spec["template"]
        return dict(template["spec"]["containers"][0])
    raise SpecsError("first", req.app_id, "make it with KubernetesScheduler.submit_dryrun")


def _pod_spec(req: KubernetesRequest) -> dict[str, Any]:
    for m in req.manifests:
        spec = m.get("spec") or {}
        if m.get("kind") == "Job":
            template = spec["tasks"][0]["template"] if "tasks" in spec else spec["template"]
            return dict(template["spec"])
    raise SpecsError("first", req.app_id, "make it with KubernetesScheduler.submit_dryrun")


def _shape(app: AppDef) -> tuple[object, ...]:
    role = app.roles[0]
    return (role.image, role.resource, role.mounts, role.port_map, role.max_retries)


def _case_script(branches: Mapping[int, tuple[dict[str, str], list[str]]]) -> str:
    lines = ['case "${JOB_COMPLETION_INDEX}" in']
    for pos, (env, argv) in sorted(branches.items()):
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        run = "exec " + " ".join(shlex.quote(a) for a in argv)
        lines.append(f"{pos}) {'export ' + exports + '; ' if exports else ''}{run} ;;")
    lines.append(
        '*) echo "torchx: no sweep trial has completion index ${JOB_COMPLETION_INDEX}" >&2; '
        "exit 2 ;;"
    )
    lines.append("esac")
    return "\n".join(lines) + "\n"


def indexed_request(
    first: AppDryRunInfo[KubernetesRequest],
    first_index: int,
    trials: Mapping[int, AppDef],
    parallel: int,
    job: str,
    sweep_id: str,
) -> AppDryRunInfo[KubernetesRequest]:
    """One Indexed Job named ``job`` running trial ``first_index`` and ``trials`` (trial
    index -> its app), at most ``parallel`` at once (0: all).

    ``first`` is trial ``first_index``'s own request (``submit_dryrun``): its pod template
    is written once, and only each trial's command line and environment are picked by the
    completion index. Completion index ``p`` runs the ``p``-th trial in index order."""
    app0 = first.app
    if app0 is None:
        raise SpecsError("first", first, "make it with KubernetesScheduler.submit_dryrun")
    req0 = first.request
    check_completions(len({first_index, *trials}))
    if len(job) > DNS_LABEL_MAX:
        raise SpecsError(
            "sweep Job name",
            job,
            f"is {len(job)} characters; the Job controller labels its pods with it and a label "
            f"value has at most {DNS_LABEL_MAX}: use a sweep id of at most "
            f"{DNS_LABEL_MAX - len('-r999')} characters",
        )
    if why_not_indexed([app0, *trials.values()], MIN_VERSION) is not None:
        raise SpecsError("sweep", job, "an Indexed Job runs single-role, single-replica trials")
    # A workspace replaces the first trial's image with the pushed one; the other trials'
    # apps still name the image it was built on.
    shape0 = _shape(app0)[1:] if req0.push else _shape(app0)
    order = sorted({first_index, *trials})
    per_trial: dict[int, tuple[dict[str, str], list[str]]] = {}
    for pos, index in enumerate(order):
        app = app0 if index == first_index else trials[index]
        if app is not app0:
            validate_app(app)
            shape = _shape(app)[1:] if req0.push else _shape(app)
            if shape != shape0:
                raise SpecsError(
                    f"sweep trial {index}",
                    app.roles[0].name,
                    f"asks the cluster for another image, resources, mounts, ports or retries "
                    f"than trial {first_index}; one Indexed Job is one pod template: sweep "
                    "arguments that leave those alone, or use -cfg api=volcano with Kubernetes "
                    "older than 1.29 (one Job per trial)",
                )
        (replica,) = role_replicas(
            app.roles[0],
            app_id=f"{job}-{pos}",
            # a single replica is its own rank 0
            rank0_host="localhost",
            master_port=MASTER_PORT,
            replica_id="0",
        )
        per_trial[pos] = (dict(replica.env), replica.argv)
    # What all trials share stays in the container's env; the rest goes in the case.
    common = {
        k: v
        for k, v in per_trial[0][0].items()
        if all(env.get(k) == v for env, _ in per_trial.values())
    }
    branches = {
        pos: ({k: v for k, v in env.items() if k not in common}, argv)
        for pos, (env, argv) in per_trial.items()
    }
    script = _case_script(branches)
    size = len(script.encode())
    if size > SCRIPT_LIMIT:
        raise SpecsError(
            "sweep",
            f"{len(order)} trials",
            f"the Indexed Job's command would be {size} bytes, over the {SCRIPT_LIMIT}-byte "
            "limit kept below the API server's object size; sweep fewer values",
        )
    role0 = app0.roles[0]
    container = _first_container(req0)
    container.pop("args", None)
    container["command"] = ["/bin/sh", "-c", script]
    container["env"] = [{"name": k, "value": v} for k, v in common.items()]
    spec = _pod_spec(req0)
    for key in ("hostname", "subdomain"):
        spec.pop(key, None)  # no Service: a single replica needs no peers' names
    spec["containers"] = [container]
    job_labels = dict(_first_labels(req0))
    job_labels[LABEL_APP_ID] = job
    job_labels[LABEL_SWEEP] = sweep_id
    pod_labels = {**job_labels, f"{LABEL_PREFIX}/role-name": to_dns_label(role0.name, 63)}
    pod_labels[f"{LABEL_PREFIX}/replica-id"] = "0"
    manifest = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job, "namespace": req0.namespace, "labels": job_labels},
        "spec": {
            "completionMode": "Indexed",
            "completions": len(order),
            "parallelism": parallel if 0 < parallel < len(order) else len(order),
            # each trial retried on its own; a failed one leaves the others running
            "backoffLimitPerIndex": role0.max_retries,
            "template": {"metadata": {"labels": pod_labels}, "spec": spec},
        },
    }
    info = AppDryRunInfo(
        KubernetesRequest(job, req0.namespace, "batch", [manifest], dict(req0.push)),
        format_request,
    )
    info.app = app0
    info.cfg = first.cfg
    info.scheduler = first.scheduler
    return info


def _first_labels(req: KubernetesRequest) -> dict[str, str]:
    """The labels of the first trial's own objects, less those that name its replica."""
    labels = dict(req.manifests[0]["metadata"].get("labels") or {})
    for key in (f"{LABEL_PREFIX}/role-name", f"{LABEL_PREFIX}/replica-id"):
        labels.pop(key, None)
    return labels


def trial_states(
    namespace: str, pods: Iterable[Mapping[str, Any]]
) -> dict[str, tuple[AppState, int | None, str, int]]:
    """Each trial's ``(state, exit code, message, runs started)`` from its pods, keyed by
    the trial's app id; trials with no pod yet are absent.

    A pod of an Indexed Job (it carries its completion index) belongs to the trial
    ``NAMESPACE:JOB-INDEX``; any other pod to the app ``NAMESPACE:APP_ID`` it is labelled
    with, a trial that is an app of its own, whose replicas' newest pods are combined: a
    failed replica fails the trial, a running one keeps it running, and it succeeded once
    every replica that has a pod did.

    Every pod that left Pending is a run (a failed pod stays behind when its Job retries
    it); a trial of several replicas counts its first run once and each replica's retries
    (as its app's restarts count its Jobs' retries)."""
    keyed = [(_trial_replica(namespace, pod), pod) for pod in pods]  # each pod parsed once
    by_trial: dict[str, list[tuple[AppState, int | None, str]]] = {}
    for (key, _), pod in sorted(newest_pods(keyed).items()):
        by_trial.setdefault(key, []).append(pod_outcome(pod))
    started: dict[str, dict[tuple[str, int], int]] = {}
    for found, pod in keyed:
        phase = str((pod.get("status") or {}).get("phase", ""))
        if found is None or phase in ("", "Pending", "Unknown"):
            continue
        per_replica = started.setdefault(found[0], {})
        per_replica[found[1]] = per_replica.get(found[1], 0) + 1
    runs = {key: 1 + sum(n - 1 for n in reps.values()) for key, reps in started.items()}
    return {key: (*_combined(o), runs.get(key, 0)) for key, o in by_trial.items()}


def _trial_replica(namespace: str, pod: Mapping[str, Any]) -> tuple[str, tuple[str, int]] | None:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    app = labels.get(LABEL_APP_ID)
    if not app:
        return None
    index = str(
        labels.get(COMPLETION_INDEX) or (meta.get("annotations") or {}).get(COMPLETION_INDEX, "")
    )
    if index.isdigit():
        return f"{namespace}:{trial_app_id(app, int(index))}", ("", 0)
    replica = replica_key(pod)
    return None if replica is None else (f"{namespace}:{app}", replica)


_WORST_FIRST = (AppState.FAILED, AppState.RUNNING, AppState.PENDING, AppState.UNKNOWN)


def _combined(
    outcomes: list[tuple[AppState, int | None, str]],
) -> tuple[AppState, int | None, str]:
    states = {state for state, _, _ in outcomes}
    state = next((s for s in _WORST_FIRST if s in states), AppState.SUCCEEDED)
    failed = [(code, msg) for s, code, msg in outcomes if code not in (None, 0)]
    if failed:
        return state, failed[0][0], failed[0][1]
    return state, (0 if state == AppState.SUCCEEDED else None), ""


__all__ = [
    "COMPLETION_INDEX",
    "LABEL_SWEEP",
    "LABEL_SWEEP_INDEX",
    "MAX_COMPLETIONS",
    "MIN_VERSION",
    "SCRIPT_LIMIT",
    "check_completions",
    "indexed_request",
    "parse_trial",
    "parse_version",
    "sweep_labels",
    "trial_app_id",
    "trial_states",
    "why_not_indexed",
]
