"""A sweep's Indexed Job against the real API server of tests/fixtures/kubernetes.py.

The fixture's server may predate Indexed Jobs (then it stores the Job without
``completionMode`` and its controller would start ordinary pods), so this test stores the
Job with ``parallelism: 0`` and plays the Job controller as well as the kubelet: it creates
each index's pod from the Job's own template with the labels the controller gives them
(``batch.kubernetes.io/job-completion-index``), then reports their states. What is tested is
this scheduler's side: the version read, the one list call by the sweep's label, one
trial's describe and cancel by its completion index, and deleting the sweep.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from torchx.schedulers import SchedulerError
from torchx.schedulers.kubernetes_indexed import (
    COMPLETION_INDEX,
    LABEL_SWEEP,
    indexed_request,
    why_not_indexed,
)
from torchx.schedulers.kubernetes_scheduler import KubernetesScheduler
from torchx.specs import AppDef, AppState, Resource, Role

from .torchx_command import torchx

pytest.importorskip("kubernetes")

SWEEP = "sweep-abcd2345"


def _trial(msg: str) -> AppDef:
    role = Role(
        "echo",
        image="busybox",
        entrypoint="echo",
        args=[msg],
        resource=Resource(cpu=0.1, gpu=0, memMB=64),
    )
    return AppDef("echo", roles=[role])


def test_indexed_sweep_trials_by_completion_index(
    kube_env: Any, kube_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubernetes import client

    sched = KubernetesScheduler("test")
    ns = kube_namespace
    version = sched.server_version()
    info = client.VersionApi(kube_env.api).get_code()
    assert version is not None and version[0] == int(info.major)
    if version < (1, 29):
        assert f"v{version[0]}.{version[1]}" in str(why_not_indexed([_trial("a")], version))

    cfg = {"namespace": ns, "api": "batch"}
    first = sched.submit_dryrun(_trial("m0"), cfg)
    req = indexed_request(first, 0, {1: _trial("m1"), 2: _trial("m2")}, 2, SWEEP, SWEEP)
    job = copy.deepcopy(req.request.manifests[0])
    job["spec"]["parallelism"] = 0  # the test starts each index's pod itself
    kube_env.batch().create_namespaced_job(ns, job)
    template = job["spec"]["template"]
    for i in range(3):
        pod = copy.deepcopy(template)
        pod["metadata"]["name"] = f"{SWEEP}-{i}-x{i}"
        pod["metadata"]["labels"][COMPLETION_INDEX] = str(i)
        pod["metadata"]["annotations"] = {COMPLETION_INDEX: str(i)}
        pod["spec"]["nodeName"] = kube_env.node
        kube_env.core().create_namespaced_pod(ns, {"apiVersion": "v1", "kind": "Pod", **pod})
    kube_env.run_pod(ns, f"{SWEEP}-0-x0")
    kube_env.end_pod(ns, f"{SWEEP}-0-x0", 0)
    kube_env.run_pod(ns, f"{SWEEP}-1-x1")

    calls: list[str] = []
    real = client.CoreV1Api.list_namespaced_pod

    def counted(self: Any, namespace: str, **kw: Any) -> Any:
        calls.append(str(kw.get("label_selector")))
        return real(self, namespace, **kw)

    monkeypatch.setattr(client.CoreV1Api, "list_namespaced_pod", counted)
    states = sched.sweep_trial_states(ns, SWEEP)
    assert calls == [f"{LABEL_SWEEP}={SWEEP}"]  # every trial from one list call
    assert states == {
        f"{ns}:{SWEEP}-0": (AppState.SUCCEEDED, 0, "", 1),
        f"{ns}:{SWEEP}-1": (AppState.RUNNING, None, "", 1),
        f"{ns}:{SWEEP}-2": (AppState.PENDING, None, "", 0),  # no run started yet
    }

    one = sched.describe(f"{ns}:{SWEEP}-1")
    assert one is not None and one.state == AppState.RUNNING
    assert one.roles_statuses[0].role == "echo"
    done = sched.describe(f"{ns}:{SWEEP}-0")
    assert done is not None and done.roles_statuses[0].replicas[0].exit_code == 0

    with pytest.raises(SchedulerError, match=r"cannot cancel .*-1 alone: it is completion index"):
        sched.cancel(f"{ns}:{SWEEP}-1")
    sched.cancel(f"{ns}:{SWEEP}-0")  # ended: nothing to do
    assert kube_env.core().read_namespaced_pod(f"{SWEEP}-1-x1", ns).status.phase == "Running"
    # An ended trial holds no objects of its own (an app of its own would): the command
    # says it was not running, not that it deleted something, and leaves the sweep's pods.
    proc = torchx("cancel", f"kubernetes://test/{ns}:{SWEEP}-0")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        f"kubernetes://test/{ns}:{SWEEP}-0 was not running: it had already ended as SUCCEEDED"
    )
    assert len(kube_env.pods(ns, f"{LABEL_SWEEP}={SWEEP}")) == 3
    assert not sched.ended_app_holds_objects(f"{ns}:{SWEEP}-0")

    sched.cancel(f"{ns}:{SWEEP}")  # the sweep's Job: deleted with its pods
    # deleted at once, or being deleted (the fixture's kubelet thread finishes it)
    left = kube_env.pods(ns, f"{LABEL_SWEEP}={SWEEP}")
    assert all(p.metadata.deletion_timestamp is not None for p in left)
    assert not kube_env.batch().list_namespaced_job(ns).items
    assert sched.describe(f"{ns}:{SWEEP}-1") is None
