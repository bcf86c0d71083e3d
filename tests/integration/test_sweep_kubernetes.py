"""Kubernetes sweeps against the real API server of tests/fixtures/kubernetes.py.

That server is older than 1.29, so a sweep there is one Job per trial, every trial's objects
labelled with the sweep's id; where the Indexed Job path is tested, the server's version is
stated as 1.30 and the test plays the Job controller (it creates each completion index's pod)
as well as the kubelet (pod states, and pod logs through the fixture's ``kubelet_logs``).
"""

from __future__ import annotations

import copy
import inspect
import threading
from typing import Any

import pytest

pytest.importorskip("kubernetes")

from torchx_test_fixtures_scripts import torchx_in_process  # loaded by the root conftest
from torchx_test_fixtures_waiting import wait_until

from torchx.runner import Sweep, get_runner
from torchx.schedulers.kubernetes_indexed import (
    COMPLETION_INDEX,
    LABEL_SWEEP,
    LABEL_SWEEP_INDEX,
)
from torchx.schedulers.kubernetes_scheduler import LABEL_APP_ID, KubernetesScheduler


def _count_api_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, Any]]]:
    """Every request the calling thread sends to an API server from now on: method, path,
    query. Only this thread's: the fixture's kubelet thread polls the same server meanwhile."""
    from kubernetes import client

    seen: list[tuple[str, str, dict[str, Any]]] = []
    real = client.ApiClient.call_api
    caller = threading.get_ident()

    def counted(self: Any, *a: Any, **kw: Any) -> Any:
        if threading.get_ident() == caller:
            call = inspect.signature(real).bind(self, *a, **kw).arguments
            query = dict(call.get("query_params") or [])
            seen.append((call["method"], call["resource_path"], query))
        return real(self, *a, **kw)

    monkeypatch.setattr(client.ApiClient, "call_api", counted)
    return seen


