"""A sweep as one Kubernetes Indexed Job: the manifest, its per-index script (run here with
/bin/sh), when the mode applies, and the trials' states from their pods. No cluster."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest

from torchx.schedulers.kubernetes_indexed import (
    COMPLETION_INDEX,
    LABEL_SWEEP,
    LABEL_SWEEP_INDEX,
    MAX_COMPLETIONS,
    MIN_VERSION,
    SCRIPT_LIMIT,
    check_completions,
    indexed_request,
    parse_trial,
    parse_version,
    sweep_labels,
    trial_app_id,
    trial_states,
    why_not_indexed,
)
from torchx.schedulers.kubernetes_scheduler import (
    LABEL_APP_ID,
    LABEL_REPLICA,
    LABEL_ROLE,
    KubernetesScheduler,
)
from torchx.specs import AppDef, AppState, Resource, Role, SpecsError

CFG: dict[str, Any] = {"namespace": "ns1", "api": "batch"}


def trial(i: int, msg: str, cpu: float = 1, replicas: int = 1) -> AppDef:
    role = Role(
        "echo",
        image="busybox",
        entrypoint="sh",
        args=["-c", 'echo "$TRIAL_MSG" "$1" "$SHARED"', "sh", f"arg {msg}'s"],
        env={"TRIAL_MSG": f"env-{msg}", "SHARED": "same", "TORCHX_SWEEP_INDEX": str(i)},
        resource=Resource(cpu=cpu, gpu=0, memMB=256),
        num_replicas=replicas,
    )
    return AppDef("echo", roles=[role])


def request(n: int, parallel: int = 2, api: str = "batch") -> Any:
    sched = KubernetesScheduler("t")
    first = sched.submit_dryrun(trial(0, "m0"), {**CFG, "api": api})
    others = {i: trial(i, f"m{i}") for i in range(1, n)}
    return indexed_request(first, 0, others, parallel, "sweep-abcd2345", "sweep-abcd2345")


@pytest.mark.parametrize("api", ["batch", "volcano"])
def test_one_indexed_job_with_n_completions_and_k_parallel(api: str) -> None:
    info = request(5, parallel=2, api=api)
    (job,) = info.request.manifests
    assert job["kind"] == "Job" and job["apiVersion"] == "batch/v1"
    assert job["metadata"]["name"] == "sweep-abcd2345"
    assert job["metadata"]["namespace"] == "ns1"
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 5, 2)
    assert spec["backoffLimitPerIndex"] == 0
    labels = spec["template"]["metadata"]["labels"]
    assert labels[LABEL_SWEEP] == "sweep-abcd2345"
    assert labels[LABEL_APP_ID] == "sweep-abcd2345"
    assert job["metadata"]["labels"][LABEL_SWEEP] == "sweep-abcd2345"
    pod = spec["template"]["spec"]
    assert "hostname" not in pod and "subdomain" not in pod
    (container,) = pod["containers"]
    assert container["image"] == "busybox"
    assert container["resources"]["limits"]["cpu"] == "1000m"
    assert container["command"][:2] == ["/bin/sh", "-c"]
    env = {e["name"]: e["value"] for e in container["env"]}
    # shared values written once; what differs by trial lives in the script
    assert env["SHARED"] == "same"
    assert "TRIAL_MSG" not in env and "TORCHX_SWEEP_INDEX" not in env
    assert "completionMode: Indexed" in str(info)


def test_parallel_zero_or_above_n_runs_all() -> None:
    assert request(3, parallel=0).request.manifests[0]["spec"]["parallelism"] == 3
    assert request(3, parallel=7).request.manifests[0]["spec"]["parallelism"] == 3


@pytest.mark.skipif(shutil.which("sh") is None, reason="no /bin/sh to run the script")
def test_each_completion_index_runs_its_own_trial() -> None:
    (job,) = request(3).request.manifests
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    outs = []
    for i in range(4):
        proc = subprocess.run(
            container["command"],
            env={**os.environ, **env, "JOB_COMPLETION_INDEX": str(i)},
            capture_output=True,
            text=True,
            timeout=30,
        )
        outs.append((proc.returncode, proc.stdout, proc.stderr.strip()))
    for i in range(3):
        assert outs[i] == (0, f"env-m{i} arg m{i}'s same\n", "")
    assert outs[3][0] == 2 and "no sweep trial has completion index 3" in outs[3][2]


def test_trials_asking_other_resources_are_refused_naming_the_trial() -> None:
    first = KubernetesScheduler("t").submit_dryrun(trial(0, "a"), CFG)
    with pytest.raises(SpecsError, match=r"sweep trial 2.*another image, resources"):
        indexed_request(first, 0, {1: trial(1, "b"), 2: trial(2, "c", cpu=2)}, 0, "sweep-abcd", "x")


def test_script_over_the_limit_is_refused_with_the_limit() -> None:
    first = KubernetesScheduler("t").submit_dryrun(trial(0, "a"), CFG)
    big = "x" * 4096
    others = {i: trial(i, big + str(i)) for i in range(1, SCRIPT_LIMIT // 4096 + 2)}
    with pytest.raises(SpecsError, match=rf"over the {SCRIPT_LIMIT}-byte limit"):
        indexed_request(first, 0, others, 0, "sweep-abcd", "x")


def test_when_the_indexed_mode_applies() -> None:
    one = [trial(0, "a")]
    assert why_not_indexed(one, (1, 29)) is None
    assert why_not_indexed(one, (2, 0)) is None
    assert "v1.20" in str(why_not_indexed(one, (1, 20)))
    assert "1.29+" in str(why_not_indexed(one, (1, 28)))
    assert "could not be read" in str(why_not_indexed(one, None))
    assert "single-replica" in str(why_not_indexed([trial(0, "a", replicas=2)], (1, 30)))
    assert parse_version("1", "29+") == (1, 29)
    assert parse_version("1", "20") == (1, 20)
    assert parse_version("", "x") is None


def test_trial_ids() -> None:
    assert trial_app_id("ns1:sweep-abcd2345", 2) == "ns1:sweep-abcd2345-2"
    assert MIN_VERSION == (1, 29)
    assert parse_trial("sweep-abcd2345-3") == ("sweep-abcd2345", 3)
    assert parse_trial("sweep-abcd2345-r1-0") == ("sweep-abcd2345-r1", 0)
    assert parse_trial("sweep-abcd2345") is None
    assert parse_trial("echo-x1y2") is None


def _pod(job: str, index: int, phase: str, created: str, code: int | None = None) -> Any:
    status: dict[str, Any] = {"phase": phase}
    if code is not None:
        status["containerStatuses"] = [
            {"state": {"terminated": {"exitCode": code, "reason": "Error" if code else ""}}}
        ]
    return {
        "metadata": {
            "labels": {LABEL_APP_ID: job, COMPLETION_INDEX: str(index)},
            "creationTimestamp": created,
        },
        "status": status,
    }


def test_trial_states_from_the_newest_pod_of_each_index() -> None:
    pods = [
        _pod("sweep-abcd", 0, "Succeeded", "2026-01-01T00:00:01Z", 0),
        _pod("sweep-abcd", 1, "Failed", "2026-01-01T00:00:01Z", 3),
        _pod("sweep-abcd", 1, "Running", "2026-01-01T00:00:05Z"),  # its retry
        _pod("sweep-abcd-r1", 0, "Failed", "2026-01-01T00:01:00Z", 7),
        {"metadata": {"labels": {}}, "status": {"phase": "Running"}},  # not a trial's
    ]
    got = trial_states("ns1", pods)
    assert got == {
        "ns1:sweep-abcd-0": (AppState.SUCCEEDED, 0, "", 1),
        "ns1:sweep-abcd-1": (AppState.RUNNING, None, "", 2),
        "ns1:sweep-abcd-r1-0": (AppState.FAILED, 7, "Error", 1),
    }


def test_trial_runs_count_every_pod_that_started() -> None:
    pods = [
        _pod("sweep-abcd", 0, "Succeeded", "2026-01-01T00:00:01Z", 0),
        _pod("sweep-abcd", 1, "Failed", "2026-01-01T00:00:01Z", 3),
        _pod("sweep-abcd", 1, "Failed", "2026-01-01T00:00:03Z", 3),
        _pod("sweep-abcd", 1, "Running", "2026-01-01T00:00:05Z"),  # its second retry
        _pod("sweep-abcd", 2, "Failed", "2026-01-01T00:00:01Z", 3),
        _pod("sweep-abcd", 2, "Pending", "2026-01-01T00:00:05Z"),  # a retry not started
        _pod("sweep-abcd", 3, "Pending", "2026-01-01T00:00:05Z"),
    ]
    runs = {key: got[3] for key, got in trial_states("ns1", pods).items()}
    # a trial whose only pod has not started yet has no run
    assert runs == {
        "ns1:sweep-abcd-0": 1,
        "ns1:sweep-abcd-1": 3,
        "ns1:sweep-abcd-2": 1,
        "ns1:sweep-abcd-3": 0,
    }
    # a trial of two replicas: its first run, and replica 1's one retry
    two = [
        _replica_pod("echo-a", "trainer", 0, "Running"),
        _replica_pod("echo-a", "trainer", 1, "Failed", 1),
        _replica_pod("echo-a", "trainer", 1, "Running"),
    ]
    assert trial_states("ns1", two)["ns1:echo-a"][3] == 2


def _replica_pod(app: str, role: str, k: int, phase: str, code: int | None = None) -> Any:
    pod = _pod(app, 0, phase, "2026-01-01T00:00:01Z", code)
    labels = pod["metadata"]["labels"]
    del labels[COMPLETION_INDEX]  # a Job per replica, not an Indexed Job
    labels.update({LABEL_ROLE: role, LABEL_REPLICA: str(k)})
    return pod


def test_trial_states_of_trials_that_are_apps_of_their_own() -> None:
    pods = [
        _replica_pod("echo-a", "trainer", 0, "Succeeded", 0),
        _replica_pod("echo-a", "trainer", 1, "Succeeded", 0),
        _replica_pod("echo-b", "trainer", 0, "Running"),
        _replica_pod("echo-b", "trainer", 1, "Failed", 137),
        _replica_pod("echo-c", "trainer", 0, "Running"),
        _replica_pod("echo-c", "ps", 0, "Pending"),
    ]
    assert trial_states("ns1", pods) == {
        "ns1:echo-a": (AppState.SUCCEEDED, 0, "", 1),
        # one failed replica fails the trial, whatever the others do
        "ns1:echo-b": (AppState.FAILED, 137, "Error", 1),
        "ns1:echo-c": (AppState.RUNNING, None, "", 1),
    }
    assert sweep_labels("sweep-abcd2345", 3) == {
        LABEL_SWEEP: "sweep-abcd2345",
        LABEL_SWEEP_INDEX: "3",
    }


def test_more_trials_than_an_indexed_job_completes_is_refused_naming_the_limit() -> None:
    check_completions(MAX_COMPLETIONS)
    with pytest.raises(SpecsError, match=r"'100001 trials'; an Indexed Job has at most 100000"):
        check_completions(MAX_COMPLETIONS + 1)


def test_a_job_name_longer_than_a_label_value_is_refused() -> None:
    sched = KubernetesScheduler("t")
    first = sched.submit_dryrun(trial(0, "m0"), CFG)
    job = "sweep-" + "a" * 50 + "-r12345"  # 63 characters: the longest a Job may be named
    assert len(indexed_request(first, 0, {}, 0, job, "sweep-abcd2345").request.app_id) == 63
    with pytest.raises(SpecsError, match=r"Job name: got 'sweep-a+-r123456'; is 64 characters"):
        indexed_request(first, 0, {1: trial(1, "m1")}, 0, job + "6", "sweep-abcd2345")