@pytest.mark.usefixtures("run_in_tmp_path")
def test_fallback_sweep_is_one_labelled_job_per_trial_described_by_one_list_call(
    kube_env: Any, kube_namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ns = kube_namespace
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b", "c", "d"]}, ["--image", "busybox"], 0)
    with get_runner() as runner:
        plan = runner.dryrun_sweep(sweep, "kubernetes", {"namespace": ns, "api": "batch"})
        assert plan.record.mode == "group", plan  # the fixture's server predates 1.29
        sweep_id = plan.record.sweep_id
        # the dryrun's request is trial 0's, labelled as the sweep's trial 0
        for m in plan.request.request.manifests:
            assert m["metadata"]["labels"][LABEL_SWEEP] == sweep_id
            assert m["metadata"]["labels"][LABEL_SWEEP_INDEX] == "0"
        handle = runner.schedule_sweep(plan)

        trials = wait_until(
            "every trial submitted",
            lambda: all(h := [runner.sweep_trial_handle(handle, i) for i in range(4)]) and h,
            timeout=120,
        )
        selector = f"{LABEL_SWEEP}={sweep_id}"
        jobs = kube_env.batch().list_namespaced_job(ns, label_selector=selector).items
        assert len(jobs) == 4
        # each Job is its trial's app, and says which trial it is
        assert {
            (j.metadata.labels[LABEL_SWEEP_INDEX], j.metadata.labels[LABEL_APP_ID]) for j in jobs
        } == {(str(i), h.rsplit(":", 1)[1]) for i, h in enumerate(trials)}
        # the list answer says which trial each Job is, from the same labels
        listed = {a.app_handle: a.sweep for a in runner.list("kubernetes")}
        listed = {h: sw for h, sw in listed.items() if f"/{ns}:" in h}
        assert listed == {h: f"{sweep_id}/{i}" for i, h in enumerate(trials)}

        # Playing the kubelet: trial 0 succeeds, 1 fails with 3, 2 runs, 3 waits.
        pods = kube_env.wait_for_pods(ns, selector, 4, timeout=120)
        pod = {p.metadata.labels[LABEL_SWEEP_INDEX]: p.metadata.name for p in pods}
        for i, code in (("0", 0), ("1", 3), ("2", None)):
            kube_env.run_pod(ns, pod[i])
            if code is not None:
                kube_env.end_pod(ns, pod[i], code)

        with monkeypatch.context() as m:
            calls = _count_api_calls(m)
            st = runner.sweep_status(handle)
        assert calls == [
            ("GET", "/api/v1/namespaces/{namespace}/pods", {"labelSelector": selector})
        ]
        assert [(t.args, t.state.name, t.exit_code, t.handle) for t in st.trials] == [
            ({"msg": "a"}, "SUCCEEDED", 0, trials[0]),
            ({"msg": "b"}, "FAILED", 3, trials[1]),
            ({"msg": "c"}, "RUNNING", None, trials[2]),
            ({"msg": "d"}, "PENDING", None, trials[3]),
        ]
        assert st.state.name == "RUNNING"

        runner.cancel_sweep(handle)
        # every trial's objects are gone, the ended trials' too
        assert not kube_env.batch().list_namespaced_job(ns, label_selector=selector).items
        assert not kube_env.core().list_namespaced_service(ns, label_selector=selector).items
        # Pods are deleted with them; one the Job controller made from a stale view of a
        # deleted Job is the garbage collector's to remove, soon after.
        wait_until(
            "every pod of the sweep deleted or being deleted",
            lambda: all(p.metadata.deletion_timestamp for p in kube_env.pods(ns, selector)),
            timeout=120,
        )
        # what ended before the cancel still says how
        st = runner.sweep_status(handle)
        assert [(t.state.name, t.exit_code) for t in st.trials] == [
            ("SUCCEEDED", 0),
            ("FAILED", 3),
            ("CANCELLED", None),
            ("CANCELLED", None),
        ]
        # cancelled by the user: cancelled, whatever its trials read
        assert st.state.name == "CANCELLED"


def _index_pod(
    kube_env: Any, ns: str, template: dict[str, Any], job: str, index: int, retry: int = 0
) -> str:
    """Trial ``index``'s pod of Indexed Job ``job``, made as the Job controller makes it
    (``retry``: which of the controller's retries of the index it is; 0 for its first)."""
    pod = copy.deepcopy(template)
    name = f"{job}-{index}-x{index}" + (f"-{retry}" if retry else "")
    pod["metadata"]["name"] = name
    pod["metadata"]["labels"][COMPLETION_INDEX] = str(index)
    pod["metadata"]["annotations"] = {COMPLETION_INDEX: str(index)}
    pod["spec"]["nodeName"] = kube_env.node
    kube_env.core().create_namespaced_pod(ns, {"apiVersion": "v1", "kind": "Pod", **pod})
    return name


@pytest.mark.usefixtures("run_in_tmp_path")
def test_indexed_sweep_resume_is_a_new_job_of_the_failed_indices_and_logs_by_index(
    kube_env: Any,
    kube_namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ns = kube_namespace
    monkeypatch.setattr(KubernetesScheduler, "server_version", lambda self: (1, 30))
    sweep = Sweep.grid("utils.echo", {"msg": ["a", "b", "c"]}, ["--image", "busybox"], 2)
    with get_runner() as runner:
        plan = runner.dryrun_sweep(sweep, "kubernetes", {"namespace": ns, "api": "batch"})
        assert plan.record.mode == "indexed"
        sweep_id = plan.record.sweep_id
        handle = runner.schedule_sweep(plan)
        template = plan.request.request.manifests[0]["spec"]["template"]
        names = [_index_pod(kube_env, ns, template, sweep_id, i) for i in range(3)]
        # trial 1 fails twice: its pod, then the pod the Job controller retries it with
        names.append(_index_pod(kube_env, ns, template, sweep_id, 1, retry=1))
        for name, code in zip(names, (0, 5, 0, 5), strict=True):
            kube_env.run_pod(ns, name)
            kube_env.end_pod(ns, name, code)
        st = runner.sweep_status(handle)
        assert [(t.state.name, t.exit_code, t.attempts) for t in st.trials] == [
            ("SUCCEEDED", 0, 1),
            ("FAILED", 5, 2),  # every pod that ran, as the trial's own status counts
            ("SUCCEEDED", 0, 1),
        ]

        # `torchx log SWEEP/2` reads the pod of completion index 2 through the API server,
        # which asks the node's kubelet (played by the test) for it.
        stamp = "2026-01-01T00:00:00.000000000Z"
        logs = {n: f"{stamp} trial {i} says hi\n" for i, n in enumerate(names)}
        with kube_env.kubelet_logs(logs) as asked:
            out = torchx_in_process("log", f"{handle}/2")
        assert [p.split("?")[0] for p in asked] == [f"/containerLogs/{ns}/{names[2]}/echo"], out
        assert "echo/0 trial 2 says hi" in out.splitlines(), out
        assert "trial 0" not in out and "trial 1" not in out
        assert runner.sweep_trial_handle(handle, 2) == f"kubernetes://torchx/{ns}:{sweep_id}-2"

        # --resume: a new Indexed Job of the one failed trial, as its dryrun says.
        again = runner.dryrun_resume_sweep(handle)
        assert again.indices == [1]
        (job,) = again.request.request.manifests
        assert job["metadata"]["name"] == f"{sweep_id}-r1"
        assert (job["spec"]["completions"], job["spec"]["parallelism"]) == (1, 1)
        script = job["spec"]["template"]["spec"]["containers"][0]["command"][2]
        # its one completion index runs trial 1's command line, and no other trial's
        assert script.count(" ;;\n") == 2 and "\n0) exec echo b ;;\n" in script, script
        assert "trials 1 of 3 (indexed: one Kubernetes Indexed Job of 1 completions" in str(again)
        runner.schedule_sweep(again)
        stored = {j.metadata.name for j in kube_env.batch().list_namespaced_job(ns).items}
        assert stored == {sweep_id, f"{sweep_id}-r1"}
        # each Indexed Job runs trials of the sweep: the list answer names it
        listed = {a.app_id: a.sweep for a in runner.list("kubernetes")}
        assert {k: v for k, v in listed.items() if k.startswith(f"{ns}:")} == {
            f"{ns}:{sweep_id}": sweep_id,
            f"{ns}:{sweep_id}-r1": sweep_id,
        }
        st = runner.sweep_status(handle)
        assert [(t.state.name, t.attempts) for t in st.trials] == [
            ("SUCCEEDED", 1),
            ("PENDING", 1),  # its first submission counts one; the new one waits for a pod
            ("SUCCEEDED", 1),
        ]
        # the re-run trial is completion index 0 of the new Job, and its log is that pod's
        retry = _index_pod(kube_env, ns, job["spec"]["template"], f"{sweep_id}-r1", 0)
        assert runner.sweep_trial_handle(handle, 1) == f"kubernetes://torchx/{ns}:{sweep_id}-r1-0"
        logs[retry] = "2026-01-01T00:01:00.000000000Z trial 1 again\n"
        kube_env.run_pod(ns, retry)  # a trial's log waits until it starts, as 0.7's did
        with kube_env.kubelet_logs(logs) as asked:
            out = torchx_in_process("log", f"{handle}/1")
        assert [p.split("?")[0] for p in asked] == [f"/containerLogs/{ns}/{retry}/echo"]
        assert "echo/0 trial 1 again" in out.splitlines(), out

        runner.cancel_sweep(handle)
        assert not kube_env.batch().list_namespaced_job(ns).items
